// The app's event of a split launch is coex's end marker: these calls make it look like the
// kernel's own (its command type, and profiling that spans the whole split).
#include "api/handler_util.h"

namespace coex::api {
namespace {

cl_int CL_API_CALL get_event_info(cl_event event, cl_event_info name, size_t size, void* value, size_t* size_ret) {
  if (name == CL_EVENT_COMMAND_TYPE && rt().registries().split_events.find(event)) {
    cl_command_type type = CL_COMMAND_NDRANGE_KERNEL;
    if (value && size < sizeof(type)) return CL_INVALID_VALUE;
    if (value) *static_cast<cl_command_type*>(value) = type;
    if (size_ret) *size_ret = sizeof(type);
    return CL_SUCCESS;
  }
  return cl().clGetEventInfo(event, name, size, value, size_ret);
}

cl_int CL_API_CALL get_event_profiling_info(cl_event event, cl_profiling_info name, size_t size, void* value,
                                            size_t* size_ret) {
  // START is when the split could begin: the end of the start marker (wait list and queue done).
  if (name == CL_PROFILING_COMMAND_START)
    if (auto record = rt().registries().split_events.find(event)) {
      cl_int err = cl().clGetEventProfilingInfo(event, name, size, value, size_ret);  // validates the call
      if (err != CL_SUCCESS) return err;
      return cl().clGetEventProfilingInfo(record->start_marker, CL_PROFILING_COMMAND_END, size, value, size_ret);
    }
  return cl().clGetEventProfilingInfo(event, name, size, value, size_ret);
}

cl_int CL_API_CALL release_event(cl_event event) {
  bool last = is_last_reference(cl().clGetEventInfo, event, CL_EVENT_REFERENCE_COUNT);
  cl_int err = cl().clReleaseEvent(event);
  if (err == CL_SUCCESS && last)
    record_safely("clReleaseEvent", [&] {
      if (auto record = rt().registries().split_events.erase(event)) cl().clReleaseEvent(record->start_marker);
    });
  return err;
}

}  // namespace

void install_event_calls(cl_icd_dispatch& table) {
  table.clGetEventInfo = get_event_info;
  table.clGetEventProfilingInfo = get_event_profiling_info;
  table.clReleaseEvent = release_event;
}

}  // namespace coex::api
