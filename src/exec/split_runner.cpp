#include "exec/split_runner.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <vector>

#include "config/settings.h"
#include "devices/device_set.h"
#include "exec/data_moves.h"
#include "exec/device_kernels.h"
#include "exec/device_run.h"
#include "exec/device_writes.h"
#include "exec/executor.h"
#include "exec/exit_guard.h"
#include "exec/home_sync.h"
#include "exec/kernel_arguments.h"
#include "exec/launch_shape.h"
#include "exec/split_device_thread.h"
#include "exec/split_progress.h"
#include "exec/split_safety.h"
#include "report/report.h"
#include "report/trace.h"

namespace coex::exec {
namespace {

// How often a late device's worker looks for the first chunk's end of the split it may join (a chunk's
// end wakes no waiting thread: SplitProgress::chunk_finished).
constexpr double kPaceLook = 0.005;

using Clock = std::chrono::steady_clock;

const cl_icd_dispatch& cl(const LaunchJob& job) { return job.services->next(); }

void trace(const LaunchJob& job, int device, const char* name, const char* category, Clock::time_point begin,
           Clock::time_point end) {
  if (auto* t = job.services->trace()) t->record(name, category, device, begin, end);
}

// The launch as the app asked for it, on its device: the fallback when a split
// failed.
cl_int run_whole_on_home(LaunchJob& job, cl_command_queue home_queue) {
  uint64_t moved = 0, fetched = 0;  // counted by the report as on demand: no split moved it
  cl_int lacked = bring_job_home(job, home_queue, moved, fetched);
  if (moved || fetched) job.services->report().record_home_on_demand(moved, fetched);
  if (lacked != CL_SUCCESS) return lacked;
  cl_kernel kernel = device_kernel(job, job.home);
  bool temporary = false;
  if (!kernel) {  // coex's own build failed there: the app's program is built,
                  // make a kernel of it
    cl_int err = CL_SUCCESS;
    kernel = cl(job).clCreateKernel(job.program->handle, job.kernel_name.c_str(), &err);
    if (!kernel) return err;
    temporary = true;
  }
  cl_int err = set_arguments(job, kernel, job.home);
  if (err == CL_SUCCESS && job.rewrite && !temporary) err = set_rewrite_arguments(job, kernel, 0);
  const LaunchGeometry& g = job.geometry;
  if (err == CL_SUCCESS)
    err = cl(job).clEnqueueNDRangeKernel(home_queue, kernel, g.work_dim, g.offset, g.global, g.local, 0, nullptr,
                                         nullptr);
  if (err == CL_SUCCESS) err = cl(job).clFinish(home_queue);
  if (temporary) cl(job).clReleaseKernel(kernel);
  for (auto& use : job.roots) {  // home changed: every other copy of what was
                                 // written is stale
    std::lock_guard lock(use.root->state->mutex());
    for (const auto& r : use.written) use.root->state->app_wrote(r.begin, r.end);
  }
  return err;
}

// A device's part that threw: its run fails the launch (which then runs whole on home), unless the
// device is out of the launch already, which may have ended: then nothing of it is touched, `out`
// (the launch's) included.
void fail_part(SplitProgress& progress, int device, Clock::time_point t0, DeviceRun* out) {
  const double now = std::chrono::duration<double>(Clock::now() - t0).count();
  progress.fail(device, now, [out] {
    *out = DeviceRun{};
    out->error = CL_OUT_OF_HOST_MEMORY;
  });
}

}  // namespace

cl_int run_split(Executor& executor, LaunchJob& job) {
  Services& services = *job.services;
  devices::DeviceSet& devices = services.devices();
  Clock::time_point t0 = Clock::now();
  cl_command_queue home_queue = devices.home_queue(job.app_context, job.home_device);
  if (!home_queue) return CL_OUT_OF_RESOURCES;
  report::LaunchRecord record;

  std::map<int, cl_kernel> kernels;
  const char* left_out = nullptr;  // a device abandoned and not back yet, or dropped
  for (int device : job.devices) {
    if (const char* why = device == job.home ? nullptr : executor.left_out(device)) {
      left_out = why;
      continue;
    }
    // Under auto the planner left out every device other than home whose build had not finished
    // (launch_planner.cpp); the other policies wait here: their users asked for every device.
    cl_kernel kernel = device_kernel(job, device);
    if (!kernel) continue;
    if (device != job.home && !ensure_shadows(job, device)) continue;
    kernels[device] = kernel;
  }
  std::vector<int> joiners;  // still building: they join once built (below)
  for (int device : job.joiners)
    if (!executor.left_out(device)) joiners.push_back(device);
  if (kernels.empty() || kernels.size() + joiners.size() < 2) {
    cl_int err = run_whole_on_home(job, home_queue);
    record.not_split_reason = left_out ? left_out : "devices_unavailable";
    record.per_device.push_back(
        {job.home, job.geometry.work_items(), std::chrono::duration<double>(Clock::now() - t0).count()});
    services.report().record_launch(job.kernel_name, record);
    return err;
  }
  std::vector<int> active;
  for (const auto& [device, kernel] : kernels) active.push_back(device);
  // A split with a kernel's first sub-launch on some device pays that device's compile of it: its
  // time is no verdict on splitting (docs/design.md, "One-time costs").
  bool cold = false;
  for (int device : active) cold |= first_launch_from_build(job, device);
  const Clock::time_point policy_start = Clock::now();
  std::shared_ptr<sched::Policy> policy = executor.launch_policies().acquire();
  ChunkFootprint whole_launch = chunk_footprint(job, 0, job.geometry.groups_along_split());
  job.home_backup.launch_reads.clear();
  job.home_backup.launch_writes.clear();
  job.home_backup.on_device.assign(job.roots.size(), {});
  // Not with remote devices (PoCL's remote driver): with side reads, vector_add over two remote
  // devices gave wrong bytes in about half of its runs, never without them (docs/remote.md).
  bool side_reads = services.settings().side_reads;
  for (int device : active) side_reads = side_reads && !devices.at(device).remote;
  for (int device : joiners) side_reads = side_reads && !devices.at(device).remote;
  for (const RootFootprint& root : whole_launch.roots) {
    job.home_backup.launch_reads.push_back(root.reads);
    if (side_reads) job.home_backup.launch_writes.push_back(root.writes());
  }
  // Shared with the device threads: one abandoned here may come back after this
  // launch has ended. Its late time teaches the history how slow it was, for
  // the next launches' policies.
  const sched::LaunchShape shape = [&] {
    sched::LaunchShape s = launch_shape(job.geometry, history_key(job.kernel_name, job.program->source_hash), job.home,
                                        job.launch_number, &whole_launch);
    s.follows_split = job.follows_split;
    s.home_measured_seconds = job.home_measured_seconds;
    // The gate's devices where it weighed a measured split: a launch planned before any was measured
    // is weighed again with what the History has learnt since.
    if (job.gate && job.gate->split_seconds >= 0) s.gate_devices = job.gate->devices;
    return s;
  }();
  policy->expect_late_devices(joiners);
  policy->begin_launch(shape, active, 0);
  // A device still building takes part once its build is done, from its first next_chunk on (its
  // worker runs the build first): where the policy hands out on demand (docs/design.md, "One-time
  // costs"). Such a launch pays builds: no verdict on splitting either.
  joiners.erase(std::remove_if(joiners.begin(), joiners.end(), [&](int d) { return !policy->add_device(d, 0); }),
                joiners.end());
  // A split that devices join pays their builds (docs/design.md, "One-time costs"); late devices build
  // nothing unless one is let in during it (below).
  LateDevices& late = executor.late_devices();
  const std::vector<int> late_joiners = late.waiting_among(joiners, job.home);
  // A run whose late devices the History's memory let in starts the clock at its first split, if no
  // launch did: its end asks whether the program ran long enough to be remembered again (below).
  if (late.any_remembered()) late.start_clock();
  cold |= joiners.size() > late_joiners.size();
  auto late_let_in = std::make_shared<std::atomic<bool>>(false);
  record.planned_by = policy->planned_by();
  record.gate = job.gate;
  const Clock::time_point policy_started = Clock::now();
  // An abandoned device's time goes to the History once: its whole time when its sub-launch returns,
  // or, when coex stops and leaves it running (after waiting for it), the time so far, a lower bound
  // that the next run's History starts from (so that auto leaves a device that never finishes out of
  // the next run too). A bound taken at the abandonment itself was too short to tell (the CPU beside
  // an H100 kept its share of matmul). Either way its busy mark follows: launches leave it out
  // meanwhile.
  auto history_note = [history = executor.history(), key = shape.kernel_key, size = shape.global_size](
                          const sched::Chunk& chunk, double seconds) {
    if (history) history->record_chunk(key, size, {chunk, 0, seconds, 0});
  };
  SplitProgress::Listener listener;
  listener.on_abandon = [&executor, history_note, alive = executor.alive()](int device, const sched::Chunk& chunk,
                                                                            double seconds) {
    if (!*alive) return;
    auto started_at =
        Clock::now() - std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    executor.set_busy(device, true, [history_note, chunk, started_at] {
      history_note(chunk, std::chrono::duration<double>(Clock::now() - started_at).count());
    });
  };
  listener.on_abandoned_return = [&executor, history_note, alive = executor.alive()](
                                     int device, const sched::Chunk& chunk, double seconds) {
    if (!*alive) return;  // coex has stopped: a late return touches nothing
    history_note(chunk, seconds);
    executor.set_busy(device, false);
  };
  // Cancelled while preparing: it had not computed its chunk after that long, a bound on its time
  // that keeps the next launches' policies from giving it as much again (no sub-launch to wait for).
  listener.on_cancel = [history_note, alive = executor.alive()](int, const sched::Chunk& chunk, double seconds) {
    if (*alive) history_note(chunk, seconds);
  };
  // Cancelled and its upload not back: launches leave it out until it is (its time is noted above).
  listener.on_left_behind = [&executor, alive = executor.alive()](int device, bool left) {
    if (*alive) executor.set_busy(device, left);
  };
  // The specifications guess a device's pace before anything is measured in this launch (the CPU
  // beside GPUs is taken over as soon as a GPU is idle), unless the policy's shares were fixed by the
  // user. Not the History's pace: a device taken over is measured late, under the load that slowed
  // it, and would be taken over again for it (seen on two PoCL devices sharing cores).
  const Clock::time_point first_chunks_start = Clock::now();
  auto progress = std::make_shared<SplitProgress>(
      policy, job.home, active, std::move(listener),
      policy->guesses_pace_by_specification() ? devices.profiles() : std::vector<sched::DeviceProfile>{},
      executor.spin());
  // The first step of every device, decided now (each device would ask at once anyway): the host
  // copy then holds what their first chunks lack before any device starts writing.
  std::map<int, SplitProgress::Step> first_steps;
  std::map<int, ChunkFootprint> first_footprints;
  uint64_t first_groups = 0;
  for (int device : active) {
    const SplitProgress::Step step = progress->next(
        device, [] { return 0.0; }, false);
    first_steps[device] = step;
    if (step.kind == SplitProgress::Step::Kind::Run) {
      first_footprints[device] = chunk_footprint(job, step.chunk.begin, step.chunk.end);
      first_groups += step.chunk.groups();
    }
  }
  Clock::time_point host_copy_start = Clock::now();
  // From the job's start to its host copy: the devices' kernels, the policy and the first chunks.
  if (auto* t = services.trace()) {  // and two parts of it
    t->record("split setup", "plan", report::kPlanTrack, t0, host_copy_start);
    t->record("policy start", "plan", report::kPlanTrack, policy_start, policy_started);
    t->record("first chunks", "plan", report::kPlanTrack, first_chunks_start, host_copy_start);
  }
  refresh_host_copies(
      job, home_queue,
      host_copy_wanted(job, first_footprints, joiners, whole_launch, first_groups >= shape.total_groups),
      record.bytes_by_step.home_to_host, record.bytes_by_step.devices_to_host);
  const Clock::time_point halos_start = Clock::now();
  const uint64_t fetched_before_halos = record.bytes_by_step.devices_to_host;
  fetch_first_chunks_halos(
      job, first_footprints,
      [&executor](int device, std::function<void()>& task) {
        try {
          return executor.worker(device).post_if_polling(task);
        } catch (...) {  // no worker could be made: the launch's thread reads it
          return false;
        }
      },
      executor.spin(), record.bytes_by_step.devices_to_host);
  const Clock::time_point host_copy_end = Clock::now();
  trace(job, job.home, "host copy", "transfer", host_copy_start, host_copy_end);
  // Within it, the reads of the first chunks' halos from the devices that alone hold them.
  if (record.bytes_by_step.devices_to_host > fetched_before_halos)
    trace(job, job.home, "halo fetch", "transfer", halos_start, host_copy_end);

  std::map<int, DeviceRun> runs;
  for (int device : active) runs[device];
  for (int device : joiners) runs[device];  // made before any thread starts: the map does not change then
  // Home's part runs on this thread (the app's, or the dispatcher's), once the other devices' parts
  // are posted, so that no woken worker queues behind another on one core (docs/design.md, "A launch").
  std::function<void()> home_part;
  // Each part holds the job: a device left behind touches it when it comes back (launch_job.h).
  const std::shared_ptr<LaunchJob> held = job.shared_from_this();
  for (int device : active) {
    DeviceQueues queues{device == job.home ? home_queue : devices.shadow_queue(device), home_queue};
    DeviceWorker& worker = executor.worker(device);
    DeviceRun* out = &runs[device];
    cl_kernel kernel = kernels[device];
    std::optional<ChunkFootprint> footprint;
    if (first_footprints.count(device)) footprint = std::move(first_footprints[device]);
    std::function<void()> part = [&, t0, device, queues, kernel, out, progress, step = first_steps[device],
                                  footprint = std::move(footprint), worker_ptr = &worker, held]() mutable {
      PartEnd end = PartEnd::kRan;
      try {
        DeviceTask task{job, executor, device, queues, kernel, t0, *worker_ptr, *progress};
        end = run_on_device(task, step, std::move(footprint), *out);
      } catch (...) {
        return fail_part(*progress, device, t0, out);
      }
      // Abandoned: the launch went on without this device. Cancelled: it waits for this.
      if (end == PartEnd::kOut) return progress->leave(device);
      if (end == PartEnd::kRan) progress->finished(device);
    };
    if (device == job.home)
      home_part = std::move(part);
    else
      worker.post(std::move(part));
  }
  for (int device : joiners) {
    DeviceWorker& worker = executor.worker(device);
    std::function<void()> join = [&, t0, device, out = &runs[device], progress, worker_ptr = &worker, held] {
      // Nothing of the launch is touched before it is joined: it may be over, its job gone.
      if (!progress->join(device)) return;
      PartEnd end = PartEnd::kRan;
      try {
        cl_kernel kernel = device_kernel(job, device);
        if (!kernel || !ensure_shadows(job, device)) return progress->finished(device);
        DeviceQueues queues{devices.shadow_queue(device), home_queue};
        DeviceTask task{job, executor, device, queues, kernel, t0, *worker_ptr, *progress};
        task.joined_late = true;
        SplitProgress::Step ask;
        ask.kind = SplitProgress::Step::Kind::Wait;  // its first step: from the driver, now
        end = run_on_device(task, ask, std::nullopt, *out);
      } catch (...) {
        return fail_part(*progress, device, t0, out);
      }
      if (end == PartEnd::kOut) return progress->leave(device);
      if (end == PartEnd::kRan) progress->finished(device);
    };
    if (std::find(late_joiners.begin(), late_joiners.end(), device) == late_joiners.end()) {
      worker.post(std::move(join));
      continue;
    }
    // A late device (exec/late_devices.h) has no build under way: it is let in if the launch still runs
    // once auto_late_after has gone by since the program's first launch that could take it, and has
    // itself run min_split_seconds (a launch planned after that time is not long for being late: one of
    // auto's probes of stencil1d's 80 us launches let the GPU in, and the exit waited 1 s for its
    // context), and if, at the pace of its chunks so far, it has auto_late_cost left to run (else the
    // device's preparation would outlast the launch, and the exit wait for it: late_work_outlasts), and
    // joins after its context and build, posted to its worker before the join.
    const double wait = std::max(late.seconds_left(), services.settings().min_split_seconds);
    const double late_cost = services.settings().auto_late_cost;
    worker.post([progress, held, late_joiners, late_let_in, wait, late_cost, total = shape.total_groups,
                 join = std::move(join), worker_ptr = &worker] {
      // Until then nothing of the launch is touched but `progress`: it may end meanwhile.
      if (!progress->runs_after(wait) || exit_begun()) return;
      // Its pace needs a chunk ended: a launch none of whose chunks ends within auto_late_cost is long.
      for (double waited = 0; progress->finished_work().first == 0 && waited < late_cost; waited += kPaceLook)
        if (!progress->runs_after(kPaceLook) || exit_begun()) return;
      if (!late_work_outlasts(progress->finished_work(), total, late_cost)) {
        if (auto* trace = held->services->trace()) {
          const auto now = Clock::now();
          for (int device : late_joiners) trace->record("sits out (auto_late_cost)", "build", device, now, now);
        }
        return;
      }
      late_let_in->store(true);
      // All of them at once: devices of one kind build from one binary (the others' tasks find them in).
      let_in_late_devices(*held->services, held->program, held->app_context, held->home, late_joiners);
      worker_ptr->post(join);
    });
  }
  if (home_part) home_part();
  progress->wait_all();
  // A device that never joined (its build outlasted the launch) had no part in it.
  for (int device : joiners)
    if (!runs[device].ran) runs.erase(device);
  const std::set<int> left_behind = progress->left_behind();
  for (int device : progress->abandoned())
    if (left_behind.count(device))
      spdlog::warn(
          "kernel {}: device {} was taken over while still uploading its chunk, and its upload has not "
          "returned in {} s; it sits out until it does",
          job.kernel_name, device, SplitProgress::kLeaveBehindSeconds);
    else
      spdlog::info("kernel {}: device {} was slower than redoing its work elsewhere; it sits out until it returns",
                   job.kernel_name, device);
  for (int device : progress->cancelled_devices())
    spdlog::info("kernel {}: device {} was taken over while it was still uploading its chunk", job.kernel_name, device);
  const double launch_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  policy->end_launch(launch_seconds);
  cold |= late_let_in->load();
  // A program whose late devices the History's memory let in is remembered again only where this run
  // is long enough too (exec/late_devices.h, let_in_if_remembered).
  if (late.any_remembered() && launch_seconds >= services.settings().min_split_seconds && late.seconds_left() <= 0 &&
      std::max(launch_seconds, late.seconds_since_first()) >= services.settings().auto_late_cost)
    let_in_late_devices(services, job.program, job.app_context, job.home, {});
  for (int device : progress->dropped()) {  // its chunk was done again elsewhere: its
                                            // results are dropped
    runs[device] = DeviceRun{};
    if (device != job.home) {
      forget_device_writes(job, device);
      continue;
    }
    cl_int err = CL_SUCCESS;  // it completed nothing else (the rule's premise):
                              // restore it all
    record.bytes_by_step.host_to_home += restore_home(job, home_queue, &err);
    if (err != CL_SUCCESS) runs[device].error = err;
  }

  uint64_t items = 0;
  cl_int failure = CL_SUCCESS;
  for (auto& [device, run] : runs) {
    items += run.work_items;
    if (run.error != CL_SUCCESS) failure = run.error;
  }
  record_device_runs(job, runs, record);
  if (failure == CL_SUCCESS && items != job.geometry.work_items()) {
    spdlog::error("kernel {}: the policy covered {} of {} work-items", job.kernel_name, items,
                  job.geometry.work_items());
    failure = CL_INVALID_OPERATION;
  }
  std::map<int, std::vector<RootWrites>> writes;
  for (auto& [device, run] : runs) writes[device] = std::move(run.writes);
  std::map<int, DeviceChanges> changes;
  for (auto& [device, run] : runs) changes[device] = std::move(run.changes);
  // The chunks that ran, checked as the launch's pieces were at enqueue (split_safety.h): a dependency
  // inside a piece of several groups shows here. Then the bytes the devices changed, in case a
  // footprint missed a write. Either way the launch runs again on home, and its later launches too.
  coherence::Conflict conflict;
  if (failure == CL_SUCCESS) {
    std::vector<coherence::ChunkAccess> chunks;
    for (auto& [device, run] : runs)
      for (auto& chunk : run.chunks) chunks.push_back(std::move(chunk));
    conflict = coherence::find_conflict(chunks);
    if (!conflict) conflict = changes_conflict(changes);
  }
  if (conflict) {
    spdlog::warn(
        "kernel {}: its work-groups depend on each other ({}): it runs again on the app's device, and its "
        "later launches of this shape are not split",
        job.kernel_name, conflict.to_string());
    remember_chunk_verdict(*job.program, job.kernel_name, job, coherence::conflict_reason(conflict.kind));
    failure = CL_INVALID_OPERATION;
  }
  if (failure != CL_SUCCESS) {
    // Asked before the rerun, which writes the roots itself.
    const std::vector<size_t> rewritten = roots_written_since_enqueue(job);
    for (auto& [device, run] : runs)
      if (device != job.home && run.error != CL_SUCCESS) executor.drop(device, run.error);
    cl_int err = CL_SUCCESS;
    record.bytes_by_step.host_to_home += restore_home(job, home_queue, &err);
    if (err == CL_SUCCESS) err = run_whole_on_home(job, home_queue);
    // No merge ends this launch (BufferState::split_ended): an app write queued behind it makes
    // what its preparation copied stale.
    forget_copies_before_app_writes(job, rewritten);
    record.not_split_reason = conflict ? coherence::conflict_reason(conflict.kind) : "sub_launch_failed";
    record.bytes_moved = record.bytes_by_step.total();
    record.per_device.push_back(
        {job.home, job.geometry.work_items(), std::chrono::duration<double>(Clock::now() - t0).count()});
    services.report().record_launch(job.kernel_name, record);
    return err;
  }

  // No other device took part (those building never joined): home ran the launch alone, in chunks.
  // Its time, an upper bound of home's, is one of the launch's times on home, and paces the kernel's
  // next launches (launch_planner.cpp).
  if (runs.size() == 1 && runs.count(job.home))
    executor.home_launch_times().record_alone(home_launch_key(shape.kernel_key, job.geometry.work_items()),
                                              std::chrono::duration<double>(Clock::now() - t0).count());
  Clock::time_point merge_start = Clock::now();
  cl_int err = CL_SUCCESS;
  record.bytes_by_step.host_to_home +=
      merge_changes(job, changes, writes, home_queue, record.bytes_by_step.devices_to_host, &err);
  record.bytes_moved = record.bytes_by_step.total();
  trace(job, job.home, "merge", "merge", merge_start, Clock::now());
  record.split = err == CL_SUCCESS;
  if (!record.split) record.not_split_reason = "merge_failed";
  // What the split cost, whole: auto weighs it against home alone at the next launches.
  if (record.split && !cold) policy->launch_measured(std::chrono::duration<double>(Clock::now() - t0).count());
  record.cold = cold;
  // One line per launch (scripts/bench-footprints reads them): the report keeps
  // only sums per kernel.
  const report::BytesByStep& steps = record.bytes_by_step;
  spdlog::debug(
      "kernel {}: split launch moved {} bytes (home_to_host {}, host_to_devices {}, devices_to_host {}, host_to_home "
      "{}), bytes_minimal {}",
      job.kernel_name, record.bytes_moved, steps.home_to_host, steps.host_to_devices, steps.devices_to_host,
      steps.host_to_home, record.bytes_minimal);
  for (auto& [device, run] : runs) record.per_device.push_back({device, run.work_items, run.seconds});
  if (const auto r = policy->regularity(); r && record.split)  // judgements of split launches only
    record.regularity =
        report::RegularityRecord{r->irregular, r->window_spread, r->packages, r->spread, r->range_ratio.value_or(-1)};
  services.report().record_launch(job.kernel_name, record);
  return err;
}

}  // namespace coex::exec
