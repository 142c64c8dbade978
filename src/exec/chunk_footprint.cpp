#include "exec/chunk_footprint.h"

#include <algorithm>

namespace coex::exec {
namespace {

using coherence::ByteRange;
using coherence::IntervalSet;

// band_ranges lists at most this many ranges and takes their hull past it: one range per transfer, so
// more would cost more in calls than the hull costs in bytes.
constexpr size_t kMaxRanges = 1 << 16;

// The bands as ranges of the root (the argument starts at `origin`). False when band_ranges had to
// take their hull: the set is then a superset, so it covers no range exactly.
bool add_bands(const std::vector<kernel::ByteBand>& bands, uint64_t origin, IntervalSet& out) {
  bool hull = false;
  for (const auto& [begin, end] : kernel::band_ranges(bands, kMaxRanges, &hull))
    out.add({origin + begin, origin + end});
  return !hull;
}

ArgTier worse(ArgTier a, ArgTier b) { return static_cast<int>(a) >= static_cast<int>(b) ? a : b; }

// One buffer argument without a model: replicated, and diffed when it may be written (the safe tier).
ArgTier add_unmodelled(const ArgBinding& binding, RootFootprint& root) {
  ByteRange whole{binding.origin, binding.origin + binding.size};
  root.reads.add(whole);
  root.need.add(whole);
  if (!binding.written) return ArgTier::Whole;
  root.unknown_writes.add(whole);
  return ArgTier::Diff;
}

ArgTier add_argument(const kernel::ArgFootprint& a, const ArgBinding& binding, RootFootprint& root) {
  ByteRange whole{binding.origin, binding.origin + binding.size};
  ArgTier tier = ArgTier::None;
  if (a.read == kernel::FootprintTier::Exact) {
    IntervalSet reads;
    add_bands(a.reads, binding.origin, reads);
    root.reads.add(reads);
    root.need.add(reads);
    tier = ArgTier::Exact;
  } else if (a.read != kernel::FootprintTier::None) {
    root.reads.add(whole);
    root.need.add(whole);
    tier = ArgTier::Whole;
  }
  if (a.write == kernel::FootprintTier::Exact) {
    IntervalSet writes;
    bool listed = add_bands(a.writes, binding.origin, writes);
    // Bytes in the footprint that the chunk skips keep the device's values, which must be current.
    if (!(a.writes_cover && listed)) root.need.add(writes);
    (a.writes_injective ? root.injective_writes : root.diffed_writes).add(writes);
    return worse(tier, ArgTier::Exact);
  }
  // No modelled write, but the access analysis did not prove the argument read-only (a store the
  // model does not see): merge by diff, never trust a missing write.
  if (a.write != kernel::FootprintTier::None || binding.written) {
    root.need.add(whole);
    root.unknown_writes.add(whole);
    return ArgTier::Diff;
  }
  return tier;
}

}  // namespace

const char* arg_tier_name(ArgTier tier) {
  switch (tier) {
    case ArgTier::None:
      return "none";
    case ArgTier::Exact:
      return "exact";
    case ArgTier::Whole:
      return "whole";
    case ArgTier::Diff:
      return "diff";
  }
  return "none";
}

IntervalSet RootFootprint::writes() const {
  IntervalSet all = injective_writes;
  all.add(diffed_writes);
  all.add(unknown_writes);
  return all;
}

IntervalSet RootWrites::all() const {
  IntervalSet out = injective;
  out.add(diffed);
  out.add(unknown);
  return out;
}

ChunkFootprint root_footprint(const kernel::Footprint* footprint, const std::vector<ArgBinding>& bindings,
                              size_t root_count) {
  ChunkFootprint out;
  out.roots.resize(root_count);
  out.arg_tiers.assign(bindings.size(), ArgTier::None);
  for (size_t i = 0; i < bindings.size(); ++i) {
    const ArgBinding& binding = bindings[i];
    if (binding.kind != ArgBinding::Kind::Buffer || binding.root < 0 || size_t(binding.root) >= root_count) continue;
    RootFootprint& root = out.roots[size_t(binding.root)];
    bool modelled = footprint && i < footprint->args.size();
    out.arg_tiers[i] = modelled ? add_argument(footprint->args[i], binding, root) : add_unmodelled(binding, root);
  }
  return out;
}

ChunkFootprint chunk_footprint(const LaunchJob& job, uint64_t g0, uint64_t g1, bool keep) {
  if (!job.footprint) return root_footprint(nullptr, job.bindings, job.roots.size());
  kernel::Footprint fp = keep ? job.footprint->evaluate(job.footprint_geometry, job.footprint_values, g0, g1)
                              : job.footprint->evaluate_unkept(job.footprint_geometry, job.footprint_values, g0, g1);
  return root_footprint(&fp, job.bindings, job.roots.size());
}

void add_chunk_writes(std::vector<RootWrites>& writes, const ChunkFootprint& chunk) {
  if (writes.size() < chunk.roots.size()) writes.resize(chunk.roots.size());
  for (size_t k = 0; k < chunk.roots.size(); ++k) {
    writes[k].injective.add(chunk.roots[k].injective_writes);
    writes[k].diffed.add(chunk.roots[k].diffed_writes);
    writes[k].unknown.add(chunk.roots[k].unknown_writes);
  }
}

void merge_arg_tiers(std::vector<ArgTier>& into, const std::vector<ArgTier>& from) {
  if (into.size() < from.size()) into.resize(from.size(), ArgTier::None);
  for (size_t i = 0; i < from.size(); ++i) into[i] = worse(into[i], from[i]);
}

// What FootprintModel::evaluate needs of this launch: its geometry as the app
// enqueued it, the bytes of the by-value arguments and the sizes of the bound
// buffers (footprints are relative to them).
void capture_footprint_inputs(const kernel::KernelInfo& info, const std::vector<model::KernelArgValue>& args,
                              LaunchJob& job) {
  job.footprint = info.footprint;
  kernel::LaunchGeometry& g = job.footprint_geometry;
  g.work_dim = job.geometry.work_dim;
  g.split_dim = job.geometry.split_dim();
  for (unsigned d = 0; d < 3; ++d) {
    g.global_offset[d] = job.geometry.offset[d];
    g.global_size[d] = job.geometry.global[d];
    g.local_size[d] = job.geometry.local[d];
  }
  job.footprint_values.bytes.resize(args.size());
  job.footprint_values.buffer_sizes.assign(args.size(), 0);
  for (size_t i = 0; i < args.size(); ++i) {
    if (job.bindings[i].kind == ArgBinding::Kind::Value) job.footprint_values.bytes[i] = args[i].bytes;
    if (job.bindings[i].kind == ArgBinding::Kind::Buffer) job.footprint_values.buffer_sizes[i] = job.bindings[i].size;
  }
}

}  // namespace coex::exec
