#include "exec/split_device_thread.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "config/fault_spec.h"
#include "config/settings.h"
#include "devices/device_set.h"
#include "exec/data_moves.h"
#include "exec/device_kernels.h"
#include "exec/device_writes.h"
#include "exec/executor.h"
#include "exec/exit_guard.h"
#include "exec/kernel_arguments.h"
#include "exec/pocl_compiles.h"
#include "exec/pocl_kernel_cache.h"
#include "exec/shared_first_runs.h"
#include "exec/split_safety.h"
#include "report/trace.h"

namespace coex::exec {
namespace {

using Clock = std::chrono::steady_clock;

const cl_icd_dispatch& cl(const LaunchJob& job) { return job.services->next(); }

void trace(Services& services, int device, const char* name, const char* category, Clock::time_point begin,
           Clock::time_point end) {
  if (auto* t = services.trace()) t->record(name, category, device, begin, end);
}

// The work-groups a chunk enqueues at once: all of them, or on a PoCL CPU device, where the chunk is 65,535
// work-items wide or more (pocl_kernel_cache::kSmallGridWidth), pieces narrower than that, one enqueue
// each and one wait. PoCL compiles a "small grid" and a wide work-group function apart, and PoCL 3.1 and
// 5.0 compile no wide one ahead (each entry of POCL_BINARY_SPECIALIZE_WG is built as a small grid): a
// wide chunk's first run compiled in the app's process, every PoCL device of it stopped meanwhile
// (docs/design.md, "Compiled ahead, in a process of its own"), where the pieces run the small one
// compiled ahead. A chunk at offset zero with the app's own local size stays whole (small_grid_groups),
// and so does one of a rewritten kernel (its group base is an argument per sub-launch).
uint64_t groups_per_enqueue(const LaunchJob& job, int device, const sched::Chunk& chunk, const LaunchGeometry& sub) {
  const devices::Device& on = job.services->devices().at(device);
  if (!on.is_pocl() || on.remote || !(on.type & CL_DEVICE_TYPE_CPU) || job.rewrite) return chunk.groups();
  return std::min(chunk.groups(), small_grid_groups(sub, pocl_kernel_cache::kSmallGridWidth));
}

// Cancelled: taken over while it was being prepared; the thread leaves the launch (SplitProgress::leave)
// and touches nothing of it after that.
enum class ChunkOutcome { Done, Failed, Abandoned, Cancelled };

// COEX_FAULT=late_start:<device>: the sub-launch goes on only once another device has taken it over
// and coex's shutdown has seen the device still busy, when the app has released everything (20 s at
// most).
void start_late(DeviceTask& t) {
  const auto until = Clock::now() + std::chrono::seconds(20);
  while (!t.progress.taken_over(t.device) && Clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  while (!busy_devices_checked() && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

// COEX_FAULT=throw_late:<device>: once the sub-launch has started, its thread throws (as a failed
// allocation would) when another device has taken it over (20 s at most): the launch may have ended.
void throw_when_taken_over(DeviceTask& t) {
  const auto until = Clock::now() + std::chrono::seconds(20);
  while (!t.progress.taken_over(t.device) && Clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  throw std::runtime_error("COEX_FAULT=throw_late");
}

// The uploads prepare_chunk left in the device's queue (kQueuedUploadBytes) come from the worker's
// staging, which the next chunk fills again: every way out of the chunk from its preparation on waits
// for them (an error, a take-over before the sub-launch starts, an exception), where the sub-launch's
// wait did not.
class QueuedUploadsWait {
 public:
  QueuedUploadsWait(const cl_icd_dispatch& cl, cl_command_queue queue) : cl_(cl), queue_(queue) {}
  ~QueuedUploadsWait() {
    if (pending_) cl_.clFinish(queue_);
  }
  QueuedUploadsWait(const QueuedUploadsWait&) = delete;
  QueuedUploadsWait& operator=(const QueuedUploadsWait&) = delete;
  void waited() { pending_ = false; }

 private:
  const cl_icd_dispatch& cl_;
  cl_command_queue queue_;
  bool pending_ = true;
};

// One chunk: the part of its footprint the device lacks, then the sub-launch,
// waited for. A chunk of the policy's is reported to it; a redo of an abandoned
// device's range is not (it is not the policy's). After Abandoned nothing of
// the launch may be touched: it may have ended.
ChunkOutcome run_chunk(DeviceTask& t, const sched::Chunk& chunk, const ChunkFootprint& footprint, DeviceRun& run,
                       bool from_policy) {
  LaunchJob& job = t.job;
  const int device = t.device;
  double start = t.now();
  Clock::time_point wall_start = Clock::now();
  merge_arg_tiers(run.tiers, footprint.arg_tiers);
  if (!run.ran) {
    run.ran = true;
    run.error = set_arguments(job, t.kernel, device);
  }
  // The home device's queue is driven by one thread at a time
  // (HomeBackup::mutex): others read from it.
  std::unique_lock<std::mutex> home_lock;
  if (device == job.home) home_lock = job.home_backup.lock_for_home();
  const auto& settings = job.services->settings();
  const uint64_t sub_launch_number = ++t.worker.sub_launches;
  const bool fail_injected =
      config::fault_injected(settings.fault, config::FaultSpec::Kind::Fail, device, sub_launch_number);
  cl_event stall = nullptr;  // COEX_FAULT=stall:<device>: the sub-launch waits
                             // for what never comes
  if (config::fault_injected(settings.fault, config::FaultSpec::Kind::Stall, device, sub_launch_number))
    stall = t.executor.stall_event(device, job.services->devices().shadow_context(device));
  ChunkMoves moves;
  t.progress.chunk_preparing(device, chunk, start);
  CancelCheck cancelled;  // cancelled, or left behind since (SplitProgress::kLeaveBehindSeconds)
  if (device != job.home) cancelled = [&t, device] { return t.progress.out_of_launch(device); };
  Services& services = *job.services;  // outlives the job: a device left behind may come back after it
  // COEX_FAULT=hung_upload:<device>: the preparation lasts 20 s and does not look at a take-over (a
  // transfer to a server that went away).
  if (cancelled &&
      config::fault_injected(settings.fault, config::FaultSpec::Kind::HungUpload, device, sub_launch_number)) {
    std::this_thread::sleep_for(std::chrono::seconds(20));
    run.error = kPreparationCancelled;
  }
  QueuedUploadsWait queued_wait(services.next(), t.queues.device);
  if (run.error == CL_SUCCESS)
    run.error = prepare_chunk(
        job, device, t.queues.device, t.queues.home, footprint, run.writes,
        [&](size_t slot, size_t bytes) { return t.worker.upload_staging(slot, bytes, t.queues.device); }, moves,
        cancelled);
  // COEX_FAULT=stall_upload:<device>: the preparation, its uploads enqueued, lasts until another
  // device takes the chunk over.
  if (run.error == CL_SUCCESS && cancelled &&
      config::fault_injected(settings.fault, config::FaultSpec::Kind::StallUpload, device, sub_launch_number)) {
    while (!cancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    run.error = kPreparationCancelled;
  }
  if (run.error == kPreparationCancelled || (cancelled && cancelled())) {  // the job may be gone: not touched
    trace(services, device, "upload (taken over)", "transfer", wall_start, Clock::now());
    return ChunkOutcome::Cancelled;
  }
  add_chunk_writes(run.writes, footprint);
  run.chunks.push_back(chunk_access(footprint));
  if (run.error == CL_SUCCESS && fail_injected) run.error = CL_OUT_OF_RESOURCES;
  run.add(moves);
  Clock::time_point kernel_start = Clock::now();
  if (moves.home_to_host + moves.host_to_device + moves.host_to_home + moves.device_to_host)
    trace(*job.services, device, "upload", "transfer", wall_start, kernel_start);
  if (run.error == CL_SUCCESS && job.rewrite) run.error = set_rewrite_arguments(job, t.kernel, chunk.begin);
  LaunchGeometry sub = sub_launch(job.geometry, chunk.begin, chunk.end);
  // In pieces, sub has two groups or more along the job's split dimension: its own split dimension is
  // that one, and pieces of it are cut as the job's would be. The pieces run one variant of PoCL's
  // work-group function, or two where the first is at offset zero (PoCL compiles one for a zero and
  // one for another offset): each has its first run.
  const uint64_t per_enqueue = groups_per_enqueue(job, device, chunk, sub);
  const bool in_pieces = per_enqueue < chunk.groups();
  const uint64_t enqueues = in_pieces ? (chunk.groups() + per_enqueue - 1) / per_enqueue : 1;
  auto piece = [&](uint64_t i) {
    return in_pieces ? sub_launch(sub, i * per_enqueue, std::min(chunk.groups(), (i + 1) * per_enqueue)) : sub;
  };
  const LaunchGeometry first_piece = piece(0);
  const bool later_variant = enqueues > 1 && first_piece.at_offset_zero();
  const LaunchGeometry later_piece = later_variant ? piece(1) : first_piece;
  // From chunk_started on the device may be abandoned, and the launch end: nothing of the job is
  // touched until chunk_finished says it was not.
  const bool home = device == job.home;
  // What sharing a first run with the devices built from the same binary needs of the job, taken
  // while the job is sure to live. Not for a stalled sub-launch (COEX_FAULT): the others would wait for
  // a compile that never ends.
  auto share_plan_of = [&](const LaunchGeometry& piece) {
    return run.error == CL_SUCCESS && !stall && first_run_pending(device, t.kernel, piece)
               ? plan_first_run_share(job, device, piece)
               : FirstRunSharePlan();
  };
  const FirstRunSharePlan share_plan = share_plan_of(first_piece);
  const FirstRunSharePlan later_share_plan = later_variant ? share_plan_of(later_piece) : FirstRunSharePlan();
  if (!t.progress.chunk_started(device, t.now())) return ChunkOutcome::Cancelled;
  if (!home && config::fault_injected(settings.fault, config::FaultSpec::Kind::LateStart, device, sub_launch_number))
    start_late(t);
  if (!home && config::fault_injected(settings.fault, config::FaultSpec::Kind::ThrowLate, device, sub_launch_number))
    throw_when_taken_over(t);
  // PoCL compiles when the sub-launch first runs, in this thread: with serial_compiles, one device at
  // a time there.
  const bool first_piece_first = run.error == CL_SUCCESS && first_run_of(device, t.kernel, first_piece);
  const bool later_first = run.error == CL_SUCCESS && later_variant && first_run_of(device, t.kernel, later_piece);
  const bool first_run = first_piece_first || later_first;
  // Another device built from the same binary may have compiled it, or be compiling it now: its files serve.
  SharedFirstRun shared = first_piece_first ? share_first_run(services, device, share_plan) : SharedFirstRun();
  SharedFirstRun later_shared = later_first ? share_first_run(services, device, later_share_plan) : SharedFirstRun();
  auto compile_lock = lock_first_run(services, device, first_run);
  for (uint64_t i = 0; i < enqueues && run.error == CL_SUCCESS; ++i) {
    const LaunchGeometry g = piece(i);
    const bool waits = stall && i == 0;
    run.error = services.next().clEnqueueNDRangeKernel(t.queues.device, t.kernel, g.work_dim, g.offset, g.global,
                                                       g.local, waits ? 1 : 0, waits ? &stall : nullptr, nullptr);
  }
  const cl_int finished = services.next().clFinish(t.queues.device);  // the queued uploads' too
  queued_wait.waited();
  if (run.error == CL_SUCCESS) run.error = finished;
  if (compile_lock) compile_lock.unlock();
  shared.end();  // compiled: the devices waiting for it copy it now
  later_shared.end();
  const double end = t.now();
  const double transfer = std::chrono::duration<double>(kernel_start - wall_start).count();
  if (!t.progress.chunk_finished(device, {chunk, start, end, transfer, first_run}, from_policy))
    return ChunkOutcome::Abandoned;
  if (run.error == CL_SUCCESS) queued_uploads_done(job, device, moves);  // they ran: valid there now
  if (home_lock) home_lock.unlock();
  if (auto* tr = services.trace())  // the chunk's groups of the split dimension, as the policy counts them
    tr->record(job.kernel_name, "kernel", device, kernel_start, Clock::now(),
               {{"groups", {chunk.begin, chunk.end}}, {"first_run", first_run}});
  run.seconds += end - start;
  if (run.error != CL_SUCCESS) {
    spdlog::warn("kernel {}: sub-launch on device {} failed (error {})", job.kernel_name, device, run.error);
    return ChunkOutcome::Failed;
  }
  run.work_items += sub.work_items();
  return ChunkOutcome::Done;
}

// The driver objects a device's sub-launches use, retained while its thread may use them. A device
// taken over runs on after its launch has ended (SplitProgress: Abandoned), and meanwhile the app may
// release its buffers and program, which releases coex's shadows and device kernels: without these
// references its sub-launch was enqueued with freed buffers (PoCL's pthread driver aborted with
// "PTHREAD ERROR in can_run_command", or crashed at exit, about 1 run in 13 under boyer on two
// pthread devices). Home is never taken over and uses the app's own objects.
class HeldForSubLaunches {
 public:
  HeldForSubLaunches(LaunchJob& job, int device, cl_kernel kernel, cl_command_queue queue) : cl_(cl(job)) {
    if (device == job.home) return;
    if (kernel && cl(job).clRetainKernel(kernel) == CL_SUCCESS) kernel_ = kernel;
    if (queue && cl(job).clRetainCommandQueue(queue) == CL_SUCCESS) queue_ = queue;
    for (const ArgBinding& binding : job.bindings) {
      if (binding.kind != ArgBinding::Kind::Buffer) continue;
      cl_mem mem = device_mem(job, binding, device);
      if (mem && cl(job).clRetainMemObject(mem) == CL_SUCCESS) mems_.push_back(mem);
    }
  }
  ~HeldForSubLaunches() {
    for (cl_mem mem : mems_) cl_.clReleaseMemObject(mem);
    if (queue_) cl_.clReleaseCommandQueue(queue_);
    if (kernel_) cl_.clReleaseKernel(kernel_);
  }
  HeldForSubLaunches(const HeldForSubLaunches&) = delete;
  HeldForSubLaunches& operator=(const HeldForSubLaunches&) = delete;

 private:
  const cl_icd_dispatch& cl_;
  cl_kernel kernel_ = nullptr;
  cl_command_queue queue_ = nullptr;
  std::vector<cl_mem> mems_;
};

}  // namespace

namespace {

// The device's writes so far, read back (where they do not stay on it) into its staging.
void read_back(DeviceTask& t, DeviceRun& run) {
  LaunchJob& job = t.job;
  std::unique_lock<std::mutex> home_lock;
  if (t.device == job.home) home_lock = std::unique_lock(job.home_backup.mutex);
  Clock::time_point begin = Clock::now();
  run.bytes.devices_to_host += read_back_changes(
      job, t.device, t.queues.device,
      [&](size_t root, size_t bytes) {
        return t.worker.staging(root, bytes, t.device == job.home ? nullptr : t.queues.device);
      },
      run.writes, run.changes, &run.error);
  run.seconds += std::chrono::duration<double>(Clock::now() - begin).count();
  trace(*job.services, t.device, "read back", "transfer", begin, Clock::now());
}

}  // namespace

PartEnd run_on_device(DeviceTask& t, SplitProgress::Step step, std::optional<ChunkFootprint> footprint,
                      DeviceRun& out) {
  using Kind = SplitProgress::Step::Kind;
  LaunchJob& job = t.job;
  // Taken while the launch is alive: it cannot end before this device has started a sub-launch.
  HeldForSubLaunches held(job, t.device, t.kernel, t.queues.device);
  DeviceRun run;
  bool unread = false;  // chunks ran since its last read-back
  const auto now = [&t] { return t.now(); };
  for (;;) {
    if (step.kind == Kind::Wait && t.device != job.home) {
      step = t.progress.next(t.device, now, false);
      // Nothing from the driver now: a device other than home reads back what it wrote while the
      // others still run, and its part is over when the driver says so, in the same look
      // (SplitProgress::next): after the launch's last chunk, every waiting device had woken to ask,
      // then to read back, then to say it finished, one after another (over 15 single-threaded PoCL
      // devices on the device machine, benchmarks/jacobi's last read-back began 0.3 ms after the last
      // chunk ended, of a 1.4 ms launch). Published first: once it is finished, the launch may end.
      // Not after each chunk: a read-back reads all the device's writes so far.
      if (step.kind == Kind::Wait) {
        if (unread) read_back(t, run);
        unread = false;
        out = std::move(run);
        step = t.progress.next(t.device, now, true, true);
        if (step.kind == Kind::Done) return PartEnd::kReported;
        run = std::move(out);  // more to run (a range taken over): the launch waits for this device
      }
    }
    if (step.kind == Kind::Wait) step = t.progress.next(t.device, now);
    if (step.kind == Kind::Done) break;
    if (!footprint) footprint = chunk_footprint(job, step.chunk.begin, step.chunk.end);
    ChunkOutcome outcome = run_chunk(t, step.chunk, *footprint, run, step.from_policy);
    if (outcome == ChunkOutcome::Abandoned || outcome == ChunkOutcome::Cancelled) return PartEnd::kOut;
    // A device that joined the launch late (its build ended meanwhile) makes it cold already; once it
    // ran the kernel here, the next launch with it is not cold for it (the others were noted at the
    // launch's start, run_split). Here, before its part may end without its thread coming back.
    if (t.joined_late) first_launch_from_build(job, t.device);
    t.joined_late = false;
    unread = true;
    if (outcome == ChunkOutcome::Failed) {
      out = std::move(run);
      return PartEnd::kRan;
    }
    if (!step.from_policy)
      spdlog::info("kernel {}: device {} redid the {} work-groups [{}, {}) of device {}, which was slower",
                   job.kernel_name, t.device, step.chunk.groups(), step.chunk.begin, step.chunk.end, step.taken_from);
    footprint.reset();
    step.kind = Kind::Wait;  // ask the driver
  }
  if (unread) read_back(t, run);
  out = std::move(run);
  return PartEnd::kRan;
}

}  // namespace coex::exec
