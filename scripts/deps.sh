#!/usr/bin/env bash
# Installs the Debian packages the build needs, or says exactly how to.
# Usage: scripts/deps.sh [--check] [PACKAGE...]
#   --check  only report what is missing (exit 1 if anything is)
#   PACKAGE  these packages instead of the build's (scripts/build-slurm.sh passes Slurm's
#            build dependencies)
set -euo pipefail

check=
if [[ "${1:-}" == "--check" ]]; then check=1; shift; fi
packages=(
  cmake make g++ pkg-config ccache
  nlohmann-json3-dev libcpp-httplib-dev libre2-dev libuv1-dev libssl-dev
  # zlib: the gzipped fixtures of the 1,024-node lab (fixtures/large-1024)
  zlib1g-dev
  # cjose (JWS/JWK over OpenSSL): OAuth access tokens (mcp/auth)
  libcjose-dev libjansson-dev
  # Boost.Beast and Asio (header-only): slurm-mcp's HTTP server
  libboost-dev
  libgtest-dev libgmock-dev librapidcheck-dev libyaml-cpp-dev libcli11-dev
  clang-14 libclang-rt-14-dev
  # the live control plane (scenarios/live): Slurm 22.05, munge, MariaDB, nftables, chattr;
  # the hosts lab's network namespaces and its live test (hostnet.h): ip, ping
  slurmctld slurmd slurmdbd slurm-client slurm-wlm-basic-plugins munge mariadb-server
  nftables e2fsprogs iproute2 iputils-ping
  # the Debian packages: man pages from each binary's --help (help2man), Depends found from the
  # linked libraries (dpkg-shlibdeps, and file, which CPack runs), the unit checked (systemd-analyze)
  help2man dpkg-dev file systemd
  # the leaderboard page is checked in a real browser (tests/leaderboard_html_test.sh)
  chromium
  # slurm-mcp serve --metrics is scraped by a real Prometheus (tests/prometheus_test.sh)
  prometheus
  # mcp_bench's HTTP load generator (make bench; bench/README.md)
  wrk
  # the shipped reverse-proxy configuration is run in front of slurm-mcp (tests/nginx_proxy_test.sh)
  nginx
)

[[ $# -gt 0 ]] && packages=("$@")
missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

# The MCP peer tests run the official TypeScript SDK and conformance suite from npm: any Node.js
# with npm will do (the conformance suite brings its own Node 22 from npm).
if [[ $# -eq 0 ]] && ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  missing+=(nodejs npm)
fi

if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi
if [[ -n "$check" ]]; then
  echo "missing Debian packages: ${missing[*]}" >&2
  exit 1
fi
line="apt-get update && apt-get install -y ${missing[*]}"
if [[ $(id -u) -ne 0 ]]; then
  echo "deps: missing Debian packages: ${missing[*]}" >&2
  echo "deps: run as root:  $line" >&2
  exit 1
fi
echo "deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${missing[@]}" >/dev/null
