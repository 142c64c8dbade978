// The steps before a chunk runs: the host copy reads from home what it lacks, and the device gets from
// the host copy the part of the chunk's footprint it lacks (data_moves.h).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "devices/device_set.h"
#include "exec/byte_diff.h"
#include "exec/data_moves.h"
#include "exec/home_backup.h"
#include "exec/home_sync.h"
#include "exec/resident_results.h"
#include "exec/transfer_limits.h"

namespace coex::exec {
namespace {

using coherence::IntervalSet;

// A transfer's pieces: whole ranges, or kCancelPieceBytes at most when it is cancellable.
uint64_t piece_bytes(const CancelCheck& cancelled) {
  return cancelled ? kCancelPieceBytes : std::numeric_limits<uint64_t>::max();
}

// Calls `step(offset, size)` for `ranges` cut into pieces of at most `piece` bytes, in order, up to
// the first that does not return CL_SUCCESS (returned). Before each, `cancelled` (when given) may stop
// it with kPreparationCancelled.
template <typename Step>
cl_int for_each_piece(const IntervalSet& ranges, uint64_t piece, const CancelCheck& cancelled, Step step) {
  for (const auto& r : ranges)
    for (uint64_t at = r.begin; at < r.end;) {
      if (cancelled && cancelled()) return kPreparationCancelled;
      const uint64_t size = std::min(piece, r.end - at);
      if (cl_int err = step(at, size); err != CL_SUCCESS) return err;
      at += size;
    }
  return CL_SUCCESS;
}

}  // namespace

cl_int read_ranges(const cl_icd_dispatch& cl, cl_command_queue queue, cl_mem mem, const IntervalSet& ranges,
                   uint8_t* host, uint64_t& moved, const CancelCheck& cancelled) {
  bool enqueued = false;
  cl_int err = for_each_piece(ranges, piece_bytes(cancelled), cancelled, [&](uint64_t at, uint64_t size) {
    cl_int enqueue = cl.clEnqueueReadBuffer(queue, mem, CL_FALSE, at, size, host + at, 0, nullptr, nullptr);
    if (enqueue != CL_SUCCESS) return enqueue;
    moved += size;
    enqueued = true;
    return cancelled ? cl.clFinish(queue) : CL_SUCCESS;  // each piece waited for before the next look
  });
  if (!enqueued) return err;
  cl_int finished = cl.clFinish(queue);
  return err != CL_SUCCESS ? err : finished;
}

cl_int read_into_host_copy(Services& services, const RootUse& use, cl_command_queue home_queue,
                           const IntervalSet& missing, uint64_t& moved, uint64_t& fetched) {
  if (missing.empty()) return CL_SUCCESS;
  auto& state = *use.root->state;
  // Home lacks what only a device holds: that comes from the device.
  IntervalSet from_home = missing;
  if (state.any_sole(missing)) {
    if (cl_int err = fetch_sole(services, state, missing, fetched); err != CL_SUCCESS) return err;
    from_home.subtract(state.host_valid());
  }
  if (from_home.empty()) return CL_SUCCESS;
  cl_int err = read_ranges(services.next(), home_queue, use.root->handle, from_home, state.host_copy().data(), moved);
  if (err == CL_SUCCESS) state.host_valid().add(from_home);
  return err;
}

namespace {

// Up to this many bytes in all are read into the host copy before any device starts (add_few_inputs):
// about a millisecond over PCIe from a GPU home. From a CPU home a read is a copy in memory, and what is
// not read up front waits, chunk by chunk, for home's running chunk: there the cap is larger (the
// mixed set's matmul at 1,024 reads 8 MiB of matrices).
constexpr uint64_t kFewInputBytes = uint64_t(4) << 20;
constexpr uint64_t kFewInputBytesFromCpu = uint64_t(32) << 20;

uint64_t few_input_bytes(const LaunchJob& job) {
  const devices::DeviceSet& devices = job.services->devices();
  const bool cpu_home =
      job.home >= 0 && size_t(job.home) < devices.all().size() && (devices.at(job.home).type & CL_DEVICE_TYPE_CPU);
  return cpu_home ? kFewInputBytesFromCpu : kFewInputBytes;
}

// What the chunks of devices other than home read and their device lacks comes from the host copy; what
// the host copy lacks, each device's own thread reads from home while home computes, chunk by chunk:
// the bytes no chunk writes through home's SideReads queue (read_untouched_bytes), the bytes a chunk
// may write as they were before the launch from home's backup or through home's queue
// (read_pre_launch_bytes). On PoCL's CPU devices such a read waits for home's running sub-launch (its
// threads finish a kernel's work-groups before they serve another queue): under hguided, binomial's
// chunks on the devices other than home waited up to 0.24 s of a 0.5 s launch for its 20 KiB of option
// parameters; with those read up front, on two basic PoCL devices under auto, every chunk of the second
// device still waited for home's running chunk, for the 4 KiB of its results (one work-item of each
// group stores: the analysis cannot prove that the stores cover their range, nor that one work-item
// alone writes each byte, so each chunk's results are diffed against their bytes before the launch).
// When they are few, they are read now, once, before home's first chunk, and no chunk waits: first the
// bytes no chunk writes, then, if they fit too, the pre-launch bytes of those a chunk may write and the
// launch does not read (what another device's chunk keeps where it skips them, or diffs against). Bytes
// the launch reads and writes (in place) are left out: home keeps them in its backup before its chunks
// overwrite them (keep_home_bytes), and a rerun after a failure reads them there.
// `others_lack`, where the first chunks are the whole launch and no device joins late: per root, what
// the other devices' first chunks lack of their own (host_copy_wanted); null otherwise.
void add_few_inputs(LaunchJob& job, const std::map<int, ChunkFootprint>& first_chunks, const std::vector<int>& joiners,
                    const ChunkFootprint& whole_launch, const std::vector<IntervalSet>* others_lack,
                    std::vector<IntervalSet>& wanted) {
  const bool others_take_part =
      !joiners.empty() ||
      std::any_of(first_chunks.begin(), first_chunks.end(), [&](const auto& entry) { return entry.first != job.home; });
  if (!others_take_part) return;
  const HomeBackup& kept = job.home_backup;
  const uint64_t few = few_input_bytes(job);
  std::vector<IntervalSet> untouched(job.roots.size()), written(job.roots.size());
  uint64_t untouched_total = 0, written_total = 0;
  for (size_t k = 0; k < job.roots.size(); ++k) {
    // Without side reads (launch_writes empty) the other devices read what they lack through home's
    // queue, and every first chunk's inputs are read up front (host_copy_wanted).
    if (k >= kept.launch_writes.size() || k >= kept.launch_reads.size() || k >= whole_launch.roots.size()) continue;
    // Where the first chunks are the whole launch, only what the other devices' chunks lack of their
    // own: a launch of benchmarks/jacobi split in two on PoCL's basic devices read home's half of the
    // grid into the host copy, 1 ms of a 4 ms split at 2048 x 2048, for the one row the other device
    // lacked.
    IntervalSet lacked;
    if (others_lack) {
      lacked = (*others_lack)[k];
    } else {
      lacked = whole_launch.roots[k].need;
      lacked.add(whole_launch.roots[k].diffed_writes);  // their twins
    }
    {
      auto& state = *job.roots[k].root->state;
      std::lock_guard lock(state.mutex());
      lacked.subtract(state.host_valid());
      // Bytes only a device holds (resident results) stay there: the chunks that need them fetch them
      // from it, or run where they are.
      for (const auto& [holder, shadow] : state.shadows()) lacked.subtract(shadow.sole);
    }
    untouched[k] = lacked;
    untouched[k].subtract(kept.launch_writes[k]);
    written[k] = intersection(lacked, kept.launch_writes[k]);
    written[k].subtract(kept.launch_reads[k]);
    untouched_total += untouched[k].total();
    written_total += written[k].total();
    if (untouched_total > few) return;
  }
  const bool written_fit = untouched_total + written_total <= few;
  for (size_t k = 0; k < job.roots.size(); ++k) {
    wanted[k].add(untouched[k]);
    if (written_fit) wanted[k].add(written[k]);
  }
}

}  // namespace

std::vector<IntervalSet> host_copy_wanted(LaunchJob& job, const std::map<int, ChunkFootprint>& first_chunks,
                                          const std::vector<int>& joiners, const ChunkFootprint& whole_launch,
                                          bool first_chunks_cover_launch) {
  std::vector<IntervalSet> wanted(job.roots.size());
  const bool others_only = first_chunks_cover_launch && joiners.empty();
  std::vector<IntervalSet> others_lack(others_only ? job.roots.size() : 0);  // add_few_inputs's
  for (size_t k = 0; k < job.roots.size(); ++k) {
    auto& state = *job.roots[k].root->state;
    std::lock_guard lock(state.mutex());
    for (const auto& [device, chunk] : first_chunks) {
      if (k >= chunk.roots.size()) continue;
      if (device == job.home) {
        // What home's first chunk needs of bytes only another device holds (a halo) is fetched now,
        // before any device runs: a fetch waits for that device's running sub-launch on PoCL's CPU
        // devices (its threads finish a kernel's work-groups before they serve another queue).
        IntervalSet footprint = chunk.roots[k].need;
        footprint.add(chunk.roots[k].writes());
        for (const auto& [holder, shadow] : state.shadows())
          if (!shadow.sole.empty()) wanted[k].add(intersection(shadow.sole, footprint));
        continue;
      }
      IntervalSet lacked = chunk.roots[k].need;
      if (const auto* shadow = state.find_shadow(device)) lacked.subtract(shadow->valid);
      if (others_only) {
        others_lack[k].add(lacked);
        others_lack[k].add(chunk.roots[k].diffed_writes);
      }
      // What no chunk writes the device's own thread reads while home computes (read_untouched_bytes);
      // what home's chunks may overwrite is read now, before they run, rather than from the backup.
      if (k < job.home_backup.launch_writes.size()) lacked = intersection(lacked, job.home_backup.launch_writes[k]);
      wanted[k].add(lacked);
      wanted[k].add(chunk.roots[k].diffed_writes);
    }
    if (k < whole_launch.roots.size()) wanted[k].add(whole_launch.roots[k].unknown_writes);
  }
  add_few_inputs(job, first_chunks, joiners, whole_launch, others_only ? &others_lack : nullptr, wanted);
  return wanted;
}

void fetch_first_chunks_halos(LaunchJob& job, const std::map<int, ChunkFootprint>& first_chunks,
                              const RunInDeviceThread& run_in_device_thread, std::chrono::nanoseconds spin,
                              uint64_t& fetched) {
  std::vector<IntervalSet> held_elsewhere(job.roots.size());
  std::vector<coherence::BufferState*> states(job.roots.size());
  uint64_t total = 0;
  for (size_t k = 0; k < job.roots.size(); ++k) {
    auto& state = *job.roots[k].root->state;
    states[k] = &state;
    std::lock_guard lock(state.mutex());
    for (const auto& [device, chunk] : first_chunks) {
      if (device == job.home || k >= chunk.roots.size()) continue;
      IntervalSet lacked = chunk.roots[k].need;
      if (const auto* shadow = state.find_shadow(device)) lacked.subtract(shadow->valid);
      for (const auto& [holder, shadow] : state.shadows())
        if (holder != device && !shadow.sole.empty()) held_elsewhere[k].add(intersection(shadow.sole, lacked));
    }
    total += held_elsewhere[k].total();
  }
  if (total == 0 || total > kFewInputBytes) return;
  // Failed: the chunk that needs the bytes fetches them itself, and meets the driver's error there.
  fetch_sole_in_holders(*job.services, states, held_elsewhere, run_in_device_thread, spin, fetched);
}

void refresh_host_copies(LaunchJob& job, cl_command_queue home_queue, const std::vector<IntervalSet>& wanted,
                         uint64_t& moved, uint64_t& fetched) {
  for (size_t k = 0; k < job.roots.size(); ++k) {
    const RootUse& use = job.roots[k];
    auto& state = *use.root->state;
    std::lock_guard lock(state.mutex());
    state.host_copy();  // sized here, before the device threads read and write parts of it
    if (k >= wanted.size()) continue;
    IntervalSet missing = wanted[k];
    missing.subtract(state.host_valid());
    cl_int err = read_into_host_copy(*job.services, use, home_queue, missing, moved, fetched);
    if (err != CL_SUCCESS) throw std::runtime_error("reading the home buffer failed: error " + std::to_string(err));
  }
}

cl_int prepare_chunk(LaunchJob& job, int device, cl_command_queue queue, cl_command_queue home_queue,
                     const ChunkFootprint& chunk, const std::vector<RootWrites>& written_so_far,
                     const UploadStagingFn& upload_staging, ChunkMoves& moves, const CancelCheck& cancelled) {
  if (device == job.home) {
    // Its buffers are current but for what other devices wrote earlier (lazy home): that comes
    // first, from the host copy, so that the bytes kept below are the ones the launch reads.
    cl_int err = bring_chunk_home(job, home_queue, chunk, moves.host_to_home, moves.device_to_host);
    return err != CL_SUCCESS ? err : keep_home_bytes(job, home_queue, chunk, moves);
  }
  const cl_icd_dispatch& cl = job.services->next();
  for (size_t k = 0; k < job.roots.size() && k < chunk.roots.size(); ++k) {
    const RootUse& use = job.roots[k];
    const RootFootprint& fp = chunk.roots[k];
    if (fp.need.empty() && fp.diffed_writes.empty() && fp.unknown_writes.empty()) continue;
    if (cancelled && cancelled()) return kPreparationCancelled;  // before the locks and the reads
    auto& state = *use.root->state;
    // What this device wrote earlier in the launch is newer than any other copy: never overwritten.
    IntervalSet own_writes = k < written_so_far.size() ? written_so_far[k].all() : IntervalSet{};
    IntervalSet lacked, host_lacks;
    {
      std::lock_guard lock(state.mutex());
      auto* shadow = state.find_shadow(device);
      if (!shadow) return CL_MEM_OBJECT_ALLOCATION_FAILURE;
      // An in-place kernel reads bytes its chunk overwrites: where only this device holds them, the host
      // copy takes them first, so that a rerun after a failure reads them as they were.
      if (!shadow->sole.empty() && k < job.home_backup.launch_reads.size()) {
        IntervalSet overwritten_reads = intersection(job.home_backup.launch_reads[k], fp.writes());
        cl_int err =
            fetch_sole(*job.services, state, intersection(overwritten_reads, shadow->sole), moves.device_to_host);
        if (err != CL_SUCCESS) return err;
      }
      lacked = fp.need;
      lacked.subtract(shadow->valid);
      lacked.subtract(own_writes);
      host_lacks = lacked;
      host_lacks.add(fp.diffed_writes);
      host_lacks.add(fp.unknown_writes);
      host_lacks.subtract(state.host_valid());
    }
    moves.lacked += lacked.total();
    // Later chunks may find the host copy lacking, while home runs its own chunks in place: the bytes
    // come as they were before the launch (read_pre_launch_bytes). Only this device changes its valid
    // set and a launch only adds to the host copy's, so `lacked` still holds after the lock was let go
    // (an app write meanwhile makes the launch's end forget every copy: BufferState::split_ended).
    if (!host_lacks.empty()) {
      cl_int err =
          read_pre_launch_bytes(job, k, home_queue, host_lacks, moves.home_to_host, moves.device_to_host, cancelled);
      if (err != CL_SUCCESS) return err;
    }
    IntervalSet sent;
    cl_mem mem = nullptr;
    const uint8_t* host = nullptr;
    {
      std::lock_guard lock(state.mutex());
      auto* shadow = state.find_shadow(device);
      if (!shadow) return CL_MEM_OBJECT_ALLOCATION_FAILURE;
      mem = shadow->mem;
      IntervalSet fillable = state.host_valid();
      fillable.subtract(own_writes);
      sent = bridge_gaps_within(lacked, kBridgeGap, fillable);
      host = state.host_copy().data();
    }
    if (sent.empty()) continue;
    // Copied to staging without the lock: valid host bytes are not rewritten during a launch (an app
    // write meanwhile only takes them out of the valid set, and the launch's end then forgets every
    // copy: BufferState::split_ended), and the host copy was sized before the device threads started.
    // Under the lock, the copy of matmul's B (419 MB) and the pinning of its staging held home's thread,
    // which takes the lock between its chunks, for 287 ms of a cold run on an H100.
    // In pieces when cancellable: copied, sent and waited for one after another.
    // A small upload is queued, in its root's own slot, and waited for with the sub-launch
    // (kQueuedUploadBytes).
    const bool queue_it = sent.total() <= kQueuedUploadBytes;
    uint8_t* staging = upload_staging(queue_it ? k + 1 : 0, sent.total());
    const uint64_t piece = queue_it ? sent.total() : piece_bytes(cancelled);
    size_t at = 0;
    cl_int err = for_each_piece(sent, piece, cancelled, [&](uint64_t from, uint64_t size) {
      std::memcpy(staging + at, host + from, size);
      cl_int enqueue = cl.clEnqueueWriteBuffer(queue, mem, CL_FALSE, from, size, staging + at, 0, nullptr, nullptr);
      at += size;
      if (enqueue != CL_SUCCESS) return enqueue;
      return cancelled && !queue_it ? cl.clFinish(queue) : CL_SUCCESS;
    });
    if (err != CL_SUCCESS) return err;
    // Cancellable: every piece was waited for, and the last wait may have been long.
    if (cancelled && cancelled()) return kPreparationCancelled;
    if (!cancelled && !queue_it)
      if (cl_int finished = cl.clFinish(queue); finished != CL_SUCCESS) return finished;
    moves.host_to_device += sent.total();
    if (queue_it) {  // valid once run (queued_uploads_done)
      moves.queued.emplace_back(k, std::move(sent));
      continue;
    }
    std::lock_guard lock(state.mutex());
    // Only this device changes its own valid set; an app write meanwhile makes the launch's end
    // forget every copy (BufferState::split_ended).
    if (auto* shadow = state.find_shadow(device)) shadow->valid.add(sent);
  }
  return CL_SUCCESS;
}

void queued_uploads_done(LaunchJob& job, int device, const ChunkMoves& moves) {
  for (const auto& [k, ranges] : moves.queued) {
    auto& state = *job.roots.at(k).root->state;
    std::lock_guard lock(state.mutex());
    if (auto* shadow = state.find_shadow(device)) shadow->valid.add(ranges);
  }
}

}  // namespace coex::exec
