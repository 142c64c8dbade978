// The run report (COEX_REPORT): what coex did with each kernel, written as JSON at process exit.
// Shape (later versions add keys, these names stay):
//   { "format": "coex-report", "version": 1, "pid", "mode": "layer|preload", "policy": "static",
//     "settings": {...}, "history": {"file", "state", "entries", "other_device_sets", "device_set"},
//     "trace": "<the COEX_TRACE file, when one was written>",
//     "devices": [{"index", "name", "platform", "type": "CPU|GPU|ACCELERATOR", "home"}],
//     "kernels": [{"name", "launches", "split_launches", "cold_splits", "not_split": {"<reason>": count},
//                  "planned_by": {"<policy>": count}, "probes",
//                  "last_verdict": {"launch", "decision", "devices", "probe", "measured_devices",
//                                   "split_seconds", "home_seconds", "measured_size", "cold_transfers"},
//                  "regularity": {"irregular", "window_spread", "packages", "spread", "range_ratio"},
//                  "bytes_moved", "per_device": [{"index", "work_items", "seconds"}],
//                  "bytes_minimal", "bytes_by_step": {"home_to_host", "host_to_devices",
//                  "devices_to_host", "host_to_home"}, "args": [{"index", "tier", "name"}]}],
//     "builds": [{"device", "builds", "failed", "seconds"}],
//     "late_devices": [{"device", "let_in_after"}],
//     "compile_ahead": {"processes", "made", "ended_at_exit", "served_none", "at_build", "other_kinds",
//                       "seconds", "beyond_limit", "probes", "probe_seconds", "split_after_probe", "held_until_paid"},
//     "totals": {"launches", "split_launches", "bytes_moved", "bytes_minimal", "bytes_home_on_demand",
//                "bytes_fetched_on_demand"} }
// bytes_home_on_demand (lazy home): what the other devices wrote, written to the app's buffers when
// the app needed it there (a read, map, copy, unsplit kernel) rather than at the end of each launch;
// bytes_fetched_on_demand (resident results): the part of it first read from the device that alone
// held it.
// cold_splits: split launches that ran the kernel for the first time on some device (a driver that
// compiles at the first launch makes them slow once): auto does not take their time as a verdict.
// planned_by: the split launches by the policy that planned them (auto names its pick); probes: those
// that were auto's periodic probes; last_verdict (auto): the last launch's gate, with the whole split
// launch's measured time over measured_devices and home's estimated time alone (null: not known),
// and measured_size, the larger global size they were measured at where a verdict for home came from
// one (null: this launch's size).
// regularity: the last judgement of the kernel's regularity (sigmoid, docs/schedulers.md): whether
// it is kept irregular, whether a device's window of packages varied, and the range test's packages,
// their paces' sigma/mean and von Neumann's ratio of the paces' logarithms in range order (null: not
// computed); null when no split launch judged it.
// late_devices (auto_late_devices): the devices given no context nor build until the program had run a
// while, and when each was let in, in seconds from the first launch that could take it (null: never,
// nothing was made for it).
// builds: coex's own builds of the app's programs per device (one-time costs; PoCL also compiles a
// kernel at its first run on a device, which cold_splits count), their number and seconds.
// compile_ahead: the `coex compile-ahead` processes (exec/compile_ahead.h; one-time costs paid in
// processes of their own while launches ran on home): how many ran, made their binary, were ended at
// exit, were started at the app's clBuildProgram (compile_ahead_start), their seconds together (from
// their start until a launch found each ended), and how many programs compiled in
// the app's process instead because as many ran as compile_ahead_processes allows; the first launches
// probed on home (exec/first_launch_probe.h: a piece of each timed there, their seconds together) and
// how many of them were split at once; absent where none ran, was refused nor probed.
// bytes_minimal: what the footprints say each device lacked; bytes_by_step: where bytes_moved went;
// args: the tier each buffer argument was moved with ("exact", "whole", "diff") and its name in the
// source when coex knows it. per_device seconds: the device's busy time on the kernel: in split launches
// its transfers, runs and merges; in launches not split, the time on the app's device from when the
// launch could start (its enqueue, or the end of the unsplit launch before it there) to its completion,
// measured only with a report or a trace (an event and a callback per launch).
// "format" and "version" let `coex report` refuse other JSON; the version changes only when a reader
// of the old version would misread the report.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace coex::report {

