// The Services (exec/services.h) of a unit test that needs real ones: the objects api::Runtime hands
// in, made here without the rest of the runtime, over this machine's OpenCL driver loaded as coex
// loads it when preloaded (api/libopencl_table.h). start() says why not where no driver or device is
// there (the test is then skipped).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "api/libopencl_table.h"
#include "config/settings.h"
#include "devices/device_set.h"
#include "exec/executor.h"
#include "exec/services.h"
#include "model/registries.h"
#include "report/report.h"

namespace coex::exec {

class LocalServices final : public Services {
 public:
  // False, with a reason, when no OpenCL driver or device is there.
  bool start(std::string* why) {
    if (!api::load_libopencl_table(table_, why)) return false;
    // Not the user's History; one per process (ctest runs each test in its own).
    settings_.cache = ::testing::TempDir() + "/coex_unit_history." + std::to_string(::getpid()) + ".json";
    devices_ = std::make_unique<devices::DeviceSet>(table_, settings_.devices);
    if (devices_->all().empty()) {
      *why = "no OpenCL device";
      return false;
    }
    executor_ = std::make_unique<Executor>(*this);
    return true;
  }
  ~LocalServices() override {
    executor_.reset();  // its threads stop before the rest goes, and it writes the History
    if (!settings_.cache.empty()) std::remove(settings_.cache.c_str());
  }

  const cl_icd_dispatch& next() const override { return table_; }
  const config::Settings& settings() const override { return settings_; }
  devices::DeviceSet& devices() override { return *devices_; }
  model::Registries& registries() override { return registries_; }
  report::ReportRecorder& report() override { return report_; }
  report::TraceRecorder* trace() override { return nullptr; }
  Executor& executor() override { return *executor_; }
  void note_home(int) override {}

 private:
  cl_icd_dispatch table_{};
  config::Settings settings_;
  model::Registries registries_;
  report::ReportRecorder report_;
  std::unique_ptr<devices::DeviceSet> devices_;
  std::unique_ptr<Executor> executor_;
};

// An argument set to `value`'s bytes (a memory object's handle needs no driver object behind it).
template <typename T>
model::KernelArgValue value_arg(T value) {
  model::KernelArgValue arg;
  arg.set = true;
  arg.size = sizeof value;
  arg.bytes.resize(sizeof value);
  std::memcpy(arg.bytes.data(), &value, sizeof value);
  return arg;
}

}  // namespace coex::exec
