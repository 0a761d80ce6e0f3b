# slurm_rca_fuzz_target(NAME SOURCES src... LIBS lib... [SEEDS dir] [DICT file] [MAX_LEN n])
#
# One libFuzzer target, declared once in its module's fuzz/ folder and read by both builds. Each
# build that has the binary gets two tests (label `fuzz`): NAME_bounded fuzzes from the seeds,
# NAME_regressions runs every kept regression input and every seed once. Both fail on a crash, a
# leak, a timeout or an invariant the target aborts on.
#   - the sanitizer build (SLURM_RCA_FUZZ, clang, SLURM_RCA_SANITIZE=address,undefined: the
#     build of `make test-asan`, which also compiles every test) compiles it with
#     -fsanitize=fuzzer; target `fuzz_targets` builds the fuzzers alone (`make fuzz-build`); its
#     NAME_bounded runs for $FUZZ_SECONDS (`make fuzz` sets it; 300 when unset);
#   - the main build, when SLURM_RCA_FUZZER names guard_fuzz of that clang build, runs the binary
#     found beside it, NAME_bounded for SLURM_RCA_FUZZ_BOUNDED_SECONDS.
# Defaults: seeds in fuzz/seeds/NAME, regressions in fuzz/regressions/NAME, dictionary
# fuzz/NAME.dict when it exists, inputs of at most 4096 bytes.
# In the clang build every library is compiled with libFuzzer's coverage instrumentation, so that
# the fuzzers see the branches of the parsers they drive, not only those of the target's file. The
# tests of that build link the same libraries without libFuzzer: the sanitizer runtime defines the
# coverage callbacks (as no-ops).
if(SLURM_RCA_FUZZ)
  add_compile_options(-fsanitize=fuzzer-no-link)
  add_custom_target(fuzz_targets)
endif()

function(slurm_rca_fuzz_target name)
  cmake_parse_arguments(F "" "SEEDS;DICT;MAX_LEN" "SOURCES;LIBS" ${ARGN})
  if(NOT F_SEEDS)
    set(F_SEEDS ${CMAKE_CURRENT_SOURCE_DIR}/seeds/${name})
  endif()
  if(NOT F_DICT AND EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${name}.dict)
    set(F_DICT ${CMAKE_CURRENT_SOURCE_DIR}/${name}.dict)
  endif()
  if(NOT F_MAX_LEN)
    set(F_MAX_LEN 4096)
  endif()
  set(regressions ${CMAKE_CURRENT_SOURCE_DIR}/regressions/${name})

  if(SLURM_RCA_FUZZ)
    add_executable(${name} ${F_SOURCES})
    add_dependencies(fuzz_targets ${name})
    target_link_libraries(${name} PRIVATE ${F_LIBS})
    target_compile_options(${name} PRIVATE -fsanitize=fuzzer)
    target_link_options(${name} PRIVATE -fsanitize=fuzzer)
    target_compile_definitions(${name} PRIVATE SLURM_RCA_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
    # `make fuzz`: as long as $FUZZ_SECONDS says (run_fuzz.sh reads it for "-").
    set(fuzzer $<TARGET_FILE:${name}>)
    set(seconds -)
    set(timeout 1000000)
  elseif(SLURM_RCA_FUZZER)
    get_filename_component(bin_dir ${SLURM_RCA_FUZZER} DIRECTORY)
    set(fuzzer ${bin_dir}/${name})
    set(seconds ${SLURM_RCA_FUZZ_BOUNDED_SECONDS})
    math(EXPR timeout "${SLURM_RCA_FUZZ_BOUNDED_SECONDS} + 120")
  else()
    return()
  endif()
  set(run ${PROJECT_SOURCE_DIR}/tests/run_fuzz.sh)
  add_test(NAME ${name}_bounded
           COMMAND bash ${run} run ${fuzzer} ${seconds} ${F_SEEDS} ${F_MAX_LEN} ${F_DICT})
  set_tests_properties(${name}_bounded PROPERTIES LABELS fuzz TIMEOUT ${timeout})
  add_test(NAME ${name}_regressions COMMAND bash ${run} replay ${fuzzer} ${regressions} ${F_SEEDS})
  set_tests_properties(${name}_regressions PROPERTIES LABELS fuzz TIMEOUT 300)
endfunction()
