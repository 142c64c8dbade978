#include "devices/host_memory.h"

#include <sys/mman.h>

#include <chrono>
#include <cstring>

namespace coex::devices {
namespace {

double measure_fresh_memory_gbs() {
  void* pages = mmap(nullptr, kFreshMemoryProbeBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (pages == MAP_FAILED) return 0;
  const auto begin = std::chrono::steady_clock::now();
  std::memset(pages, 1, kFreshMemoryProbeBytes);
  const auto end = std::chrono::steady_clock::now();
  // Read back, so that the writes are not dropped as dead before the unmapping.
  const volatile unsigned char last = static_cast<unsigned char*>(pages)[kFreshMemoryProbeBytes - 1];
  (void)last;
  munmap(pages, kFreshMemoryProbeBytes);
  const double seconds = std::chrono::duration<double>(end - begin).count();
  return seconds > 0 ? double(kFreshMemoryProbeBytes) / seconds / 1e9 : 0;
}

}  // namespace

double fresh_memory_gbs() {
  static const double gbs = measure_fresh_memory_gbs();
  return gbs;
}

double fresh_memory_gbs_where_it_matters(double given, double slowest_seconds, double threshold_seconds) {
  if (given > 0) return given;
  return slowest_seconds >= threshold_seconds ? fresh_memory_gbs() : 0;
}

}  // namespace coex::devices
