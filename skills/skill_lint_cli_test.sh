#!/usr/bin/env bash
# skill-lint's command-line contract: exit 0 clean, 1 findings, 2 usage; the three formats.
#   skill_lint_cli_test.sh SKILL_LINT SKILLS_DIR
set -uo pipefail
bin="$1"
skills="$2"
data="$skills/testdata"
fails=0
check() {  # check NAME EXPECTED_RC OUTPUT_REGEX -- ARGS...
  local name="$1" want="$2" re="$3"
  shift 4
  local out rc
  out="$("$bin" "$@" 2>&1)"
  rc=$?
  if [[ "$rc" != "$want" ]]; then
    echo "FAIL $name: exit $rc, wanted $want; output:"; echo "$out"; fails=$((fails + 1)); return
  fi
  if ! grep -Eq -- "$re" <<<"$out"; then
    echo "FAIL $name: output does not match /$re/:"; echo "$out"; fails=$((fails + 1)); return
  fi
  echo "ok   $name"
}
check help 0 'Usage: .*skill-lint' -- --help
check list-rules 0 '^figure-unclaimed	error	' -- --list-rules
check clean 0 '^1 skill\(s\), 0 error\(s\), 0 warning\(s\)$' -- "$data/ok"
check findings-text 1 'SKILL.md:2: error: \[name-charset\]' -- "$data/name-charset"
check findings-github 1 '^::error file=[^,]*/SKILL.md,line=2,title=name-charset::' -- --format github "$data/name-charset"
check findings-json 1 '"rule": "name-charset"' -- --format json "$data/name-charset"
check warning-only 0 '\[body-lines\]' -- "$data/body-lines"
check warning-strict 1 '\[body-lines\]' -- --strict "$data/body-lines"
check profile 0 '0 error' -- --profile claude-code "$data/ok-claude-code"
check profile-spec 1 '\[unknown-key\]' -- --profile spec "$data/ok-claude-code"
check no-paths 2 'at least one PATH' --
check missing-path 2 'no such file' -- "$data/no-such-case"
check bad-profile 2 'profile' -- --profile bogus "$data/ok"
check bad-format 2 'format' -- --format xml "$data/ok"
check skill-file 1 'name-charset' -- "$data/name-charset/Sample_Runbook/SKILL.md"
check shipped 0 ' 0 error\(s\), 0 warning\(s\)$' -- --strict "$skills"
echo "$fails failed"
[[ "$fails" == 0 ]]
