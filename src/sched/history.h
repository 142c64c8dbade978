// Performance history per (kernel, global size, device), across launches and, through a JSON cache
// file, across runs: a second run of a program starts balanced (docs/schedulers.md, "History").
//
// What is kept per (kernel_key, global_size, device index):
//  - the measured throughput in work-groups per second, transfers included: groups over
//    seconds of its chunks, the sums of earlier launches decayed (x0.3 per launch), so that a device
//    that slowed down is seen after one launch, however large its earlier chunks were;
//  - the last chunk samples (groups, seconds, transfer seconds) for the fitted time models;
// and per (kernel_key, global_size): the launches seen and the shares of the Strack policies; per
// kernel_key: whether sigmoid found its cost regular (auto's rule reads it); per (kernel_key,
// global_size, set of devices): the measured wall time of whole split launches (from the start of the
// job to the end of its merge), decayed like the throughput sums. Chunk times miss much of what a split
// costs (the host-copy refresh, hand-offs between device threads, read-backs, the merge): auto compares
// this time with the home device alone (docs/schedulers.md, "The auto rule").
//
// Device sets: the file keeps one history per signature of the device set (kMaxDeviceSets at most, the
// most recently saved first), so that a run on another set (POCL_DEVICES, COEX_DEVICES, a GPU added)
// neither reads nor destroys the history of this one. The kernel key contains a hash of the source, so
// a changed source finds no entries; the stale ones are dropped when the cache is over capacity (least
// recently used first).
// Thread-safe: every member locks, except evidence_version(), an atomic read.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sched/device_map.h"
#include "sched/policy.h"
#include "sched/split_math.h"

namespace coex::sched {

struct ChunkSample {
  double groups = 0;
  double seconds = 0;
  double transfer_seconds = 0;
};

class History {
 public:
  // Samples kept per (kernel, size, device); the sums decay by kLaunchDecay at each launch counted.
  static constexpr size_t kMaxSamples = 32;
  static constexpr double kLaunchDecay = 0.3;
  // Split launch times kept per (kernel, size, set of devices), for split_launch_seconds' median.
  static constexpr size_t kRecentSplits = 3;
  // Entries (kernel, size) kept in memory and in the file, per device set.
  static constexpr size_t kMaxEntries = 512;
  // Device sets kept in one file: this one and the most recently saved others.
  static constexpr size_t kMaxDeviceSets = 8;

  // What the last load() found, for the report.
  struct LoadOutcome {
    std::string file;       // the path given to load(); empty before any load
    std::string state;      // "loaded", "no_file", "new_device_set" or "unreadable"
    size_t entries = 0;     // (kernel, size) entries read for this device set
    size_t other_sets = 0;  // histories of other device sets the file keeps
    std::string detail;     // the error, when unreadable
  };

  explicit History(std::string device_signature = "");

  const std::string& device_signature() const { return signature_; }

  void record_chunk(const std::string& kernel_key, uint64_t global_size, const ChunkTiming& timing);
  // Counts a finished launch of that kernel and size (and ages its throughput sums and split times).
  void note_launch(const std::string& kernel_key, uint64_t global_size);
  // The launch's number among the launches of that kernel and size, given when the app enqueues it:
  // the launches counted so far or planned before it, whichever is more. A launch is counted
  // (note_launch) only when it ends, and the executor plans the next ones meanwhile; auto's probe rule
  // reads this number so that one probe is one launch (not all those enqueued while it runs).
  uint64_t plan_launch(const std::string& kernel_key, uint64_t global_size);
  // plan_launch and note_launch at once, for a launch run unsplit, unless `declines` says no to the
  // number it would get, counted from probe_origin (auto: a probe's): nullopt, and nothing counted. One step, so that
  // two threads cannot both take the number before a probe's and leave the probe to neither.
  std::optional<uint64_t> count_unsplit_launch(const std::string& kernel_key, uint64_t global_size,
                                               const std::function<bool(uint64_t)>& declines);

