# The two commands: `make demo` and `make test`. Both install missing Debian packages
# (scripts/deps.sh), configure and build.
BUILD      ?= build
# The one clang build of the sanitizers: ASan + UBSan over every test, with the libFuzzer targets
# beside them (SLURM_RCA_FUZZ); `make test` builds only its fuzzers, `make test-asan` the rest.
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
JOBS       ?= $(shell nproc)
FUZZ_SECONDS ?= 300
CMAKE_FLAGS ?=

.PHONY: record all deps configure build packages fuzz-build fuzz test test-releases asan-build tsan-build sanitize-build test-asan test-tsan test-sanitize demo bench bench-live capture clean help
.PHONY: soak test-large

all: build

help:
	@echo "make demo    install deps, build, run the reference agents and baselines over every recorded scenario, print the leaderboard (and write its HTML page), then the allowlist, the corpus and a live lab"
	@echo "make test    install deps, build (gcc, and the fuzzers of the clang sanitizer build), run every test with ctest"
	@echo "make test-releases  as root: the live tests on each Slurm release built by scripts/build-slurm.sh (make test runs mcp_live on both and live on 25.11)"
	@echo "make test-sanitize  (run by .ci/run after make test) test-asan, then test-tsan:"
	@echo "            test-asan: every test again, built by clang-14 with AddressSanitizer + UBSan into $(ASAN_BUILD)"
	@echo "            test-tsan: the concurrent parts (label concurrent), built by clang-14 with ThreadSanitizer into $(TSAN_BUILD)"
	@echo "make sanitize-build  only build them (asan-build, tsan-build)"
	@echo "make fuzz    build every libFuzzer target with clang-14 into $(ASAN_BUILD)/bin and run each for FUZZ_SECONDS=$(FUZZ_SECONDS) s"
	@echo "make fuzz-build  only build them (make test runs each for 25 s and replays its seeds and regressions)"
	@echo "make bench   build and run the guard, MCP, scoring and agent benchmarks (bench/; figures in bench/README.md)"
	@echo "make test-large  as root: the large lab at 1,024 nodes (cluster up --profile large), its queue, history and footprint checked, then torn down (not in make test, which runs it on 256 nodes)"
	@echo "make soak    mcp_load for 600 s: 64 HTTP clients against slurm-mcp on the replay back-end, zero failed requests and bounded memory (not in CI; make test runs it for 60 s)"
	@echo "make bench-live  as root: cluster_bench (bring-up, tear-down and every fault's time to show and heal, about 4 min), then ctld_load_bench (slurmctld RPCs for 1, 10 and 50 agents in 3 configurations: 9 runs of 30 s on one lab)"
	@echo "make capture as root: recapture real Slurm output into fixtures/slurm-22.05"
	@echo "make record  as root: re-record every scenario's evidence bundle into fixtures/ (1-5 min a scenario, measured one by one)"
	@echo "make packages  build the Debian packages slurm-mcp, rca-bench and rca-bench-data into $(BUILD)/packages (README: Deploying)"
	@echo "make clean   remove $(BUILD), $(ASAN_BUILD) and $(TSAN_BUILD)"

deps:
	@scripts/deps.sh

# gcc's build at -O2 with line tables and function names (-g1), not full debug info (-g): a
# backtrace and perf still name file, line and function, and it compiles faster (issue #23: six
# translation units sampled on 2026-12-06 took 21-39% less, mcp/protocol/http_core.cc 94 s at -g
# and 73 s at -g1). For gdb's locals: make GCC_RELWITHDEBINFO="-O2 -g -DNDEBUG" in a fresh $(BUILD).
GCC_RELWITHDEBINFO ?= -O2 -g1 -DNDEBUG
$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$(GCC_RELWITHDEBINFO)" \
	  -DSLURM_RCA_FUZZER=$(CURDIR)/$(ASAN_BUILD)/bin/guard_fuzz $(CMAKE_FLAGS)

configure: $(BUILD)/CMakeCache.txt

# A build configured before the fuzzers moved into $(ASAN_BUILD) names another guard_fuzz: point it here.
build: deps configure
	@grep -qx 'SLURM_RCA_FUZZER:FILEPATH=$(CURDIR)/$(ASAN_BUILD)/bin/guard_fuzz' $(BUILD)/CMakeCache.txt || \
	  cmake -S . -B $(BUILD) -DSLURM_RCA_FUZZER=$(CURDIR)/$(ASAN_BUILD)/bin/guard_fuzz >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

# The sanitizer builds are clang's, at -O1 with line tables only (the reports name file and line,
# which is all a report reads). scripts/sanitize.sh runs their tests.
SANITIZE_FLAGS = -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only"
$(ASAN_BUILD)/CMakeCache.txt: | deps
	CXX=clang++-14 cmake -S . -B $(ASAN_BUILD) $(SANITIZE_FLAGS) \
	  -DSLURM_RCA_SANITIZE=address,undefined -DSLURM_RCA_FUZZ=ON

$(TSAN_BUILD)/CMakeCache.txt: | deps
	CXX=clang++-14 cmake -S . -B $(TSAN_BUILD) $(SANITIZE_FLAGS) -DSLURM_RCA_SANITIZE=thread

