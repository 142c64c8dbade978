// The scheduler interface: a policy decides which device runs which work-groups of one launch.
// The executor (src/exec/) and the simulator (src/sched/simulator) drive the same policy code.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace coex::sched {

class History;

// What a policy may know of a device before it has measured anything.
struct DeviceProfile {
  int index = 0;  // coex device index, as `coex devices` and the report show it
  std::string name;
  bool is_gpu = false;
  bool is_cpu = false;
  unsigned compute_units = 1;
  unsigned clock_mhz = 0;
  double mem_bandwidth_gbs = 0;  // 0 when unknown
  // Work-groups per compute unit this device needs for full occupancy (1 on CPUs).
  unsigned groups_per_cu_for_occupancy = 1;
  // Measured transfer bandwidth host->device and device->host, GB/s; 0 when unknown. Only `predict`
  // reads them (its transfer term); nothing else changes meaning with them.
  double h2d_gbs = 0;
  double d2h_gbs = 0;
  // Reached over the network (PoCL's remote driver, docs/remote.md): its guesses from the
  // specification count for less (spec_weight), and the History keeps it apart from a local twin.
  bool remote = false;
};

// One launch as the policy sees it: work counted in work-groups along the split dimension.
struct LaunchShape {
  std::string kernel_key;        // identifies the kernel (name + source hash) across launches and runs
  uint64_t total_groups = 0;     // work-groups along the split dimension
  uint64_t items_per_group = 1;  // work-items in one of those groups (all dimensions)
  // Work-groups of the other dimensions that one group of the split dimension stands for: a device
  // is kept busy by fewer split groups when each is a row of many work-groups.
  uint64_t groups_per_slice = 1;
  uint64_t global_size = 0;  // total work-items of the launch: the history is kept per size
  // Bytes one work-group of the split dimension must move to the device and back when it runs away
  // from where its data lives (from the footprints); 0 when unknown. Only `predict` reads them.
  double bytes_in_per_group = 0;
  double bytes_out_per_group = 0;
  // The device the app enqueued the launch on; -1 when there is none (the simulator). Only there can a
  // launch run unsplit, at the cost of a plain launch: auto weighs a split against it.
  int home = -1;
  // What an unsplit launch of this kernel and size took on home, measured there with the app's queue
  // drained first (exec/home_launch_times.h, drained_home_key); unset where none was. auto weighs a
  // split against it rather than against its estimate from home's chunks, which a kernel whose
  // working set fits a cache in chunks but not whole puts far too low (benchmarks/jacobi over eight
  // single-threaded devices: 1.9 ms estimated, 3.3 ms measured).
  std::optional<double> home_measured_seconds;
  // This launch's number among those of the kernel and size, given when the app enqueued it
  // (History::plan_launch); unset: the History's count of launches at begin_launch. auto's probes
  // read it: the executor plans later launches while this one still runs.
  std::optional<uint64_t> launch_number;
  // The launch before this one of the kernel and size was split over the same devices, and nothing
  // wrote the launch's buffers in between (History::plan_split): each device's part of the data lies
  // where this launch needs it.
  bool follows_split = false;
  // The writes to the launch's buffers so far by the app and by launches run on home (the sum of their
  // coherence::BufferState generations, as the planner read them): a split after a split of the kernel
  // and size with another sum moves the bytes written whole. 0 where unknown (the simulator).
  uint64_t buffer_writes = 0;
  // Each device's kind by device index (range_variation.h, device_kinds): on an irregular kernel auto
  // pools the chunks of one kind, which together cover the range. Empty: each device a kind of its own.
  std::vector<int> device_kinds;
  // The devices the policy's gate split the launch over when the app enqueued it (GateVerdict::
  // devices), where it weighed a measured split; empty otherwise. auto's begin_launch takes those of
  // them that are ready rather than weighing the same evidence again.
  std::vector<int> gate_devices;
};

