// Declarations that stand in for clang's opencl-c-base.h where libclang ships without its resource
// directory (the GPU machine has libclang-16.so.1 and nothing else). The builtin functions
// themselves come from clang's -fdeclare-opencl-builtins; what that table looks up by name (size_t,
// cl_mem_fence_flags, memory_order, memory_scope), the OpenCL scalar and vector type names, the
// as_<type>() reinterpretations and the constants of the OpenCL C specification (sections 6.1,
// 6.13 and 6.15) are declared here. Written for coex from the specification's names; only what the
// parser needs: the values of the constants do not matter to the analysis.
#pragma once

namespace coex::kernel {

const char* opencl_fallback_prelude();

}  // namespace coex::kernel
