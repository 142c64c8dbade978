#include "api/launch_validation.h"

#include "api/handler_util.h"

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
  if (!query(cl().clGetCommandQueueInfo, queue, CL_QUEUE_CONTEXT, queue_context) ||
      !query(cl().clGetCommandQueueInfo, queue, CL_QUEUE_DEVICE, device) ||
      !query(cl().clGetKernelInfo, kernel, CL_KERNEL_CONTEXT, kernel_context) || queue_context != kernel_context)
    return invalid;
  for (cl_uint i = 0; i < num_wait; ++i) {
    cl_context event_context = nullptr;
    if (!wait_list[i] || !query(cl().clGetEventInfo, wait_list[i], CL_EVENT_CONTEXT, event_context) ||
        event_context != queue_context)
      return invalid;
  }
  if (!local) return nullptr;
  // Group sizes: non-uniform groups (OpenCL 2.0) are left to the driver as well.
  size_t compiled[3] = {0, 0, 0}, kernel_limit = 0, item_limits[3] = {0, 0, 0};
  cl().clGetKernelWorkGroupInfo(kernel, device, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof(compiled), compiled, nullptr);
  cl().clGetKernelWorkGroupInfo(kernel, device, CL_KERNEL_WORK_GROUP_SIZE, sizeof(kernel_limit), &kernel_limit,
                                nullptr);
  query(cl().clGetDeviceInfo, device, CL_DEVICE_MAX_WORK_ITEM_SIZES, item_limits);
  size_t items = 1;
  for (cl_uint d = 0; d < work_dim; ++d) {
    if (local[d] == 0 || global[d] % local[d] != 0) return invalid;
    if (item_limits[d] && local[d] > item_limits[d]) return invalid;
    if (compiled[0] && local[d] != compiled[d]) return invalid;
    items *= local[d];
  }
  if (kernel_limit && items > kernel_limit) return invalid;
  return nullptr;
}

}  // namespace coex::api
