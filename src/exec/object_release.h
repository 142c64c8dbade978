#pragma once

#include <CL/cl.h>

namespace coex::exec {

// The app's clReleaseMemObject / clReleaseProgram (and coex's own release of buffers a job
// retained): pass the release on; when it destroys the object, drop its record and what coex made
// for it on other devices (shadow buffers, rebuilt programs and their kernels).
cl_int release_app_buffer(cl_mem mem);
cl_int release_app_program(cl_program program);

}  // namespace coex::exec