  // Launch `number` of that kernel and size is to be split over `devices` (in memory only): returns
  // whether launch number - 1 was split over the same set with the same `buffer_writes`
  // (LaunchShape::buffer_writes), so that each device's part of the data already lies where this launch
  // needs it (record_split_launch's `follows_split`). benchmarks/jacobi writes its grid every 100
  // launches: the next two splits moved it whole, and taken for steady they turned the verdict to home.
  // `probe`: the split is one of auto's probes (restart_probes).
  bool plan_split(const std::string& kernel_key, uint64_t global_size, uint64_t number, std::vector<int> devices,
                  bool probe = false, uint64_t buffer_writes = 0);
  // Launch `number` of that kernel and size is kept on home: where launch number - 1 was split and was
  // no probe (a verdict that turned), auto's probes count again from it (probe_origin; in memory only).
  void restart_probes(const std::string& kernel_key, uint64_t global_size, uint64_t number);
  // The launch number auto's probes are counted from: the launches the file held at load (0 without
  // one), or the last restart_probes that took.
  uint64_t probe_origin(const std::string& kernel_key, uint64_t global_size) const;
  // What a cold split's time says beyond its one-time costs: the seconds the device that waited longest
  // for its chunks' data spent waiting (ChunkTiming::transfer_seconds summed by device, home left
  // out), over `devices`, with the launch's buffer writes (LaunchShape::buffer_writes). A split after
  // the app wrote those buffers moves the data again, a switch, and takes at least that long
  // (auto_gate).
  struct ColdTransfers {
    std::vector<int> devices;  // sorted
    double seconds = 0;
    uint64_t buffer_writes = 0;
  };
  // Split launch `number` of that kernel and size paid one-time costs (a device's first run of the
  // kernel), and its devices waited `transfers` for their data; cold_split says whether a launch was
  // that one, cold_transfers what it waited (in memory only, the last one marked).
  void note_cold_split(const std::string& kernel_key, uint64_t global_size, uint64_t number, ColdTransfers transfers);
  bool cold_split(const std::string& kernel_key, uint64_t global_size, uint64_t number) const;
  std::optional<ColdTransfers> cold_transfers(const std::string& kernel_key, uint64_t global_size) const;
  // The wall time of one whole split launch in which `devices` took part (any order), and what the
  // launch would have taken on home alone by the policy's estimate then, when it had one.
  // `follows_split`: the launch before it of the kernel and size was split over the same set
  // (plan_split), by the same choice of policy (auto: AutoTrack::last_split_choice). A split after a launch left on
  // home first moves every device's part of the data back to it, where a split after a split moves what changed at the
  // parts' edges: the time of a split that follows one is what splitting costs launch after launch (benchmarks/jacobi
  // over eight single-threaded PoCL devices: 3.3 to 3.6 ms after a launch on home, 1.8 ms after a split).
  void record_split_launch(const std::string& kernel_key, uint64_t global_size, std::vector<int> devices,
                           double seconds, std::optional<double> home_alone = std::nullopt, bool follows_split = false);
  // The lower median of the last kRecentSplits of those times that followed a split where there is one,
  // else of all of them (of two, the smaller); nullopt when no split launch over exactly that set was
  // measured. A median, not the decayed mean that weighs the last launch most: the gate keeps launches on
  // home by this figure and no split measures it again until a probe, and over two single-threaded PoCL
  // devices one jacobi split of 3.2 ms among splits of 1.7 ms (home alone 3.5 ms) kept home for the
  // next 28 launches. A change that lasts shows in the second split that meets it (a probe's streak of
  // auto_probe_streak 3 makes two that follow a split).
  std::optional<double> split_launch_seconds(const std::string& kernel_key, uint64_t global_size,
                                             std::vector<int> devices) const;
  // How many split launches over exactly that set were measured after a split of it (their steady
  // cost), at most kRecentSplits; one for a set read from a file written before the last times were
  // kept, where its aged mean stands for them.
  size_t steady_splits_measured(const std::string& kernel_key, uint64_t global_size, std::vector<int> devices) const;
  // How many split launches over exactly that set were measured at this size, in this run and the runs
  // the file holds.
  uint64_t splits_measured(const std::string& kernel_key, uint64_t global_size, std::vector<int> devices) const;
  // At the nearest global size of the kernel above `global_size` where a split over `devices`, or over
  // a set that holds them all (the smallest such), was measured beside an estimate of home alone: the
  // split's time as split_launch_seconds says it there, and the decayed mean of home alone's estimates.
  struct SplitAbove {
    uint64_t global_size = 0;  // the size it was measured at
    std::vector<int> devices;  // the set measured: `devices` or the smallest superset
    double seconds = 0;        // the split launch, as split_launch_seconds says it there
    double alone = 0;          // the decayed mean of home alone's estimates beside it
  };
  std::optional<SplitAbove> split_above(const std::string& kernel_key, uint64_t global_size,
                                        std::vector<int> devices) const;
  // A split set measured at one size: its split_launch_seconds, steady_splits_measured and splits_measured.
  struct MeasuredSplit {
    std::vector<int> devices;
    double seconds = 0;
    size_t steady = 0;
    uint64_t count = 0;
  };
  // The sets of two or more devices measured at this size that lie within `devices`, `devices` itself
  // left out.
  std::vector<MeasuredSplit> splits_within(const std::string& kernel_key, uint64_t global_size,
                                           std::vector<int> devices) const;
  // Split launches of that kernel and size planned but not ended (in memory only, not in the file).
  void split_started(const std::string& kernel_key, uint64_t global_size);
  void split_ended(const std::string& kernel_key, uint64_t global_size);
  uint64_t splits_in_flight(const std::string& kernel_key, uint64_t global_size) const;
  // Whether a split of the kernel, at any size, is in flight.
  bool kernel_split_in_flight(const std::string& kernel_key) const;