# The libFuzzer targets of <module>/fuzz/ (target fuzz_targets of the sanitizer build).
fuzz-build: deps $(ASAN_BUILD)/CMakeCache.txt
	@grep -qx 'SLURM_RCA_FUZZ:BOOL=ON' $(ASAN_BUILD)/CMakeCache.txt || { echo "make: $(ASAN_BUILD)" \
	  "is a sanitizer build from before it held the fuzzers (gcc's): rm -rf $(ASAN_BUILD)" \
	  "$(TSAN_BUILD) build-fuzz, then make again" >&2; exit 2; }
	cmake --build $(ASAN_BUILD) -j $(JOBS) --target fuzz_targets

# Each target fuzzes for FUZZ_SECONDS from its seeds; its seeds and regression inputs are replayed once.
fuzz: fuzz-build
	FUZZ_SECONDS=$(FUZZ_SECONDS) ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS) -L fuzz

# Everything under ASan + UBSan (the fuzzers included); only what the concurrent tests need
# under TSan (target concurrent_tests).
asan-build: fuzz-build
	cmake --build $(ASAN_BUILD) -j $(JOBS)

tsan-build: deps $(TSAN_BUILD)/CMakeCache.txt
	cmake --build $(TSAN_BUILD) -j $(JOBS) --target concurrent_tests

sanitize-build: asan-build tsan-build

# The Debian packages (cmake/install.cmake): slurm-mcp, rca-bench, rca-bench-data.
packages: build
	cd $(BUILD) && cpack -B packages

test: build fuzz-build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) -LE release-extended

# The large lab at full size, as root: 1,024 slurmd, a site's queue and history (scenarios/live/
# README.md, "Large lab"). Not in make test, which runs the same test on 256 nodes.
test-large: build
	SLURM_RCA_LARGE_NODES=1024 SLURM_RCA_LARGE_HISTORY=-1 $(BUILD)/bin/large_live_test

# Every live entry on the Slurm releases built into the cache (scripts/build-slurm.sh), the
# extended ones (mcp_faults_live@RELEASE) included; `make test` runs all but those.
test-releases: build
	ctest --test-dir $(BUILD) --output-on-failure -L 'live-[0-9]'

test-asan: asan-build
	scripts/sanitize.sh asan $(ASAN_BUILD) $(JOBS)

test-tsan: tsan-build
	scripts/sanitize.sh tsan $(TSAN_BUILD) $(JOBS)

test-sanitize: test-asan test-tsan

DEMO_RESULTS ?= $(BUILD)/demo-results

demo: build
	@echo "== The benchmark on the recorded evidence: what an answer that reads nothing scores (rca-bench baselines)"
	@$(BUILD)/bin/rca-bench baselines --top 6
	@echo
	@echo "== The reference agents over every scenario's bundle (rca-bench run --config folk --config graphwalk --config ticketonly)"
	@rm -rf $(DEMO_RESULTS)
	@$(BUILD)/bin/rca-bench run --config folk --config graphwalk --config ticketonly --out $(DEMO_RESULTS)
	@echo
	@echo "== The leaderboard (rca-bench leaderboard $(DEMO_RESULTS)); A-E need a model: see the README"
	@$(BUILD)/bin/rca-bench leaderboard $(DEMO_RESULTS)
	@echo
	@echo "== The runbooks, linted (build/bin/skill-lint --strict skills/)"
	@$(BUILD)/bin/skill-lint --strict skills/
	@echo
	@echo "== The read-only allowlist (build/bin/slurm-guard policy)"
	@$(BUILD)/bin/slurm-guard policy
	@echo
	@echo "== The adversarial corpus through the guard (build/bin/slurm-guard corpus guard/testdata)"
	@$(BUILD)/bin/slurm-guard corpus --clusters rca guard/testdata
	@echo
	@echo "== slurm-mcp serving the recorded demo bundle, read through the C++ MCP client"
	@scripts/demo_mcp.sh $(BUILD)/bin fixtures/demo
	@echo
	@echo "== The scenarios, each measured by its recorded bundle (build/bin/rca-bench validate; list)"
	@$(BUILD)/bin/rca-bench validate && $(BUILD)/bin/rca-bench list
	@echo
	@echo "== What an agent is given of them (build/bin/rca-bench export --view agent), first two"
	@$(BUILD)/bin/rca-bench export --view agent | head -n 9
	@echo
	@echo "== A real Slurm control plane, a frozen accounting database, and what the executor sees"
	@scripts/demo_live.sh $(BUILD)/bin

bench: build
	$(BUILD)/bin/guard_bench
	tests/mcp_peers/setup.sh >/dev/null
	$(BUILD)/bin/mcp_bench
	$(BUILD)/bin/agent_loop_bench
	$(BUILD)/bin/score_bench
	bench/agent_run_bench.sh $(BUILD)/bin 10
	bench/agent_jobs_bench.sh $(BUILD)/bin 1 8 32

soak: build
	$(BUILD)/bin/mcp_load --clients 64 --seconds 600

bench-live: build
	$(BUILD)/bin/cluster_bench
	$(BUILD)/bin/ctld_load_bench

capture: build
	$(BUILD)/bin/rca-bench cluster capture

record: build
	$(BUILD)/bin/rca-bench record --all --trials 3 --jobs 3

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD)
