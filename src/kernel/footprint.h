// Footprints, the exact tier (docs/design.md, "A launch"): per pointer argument of a kernel, the
// bytes that the work-groups [g0, g1) of the split dimension read and write, for the launch at hand.
// The model is built once by analyze_program (KernelInfo::footprint) from the affine index
// expressions of the kernel's own loads and stores; evaluate() is integer arithmetic on it, for the
// launch geometry and the values of the scalar arguments.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernel/affine.h"

namespace coex::kernel {

// The launch as the app enqueued it (not a sub-launch). Dimensions >= work_dim are ignored.
struct LaunchGeometry {
  uint32_t work_dim = 1;
  uint64_t global_offset[3] = {0, 0, 0};
  uint64_t global_size[3] = {1, 1, 1};
  uint64_t local_size[3] = {1, 1, 1};
  uint32_t split_dim = 0;  // the dimension whose work-groups are divided among devices
};

// The kernel's arguments as set with clSetKernelArg, by argument index.
struct ArgValues {
  std::vector<std::vector<unsigned char>> bytes;  // by-value arguments: their bytes (others: anything)
  std::vector<uint64_t> buffer_sizes;             // buffer arguments: size of the bound buffer, 0 = unknown
};

// Bytes [begin + k * stride, end + k * stride) for k in [0, count): one strided band, relative to the
// start of the buffer bound to the argument (add the origin of a sub-buffer).
struct ByteBand {
  uint64_t begin = 0;
  uint64_t end = 0;
  uint64_t stride = 0;
  uint64_t count = 1;
  bool operator==(const ByteBand& o) const {
    return begin == o.begin && end == o.end && stride == o.stride && count == o.count;
  }
};

enum class FootprintTier {
  None,   // not accessed this way
  Exact,  // within the listed bands
  Whole,  // reads only: any byte of the buffer may be read (replicate it)
  Diff,   // writes only: the written bytes are not known (merge by diff against a twin copy)
};

struct ArgFootprint {
  FootprintTier read = FootprintTier::None;
  FootprintTier write = FootprintTier::None;
  std::vector<ByteBand> reads;   // when read == Exact: every byte read lies in these
  std::vector<ByteBand> writes;  // when write == Exact: every byte written lies in these
  // Every byte of `writes` is written by these work-groups (unconditional stores over exact index
  // sets): no copy of the old contents is needed before the launch. Otherwise the bytes in `writes`
  // the kernel skips keep their old values, so they must be current on the device before it runs.
  bool writes_cover = false;
  // No two work-items of the launch write the same byte (proven from the index expressions).
  bool writes_injective = false;
};

struct Footprint {
  std::vector<ArgFootprint> args;  // one per kernel argument (None/None for non-buffers)
};

// Sorted, merged [begin, end) ranges of bands; more than max_ranges gives their hull instead (and
// *took_hull says so).
std::vector<std::pair<uint64_t, uint64_t>> band_ranges(const std::vector<ByteBand>& bands, size_t max_ranges = 1 << 16,
                                                       bool* took_hull = nullptr);

class FootprintModel {
 public:
  // A value that must lie in its integer type (bits wide, signed or not). The affine forms are the
  // mathematical values; +, -, * and << agree with C's modulo 2^bits, so where every sub-expression
  // lies in its type none wrapped around (or was cut by a narrowing conversion) and the form is the
  // C value. 64-bit sub-expressions are recorded only where they are compared or are an operand of
  // min/max/clamp: elsewhere a wrap-around modulo 2^64 is the same byte address.
  struct Fit {
    Affine value;
    uint32_t bits = 32;
    bool is_signed = true;
    // Whether every value in [lo, hi] lies in the type (never for a type of 0 or over 64 bits).
    bool contains(int64_t lo, int64_t hi) const;
  };
  // A condition an access executes under: lhs op rhs, compared in the integer type the program
  // compares in (unsigned: only applied where neither side can wrap around).
  struct Guard {
    enum class Op { Less, LessEqual, Greater, GreaterEqual, Equal, NotEqual };
    Affine lhs, rhs;
    Op op = Op::Less;
    bool is_unsigned = false;
    uint32_t bits = 32;
    Affine difference;  // lhs - rhs: the guard is difference op 0
    std::vector<Fit> fits;  // its sides and their sub-expressions: where one may not fit, left out
  };
  // One load or store through a pointer argument, in the kernel's body or in a helper it calls
  // (translated for that call).
  struct Access {
    int arg = 0;
    Affine byte_offset;      // of the first byte accessed, from the start of the argument's buffer
    uint64_t size = 0;       // bytes accessed at that offset
    bool write = false;
    bool read = false;
    // Executed by every work-item for every point of its loop domains where its guards hold.
    bool unconditional = false;
    std::vector<int> loops;      // the loops around it (indices into Definition::loops)
    std::vector<Guard> guards;   // all hold whenever it executes
    // The sub-expressions of its index narrower than 64 bits: where one may leave its type over the
    // chunk, the access falls back (over the launch: no writes_injective).
    std::vector<Fit> fits;
  };
  // A variable of the model beyond the ids: the counter of a canonical loop, or the value of a
  // min/max/clamp in the index of a load (its operands affine in the variables before it). Those
  // builtins do not decrease in any operand, so over a box of the variables they take values in
  // [f(lower ends of the operands), f(upper ends)]: the variable spans that hull, like a counter whose
  // bounds depend on ids.
  //
  // A counter steps by `step` from first up (or from last down, when `down`): where the step is
  // known at the launch and two or more in that direction, the counter is first + s * t (last - s * t)
  // for an iteration number t in [0, (last - first) / s], and evaluate() puts t in its place in the
  // byte offsets, so that a grid-stride loop gives strided bands (footprint_stride.cpp).
  struct Loop {
    enum class Kind { Counter, Min, Max, Clamp };
    Kind kind = Kind::Counter;
    Affine first, last;            // Counter: it runs over [first, last] (inclusive), in steps of one or more
    Affine step;                   // Counter: what one iteration adds (no variables: a constant or launch values)
    bool down = false;             // Counter: it runs from last down to first
    bool exact = false;            // Counter: step 1 and bounds free of variables: every value in between is taken
    std::vector<Affine> operands;  // Min, Max: a, b; Clamp: x, lo, hi (lo > hi anywhere: not evaluated)
    std::vector<Fit> fits;         // the bounds or operands and their sub-expressions, each in its type
  };
  struct Definition {
    std::vector<LaunchParam> params;  // the ids in the affine forms index this table
    std::vector<Loop> loops;          // loop i (counter or min/max/clamp) is variable kFirstLoopVariable + i
    std::vector<Access> accesses;
    std::vector<bool> reads_unmodelled;   // per argument: some read is not affine -> Whole
    std::vector<bool> writes_unmodelled;  // per argument: some write is not affine -> Diff
    std::vector<bool> is_buffer;          // per argument: a global or constant pointer
  };

  explicit FootprintModel(Definition d);
  const Definition& definition() const { return d_; }

  // The footprint of work-groups [g0, g1) along geometry.split_dim. Never throws; what it cannot
  // evaluate (a missing argument value, an overflow) falls back to Whole/Diff. The answers for the
  // latest inputs are kept, per thread (footprint_memo.cpp): a launch repeated with the same geometry
  // and scalar arguments asks for the same chunks again.
  Footprint evaluate(const LaunchGeometry& geometry, const ArgValues& values, uint64_t g0, uint64_t g1) const;
  // The same, neither looked up nor kept: for many pieces asked once (the safety check's).
  Footprint evaluate_unkept(const LaunchGeometry& geometry, const ArgValues& values, uint64_t g0, uint64_t g1) const;

 private:
  Definition d_;
  uint64_t id_;  // names the model among the kept answers: unique per model built, kept by its copies
};

}  // namespace coex::kernel
