#!/usr/bin/env bash
# The leaderboard page in a real browser: rca-bench leaderboard over grader/testdata/leaderboard
# (two configurations, a reference audit, transcripts for one run, a submission of another suite),
# then Debian's headless Chromium renders the page to a screenshot and a network log.
#   - the page asks for nothing: no request initiated by the page in the net log (a control page
#     with an <img> and a stylesheet from elsewhere must show two, so the check can fail);
#   - the screenshot shows the charts: pixels of the bar colours, the floor line and the heat map.
# Chromium resolves no host name (--host-resolver-rules), so nothing leaves the machine.
# Usage: leaderboard_html_test.sh RCA_BENCH SOURCE_DIR NODE SCREENSHOT_OUT
set -euo pipefail
rca=$1 src=$2 node=$3 shot_out=$4
check="$src/tests/html/check_page.mjs"
chromium=$(command -v chromium || true)
if [[ -z "$chromium" ]]; then
  echo "FAIL: chromium is not installed (scripts/deps.sh installs Debian's chromium)" >&2
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

mkdir "$tmp/results"
cp -r "$src/grader/testdata/leaderboard/." "$tmp/results/"
fp=$("$rca" fingerprint)
find "$tmp/results" -name '*.jsonl' -exec sed -i "s/@FINGERPRINT@/$fp/" {} +
"$rca" leaderboard "$tmp/results" > "$tmp/md" 2> "$tmp/err" || fail "leaderboard exited $?"
page="$tmp/results/leaderboard.html"
[[ -s "$page" ]] || fail "no page written at $page"
grep -q "wrote $page" "$tmp/err" || fail "the page's path is not reported: $(cat "$tmp/err")"
grep -q '^| B | fake-model | 2 |' "$tmp/md" || fail "B's two runs are not one row"
grep -q '^| C | fake-model | 1 | .* | 21.370 s |' "$tmp/md" ||
  fail "C's time to hypothesis is not the median of its two agreeing transcripts (12.49, 30.25)"
grep -q '^| folk (reference audit) |' "$tmp/md" || fail "the reference audit is not marked"
grep -q '^refused: other-suite.jsonl' "$tmp/md" || fail "another suite's submission is not refused"

# The page's own text: the policy, and no address anything could be loaded from.
grep -q "Content-Security-Policy\" content=\"default-src 'none'" "$page" || fail "no CSP in the page"
if grep -nE '(src|href|action|srcset)=|url\(|@import|https?://|<script' "$page"; then
  fail "the page names something to load"
fi
for id in depth-chart reliability-chart family-heatmap floor-line; do
  grep -q "id=\"$id\"" "$page" || fail "no #$id in the page"
done

render() {  # render PAGE PNG NETLOG
  timeout 90 "$chromium" --headless --no-sandbox --disable-gpu --no-first-run \
    --disable-background-networking --disable-component-update --hide-scrollbars \
    --host-resolver-rules="MAP * ~NOTFOUND" --user-data-dir="$tmp/profile-$(basename "$2")" \
    --window-size=1200,1900 --log-net-log="$3" --screenshot="$2" "file://$1" \
    > "$tmp/chromium.log" 2>&1 || { cat "$tmp/chromium.log" >&2; return 1; }
}
render "$page" "$tmp/shot.png" "$tmp/net.json" || fail "chromium could not render the page"
requests=$("$node" "$check" netlog "$tmp/net.json")
[[ -z "$requests" ]] || fail "the page made requests: $requests"

printf '<!DOCTYPE html><html><body><img src="http://127.0.0.1:9/probe.png">%s</body></html>' \
  '<link rel="stylesheet" href="https://example.invalid/x.css">' > "$tmp/control.html"
render "$tmp/control.html" "$tmp/control.png" "$tmp/control-net.json" || fail "control render"
control=$("$node" "$check" netlog "$tmp/control-net.json" | wc -l)
[[ "$control" -eq 2 ]] || fail "the net-log check saw $control of the control page's 2 requests"

# Colours: B's bars (#1f77b4), C's (#d62728), the reference's grey (#6b6b6b), the floor line and
# axes (#000000), the heat map's darkest cell (#08306b: C on fabric, depth 1: both fabric tasks,
# S07 and S07@node1, answered unknown).
read -r _ blue _ red _ grey _ black _ dark < <("$node" "$check" pixels "$tmp/shot.png" \
  '#1f77b4' '#d62728' '#6b6b6b' '#000000' '#08306b' | tr '\n' ' '; echo)
echo "pixels: B bars $blue, C bars $red, reference $grey, black $black, darkest heat cell $dark"
# The test data answers a few tasks, so B's and C's bars are their depth over the whole suite and
# shrink as it grows: 1095 and 1007 pixels at 60 tasks (2026-12-02), none when a bar is missing.
((blue > 500)) || fail "B's bars are not in the screenshot ($blue pixels of #1f77b4)"
((red > 500)) || fail "C's bars are not in the screenshot ($red pixels of #d62728)"
((grey > 500)) || fail "the reference bar is not in the screenshot ($grey pixels of #6b6b6b)"
((black > 150)) || fail "the floor line and axes are not in the screenshot ($black black pixels)"
((dark > 1500)) || fail "the heat map is not in the screenshot ($dark pixels of #08306b)"
cp "$tmp/shot.png" "$shot_out"
echo "screenshot: $shot_out"
if ((fails > 0)); then
  echo "$fails failure(s)" >&2
  exit 1
fi
echo "ok: the leaderboard page renders its charts and loads nothing"