  std::optional<double> throughput(const std::string& kernel_key, uint64_t global_size, int device) const;
  // Oldest first; the newest `last` of them only, where `last` is not 0.
  std::vector<ChunkSample> samples(const std::string& kernel_key, uint64_t global_size, int device,
                                   size_t last = 0) const;
  // Samples of that kernel at any global size (the same size first), newest last within each size.
  std::vector<ChunkSample> samples_any_size(const std::string& kernel_key, int device) const;
  uint64_t launches(const std::string& kernel_key, uint64_t global_size) const;

  DeviceShares shares(const std::string& kernel_key, uint64_t global_size) const;
  void set_shares(const std::string& kernel_key, uint64_t global_size, const DeviceShares& shares);
  // The shares wp's launches between devices of one kind were last split by: they follow `shares` (the
  // running update) only for a gain (StrackPolicy, worth_moving). Not in the file.
  DeviceShares layout_shares(const std::string& kernel_key, uint64_t global_size) const;
  void set_layout_shares(const std::string& kernel_key, uint64_t global_size, const DeviceShares& shares);

  // What auto keeps of a kernel and size from one launch to the next within the process (each split
  // launch has a policy object of its own; not in the file): how its last wp launches balanced, and
  // which of wp and wp+tail it picked first.
  struct AutoTrack {
    int wp_launches = 0;
    double last_wp_balance = 0;
    bool remeasure = false;
    // wp or wp+tail, as first picked: the chunk-time fits it was picked from mix launches at other
    // paces later on (a line through them gets a large intercept), and would switch a machine whose
    // pace changes to wp without its tail.
    std::string shares_choice;
    // A wp+tail launch's chunks away from home mostly moved data: wp from then on (AutoPolicy::end_launch).
    bool tail_moves_data = false;
    // The last split's choice of policy (auto_choice): a split after one by another choice finds the
    // data where that one left it (sigmoid's chunks, then wp's shares): no steady measurement.
    std::string last_split_choice;
    // The times of the last steady launches by wp's shares without and with the tail, and whether the
    // two were weighed against each other: the faster is then kept (AutoPolicy::launch_measured).
    std::vector<double> wp_times, tail_times;
    bool tail_weighed = false;
  };
  AutoTrack auto_track(const std::string& kernel_key, uint64_t global_size) const;
  void set_auto_track(const std::string& kernel_key, uint64_t global_size, const AutoTrack& track);

  // What wp's layout moves between devices of one kind have paid (StrackPolicy, layout_may_move):
  // the gain a move must promise, and where the last move's judgement stands. Not in the file.
  struct LayoutTrack {
    double least_gain = 0;  // 0: wp's own (kLeastLayoutGain)
    enum class Stage { kSteady, kMoved, kJudging } stage = Stage::kSteady;
    std::vector<double> recent;  // the times of the last launches before a move (kSteady)
    double before = 0;           // their median when the layout moved
    double moving = 0;           // the time of the launch that ran the new layout first
    std::vector<double> after;   // the times of the launches after that one (kJudging)
  };
  LayoutTrack layout_track(const std::string& kernel_key, uint64_t global_size) const;
  void set_layout_track(const std::string& kernel_key, uint64_t global_size, const LayoutTrack& track);

