// A device's thread in a split launch (exec/split_runner.cpp starts one per device): its chunks, each
// prepared, run and reported to the launch driver (SplitProgress), then the read-back of its writes.
#pragma once

#include <CL/cl.h>

#include <chrono>
#include <optional>

#include "exec/chunk_footprint.h"
#include "exec/device_run.h"
#include "exec/device_worker.h"
#include "exec/launch_job.h"
#include "exec/split_progress.h"

namespace coex::exec {

class Executor;

// One device's thread in a split launch: what it needs besides its own
// DeviceRun.
struct DeviceTask {
  LaunchJob& job;
  Executor& executor;
  int device;
  DeviceQueues queues;
  cl_kernel kernel;
  std::chrono::steady_clock::time_point t0;
  DeviceWorker& worker;
  SplitProgress& progress;
  bool joined_late = false;  // still building when the launch began (run_split's joiners)
  double now() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }
};

// How a device's part of the launch ended.
enum class PartEnd {
  kRan,       // its run is in `out`: the caller tells the launch (SplitProgress::finished)
  kReported,  // its run is in `out` and the launch knows: the caller touches nothing of it any more
  kOut,       // abandoned or cancelled: nothing in `out`; the caller leaves (SplitProgress::leave) and
              // touches nothing else of the launch
};

// What the launch driver gives the device (its first step decided before the threads started,
// with that chunk's footprint when there is one): the policy's chunks and the ranges of slower
// devices it takes over, then the read-back of its writes (a device other than home reads back
// whenever the driver has nothing for it yet).
PartEnd run_on_device(DeviceTask& t, SplitProgress::Step step, std::optional<ChunkFootprint> footprint, DeviceRun& out);

}  // namespace coex::exec
