// Command queues: which device and context each app queue feeds, and its properties.
#include "api/handler_util.h"
#include "exec/deferred_app_binary.h"

namespace coex::api {
namespace {

void record_queue(cl_command_queue queue, cl_context context, cl_device_id device) {
  record_safely("clCreateCommandQueue", [&] {
    auto record = std::make_shared<model::QueueRecord>();
    record->handle = queue;
    record->context = context;
    record->context_record = rt().registries().contexts.find(context);
    record->device = device;
    cl().clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof(record->properties), &record->properties, nullptr);
    rt().registries().queues.insert(queue, record);
  });
}

cl_command_queue CL_API_CALL create_queue(cl_context context, cl_device_id device,
                                          cl_command_queue_properties properties, cl_int* errcode_ret) {
  cl_command_queue queue = cl().clCreateCommandQueue(context, device, properties, errcode_ret);
  if (queue) record_queue(queue, context, device);
  return queue;
}

cl_command_queue CL_API_CALL create_queue_with_properties(cl_context context, cl_device_id device,
                                                          const cl_queue_properties* properties, cl_int* errcode_ret) {
  cl_command_queue queue = cl().clCreateCommandQueueWithProperties(context, device, properties, errcode_ret);
  if (queue) record_queue(queue, context, device);
  return queue;
}

cl_int CL_API_CALL release_queue(cl_command_queue queue) {
  // Not while a read of a program's binary flushes the app's queues (exec/deferred_app_binary.h).
  std::unique_lock release_lock(exec::queue_release_lock());
  bool last = is_last_reference(cl().clGetCommandQueueInfo, queue, CL_QUEUE_REFERENCE_COUNT);
  cl_int err = cl().clReleaseCommandQueue(queue);
  if (err == CL_SUCCESS && last) record_safely("clReleaseCommandQueue", [&] { rt().registries().queues.erase(queue); });
  return err;
}

}  // namespace

void install_queue_calls(cl_icd_dispatch& table) {
  table.clCreateCommandQueue = create_queue;
  table.clCreateCommandQueueWithProperties = create_queue_with_properties;
  table.clReleaseCommandQueue = release_queue;
}

}  // namespace coex::api
