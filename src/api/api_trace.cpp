#include "api/api_trace.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "api/handler_util.h"
#include "report/report.h"
#include "report/trace.h"

namespace coex::api {
namespace {

using Clock = std::chrono::steady_clock;

// The handlers under the wrappers: the intercept table as src/api/ filled it.
cl_icd_dispatch g_inner{};
bool g_trace_calls = false;
bool g_time_unsplit = false;

// A launch not split, recorded by the report on the app's thread during a wrapped enqueue: its span is
// known only when its event completes.
struct Unsplit {
  bool recorded = false;
  std::string kernel;
  report::LaunchRecord launch;
};
thread_local Unsplit* t_unsplit = nullptr;

// The app's thread's own track: calls of two threads would overlap on one, which trace viewers draw
// as nesting.
int thread_track() {
  static std::atomic<int> next{0};
  thread_local int track = -1;
  if (track < 0) {
    const int n = next.fetch_add(1) + 1;
    track = report::kApiTrackBase + n;
    if (auto* trace = rt().trace()) trace->set_track_name(track, "app thread " + std::to_string(n) + ": OpenCL calls");
  }
  return track;
}

// One slice of the app's call, recorded when the call returns.
class CallSlice {
 public:
  explicit CallSlice(const char* name) : name_(name), begin_(Clock::now()) {}
  CallSlice(const CallSlice&) = delete;
  CallSlice& operator=(const CallSlice&) = delete;
  ~CallSlice() {
    auto* trace = rt().trace();
    if (!trace) return;
    try {
      trace->record(name_, "api", thread_track(), trace->to_trace_us(begin_), trace->now_us(), std::move(args_));
    } catch (...) {  // never into the app's call
    }
  }
  void set_arg(const char* key, const std::string& value) { args_[key] = value; }

