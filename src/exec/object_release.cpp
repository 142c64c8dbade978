#include "exec/object_release.h"

#include "api/handler_util.h"
#include "exec/device_kernels.h"

namespace coex::exec {

cl_int release_app_buffer(cl_mem mem) {
  cl_int err = api::cl().clReleaseMemObject(mem);
  if (err == CL_SUCCESS)
    api::record_safely("clReleaseMemObject", [&] { api::app_released(api::rt().registries().buffers, mem); });
  return err;
}

cl_int release_app_program(cl_program program) {
  cl_int err = api::cl().clReleaseProgram(program);
  if (err == CL_SUCCESS)  // the record's deleter releases coex's builds once nothing holds it
    api::record_safely("clReleaseProgram", [&] { api::app_released(api::rt().registries().programs, program); });
  return err;
}

}  // namespace coex::exec
