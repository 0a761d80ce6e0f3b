#!/usr/bin/env bash
# Builds one Slurm release from a source archive into a cache prefix, for the lab to run
# (`rca-bench cluster up --slurm PREFIX`) beside Debian's 22.05.
#
# Usage: scripts/build-slurm.sh [--jobs N] [--cache DIR] TARBALL
#   TARBALL   an archive of a SchedMD release tag, e.g. ../shared/slurm/slurm-25-11-4-1.tar.gz
#   --cache   where prefixes live (default ${SLURM_RCA_CACHE:-~/.cache/slurm-rca})
#   --jobs    make -j (default: nproc)
# Prints the prefix on its last line (PREFIX=...). Instant when the prefix is complete (it holds
# .slurm-rca-complete, written last, naming the archive's SHA-256). The build runs at the lowest
# CPU priority. Installs the Debian build dependencies when run as root (scripts/deps.sh with
# their names), else says which are missing. Fails when a plugin the lab needs was not built: without
# libmariadb-dev-compat (mysql_config) configure succeeds but builds no MySQL accounting plugin.
set -euo pipefail

usage() { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; }
jobs=$(nproc)
cache=${SLURM_RCA_CACHE:-$HOME/.cache/slurm-rca}
tarball=
while [[ $# -gt 0 ]]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --jobs) jobs=${2:?--jobs needs a number}; shift 2 ;;
    --cache) cache=${2:?--cache needs a folder}; shift 2 ;;
    -*) echo "build-slurm: unknown option $1" >&2; usage >&2; exit 2 ;;
    *) [[ -z "$tarball" ]] || { echo "build-slurm: one archive at a time" >&2; exit 2; }
       tarball=$1; shift ;;
  esac
done
[[ -n "$tarball" ]] || { usage >&2; exit 2; }
[[ -f "$tarball" ]] || { echo "build-slurm: no such archive: $tarball" >&2; exit 2; }

# slurm-25-11-4-1.tar.gz -> 25.11.4 (the tag's last number is SchedMD's packaging release).
base=$(basename "$tarball")
if [[ ! "$base" =~ ^slurm-([0-9]+)-([0-9]+)-([0-9]+)-[0-9]+\.tar\.gz$ ]]; then
  echo "build-slurm: $base is not named like a release tag archive (slurm-25-11-4-1.tar.gz)" >&2
  exit 2
fi
version="${BASH_REMATCH[1]}.${BASH_REMATCH[2]}.${BASH_REMATCH[3]}"
prefix="$cache/slurm-$version"
marker="$prefix/.slurm-rca-complete"
sum=$(sha256sum "$tarball" | cut -d' ' -f1)

# The plugins the lab's configuration names (scenarios/live/templates): without any of them a
# daemon would not start, or accounting would silently be off.
plugins=(accounting_storage_mysql accounting_storage_slurmdbd auth_munge cred_munge
         select_cons_tres proctrack_linuxproc jobacct_gather_linux priority_multifactor
         sched_backfill gres_gpu)
check_plugins() {
  local missing=()
  for p in "${plugins[@]}"; do
    [[ -f "$prefix/lib/slurm/$p.so" ]] || missing+=("$p")
  done
  for b in sbin/slurmctld sbin/slurmd sbin/slurmdbd bin/sinfo bin/squeue bin/sacct bin/scontrol \
           bin/sdiag bin/sprio bin/sshare bin/sacctmgr bin/sbatch bin/scancel; do
    [[ -x "$prefix/$b" ]] || missing+=("$b")
  done
  if [[ ${#missing[@]} -gt 0 ]]; then
    echo "build-slurm: $prefix lacks: ${missing[*]}" >&2
    return 1
  fi
}

if [[ -f "$marker" ]] && grep -qx "sha256 $sum" "$marker" && check_plugins 2>/dev/null; then
  echo "build-slurm: Slurm $version is already built in $prefix"
  echo "PREFIX=$prefix"
  exit 0
fi

# Debian's build dependencies (see ../shared/slurm/README.md).
build_deps=(build-essential libmunge-dev libmariadb-dev libmariadb-dev-compat libjson-c-dev
            libyaml-dev libjwt-dev libhttp-parser-dev liblz4-dev libhwloc-dev libpam0g-dev
            libreadline-dev libdbus-1-dev libnuma-dev munge mariadb-server)
"$(dirname "$0")/deps.sh" "${build_deps[@]}"

start=$(date +%s)
work="$cache/build-slurm-$version"
log="$cache/build-slurm-$version.log"
rm -rf "$work" "$prefix"
mkdir -p "$work" "$cache"
echo "build-slurm: Slurm $version from $base into $prefix (log $log)"
tar -xzf "$tarball" -C "$work" --strip-components=1
cd "$work"
step() {
  local what=$1; shift
  echo "build-slurm: $what ($(( $(date +%s) - start )) s)"
  if ! nice -n 19 "$@" >>"$log" 2>&1; then
    echo "build-slurm: $what failed; the last lines of $log:" >&2
    tail -n 30 "$log" >&2
    exit 1
  fi
}
# --enable-multiple-slurmd: the lab runs one slurmd per node on this one host (slurmd -N NAME).
# sysconfdir inside the prefix, so that nothing of this release reads /etc/slurm: the lab always
# names its own slurm.conf through SLURM_CONF.
step configure ./configure --prefix="$prefix" --sysconfdir="$prefix/etc" --enable-multiple-slurmd \
  --disable-debug --disable-slurmrestd
step "make -j$jobs" make -j"$jobs"
step "make install" make install
rm -rf "$prefix/share/doc" "$prefix/share/man"
check_plugins
cd /
rm -rf "$work"
took=$(( $(date +%s) - start ))
printf 'slurm %s\nsha256 %s\nbuilt %s\nseconds %s\n' "$version" "$sum" "$(date -u +%FT%TZ)" \
  "$took" >"$marker"
echo "build-slurm: Slurm $version built in ${took} s ($(du -sh "$prefix" | cut -f1))"
echo "PREFIX=$prefix"
