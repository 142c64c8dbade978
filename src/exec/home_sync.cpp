#include "exec/home_sync.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <mutex>

#include "config/settings.h"
#include "devices/device_set.h"
#include "exec/resident_results.h"
#include "model/registries.h"
#include "report/report.h"

namespace coex::exec {
using coherence::IntervalSet;

cl_int write_lacks_home(Services& services, coherence::BufferState& state, cl_command_queue queue, cl_mem mem,
                        uint64_t origin, const IntervalSet& ranges, uint64_t& moved, uint64_t& fetched) {
  if (ranges.empty()) return CL_SUCCESS;
  if (cl_int err = fetch_sole(services, state, ranges, fetched); err != CL_SUCCESS) return err;
  const cl_icd_dispatch& cl = services.next();
  const uint8_t* host = state.host_copy().data();
  for (const auto& r : ranges) {
    cl_int err =
        cl.clEnqueueWriteBuffer(queue, mem, CL_FALSE, r.begin - origin, r.size(), host + r.begin, 0, nullptr, nullptr);
    if (err != CL_SUCCESS) {
      cl.clFinish(queue);  // the writes enqueued before it read the host copy: none may run after the lock goes
      return err;
    }
    moved += r.size();
  }
  // Blocking: the host copy may change once the caller lets the lock go.
  cl_int err = cl.clFinish(queue);
  if (err != CL_SUCCESS) return err;
  state.home_lacks().subtract(ranges);
  state.update_care();
  return CL_SUCCESS;
}

namespace {

cl_int bring_home_before(Services& services, const char* call, cl_command_queue queue, cl_mem mem, size_t offset,
                         size_t size, bool writes) {
  if (!coherence::BufferState::any_needs_care()) return CL_SUCCESS;  // the common case: one atomic load
  auto record = services.registries().buffers.find(mem);
  if (!record) return CL_SUCCESS;
  auto queue_record = services.registries().queues.find(queue);
  bool in_order = queue_record && !queue_record->out_of_order() && !writes;
  auto& state = *record->state;
  std::lock_guard lock(state.mutex());
  // A split in flight that runs before this command (in-order queue, or the app's wait on its event)
  // writes home what it leaves out before its event completes. What earlier splits left out comes
  // home now: the command may run before the splits in flight (another queue, out of order), and
  // those do not change it until their merge (a home chunk of theirs takes what it needs under this
  // lock first, so no newer byte of theirs is written over).
  if (state.splits_in_flight() > 0) state.want_home(queue, in_order);
  uint64_t first = std::min<uint64_t>(offset, record->size);
  uint64_t last = size > record->size - first ? record->size : first + size;
  IntervalSet needed = state.home_lacks().present({record->origin + first, record->origin + last});
  if (needed.empty()) return CL_SUCCESS;
  cl_command_queue coex_queue =
      services.devices().home_queue(record->context, state.lacks_device, devices::DeviceSet::HomeQueue::AppCalls);
  if (!coex_queue) return CL_OUT_OF_RESOURCES;
  uint64_t moved = 0, fetched = 0;
  cl_int err =
      write_lacks_home(services, state, coex_queue, record->home_handle(), record->origin, needed, moved, fetched);
  if (err != CL_SUCCESS)
    spdlog::error("{}: writing the other devices' results to the buffer failed (error {})", call, err);
  services.report().record_home_on_demand(moved, fetched);
  return err;
}

}  // namespace

cl_int app_reads(Services& services, const char* call, cl_command_queue queue, cl_mem mem, size_t offset, size_t size) {
  return bring_home_before(services, call, queue, mem, offset, size, false);
}

cl_int app_will_write(Services& services, const char* call, cl_command_queue queue, cl_mem mem, size_t offset,
                      size_t size) {
  return bring_home_before(services, call, queue, mem, offset, size, true);
}

bool merge_lazily(const Services& services, const coherence::BufferState& state, const RootUse& use) {
  return state.lazy_allowed && !state.home_wanted_by(use.split_number) &&
         state.generation() == use.generation_at_enqueue && services.settings().lazy_home;
}

cl_int bring_chunk_home(LaunchJob& job, cl_command_queue home_queue, const ChunkFootprint& chunk, uint64_t& moved,
                        uint64_t& fetched) {
  for (size_t k = 0; k < job.roots.size() && k < chunk.roots.size(); ++k) {
    auto& state = *job.roots[k].root->state;
    std::lock_guard lock(state.mutex());
    if (state.home_lacks().empty()) continue;
    IntervalSet footprint = chunk.roots[k].need;
    footprint.add(chunk.roots[k].writes());
    IntervalSet needed = intersection(state.home_lacks(), footprint);
    cl_int err =
        write_lacks_home(*job.services, state, home_queue, job.roots[k].root->handle, 0, needed, moved, fetched);
    if (err != CL_SUCCESS) return err;
  }
  return CL_SUCCESS;
}

cl_int bring_job_home(LaunchJob& job, cl_command_queue home_queue, uint64_t& moved, uint64_t& fetched) {
  for (auto& use : job.roots) {
    auto& state = *use.root->state;
    std::lock_guard lock(state.mutex());
    IntervalSet needed = state.home_lacks();
    cl_int err = write_lacks_home(*job.services, state, home_queue, use.root->handle, 0, needed, moved, fetched);
    if (err != CL_SUCCESS) return err;
  }
  return CL_SUCCESS;
}

LaunchJob::~LaunchJob() {
  try {
    end_buffer_uses(*this);
  } catch (...) {  // a destructor: the error is logged where it happened
  }
}

void end_buffer_uses(LaunchJob& job) {
  if (!job.buffer_uses_begun || job.buffer_uses_ended) return;
  job.buffer_uses_ended = true;
  Services& services = *job.services;
  uint64_t moved = 0, fetched = 0;
  for (auto& use : job.roots) {
    auto& state = *use.root->state;
    std::lock_guard lock(state.mutex());
    // The app asked for home after this split's merge had left bytes out: they go now, before its
    // event completes and the app's command runs.
    if (state.home_wanted_by(use.split_number) && !state.home_lacks().empty()) {
      cl_int err = CL_OUT_OF_HOST_MEMORY;
      try {  // the split is released below whatever happens: a split left in flight stays so for good
        cl_command_queue queue = services.devices().home_queue(use.root->context, state.lacks_device,
                                                               devices::DeviceSet::HomeQueue::AppCalls);
        IntervalSet needed = state.home_lacks();
        err = queue ? write_lacks_home(services, state, queue, use.root->handle, 0, needed, moved, fetched)
                    : CL_OUT_OF_RESOURCES;
      } catch (...) {
      }
      if (err != CL_SUCCESS)
        spdlog::error("kernel {}: writing the other devices' results to the app's buffer failed (error {})",
                      job.kernel_name, err);
    }
    state.split_released(use.split_number);
  }
  if (moved || fetched) services.report().record_home_on_demand(moved, fetched);
}

}  // namespace coex::exec
