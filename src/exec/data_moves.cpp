#include "exec/data_moves.h"

#include <spdlog/spdlog.h>

#include <cstring>

#include "config/fault_spec.h"
#include "config/settings.h"
#include "devices/device_set.h"
#include "exec/byte_diff.h"
#include "exec/home_backup.h"
#include "exec/home_sync.h"
#include "exec/resident_results.h"
#include "exec/transfer_limits.h"

namespace coex::exec {
namespace {

const cl_icd_dispatch& cl(const LaunchJob& job) { return job.services->next(); }

}  // namespace

bool ensure_shadows(LaunchJob& job, int device) {
  devices::DeviceSet& devices = job.services->devices();
  cl_context context = devices.shadow_context(device);
  if (!context) return false;
  uint64_t align = std::max<uint64_t>(1, devices.at(device).base_address_align_bits / 8);
  for (auto& use : job.roots) {
    auto& state = *use.root->state;
    std::lock_guard lock(state.mutex());
    auto& shadow = state.shadow(device);
    if (shadow.mem) continue;
    cl_int err = CL_SUCCESS;
    shadow.mem = cl(job).clCreateBuffer(context, CL_MEM_READ_WRITE, use.root->size, nullptr, &err);
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
      spdlog::info("device {}: sub-buffer origin {} is not aligned to {} bytes there: it sits this launch out", device,
                   binding.origin, align);
      return false;
    }
    std::lock_guard lock(root->state->mutex());
    auto& shadow = root->state->shadow(device);
    auto& sub = shadow.sub_buffers[{binding.origin, binding.size}];
    if (sub) continue;
    cl_buffer_region region{binding.origin, binding.size};
    cl_int err = CL_SUCCESS;
    sub = cl(job).clCreateSubBuffer(shadow.mem, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
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

uint64_t read_back_changes(LaunchJob& job, int device, cl_command_queue queue, const StagingFn& staging_for,
                           const std::vector<RootWrites>& writes, DeviceChanges& out, cl_int* error) {
  uint64_t moved = 0;
  *error = CL_SUCCESS;
  const bool home = device == job.home;
  out.changed.assign(job.roots.size(), {});
  out.in_place.assign(job.roots.size(), {});
  out.resident.assign(job.roots.size(), {});
  out.staging.assign(job.roots.size(), nullptr);
  for (size_t k = 0; k < job.roots.size() && k < writes.size(); ++k) {
    const RootWrites& w = writes[k];
    coherence::IntervalSet diffed = w.unknown;
    if (home) {
      out.in_place[k] = w.injective;
      out.in_place[k].add(w.diffed);
    } else {
      bool stays = false;
      {
        std::lock_guard lock(job.roots[k].root->state->mutex());
        stays = results_may_stay(*job.services, *job.roots[k].root->state, device);
      }
      (stays ? out.resident[k] : out.changed[k]) = w.injective;
      diffed.add(w.diffed);
      diffed.subtract(w.injective);
    }
    coherence::IntervalSet to_read = home ? w.unknown : w.all();
    to_read.subtract(out.resident[k]);
    if (to_read.empty()) continue;
    uint8_t* staging = staging_for(k, job.roots[k].root->size);
    out.staging[k] = staging;
    cl_mem mem = device_root_mem(job, k, device);
    // Bytes read in a bridged gap land in staging and are never used.
    for (const auto& r : bridge_gaps(to_read, kBridgeGap)) {
      *error =
          cl(job).clEnqueueReadBuffer(queue, mem, CL_FALSE, r.begin, r.size(), staging + r.begin, 0, nullptr, nullptr);
      if (*error != CL_SUCCESS) {
        cl(job).clFinish(queue);  // the reads enqueued before it write into the worker's staging
        return moved;
      }
      moved += r.size();
    }
    *error = cl(job).clFinish(queue);
    if (*error != CL_SUCCESS) return moved;
    // The twin: the host copy holds the pre-launch bytes of every diffed range (prepare_chunk, and
    // host_copy_wanted for the Diff tier); nothing writes them until merge_changes.
    const uint8_t* twin = job.roots[k].root->state->host_copy().data();
    for (const auto& r : diffed)
      out.changed[k].add(changed_bytes(twin + r.begin, staging + r.begin, r.size(), r.begin));
  }
  return moved;
}

namespace {

// COEX_FAULT=merge_write:<device>: a merge that writes home at once fails to write a root that device
// changed, as a driver error would.
bool merge_write_fault(const LaunchJob& job, const std::map<int, DeviceChanges>& changes, size_t root) {
  const std::string& fault = job.services->settings().fault;
  if (fault.empty()) return false;
  for (const auto& [device, change] : changes) {
    const bool wrote = (root < change.changed.size() && !change.changed[root].empty()) ||
                       (root < change.resident.size() && !change.resident[root].empty());
    if (wrote && config::fault_injected(fault, config::FaultSpec::Kind::MergeWrite, device)) return true;
  }
  return false;
}

}  // namespace

uint64_t merge_changes(LaunchJob& job, const std::map<int, DeviceChanges>& changes,
                       const std::map<int, std::vector<RootWrites>>& writes, cl_command_queue home_queue,
                       uint64_t& fetched, cl_int* error) {
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
      if (k >= change.in_place.size() || change.in_place[k].empty()) continue;
      state.host_valid().subtract(change.in_place[k]);
      by_device[device].add(change.in_place[k]);
    }
    for (const auto& [device, change] : changes) {
      if (k >= change.changed.size() || change.changed[k].empty()) continue;
      for (const auto& r : change.changed[k]) std::memcpy(host + r.begin, change.staging[k] + r.begin, r.size());
      state.host_valid().add(change.changed[k]);
      // No other device holds them alone any more (an older launch's resident results there): a
      // merge that writes home at once fetched those over these (fetch_sole below).
      for (auto& [other, copy] : state.shadows()) copy.sole.subtract(change.changed[k]);
      by_device[device].add(change.changed[k]);
      if (device != job.home) home_lacks.add(change.changed[k]);
    }
    // Resident results: the device is their only holder (the host copy's bytes there are older).
    for (const auto& [device, change] : changes) {
      if (k >= change.resident.size() || change.resident[k].empty()) continue;
      auto* shadow = state.find_shadow(device);
      if (!shadow) continue;  // never: the device ran with it
      state.host_valid().subtract(change.resident[k]);
      for (auto& [other, copy] : state.shadows()) copy.sole.subtract(change.resident[k]);
      shadow->sole.add(change.resident[k]);
      by_device[device].add(change.resident[k]);
      home_lacks.add(change.resident[k]);
    }
    // Lazy home: the host copy keeps the changes until the app needs them on home (home_sync.h).
    // Written home now when the app asked for home meanwhile, or wrote the buffer (split_ended then
    // forgets every other copy), or the buffer is the app's host memory.
    home_lacks.add(state.home_lacks());
    // Written home at once, what only a device held comes to the host copy first (this launch's
    // resident results too). When that fetch or the write home fails, the bytes stay recorded where
    // they are, as in a lazy merge, so that a later read tries again (and fails with the driver's
    // error) rather than read stale bytes; and the other roots are merged all the same: each root's
    // state must say where this launch's bytes are (docs/design.md, "A launch"), or the host copy
    // and the shadows count bytes current that home's in-place writes and the other devices' changes
    // made stale.
    const bool lazily = merge_lazily(*job.services, state, use);
    cl_int home_error = lazily                               ? CL_SUCCESS
                        : merge_write_fault(job, changes, k) ? CL_OUT_OF_RESOURCES
                                                             : fetch_sole(*job.services, state, home_lacks, fetched);
    if (!lazily && home_error == CL_SUCCESS) {
      // Bridged gaps send bytes the host copy holds current: home has the same ones already.
      for (const auto& r : bridge_gaps_within(home_lacks, kBridgeGap, state.host_valid())) {
        home_error = cl(job).clEnqueueWriteBuffer(home_queue, use.root->handle, CL_FALSE, r.begin, r.size(),
                                                  host + r.begin, 0, nullptr, nullptr);
        if (home_error != CL_SUCCESS) break;
        moved += r.size();
      }
      // Waited for also after a failed enqueue: the writes enqueued before it read the host copy.
      if (!home_lacks.empty()) {
        const cl_int finished = cl(job).clFinish(home_queue);
        if (home_error == CL_SUCCESS) home_error = finished;
      }
    }
    if (*error == CL_SUCCESS) *error = home_error;
    if (lazily || home_error != CL_SUCCESS) {
      // Not what the app wrote in commands queued behind the launch: its bytes land after these.
      if (!lazily) home_lacks.subtract(state.app_written_since(use.generation_at_enqueue));
      state.home_lacks() = home_lacks;
      state.lacks_device = job.home_device;
    } else {
      state.home_lacks().clear();
    }
    state.update_care();
    // A device's copy is current over all it wrote (it held the bytes its chunks skip, or they wrote
    // them all), except where others changed bytes: split_ended takes those away.
    for (const auto& [device, device_writes] : writes) {
      if (device == job.home || k >= device_writes.size()) continue;
      if (auto* shadow = state.find_shadow(device)) shadow->valid.add(device_writes[k].all());
    }
    state.split_ended(use.generation_at_enqueue, job.home, by_device);
  }
  return moved;
}

std::vector<size_t> roots_written_since_enqueue(LaunchJob& job) {
  std::vector<size_t> out;
  for (size_t k = 0; k < job.roots.size(); ++k) {
    auto& state = *job.roots[k].root->state;
    std::lock_guard lock(state.mutex());
    if (state.generation() != job.roots[k].generation_at_enqueue) out.push_back(k);
  }
  return out;
}

void forget_copies_before_app_writes(LaunchJob& job, const std::vector<size_t>& roots) {
  for (size_t k : roots) {
    auto& state = *job.roots.at(k).root->state;
    std::lock_guard lock(state.mutex());
    state.keep_only_what_home_lacks();
  }
}

uint64_t restore_home(LaunchJob& job, cl_command_queue home_queue, cl_int* error) {
  uint64_t moved = 0;
  *error = CL_SUCCESS;
  for (auto& use : job.roots) {
    if (use.written.empty()) continue;
    auto& state = *use.root->state;
    std::lock_guard lock(state.mutex());
    const uint8_t* host = state.host_copy().data();
    // What a rerun reads of the bytes home overwrote was kept before each of its chunks; the host copy
    // holds the pre-launch bytes where it is valid (never rewritten during a launch) except where home
    // wrote after it read them: the kept bytes win. Elsewhere the rerun writes the same bytes again.
    size_t k = size_t(&use - job.roots.data());
    coherence::IntervalSet kept = k < job.home_backup.on_device.size()
                                      ? intersection(job.home_backup.on_device[k], use.written)
                                      : coherence::IntervalSet{};
    coherence::IntervalSet restore = intersection(use.written, state.host_valid());
    restore.subtract(kept);
    restore_kept_bytes(job, k, kept, home_queue, error);
    if (*error != CL_SUCCESS) return moved;
    for (const auto& r : restore) {
      *error = cl(job).clEnqueueWriteBuffer(home_queue, use.root->handle, CL_TRUE, r.begin, r.size(), host + r.begin, 0,
                                            nullptr, nullptr);
      if (*error != CL_SUCCESS) return moved;
      moved += r.size();
    }
    state.home_lacks().subtract(restore);  // the pre-launch bytes, from the host copy: home has them now
    state.update_care();
    // A device's resident bytes stay: the rerun on home fetches them.
    for (auto& [device, shadow] : state.shadows()) shadow.forget_all_but_sole(use.written);
  }
  return moved;
}

}  // namespace coex::exec
