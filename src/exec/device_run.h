// One device's part of a split launch, as its worker thread leaves it for the merge and the report.
#pragma once

#include <CL/cl.h>

#include <cstdint>
#include <map>
#include <vector>

#include "coherence/chunk_conflicts.h"
#include "exec/chunk_footprint.h"
#include "exec/data_moves.h"
#include "exec/launch_job.h"
#include "report/report.h"

namespace coex::exec {

struct DeviceQueues {
  cl_command_queue device = nullptr;  // where the device's chunks and transfers run
  cl_command_queue home = nullptr;    // the home device's: the host copy reads the app's buffers there
};

struct DeviceRun {
  cl_int error = CL_SUCCESS;
  uint64_t work_items = 0;
  double seconds = 0;
  bool ran = false;
  DeviceChanges changes;
  std::vector<RootWrites> writes;  // by root: where its chunks wrote
  std::vector<coherence::ChunkAccess> chunks;  // what each of its chunks may read and write (split_safety.h)
  std::vector<ArgTier> tiers;      // by argument: the worst tier of its chunks
  uint64_t lacked = 0;             // footprint bytes it did not hold (bytes_minimal)
  report::BytesByStep bytes;       // what it moved (its uploads, reads from home, read-backs)

  void add(const ChunkMoves& moves) {
    lacked += moves.lacked;
    bytes.home_to_host += moves.home_to_host;
    bytes.host_to_devices += moves.host_to_device;
    bytes.host_to_home += moves.host_to_home;
    bytes.devices_to_host += moves.device_to_host;
  }
};

// Adds what the devices moved and lacked, and the tier of every buffer argument, to the launch's record.
void record_device_runs(const LaunchJob& job, const std::map<int, DeviceRun>& runs, report::LaunchRecord& record);

}  // namespace coex::exec
