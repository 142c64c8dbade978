#pragma once

#include <cstdint>
#include <string_view>

namespace coex::model {

// FNV-1a, 64 bits: identifies a kernel source across runs (history cache keys), not a security hash.
inline uint64_t fnv1a64(std::string_view bytes) {
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

}  // namespace coex::model
