#include "exec/kernel_arguments.h"

#include <algorithm>

#include "exec/chunk_footprint.h"
#include "exec/data_moves.h"
#include "exec/launch_geometry.h"
#include "model/registries.h"

namespace coex::exec {

const char* bind_arguments(Services& services, const kernel::KernelInfo& info,
                           const std::vector<model::KernelArgValue>& args, LaunchJob& job) {
  job.bindings.resize(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const auto& arg = args[i];
    auto& binding = job.bindings[i];
    if (!arg.set) return "invalid_launch";
    if (arg.svm) return "svm";
    if (arg.local) {
      binding.kind = ArgBinding::Kind::Local;
      continue;
    }
    if (!kernel::is_buffer_kind(info.args[i].kind)) {
      binding.kind = ArgBinding::Kind::Value;
      continue;
    }
    cl_mem mem = arg.bytes.size() == sizeof(cl_mem) ? *reinterpret_cast<const cl_mem*>(arg.bytes.data()) : nullptr;
    if (!mem) {
      binding.kind = ArgBinding::Kind::NullBuffer;
      continue;
    }
    auto record = services.registries().buffers.find(mem);
    if (!record) return "untracked_buffer";
    auto root = record->root_or_self(record);
    binding.kind = ArgBinding::Kind::Buffer;
    binding.app_mem = mem;
    binding.origin = record->origin;
    binding.size = record->size;
    auto it = std::find_if(job.roots.begin(), job.roots.end(), [&](const RootUse& u) { return u.root == root; });
    if (it == job.roots.end()) {
      job.roots.push_back(RootUse{root, {}, {}, 0});
      it = job.roots.end() - 1;
    }
    binding.root = int(it - job.roots.begin());
    coherence::ByteRange range{record->origin, record->origin + record->size};
    binding.written = info.args[i].written;
    it->used.add(range);
    if (binding.written) it->written.add(range);
  }
  return nullptr;
}

uint64_t bytes_read(const kernel::KernelInfo& info, const LaunchJob& job) {
  std::vector<coherence::IntervalSet> read(job.roots.size());
  for (size_t i = 0; i < job.bindings.size(); ++i) {
    const ArgBinding& b = job.bindings[i];
    if (b.kind == ArgBinding::Kind::Buffer && info.args[i].read)
      read[size_t(b.root)].add(coherence::ByteRange{b.origin, b.origin + b.size});
  }
  uint64_t bytes = 0;
  for (const auto& set : read) bytes += set.total();
  return bytes;
}

uint64_t footprint_bytes_read(const LaunchJob& job, uint64_t bound) {
  if (!job.footprint || bound == 0) return bound;
  // Evaluated once, not kept: asked where the bound ranges would keep a launch on home alone.
  const ChunkFootprint all = chunk_footprint(job, 0, job.geometry.groups_along_split(), false);
  uint64_t bytes = 0;
  for (const RootFootprint& root : all.roots) bytes += root.reads.total();
  return std::min(bound, bytes);
}

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