constexpr const char* kReportFormat = "coex-report";
constexpr int kReportVersion = 1;

struct ReportDevice {
  int index = 0;  // coex device index, as `coex devices` prints it
  std::string name;
  std::string platform;
  std::string type;  // "CPU", "GPU" or "ACCELERATOR"
  bool home = false;
  bool remote = false;  // served by PoCL's remote driver (docs/remote.md)
};

// One device's part of one launch.
struct DeviceWork {
  int index = 0;
  uint64_t work_items = 0;
  double seconds = 0;  // busy time of that device for this launch: its transfers, runs and merges
};

// Where the bytes of a split launch went: coex stages every transfer through its host copy.
struct BytesByStep {
  uint64_t home_to_host = 0;     // the host copy reads from the app's buffers on the home device
  uint64_t host_to_devices = 0;  // uploads to the other devices' shadows
  uint64_t devices_to_host = 0;  // read-backs of what the devices wrote, and fetches of what only one held
  uint64_t host_to_home = 0;     // merges (and restores) written to the app's buffers
  uint64_t total() const { return home_to_host + host_to_devices + devices_to_host + host_to_home; }
};

// The footprint tier one buffer argument was moved with: "exact", "whole" or "diff".
struct ArgTierRecord {
  int index = 0;
  std::string tier;
};

// Why the policy's gate split a launch or kept it on home (auto: sched/auto_policy.h), as measured.
struct GateRecord {
  uint64_t launch = 0;                // the launch's number among those of its kernel and size
  std::string decision;               // "split", or the reason it ran on home ("one_device_pays", ...)
  std::vector<int> devices;           // the devices it was split over, or home alone
  bool probe = false;                 // one of auto's periodic probes
  std::vector<int> measured_devices;  // the split the two times below are of
  double split_seconds = -1;          // a whole split launch over measured_devices; -1: not measured
  double home_seconds = -1;           // the launch on home alone, measured or estimated; -1: unknown
  uint64_t measured_size = 0;         // the larger global size the two times are of; 0: this launch's
  bool cold_transfers = false;        // split_seconds: a cold split's wait for its data (sched::GateVerdict)
};

// A gate's record as the report's `last_verdict` and the trace's launch slices write it.
nlohmann::json gate_json(const GateRecord& gate);

struct RegularityRecord {
  bool irregular = false;
  bool window_spread = false;
  uint64_t packages = 0;
  double spread = 0;
  double range_ratio = -1;  // -1: not computed
};

// The "regularity" object of a kernel in the report, and of a launch's slice in the trace.
nlohmann::json regularity_json(const RegularityRecord& regularity);

struct LaunchRecord {
  bool split = false;
  std::string planned_by;          // split: the policy that planned it (auto names its pick: auto:wp)
  std::optional<GateRecord> gate;  // when the policy's gate was asked (auto)
  std::string not_split_reason;    // when !split; an empty reason is counted as "unspecified"
  uint64_t bytes_moved = 0;        // host<->device and device<->device bytes coex moved for the launch
  std::vector<DeviceWork> per_device;
  // Summed over devices: the bytes of its chunks' footprints each device did not hold when they ran
  // (what an ideal transfer of inputs would move; the home device lacks nothing).
  uint64_t bytes_minimal = 0;
  BytesByStep bytes_by_step;
  std::vector<ArgTierRecord> args;  // buffer arguments only
  bool cold = false;                // a split with a first sub-launch of the kernel on some device (cold_splits)
  std::optional<RegularityRecord> regularity;  // when the launch judged the kernel's regularity
};

