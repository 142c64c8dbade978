# `cmake --install`: libcoex.so, the launcher, the config files, the licence and a CMake package
# whose targets are coex::layer (libcoex.so) and coex::coex (the launcher).
option(COEX_INSTALL_LAYER_MANIFEST
  "Install coex.lay, the file by which an OpenCL ICD loader finds a layer in a directory it scans" OFF)
# Not /etc/OpenCL/layers: a layer registered there is loaded into every OpenCL program of the machine.
# In the default place it takes effect only where OPENCL_LAYER_PATH names the directory; pointing this
# at /etc/OpenCL/layers is the way to enable coex for every program, deliberately.
set(COEX_LAYER_MANIFEST_DIR "${CMAKE_INSTALL_DATADIR}/coex/layers" CACHE STRING
  "Where COEX_INSTALL_LAYER_MANIFEST installs coex.lay (relative: under the install prefix)")

install(TARGETS coex_layer EXPORT coexTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS coex EXPORT coexTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES config/default.json DESTINATION ${CMAKE_INSTALL_DATADIR}/coex)
install(DIRECTORY config/examples config/scenarios DESTINATION ${CMAKE_INSTALL_DATADIR}/coex OPTIONAL)
install(FILES LICENSE README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(EXPORT coexTargets NAMESPACE coex:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/coex)
include(CMakePackageConfigHelpers)
file(WRITE ${PROJECT_BINARY_DIR}/coexConfig.cmake.in
  "@PACKAGE_INIT@\ninclude(\"\${CMAKE_CURRENT_LIST_DIR}/coexTargets.cmake\")\n")
configure_package_config_file(${PROJECT_BINARY_DIR}/coexConfig.cmake.in
  ${PROJECT_BINARY_DIR}/coexConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/coex)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/coexConfigVersion.cmake COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/coexConfig.cmake ${PROJECT_BINARY_DIR}/coexConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/coex)

if(COEX_INSTALL_LAYER_MANIFEST)
  # The Khronos loader (OpenCL-ICD-Loader, built with layer support) and ocl-icd from 2.3.2 read each
  # *.lay file of /etc/OpenCL/layers, or of the directory OPENCL_LAYER_PATH names instead, as one
  # line: the path of a layer library to load. The path is the installed library's, so the file is written at install
  # time, when the prefix is known (`cmake --install --prefix` may change it after configuring).
  install(CODE "
    set(_dir \"${COEX_LAYER_MANIFEST_DIR}\")
    if(NOT IS_ABSOLUTE \"\${_dir}\")
      set(_dir \"\${CMAKE_INSTALL_PREFIX}/\${_dir}\")
    endif()
    set(_lib \"${CMAKE_INSTALL_LIBDIR}\")
    if(NOT IS_ABSOLUTE \"\${_lib}\")
      set(_lib \"\${CMAKE_INSTALL_PREFIX}/\${_lib}\")
    endif()
    file(WRITE \"\$ENV{DESTDIR}\${_dir}/coex.lay\" \"\${_lib}/libcoex.so\\n\")
    message(STATUS \"Installing: \$ENV{DESTDIR}\${_dir}/coex.lay (a loader that reads layer directories loads coex when OPENCL_LAYER_PATH=\${_dir})\")
  ")
endif()
