// The app's event of a split launch is coex's end marker: these calls make it
// look like the kernel's own (its command type, and profiling that spans the
// whole split).
#include <algorithm>
#include <iterator>

#include "api/handler_util.h"

namespace coex::api {
namespace {

cl_int CL_API_CALL get_event_info(cl_event event, cl_event_info name, size_t size, void* value, size_t* size_ret) {
  cl_int err = cl().clGetEventInfo(event, name, size, value,
                                   size_ret);  // validates the call
  if (err != CL_SUCCESS || !value) return err;
  auto record = rt().registries().split_events.find(event);
  if (!record) return err;
  if (name == CL_EVENT_COMMAND_TYPE) *static_cast<cl_command_type*>(value) = CL_COMMAND_NDRANGE_KERNEL;
  if (name == CL_EVENT_COMMAND_EXECUTION_STATUS && record->status < 0) *static_cast<cl_int*>(value) = record->status;
  return err;
}

// A split that failed completes its end marker normally (see SplitEventRecord):
// the failure is reported here, as the spec has clWaitForEvents report a failed
// event.
cl_int CL_API_CALL wait_for_events(cl_uint count, const cl_event* events) {
  cl_int err = cl().clWaitForEvents(count, events);
  if (err != CL_SUCCESS) return err;
  for (cl_uint i = 0; i < count; ++i)
    if (auto record = rt().registries().split_events.find(events[i]); record && record->status < 0)
      return CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
  return err;
}

// The split runs from the start marker (enqueued with the app's wait list) to
// the end marker (the app's event): QUEUED and SUBMIT are the start marker's,
// START is when it completed (the split could begin), END and COMPLETE are the
// end marker's. All on the app's queue; still, some drivers (NVIDIA's) stamp a
// marker's queued/submit and its end from different clocks, so each time is
// raised to the one before it: the order queued <= submit <= start <= end <=
// complete holds.
cl_int CL_API_CALL get_event_profiling_info(cl_event event, cl_profiling_info name, size_t size, void* value,
                                            size_t* size_ret) {
  cl_int err = cl().clGetEventProfilingInfo(event, name, size, value,
                                            size_ret);  // validates the call
  if (err != CL_SUCCESS || !value || size < sizeof(cl_ulong)) return err;
  auto record = rt().registries().split_events.find(event);
  if (!record) return err;
  struct Stamp {
    cl_event event;
    cl_profiling_info info;
  };
  const Stamp order[] = {{record->start_marker, CL_PROFILING_COMMAND_QUEUED},
                         {record->start_marker, CL_PROFILING_COMMAND_SUBMIT},
                         {record->start_marker, CL_PROFILING_COMMAND_END},
                         {event, CL_PROFILING_COMMAND_END},
                         {event, CL_PROFILING_COMMAND_COMPLETE}};
  const cl_profiling_info asked[] = {CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT,
                                     CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END,
                                     CL_PROFILING_COMMAND_COMPLETE};
  cl_ulong time = 0;
  for (size_t i = 0; i < std::size(order); ++i) {
    cl_ulong t = 0;
    if (cl().clGetEventProfilingInfo(order[i].event, order[i].info, sizeof t, &t, nullptr) == CL_SUCCESS)
      time = std::max(time, t);
    if (asked[i] == name) {
      *static_cast<cl_ulong*>(value) = time;
      return CL_SUCCESS;
    }
  }
  return err;
}

// A split's event: the record (and the start marker it holds) goes at the app's last release, counted
// from the app's own calls, not the driver's count (which a pending marker keeps up).
cl_int CL_API_CALL retain_event(cl_event event) {
  cl_int err = cl().clRetainEvent(event);
  if (err == CL_SUCCESS) record_safely("clRetainEvent", [&] { app_retained(rt().registries().split_events, event); });
  return err;
}

cl_int CL_API_CALL release_event(cl_event event) {
  cl_int err = cl().clReleaseEvent(event);
  if (err == CL_SUCCESS)
    record_safely("clReleaseEvent", [&] {
      auto& events = rt().registries().split_events;
      auto record = events.find(event);
      if (record && --record->app_refs == 0 && events.erase(event)) cl().clReleaseEvent(record->start_marker);
    });
  return err;
}

}  // namespace

void install_event_calls(cl_icd_dispatch& table) {
  table.clGetEventInfo = get_event_info;
  table.clWaitForEvents = wait_for_events;
  table.clGetEventProfilingInfo = get_event_profiling_info;
  table.clRetainEvent = retain_event;
  table.clReleaseEvent = release_event;
}

}  // namespace coex::api
