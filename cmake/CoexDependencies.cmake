find_package(Threads REQUIRED)
find_package(spdlog REQUIRED)
find_package(fmt REQUIRED)
find_package(nlohmann_json 3.2 REQUIRED)

# Logging, header-only: spdlog and fmt compiled into coex rather than linked as libspdlog.so and
# libfmt.so, so that libcoex.so imports nothing C++ from other shared objects (see
# COEX_PRIVATE_RUNTIME in the top CMakeLists.txt for why that matters).
add_library(coex_logging INTERFACE)
get_target_property(_spdlog_includes spdlog::spdlog_header_only INTERFACE_INCLUDE_DIRECTORIES)
get_target_property(_fmt_includes fmt::fmt-header-only INTERFACE_INCLUDE_DIRECTORIES)
target_include_directories(coex_logging SYSTEM INTERFACE ${_spdlog_includes} ${_fmt_includes})
target_compile_definitions(coex_logging INTERFACE SPDLOG_FMT_EXTERNAL FMT_HEADER_ONLY=1)

# OpenCL headers only: see the comment on coex_core.
find_path(COEX_OPENCL_INCLUDE_DIR CL/cl_icd.h REQUIRED)
add_library(coex_opencl_headers INTERFACE)
target_include_directories(coex_opencl_headers INTERFACE ${COEX_OPENCL_INCLUDE_DIR})

# libclang (kernel analysis). Debian: libclang-dev. The device machine has libclang-16.so.1
# without headers: point COEX_CLANG_INCLUDE_DIR at carried clang-c headers there.
file(GLOB _llvm_dirs /usr/lib/llvm-*)
list(SORT _llvm_dirs ORDER DESCENDING)
set(_clang_hints)
foreach(d ${_llvm_dirs})
  list(APPEND _clang_hints ${d}/lib ${d}/include)
endforeach()
find_path(COEX_CLANG_INCLUDE_DIR clang-c/Index.h HINTS ${_clang_hints} PATH_SUFFIXES include REQUIRED)
add_library(coex_libclang INTERFACE)
target_include_directories(coex_libclang INTERFACE ${COEX_CLANG_INCLUDE_DIR})
# Headers only: src/kernel/libclang_api.cpp dlopens libclang with RTLD_DEEPBIND. Linked, its LLVM
# would bind PoCL's own LLVM symbols and crash PoCL's first kernel build (seen on Debian 12:
# libclang 14, PoCL 3.1 on LLVM 15).
message(STATUS "coex: clang-c headers ${COEX_CLANG_INCLUDE_DIR} (libclang itself is loaded at run time)")

# config/default.json is embedded, so that coex needs no file to run.
set(COEX_EMBEDDED_CONFIG_CPP ${PROJECT_BINARY_DIR}/generated/embedded_default_config.cpp)
file(READ ${PROJECT_SOURCE_DIR}/config/default.json _default_json)
configure_file(${PROJECT_SOURCE_DIR}/cmake/embedded_default_config.cpp.in ${COEX_EMBEDDED_CONFIG_CPP} @ONLY)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/config/default.json)
