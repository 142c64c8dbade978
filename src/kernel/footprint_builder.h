// Builds a kernel's FootprintModel from its body: every load and store the access analysis found is
// translated into an affine byte offset (work-item functions, canonical for-loop counters, scalar
// arguments, unmodified local variables and pointers, constants and macros, all as clang parsed
// them). What does not translate makes that argument's reads Whole or its writes Diff.
#pragma once

#include <memory>

#include "kernel/footprint.h"
#include "kernel/function_facts.h"
#include "kernel/kernel_analysis.h"

namespace coex::kernel {

std::shared_ptr<const FootprintModel> build_footprint_model(ProgramFacts& program, const FunctionFacts& kernel_facts,
                                                            const KernelInfo& kernel);

}  // namespace coex::kernel
