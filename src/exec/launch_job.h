// One split launch, as captured when the app enqueued it: the arguments' values at that moment
// (the spec: later clSetKernelArg calls do not affect an enqueued launch), the buffers it uses,
// and its geometry. It keeps the app's buffers retained until it ends.
#pragma once

#include <CL/cl.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "coherence/interval_set.h"
#include "exec/launch_geometry.h"
#include "exec/services.h"
#include "kernel/footprint.h"
#include "model/records.h"
#include "report/report.h"

namespace coex::exec {

// A root buffer the launch touches, with the union of the ranges its arguments cover.
struct RootUse {
  std::shared_ptr<model::BufferRecord> root;
  // Whole argument ranges: what the launch may touch at most. The footprints (chunk_footprint.h) say
  // what each chunk moves; these bound the fallback paths (restore, a whole run on home).
  coherence::IntervalSet used;     // read or written by some argument
  coherence::IntervalSet written;  // bytes that may be written
  uint64_t generation_at_enqueue = 0;
  uint64_t split_number = 0;  // BufferState::split_captured
};

// How a kernel argument is set on a device.
struct ArgBinding {
  enum class Kind { Value, Local, Buffer, NullBuffer } kind = Kind::Value;
  int root = -1;                  // Buffer: index into LaunchJob::roots
  uint64_t origin = 0, size = 0;  // Buffer: the argument's bytes within its root
  cl_mem app_mem = nullptr;       // Buffer: the app's handle (the home device uses it as is)
  bool written = true;            // Buffer: the analysis did not prove it read-only
};

// The home device runs its chunks in the app's own buffers: the bytes they overwrite that the launch
// reads are kept (exec/home_backup.h), so that after a failure the launch can run again whole on home,
// and so that another device that needs them during the launch (a chunk taken back from home) gets
// them as they were before it.
struct HomeBackup {
  std::vector<coherence::IntervalSet> launch_reads;  // by root: what the whole launch may read
  // By root: what any chunk of the launch may write. Empty with side_reads off: then nothing is read
  // beside home (read_untouched_bytes) and every first chunk's inputs are read up front.
  std::vector<coherence::IntervalSet> launch_writes;
  // Other devices' reads of bytes no chunk writes (they hold their pre-launch values all launch long)
  // go through home's SideReads queue while home computes, one thread at a time (PoCL's basic device
  // deadlocks when two threads wait on one queue). Taken before a buffer state's mutex, never with
  // `mutex` below.
  std::mutex side_reads_mutex;
  // While the chunks run, held by whichever thread drives the home device's queue: the home device's
  // own (around its chunks and read-back) or another device's that reads what it lacks from home
  // (read_pre_launch_bytes). One thread at a time: PoCL's basic device deadlocks when two threads wait
  // on one queue (seen: clFinish from two threads, both blocked in libpocl). It also keeps on_device in
  // step with the queue's order. Taken before any buffer state's mutex.
  std::mutex mutex;
  std::vector<coherence::IntervalSet> on_device;  // by root: kept in the state's home_backup buffer

  // The home device's thread, before each chunk: lets other devices' reads from home go first. A
  // plain lock let it take the mutex back at once, chunk after chunk, while another device waited for
  // its inputs (two H200s: 153 ms of binomial's launch, while home ran 12 chunks).
  std::unique_lock<std::mutex> lock_for_home() {
    std::unique_lock gate(readers_mutex);
    readers_done.wait(gate, [this] { return readers_waiting == 0; });
    gate.unlock();
    return std::unique_lock(mutex);
  }
  // Another device's thread, to read from home.
  std::unique_lock<std::mutex> lock_for_reader() {
    {
      std::lock_guard gate(readers_mutex);
      ++readers_waiting;
    }
    std::unique_lock lock(mutex);
    {
      std::lock_guard gate(readers_mutex);
      --readers_waiting;
    }
    readers_done.notify_all();
    return lock;
  }

 private:
  std::mutex readers_mutex;
  std::condition_variable readers_done;
  int readers_waiting = 0;
};

// Owned through a shared_ptr (exec/executor.cpp) that each device's part of the split holds too: a
// device cancelled while it waits on one of the job's mutexes (HomeBackup) or a read of its buffers
// may be left behind (SplitProgress::kLeaveBehindSeconds) and come back after the launch has ended;
// the job, its mutexes and its buffers' records live until it has.
struct LaunchJob : std::enable_shared_from_this<LaunchJob> {
  LaunchJob() = default;
  LaunchJob(const LaunchJob&) = delete;
  LaunchJob& operator=(const LaunchJob&) = delete;
  // Ends its buffer uses (end_buffer_uses, exec/home_sync.h) if nothing did: a job dropped on an
  // error path must not leave its buffers counting a split in flight for ever.
  ~LaunchJob();
  Services* services = nullptr;  // what the job's calls and records go through (set by plan_launch)
  std::shared_ptr<model::KernelRecord> kernel;
  std::shared_ptr<model::ProgramRecord> program;
  std::string kernel_name;
  bool rewrite = false;  // the kernel needs the rewritten source and its extra arguments
  std::vector<model::KernelArgValue> args;
  std::vector<ArgBinding> bindings;
  std::vector<RootUse> roots;
  LaunchGeometry geometry;
  // The exact footprints (docs/design.md, "A launch"): the model of the kernel, null when there is none
  // (then every buffer is replicated and every write diffed), and its inputs for this launch.
  std::shared_ptr<const kernel::FootprintModel> footprint;
  kernel::LaunchGeometry footprint_geometry;
  kernel::ArgValues footprint_values;
  HomeBackup home_backup;  // written by the home device's thread while the chunks run
  cl_command_queue app_queue = nullptr;
  cl_context app_context = nullptr;
  cl_device_id home_device = nullptr;
  int home = -1;             // coex index of the home device
  std::vector<int> devices;  // coex indices that may take work
  // Devices whose build was still running when the launch was planned: each joins the split once its
  // build is done, if the launch is still on and its policy takes late devices (split_runner.cpp).
  std::vector<int> joiners;
  // Under auto: the launch's number among those of its kernel and size (sched::History::plan_launch),
  // so that the policy sees the same probe the planner saw; and, while the job lives, its count among
  // the History's splits in flight (the planner runs the launches enqueued meanwhile on home until
  // the first split over a set of devices has been measured).
  std::optional<uint64_t> launch_number;
  // sched::LaunchShape::follows_split and home_measured_seconds, as the planner saw them: the policy's
  // begin_launch sees the launch as its gate did (without home's measured time, auto's gate there
  // estimated home alone from home's chunks, found the split not worth it, and split over home alone).
  bool follows_split = false;
  std::optional<double> home_measured_seconds;
  std::shared_ptr<void> in_flight;
  std::optional<report::GateRecord> gate;  // what the policy's gate saw (auto), for the report
  std::vector<cl_mem> retained;            // app buffers retained for the job's lifetime
  cl_event user_event = nullptr;           // completes the app's event when the split is done
  cl_event start_marker = nullptr;         // completes when the app's wait list and queue allow the start
  std::shared_ptr<model::SplitEventRecord> event_record;  // the app's event, when it asked for one
  // Each root's state counts this job among its splits in flight from its capture (launch_planner)
  // until end_buffer_uses (home_sync.h).
  bool buffer_uses_begun = false;
  bool buffer_uses_ended = false;
};

}  // namespace coex::exec