 private:
  const char* name_;
  Clock::time_point begin_;
  nlohmann::json args_ = nlohmann::json::object();
};

// The end of the last launch not split timed on each device: a launch enqueued behind it starts there
// (an in-order queue runs one at a time), so that a burst of enqueues does not count its waits as busy.
// Never destroyed: a driver's thread may call back while the process exits.
struct LastEnds {
  std::mutex mutex;
  std::map<int, Clock::time_point> by_device;
};
LastEnds& last_ends() {
  static LastEnds* const ends = new LastEnds();
  return *ends;
}

// Timings whose callback has not come yet.
std::atomic<int> g_pending{0};

struct Timing {
  Unsplit unsplit;
  int device = -1;
  Clock::time_point enqueued;
  double weight = 1;  // the launches this one's time stands for in the report (launch_weight)
};

// The launches of `kernel` counted so far. A program launches one kernel many times in a row: the
// thread keeps the last kernel's counter (the map's nodes stay put: entries are never erased).
std::atomic<uint64_t>& launch_count(cl_kernel kernel) {
  thread_local cl_kernel last_kernel = nullptr;
  thread_local std::atomic<uint64_t>* last_count = nullptr;
  if (last_count && last_kernel == kernel) return *last_count;
  static std::mutex mutex;
  static std::map<cl_kernel, std::atomic<uint64_t>>* const counts = new std::map<cl_kernel, std::atomic<uint64_t>>();
  std::lock_guard lock(mutex);
  last_kernel = kernel;
  last_count = &counts->try_emplace(kernel, 0).first->second;
  return *last_count;
}

// Without a trace, only some launches not split are timed for the report: an event and a completion
// callback per launch cost about 12 us on NVIDIA's driver, as much as the launch itself in a program
// of 20,000 small ones (benchmarks/stencil1d took 0.35 s with a report, 0.15 s without, 0.09 s bare).
// The first kTimedInFull launches of each kernel are timed, then one in kTimedOneIn, whose time counts
// for all of them (the report's busy seconds are then an estimate). A launch's time runs from the end
// of the launch before it on the device (LastEnds), so the launch before a sampled one is timed as well,
// for its end only (weight 0): else the sample would count the wait behind the launches untimed. With a
// trace, every launch is timed: each is drawn on its device's track. nullopt: not timed.
constexpr uint64_t kTimedInFull = 8;
constexpr uint64_t kTimedOneIn = 512;
std::optional<double> launch_weight(cl_kernel kernel) {
  if (g_trace_calls) return 1.0;
  const uint64_t n = launch_count(kernel).fetch_add(1, std::memory_order_relaxed);
  if (n < kTimedInFull) return 1.0;
  const uint64_t phase = (n - kTimedInFull) % kTimedOneIn;
  if (phase == kTimedOneIn - 1) return 0.0;  // the end the next one starts from
  if (phase == 0 && n > kTimedInFull) return double(kTimedOneIn);
  return std::nullopt;
}

void record_unsplit(const Timing& timing, Clock::time_point begin, Clock::time_point end) {
  const double seconds = std::chrono::duration<double>(end - begin).count();
  rt().report().add_device_seconds(timing.unsplit.kernel, timing.device, seconds * timing.weight);
  auto* trace = rt().trace();
  if (!trace) return;
  const double b = trace->to_trace_us(begin), e = trace->to_trace_us(end);
  trace->record(timing.unsplit.kernel, "kernel", timing.device, b, e,
                {{"not_split", timing.unsplit.launch.not_split_reason}});
  report::record_launch_event(*trace, timing.unsplit.kernel, timing.unsplit.launch, b, e);
}

void CL_CALLBACK on_unsplit_complete(cl_event, cl_int status, void* user_data) {
  auto* timing = static_cast<Timing*>(user_data);
  try {
    const Clock::time_point end = Clock::now();
    Clock::time_point begin = timing->enqueued;
    {
      std::lock_guard lock(last_ends().mutex);
      Clock::time_point& last = last_ends().by_device[timing->device];
      begin = std::min(end, std::max(begin, last));
      last = std::max(last, end);
    }
    // A failed launch still counts in the report; its time does not.
    if (status == CL_COMPLETE) record_unsplit(*timing, begin, end);
  } catch (...) {  // a driver's thread: nothing may escape
  }
  delete timing;
  g_pending.fetch_sub(1);
}

void time_unsplit_launch(Unsplit& unsplit, cl_event event, Clock::time_point enqueued, double weight) {
  auto timing = std::make_unique<Timing>();
  timing->weight = weight;
  timing->device = unsplit.launch.per_device.empty() ? -1 : unsplit.launch.per_device.front().index;
  if (timing->device < 0) return;
  timing->unsplit = std::move(unsplit);
  timing->enqueued = enqueued;
  g_pending.fetch_add(1);
  if (cl().clSetEventCallback(event, CL_COMPLETE, on_unsplit_complete, timing.get()) == CL_SUCCESS) {
    timing.release();  // the callback deletes it
    return;
  }
  g_pending.fetch_sub(1);
  record_unsplit(*timing, enqueued, enqueued);  // no callback: the launch still shows, without a span
}

// The kernel's argument names from coex's analysis of its program, once per kernel name: the report
// shows them beside the footprint tiers.
void note_arg_names(cl_kernel kernel) {
  auto record = rt().registries().kernels.find(kernel);
  if (!record || !record->program || rt().report().has_arg_names(record->name)) return;
  std::vector<std::string> names;
  // Never waits for an analysis under way: a later launch asks.
  if (!record->program->analysis_done.load(std::memory_order_acquire)) return;
  if (const kernel::KernelInfo* info = record->program->info.find(record->name))
    for (const auto& arg : info->args) names.push_back(arg.name);
  rt().report().set_arg_names(record->name, names);
}

std::string kernel_name(cl_kernel kernel) {
  auto record = rt().registries().kernels.find(kernel);
  return record ? record->name : "";
}

// A launch: the handler below plans it (split or not); a launch it runs unsplit is then timed.
template <typename Enqueue>
cl_int observe_enqueue(const char* call, cl_kernel kernel, cl_event* event, Enqueue&& enqueue) {
  std::optional<CallSlice> slice;
  if (g_trace_calls) {
    slice.emplace(call);
    record_safely(call, [&] { slice->set_arg("kernel", kernel_name(kernel)); });
  }
  Unsplit unsplit;
  Unsplit* outer = t_unsplit;
  std::optional<double> weight;
  if (g_time_unsplit) record_safely(call, [&] { weight = launch_weight(kernel); });
  const bool timed = weight.has_value();
  t_unsplit = timed ? &unsplit : nullptr;
  const Clock::time_point enqueued = timed ? Clock::now() : Clock::time_point{};
  cl_event own = nullptr;
  cl_event* event_out = event || !timed ? event : &own;
  const cl_int err = enqueue(event_out);
  t_unsplit = outer;
  if (err == CL_SUCCESS && unsplit.recorded && event_out && *event_out)
    record_safely(call, [&] { time_unsplit_launch(unsplit, *event_out, enqueued, *weight); });
  // Through coex's own handler, as the app's release would go: a split launch's event has a record
  // (the start marker it holds) that must leave with it.
  if (own) g_inner.clReleaseEvent(own);
  if (err == CL_SUCCESS && timed) record_safely(call, [&] { note_arg_names(kernel); });
  return err;
}

cl_int CL_API_CALL observed_ndrange(cl_command_queue queue, cl_kernel kernel, cl_uint work_dim, const size_t* offset,
                                    const size_t* global, const size_t* local, cl_uint num_wait,
                                    const cl_event* wait_list, cl_event* event) {
  return observe_enqueue("clEnqueueNDRangeKernel", kernel, event, [&](cl_event* event_out) {
    return g_inner.clEnqueueNDRangeKernel(queue, kernel, work_dim, offset, global, local, num_wait, wait_list,
                                          event_out);
  });
}

cl_int CL_API_CALL observed_task(cl_command_queue queue, cl_kernel kernel, cl_uint num_wait, const cl_event* wait_list,
                                 cl_event* event) {
  return observe_enqueue("clEnqueueTask", kernel, event, [&](cl_event* event_out) {
    return g_inner.clEnqueueTask(queue, kernel, num_wait, wait_list, event_out);
  });
}

// Every other call of the list, as one slice each (installed only for the calls traced_call names).
#define COEX_API(ret, name, params, args) \
  ret CL_API_CALL traced_##name params {  \
    CallSlice slice(#name);               \
    return g_inner.name args;             \
  }
#include "api/cl_api_list.h"
#undef COEX_API

// The calls a reader of the trace looks for: what the app enqueues and waits for, and the builds and
// creations that take time. Queries, retains and releases would only add noise.
bool traced_call(const char* name) {
  static const char* const others[] = {"clFinish",       "clFlush",          "clWaitForEvents",
                                       "clBuildProgram", "clCompileProgram", "clLinkProgram"};
  if (!std::strncmp(name, "clEnqueue", 9) || !std::strncmp(name, "clCreate", 8)) return true;
  return std::any_of(std::begin(others), std::end(others), [name](const char* n) { return !std::strcmp(n, name); });
}

}  // namespace

void install_observers(cl_icd_dispatch& table, bool trace_calls, bool time_unsplit) {
  if (!trace_calls && !time_unsplit) return;
  g_inner = table;
  g_trace_calls = trace_calls;
  g_time_unsplit = time_unsplit;
  if (trace_calls) {
#define COEX_API(ret, name, params, args) \
  if (table.name && traced_call(#name)) table.name = traced_##name;
#include "api/cl_api_list.h"
#undef COEX_API
  }
  if (g_inner.clEnqueueNDRangeKernel) table.clEnqueueNDRangeKernel = observed_ndrange;
  if (g_inner.clEnqueueTask) table.clEnqueueTask = observed_task;
}

void wait_for_timed_launches(int max_ms) {
  for (int waited = 0; g_pending.load() > 0 && waited < max_ms; ++waited)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

bool unsplit_launch_observed() { return g_trace_calls || t_unsplit != nullptr; }

void observe_launch(const std::string& kernel, const report::LaunchRecord& launch) {
  // Recorded as the app enqueued it and not yet run: its completion callback traces it.
  const bool timed_later = !launch.split && t_unsplit && !t_unsplit->recorded &&
                           std::all_of(launch.per_device.begin(), launch.per_device.end(),
                                       [](const report::DeviceWork& work) { return work.seconds == 0; });
  if (timed_later) {
    t_unsplit->recorded = true;
    t_unsplit->kernel = kernel;
    t_unsplit->launch = launch;
    return;
  }
  if (auto* trace = rt().trace()) report::record_launch_event(*trace, kernel, launch);
}

}  // namespace coex::api