  // The same for plbhec: the models of its last profiling of the kernel and size, per device, and
  // whether the finish times drifted apart since (the next launch profiles again).
  struct PlbhecTrack {
    bool reprofile = false;
    std::map<int, AffineModel> models;
  };
  PlbhecTrack plbhec_track(const std::string& kernel_key, uint64_t global_size) const;
  void set_plbhec_track(const std::string& kernel_key, uint64_t global_size, const PlbhecTrack& track);

  // Whether the kernel's cost per work-group looked regular the last time someone could tell.
  std::optional<bool> regular(const std::string& kernel_key) const;
  void set_regular(const std::string& kernel_key, bool regular);
  // A launch's judgement of the kernel's regularity (sigmoid's range test): kept as set_regular
  // does, except that a kernel known to be irregular is taken as regular only at the second regular
  // judgement in a row (in memory: a run's first launch of it judges once more). A regular judgement
  // is the weaker evidence: coarse packages hide a cost that follows the range (benchmarks/mandelbrot
  // over two single-threaded devices on the device machine: a second run's first launch, its packages
  // sized from the first run's speeds, judged it regular; wp+tail and a launch on home alone followed,
  // 1.05 s by kernels against 0.78 to 0.84 s in the runs that kept it irregular), and taking an
  // irregular kernel for regular costs more than the reverse.
  void judge_regular(const std::string& kernel_key, bool regular);

  // The programs (by source hash, as in the kernels' keys) whose run let a late device in (auto_late_devices,
  // exec/late_devices.h): a later run of one prepares them at clBuildProgram, as the program ran long.
  // At most kLateLetInKept, the last noted kept.
  void note_late_let_in(uint64_t program_hash);
  void forget_late_let_in(uint64_t program_hash);
  bool late_let_in(uint64_t program_hash) const;
  static constexpr size_t kLateLetInKept = 256;

  // A number that changes whenever what a policy's models are fitted to changes: a chunk sample or a
  // split launch's time recorded, a kernel's regularity set, an entry dropped, a load or a clear.
  // Counting launches does not change it (the decay leaves every mean as it was). auto keeps its gate's
  // fits until it changes: computed again at every launch, they doubled the cost of a launch left on
  // home (benchmarks/stencil1d: 20,000 launches of a few microseconds).
  uint64_t evidence_version() const;

  void clear();
  size_t entry_count() const;

  // Reads this device set's history from a cache file. A missing file is not an error (returns true,
  // empty). A file without this device set loads nothing (returns true, *note says so). A malformed
  // file returns false with *error set; the history is unchanged in both non-loading cases.
  bool load(const std::string& path, std::string* error = nullptr, std::string* note = nullptr);
  LoadOutcome last_load() const;
  // Writes the cache file (parent folders created, written to a temporary and renamed, so a reader
  // never sees half a file), keeping the histories of the other device sets the file holds now.
  // Returns false with *error on failure.
  bool save(const std::string& path, std::string* error = nullptr) const;

