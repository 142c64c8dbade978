#include "exec/split_safety.h"

#include <algorithm>
#include <cstring>

#include <spdlog/spdlog.h>

namespace coex::exec {

coherence::ChunkAccess chunk_access(const ChunkFootprint& footprint) {
  coherence::ChunkAccess access(footprint.roots.size());
  for (size_t k = 0; k < footprint.roots.size(); ++k) {
    access[k].reads = footprint.roots[k].reads;
    access[k].writes = footprint.roots[k].writes();
  }
  return access;
}

namespace {

// The common case, proven from one evaluation of the whole launch: every root the launch writes is
// written through one argument only, exactly and injectively (no two work-items write one byte), and
// read nowhere in the launch. Chunks then write disjoint bytes and read none that another writes.
bool writes_injective_and_unread(const LaunchJob& job) {
  if (!job.footprint) return false;
  const uint64_t groups = job.geometry.groups_along_split();
  kernel::Footprint whole = job.footprint->evaluate(job.footprint_geometry, job.footprint_values, 0, groups);
  ChunkFootprint roots = root_footprint(&whole, job.bindings, job.roots.size());
  std::vector<int> writers(job.roots.size(), 0);
  for (size_t i = 0; i < job.bindings.size(); ++i) {
    const ArgBinding& b = job.bindings[i];
    if (b.kind != ArgBinding::Kind::Buffer || b.root < 0 || size_t(b.root) >= writers.size()) continue;
    if (i >= whole.args.size()) return false;
    const kernel::ArgFootprint& a = whole.args[i];
    if (a.write == kernel::FootprintTier::None && !b.written) continue;
    if (a.write != kernel::FootprintTier::Exact || !a.writes_injective) return false;
    ++writers[size_t(b.root)];
  }
  for (size_t k = 0; k < writers.size(); ++k)
    if (writers[k] > 1 || (writers[k] == 1 && !intersection(roots.roots[k].reads, roots.roots[k].writes()).empty()))
      return false;
  return true;
}

}  // namespace

coherence::Conflict launch_conflict(const LaunchJob& job, size_t max_pieces) {
  if (writes_injective_and_unread(job)) return {};
  std::vector<coherence::ChunkAccess> accesses;
  for (const coherence::GroupRun& run : coherence::even_runs(job.geometry.groups_along_split(), max_pieces))
    accesses.push_back(chunk_access(chunk_footprint(job, run.g0, run.g1, /*keep=*/false)));
  return coherence::find_conflict(accesses);
}

std::string conflict_key(const LaunchJob& job) {
  std::string key;
  auto put = [&key](const void* p, size_t n) { key.append(static_cast<const char*>(p), n); };
  const kernel::LaunchGeometry& g = job.footprint_geometry;
  put(&g.work_dim, sizeof g.work_dim);
  put(&g.split_dim, sizeof g.split_dim);
  put(g.global_offset, sizeof g.global_offset);
  put(g.global_size, sizeof g.global_size);
  put(g.local_size, sizeof g.local_size);
  for (size_t i = 0; i < job.bindings.size(); ++i) {
    const ArgBinding& b = job.bindings[i];
    const int kind = static_cast<int>(b.kind);
    put(&kind, sizeof kind);
    if (b.kind == ArgBinding::Kind::Value && i < job.args.size()) {
      const uint64_t n = job.args[i].bytes.size();
      put(&n, sizeof n);
      put(job.args[i].bytes.data(), job.args[i].bytes.size());
    } else if (b.kind == ArgBinding::Kind::Buffer) {
      put(&b.root, sizeof b.root);
      put(&b.origin, sizeof b.origin);
      put(&b.size, sizeof b.size);
      put(&b.written, sizeof b.written);
    }
  }
  return key;
}

namespace {

// A program's memo holds at most this many launches per kernel: an app whose scalar arguments change
// at every launch (a factorization's step) would grow it for ever.
constexpr size_t kMaxVerdictsPerKernel = 256;

void remember(model::ProgramRecord& program, const std::string& kernel_name, std::string key, std::string reason) {
  std::lock_guard lock(program.mutex);
  auto& verdicts = program.chunk_verdicts[kernel_name];
  if (verdicts.size() >= kMaxVerdictsPerKernel) verdicts.clear();
  verdicts[std::move(key)] = std::move(reason);
}

}  // namespace

std::string chunk_verdict(model::ProgramRecord& program, const std::string& kernel_name, const LaunchJob& job,
                          size_t max_pieces) {
  std::string key = conflict_key(job);
  {
    std::lock_guard lock(program.mutex);
    auto kernel = program.chunk_verdicts.find(kernel_name);
    if (kernel != program.chunk_verdicts.end()) {
      auto it = kernel->second.find(key);
      if (it != kernel->second.end()) return it->second;
    }
  }
  coherence::Conflict conflict = launch_conflict(job, max_pieces);
  std::string reason = coherence::conflict_reason(conflict.kind);
  if (conflict)
    spdlog::info("kernel {}: not split, its work-groups depend on each other ({}, work-groups in {} runs)",
                 kernel_name, conflict.to_string(), std::min<uint64_t>(job.geometry.groups_along_split(), max_pieces));
  remember(program, kernel_name, std::move(key), reason);
  return reason;
}

void remember_chunk_verdict(model::ProgramRecord& program, const std::string& kernel_name, const LaunchJob& job,
                            const char* reason) {
  remember(program, kernel_name, conflict_key(job), reason);
}

coherence::Conflict changes_conflict(const std::map<int, DeviceChanges>& changes) {
  std::vector<coherence::ChunkAccess> by_device;
  for (const auto& [device, change] : changes) {
    coherence::ChunkAccess access(std::max({change.changed.size(), change.in_place.size(), change.resident.size()}));
    for (size_t k = 0; k < access.size(); ++k) {
      if (k < change.changed.size()) access[k].writes.add(change.changed[k]);
      if (k < change.in_place.size()) access[k].writes.add(change.in_place[k]);
      if (k < change.resident.size()) access[k].writes.add(change.resident[k]);
    }
    by_device.push_back(std::move(access));
  }
  return coherence::find_conflict(by_device);
}

}  // namespace coex::exec
