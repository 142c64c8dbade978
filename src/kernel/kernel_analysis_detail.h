// Entry points of the analysis below the public API, for the tests: the analysis with a given way
// of declaring the OpenCL builtins (the fallback one runs everywhere, also where clang's headers
// exist, so that the tests cover the GPU machine's case on any machine).
#pragma once

#include <string>

#include "kernel/clang_session.h"
#include "kernel/kernel_analysis.h"

namespace coex::kernel {

ProgramInfo analyze_program_with(const std::string& source, const std::string& build_options, BuiltinsMode mode);

}  // namespace coex::kernel