 private:
  struct DeviceRecord {
    double groups = 0;  // decayed sums
    double seconds = 0;
    uint64_t chunks = 0;
    std::vector<ChunkSample> recent;
  };
  struct SplitRecord {
    double seconds = 0;  // decayed sums: the mean is seconds / weight
    double weight = 0;
    uint64_t count = 0;
    double alone = 0;  // decayed sums of home alone's estimates: the mean is alone / alone_weight
    double alone_weight = 0;
    double steady = 0;  // decayed sums of the launches that followed a split (record_split_launch)
    double steady_weight = 0;
    // The last kRecentSplits of all of them and of the steady ones; `recent` is never empty where the
    // record is (record_split_launch, load).
    std::vector<double> recent, recent_steady;
    double estimate() const;  // what split_launch_seconds says
  };
  struct Entry {
    std::map<int, DeviceRecord> devices;
    DeviceShares shares;
    DeviceShares layout_shares;
    std::map<std::vector<int>, SplitRecord> splits;  // by the sorted set of devices taking part
    uint64_t launches = 0;
    // The launches whose decay the sums above hold (settle_decay): count_launch only counts, so that a
    // launch left on home costs the same over eight devices and their many split sets as over two.
    uint64_t decayed_launches = 0;
    uint64_t planned = 0;  // plan_launch's next number; not in the file (the launches count is)
    // The last launch plan_split saw, and its devices; not in the file.
    std::optional<uint64_t> last_split;
    std::vector<int> last_split_devices;
    bool last_split_probe = false;
    uint64_t last_split_writes = 0;
    uint64_t probe_origin = 0;                    // the launches at load, or restart_probes'; not in the file
    std::optional<uint64_t> last_cold_split;      // note_cold_split's; not in the file
    std::optional<ColdTransfers> cold_transfers;  // note_cold_split's; not in the file
    AutoTrack auto_track;                         // not in the file
    LayoutTrack layout_track;                     // not in the file
    PlbhecTrack plbhec_track;                     // not in the file
    uint64_t last_use = 0;
  };
  using Key = std::pair<std::string, uint64_t>;
  // Looked up without a copy of the kernel's key: a launch kept on home counts itself here at every
  // launch (docs/performance.md, "Launches left on home").
  using KeyRef = std::pair<std::string_view, uint64_t>;
  struct KeyLess {
    using is_transparent = void;
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      const std::string_view ka = a.first, kb = b.first;
      return ka < kb || (ka == kb && a.second < b.second);
    }
  };
  using Entries = std::map<Key, Entry, KeyLess>;

  Entry& touch(const std::string& kernel_key, uint64_t global_size);  // creates; caller holds the lock
  // The split record over exactly `devices` at that size, or null; the caller holds the lock.
  const SplitRecord* split_record(const std::string& kernel_key, uint64_t global_size, std::vector<int> devices) const;
  void count_launch(Entry& e);  // note_launch's count; caller holds the lock
  // Applies the decay of the launches counted since the last settlement to the entry's sums: before a
  // sum grows, and for the file. A mean (a sum over its weight) does not change by it.
  static void settle_decay(Entry& e);
  // set_regular's and judge_regular's record of a judgement; the caller holds the lock.
  void keep_regular(const std::string& kernel_key, bool regular);
  // `devices` sorted, each once: the key of a set of devices.
  static std::vector<int> device_set(std::vector<int> devices);
  // Keeps the last kRecentSplits values of `window`, `value` the newest.
  static void keep_recent(std::vector<double>& window, double value);
  void evict_over_capacity();
  // Whether an entry holds what a policy's verdicts read (samples, shares, split times, tracks), more
  // than launch counts.
  static bool holds_evidence(const Entry& e);
  // One field of an entry, read (a default one when there is no entry) or written under the lock:
  // the shares and the policies' tracks.
  template <typename Field>
  Field entry_field(const std::string& kernel_key, uint64_t global_size, Field Entry::*field) const;
  template <typename Field>
  void set_entry_field(const std::string& kernel_key, uint64_t global_size, Field Entry::*field, const Field& value);

  mutable std::mutex mutex_;
  std::string signature_;
  Entries entries_;
  std::map<std::string, bool> regular_;
  std::set<std::string> regular_once_;          // known irregular, judged regular once since (judge_regular)
  std::vector<uint64_t> late_let_in_;           // note_late_let_in's, the last noted last; kept in the file
  std::map<Key, uint64_t, KeyLess> in_flight_;  // apart from entries_: eviction must not lose a count
  uint64_t clock_ = 0;
  // evidence_version(): changed under mutex_, read without it (every launch that repeats one left on
  // home reads it: exec/repeated_launches.h).
  std::atomic<uint64_t> evidence_{0};
  LoadOutcome last_load_;
};

// A signature of the device set: changes when a device is added, removed, reordered or replaced.
std::string device_set_signature(const std::vector<DeviceProfile>& devices);

// $XDG_CACHE_HOME/coex/history.json, else $HOME/.cache/coex/history.json, else "" (no cache).
// (COEX_CACHE, which overrides it, is read by the config layer.)
std::string default_history_path();

}  // namespace coex::sched
