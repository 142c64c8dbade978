// Which build of coex's code is running: the GNU build ID the linker writes into every ELF file it
// makes (-Wl,--build-id, set for all of coex's targets in CMakeLists.txt). Kept analyses are keyed by
// it: the library's and that of the `coex` program whose analysis process makes them
// (exec/kept_analyses.h), which tells its own in its hello (kernel/analysis_process.h).
#pragma once

#include <string>

namespace coex::kernel {

// The GNU build ID of the ELF file that holds this code (libcoex.so, the `coex` program, or the
// program a test links it into), in hexadecimal; "" where it has none.
std::string own_build_id();

// The GNU build ID of the ELF file at `path` (read from its program headers' notes, not loaded); ""
// where it cannot be read or has none.
std::string file_build_id(const std::string& path);

}  // namespace coex::kernel
