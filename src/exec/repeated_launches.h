// Launches that repeat one left on home (docs/design.md, "Repeated launches"): a program of many small
// launches enqueues the same kernel with the same geometry and arguments over and over, and the plan
// of each came out the same, unsplit, at several microseconds apiece (benchmarks/stencil1d: 20,000
// launches of about 5 us each on PoCL took 1.7x as long under auto). The plan of a launch left on home
// for a reason that holds until something it read changes is kept (from the second launch with its
// queue, geometry and argument values on: remember), and the next launch with the same ones takes it
// over while nothing changed:
//  - the History's evidence (sched::History::evidence_version) and the devices left out of launches
//    (Executor::left_out_version);
//  - for a policy's verdict, the policy (Policy::unsplit_again: auto's probes come round);
//  - for "too_small", home's timings (HomeLaunchTimes::version): a launch timed later may show the
//    kernel long enough to split;
//  - for "preparing" (the analysis or a build still under way), nothing versions the end of the
//    preparation: the plan is kept for kPreparingHold, and each launch that takes it over counts in the
//    History as the plan's own did (its probes follow the launch numbers). A program of many small
//    launches spent its first 40% preparing over two PoCL devices on the development machine, planned
//    in full at every launch (benchmarks/stencil1d: 0.10 to 0.13 s against 0.06 to 0.09 s bare; with the
//    other device's build a second late, every launch preparing, 0.13 to 0.20 s).
// Only decisions to run unsplit are kept, and the buffers the launch may write are looked up again at
// every launch: a stale entry can cost a split, never a result.
#pragma once

#include <CL/cl.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "exec/launch_planner.h"
#include "model/records.h"
#include "sched/policy.h"

namespace coex::exec {

class Services;

// The launch as the app enqueued it.
struct LaunchRequest {
  cl_command_queue queue = nullptr;
  cl_uint work_dim = 0;
  const size_t* offset = nullptr;
  const size_t* global = nullptr;
  const size_t* local = nullptr;
};

// The versions of what a plan reads besides the launch itself.
struct PlanVersions {
  uint64_t evidence = 0;    // sched::History::evidence_version
  uint64_t left_out = 0;    // Executor::left_out_version
  uint64_t home_times = 0;  // HomeLaunchTimes::version
  // Registries::queues' version: an entry matches a launch by its queue's handle, which a queue made
  // after another's release may reuse on another device.
  uint64_t queues = 0;
  static PlanVersions now(Services& services);
};

// What a plan read that must be the same for another launch to take its decision over.
struct RepeatableDecision {
  bool keep = false;      // the decision's reason holds until what is below changes
  PlanVersions versions;  // read before the plan: a change while it runs makes the next launch plan again
  // The policy gave the reason: asked again at each launch (Policy::unsplit_again).
  std::optional<sched::LaunchShape> policy_shape;
  bool by_home_times = false;  // "too_small" by home's timings: kept while they are as they were
  bool exec_info_set = false;  // the kernel's, read with its arguments
  // "preparing": the History's kernel key and the launch's work-items, which each launch taking the
  // plan over counts (History::note_launch), for kPreparingHold at most.
  std::optional<std::pair<std::string, uint64_t>> counts_launch;
  // "preparing" while the program's process does not pay yet: each launch that takes the plan over
  // counts among the kernel's launches before it (first_launch_probe::process_pays).
  std::shared_ptr<std::atomic<uint64_t>> counts_before_process;
  std::vector<bool> written;  // per argument: whether the launch may write it
  // The reason holds whatever the values of the arguments that are plain values (not a buffer the
  // registry tracks, nor __local, nor SVM): "too_small" (by the launch's size, home's times of that
  // size, the devices held back) and "preparing" read none of them. A launch whose values alone
  // changed takes such a plan over (a factorization's column index: benchmarks/lu's updates keep one
  // size for 16 launches, each with its own index, and every one of them was planned in full).
  bool any_values = false;
};

// The tracked buffers among `args` that the launch may write: `written[i]` false leaves argument i
// out; arguments beyond `written` count as written (nothing is known of them).
std::vector<std::shared_ptr<model::BufferRecord>> written_buffers(Services& services,
                                                                  const std::vector<model::KernelArgValue>& args,
                                                                  const std::vector<bool>& written);

class RepeatedLaunches {
 public:
  // `preparing_hold`: kPreparingHold but in tests, whose clock may stop longer than that under a
  // sanitizer on a loaded machine.
  explicit RepeatedLaunches(std::chrono::microseconds preparing_hold = kPreparingHold)
      : preparing_hold_(preparing_hold) {}
  // The decision for this launch, into `decision` (left as it was when false), when an earlier launch
  // of `kernel` with the same queue, geometry and argument values (the plain values aside where the
  // reason reads none: RepeatableDecision::any_values) was kept on home for a reason that still holds.
  // Not an optional: at every repeated launch its moves and destructions were a tenth of coex's
  // instructions.
  bool find(Services& services, const std::shared_ptr<model::KernelRecord>& kernel, const LaunchRequest& request,
            LaunchDecision& decision);
  // Keeps `decision` (made for `request` with `args`) for the launches that repeat it, from the second
  // launch with its queue, geometry and arguments on: a factorization's launches change size or
  // arguments at every launch (benchmarks/gram_schmidt: a column index) and repeat none where the
  // reason reads the values, and keeping each of their plans cost about 5,000 instructions a launch.
  void remember(Services& services, const std::shared_ptr<model::KernelRecord>& kernel, const LaunchRequest& request,
                const std::vector<model::KernelArgValue>& args, const LaunchDecision& decision,
                const RepeatableDecision& repeatable);

