#include "exec/data_moves.h"

#include <spdlog/spdlog.h>

#include <cstring>

#include "api/runtime.h"
#include "devices/device_set.h"
#include "exec/byte_diff.h"

namespace coex::exec {
namespace {

const cl_icd_dispatch& cl() { return api::Runtime::get().next(); }

// Transfers closer than this are joined into one: a transfer costs far more than 4 KiB of bandwidth.
constexpr uint64_t kBridgeGap = 4096;

}  // namespace

bool ensure_shadows(LaunchJob& job, int device) {
  devices::DeviceSet& devices = api::Runtime::get().devices();
  cl_context context = devices.shadow_context(device);
  if (!context) return false;
  uint64_t align = std::max<uint64_t>(1, devices.at(device).base_address_align_bits / 8);
  for (auto& use : job.roots) {
    auto& state = *use.root->state;
    std::lock_guard lock(state.mutex());
    auto& shadow = state.shadow(device);
    if (shadow.mem) continue;
    cl_int err = CL_SUCCESS;
    shadow.mem = cl().clCreateBuffer(context, CL_MEM_READ_WRITE, use.root->size, nullptr, &err);
    if (!shadow.mem) {
      spdlog::info("device {}: no room for a {}-byte shadow buffer (error {}): it sits this launch out", device,
                   use.root->size, err);
      state.shadows().erase(device);
      return false;
    }
  }
  for (const auto& binding : job.bindings) {
    if (binding.kind != ArgBinding::Kind::Buffer) continue;
    const auto& root = job.roots[size_t(binding.root)].root;
    if (binding.origin == 0 && binding.size == root->size) continue;
    if (binding.origin % align != 0) {
      spdlog::info("device {}: sub-buffer origin {} is not aligned to {} bytes there: it sits this launch out",
                   device, binding.origin, align);
      return false;
    }
    std::lock_guard lock(root->state->mutex());
    auto& shadow = root->state->shadow(device);
    auto& sub = shadow.sub_buffers[{binding.origin, binding.size}];
    if (sub) continue;
    cl_buffer_region region{binding.origin, binding.size};
    cl_int err = CL_SUCCESS;
    sub = cl().clCreateSubBuffer(shadow.mem, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    if (!sub) {
      shadow.sub_buffers.erase({binding.origin, binding.size});
      return false;
    }
  }
  return true;
}

cl_mem device_root_mem(LaunchJob& job, size_t root, int device) {
  const auto& record = job.roots[root].root;
  if (device == job.home) return record->handle;
  std::lock_guard lock(record->state->mutex());
  auto* shadow = record->state->find_shadow(device);
  return shadow ? shadow->mem : nullptr;
}

cl_mem device_mem(LaunchJob& job, const ArgBinding& binding, int device) {
  if (device == job.home) return binding.app_mem;
  const auto& root = job.roots[size_t(binding.root)].root;
  if (binding.origin == 0 && binding.size == root->size) return device_root_mem(job, size_t(binding.root), device);
  std::lock_guard lock(root->state->mutex());
  auto* shadow = root->state->find_shadow(device);
  if (!shadow) return nullptr;
  auto it = shadow->sub_buffers.find({binding.origin, binding.size});
  return it == shadow->sub_buffers.end() ? nullptr : it->second;
}

uint64_t refresh_host_copies(LaunchJob& job, cl_command_queue home_queue) {
  uint64_t moved = 0;
  for (auto& use : job.roots) {
    auto& state = *use.root->state;
    std::lock_guard lock(state.mutex());
    uint8_t* host = state.host_copy().data();
    coherence::IntervalSet missing;
    for (const auto& r : use.used) missing.add(state.host_valid().missing(r));
    for (const auto& r : missing) {
      cl_int err = cl().clEnqueueReadBuffer(home_queue, use.root->handle, CL_FALSE, r.begin, r.size(),
                                            host + r.begin, 0, nullptr, nullptr);
      if (err != CL_SUCCESS) throw std::runtime_error("reading the home buffer failed: error " + std::to_string(err));
      moved += r.size();
    }
    if (!missing.empty()) {
      cl_int err = cl().clFinish(home_queue);
      if (err != CL_SUCCESS) throw std::runtime_error("reading the home buffer failed: error " + std::to_string(err));
      state.host_valid().add(missing);
    }
  }
  return moved;
}

uint64_t upload_missing(LaunchJob& job, int device, cl_command_queue queue, cl_int* error) {
  uint64_t moved = 0;
  *error = CL_SUCCESS;
  if (device == job.home) return 0;
  for (auto& use : job.roots) {
    auto& state = *use.root->state;
    std::lock_guard lock(state.mutex());
    auto* shadow = state.find_shadow(device);
    if (!shadow) {
      *error = CL_MEM_OBJECT_ALLOCATION_FAILURE;
      return moved;
    }
    coherence::IntervalSet missing;
    for (const auto& r : use.used) missing.add(shadow->valid.missing(r));
    const uint8_t* host = state.host_copy().data();
    for (const auto& r : bridge_gaps(missing, kBridgeGap)) {
      // Blocking: the host copy may change once the lock is released (an app write elsewhere).
      *error = cl().clEnqueueWriteBuffer(queue, shadow->mem, CL_TRUE, r.begin, r.size(), host + r.begin, 0, nullptr,
                                         nullptr);
      if (*error != CL_SUCCESS) return moved;
      moved += r.size();
      shadow->valid.add(r);
    }
  }
  return moved;
}

uint64_t read_back_changes(LaunchJob& job, int device, cl_command_queue queue, const StagingFn& staging_for,
                           DeviceChanges& out, cl_int* error) {
  uint64_t moved = 0;
  *error = CL_SUCCESS;
  out.changed.assign(job.roots.size(), {});
  out.staging.assign(job.roots.size(), nullptr);
  for (size_t k = 0; k < job.roots.size(); ++k) {
    const RootUse& use = job.roots[k];
    if (use.written.empty()) continue;
    uint8_t* staging = staging_for(k, use.root->size);
    out.staging[k] = staging;
    cl_mem mem = device_root_mem(job, k, device);
    for (const auto& r : use.written) {
      *error = cl().clEnqueueReadBuffer(queue, mem, CL_FALSE, r.begin, r.size(), staging + r.begin, 0, nullptr,
                                        nullptr);
      if (*error != CL_SUCCESS) return moved;
      moved += r.size();
    }
    *error = cl().clFinish(queue);
    if (*error != CL_SUCCESS) return moved;
    // The host copy is not written until every device is done (merge_changes): a stable twin.
    const uint8_t* twin = use.root->state->host_copy().data();
    for (const auto& r : use.written)
      out.changed[k].add(changed_bytes(twin + r.begin, staging + r.begin, r.size(), r.begin));
  }
  return moved;
}

uint64_t merge_changes(LaunchJob& job, const std::map<int, DeviceChanges>& changes, cl_command_queue home_queue,
                       cl_int* error) {
  uint64_t moved = 0;
  *error = CL_SUCCESS;
  for (size_t k = 0; k < job.roots.size(); ++k) {
    RootUse& use = job.roots[k];
    auto& state = *use.root->state;
    std::lock_guard lock(state.mutex());
    uint8_t* host = state.host_copy().data();
    std::map<int, coherence::IntervalSet> by_device;
    coherence::IntervalSet home_lacks;
    for (const auto& [device, change] : changes) {
      if (k >= change.changed.size() || change.changed[k].empty()) continue;
      for (const auto& r : change.changed[k]) std::memcpy(host + r.begin, change.staging[k] + r.begin, r.size());
      by_device[device] = change.changed[k];
      if (device != job.home) home_lacks.add(change.changed[k]);
    }
    // The host copy now holds every device's writes, so bridging gaps sends current bytes only.
    for (const auto& r : bridge_gaps(home_lacks, kBridgeGap)) {
      *error = cl().clEnqueueWriteBuffer(home_queue, use.root->handle, CL_FALSE, r.begin, r.size(), host + r.begin,
                                         0, nullptr, nullptr);
      if (*error != CL_SUCCESS) return moved;
      moved += r.size();
    }
    if (!home_lacks.empty() && (*error = cl().clFinish(home_queue)) != CL_SUCCESS) return moved;
    state.split_ended(use.generation_at_enqueue, job.home, by_device);
  }
  return moved;
}

uint64_t restore_home(LaunchJob& job, cl_command_queue home_queue, cl_int* error) {
  uint64_t moved = 0;
  *error = CL_SUCCESS;
  for (auto& use : job.roots) {
    if (use.written.empty()) continue;
    auto& state = *use.root->state;
    std::lock_guard lock(state.mutex());
    const uint8_t* host = state.host_copy().data();
    for (const auto& r : use.written) {
      *error = cl().clEnqueueWriteBuffer(home_queue, use.root->handle, CL_TRUE, r.begin, r.size(), host + r.begin, 0,
                                         nullptr, nullptr);
      if (*error != CL_SUCCESS) return moved;
      moved += r.size();
    }
    for (auto& [device, shadow] : state.shadows()) shadow.valid.subtract(use.written);
  }
  return moved;
}

}  // namespace coex::exec
