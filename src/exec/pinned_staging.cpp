#include "exec/pinned_staging.h"

#include <spdlog/spdlog.h>

#include <mutex>

namespace coex::exec {
namespace {

// coex calls no driver at exit (Runtime::shutdown: the drivers may be half torn down), so a worker's
// pinned buffers are not released then: they stay mapped until the process ends, listed here so that
// they are still reachable (a leak checker would otherwise report the driver's allocations).
void keep_until_exit(cl_mem mem) {
  static std::mutex mutex;
  static auto* kept = new std::vector<cl_mem>();  // never freed, on purpose
  std::lock_guard lock(mutex);
  kept->push_back(mem);
}

}  // namespace

PinnedStaging::~PinnedStaging() {
  for (Block& block : slots_)
    if (block.mem) keep_until_exit(block.mem);
}

void PinnedStaging::drop(Block& block) {
  if (block.mem) {
    // Unmapped before release, as the spec asks; both are queued after the transfers that used it.
    cl_.clEnqueueUnmapMemObject(block.queue, block.mem, block.data, 0, nullptr, nullptr);
    cl_.clReleaseMemObject(block.mem);
  }
  block = Block{};
}

uint8_t* PinnedStaging::get(size_t slot, size_t bytes, cl_command_queue queue) {
  if (slots_.size() <= slot) slots_.resize(slot + 1);
  Block& block = slots_[slot];
  const bool pinned_fits = block.mem != nullptr || block.refused;
  if (block.size >= bytes && (queue ? pinned_fits : block.mem == nullptr)) return block.data;
  drop(block);
  if (queue) {
    cl_context context = nullptr;
    cl_int err = cl_.clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof context, &context, nullptr);
    cl_mem mem = err == CL_SUCCESS
                     ? cl_.clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, nullptr, &err)
                     : nullptr;
    void* data = mem ? cl_.clEnqueueMapBuffer(queue, mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, nullptr,
                                              nullptr, &err)
                     : nullptr;
    if (data) {
      block = Block{mem, queue, static_cast<uint8_t*>(data), bytes, {}};
      return block.data;
    }
    if (mem) cl_.clReleaseMemObject(mem);
    spdlog::debug("no pinned staging of {} bytes (error {}): plain host memory", bytes, err);
    block.refused = true;
  }
  block.plain.resize(bytes);
  block.data = block.plain.data();
  block.size = bytes;
  return block.data;
}

}  // namespace coex::exec
