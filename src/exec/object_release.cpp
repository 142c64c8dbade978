#include "exec/object_release.h"

#include "api/handler_util.h"
#include "exec/device_kernels.h"

namespace coex::exec {

cl_int release_app_buffer(cl_mem mem) {
  using api::cl;
  bool last = api::is_last_reference(cl().clGetMemObjectInfo, mem, CL_MEM_REFERENCE_COUNT);
  cl_int err = cl().clReleaseMemObject(mem);
  if (err != CL_SUCCESS || !last) return err;
  api::record_safely("clReleaseMemObject", [&] {
    auto record = api::rt().registries().buffers.erase(mem);
    if (!record || record->is_sub_buffer()) return;
    std::lock_guard lock(record->state->mutex());
    for (auto& [device, shadow] : record->state->shadows()) {
      for (auto& [range, sub] : shadow.sub_buffers) cl().clReleaseMemObject(sub);
      if (shadow.mem) cl().clReleaseMemObject(shadow.mem);
    }
    record->state->shadows().clear();
  });
  return err;
}

cl_int release_app_program(cl_program program) {
  using api::cl;
  bool last = api::is_last_reference(cl().clGetProgramInfo, program, CL_PROGRAM_REFERENCE_COUNT);
  cl_int err = cl().clReleaseProgram(program);
  if (err != CL_SUCCESS || !last) return err;
  api::record_safely("clReleaseProgram", [&] {
    api::rt().registries().programs.erase(program);  // its deleter releases coex's builds
  });
  return err;
}

}  // namespace coex::exec