  // How long a "preparing" plan is taken over: what ends the preparation (a build, the analysis) is
  // seen by the first launch planned after it, at most this late.
  static constexpr std::chrono::microseconds kPreparingHold{1000};
  // Per kernel, the last few distinct launches (ping-pong buffers alternate between two).
  static constexpr size_t kPerKernel = 4;
  static constexpr size_t kKernels = 256;

 private:
  std::chrono::microseconds preparing_hold_;
  // The queue and geometry of a launch.
  struct Geometry {
    cl_command_queue queue = nullptr;
    cl_uint work_dim = 0;
    bool has_offset = false, has_local = false;
    std::array<size_t, 3> offset{}, global{}, local{};
    static Geometry of(const LaunchRequest& request);
    bool matches(const LaunchRequest& request) const;
    bool operator==(const Geometry& other) const;
  };
  struct Entry {
    Geometry geometry;
    std::vector<model::KernelArgValue> args;
    // Per argument, where the reason reads no value (RepeatableDecision::any_values; empty otherwise):
    // whether it was a plain value (not a tracked buffer, nor __local, nor SVM), which a launch may change.
    std::vector<bool> plain_values;
    bool exec_info_set = false;
    PlanVersions versions;
    bool by_home_times = false;  // the decision read home's timings: their version counts too
    std::optional<std::pair<std::string, uint64_t>> counts_launch;  // RepeatableDecision's
    std::shared_ptr<std::atomic<uint64_t>> counts_before_process;   // RepeatableDecision's
    std::chrono::steady_clock::time_point valid_until = std::chrono::steady_clock::time_point::max();
    std::string reason;
    std::string kernel_name;
    std::optional<sched::LaunchShape> policy_shape;
    std::shared_ptr<const report::GateRecord> gate;
    std::vector<bool> written;
    int home = -1;
    // The records of the written buffers, as the registry gave them at `buffers_version`: while no
    // buffer was created or released since, a repeat takes them instead of looking each up again.
    // Weak: an entry must not keep a released buffer's record (and its host copy) alive.
    std::vector<std::weak_ptr<model::BufferRecord>> written_records;
    uint64_t buffers_version = UINT64_MAX;  // none looked up yet: the registry's version starts at 0
  };
  struct PerKernel {
    std::weak_ptr<model::KernelRecord> kernel;  // the entries are of this record, not of a later one at its address
    std::vector<Entry> entries;                 // newest first
    size_t next_guess = 0;                      // where find starts looking (modulo the entries)
    // Launches planned once and not kept (remember), by geometry and a hash of their arguments (of
    // their plain values' sizes alone where the reason reads none of them): a plan is kept from the
    // second launch with both on. Newest first, at most kPerKernel.
    std::vector<std::pair<Geometry, uint64_t>> seen;
  };

  // The entry's written buffers into `out` (emptied first; its capacity kept, so that a repeat does
  // not allocate), from the entry's cached records while the buffers' registry is unchanged.
  static void written_buffers_of(Services& services, Entry& e, std::vector<std::shared_ptr<model::BufferRecord>>& out);
  // Whether `args` are the entry's, or differ from them only in the values of its plain-value arguments
  // (where the entry's reason reads none) and none of those is now a buffer the registry tracks.
  static bool args_match(Services& services, const Entry& e, const std::vector<model::KernelArgValue>& args);

  std::mutex mutex_;
  std::map<const model::KernelRecord*, PerKernel> kernels_;
};

}  // namespace coex::exec
