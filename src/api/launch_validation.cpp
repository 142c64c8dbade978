#include "api/launch_validation.h"

#include "api/handler_util.h"
#include "devices/device_set.h"
#include "exec/device_kernels.h"
#include "model/registries.h"

namespace coex::api {
namespace {

template <typename T, typename Fn, typename Handle, typename Param>
bool query(Fn fn, Handle handle, Param param, T& out) {
  return fn(handle, param, sizeof(T), &out, nullptr) == CL_SUCCESS;
}

}  // namespace

const char* launch_left_to_driver(cl_command_queue queue, cl_kernel kernel, cl_uint work_dim, const size_t* global,
                                  const size_t* local, cl_uint num_wait, const cl_event* wait_list) {
  const char* invalid = "invalid_launch";
  if (!global || work_dim < 1 || work_dim > 3) return invalid;
  // Wait lists: some drivers accept what the spec rejects (a list with a count of 0, a null
  // event); coex's markers would answer by the spec. The driver's answer it is.
  if ((num_wait == 0) != (wait_list == nullptr)) return invalid;
  cl_context queue_context = nullptr, kernel_context = nullptr;
  cl_device_id device = nullptr;
  // What coex recorded of the queue and the kernel when the app made them; the driver for those it
  // never saw.
  auto queue_record = rt().registries().queues.find(queue);
  auto kernel_record = rt().registries().kernels.find(kernel);
  if (queue_record && kernel_record && kernel_record->program) {
    queue_context = queue_record->context;
    device = queue_record->device;
    kernel_context = kernel_record->program->context;
  } else if (!query(cl().clGetCommandQueueInfo, queue, CL_QUEUE_CONTEXT, queue_context) ||
             !query(cl().clGetCommandQueueInfo, queue, CL_QUEUE_DEVICE, device) ||
             !query(cl().clGetKernelInfo, kernel, CL_KERNEL_CONTEXT, kernel_context)) {
    return invalid;
  }
  if (!queue_context || queue_context != kernel_context) return invalid;
  for (cl_uint i = 0; i < num_wait; ++i) {
    cl_context event_context = nullptr;
    if (!wait_list[i] || !query(cl().clGetEventInfo, wait_list[i], CL_EVENT_CONTEXT, event_context) ||
        event_context != queue_context)
      return invalid;
  }
  if (!local) return nullptr;
  // Group sizes: non-uniform groups (OpenCL 2.0) are left to the driver as well.
  const model::KernelGroupInfo group = exec::kernel_group_info(cl(), kernel, kernel_record.get(), device);
  size_t item_limits[3] = {0, 0, 0};
  if (int index = rt().devices().index_of(device); index >= 0) {
    for (int d = 0; d < 3; ++d) item_limits[d] = rt().devices().at(index).max_work_item_sizes[d];
  } else {
    query(cl().clGetDeviceInfo, device, CL_DEVICE_MAX_WORK_ITEM_SIZES, item_limits);
  }
  size_t items = 1;
  for (cl_uint d = 0; d < work_dim; ++d) {
    if (local[d] == 0 || global[d] % local[d] != 0) return invalid;
    if (item_limits[d] && local[d] > item_limits[d]) return invalid;
    if (group.compiled[0] && local[d] != group.compiled[d]) return invalid;
    items *= local[d];
  }
  if (group.limit && items > group.limit) return invalid;
  return nullptr;
}

}  // namespace coex::api
