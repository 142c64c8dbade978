// The one runtime object of coex (docs/design.md, "The way in"): created on first use, holding all
// global state; and the three ways in, from layer/: as a layer, by preload, and shutdown.
#pragma once

#include <CL/cl_icd.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "config/settings.h"
#include "exec/services.h"

namespace coex::api {

// How coex was loaded (docs/design.md, "The way in").
enum class LoadMode { Unknown, Layer, Preload };

class Runtime final : public exec::Services {
 public:
  // The runtime, created on first use by the way coex was loaded. Never null after init.
  static Runtime& get();

  LoadMode mode() const { return mode_; }
  bool active() const { return active_; }  // false: pure pass-through (COEX_DISABLE, bad config)
  const config::Settings& settings() const override { return settings_; }
  const cl_icd_dispatch& next() const override { return next_; }
  const cl_icd_dispatch& intercept() const { return intercept_; }

  model::Registries& registries() override { return *registries_; }
  devices::DeviceSet& devices() override;
  exec::Executor& executor() override;
  report::ReportRecorder& report() override { return *report_; }
  report::TraceRecorder* trace() override { return trace_.get(); }  // null when COEX_TRACE is unset

  // The first launch also tells the user what coex will do (api/notices.h).
  void note_home(int device) override;

  // Writes the report and the trace once; stops the executor's threads. Idempotent.
  void shutdown();

 private:
  friend const cl_icd_dispatch* init_as_layer(const cl_icd_dispatch*, cl_uint);
  friend const cl_icd_dispatch& entry_table_for_preload();
  Runtime() = default;
  void init(LoadMode mode, const cl_icd_dispatch& next);
  // Writes the report and the trace as they stand (at exit, or on SIGINT / SIGTERM); the report's
  // path, %p expanded.
  std::string write_outputs();

  LoadMode mode_ = LoadMode::Unknown;
  bool active_ = false;
  config::Settings settings_;
  cl_icd_dispatch next_{};
  cl_icd_dispatch intercept_{};
  std::unique_ptr<model::Registries> registries_;
  std::unique_ptr<report::ReportRecorder> report_;
  std::unique_ptr<report::TraceRecorder> trace_;
  std::once_flag devices_once_, executor_once_;
  std::unique_ptr<devices::DeviceSet> devices_;
  std::unique_ptr<exec::Executor> executor_;
  std::atomic<devices::DeviceSet*> devices_made_{nullptr};  // devices_, once made (the fast path)
  std::atomic<exec::Executor*> executor_made_{nullptr};     // executor_, once made
  std::atomic<bool> shut_down_{false};
  std::mutex outputs_mutex_;                  // one writer of the files at a time
  std::atomic<bool> noticed_{false};          // the start notice was decided (printed or not)
  std::atomic<bool> announced_split_{false};  // ... and it said that launches will be split
};

// As a layer: the loader hands over its target table; coex returns its own. Null on failure.
const cl_icd_dispatch* init_as_layer(const cl_icd_dispatch* target, cl_uint num_entries);
// The table a preload export calls: the intercept table, or libOpenCL's own entry points when
// coex is loaded as a layer too (the layer intercepts).
const cl_icd_dispatch& entry_table_for_preload();
void shutdown();

// Installs the handlers of each call family into the intercept table (one per file in src/api/).
void install_context_calls(cl_icd_dispatch& table);
void install_queue_calls(cl_icd_dispatch& table);
void install_buffer_calls(cl_icd_dispatch& table);
void install_program_calls(cl_icd_dispatch& table);
void install_kernel_calls(cl_icd_dispatch& table);
void install_launch_calls(cl_icd_dispatch& table);
void install_event_calls(cl_icd_dispatch& table);
void install_extension_calls(cl_icd_dispatch& table);

}  // namespace coex::api
