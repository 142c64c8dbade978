#include "piece_rule.h"

#include <algorithm>

namespace coex::oracle {
namespace {

coherence::IntervalSet band_set(const std::vector<kernel::ByteBand>& bands) {
  coherence::IntervalSet set;
  for (const auto& [begin, end] : kernel::band_ranges(bands)) set.add({begin, end});
  return set;
}

}  // namespace

coherence::ChunkAccess modelled_access(const kernel::Footprint& footprint, const std::vector<uint64_t>& buffer_sizes,
                                       const std::vector<bool>& written) {
  coherence::ChunkAccess access(buffer_sizes.size());
  for (size_t i = 0; i < buffer_sizes.size(); ++i) {
    if (!buffer_sizes[i]) continue;
    const coherence::ByteRange whole{0, buffer_sizes[i]};
    // An argument the footprint does not cover is unmodelled, as coex treats it (add_unmodelled):
    // read whole, and written whole where it may be written.
    const bool modelled = i < footprint.args.size();
    const kernel::FootprintTier read = modelled ? footprint.args[i].read : kernel::FootprintTier::Whole;
    const kernel::FootprintTier write = modelled ? footprint.args[i].write : kernel::FootprintTier::None;
    if (read == kernel::FootprintTier::Exact)
      access[i].reads = band_set(footprint.args[i].reads);
    else if (read != kernel::FootprintTier::None)
      access[i].reads.add(whole);
    const bool may_write = i < written.size() ? bool(written[i]) : true;
    if (write == kernel::FootprintTier::Exact)
      access[i].writes = band_set(footprint.args[i].writes);
    else if (write != kernel::FootprintTier::None || may_write)
      // A write coex cannot place, or none modelled where the analysis saw one may happen: the whole
      // argument, never a missing write trusted.
      access[i].writes.add(whole);
  }
  return access;
}

PieceVerdict piece_verdict(const kernel::FootprintModel& model, const kernel::LaunchGeometry& geometry,
                           const kernel::ArgValues& values, const std::vector<bool>& written, uint64_t max_pieces) {
  PieceVerdict v;
  const uint32_t d = geometry.split_dim;
  const uint64_t local = d < 3 ? geometry.local_size[d] : 0;
  const uint64_t groups = local ? geometry.global_size[d] / local + (geometry.global_size[d] % local != 0) : 0;
  v.pieces = split_pieces(groups, max_pieces);
  // One piece is no split: coex does not check it (launch_conflict), and neither does this.
  if (v.pieces.size() < 2) return v;
  for (const GroupRun& p : v.pieces)
    v.accesses.push_back(modelled_access(model.evaluate(geometry, values, p.g0, p.g1), values.buffer_sizes, written));
  v.conflict = coherence::find_conflict(v.accesses);
  return v;
}

}  // namespace coex::oracle
