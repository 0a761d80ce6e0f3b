#!/usr/bin/env bash
# --version on every binary (issue #22 item 1): "NAME VERSION (git REVISION)", exit 0; VERSION is
# CMakeLists.txt's project version, REVISION 12 hex digits of a commit of the source tree (with
# -dirty when it had changes), or "unknown" when the tree is not a git checkout; the four agree,
# and slurm-mcp's initialize answers with the same version.
# Usage: version_test.sh SOURCE_DIR SLURM_MCP SLURM_GUARD RCA_BENCH SKILL_LINT
set -uo pipefail
src=$1
shift
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
want=$(sed -nE 's/^project\(slurm_rca VERSION ([0-9.]+) .*/\1/p' "$src/CMakeLists.txt")
[[ -n $want ]] || fail "no project version in $src/CMakeLists.txt"
lines=()
for bin in "$@"; do
  name=$(basename "$bin")
  out=$("$bin" --version 2>&1)
  rc=$?
  [[ $rc -eq 0 ]] || fail "$name --version exited $rc: $out"
  if [[ $out =~ ^$name\ ([0-9.]+)\ \(git\ ([0-9a-f]{12}(-dirty)?|unknown)\)$ ]]; then
    [[ ${BASH_REMATCH[1]} == "$want" ]] || fail "$name says version ${BASH_REMATCH[1]}, CMakeLists.txt $want"
    rev=${BASH_REMATCH[2]%-dirty}
    if git -C "$src" rev-parse --git-dir > /dev/null 2>&1; then
      [[ $rev != unknown ]] || fail "$name: revision unknown in a git checkout"
      git -C "$src" cat-file -e "$rev^{commit}" 2> /dev/null || fail "$name: $rev is no commit of $src"
    fi
  else
    fail "$name --version printed '$out'"
  fi
  lines+=("${out#"$name "}")
done
[[ $(printf '%s\n' "${lines[@]}" | sort -u | wc -l) -eq 1 ]] || fail "the binaries disagree: ${lines[*]}"
"$1" --help | grep -q -- '--version' || fail "slurm-mcp --help does not list --version"
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
reply=$(echo "$init" | "$1" serve --stdio --replay "$src/fixtures/demo" 2> /dev/null | head -n 1)
grep -q "\"version\":\"$want\"" <<< "$reply" || fail "initialize's serverInfo does not carry $want: $reply"
if ((fails > 0)); then
  echo "$fails failure(s)" >&2
  exit 1
fi
echo "ok: ${lines[0]} from all four binaries and in serverInfo"
