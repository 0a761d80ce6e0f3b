# `cmake --install` and CPack: Debian packages (issue #22).
#   slurm-mcp       the server, the guard, skill-lint, the runbooks (skills/), the systemd unit and
#                   its environment file, man pages
#   rca-bench       the benchmark binary; depends on slurm-mcp (it starts the slurm-mcp beside it)
#                   and on rca-bench-data
#   rca-bench-data  (Architecture: all) the scenarios, the recorded bundles, the causal graph, the
#                   agent configurations and the lab's templates. A package of its own because
#                   CPack runs `file` on every file of a package it computes Depends for: 16,500
#                   data files took over ten minutes; without them it takes seconds.
# Data goes to DATADIR/slurm-rca with the repository's layout; an installed binary finds it beside
# itself (base::InstalledDataDir), so a package unpacked under any root works from there.
# Depends are found by dpkg-shlibdeps from what the binaries link, not written by hand.
include(GNUInstallDirs)

# `cmake --install` and cpack install what is built and do not build first: `make packages`
# builds before it packs, and the package test (which runs cpack beside the other tests) must not
# relink the binaries they are running (a new git revision regenerates base_build_info).
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY TRUE)

set(SLURM_RCA_DATA ${CMAKE_INSTALL_DATADIR}/slurm-rca)

install(TARGETS slurm-mcp slurm-guard skill-lint RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        COMPONENT server)
install(TARGETS rca-bench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT bench)

# The runbooks: each directory with a SKILL.md, and the claims skill-lint checks them against.
file(GLOB skill_files LIST_DIRECTORIES false ${PROJECT_SOURCE_DIR}/skills/*/SKILL.md)
foreach(skill_file IN LISTS skill_files)
  get_filename_component(skill_dir ${skill_file} DIRECTORY)
  install(DIRECTORY ${skill_dir} DESTINATION ${SLURM_RCA_DATA}/skills COMPONENT server)
endforeach()
install(FILES ${PROJECT_SOURCE_DIR}/skills/README.md ${PROJECT_SOURCE_DIR}/skills/claims.yaml
        DESTINATION ${SLURM_RCA_DATA}/skills COMPONENT server)

# The service: a hardened unit for `serve --http` and the file it reads its settings from. The unit
# names /usr/bin/slurm-mcp, the packages' path; an install under another prefix edits ExecStart.
install(FILES ${PROJECT_SOURCE_DIR}/packaging/slurm-mcp.service
        DESTINATION lib/systemd/system COMPONENT server)
install(FILES ${PROJECT_SOURCE_DIR}/packaging/slurm-mcp.default
        DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/slurm-mcp/examples RENAME slurm-mcp COMPONENT server)
# A reverse proxy that terminates TLS in front of it (tests/nginx_proxy_test.sh runs this file).
install(FILES ${PROJECT_SOURCE_DIR}/packaging/nginx/slurm-mcp.conf
        DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/slurm-mcp/examples RENAME nginx-slurm-mcp.conf
        COMPONENT server)

# The benchmark's data, without the sources, tests and fuzz seeds that live beside it.
foreach(dir scenarios fixtures)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/ DESTINATION ${SLURM_RCA_DATA}/${dir} COMPONENT data
          PATTERN CMakeLists.txt EXCLUDE PATTERN "*.cc" EXCLUDE PATTERN "*.h" EXCLUDE
          PATTERN "*_test.sh" EXCLUDE PATTERN fuzz EXCLUDE PATTERN testdata EXCLUDE)
endforeach()
install(FILES ${PROJECT_SOURCE_DIR}/agents/graph/graph.yaml DESTINATION ${SLURM_RCA_DATA}/agents/graph
        COMPONENT data)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/agents/configs/ DESTINATION ${SLURM_RCA_DATA}/agents/configs
        COMPONENT data)

# Man pages from each binary's --help and --version (help2man). Without help2man the build goes on
# and the packages have none; scripts/deps.sh installs it and tests/package_test.sh checks for them.
find_program(HELP2MAN help2man)
if(HELP2MAN)
  set(man_pages "")
  foreach(spec
          "slurm-mcp|server|read-only MCP server for Slurm state and node telemetry"
          "slurm-guard|server|check a Slurm command line against slurm-mcp's read-only allowlist"
          "skill-lint|server|validate operator runbooks written as Agent Skills"
          "rca-bench|bench|incident-diagnosis benchmark for the Slurm control plane")
    string(REPLACE "|" ";" spec "${spec}")
    list(GET spec 0 name)
    list(GET spec 1 component)
    list(GET spec 2 summary)
    set(page ${CMAKE_BINARY_DIR}/man/${name}.1.gz)
    add_custom_command(OUTPUT ${page}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man
      COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/man_page.sh ${HELP2MAN} $<TARGET_FILE:${name}>
              ${summary} ${page}
      DEPENDS ${name} ${PROJECT_SOURCE_DIR}/scripts/man_page.sh VERBATIM)
    list(APPEND man_pages ${page})
    install(FILES ${page} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT ${component})
  endforeach()
  add_custom_target(man_pages ALL DEPENDS ${man_pages})
else()
  message(STATUS "help2man not found: no man pages (scripts/deps.sh installs it)")
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME slurm-rca)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "slurm-rca developers <slurm-rca@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "read-only Slurm eyes for LLM agents, and a benchmark")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL server bench data)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_SERVER_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_BENCH_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
# zstd: dpkg has read it since 1.21.18 (Debian 12), and it packs the 135 MB of recorded bundles
# faster than xz on two cores.
set(CPACK_DEBIAN_COMPRESSION_TYPE zstd)
set(CPACK_DEBIAN_SERVER_PACKAGE_NAME slurm-mcp)
set(CPACK_DEBIAN_SERVER_DESCRIPTION
    "read-only MCP server for Slurm clusters\n slurm-mcp gives LLM agents read-only access to Slurm state and node telemetry through three MCP tools (stdio and Streamable HTTP). Read-only is enforced in code by slurm-guard's argv allowlist. Includes skill-lint, the operator runbooks and a hardened systemd unit.")
set(CPACK_DEBIAN_SERVER_PACKAGE_RECOMMENDS "slurm-client, munge")
set(CPACK_DEBIAN_BENCH_PACKAGE_NAME rca-bench)
set(CPACK_DEBIAN_BENCH_DESCRIPTION
    "incident-diagnosis benchmark for the Slurm control plane\n rca-bench injects faults into a real Slurm control plane, records evidence bundles, replays them to agents through slurm-mcp and grades their answers against degenerate baselines. Includes the scenarios, the recorded bundles and the agent configurations.")
set(CPACK_DEBIAN_BENCH_PACKAGE_DEPENDS
    "slurm-mcp (= ${PROJECT_VERSION}), rca-bench-data (= ${PROJECT_VERSION})")
set(CPACK_DEBIAN_BENCH_PACKAGE_SUGGESTS
    "slurmctld, slurmd, slurmdbd, munge, mariadb-server, nftables, e2fsprogs")
set(CPACK_DEBIAN_DATA_PACKAGE_NAME rca-bench-data)
set(CPACK_DEBIAN_DATA_PACKAGE_ARCHITECTURE all)
set(CPACK_DEBIAN_DATA_DESCRIPTION
    "data of rca-bench: scenarios, recorded evidence bundles, agent configurations\n The scenarios of the incident-diagnosis benchmark, the evidence bundles recorded from a real Slurm control plane (Slurm 22.05 and 25.11), the causal graph, the agent configurations and the live lab's configuration templates.")
include(CPack)
