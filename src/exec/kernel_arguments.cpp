#include "exec/kernel_arguments.h"

#include "exec/data_moves.h"
#include "exec/launch_geometry.h"

namespace coex::exec {

cl_int set_arguments(LaunchJob& job, cl_kernel kernel, int device) {
  for (cl_uint i = 0; i < job.bindings.size(); ++i) {
    const auto& arg = job.args[i];
    const auto& binding = job.bindings[i];
    cl_int err = CL_SUCCESS;
    switch (binding.kind) {
      case ArgBinding::Kind::Value:
        err = job.services->next().clSetKernelArg(kernel, i, arg.size, arg.bytes.data());
        break;
      case ArgBinding::Kind::Local:
        err = job.services->next().clSetKernelArg(kernel, i, arg.size, nullptr);
        break;
      case ArgBinding::Kind::NullBuffer: {
        cl_mem none = nullptr;
        err = job.services->next().clSetKernelArg(kernel, i, sizeof(none), &none);
        break;
      }
      case ArgBinding::Kind::Buffer: {
        cl_mem mem = device_mem(job, binding, device);
        err = mem ? job.services->next().clSetKernelArg(kernel, i, sizeof(mem), &mem) : CL_INVALID_MEM_OBJECT;
        break;
      }
    }
    if (err != CL_SUCCESS) return err;
  }
  return CL_SUCCESS;
}

cl_int set_rewrite_arguments(LaunchJob& job, cl_kernel kernel, uint64_t group_base) {
  const LaunchGeometry& g = job.geometry;
  cl_uint first = cl_uint(job.bindings.size());
  cl_uint split_dim = g.split_dim();
  cl_ulong values[4] = {group_base, g.groups_along_split(), g.global[split_dim], g.offset[split_dim]};
  cl_int err = job.services->next().clSetKernelArg(kernel, first, sizeof(split_dim), &split_dim);
  for (cl_uint i = 0; i < 4 && err == CL_SUCCESS; ++i)
    err = job.services->next().clSetKernelArg(kernel, first + 1 + i, sizeof(cl_ulong), &values[i]);
  return err;
}

}  // namespace coex::exec