// Thread-safe: launches are recorded from every thread the app calls OpenCL from.
class ReportRecorder {
 public:
  void set_mode(const std::string& mode);
  void set_policy(const std::string& policy);
  void set_devices(const std::vector<ReportDevice>& devices);
  void set_settings(const nlohmann::json& settings);  // coex::config::settings_to_json
  void set_pid(int pid);
  void set_history(const nlohmann::json& history);  // the "history" section: which file, what it held
  void set_trace_file(const std::string& path);
  void record_launch(const std::string& kernel, const LaunchRecord& launch);
  // A launch run unsplit on `home` (-1: unknown), as record_launch would count it, without a
  // LaunchRecord to make and take apart at every launch left on home (the record is made only for
  // the launch observer, when there is one and `observed` says it wants this launch: with a report
  // alone it times one launch in hundreds). `gate` (may be null) is what the policy's gate saw, of
  // launch number `gate_launch`: kept shared, not copied (launches that repeat one left on home share
  // its record, and a copy of it at each was the larger part of this call).
  void record_unsplit(const std::string& kernel, const std::string& reason,
                      const std::shared_ptr<const GateRecord>& gate, uint64_t gate_launch, int home,
                      uint64_t work_items, bool observed = true);
  // Busy time of a launch not split, measured when it completed (after record_launch counted it).
  void add_device_seconds(const std::string& kernel, int device, double seconds);
  // The names of the kernel's arguments in its source, by index: shown beside the tiers.
  bool has_arg_names(const std::string& kernel) const;
  void set_arg_names(const std::string& kernel, const std::vector<std::string>& names);
  void record_home_on_demand(uint64_t written, uint64_t fetched = 0);
  // One of coex's builds of a program for `device` (a one-time cost, off the app's path when it was a
  // prebuild): how long it took, whether it failed, and whether it was built from the binary of a
  // device of the same kind (exec/shared_binaries.h).
  void record_build(int device, double seconds, bool failed, bool from_binary);
  // A late device (auto_late_devices): not let in yet (nullopt), or let in `let_in_after` seconds after
  // the first launch that could take it.
  void record_late_device(int device, std::optional<double> let_in_after);
  // A compile-ahead process that ended (`made`: it made the program's binary; `at_exit`: the exit
  // ended it; `at_build`: started at the app's clBuildProgram; `other_kinds`: the devices of other
  // kinds it built for too; `served_none`: ended once its program needed none of it) after `seconds`;
  // or a program refused one (beyond compile_ahead_processes).
  void record_compile_ahead(double seconds, bool made, bool at_exit, bool at_build, size_t other_kinds = 0,
                            bool served_none = false);
  void record_compile_ahead_beyond_limit();
  // A first launch probed on home (its pieces took `seconds`), or one split at once after its probe.
  void record_first_launch_probe(double seconds);
  void record_split_after_probe();
  // A launch run on home because its program's process would not pay yet (first_launch_probe.h,
  // process_pays).
  void record_held_until_paid();
  // Called after each record_launch, outside the recorder's lock, on the recording thread: the
  // report keeps only sums, the trace shows each launch (set before the first launch).
  using LaunchObserver = std::function<void(const std::string& kernel, const LaunchRecord& launch)>;
  void set_launch_observer(LaunchObserver observer);

  // Kernels in the order they were first launched; per_device sorted by index.
  nlohmann::json to_json() const;
  // Writes to a temporary file beside `path`, then renames it, so a reader never sees half a report.
  // Does not throw; on failure returns false with `error` set (when not null).
  bool write(const std::string& path, std::string* error) const;

 private:
  void add_launch(const std::string& kernel, const LaunchRecord& launch);  // mutex_ held

