# Installs the module libraries, their headers and haloConfig.cmake so that other projects can
# find_package(halo) and link halo::halo.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

get_property(halo_module_targets GLOBAL PROPERTY HALO_MODULE_TARGETS)
install(TARGETS ${halo_module_targets} halo EXPORT haloTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/halo)
install(EXPORT haloTargets NAMESPACE halo:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/halo)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/haloConfig.cmake.in
  ${PROJECT_BINARY_DIR}/haloConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/halo)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/haloConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/haloConfig.cmake ${PROJECT_BINARY_DIR}/haloConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/FindMETIS.cmake ${PROJECT_SOURCE_DIR}/cmake/FindNCCL.cmake
              ${PROJECT_SOURCE_DIR}/cmake/FindISAL.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/halo)
