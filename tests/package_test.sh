#!/usr/bin/env bash
# The Debian packages and the service unit (issue #22 items 1 and 2), from a built tree:
#   1. cpack builds slurm-mcp, rca-bench and rca-bench-data;
#   2. dpkg-deb --info: each binary package Depends on the Debian package of every library its
#      binaries link (found here with ldd and dpkg -S, not from a list), rca-bench on the other two;
#   3. dpkg-deb --contents: the binaries, a man page per binary (with each subcommand's options),
#      every runbook, the unit, the environment file, every scenario and recorded bundle;
#   4. unpacked into a scratch root (dpkg -x), the binaries run from there and use the data
#      there, not the source tree's (a scenario and a runbook removed there disappear);
#   5. the unit passes `systemd-analyze verify` in that root (and a misspelt key fails it), and
#      `systemd-analyze security --offline=yes` scores it at or below the README's figure;
#   6. the unit's ExecStart, run from that root as nobody with no new privileges (ports 18350 and
#      18351), serves /ready behind the token and /metrics, and stops on SIGTERM with status 0.
# Usage: package_test.sh SOURCE_DIR BUILD_DIR
set -uo pipefail
src=$1 build=$2
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
work=$(mktemp -d)
serve=""
trap '[[ -n $serve ]] && kill -KILL "$serve" 2> /dev/null; rm -rf "$work"' EXIT

start=$(date +%s)
if ! cpack --config "$build/CPackConfig.cmake" -B "$work/out" > "$work/cpack.log" 2>&1; then
  tail -20 "$work/cpack.log" >&2
  echo "FAIL: cpack failed" >&2
  exit 1
fi
echo "cpack: $(($(date +%s) - start)) s"
version=$(sed -nE 's/^project\(slurm_rca VERSION ([0-9.]+) .*/\1/p' "$src/CMakeLists.txt")
server="$work/out/slurm-mcp_${version}_amd64.deb"
bench="$work/out/rca-bench_${version}_amd64.deb"
data="$work/out/rca-bench-data_${version}_all.deb"
for deb in "$server" "$bench" "$data"; do
  [[ -f $deb ]] || { fail "no $(basename "$deb") (cpack made: $(ls "$work/out"))"; exit 1; }
done

field() { dpkg-deb --field "$1" "$2"; }
# The Debian packages holding the libraries BINARY links itself (its DT_NEEDED entries, where ldd
# finds them; what those libraries link in turn is their packages' business), as dpkg -S names
# them (libfoo1:amd64 -> libfoo1).
linked_packages() {
  local paths
  paths=$(ldd "$1")
  readelf -d "$1" | sed -nE 's/.*\(NEEDED\).*\[(.*)\]/\1/p' | while read -r soname; do
    lib=$(awk -v n="$soname" '$1 == n && $3 ~ /^\// {print $3}' <<< "$paths")
    [[ -n $lib ]] || { echo "UNRESOLVED:$soname"; continue; }
    { dpkg -S "$lib" 2> /dev/null || dpkg -S "$(readlink -f "$lib")" 2> /dev/null; } | head -1 | cut -d: -f1
  done | sort -u
}
check_depends() {  # DEB BINARY...
  local deb=$1 depends
  shift
  depends=$(field "$deb" Depends)
  for bin in "$@"; do
    while read -r pkg; do
      [[ -n $pkg ]] || continue
      [[ ", $depends," == *", $pkg "* || ", $depends," == *", $pkg,"* ]] ||
        fail "$(basename "$deb"): $bin links a library of $pkg, which Depends does not name: $depends"
    done < <(linked_packages "$build/bin/$bin")
  done
}
[[ $(field "$server" Package) == slurm-mcp ]] || fail "server package is named $(field "$server" Package)"
[[ $(field "$bench" Package) == rca-bench ]] || fail "bench package is named $(field "$bench" Package)"
[[ $(field "$data" Architecture) == all ]] || fail "rca-bench-data is not Architecture: all"
[[ $(field "$data" Depends) == "" ]] || fail "rca-bench-data depends on $(field "$data" Depends)"
check_depends "$server" slurm-mcp slurm-guard skill-lint
check_depends "$bench" rca-bench
[[ $(field "$bench" Depends) == *"slurm-mcp (= $version)"* ]] || fail "rca-bench does not depend on slurm-mcp (= $version)"
[[ $(field "$bench" Depends) == *"rca-bench-data (= $version)"* ]] || fail "rca-bench does not depend on rca-bench-data"
[[ $(field "$server" Depends) == *libre2-* ]] || fail "slurm-mcp: no libre2 in Depends (the ldd check found nothing?)"

