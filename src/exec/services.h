// What exec needs from the layers above it (docs/design.md, "A launch"): the driver below coex, the
// settings, the devices, the registries of the app's objects, the report and the trace. src/api
// implements it (api::Runtime) and hands it in; exec never reaches up for it.
#pragma once

#include <CL/cl_icd.h>

namespace coex {
namespace config {
struct Settings;
}
namespace devices {
class DeviceSet;
}
namespace model {
struct Registries;
}
namespace report {
class ReportRecorder;
class TraceRecorder;
}  // namespace report
}  // namespace coex

namespace coex::exec {

class Executor;

class Services {
 public:
  virtual ~Services() = default;
  // The driver below coex: every OpenCL call coex makes itself goes here.
  virtual const cl_icd_dispatch& next() const = 0;
  virtual const config::Settings& settings() const = 0;
  virtual devices::DeviceSet& devices() = 0;
  virtual model::Registries& registries() = 0;
  virtual report::ReportRecorder& report() = 0;
  virtual report::TraceRecorder* trace() = 0;  // null when COEX_TRACE is unset
  virtual Executor& executor() = 0;
  // A launch ran with `device` as its home: the report marks it, and the first one tells the user
  // what coex will do.
  virtual void note_home(int device) = 0;
};

}  // namespace coex::exec
