// Which OpenCL loader an app will load, and whether that loader reads
// OPENCL_LAYERS. `coex run` asks before it chooses how to load coex: a loader
// without layer support (the Khronos loader built without layers, or the one
// CUDA ships in /usr/local/cuda) ignores OPENCL_LAYERS silently, and the app
// would run bare. Then coex is loaded by LD_PRELOAD instead.
#pragma once

#include <optional>
#include <string>

namespace coex::devices {

// The path ldd (or `ld.so --list`) printed for libOpenCL.so.1 in `ldd_output`, or "" when the app
// does not link it.
std::string opencl_loader_in_ldd_output(const std::string& ldd_output);

// Whether the file holds `text` (a loader with layer support names its
// variable, OPENCL_LAYERS). std::nullopt when the file cannot be read.
std::optional<bool> file_contains(const std::string& path, const std::string& text);

// The dynamic linker an ELF program names (PT_INTERP); "" for another file.
std::string elf_interpreter(const std::string& path);

// The loader `app` (a path or a name looked up in PATH) links, as its dynamic
// linker lists it (`ld.so --list`, what ldd prints); "" when unknown (not an
// ELF program with a dynamic linker, or libOpenCL loaded later by dlopen).
std::string opencl_loader_of(const std::string& app);

}  // namespace coex::devices
