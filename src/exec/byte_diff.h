#pragma once

#include <cstddef>
#include <cstdint>

#include "coherence/interval_set.h"

namespace coex::exec {

// The bytes where `after` differs from `before` (both `size` bytes long), as ranges offset by
// `base`. Byte-exact, so that two devices writing neighbouring bytes of one word merge correctly
// (writes are merged by a diff against a twin).
coherence::IntervalSet changed_bytes(const uint8_t* before, const uint8_t* after, size_t size, uint64_t base);

// `ranges` with gaps shorter than `max_gap` bridged: fewer, larger transfers. Only valid where the
// source of the transfer is current over the gaps as well.
coherence::IntervalSet bridge_gaps(const coherence::IntervalSet& ranges, uint64_t max_gap);

// The same, bridging only gaps that lie wholly inside `fillable`: where the source of the transfer
// is current and the destination may be overwritten.
coherence::IntervalSet bridge_gaps_within(const coherence::IntervalSet& ranges, uint64_t max_gap,
                                          const coherence::IntervalSet& fillable);

}  // namespace coex::exec
