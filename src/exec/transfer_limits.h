#pragma once

#include <cstdint>

namespace coex::exec {

// Transfers closer than this are joined into one (where the bytes between may be sent): a transfer
// costs far more than 4 KiB of bandwidth.
constexpr uint64_t kBridgeGap = 4096;

// A chunk is pipelined (setting pipeline_pieces) only when its device lacks at least this much of its
// footprint: below it, the uploads take less than the extra sub-launches cost.
constexpr uint64_t kPipelineMinBytes = uint64_t(1) << 20;

}  // namespace coex::exec
