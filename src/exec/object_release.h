#pragma once

#include <CL/cl.h>

namespace coex::exec {

// The app's clReleaseMemObject / clReleaseProgram: pass the release on; at the app's last reference
// the record leaves its registry, and what coex made for the object on other devices (shadow
// buffers, rebuilt programs and their kernels) goes with the record's last holder.
cl_int release_app_buffer(cl_mem mem);
cl_int release_app_program(cl_program program);

}  // namespace coex::exec
