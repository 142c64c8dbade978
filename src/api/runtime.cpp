#include "api/runtime.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "api/api_trace.h"
#include "api/libopencl_table.h"
#include "api/notices.h"
#include "api/signal_reports.h"
#include "config/fault_spec.h"
#include "devices/device_set.h"
#include "exec/executor.h"
#include "exec/exit_guard.h"
#include "exec/kept_analyses.h"
#include "exec/kept_binaries.h"
#include "exec/policy_binding.h"
#include "exec/program_analysis.h"
#include "kernel/analysis_process.h"
#include "kernel/build_id.h"
#include "kernel/libclang_api.h"
#include "model/registries.h"
#include "report/report.h"
#include "report/trace.h"

namespace coex::api {
namespace {

std::atomic<Runtime*> g_runtime{nullptr};
std::once_flag g_runtime_once;
std::atomic<const cl_icd_dispatch*> g_preload_table{nullptr};
cl_icd_dispatch g_libopencl{};

void setup_logging(const std::string& level) {
  auto logger = spdlog::get("coex");
  if (!logger) {
    logger = spdlog::stderr_logger_mt("coex");
    logger->set_pattern("[coex] [%l] %v");
  }
  logger->set_level(spdlog::level::from_str(level));
  spdlog::set_default_logger(logger);
}

void shutdown_at_exit() { shutdown(); }

// A notice (api/notices.h) is shown at the default level, warn, and silenced by COEX_LOG=error or off.
void notice(spdlog::level::level_enum level, const std::string& line) {
  if (!line.empty() && spdlog::default_logger()->should_log(level)) std::fprintf(stderr, "%s\n", line.c_str());
}

// The report's "history" section: the file the History was read from and written to, and what it held.
nlohmann::json history_section(const config::Settings& settings, const exec::Executor* executor) {
  nlohmann::json history = {{"file", exec::history_path(settings)}};
  std::shared_ptr<sched::History> used = executor ? executor->history() : nullptr;
  if (!used) {
    history["state"] = "unused";  // no launch needed it
    return history;
  }
  const sched::History::LoadOutcome outcome = used->last_load();
  history["state"] = outcome.state;
  history["entries"] = outcome.entries;
  history["other_device_sets"] = outcome.other_sets;
  history["device_set"] = used->device_signature();
  if (!outcome.detail.empty()) history["error"] = outcome.detail;
  return history;
}

}  // namespace

// get(), devices() and executor() are on the path of every intercepted call, several times a launch:
// once made, each object is published through an atomic pointer and read with one load, where
// std::call_once costs a pthread_once and stores to thread-locals at every call (about 80 instructions;
// docs/performance.md, "Launches left on home").
Runtime& Runtime::get() {
  if (Runtime* made = g_runtime.load(std::memory_order_acquire)) return *made;
  // Never freed: see shutdown().
  std::call_once(g_runtime_once, [] { g_runtime.store(new Runtime(), std::memory_order_release); });
  return *g_runtime.load(std::memory_order_acquire);
}

void Runtime::init(LoadMode mode, const cl_icd_dispatch& next) {
  mode_ = mode;
  next_ = next;
  intercept_ = next;
  auto loaded = config::load_settings([](const char* name) { return static_cast<const char*>(std::getenv(name)); });
  settings_ = loaded.settings;
  setup_logging(loaded.errors.empty() ? settings_.log : "warn");
  // One line per error, each saying that coex is off: the app runs as if coex were not loaded.
  for (const auto& error : loaded.errors)
    std::fprintf(stderr, "%s (coex is off for this run: the app runs unchanged)\n", error.c_str());
  registries_ = std::make_unique<model::Registries>();
  report_ = std::make_unique<report::ReportRecorder>();
  report_->set_mode(mode == LoadMode::Layer ? "layer" : "preload");
  report_->set_policy(settings_.policy);
  // Off, coex closes the analysis process `coex run` may have started for it (no executable is set).
  if (!loaded.errors.empty()) {
    kernel::analysis_process::adopt_inherited();
    return;
  }
  if (settings_.disable) {
    kernel::analysis_process::adopt_inherited();
    spdlog::info("COEX_DISABLE is set: pure pass-through");
    return;
  }
  // COEX_FAULT=no_libclang: the analysis process reads it from the environment it inherits.
  if (const auto fault = config::parse_fault_spec(settings_.fault, nullptr);
      fault && fault->kind == config::FaultSpec::Kind::NoLibclang)
    kernel::libclang::refuse_loads(kernel::libclang::kRefusedByFault);
  const std::string analyser = settings_.analysis_process ? kernel::analysis_process::find_executable() : "";
  if (!analyser.empty()) kernel::analysis_process::set_executable(analyser);
  // The one `coex run` started for this process, if any: libclang may be loaded already.
  kernel::analysis_process::adopt_inherited();
  // Keyed by this library's build and the analyser's (exec/kept_analyses.h): its file read only
  // where something is kept.
  const std::string kept = exec::kept_binaries_folder(settings_.binary_cache, exec::history_path(settings_));
  exec::keep_analyses_in(kept, !analyser.empty(),
                         analyser.empty() || kept.empty() ? "" : kernel::file_build_id(analyser));
  if (!settings_.trace.empty()) {
    trace_ = std::make_unique<report::TraceRecorder>();
    trace_->set_track_name(report::kLaunchTrack, "launches");
    trace_->set_track_name(report::kPlanTrack, "planning");
    trace_->set_track_name(report::kExitTrack, "exit");
  }
  // With a report or a trace, launches not split are timed on the app's device (api/api_trace.h).
  const bool observed = trace_ || !settings_.report.empty();
  if (observed) report_->set_launch_observer(observe_launch);
  install_context_calls(intercept_);
  install_queue_calls(intercept_);
  install_buffer_calls(intercept_);
  install_program_calls(intercept_);
  install_kernel_calls(intercept_);
  install_launch_calls(intercept_);
  install_event_calls(intercept_);
  install_extension_calls(intercept_);
  install_observers(intercept_, trace_ != nullptr, observed);
  active_ = true;
  // The one shutdown (docs/design.md, "Exit"): at the exit of the app's main thread, before every
  // atexit handler and static destructor (exec/exit_guard.h); from another thread, an atexit handler
  // registered at first use, so it runs before the destructors of what was loaded earlier.
  exec::register_exit_wait(shutdown_at_exit);
  // SIGINT, SIGTERM: the files as they stand, then the signal goes on (api/signal_reports.h). coex
  // keeps running: an app whose handler carries on gets complete files at its exit.
  if (observed)
    write_reports_on_signals([this] {
      if (!shut_down_) write_outputs();
    });
  spdlog::debug("coex active as {}", mode == LoadMode::Layer ? "layer" : "preload");
}

devices::DeviceSet& Runtime::devices() {
  if (devices::DeviceSet* made = devices_made_.load(std::memory_order_acquire)) return *made;
  std::call_once(devices_once_, [this] {
    devices_ = std::make_unique<devices::DeviceSet>(next_, settings_.devices);
    // Again now that the drivers are loaded: exit handlers run in reverse order, so coex's threads
    // stop (and leave the drivers) before the destructors of a driver's own libraries run. PoCL
    // loads libLLVM with itself, often after coex's first registration; a device thread still in
    // PoCL's code generation at exit then crashed in LLVM's destroyed statics.
    exec::register_exit_wait(shutdown_at_exit);
    report_->set_devices(devices_->report_entries());
    if (trace_)
      for (const auto& device : devices_->all())
        trace_->set_track_name(device.index, report::device_track_name(device.index, device.name, false));
    devices_made_.store(devices_.get(), std::memory_order_release);
  });
  return *devices_;
}

exec::Executor& Runtime::executor() {
  if (exec::Executor* made = executor_made_.load(std::memory_order_acquire)) return *made;
  std::call_once(executor_once_, [this] {
    executor_ = std::make_unique<exec::Executor>(*this);
    executor_made_.store(executor_.get(), std::memory_order_release);
  });
  return *executor_;
}

void Runtime::note_home(int device) {
  devices::DeviceSet& set = devices();
  if (!set.note_home(device)) return;
  report_->set_devices(set.report_entries());
  if (trace_ && device >= 0 && size_t(device) < set.all().size())
    trace_->set_track_name(device, report::device_track_name(device, set.at(device).name, true));
  if (noticed_.exchange(true)) return;
  // The first launch's home: now coex knows whether it can split anything, and says so once.
  bool splits = false;
  std::string line = start_notice(set, device, settings_, "", splits);
  // Whether libclang could be loaded, where that is known: asked of the analysis process while it
  // analysed, the question waited for the whole analysis, and every launch behind it (docs/
  // kernel-analysis.md, "The analysis process"). Not known yet, the analysis that learns it tells the
  // user (exec/program_analysis.cpp), once.
  std::string why;
  if (splits && kernel::libclang::is_load_wanted() && !exec::libclang_known(&why).value_or(true)) {
    line = start_notice(set, device, settings_, why, splits);
    if (!kernel::libclang::claim_missing_notice()) line.clear();  // the analysis that learnt it told it
  }
  announced_split_ = splits;
  notice(spdlog::level::warn, line);
}

// Every way out comes here once (docs/design.md, "Exit"): no background work begins and no launch is
// split from now on, the executor finishes the launch under way, waits for its threads (a build under
// way; a device taken over, within a limit) and saves the History, then the report and the trace are
// written. Shadows are never released: the drivers may be half torn down by now.
void Runtime::shutdown() {
  if (shut_down_.exchange(true)) return;
  exec::begin_exit();
  kernel::analysis_process::stop_for_exit();  // an analysis under way would only hold the exit
  if (!report_) return;
  // executor_ is made under executor_once_ by whichever thread launches first: read it only through
  // the pointer that executor() publishes.
  const auto waits_began = std::chrono::steady_clock::now();
  if (exec::Executor* made = executor_made_.load(std::memory_order_acquire)) made->stop();
  wait_for_timed_launches(200);
  if (trace_) trace_->record("exit waits", "exit", report::kExitTrack, waits_began, std::chrono::steady_clock::now());
  const std::string report_path = write_outputs();
  if (!active_ || !noticed_) return;  // no launch: nothing to tell
  const nlohmann::json summary = report_->to_json();
  if (announced_split_) notice(spdlog::level::warn, nothing_split_notice(summary));
  notice(spdlog::level::info, exit_summary(summary, report_path));
}

std::string Runtime::write_outputs() {
  std::lock_guard lock(outputs_mutex_);
  // %p: each process of one command line (a script running the app twice) keeps its own files.
  const int pid = int(::getpid());
  const std::string report_path = report::expand_pid(settings_.report, pid);
  const std::string trace_path = report::expand_pid(settings_.trace, pid);
  report_->set_pid(pid);
  if (active_) report_->set_history(history_section(settings_, executor_made_.load(std::memory_order_acquire)));
  if (trace_ && !trace_path.empty()) report_->set_trace_file(trace_path);
  if (!report_path.empty()) {
    std::string error;
    if (!report_->write(report_path, &error))
      spdlog::error("cannot write the report to {} (COEX_REPORT): {}", report_path, error);
  }
  if (trace_ && !trace_path.empty()) {
    std::string error;
    if (!trace_->write(trace_path, &error))
      spdlog::error("cannot write the trace to {} (COEX_TRACE): {}", trace_path, error);
  }
  return report_path;
}

const cl_icd_dispatch* init_as_layer(const cl_icd_dispatch* target, cl_uint num_entries) {
  try {
    cl_icd_dispatch next{};
    size_t bytes = std::min<size_t>(sizeof(next), size_t(num_entries) * sizeof(void*));
    std::memcpy(&next, target, bytes);
    Runtime& rt = Runtime::get();
    static std::once_flag once;
    std::call_once(once, [&] { rt.init(LoadMode::Layer, next); });
    return &rt.intercept_;
  } catch (...) {
    return nullptr;
  }
}

const cl_icd_dispatch& entry_table_for_preload() {
  if (const cl_icd_dispatch* table = g_preload_table.load(std::memory_order_acquire)) return *table;
  static std::once_flag once;
  std::call_once(once, [] {
    std::string error;
    if (!load_libopencl_table(g_libopencl, &error)) {
      std::fprintf(stderr, "coex: %s\n", error.c_str());
      std::abort();  // nothing to forward to: the app could not have run without coex either
    }
    if (opencl_layers_names_this_library()) {
      // The loader will make coex a layer too: that is where calls are intercepted.
      g_preload_table.store(&g_libopencl, std::memory_order_release);
      return;
    }
    Runtime& rt = Runtime::get();
    rt.init(LoadMode::Preload, g_libopencl);
    g_preload_table.store(&rt.intercept_, std::memory_order_release);
  });
  return *g_preload_table.load(std::memory_order_acquire);
}

void shutdown() {
  if (Runtime* made = g_runtime.load(std::memory_order_acquire)) made->shutdown();
}

}  // namespace coex::api

namespace coex {
const cl_icd_dispatch& next() { return api::Runtime::get().next(); }
const cl_icd_dispatch& intercept() { return api::Runtime::get().intercept(); }
}  // namespace coex
