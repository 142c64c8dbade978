#pragma once

#include <string>

#include "kernel/kernel_analysis.h"
#include "model/records.h"

namespace coex::exec {

// The analysis of `kernel_name` in `program`, computed once per program (libclang parse), with the
// rewritten source prepared when some kernel needs it. Null when the kernel is not in the analysis.
// Runs that analysis now (clBuildProgram's prebuild). True when some kernel of the program may be split.
bool analyse_program(model::ProgramRecord& program);

const kernel::KernelInfo* analysed_kernel(model::ProgramRecord& program, const std::string& kernel_name);

}  // namespace coex::exec
