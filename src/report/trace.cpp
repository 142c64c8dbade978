#include "report/trace.h"

#include <algorithm>
#include <sstream>

#include "report/report.h"

namespace coex::report {

namespace {

// Every coex event lives in one process of the trace; tracks are its threads.
constexpr int kTracePid = 1;

}  // namespace

TraceRecorder::TraceRecorder(size_t max_events) : origin_(Clock::now()), max_events_(max_events) {}

double TraceRecorder::to_trace_us(Clock::time_point time) const {
  return std::chrono::duration<double, std::micro>(time - origin_).count();
}

void TraceRecorder::set_track_name(int track, const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  track_names_[track] = name;
}

void TraceRecorder::record(TraceEvent event) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (events_.size() >= max_events_) {
    ++dropped_;
    return;
  }
  events_.push_back(std::move(event));
}

std::string device_track_name(int index, const std::string& name, bool home) {
  return "d" + std::to_string(index) + " " + name + (home ? " (home)" : "");
}

void record_launch_event(TraceRecorder& trace, const std::string& kernel, const LaunchRecord& launch, double begin_us,
                         double end_us) {
  nlohmann::json work_items = nlohmann::json::object();
  for (const DeviceWork& work : launch.per_device) work_items[std::to_string(work.index)] = work.work_items;
  nlohmann::json args = {{"split", launch.split}, {"work_items", std::move(work_items)}};
  if (!launch.split) args["not_split"] = launch.not_split_reason;
  if (launch.cold) args["cold"] = true;
  if (launch.gate) args["gate"] = gate_json(*launch.gate);  // which launches were probes, and why each went where
  if (launch.regularity) args["regularity"] = regularity_json(*launch.regularity);
  trace.record(kernel, "launch", kLaunchTrack, begin_us, end_us, std::move(args));
}

void record_launch_event(TraceRecorder& trace, const std::string& kernel, const LaunchRecord& launch) {
  // Recorded as the launch ends: it began when its longest-busy device began (at the origin at most).
  double seconds = 0;
  for (const DeviceWork& work : launch.per_device) seconds = std::max(seconds, work.seconds);
  const double now = trace.now_us();
  record_launch_event(trace, kernel, launch, std::max(0.0, now - seconds * 1e6), now);
}

void TraceRecorder::record(const std::string& name, const std::string& category, int track, double begin_us,
                           double end_us, nlohmann::json args) {
  record(TraceEvent{name, category, track, begin_us, end_us, std::move(args)});
}

size_t TraceRecorder::event_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return events_.size();
}

uint64_t TraceRecorder::dropped_events() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return dropped_;
}

void TraceRecorder::write_json(std::ostream& out) const {
  // Streamed event by event: a million events as one JSON tree would take gigabytes.
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<const TraceEvent*> order;
  order.reserve(events_.size());
  for (const TraceEvent& e : events_) order.push_back(&e);
  // Sorted by start, so the file reads in time order; the format itself does not require it.
  std::stable_sort(order.begin(), order.end(),
                   [](const TraceEvent* a, const TraceEvent* b) { return a->begin_us < b->begin_us; });

  const char* separator = "\n";
  auto emit = [&out, &separator](const nlohmann::json& event) {
    out << separator << event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    separator = ",\n";
  };
  out << "{\"displayTimeUnit\": \"ms\",\n\"otherData\": "
      << nlohmann::json{{"producer", "coex"}, {"dropped_events", dropped_}, {"origin_steady_us", origin_steady_us()}}
             .dump()
      << ",\n\"traceEvents\": [";
  emit({{"name", "process_name"}, {"ph", "M"}, {"pid", kTracePid}, {"tid", 0}, {"args", {{"name", "coex"}}}});
  for (const auto& [track, name] : track_names_) {
    emit({{"name", "thread_name"}, {"ph", "M"}, {"pid", kTracePid}, {"tid", track}, {"args", {{"name", name}}}});
    emit({{"name", "thread_sort_index"},
          {"ph", "M"},
          {"pid", kTracePid},
          {"tid", track},
          {"args", {{"sort_index", track}}}});
  }
  for (const TraceEvent* e : order) {
    nlohmann::json event = {{"name", e->name},
                            {"cat", e->category},
                            {"ph", "X"},
                            {"ts", e->begin_us},
                            {"dur", std::max(0.0, e->end_us - e->begin_us)},
                            {"pid", kTracePid},
                            {"tid", e->track}};
    if (e->args.is_object()) {
      event["args"] = e->args;
    } else if (!e->args.is_null()) {
      event["args"] = {{"value", e->args}};  // the format wants an object
    }
    emit(event);
  }
  out << "\n]}\n";
}

nlohmann::json TraceRecorder::to_json() const {
  std::ostringstream text;
  write_json(text);
  return nlohmann::json::parse(text.str());
}

bool TraceRecorder::write(const std::string& path, std::string* error) const {
  return write_file_atomically(
      path, [this](std::ostream& out) { write_json(out); }, error);
}

}  // namespace coex::report