// What a policy's gate saw when it decided whether to split a launch (Policy::unsplit_reason), for the
// report: auto's verdict and the measurements it came from.
struct GateVerdict {
  uint64_t launch = 0;                  // the launch's number among those of its kernel and size
  std::vector<int> devices;             // the devices the launch is split over; home alone: kept on home
  bool probe = false;                   // one of auto's periodic probes
  std::vector<int> measured_devices;    // the split the measurements below are of
  std::optional<double> split_seconds;  // a whole split launch over measured_devices (History's median)
  std::optional<double> home_seconds;   // the launch on home alone, estimated from home's chunks
  uint64_t measured_size = 0;           // the larger global size those figures are of; 0: this size
  // split_seconds is not a split's time but what a cold split's devices waited for their data, which a
  // split after the app's writes pays again (auto_gate, GateEvidence::cold_transfers).
  bool cold_transfers = false;
};

// Work-groups [begin, end) of the split dimension, on one device.
struct Chunk {
  int device = 0;
  uint64_t begin = 0;
  uint64_t end = 0;
  uint64_t groups() const { return end - begin; }
};

// A finished chunk. seconds is the whole job of that chunk: its transfers included.
struct ChunkTiming {
  Chunk chunk;
  double start = 0;  // seconds since the launch began
  double end = 0;
  // The part of seconds() spent moving data, where the executor knows it (0 otherwise). `predict`
  // fits its compute model on seconds() - transfer_seconds and adds its own transfer term.
  double transfer_seconds = 0;
  // The device's first run of the kernel in this form (exec/pocl_compiles.h): its time includes the
  // driver's one-time work, so that the History keeps no sample of it (policies still see it).
  bool first_run = false;
  double seconds() const { return end - start; }
};

// What sigmoid concluded of a kernel's regularity at the end of a launch (sigmoid_policy.h,
// range_variation.h), for the report.
struct RegularityVerdict {
  bool irregular = false;             // what the History keeps for the kernel's later launches
  bool window_spread = false;         // a device's window of packages varied beyond sigmoid_cv_threshold
  size_t packages = 0;                // the packages the range test counted (first runs left out)
  double spread = 0;                  // their paces' sigma/mean
  std::optional<double> range_ratio;  // von Neumann's ratio of those paces' logarithms in range order
};

