// cl_khr_command_buffer: the kernels an app records into a command buffer run on its device, unsplit,
// when it enqueues the buffer, and coex sees neither their arguments nor what they write. So before
// such an enqueue every buffer of the queue's context gets on home what other devices wrote (lazy
// home, exec/home_sync.h) and every split in flight on it writes home before it ends; after it, home's
// copy of each is the one written. Before, a command buffer that read what a split had written found
// device 1's part missing on home (tests/apps/command_buffer: half the elements stale). coex hands
// the app its own clEnqueueCommandBufferKHR for the first platform whose function it is asked for.
#include <CL/cl_ext.h>
#include <spdlog/spdlog.h>

#include <cstring>
#include <mutex>
#include <unordered_set>
#include <vector>

#include "api/extension_functions.h"
#include "api/handler_util.h"
#include "exec/deferred_app_binary.h"
#include "exec/home_sync.h"
#include "model/registries.h"

namespace coex::api {
namespace {

std::mutex functions_mutex;
clEnqueueCommandBufferKHR_fn driver_enqueue = nullptr;  // the driver's, under functions_mutex once set
clGetCommandBufferInfoKHR_fn driver_info = nullptr;

// The queue the command buffer runs on: the app's first, else the first it was recorded for.
cl_command_queue queue_of(cl_uint num_queues, const cl_command_queue* queues, cl_command_buffer_khr buffer) {
  if (num_queues && queues && queues[0]) return queues[0];
  cl_uint count = 0;
  if (!driver_info ||
      driver_info(buffer, CL_COMMAND_BUFFER_NUM_QUEUES_KHR, sizeof count, &count, nullptr) != CL_SUCCESS || !count)
    return nullptr;
  std::vector<cl_command_queue> recorded(count);
  if (driver_info(buffer, CL_COMMAND_BUFFER_QUEUES_KHR, count * sizeof(cl_command_queue), recorded.data(), nullptr) !=
      CL_SUCCESS)
    return nullptr;
  return recorded[0];
}

cl_int CL_API_CALL enqueue_command_buffer(cl_uint num_queues, cl_command_queue* queues, cl_command_buffer_khr buffer,
                                          cl_uint num_wait, const cl_event* wait_list, cl_event* event) {
  static const char* const kCall = "clEnqueueCommandBufferKHR";
  // No queue known (a NULL platform gave no clGetCommandBufferInfoKHR): every tracked buffer, synced
  // through coex's own queues.
  const cl_command_queue queue = queue_of(num_queues, queues, buffer);
  // The buffers the command buffer may touch: the roots of the queue's context, and a sub-buffer
  // whose root the app released (its record left the registry; the sub-buffer keeps it alive).
  std::vector<std::shared_ptr<model::BufferRecord>> buffers;
  record_safely(kCall, [&] {
    const auto queue_record = queue ? rt().registries().queues.find(queue) : nullptr;
    const auto all = rt().registries().buffers.snapshot();
    std::unordered_set<const model::BufferRecord*> tracked;
    for (const auto& record : all) tracked.insert(record.get());
    for (const auto& record : all) {
      if (!record->state || (queue_record && record->context != queue_record->context)) continue;
      if (record->root && tracked.count(record->root.get())) continue;  // its root, tracked, covers it
      buffers.push_back(record);
    }
  });
  for (const auto& record : buffers)
    if (cl_int err = exec::app_will_write(rt(), kCall, queue, record->handle, 0, SIZE_MAX)) return err;
  const cl_int err = driver_enqueue(num_queues, queues, buffer, num_wait, wait_list, event);
  if (err == CL_SUCCESS)
    record_safely(kCall, [&] {
      for (const auto& record : buffers) {
        std::lock_guard lock(record->state->mutex());
        record->state->app_wrote(record->origin, record->origin + record->size);
      }
    });
  return err;
}

}  // namespace

// coex's clEnqueueCommandBufferKHR in place of the driver's. Any use of command buffers keeps later
// reads of program binaries from waiting for their launches: coex cannot see those
// (exec/deferred_app_binary.h).
void* command_buffer_function(cl_platform_id platform, const char* name, void* function) {
  const bool of_command_buffers =
      name && (std::strncmp(name, "clCommand", 9) == 0 || std::strstr(name, "CommandBuffer") != nullptr);
  if (!function || !of_command_buffers) return function;
  exec::note_command_buffers_used();
  if (std::strcmp(name, "clEnqueueCommandBufferKHR") != 0) return function;
  std::lock_guard lock(functions_mutex);
  if (!driver_enqueue) {
    driver_enqueue = reinterpret_cast<clEnqueueCommandBufferKHR_fn>(function);
    driver_info = reinterpret_cast<clGetCommandBufferInfoKHR_fn>(
        platform ? cl().clGetExtensionFunctionAddressForPlatform(platform, "clGetCommandBufferInfoKHR")
                 : cl().clGetExtensionFunctionAddress("clGetCommandBufferInfoKHR"));
  }
  if (reinterpret_cast<void*>(driver_enqueue) != function) {
    spdlog::warn(
        "clEnqueueCommandBufferKHR of a second platform: its command buffers may read what splits wrote "
        "elsewhere without it (coex handles the first platform's only)");
    return function;
  }
  return reinterpret_cast<void*>(&enqueue_command_buffer);
}

}  // namespace coex::api
