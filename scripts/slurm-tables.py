#!/usr/bin/env python3
"""Extract the option and command-word tables of the Slurm clients the guard allows from a
Slurm source tree, as the guard's release test reads them (fixtures/slurm-RELEASE/tables.txt).

  scripts/slurm-tables.py SOURCE_DIR > fixtures/slurm-25.11/tables.txt

SOURCE_DIR is an unpacked release (slurm-25-11-4-1/, or Debian's slurm-wlm orig tarball for
22.05). What it reads, per program:
  - getopt_long's optstring and the `struct option long_options[]` table: every short letter
    and long name with its argument kind (none, required, optional);
  - scontrol and sacctmgr: the command words of _process_command and the entities of
    _show_it, in the order the program tests them, with how each is matched.

Output lines (one fact each; '#' starts a comment):
  PROGRAM short LETTER none|required|optional
  PROGRAM long NAME none|required|optional
  PROGRAM word LITERAL prefix N   tag matches when it is a prefix of LITERAL at least N long
  PROGRAM word LITERAL lead N     tag matches when its first N characters are LITERAL's
  PROGRAM word LITERAL exact 0    tag matches LITERAL only
  PROGRAM entity LITERAL ...      the same, for `show` (scontrol) and `show|list` (sacctmgr)
Matching is case-insensitive in Slurm (xstrncasecmp); the first match in file order wins.

It parses C with regular expressions: it fails loudly (exit 1) when a table it expects is not
found, rather than printing a short one.
"""
import re
import sys
from pathlib import Path

PROGRAMS = {
    "sinfo": "src/sinfo/opts.c",
    "squeue": "src/squeue/opts.c",
    "sacct": "src/sacct/options.c",
    "sacctmgr": "src/sacctmgr/sacctmgr.c",
    "scontrol": "src/scontrol/scontrol.c",
    "sdiag": "src/sdiag/opts.c",
    "sprio": "src/sprio/opts.c",
    "sshare": "src/sshare/sshare.c",
}
# Functions whose xstrncasecmp chains are the command words and the show entities.
WORD_FUNCTIONS = {
    "scontrol": [("word", "_process_command"), ("entity", "_show_it")],
    "sacctmgr": [("word", "_process_command"), ("entity", "_show_it")],
}
ARG = {"no_argument": "none", "required_argument": "required", "optional_argument": "optional",
       "0": "none", "1": "required", "2": "optional"}


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def c_string(literals):
    """The value of adjacent C string literals."""
    return "".join(bytes(s, "utf-8").decode("unicode_escape") for s in re.findall(r'"((?:[^"\\]|\\.)*)"', literals))


def die(msg):
    print(f"slurm-tables: {msg}", file=sys.stderr)
    sys.exit(1)


def options(program, text):
    m = re.search(r"getopt_long\s*\(\s*argc\s*,\s*argv\s*,\s*((?:\"(?:[^\"\\]|\\.)*\"\s*)+),", text)
    if not m:
        die(f"{program}: no getopt_long optstring")
    optstring = c_string(m.group(1)).lstrip("+-:")
    shorts = []
    i = 0
    while i < len(optstring):
        c = optstring[i]
        colons = 0
        while i + 1 + colons < len(optstring) and optstring[i + 1 + colons] == ":":
            colons += 1
        shorts.append((c, ["none", "required", "optional"][min(colons, 2)]))
        i += 1 + colons
    t = re.search(r"struct\s+option\s+\w+\s*\[\s*\]\s*=\s*\{(.*?)\{\s*(?:0|NULL)\s*,", text, re.S)
    if not t:
        die(f"{program}: no struct option table")
    longs = []
    for name, arg in re.findall(r'\{\s*"([^"]+)"\s*,\s*(\w+)\s*,', t.group(1)):
        if arg not in ARG:
            die(f"{program}: long option {name}: unknown argument kind {arg}")
        longs.append((name, ARG[arg]))
    if not longs:
        die(f"{program}: empty struct option table")
    return shorts, longs


def function_body(text, name):
    m = re.search(r"\n(?:static\s+)?[\w\s\*]*\b" + re.escape(name) + r"\s*\([^;{]*\)\s*\{", text)
    if not m:
        return None
    depth, i = 1, m.end()
    while depth and i < len(text):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    return text[m.end():i]


CMP = re.compile(
    r'\bxstrn?casecmp\s*\(\s*[\w\[\]]+\s*,\s*"((?:[^"\\]|\\.)*)"\s*'
    r'(?:,\s*(?:MAX\s*\(\s*\w+\s*,\s*(\d+)\s*\)|(\d+)))?\s*\)')


def words(program, kind, body):
    out = []
    for lit, at_least, lead in CMP.findall(body):
        lit = c_string('"' + lit + '"')
        if at_least:
            out.append((lit, "prefix", int(at_least)))
        elif lead:
            out.append((lit, "lead", int(lead)))
        else:
            out.append((lit, "exact", 0))
    if not out:
        die(f"{program}: no {kind} words")
    return out


def main():
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        sys.exit(0 if len(sys.argv) == 2 else 2)
    root = Path(sys.argv[1])
    version = "unknown"
    meta = root / "META"
    if meta.exists():
        fields = dict(re.findall(r"^\s*(\w+):\s*(\S+)", meta.read_text(), re.M))
        version = ".".join(fields.get(k, "?") for k in ("Major", "Minor", "Micro"))
    print(f"# Slurm {version}: option and command tables of the clients the guard allows,")
    print(f"# extracted from the release sources by scripts/slurm-tables.py (see its --help)")
    for program, rel in PROGRAMS.items():
        path = root / rel
        if not path.exists():
            die(f"{path}: missing")
        text = strip_comments(path.read_text(errors="replace"))
        shorts, longs = options(program, text)
        for c, arg in shorts:
            print(f"{program} short {c} {arg}")
        for name, arg in longs:
            print(f"{program} long {name} {arg}")
        for kind, fn in WORD_FUNCTIONS.get(program, []):
            body = function_body(text, fn)
            if body is None:
                die(f"{program}: no function {fn} in {rel}")
            for lit, how, n in words(program, kind, body):
                print(f"{program} {kind} {lit} {how} {n}")


if __name__ == "__main__":
    main()
