#include "exec/home_backup.h"

#include <spdlog/spdlog.h>

#include "devices/device_set.h"
#include "exec/resident_results.h"

namespace coex::exec {
namespace {

using coherence::IntervalSet;

const cl_icd_dispatch& cl(const LaunchJob& job) { return job.services->next(); }

// The root's backup buffer, made on first need in the app's context. Null when the device has no room
// (then the host copy keeps the bytes). The caller holds the state's lock.
cl_mem backup_buffer(const LaunchJob& job, const RootUse& use) {
  auto& backup = use.root->state->home_backup();
  if (backup) return backup.get();
  cl_int err = CL_SUCCESS;
  cl_mem mem = cl(job).clCreateBuffer(use.root->context, CL_MEM_READ_WRITE, use.root->size, nullptr, &err);
  if (!mem) {
    spdlog::info("no room for a {}-byte backup on the home device (error {}): the host copy keeps the bytes",
                 use.root->size, err);
    return nullptr;
  }
  // Released with the buffer's state, when the app releases the buffer (never at process exit: the
  // registries live on, and coex calls no driver then).
  backup.reset(mem, [release = cl(job).clReleaseMemObject](cl_mem m) { release(m); });
  return mem;
}

}  // namespace

cl_int keep_home_bytes(LaunchJob& job, cl_command_queue home_queue, const ChunkFootprint& chunk, ChunkMoves& moves) {
  HomeBackup& kept = job.home_backup;  // the caller holds kept.mutex
  kept.on_device.resize(job.roots.size());
  for (size_t k = 0; k < job.roots.size() && k < chunk.roots.size() && k < kept.launch_reads.size(); ++k) {
    IntervalSet keep = intersection(kept.launch_reads[k], chunk.roots[k].writes());
    keep.subtract(kept.on_device[k]);
    if (keep.empty()) continue;
    const RootUse& use = job.roots[k];
    auto& state = *use.root->state;
    std::lock_guard lock(state.mutex());
    // Host bytes are never rewritten during a launch, and home has not written this chunk's range yet:
    // where the host copy is valid it holds the pre-launch bytes already.
    keep.subtract(state.host_valid());
    if (keep.empty()) continue;
    cl_int err = CL_SUCCESS;
    if (cl_mem backup = backup_buffer(job, use)) {
      // In order on the home queue: copied before the chunk's kernel starts.
      for (const auto& r : keep) {
        err = cl(job).clEnqueueCopyBuffer(home_queue, use.root->handle, backup, r.begin, r.begin, r.size(), 0, nullptr,
                                          nullptr);
        if (err != CL_SUCCESS) break;
        kept.on_device[k].add(r);
      }
      if (err == CL_SUCCESS) continue;
      spdlog::info("copying into the home device's backup failed (error {}): the host copy keeps the bytes", err);
      keep.subtract(kept.on_device[k]);
    }
    err = read_into_host_copy(*job.services, use, home_queue, keep, moves.home_to_host, moves.device_to_host);
    if (err != CL_SUCCESS) return err;
  }
  return CL_SUCCESS;
}

cl_int read_untouched_bytes(LaunchJob& job, size_t root, const IntervalSet& wanted, uint64_t& moved, uint64_t& fetched,
                            const CancelCheck& cancelled) {
  HomeBackup& kept = job.home_backup;
  if (root >= kept.launch_writes.size()) return CL_SUCCESS;  // side_reads off
  const RootUse& use = job.roots[root];
  auto& state = *use.root->state;
  std::lock_guard side(kept.side_reads_mutex);
  // After every wait, a device cancelled meanwhile touches nothing more: it may be left behind, and
  // the launch over (launch_job.h).
  if (cancelled && cancelled()) return kPreparationCancelled;
  IntervalSet untouched;
  uint64_t generation = 0;
  uint8_t* host = nullptr;
  {
    std::lock_guard lock(state.mutex());
    untouched = wanted;
    untouched.subtract(state.host_valid());
    untouched.subtract(kept.launch_writes[root]);
    if (untouched.empty()) return CL_SUCCESS;
    if (state.any_sole(untouched)) {  // only a device holds these: they come from it
      if (cl_int err = fetch_sole(*job.services, state, untouched, fetched); err != CL_SUCCESS) return err;
      untouched.subtract(state.host_valid());
      if (untouched.empty()) return CL_SUCCESS;
    }
    generation = state.generation();
    host = state.host_copy().data();
  }
  cl_command_queue queue =
      job.services->devices().home_queue(use.root->context, job.home_device, devices::DeviceSet::HomeQueue::SideReads);
  if (!queue) return CL_SUCCESS;  // then they come through the home queue (read_pre_launch_bytes)
  if (cl_int err = read_ranges(cl(job), queue, use.root->handle, untouched, host, moved, cancelled); err != CL_SUCCESS)
    return err;
  if (cancelled && cancelled()) return kPreparationCancelled;  // a later launch may have written them
  std::lock_guard lock(state.mutex());
  // An app write to the buffer meanwhile (BufferState::app_wrote) may have landed before or after
  // the read: the bytes are not counted valid then, and are read again when needed.
  if (state.generation() == generation) state.host_valid().add(untouched);
  return CL_SUCCESS;
}

cl_int read_pre_launch_bytes(LaunchJob& job, size_t root, cl_command_queue home_queue, const IntervalSet& wanted,
                             uint64_t& moved, uint64_t& fetched, const CancelCheck& cancelled) {
  HomeBackup& kept = job.home_backup;
  const RootUse& use = job.roots[root];
  auto& state = *use.root->state;
  if (cl_int err = read_untouched_bytes(job, root, wanted, moved, fetched, cancelled); err != CL_SUCCESS) return err;
  {
    std::lock_guard lock(state.mutex());
    IntervalSet missing = wanted;
    missing.subtract(state.host_valid());
    if (missing.empty()) return CL_SUCCESS;  // nothing to read: no wait for the home queue
  }
  auto backup_lock = kept.lock_for_reader();  // home's running chunk holds it
  if (cancelled && cancelled()) return kPreparationCancelled;
  std::lock_guard lock(state.mutex());
  IntervalSet missing = wanted;
  missing.subtract(state.host_valid());
  if (missing.empty()) return CL_SUCCESS;
  IntervalSet from_backup = root < kept.on_device.size() ? intersection(missing, kept.on_device[root]) : IntervalSet{};
  missing.subtract(from_backup);
  cl_int err = read_into_host_copy(*job.services, use, home_queue, missing, moved, fetched);
  if (err != CL_SUCCESS || from_backup.empty()) return err;
  err = read_ranges(cl(job), home_queue, state.home_backup().get(), from_backup, state.host_copy().data(), moved);
  if (err == CL_SUCCESS) state.host_valid().add(from_backup);
  return err;
}

uint64_t restore_kept_bytes(LaunchJob& job, size_t root, const IntervalSet& written, cl_command_queue home_queue,
                            cl_int* error) {
  *error = CL_SUCCESS;
  if (written.empty()) return 0;
  const RootUse& use = job.roots[root];
  cl_mem backup = use.root->state->home_backup().get();  // the caller holds the state's lock
  if (!backup) return 0;
  uint64_t copied = 0;
  for (const auto& r : written) {
    *error = cl(job).clEnqueueCopyBuffer(home_queue, backup, use.root->handle, r.begin, r.begin, r.size(), 0, nullptr,
                                         nullptr);
    if (*error != CL_SUCCESS) return copied;
    copied += r.size();
  }
  *error = cl(job).clFinish(home_queue);
  return copied;
}

}  // namespace coex::exec
