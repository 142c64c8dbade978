#include "footprint_check.h"

namespace coex::oracle {
namespace {

const char* tier_name(kernel::FootprintTier tier) {
  switch (tier) {
    case kernel::FootprintTier::None: return "none";
    case kernel::FootprintTier::Exact: return "exact";
    case kernel::FootprintTier::Whole: return "whole";
    case kernel::FootprintTier::Diff: return "diff";
  }
  return "?";
}

// (a) for one direction: the bytes touched that the footprint does not hold, or empty.
coherence::IntervalSet outside(kernel::FootprintTier tier, const std::vector<kernel::ByteBand>& bands,
                               const coherence::IntervalSet& touched) {
  coherence::IntervalSet out = touched;
  if (tier == kernel::FootprintTier::Whole || tier == kernel::FootprintTier::Diff) return {};
  if (tier == kernel::FootprintTier::Exact) out.subtract(footprint_bytes(bands));
  return out;
}

}  // namespace

std::string Chunk::to_string() const {
  return "groups [" + std::to_string(g0) + ", " + std::to_string(g1) + ") of dimension " + std::to_string(dim);
}

std::vector<ArgAccess> touched_by(const KernelRun& run, const Chunk& chunk, size_t args) {
  std::vector<ArgAccess> out(args);
  for (const auto& [group, per_arg] : run.groups) {
    if (chunk.dim > 2 || group[chunk.dim] < chunk.g0 || group[chunk.dim] >= chunk.g1) continue;
    for (size_t i = 0; i < per_arg.size() && i < args; ++i) {
      out[i].loads.add(per_arg[i].loads);
      out[i].stores.add(per_arg[i].stores);
    }
  }
  return out;
}

coherence::IntervalSet footprint_bytes(const std::vector<kernel::ByteBand>& bands) {
  coherence::IntervalSet set;
  for (const auto& [begin, end] : kernel::band_ranges(bands)) set.add({begin, end});
  return set;
}

ChunkCheck check_chunk(const kernel::Footprint& footprint, const std::vector<ArgAccess>& touched,
                       const std::vector<std::string>& names, bool tightness, const std::set<size_t>& loose) {
  ChunkCheck result;
  for (size_t i = 0; i < touched.size(); ++i) {
    kernel::ArgFootprint none;
    const kernel::ArgFootprint& fp = i < footprint.args.size() ? footprint.args[i] : none;
    std::string name = i < names.size() ? names[i] : "argument " + std::to_string(i);
    struct Direction {
      bool write;
      kernel::FootprintTier tier;
      const std::vector<kernel::ByteBand>& bands;
      const coherence::IntervalSet& touched;
    };
    for (const Direction& d : {Direction{false, fp.read, fp.reads, touched[i].loads},
                               Direction{true, fp.write, fp.writes, touched[i].stores}}) {
      const char* verb = d.write ? "stored" : "loaded";
      coherence::IntervalSet missed = outside(d.tier, d.bands, d.touched);
      if (!missed.empty())
        result.violations.push_back(name + ": " + verb + " " + missed.to_string() + " outside its " +
                                    tier_name(d.tier) + " footprint");
      if (d.tier != kernel::FootprintTier::Exact) continue;
      if (d.write && fp.writes_cover) {
        coherence::IntervalSet skipped = footprint_bytes(d.bands);
        skipped.subtract(d.touched);
        if (!skipped.empty())
          result.violations.push_back(name + ": claims its writes cover their footprint, yet " + skipped.to_string() +
                                      " was not stored");
      }
      ArgRatio ratio{i, d.write, footprint_bytes(d.bands).total(), d.touched.total()};
      result.ratios.push_back(ratio);
      if (tightness && !loose.count(i) && ratio.too_large())
        result.violations.push_back(name + ": exact " + (d.write ? "write" : "read") + " footprint of " +
                                    std::to_string(ratio.footprint) + " bytes for " + std::to_string(ratio.touched) +
                                    " " + verb + " (more than 10% larger)");
    }
  }
  return result;
}

std::vector<coherence::IntervalSet> stored_by_several_groups(const KernelRun& run, size_t args) {
  std::vector<coherence::IntervalSet> seen(args), twice(args);
  for (const auto& [group, per_arg] : run.groups)
    for (size_t i = 0; i < per_arg.size() && i < args; ++i) {
      twice[i].add(coherence::intersection(seen[i], per_arg[i].stores));
      seen[i].add(per_arg[i].stores);
    }
  return twice;
}

}  // namespace coex::oracle
