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
  double now() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }
};

// What the launch driver gives the device (its first step decided before the threads started,
// with that chunk's footprint when there is one): the policy's chunks and the ranges of slower
// devices it takes over, then the read-back of its writes. Nothing when the device was abandoned (its
// thread must then touch nothing of the launch) or cancelled.
std::optional<DeviceRun> run_on_device(DeviceTask& t, SplitProgress::Step step,
                                       std::optional<ChunkFootprint> footprint);

}  // namespace coex::exec