  struct DeviceTotals {
    uint64_t work_items = 0;
    double seconds = 0;
  };
  struct KernelTotals {
    std::string name;
    uint64_t launches = 0;
    uint64_t split_launches = 0;
    uint64_t cold_splits = 0;
    uint64_t probes = 0;                                       // split launches that were auto's probes
    std::vector<std::pair<std::string, uint64_t>> not_split;   // reason -> count, first-seen order
    std::vector<std::pair<std::string, uint64_t>> planned_by;  // split launches by planner, first-seen order
    std::shared_ptr<const GateRecord> last_gate;               // the last launch's verdict,
    uint64_t last_gate_launch = 0;                             // of this launch number (not last_gate's)
    std::optional<RegularityRecord> last_regularity;           // the last judgement of regularity
    uint64_t bytes_moved = 0;
    std::vector<std::pair<int, DeviceTotals>> per_device;  // sorted by device index
    uint64_t bytes_minimal = 0;
    BytesByStep bytes_by_step;
    std::vector<ArgTierRecord> args;  // sorted by index; the worst tier seen (diff > whole > exact)
  };

  mutable std::mutex mutex_;
  std::string mode_;
  std::string policy_;
  std::vector<ReportDevice> devices_;
  nlohmann::json settings_;
  int pid_ = 0;
  nlohmann::json history_;
  std::string trace_file_;
  std::unordered_map<std::string, std::vector<std::string>> arg_names_;
  std::vector<KernelTotals> kernels_;
  std::unordered_map<std::string, size_t> kernel_index_;
  size_t last_kernel_ = SIZE_MAX;  // totals_of's last answer, in kernels_
  uint64_t bytes_home_on_demand_ = 0;
  uint64_t bytes_fetched_on_demand_ = 0;
  struct Builds {
    uint64_t count = 0, failed = 0, from_binary = 0;
    double seconds = 0;
  };
  std::vector<std::pair<int, Builds>> builds_;         // by device, sorted by index
  std::map<int, std::optional<double>> late_devices_;  // record_late_device's
  struct CompileAhead {
    uint64_t processes = 0, made = 0, ended_at_exit = 0, served_none = 0, at_build = 0, other_kinds = 0,
             beyond_limit = 0, probes = 0, split_after_probe = 0, held_until_paid = 0;
    double seconds = 0, probe_seconds = 0;
  } compile_ahead_;
  LaunchObserver launch_observer_;
  bool has_launch_observer_ = false;                   // under mutex_, as launch_observer_
  KernelTotals& totals_of(const std::string& kernel);  // under mutex_
  static void add_device_work(KernelTotals& totals, int device, uint64_t work_items, double seconds);
  static void keep_latest_gate(KernelTotals& totals, const std::shared_ptr<const GateRecord>& gate, uint64_t launch);
  static void count_not_split(KernelTotals& totals, const std::string& reason);
};

// Writes to `path` through a temporary file beside it and a rename, so that a reader never sees half a
// file. Shared by the report and the trace. Does not throw.
bool write_file_atomically(const std::string& path, const std::string& text, std::string* error);
bool write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write_content,
                           std::string* error);

// Whether `document` is a report this version of coex reads: "format" is "coex-report" and "version"
// at most kReportVersion. Otherwise false, with `why` saying what it looks like instead (a trace, a
// config, a newer report). Does not throw.
bool is_readable_report(const nlohmann::json& document, std::string& why);

// `coex report FILE`: the report as a table a person can read. Any key may be missing or of the
// wrong type (an older or a hand-edited report): what is there is shown. Does not throw.
std::string format_report_table(const nlohmann::json& report);

// `coex report --html OUT FILE`: one self-contained page (no script, no external file): the devices,
// each kernel's shares and reasons, and an SVG timeline of the devices from the trace when one is
// given (else a bar per device of its busy time). `trace` may be null. Does not throw.
std::string format_report_html(const nlohmann::json& report, const nlohmann::json* trace);

// What a not-split reason means, in one line; "" for a reason this version does not know.
std::string not_split_reason_meaning(const std::string& reason);

// `path` with each "%p" replaced by `pid` (as LLVM_PROFILE_FILE does), so that the processes of one
// command line (a shell script running the app twice) each write their own report and trace.
std::string expand_pid(const std::string& path, int pid);

}  // namespace coex::report
