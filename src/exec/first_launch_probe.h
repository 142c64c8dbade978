// A piece of a first launch, timed on home to choose how its first split is compiled (docs/design.md,
// "Compiled ahead, in a process of its own"). A launch nothing has timed yet, of a kernel that loops,
// where PoCL's cache lacks what the program's first split would compile: split at once, it pays those
// compiles in the app's process (0.1 to 0.8 s, during which no PoCL device of the process runs), which
// a launch of half a second over eight devices wins back (benchmarks/mandel_uniform once) and a chain
// of three products of a quarter second each does not (benchmarks/matmul as matchain: 0.85 s against
// 0.32 s on one device). Compiled ahead instead, its first launch runs on home whole. Which one pays
// depends on the launch's time, which only a run tells: coex first runs a block of about 1/64 of its
// work-groups at the launch's own offset on home, where PoCL's cache holds home's work-group function
// (the app's run filled it), times it, and weighs the whole launch's time by it. The launch then runs
// whole, the block again with it: only for launches that give the same result run twice (no buffer
// they may write is one they read, nor printf).
#pragma once

#include <CL/cl.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "exec/services.h"
#include "kernel/kernel_analysis.h"
#include "model/records.h"

namespace coex::exec::first_launch_probe {

// The launch's work-groups over the block's, at least, where the launch has that many: the block runs
// on home before the launch, split or whole (at 1/32, benchmarks/mandelbrot and ramp over eight
// devices, whose first rows cost more than their average, took about 50 ms longer than split at once
// unprobed). A launch of fewer, down to kMinGroups, is probed with one work-group.
inline constexpr size_t kShare = 64;
inline constexpr size_t kMinGroups = 32;

// A program without barrier() compiles its work-group functions in about half the time (PoCL 5 over
// eight devices: the read and the first chunks' variant of benchmarks/mandel_uniform 0.16 to 0.21 s,
// jacobi's and lu's 0.12 to 0.21 s; nbody's 0.25 to 0.35 s and matmul's 16 x 16 tiles 0.59 to 0.76 s,
// PoCL's passes for the regions between barriers most of it): the saving a split at once must
// promise is first_split_compile_seconds times this.
inline constexpr double kWithoutBarriers = 0.5;

// What a probe runs, at the launch's offset and local size: one work-group first (PoCL loads the
// work-group function at a kind's first run, a few milliseconds), then the block, timed.
struct Piece {
  cl_uint work_dim = 1;
  size_t offset[3] = {0, 0, 0};
  size_t local[3] = {1, 1, 1};
  size_t one_group[3] = {1, 1, 1};  // global sizes of the first run
  size_t block[3] = {1, 1, 1};      // global sizes of the block timed
  double scale = 0;                 // the launch's rounds of work-groups over the block's
  bool offset_zero = true;
  double split_from = 0;  // the estimate from which the launch is split at once (splits_from)
};

// A block run whose estimate is at least the piece's split_from, and less than this many times it, is
// run again and the faster kept: what else runs on the machine only slows a run, and one slowed by
// half (on the 2-core machine, benchmarks/matmul's block at 640: 7.4 to 7.6 ms in 2 of 10 first runs,
// 4.9 to 5.6 ms in the others) split its first launch at once, its compiles in the app's process:
// 1.24 and 1.54 s against 0.89 to 0.98 s held on home. Runs slowed up to 1.8 times were seen there.
inline constexpr double kConfirmBelow = 2.0;
inline bool runs_again(double first_run, double split_from) {
  return first_run >= split_from && first_run < kConfirmBelow * split_from;
}

// The piece for a launch: the block spans the lower dimensions whole where it can, and as few rows of
// the highest as make 1/kShare of the work-groups (one at least). None where the app left the local
// size to the driver (another than the app's run had could be picked for the block), the local size
// does not divide the launch, the launch has fewer than kMinGroups work-groups, or a dimension is
// PoCL's wide one
// (pocl_kernel_cache::kSmallGridWidth: the block would run another work-group function). The scale
// counts the rounds of work-groups over home's `home_units` compute units: a block of one work-group on
// the mixed set's home of four threads runs on one of them (benchmarks/nbody at 16,384 bodies, 64
// groups: weighed by 64 it said 1.8 s of a launch of 0.55 s; by the 16 rounds, 0.45 s).
std::optional<Piece> piece_of(cl_uint work_dim, const size_t* offset, const size_t* global, const size_t* local,
                              size_t home_units = 1);

// The roots of the buffer arguments (their records' roots, or null for an argument that is none):
// by argument.
using ArgumentRoots = std::vector<const void*>;

// Whether the launch gives the same result run twice: no argument the analysis says it may write is
// one it may read, or shares its root buffer with another argument, and the source prints nothing.
bool runs_twice_alike(const kernel::KernelInfo& info, const ArgumentRoots& roots, const std::string& source);

// The piece to probe a launch with, where one may: first_split_compile_seconds is not 0, the program's
// first split would be compiled ahead now beside home's work-group function in PoCL's cache
// (compile_ahead::would_start), and the launch gives the same result run twice. Its split_from is
// splits_from's over `devices`. None where that is infinity (never split at once).
std::optional<Piece> piece_for(Services& services, model::ProgramRecord& program, const std::string& kernel,
                               const kernel::KernelInfo& info, const std::vector<model::KernelArgValue>& args, int home,
                               cl_uint work_dim, const size_t* offset, const size_t* global, const size_t* local,
                               const std::vector<int>& devices);

// What a probe of a launch key (exec/home_launch_times.h's) found: not asked yet; asked, with the
// launch's estimated seconds on home, or none where the piece could not run.
struct Found {
  bool asked = false;
  std::optional<double> seconds;
};
Found found(const std::string& home_key);

// Whether a launch of `program` probed so (or not: `found` not asked, or with no estimate, then split
// at once unless splits_from is infinity) is split at once over `devices`, its compiles paid in the
// app's process: where its time on home less its share over them is more than
// first_split_compile_seconds (times kWithoutBarriers for a program whose source has no barrier),
// times kPerOtherKind more for each other kind its process builds for (never where every other device
// waits for the process to build: those it builds for and the others of their kinds). Home's
// share is its compute units' over theirs where all are PoCL CPU devices (the mixed set's `cpu` home
// with four threads beside four single-threaded devices: a half), else one device's. Counted in the
// report.
bool splits_at_once(Services& services, model::ProgramRecord& program, const Found& found, int home,
                    const std::vector<int>& devices);
// The launch's time on home from which splits_at_once splits it (infinity where it never does).
double splits_from(Services& services, model::ProgramRecord& program, int home, const std::vector<int>& devices);

// Whether the program's process pays for itself by the launch (compile_ahead::starts_once_it_pays):
// on the devices' cores it slows home's launches beside it about as much as the compiles it makes
// ahead would have cost in the app's process, so it starts only once the kernel's launches show
// that their splits would pay for those compiles, as one buys once renting has cost as much. The
// kernel's launches run on home for want of it so far (`launches_before`), and this one, each as long
// as this one (`seconds` on home), would have saved by a split over `devices` what the first split
// compiles (splits_at_once's measure). A program whose launches shrink (benchmarks/lu over two
// `basic` devices on two cores: 2,046 launches in 0.25 s, each smaller than the last) starts none:
// its process, started at its first launch timed long enough, slowed home's launches by about 15%
// and had not ended when the program did.
bool process_pays(Services& services, model::ProgramRecord& program, uint64_t launches_before, double seconds, int home,
                  const std::vector<int>& devices);
// Where the program's process would start now (compile_ahead::would_start_process) and must pay first
// and does not yet: counts the launch, in the report too, and gives the kernel's count, which each
// launch that takes the launch's plan over adds to (exec/repeated_launches.h). Null otherwise.
std::shared_ptr<std::atomic<uint64_t>> held_until_process_pays(Services& services, model::ProgramRecord& program,
                                                               const std::string& kernel, double seconds, int home,
                                                               const std::vector<int>& devices);

// What each other kind a program's process builds for (exec/compile_ahead_kinds.h) adds to what a split
// at once would compile in the app's process, in first_split_compile_seconds: its build from source,
// the read of its binary (every generic function) and its first chunks' variants, beside home's. On the
// 2-core machine, benchmarks/matmul at 640 over a `pthread` home and a `basic` device (PoCL's cache
// filled by a bare run): its first launch split at once took 2.5 s, 0.6 s on home alone.
inline constexpr double kPerOtherKind = 2.0;

// Runs the piece on the app's queue, drained and in order, in the app's thread, and keeps the
// estimate under `home_key`; true where it ran. Marks the piece's runs as home's first of their kind
// (exec/pocl_compiles.h): the launch after it is timed.
bool run(Services& services, cl_command_queue queue, cl_kernel kernel, int home, const std::string& home_key,
         const Piece& piece);
// Keeps "asked, none" under `home_key`: the launch could not be probed (a wait list, a queue busy).
void not_run(const std::string& home_key);

}  // namespace coex::exec::first_launch_probe
