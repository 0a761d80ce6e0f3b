#!/usr/bin/env bash
# A man page from a binary's --help and --version (help2man), with one section per subcommand
# holding that subcommand's own --help, so `man slurm-mcp` shows serve's options too.
# Usage: scripts/man_page.sh HELP2MAN BINARY "ONE-LINE SUMMARY" OUT.1.gz
set -euo pipefail
[[ $# -eq 4 ]] || { echo "usage: scripts/man_page.sh HELP2MAN BINARY SUMMARY OUT" >&2; exit 2; }
help2man=$1 bin=$2 summary=$3 out=$4
# Run by name from PATH, so usage lines say "slurm-mcp serve", not the build tree's path.
name=$(basename "$bin")
export PATH="$(cd "$(dirname "$bin")" && pwd):$PATH"
bin=$name
include=$(mktemp)
trap 'rm -f "$include"' EXIT
# The subcommands are the indented first words under "Subcommands:" in --help (CLI11's layout).
mapfile -t subs < <("$bin" --help | sed -n '/^Subcommands:/,$p' | sed -nE 's/^  ([a-z][a-z0-9-]*)( .*)?$/\1/p')
for sub in "${subs[@]}"; do
  printf '[COMMAND %s]\n' "${sub^^}" >> "$include"
  # Roff: a leading dot or quote would be a request; backslashes are escaped.
  { echo '.nf'; "$bin" "$sub" --help | sed -e 's/\\/\\e/g' -e "s/^[.']/\\\\\&&/"; echo '.fi'; } >> "$include"
done
extra=()
[[ -s $include ]] && extra=(--include="$include")
"$help2man" --no-info --no-discard-stderr --section=1 --name="$summary" "${extra[@]}" \
  --output="${out%.gz}" "$bin"
gzip -9 -n -f "${out%.gz}"  # Debian installs man pages compressed; -n: no name or time inside
