#!/usr/bin/env bash
# Replay at scale (issue #36, item 3): slurm-mcp serving a bundle recorded on the 1,024-node large
# lab (fixtures/large-1024/drain-node700.evidence.gz, its README says how) answers as it does live.
# Each answer is checked against the pack's own raw reads (rca-bench bundle unpack):
#   - the overview stays under 8 KB at every offset and names node700 draining only while the
#     fault holds (offset 10; injected after 0, healed before 30);
#   - queue group_by state,reason is exact: its groups' task counts sum to the running and pending
#     tasks of the raw squeue read, and its row counts to the read's lines;
#   - nodes group_by state,reason puts node700 alone in the draining group and 1,024 nodes in all;
#   - a queue read is cut at 200 rows with a cursor (pages of a read: large_fixture_test);
#   - node=node700, a filter the recorder did not record, is derived from the whole nodes read
#     (node700's rows, marked derived); a state filter it did not record is "no evidence".
set -euo pipefail
mcp=$1 rca=$2 src=$3
pack=$src/fixtures/large-1024/drain-node700.evidence.gz
fail() { echo "FAIL $*"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$rca" bundle unpack "$pack" "$tmp/b" > /dev/null || fail "unpack $pack: exit $?"
# raw TOPIC OFFSET: the stdout file of the topic's bare read at the offset.
raw() {
  local f
  f=$(jq -r --arg t "$1" --argjson o "$2" '.snapshots[] | select(.offset_seconds == $o) | .reads[]
        | select(.topic == $t) | .stdout_file' "$tmp/b/manifest.json" | head -1)
  [[ -n $f ]] || fail "no $1 read at offset $2 in the pack"
  echo "$tmp/b/$f"
}
for off in 0 10 30; do
  "$mcp" overview --replay "$pack" --offset "$off" > "$tmp/ov$off" ||
    fail "overview at $off: exit $?"
  bytes=$(wc -c < "$tmp/ov$off")
  ((bytes <= 8192)) || fail "overview at $off is $bytes bytes, over 8 KB"
  grep -q "^slurm_overview (replay): 1024 nodes" "$tmp/ov$off" ||
    fail "overview at $off: $(head -1 "$tmp/ov$off")"
  if [[ $off == 10 ]]; then
    grep -q 'draining: 1 node node700' "$tmp/ov$off" ||
      fail "overview at 10 does not name node700 draining"
  else
    ! grep -q node700 "$tmp/ov$off" ||
      fail "overview at $off names node700 (the fault holds only at 10)"
  fi
  echo "overview at +$off s: $bytes bytes"
done

# queue group_by against the raw squeue read (%i|%P|%u|%T|%M|%D|%R): a pending array's row
# (123_[4-9%6]) counts each task, as the topic's `jobs` column does. "Exact" holds only for a
# read that was not cut (the executor's output cap): the recorded reads used must be whole.
for t in queue nodes; do
  cut=$(jq --arg t "$t" '[.snapshots[] | select(.offset_seconds == 10) | .reads[]
          | select(.topic == $t and (.stdout_truncated // false))] | length' "$tmp/b/manifest.json")
  [[ $cut == 0 ]] || fail "a recorded $t read at +10 s was cut: its counts are lower bounds"
done
q=$(raw queue 10)
"$mcp" query queue --group-by state,reason --replay "$pack" --offset 10 --json > "$tmp/g.json"
jq -e '.structuredContent.total_is_lower_bound | not' "$tmp/g.json" > /dev/null ||
  fail "queue group_by says its total is a lower bound"
rows=$(jq '[.structuredContent.groups[].count] | add' "$tmp/g.json")
jobs=$(jq '[.structuredContent.groups[].jobs] | add' "$tmp/g.json")
total=$(jq '.structuredContent.total_rows' "$tmp/g.json")
lines=$(grep -c . "$q")
[[ $rows == "$lines" && $total == "$lines" ]] ||
  fail "queue groups count $rows rows (total_rows $total), the raw read $lines"
running=$(awk -F'|' '$4 == "RUNNING"' "$q" | grep -c .)
grun=$(jq '[.structuredContent.groups[] | select(.state == "RUNNING") | .jobs] | add' "$tmp/g.json")
[[ $grun == "$running" ]] || fail "RUNNING: group_by $grun jobs, the raw read $running rows"
((jobs > lines)) || fail "jobs $jobs not above rows $lines: pending arrays' tasks were not counted"
echo "queue group_by state,reason: $rows rows ($lines raw), $jobs tasks," \
  "$grun running ($running raw)"

# nodes group_by: node700 alone in the draining group, 1,024 nodes in all.
"$mcp" query nodes --group-by state,reason --replay "$pack" --offset 10 --json > "$tmp/n.json"
drain=$(jq -r '.structuredContent.groups[] | select(.state == "draining") | .hostlist' \
  "$tmp/n.json")
[[ $drain == node700 ]] || fail "draining group: '$drain'"
nodes=$(jq '[.structuredContent.groups[].node_count] | add' "$tmp/n.json")
rawnodes=$(cut -d'|' -f1 "$(raw nodes 10)" | sort -u | grep -c .)
[[ $nodes == 1024 && $rawnodes == 1024 ]] ||
  fail "nodes: $nodes in the groups, $rawnodes distinct in the raw read"
echo "nodes group_by state,reason: draining node700, $nodes nodes ($rawnodes raw)"

# A cut read: 200 rows, a cursor, truncated said.
page=$("$mcp" query queue --replay "$pack" --offset 10 --json)
[[ $(jq '.structuredContent.truncated' <<< "$page") == true ]] ||
  fail "a 2,098-row read was not cut"
[[ $(jq '.structuredContent.rows | length' <<< "$page") == 200 ]] ||
  fail "the first page is not 200 rows"
[[ $(jq -r '.structuredContent.next_cursor' <<< "$page") == r*.200.* ]] ||
  fail "no cursor on the cut page"
echo "queue: 200 of $(jq '.structuredContent.total_rows' <<< "$page") rows," \
  "cursor $(jq -r '.structuredContent.next_cursor' <<< "$page")"

# A node filter the recorder did not record (it read node[1-4]) is derived from the whole nodes
# read of the same snapshot: one row per partition of node700, each with its drain reason, exactly
# the raw read's rows of node700, and marked derived (provenance and header).
n700=$(awk -F'|' '$1 == "node700"' "$(raw nodes 10)")
[[ -n $n700 ]] || fail "no node700 row in the raw nodes read at +10 s"
"$mcp" query nodes --filter node=node700 --replay "$pack" --offset 10 --json > "$tmp/700.json" ||
  fail "node=node700: exit $?"
jq -e '.isError | not' "$tmp/700.json" > /dev/null ||
  fail "node=node700: $(jq -r '.content[0].text' "$tmp/700.json" | head -c 300)"
got=$(jq -r '.structuredContent.rows[] | [.node, .partition, .state, .cpus, .gres, .reason]
        | join("|")' "$tmp/700.json")
[[ $got == "$n700" ]] || fail "node=node700 rows: '$got', the raw read's: '$n700'"
parts=$(jq -r '[.structuredContent.rows[].partition] | join(",")' "$tmp/700.json")
jq -e '.structuredContent.rows | all(.node == "node700" and .state == "draining"
        and .reason != "none")' "$tmp/700.json" > /dev/null ||
  fail "node=node700: a row is not node700 draining with a reason"
jq -e '.structuredContent.derived_from == ["sinfo", "--noheader", "-N", "-o",
        "%N|%P|%T|%C|%G|%E"]' "$tmp/700.json" > /dev/null ||
  fail "node=node700 does not say it was derived from the whole nodes read"
jq -r '.content[0].text' "$tmp/700.json" | head -1 | grep -q ', derived] nodes: ' ||
  fail "node=node700: the header does not say derived"
reason=$(jq -r '.structuredContent.rows[0].reason' "$tmp/700.json")
echo "node=node700 (not recorded): derived, $(jq '.structuredContent.total_rows' "$tmp/700.json")" \
  "rows (partitions $parts), reason $reason"

# A filter that is not an equality on a column (a state) is no evidence, never zero rows.
out=$("$mcp" query nodes --filter state=down --replay "$pack" --offset 10 || true)
grep -q "^NO EVIDENCE (unavailable, replay" <<< "$out" ||
  fail "state=down: $(head -c 200 <<< "$out")"
grep -q "not an empty result" <<< "$out" ||
  fail "state=down does not say it is not an empty result"
echo "state=down (not recorded, not derivable): no evidence"
echo "PASS"
