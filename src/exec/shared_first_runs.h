// A device's first run of a kernel on PoCL, shared among the devices built from one binary (setting
// share_first_runs; docs/design.md, "One-time costs"). PoCL compiles the kernel's work-group function
// for the local size and a zero or other global offset at that first run, under its build hash, and no
// kernel of the process runs on any PoCL device while it compiles. Devices of one kind built from one
// binary have hashes of their own (exec/shared_binaries.h) but the same program: before its first run
// a device looks in its folder of PoCL's kernel cache (exec/pocl_kernel_cache.h); where the function is
// missing and another device of the family is compiling it, it waits for that one, then copies the
// compiled files into its own folder, so that PoCL loads them. On the device machine, a first coex run
// of benchmarks/matmul over eight single-threaded devices compiled nine of them, one after another
// (docs/testbed.md, `--pocl-cache bare`).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "exec/launch_geometry.h"
#include "exec/launch_job.h"
#include "exec/services.h"

namespace coex::exec {

// What sharing `device`'s first run of the job's kernel with geometry `sub` needs of the job, taken
// before the chunk starts (the job may be gone once it has: a device taken over runs on after its
// launch ended). Empty where the device is not PoCL's, its build's hashes are not known, PoCL keeps no
// cache on disk, or the setting is off.
struct FirstRunSharePlan {
  std::string root, kernel, own;    // PoCL's cache, the kernel, this device's build hash
  std::vector<std::string> family;  // the build hashes of the other builds from the same binary
  std::string key;                  // family, kernel, local size, offset, grid
  size_t local[3] = {1, 1, 1};
  bool offset_zero = true;
  bool small_grid = true;
  bool empty() const { return key.empty(); }
};
FirstRunSharePlan plan_first_run_share(const LaunchJob& job, int device, const LaunchGeometry& sub);

// Held around a first run (first_run_of) on a device: made before the sub-launch, ended after it.
// Where this device compiles the function for its family (none had it), its end lets the devices
// waiting for it copy it, if it is there (else the next device to need it compiles it). Empty where
// there is no plan.
class SharedFirstRun {
 public:
  SharedFirstRun() = default;
  explicit SharedFirstRun(const FirstRunSharePlan& plan) : plan_(plan) {}
  SharedFirstRun(SharedFirstRun&& other) noexcept : plan_(std::move(other.plan_)) { other.plan_.key.clear(); }
  SharedFirstRun& operator=(SharedFirstRun&&) = delete;
  SharedFirstRun(const SharedFirstRun&) = delete;
  ~SharedFirstRun() { end(); }
  // Once the sub-launch has run: the devices waiting for this compile copy it now. Once; the
  // destructor calls it where it was not.
  void end();

 private:
  FirstRunSharePlan plan_;  // what this device compiles for its family, and where
};

// At the first run (first_run_of) the plan is for: copies what another device of the family compiled
// for it, waiting (at most kCompileLockWait) for one compiling it now; else, where its own folder
// lacks the function, this device is the one that compiles it. Recorded in the trace as "share first
// run" (category build) when it waited or copied.
SharedFirstRun share_first_run(Services& services, int device, const FirstRunSharePlan& plan);

}  // namespace coex::exec
