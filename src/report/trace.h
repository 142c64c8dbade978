// The run trace (COEX_TRACE): a Chrome trace-event JSON file that opens in Perfetto
// (https://ui.perfetto.dev) or chrome://tracing, with one track per device showing its transfers,
// sub-launches, merges and the launches it ran unsplit for the app, a track of launches, and one
// track per app thread of the OpenCL calls it made (api/api_trace.h).
//
// Format: the "Trace Event Format" document (Google, "JSON Object Format"): complete events
// ("ph": "X", "ts" and "dur" in microseconds) and "M" metadata events that name the threads.
// coex writes every event with pid 1 and tid = the coex device index, so each device is one track.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <iosfwd>
#include <mutex>
#include <string>
#include <vector>

namespace coex::report {

struct LaunchRecord;

struct TraceEvent {
  std::string name;      // e.g. the kernel name, "write A", "merge C"
  std::string category;  // "transfer", "kernel", "merge", "wait", ...
  int track = 0;         // coex device index
  double begin_us = 0;   // microseconds since the recorder's origin
  double end_us = 0;
  nlohmann::json args;   // null or an object: shown by Perfetto when the slice is selected
};

// Thread-safe. Memory is bounded: past `max_events`, events are counted and dropped, and the count
// is written to the file ("otherData": {"dropped_events": n}).
class TraceRecorder {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr size_t kDefaultMaxEvents = 1000000;

  explicit TraceRecorder(size_t max_events = kDefaultMaxEvents);

  // Microseconds since the origin (the recorder's construction) of the steady clock.
  double now_us() const { return to_trace_us(Clock::now()); }
  double to_trace_us(Clock::time_point time) const;
  // The origin on the steady clock (CLOCK_MONOTONIC on Linux), in the file's "otherData": a script
  // that read the same clock when it started the app tells from it what came before coex's first
  // event (the process's start, the libraries' loading) and, with the app's end, after its last.
  double origin_steady_us() const {
    return std::chrono::duration<double, std::micro>(origin_.time_since_epoch()).count();
  }

  void set_track_name(int track, const std::string& name);
  void record(TraceEvent event);
  void record(const std::string& name, const std::string& category, int track, double begin_us, double end_us,
              nlohmann::json args = nullptr);
  // The same from two points of the steady clock.
  void record(const std::string& name, const std::string& category, int track, Clock::time_point begin,
              Clock::time_point end, nlohmann::json args = nullptr) {
    record(name, category, track, to_trace_us(begin), to_trace_us(end), std::move(args));
  }

  size_t event_count() const;
  uint64_t dropped_events() const;

  // The whole trace as JSON (for tests: it holds every event in memory).
  nlohmann::json to_json() const;
  // Streams the file, so that a full trace needs no second copy in memory. Does not throw; on failure returns false with `error` set (when not null).
  bool write(const std::string& path, std::string* error) const;

 private:
  void write_json(std::ostream& out) const;

  const Clock::time_point origin_;
  const size_t max_events_;
  mutable std::mutex mutex_;
  std::vector<TraceEvent> events_;
  std::map<int, std::string> track_names_;
  uint64_t dropped_ = 0;
};

// "d1 pthread-AMD EPYC (home)": a device track's name. The index tells apart devices of one name (two
// PoCL devices of one CPU) and is the one `coex devices` and the report use.
std::string device_track_name(int index, const std::string& name, bool home);

// The track of the per-launch events: each launch the report counts is also one slice there (category
// "launch"), its args the work-items per device index ({"split", "work_items": {"0": n, ...},
// "not_split", "cold", "regularity", "gate"}: gate_json where auto's gate was asked: probes, verdicts
// and the times they came from), so that how a dynamic policy shares each launch shows over time. A launch recorded as
// it ends spans the longest busy time of its devices up to now.
constexpr int kLaunchTrack = 1000;
// The track of coex's planning (category "plan"): the planner's time on the app's thread for each
// launch it plans in full, and each split's setup before its host copy. A track of its own: the app's
// thread plans a launch while earlier ones run, and slices on one track must nest.
constexpr int kPlanTrack = 1001;
void record_launch_event(TraceRecorder& trace, const std::string& kernel, const LaunchRecord& launch);
// The same slice with its span known (a launch not split, timed from its enqueue to its completion).
void record_launch_event(TraceRecorder& trace, const std::string& kernel, const LaunchRecord& launch,
                         double begin_us, double end_us);
// The track of coex's exit (category "exit"): the wait for its device threads and the launches timed
// on home (api::Runtime::shutdown), work the app's exit waits for beside its own.
constexpr int kExitTrack = 1002;
// The tracks of the app's OpenCL calls: kApiTrackBase + n for the app's n-th thread that made one.
constexpr int kApiTrackBase = 2000;

}  // namespace coex::report