contents() { dpkg-deb --contents "$1" | awk '{print $NF}' | sed 's|^\./|/|'; }
contents "$server" > "$work/server.list"
contents "$bench" > "$work/bench.list"
contents "$data" > "$work/data.list"
want() {  # LIST PATH
  grep -qxF "$2" "$work/$1.list" || fail "$1 package lacks $2"
}
for b in slurm-mcp slurm-guard skill-lint; do
  want server "/usr/bin/$b"
  want server "/usr/share/man/man1/$b.1.gz"
done
want bench /usr/bin/rca-bench
want bench /usr/share/man/man1/rca-bench.1.gz
want server /usr/lib/systemd/system/slurm-mcp.service
want server /usr/share/doc/slurm-mcp/examples/slurm-mcp
want server /usr/share/slurm-rca/skills/claims.yaml
want data /usr/share/slurm-rca/agents/graph/graph.yaml
want data /usr/share/slurm-rca/scenarios/live/templates/slurm.conf.in
count() { grep -c "$2" "$work/$1.list"; }
n_src=$(find "$src/skills" -mindepth 2 -maxdepth 2 -name SKILL.md | wc -l)
[[ $(count server '/skills/[^/]*/SKILL.md$') -eq $n_src ]] || fail "runbooks: $(count server '/skills/[^/]*/SKILL.md$') packaged, $n_src in skills/"
n_src=$(find "$src/scenarios" -name scenario.yaml | wc -l)
[[ $(count data '/scenario.yaml$') -eq $n_src ]] || fail "scenarios: $(count data '/scenario.yaml$') packaged, $n_src in scenarios/"
# Bundles are packs (fixtures/README.md, "Packed bundles"); the captures of slurm-*/ are directories.
n_src=$(find "$src/fixtures" -name '*.evidence.gz' | wc -l)
[[ $n_src -ge 100 ]] || fail "bundles: only $n_src packs in fixtures/"
[[ $(count data '/fixtures/.*\.evidence\.gz$') -eq $n_src ]] || fail "bundles: $(count data '/fixtures/.*\.evidence\.gz$') packaged, $n_src in fixtures/"
n_src=$(find "$src/fixtures" -name manifest.json | wc -l)
[[ $(count data '/fixtures/.*/manifest.json$') -eq $n_src ]] || fail "captures: $(count data '/fixtures/.*/manifest.json$') packaged, $n_src in fixtures/"
n_src=$(find "$src/agents/configs" -name '*.yaml' | wc -l)
[[ $(count data '/agents/configs/.*\.yaml$') -eq $n_src ]] || fail "configurations: $(count data '/agents/configs/.*\.yaml$') packaged, $n_src in agents/configs/"
grep -E '\.(cc|h)$|CMakeLists\.txt$|/testdata/|/fuzz/' "$work"/*.list | head -3 | while read -r l; do fail "a source file is packaged: $l"; done

# Unpacked into a scratch root, the binaries run from there with the data there.
root="$work/root"
for deb in "$server" "$bench" "$data"; do dpkg -x "$deb" "$root" || fail "dpkg -x $(basename "$deb")"; done
zcat "$root/usr/share/man/man1/slurm-mcp.1.gz" | grep -q -- '--max-per-minute' ||
  fail "slurm-mcp.1 lacks serve's options (--max-per-minute)"
zcat "$root/usr/share/man/man1/slurm-mcp.1.gz" | grep -q "$src" && fail "slurm-mcp.1 names the build machine's $src"
want_version=$("$build/bin/slurm-mcp" --version)
got=$("$root/usr/bin/slurm-mcp" --version) || fail "installed slurm-mcp --version exited $?"
[[ $got == "$want_version" ]] || fail "installed slurm-mcp --version: '$got', built: '$want_version'"
tools=$("$root/usr/bin/slurm-mcp" tools 2>&1) || fail "installed slurm-mcp tools exited $?: $tools"
for t in slurm_overview slurm_query slurm_describe; do
  [[ $tools == *"$t"* ]] || fail "installed slurm-mcp tools does not list $t"
done
rules=$("$root/usr/bin/skill-lint" --list-rules 2>&1) || fail "installed skill-lint --list-rules exited $?"
[[ $(wc -l <<< "$rules") -ge 5 ]] || fail "installed skill-lint --list-rules printed: $rules"
"$root/usr/bin/skill-lint" --strict "$root/usr/share/slurm-rca/skills" > "$work/lint.out" 2>&1 ||
  fail "installed skill-lint finds problems in the installed runbooks: $(tail -3 "$work/lint.out")"
"$root/usr/bin/slurm-guard" check -- squeue --noheader | grep -qx ALLOWED || fail "installed slurm-guard does not allow squeue --noheader"

# rca-bench reads the installed scenarios: one removed there is gone from its table.
"$root/usr/bin/rca-bench" list > "$work/list.before" 2>&1 || fail "installed rca-bench list: $(tail -2 "$work/list.before")"
"$build/bin/rca-bench" list > "$work/list.built" 2>&1
cmp -s "$work/list.before" "$work/list.built" || fail "installed rca-bench list differs from the built one's"
rm -rf "$root/usr/share/slurm-rca/scenarios/S02-dbd-lock-contention"
"$root/usr/bin/rca-bench" list > "$work/list.after" 2>&1
grep -q '^| S02-dbd-lock-contention |' "$work/list.before" || fail "S02 missing before its removal"
! grep -q '^| S02-dbd-lock-contention |' "$work/list.after" || fail "installed rca-bench lists S02 from elsewhere than its own data"

# slurm-mcp serves the installed runbooks: one removed there is one resource fewer.
resources() {
  printf '%s\n' \
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"package_test","version":"1"}}}' \
    '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
    '{"jsonrpc":"2.0","id":2,"method":"resources/list"}' |
    "$root/usr/bin/slurm-mcp" serve --stdio --replay "$root/usr/share/slurm-rca/fixtures/S01-accounting-backend-stall" 2> /dev/null |
    grep -o '"uri":"skill://[^"]*"' | sort -u | wc -l
}
n_before=$(resources)
n_skills=$(find "$root/usr/share/slurm-rca/skills" -mindepth 2 -maxdepth 2 -name SKILL.md | wc -l)
[[ $n_before -ge $n_skills && $n_skills -gt 0 ]] || fail "installed slurm-mcp lists $n_before skill resources for $n_skills runbooks"
rm -rf "$root/usr/share/slurm-rca/skills/queue-not-draining"
n_after=$(resources)
[[ $n_after -lt $n_before ]] || fail "installed slurm-mcp serves runbooks from elsewhere than its own data ($n_before, then $n_after)"

# The unit, checked where the package put it, with the binary it names present.
if ! out=$(systemd-analyze verify --man=no --recursive-errors=no --root="$root" slurm-mcp.service 2>&1); then
  fail "systemd-analyze verify: $out"
fi
[[ -z $out ]] || fail "systemd-analyze verify complains: $out"
bad="$work/bad"
mkdir -p "$bad/usr/bin" "$bad/usr/lib/systemd/system"
cp "$root/usr/bin/slurm-mcp" "$bad/usr/bin/"
sed 's/^NoNewPrivileges=/NoNewPrivilege=/' "$root/usr/lib/systemd/system/slurm-mcp.service" > "$bad/usr/lib/systemd/system/slurm-mcp.service"
if systemd-analyze verify --man=no --recursive-errors=no --root="$bad" slurm-mcp.service > /dev/null 2>&1; then
  fail "systemd-analyze verify passes a unit with a misspelt key: the check checks nothing"
fi
score=$(systemd-analyze security --offline=yes --root="$root" slurm-mcp.service 2>&1 |
  sed -nE 's/.*Overall exposure level for slurm-mcp\.service: ([0-9.]+).*/\1/p')
