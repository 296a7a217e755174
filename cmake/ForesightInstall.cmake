# install + export so that an out-of-tree project can
#   find_package(foresight) and link foresight::foresight.
include(CMakePackageConfigHelpers)
install(TARGETS foresight EXPORT foresightTargets)
install(EXPORT foresightTargets NAMESPACE foresight::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/foresight)
configure_package_config_file(cmake/foresightConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/foresightConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/foresight)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/foresightConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/foresightConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/foresightConfigVersion.cmake
  ${CMAKE_CURRENT_SOURCE_DIR}/cmake/ForesightDnnl.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/foresight)
