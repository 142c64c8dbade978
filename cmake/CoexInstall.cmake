install(TARGETS coex_layer EXPORT coexTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS coex RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES config/default.json DESTINATION ${CMAKE_INSTALL_DATADIR}/coex)
install(DIRECTORY config/examples config/scenarios DESTINATION ${CMAKE_INSTALL_DATADIR}/coex OPTIONAL)
install(EXPORT coexTargets NAMESPACE coex:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/coex)
include(CMakePackageConfigHelpers)
file(WRITE ${PROJECT_BINARY_DIR}/coexConfig.cmake.in
  "@PACKAGE_INIT@\ninclude(\"\${CMAKE_CURRENT_LIST_DIR}/coexTargets.cmake\")\n")
configure_package_config_file(${PROJECT_BINARY_DIR}/coexConfig.cmake.in
  ${PROJECT_BINARY_DIR}/coexConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/coex)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/coexConfigVersion.cmake COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/coexConfig.cmake ${PROJECT_BINARY_DIR}/coexConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/coex)