ceiling=$(sed -nE 's/.*systemd-analyze security --offline=yes[^:]*: exposure ([0-9.]+) .*/\1/p' "$src/README.md" | head -1)
echo "systemd-analyze security: exposure $score (README: $ceiling)"
[[ -n $score ]] || fail "systemd-analyze security printed no exposure level"
[[ -n $ceiling ]] || fail "README states no 'systemd-analyze security --offline=yes ...: exposure N.N' figure"
if [[ -n $score && -n $ceiling ]] && awk -v s="$score" -v c="$ceiling" 'BEGIN{exit !(s > c)}'; then
  fail "the unit's exposure rose to $score, above the README's $ceiling"
fi

# The unit's own command line, run from the scratch root as an unprivileged user with no way to
# gain privileges, as systemd would start it (its %d, ${...} and log path filled in here; the
# sandboxing itself needs systemd as PID 1, which this machine lacks): it serves /ready behind the
# token and the metrics, and stops on SIGTERM with status 0.
unit="$root/usr/lib/systemd/system/slurm-mcp.service"
cmdline=$(sed -n '/^ExecStart=/,/[^\\]$/p' "$unit" | sed -e 's/^ExecStart=//' -e 's/\\$//' | tr '\n' ' ')
chmod 755 "$work"
mkdir -p "$work/creds" "$work/logs"
head -c 24 /dev/urandom | base64 > "$work/creds/token"
chmod 644 "$work/creds/token"
chown nobody "$work/logs"
cmdline=${cmdline//\/usr\/bin\/slurm-mcp/$root/usr/bin/slurm-mcp}
cmdline=${cmdline//%d/$work/creds}
cmdline=${cmdline//'${SLURM_MCP_HTTP}'/127.0.0.1:18350}
cmdline=${cmdline//'${SLURM_CONF}'/\/etc\/slurm\/slurm.conf}
cmdline=${cmdline//\/var\/log\/slurm-mcp/$work/logs}
cmdline=${cmdline//'$SLURM_MCP_OPTIONS'/--metrics 127.0.0.1:18351}
read -ra argv <<< "$cmdline"
[[ ${argv[0]} == "$root/usr/bin/slurm-mcp" && " ${argv[*]} " == *" serve --http 127.0.0.1:18350 "* ]] ||
  fail "the unit's ExecStart is not the expected serve --http: ${argv[*]}"
setpriv --reuid=nobody --regid=nogroup --clear-groups --no-new-privs "${argv[@]}" > "$work/serve.out" 2>&1 &
serve=$!
token=$(cat "$work/creds/token")
ready=""
for _ in $(seq 100); do
  ready=$(curl -s -H "Authorization: Bearer $token" http://127.0.0.1:18350/ready) && break
  kill -0 "$serve" 2> /dev/null || break
  sleep 0.1
done
[[ $ready == *'"backend"'*'"live"'* ]] || fail "the unit's command line: no /ready answer ($ready): $(tail -3 "$work/serve.out")"
code=$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:18350/ready)
[[ $code == 401 ]] || fail "the unit's command line: /ready without the token answered $code, not 401"
metrics=$(curl -s http://127.0.0.1:18351/metrics)
[[ $metrics == *"slurm_mcp_build_info{version=\"$version\""* ]] || fail "the unit's command line: no build info at /metrics"
if command -v promtool > /dev/null; then
  complaints=$(promtool check metrics <<< "$metrics" 2>&1) || fail "promtool check metrics: $complaints"
fi
[[ $(ps -o user= -p "$serve") == nobody ]] || fail "the served process runs as $(ps -o user= -p "$serve")"
kill -TERM "$serve" 2> /dev/null
wait "$serve"
rc=$?
[[ $rc -eq 0 ]] || fail "the unit's command line: SIGTERM ended it with status $rc: $(tail -3 "$work/serve.out")"

[[ $fails -eq 0 ]] || { echo "$fails failure(s)" >&2; exit 1; }
echo "package_test: 3 packages, contents, scratch-root runs, unit verified, exposure $score; $(($(date +%s) - start)) s"
