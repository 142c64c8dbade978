#pragma once

#include <cstdint>

namespace coex::exec {

// Transfers closer than this are joined into one (where the bytes between may be sent): a transfer
// costs far more than 4 KiB of bandwidth.
constexpr uint64_t kBridgeGap = 4096;

}  // namespace coex::exec
