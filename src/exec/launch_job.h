// One split launch, as captured when the app enqueued it: the arguments' values at that moment
// (the spec: later clSetKernelArg calls do not affect an enqueued launch), the buffers it uses,
// and its geometry. It keeps the app's buffers retained until it ends.
#pragma once

#include <CL/cl.h>

#include <memory>
#include <string>
#include <vector>

#include "coherence/interval_set.h"
#include "exec/launch_geometry.h"
#include "model/records.h"

namespace coex::exec {

// A root buffer the launch touches, with the union of the ranges its arguments cover.
struct RootUse {
  std::shared_ptr<model::BufferRecord> root;
  coherence::IntervalSet used;     // read or written by some argument (replicated to every device)
  coherence::IntervalSet written;  // bytes that may be written: read back and diffed
  uint64_t generation_at_enqueue = 0;
};

// How a kernel argument is set on a device.
struct ArgBinding {
  enum class Kind { Value, Local, Buffer, NullBuffer } kind = Kind::Value;
  int root = -1;  // Buffer: index into LaunchJob::roots
  uint64_t origin = 0, size = 0;  // Buffer: the argument's bytes within its root
  cl_mem app_mem = nullptr;       // Buffer: the app's handle (the home device uses it as is)
};

struct LaunchJob {
  std::shared_ptr<model::KernelRecord> kernel;
  std::shared_ptr<model::ProgramRecord> program;
  std::string kernel_name;
  bool rewrite = false;  // the kernel needs the rewritten source and its extra arguments
  std::vector<model::KernelArgValue> args;
  std::vector<ArgBinding> bindings;
  std::vector<RootUse> roots;
  LaunchGeometry geometry;
  cl_command_queue app_queue = nullptr;
  cl_context app_context = nullptr;
  cl_device_id home_device = nullptr;
  int home = -1;             // coex index of the home device
  std::vector<int> devices;  // coex indices that may take work
  std::vector<cl_mem> retained;  // app buffers retained for the job's lifetime
  cl_event user_event = nullptr;    // completes the app's event when the split is done
  cl_event start_marker = nullptr;  // completes when the app's wait list and queue allow the start
  std::shared_ptr<model::SplitEventRecord> event_record;  // the app's event, when it asked for one
};

}  // namespace coex::exec