// The contract with the executor:
//  - begin_launch, then each device of `devices` calls next_chunk when idle; a finished chunk is
//    reported through chunk_done before that device asks again;
//  - next_chunk returns std::nullopt when that device gets no more work in this launch;
//  - over a launch the chunks handed out cover [0, total_groups) exactly once, without overlap;
//  - end_launch when every device has returned nullopt and every chunk is done (abandoned chunks,
//    below, excepted).
// Calls are serialised by the caller: a policy needs no lock of its own.
// Optional calls (their defaults keep the meaning above for a caller that ignores them):
//  - take_abandoned(): after each next_chunk the caller collects the chunks the policy took back from a
//    device that completed nothing (Boyer's stuck-device rule) and handed out again. The caller must
//    drop that device's results for such a chunk; no chunk_done is due for it (one that comes anyway is
//    ignored); that device gets no more work in this launch. A reissued range may thus overlap an
//    abandoned one, never a live one.
//  - planned_by(): which policy planned the current launch (auto names the one it picked), for the report.
//  - eliminated(): devices left without work in the current launch because they would not pay.
//  - regularity(): after end_launch, what the launch concluded of the kernel's regularity (sigmoid).
// Added for auto's split-cost rule:
//  - launch_measured(seconds): after end_launch, the caller's wall time of the whole launch, from
//    the start of its job to the end of its merge (host copies, hand-offs, read-backs and the merge
//    included, which chunk times miss). The executor reports it for launches that were split; the
//    simulator does not.
// Asked before a launch is split, by the executor's planner on the app's threads while other launches
// run (so const: they read the parameters and touch only the History, which locks itself):
//  - waits_for_preparation(): launches wait for what a split needs (the kernel analysis, the builds
//    on the other devices); false: until those are ready, launches run on home as the app made them
//    (docs/design.md, "One-time costs").
//  - unsplit_reason(shape, devices, verdict): why the launch should run on shape.home alone, unsplit,
//    or null to split it over `devices`. It may number the launch (shape.launch_number), so that the
//    policy's begin_launch later sees the probe decided here, and say why in `verdict` (when given).
//  - unsplit_again(shape, reason, verdict): for a launch like an earlier one that unsplit_reason kept on
//    home for `reason`, with nothing its gate read changed since (the History's evidence version, the
//    devices taking part): whether that verdict stands for this launch too, so that the planner need
//    not ask unsplit_reason again (exec/repeated_launches.h). When it does, the launch is counted as
//    unsplit_reason counts one it keeps on home, and `verdict` gets its number. False (the default):
//    the launch is planned in full.
//  - guesses_pace_by_specification(): while nothing is measured, take-over may judge a device slow
//    by what its specification promises; false: the user fixed the shares, only a stall is taken over.
// Added for take-over (sched/launch_driver.h):
//  - device_taken_over(device, now): another device redoes every range `device` took in this launch;
//    it gets nothing more, its running chunk's time never comes, and what the policy had set aside
//    for it goes to the devices that ask next (they ask again after a take-over). Without it, a
//    policy that holds work back until every device has measured a chunk (plbhec, adaptive, predict)
//    waited for the device taken over, and the launch ended with work nobody ran.
// Added for devices still building when a launch begins (docs/design.md, "One-time costs"):
//  - add_device(device, now): right after begin_launch, a device that was not ready then. It takes
//    part from its first next_chunk on, which may come late or never. Only a policy that hands out
//    the front of the range on demand takes one (nothing may be set aside for a device that may never
//    ask); false: it is left out of the launch.
//  - expect_late_devices(devices): before begin_launch, the devices that will ask to join (add_device)
//    once their builds end. A policy that picks another per launch (auto) then picks one that takes
//    them: a second run of nbody over 15 devices found its History, and auto picked wp, which set the
//    whole first launch aside for home, the only device built then (0.40 s, against 0.03 s with all).
//  - takes_late_devices(): whether add_device may take a device.
class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string name() const = 0;
  virtual void begin_launch(const LaunchShape& shape, const std::vector<int>& devices, double now) = 0;
  virtual std::optional<Chunk> next_chunk(int device, double now) = 0;
  virtual void chunk_done(const ChunkTiming& timing) = 0;
  virtual void end_launch(double now) { (void)now; }
  virtual std::vector<Chunk> take_abandoned() { return {}; }
  virtual std::string planned_by() const { return name(); }
  virtual std::vector<int> eliminated() const { return {}; }
  virtual std::optional<RegularityVerdict> regularity() const { return std::nullopt; }
  virtual void launch_measured(double seconds) { (void)seconds; }
  virtual bool waits_for_preparation() const { return true; }
  virtual const char* unsplit_reason(LaunchShape& shape, const std::vector<int>& devices,
                                     GateVerdict* verdict = nullptr) const {
    (void)shape;
    (void)devices;
    (void)verdict;
    return nullptr;
  }
  virtual bool unsplit_again(const LaunchShape& shape, const std::string& reason, GateVerdict* verdict) const {
    (void)shape;
    (void)reason;
    (void)verdict;
    return false;
  }
  virtual bool guesses_pace_by_specification() const { return true; }
  virtual bool add_device(int device, double now) {
    (void)device;
    (void)now;
    return false;
  }
  virtual void device_taken_over(int device, double now) {
    (void)device;
    (void)now;
  }
  virtual void expect_late_devices(const std::vector<int>& devices) { (void)devices; }
  virtual bool takes_late_devices() const { return false; }
};

}  // namespace coex::sched
