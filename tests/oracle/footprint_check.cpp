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

coherence::ChunkAccess actual_access(const std::vector<ArgAccess>& touched) {
  coherence::ChunkAccess access(touched.size());
  for (size_t i = 0; i < touched.size(); ++i) {
    access[i].reads = touched[i].loads;
    access[i].writes = touched[i].stores;
  }
  return access;
}

std::string describe(const coherence::Conflict& conflict, const std::vector<GroupRun>& pieces,
                     const std::vector<std::string>& names) {
  if (!conflict) return "independent";
  auto piece = [&pieces](size_t i) {
    std::string text = "piece " + std::to_string(i);
    if (i < pieces.size())
      text += " (groups [" + std::to_string(pieces[i].g0) + ", " + std::to_string(pieces[i].g1) + "))";
    return text;
  };
  std::string arg =
      conflict.buffer < names.size() ? names[conflict.buffer] : "argument " + std::to_string(conflict.buffer);
  std::string text = std::string(coherence::conflict_reason(conflict.kind)) + ": ";
  if (conflict.kind == coherence::ConflictKind::OverlappingWrites)
    return text + piece(conflict.first) + " and " + piece(conflict.second) + " both write " +
           conflict.bytes.to_string() + " of " + arg;
  return text + piece(conflict.first) + " reads " + conflict.bytes.to_string() + " of " + arg + ", which " +
         piece(conflict.second) + " writes";
}

DependencyCheck check_dependencies(const KernelRun& run, uint32_t dim, const PieceVerdict& verdict,
                                   const std::vector<std::string>& names, const std::string& expected) {
  DependencyCheck result;
  result.modelled = verdict.conflict;
  // The truth over the very pieces coex evaluated: the rule under test is the verdict on those. A
  // dependency between groups of one piece is not one between pieces; the end of a split checks
  // the chunks that really ran for that.
  std::vector<coherence::ChunkAccess> actual;
  for (const GroupRun& p : verdict.pieces)
    actual.push_back(actual_access(touched_by(run, Chunk{dim, p.g0, p.g1}, names.size())));
  if (actual.size() >= 2) result.actual = coherence::find_conflict(actual);
  if (result.actual && !result.modelled)
    result.violations.push_back("coex would split, yet the pieces' accesses conflict: " +
                                describe(result.actual, verdict.pieces, names));
  if (result.modelled && !result.actual) result.over_conservative = describe(result.modelled, verdict.pieces, names);
  if (!expected.empty()) {
    std::string got = result.modelled ? coherence::conflict_reason(result.modelled.kind) : "independent";
    if (expected != "independent" && expected != "overlapping_writes" && expected != "cross_chunk_dependency")
      result.violations.push_back("unknown expected verdict \"" + expected + "\"");
    else if (got != expected)
      result.violations.push_back("coex's verdict is " + describe(result.modelled, verdict.pieces, names) +
                                  ", expected " + expected);
  }
  return result;
}

}  // namespace coex::oracle
