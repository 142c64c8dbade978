// Host staging for one device's read-backs, pinned where the driver offers it: a buffer made with
// CL_MEM_ALLOC_HOST_PTR in that device's shadow context and mapped once. NVIDIA's OpenCL copies to
// and from such memory by DMA at full bus speed, and into pageable memory through a bounce buffer
// of its own (NVIDIA's OpenCL best practices guide, "pinned memory"). Plain host memory where the
// driver refuses, and on the home device, whose context is the app's: no buffer of coex's there.
#pragma once

#include <CL/cl_icd.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace coex::exec {

class PinnedStaging {
 public:
  explicit PinnedStaging(const cl_icd_dispatch& cl) : cl_(cl) {}
  PinnedStaging(const PinnedStaging&) = delete;
  PinnedStaging& operator=(const PinnedStaging&) = delete;
  // Keeps its pinned buffers until the process ends (see keep_until_exit in the .cpp).
  ~PinnedStaging();

  // Slot `slot`, at least `bytes` long. With `queue` (a shadow queue: its context gets the buffer),
  // pinned memory when the driver gives it; without, plain memory. Its bytes are left as they are:
  // a read-back overwrites what it uses.
  uint8_t* get(size_t slot, size_t bytes, cl_command_queue queue);

 private:
  struct Block {
    cl_mem mem = nullptr;  // the pinned buffer, mapped at `data`; null: plain
    cl_command_queue queue = nullptr;
    uint8_t* data = nullptr;
    size_t size = 0;
    std::vector<uint8_t> plain;
    bool refused = false;  // the driver gave no pinned buffer of this size: not asked again
  };
  void drop(Block& block);

  const cl_icd_dispatch& cl_;
  std::vector<Block> slots_;
};

}  // namespace coex::exec
