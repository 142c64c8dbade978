#pragma once

#include "model/records.h"
#include "model/registry.h"

namespace coex::model {

// All registries of the app's objects, keyed by the app's handles.
struct Registries {
  Registry<cl_context, ContextRecord> contexts;
  Registry<cl_command_queue, QueueRecord> queues;
  Registry<cl_mem, BufferRecord> buffers;
  Registry<cl_program, ProgramRecord> programs;
  Registry<cl_kernel, KernelRecord> kernels;
  Registry<cl_event, SplitEventRecord> split_events;
};

}  // namespace coex::model
