# The Debian package (cpack -G DEB in a build directory): binaries in /usr/sbin, the SPANK
# plugin in Slurm's plugin directory, unit files in /usr/lib/systemd/system, and the docs and
# commented example configuration in /usr/share/doc/accel-agent. Dependencies on shared
# libraries are found by dpkg-shlibdeps.
install(FILES
  ${CMAKE_CURRENT_LIST_DIR}/examples/accel.conf
  ${CMAKE_CURRENT_LIST_DIR}/examples/vipu.conf
  ${CMAKE_CURRENT_LIST_DIR}/examples/accel-aggregator.conf
  ${CMAKE_CURRENT_LIST_DIR}/examples/plugstack.conf
  ${CMAKE_CURRENT_LIST_DIR}/examples/slurm.conf.snippet
  ${CMAKE_CURRENT_LIST_DIR}/examples/accel-alerts.yml
  DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
install(FILES
  ${PROJECT_SOURCE_DIR}/docs/operator-guide.md
  ${PROJECT_SOURCE_DIR}/docs/user-guide.md
  ${PROJECT_SOURCE_DIR}/docs/config-reference.md
  ${PROJECT_SOURCE_DIR}/docs/accounting-format.md
  DESTINATION ${CMAKE_INSTALL_DOCDIR})

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME accel-agent)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "accel-agent maintainers <accel-agent@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Accelerator node agent for Slurm: IPUs, appliances, GPUs")
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "slurm-wlm-basic-plugins | slurmd")
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
# Only what is installed goes in; the tests and benchmarks are never installed.
include(CPack)
