// libFuzzer target (docs/testing.md): the kernel analysis fed arbitrary source text must neither crash nor
// hang, and every kernel it finds gets a verdict. Each input is analysed as an OpenCL C program;
// the splittable kernels are rewritten and their footprints evaluated for launch values taken from
// the input's own bytes, so that the integer arithmetic of evaluate() sees hostile values too. Each
// launch also gets coex's split-safety verdict (tests/oracle/piece_rule.h: its pieces' footprints,
// find_conflict over them), so the conflict code sees hostile footprints, and the verdict must be
// self-consistent (check_piece_verdict).
// Built with -DCOEX_FUZZ=ON (clang only); scripts/fuzz-analyzer runs it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "coherence/chunk_conflicts.h"
#include "kernel/clang_session.h"
#include "kernel/footprint.h"
#include "kernel/kernel_analysis.h"
#include "kernel/kernel_analysis_detail.h"
#include "piece_rule.h"

namespace {

using namespace coex::kernel;

// Launch values drawn from the input bytes (cycled), so each input also picks its geometry.
class ByteSource {
 public:
  ByteSource(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint64_t next(unsigned bytes) {
    uint64_t v = 0;
    for (unsigned i = 0; i < bytes; ++i) v = (v << 8) | (size_ ? data_[at_++ % size_] : 0);
    return v;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

using coex::coherence::ChunkAccess;
using coex::coherence::Conflict;
using coex::coherence::ConflictKind;
using coex::coherence::find_conflict;
using coex::coherence::IntervalSet;

bool subset(const IntervalSet& part, const IntervalSet& of) { return coex::coherence::intersection(part, of) == part; }

// The conflict names two different chunks and bytes that both really touch in the way it says.
void check_named(const Conflict& c, const std::vector<ChunkAccess>& chunks) {
  if (!c) return;
  if (c.first == c.second || c.first >= chunks.size() || c.second >= chunks.size() || c.bytes.empty()) std::abort();
  const ChunkAccess& first = chunks[c.first];
  const ChunkAccess& second = chunks[c.second];
  if (c.buffer >= first.size() || c.buffer >= second.size()) std::abort();
  const IntervalSet& mine = c.kind == ConflictKind::OverlappingWrites ? first[c.buffer].writes : first[c.buffer].reads;
  if (!subset(c.bytes, mine) || !subset(c.bytes, second[c.buffer].writes)) std::abort();
}

ChunkAccess merged(const ChunkAccess& a, const ChunkAccess& b) {
  ChunkAccess out = a.size() >= b.size() ? a : b;
  const ChunkAccess& other = a.size() >= b.size() ? b : a;
  for (size_t k = 0; k < other.size(); ++k) {
    out[k].reads.add(other[k].reads);
    out[k].writes.add(other[k].writes);
  }
  return out;
}

// coex's verdict on the launch (the pieces rule) and properties that hold for any footprints: a
// piece alone never conflicts; the kind and buffer found do not depend on the order of the pieces
// (writes are checked before reads, buffer by buffer); independent pieces stay independent when two
// adjacent ones are merged into one chunk (as a device that runs both does).
void check_piece_verdict(const KernelInfo& kernel, const LaunchGeometry& g, const ArgValues& values,
                         uint64_t max_pieces) {
  std::vector<bool> written;
  std::vector<uint64_t> sizes;
  for (size_t i = 0; i < kernel.args.size(); ++i) {
    const ArgInfo& arg = kernel.args[i];
    written.push_back(arg.written);
    bool buffer = arg.kind == ArgKind::GlobalPointer || arg.kind == ArgKind::ConstantPointer;
    // coex always knows a bound buffer's size; an unknown one here stands for the largest.
    sizes.push_back(!buffer ? 0 : values.buffer_sizes[i] ? values.buffer_sizes[i] : UINT64_MAX);
  }
  ArgValues with_sizes = values;
  with_sizes.buffer_sizes = sizes;
  coex::oracle::PieceVerdict v = coex::oracle::piece_verdict(*kernel.footprint, g, with_sizes, written, max_pieces);
  if (v.pieces.size() < 2) return;
  if (v.accesses.size() != v.pieces.size()) std::abort();
  check_named(v.conflict, v.accesses);
  for (const ChunkAccess& piece : v.accesses)
    if (find_conflict({piece})) std::abort();
  std::vector<ChunkAccess> reversed(v.accesses.rbegin(), v.accesses.rend());
  Conflict back = find_conflict(reversed);
  if (back.kind != v.conflict.kind || back.buffer != v.conflict.buffer) std::abort();
  check_named(back, reversed);
  if (v.conflict) return;
  for (size_t i = 0; i + 1 < v.accesses.size(); ++i) {
    std::vector<ChunkAccess> fewer;
    for (size_t j = 0; j < v.accesses.size(); ++j) {
      if (j == i + 1) continue;
      fewer.push_back(j == i ? merged(v.accesses[i], v.accesses[i + 1]) : v.accesses[j]);
    }
    if (find_conflict(fewer)) std::abort();
  }
}

void evaluate_some_launches(const KernelInfo& kernel, ByteSource& bytes) {
  for (int round = 0; round < 3; ++round) {
    LaunchGeometry g;
    g.work_dim = 1 + uint32_t(bytes.next(1) % 3);
    for (uint32_t d = 0; d < g.work_dim; ++d) {
      g.local_size[d] = 1 + bytes.next(1) % 16;
      g.global_size[d] = g.local_size[d] * (1 + bytes.next(1) % 8);
      g.global_offset[d] = round == 2 ? bytes.next(8) : bytes.next(1);
    }
    g.split_dim = uint32_t(bytes.next(1) % g.work_dim);
    ArgValues values;
    for (const ArgInfo& arg : kernel.args) {
      std::vector<unsigned char> raw(arg.value_size ? arg.value_size : 8);
      for (auto& b : raw) b = static_cast<unsigned char>(bytes.next(1));
      values.bytes.push_back(raw);
      values.buffer_sizes.push_back(round == 0 ? 0 : bytes.next(round == 2 ? 8 : 2));
    }
    uint64_t groups = g.global_size[g.split_dim] / g.local_size[g.split_dim];
    uint64_t g0 = bytes.next(1) % groups;
    uint64_t g1 = g0 + 1 + bytes.next(1) % (groups - g0);
    Footprint fp = kernel.footprint->evaluate(g, values, g0, g1);
    if (fp.args.size() != kernel.args.size()) std::abort();
    for (const ArgFootprint& a : fp.args) {
      band_ranges(a.reads, 64);
      band_ranges(a.writes, 64);
    }
    // coex's own cut (at most 64 pieces: here one group each), then fewer pieces of several groups.
    check_piece_verdict(kernel, g, values, round == 0 ? coex::oracle::kSplitCheckPieces : 1 + bytes.next(1) % 4);
  }
}

size_t error_count(const std::string& source, BuiltinsMode mode) {
  ParsedSource parsed(source, "", mode);
  if (!parsed.ok()) return 1;
  size_t errors = 0;
  for (unsigned i = 0; i < clang_getNumDiagnostics(parsed.unit()); ++i) {
    CXDiagnostic d = clang_getDiagnostic(parsed.unit(), i);
    if (clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error) ++errors;
    clang_disposeDiagnostic(d);
  }
  return errors;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string source(reinterpret_cast<const char*>(data), size);
  // Both ways of declaring the builtins, picked by the input; clang's only where it has them.
  BuiltinsMode mode = (size % 2 && detect_builtins_mode() == BuiltinsMode::ClangHeaders) ? BuiltinsMode::ClangHeaders
                                                                                         : BuiltinsMode::Fallback;
  ProgramInfo info = analyze_program_with(source, "", mode);
  ByteSource bytes(data, size);
  for (const KernelInfo& kernel : info.kernels) {
    // A kernel is either splittable, with a model, or has a reason: never neither.
    if (kernel.not_split_reason.empty() != (kernel.footprint != nullptr)) std::abort();
    if (kernel.footprint) evaluate_some_launches(kernel, bytes);
  }
  std::string rewritten = rewrite_for_split(source, info);
  if (rewritten.empty() != source.empty()) std::abort();  // edits outside the source
  // A program that parsed without errors must still do so once rewritten.
  if (rewritten == source || error_count(source, mode) != 0) return 0;
  if (error_count(rewritten, mode) != 0) std::abort();
  return 0;
}
