// PoCL's compiles of a program's first split, made ahead in a process of coex's own (docs/design.md,
// "Compiled ahead, in a process of its own"; setting compile_ahead). On a user's first coex run of a
// program (PoCL's cache filled by bare runs, or empty) the first split compiles twice in the app's
// process: the read of the app's program binary compiles every kernel's generic work-group function,
// then the first chunk at a nonzero offset that variant, and while a run compiles no kernel of the
// process runs on any PoCL device (benchmarks/matmul's chain of three products over two `basic`
// devices: 260 and 340 ms, against 0.3 s for the whole program on one device). In another process
// neither stops anything here, and PoCL keeps both in its cache on disk under the app's build hash
// (the same source, options and device give the same hash): the read then takes a millisecond, and
// the first split loads what it needs.
#pragma once

#include <CL/cl.h>

#include <cstddef>
#include <string>
#include <vector>

#include "exec/services.h"
#include "model/records.h"

namespace coex::exec::compile_ahead {

// The launch a compile ahead is for: its kernel and the app's sizes.
struct Launch {
  const std::string& kernel;
  cl_uint work_dim;
  const size_t* local;  // the chunks' local size: the app's, else the kernel's compiled one or coex's pick
};

// At a launch that would read the app's program binary now (exec/deferred_app_binary.h): true while
// `coex compile-ahead` runs for the program, started here where PoCL's cache lacks the kernel's
// generic function in the app's program folder (found by the time PoCL touched it: the app's
// clBuildProgram), once per program; or started at that build (begin_at_build) and sent the launch's
// variants here, where PoCL's cache lacks a generic function of the program or one of them (one whose
// wait for them had ended is waited for until it ends, then a process of the launch's own compiles
// the variants still missing). The launch then runs on home whole, and so do the program's next
// ones until it has ended. False where none runs: it ended (its compiles are in the cache, or the read
// makes them), or none was needed or could start (compile_ahead off, not PoCL, not built from one
// source, the folder not found, no `coex` executable beside the library, or as many processes running
// as `compile_ahead_processes` allows: the read then compiles in the app's process, as without).
bool under_way(Services& services, model::ProgramRecord& program, int home, const Launch& launch);

// At the app's clBuildProgram, under auto, where `compile_ahead_start` says so, for a program to be
// built on `to_build` (home first): starts the program's process at once where its binary's read is
// put off to its first split (exec/deferred_app_binary.h) and PoCL's cache lacks the generic function
// of one of its kernels in its folder, or where devices of other kinds are to build it from source
// (compile_ahead_kinds.h: the process builds for them too, and for home's variants). The process
// sets PoCL up, builds the source and compiles those functions, while the app makes its buffers and
// its first launches; then it waits for the variants, which under_way sends at the first launch that
// would read the binary: that launch waits for the variants' compile alone (jacobi's source on PoCL
// 3.1, one `basic` device: the generic function 137 ms, the two variants 219 ms, against 347 ms for
// both together, after PoCL's start and the build, 130 ms). The process is the app's child: its wait
// for the variants ends 5 s after its start (an app that waits for every child is not held longer
// than the process's compiles and that), and a launch that finds it ended without them starts one of
// its own for the variants PoCL's cache lacks.
void begin_at_build(Services& services, model::ProgramRecord& program, int home, const std::vector<int>& to_build);

// The devices of other kinds the program's process builds for, the first of each kind
// (compile_ahead_kinds.h); none once it has been seen ended.
std::vector<int> kinds_of(model::ProgramRecord& program);

// Whether the program's process builds for devices of other kinds (compile_ahead_kinds.h), or compiles
// its rewrite (serve_rewrite), and has not been seen ended: a launch that may be split asks under_way
// first, whether or not the read is put off.
bool pending(model::ProgramRecord& program);

// Before `device`'s build of the program from source: where the program's process builds for it
// (compile_ahead_kinds.h), waits until it has ended (at most kCompileLockWait, or the exit), so that
// the build finds its compiles in PoCL's cache; home's build of a rewrite, and that of the first device
// of each other kind, likewise wait for the process compiling it (serve_rewrite, asked here first, by
// whichever device comes first), while another device's waits for nothing, the app's program's
// process ended where it serves none (end_process_serving_none). On the device's worker.
void wait_before_build(Services& services, model::ProgramRecord& program, int device);

// The program's read of its binary no longer waits for a process (a launch split at once, a program
// released): a process started at the build and still waiting for the variants is told there are
// none, and ends once its generic functions are compiled.
void not_needed(model::ProgramRecord& program);

// As the analysis finds the program rewritten (on the worker that ran it), with compile_ahead_rewrite:
// where a process starts at the build (starts_at_build), home is a PoCL CPU device of this machine and no analysis was
// kept (a later run, whose builds come from kept binaries), the app's program's process is ended
// (end_process_serving_none) and one is started for the rewrite instead: it builds the rewrite with
// home's options (PoCL's cache then holds what home's build from source would compile), and for the
// first device of each other kind among the program's devices_to_build with theirs
// (other_kinds_to_compile), compiles their generic functions and waits for the variants the first
// launch that may be split names (under_way), while the launches run on home (pending). Those
// devices' builds wait for it (wait_before_build) and find its compiles in PoCL's cache. Where none
// starts, the app's program's process is ended alone.
void serve_rewrite(Services& services, model::ProgramRecord& program);

// What the program's process compiles serves no device (splits_run_none_of_app_program: every split
// runs the rewrite, which the devices build from source, or none comes): as not_needed, and a process
// still compiling is killed and reaped, so that it takes no core for the rest of the run (binomial's
// on the device machine's mixed set compiled for 4.1 s, to the exit, beside the app's splits).
void end_process_serving_none(model::ProgramRecord& program);
// Whether that is so of the program now: splits_run_none_of_app_program, and no process compiles its
// rewrite instead (serve_rewrite).
bool serves_none(const model::ProgramRecord& program);

// Whether under_way would start a process for the program's first split now, or send one started at
// the build its variants: none asked for yet, one wanted, and fewer running than
// `compile_ahead_processes`; or one waiting.
bool would_start_process(Services& services, model::ProgramRecord& program, int home, const std::string& kernel);

// Whether the program's process, started at the app's clBuildProgram, waits for its variants on cores
// of its own (starts_at_context: `compile_ahead_start` `build` on a machine with none spare does not
// say so), so that the variants cost the launches nothing sent at once (where a process is still to
// start, the launches' times first say whether it pays).
bool waits_for_variants(Services& services, model::ProgramRecord& program);

// Whether under_way would start a process for the program's first split now, and home's own
// work-group function of the kernel at this local size (and a zero global offset or not; a small grid:
// a probe's piece is one) is in the program's folder of PoCL's cache: a piece of the launch run on home
// loads it, compiling nothing (exec/first_launch_probe.h).
bool would_start(Services& services, model::ProgramRecord& program, int home, const std::string& kernel,
                 const size_t local[3], bool offset_zero);

// Whether a program's process starts at a launch only once the kernel's launches show it pays
// (first_launch_probe::process_pays): under `compile_ahead_start` `auto` where no core is left beside
// the compute units of the PoCL CPU devices in use, so that its compiles would slow the launches home
// runs meanwhile.
bool starts_once_it_pays(Services& services);

// How many processes may run at once where the setting `compile_ahead_processes` leaves it to coex:
// the cores not taken by the PoCL CPU devices in use (their compute units), at least 1, at most 4.
// Each is a compiler on a core of its own: more would take the cores the devices run on.
size_t default_process_limit(unsigned cores, unsigned cores_of_devices);

// How many processes compile each target of a process (`coex compile-ahead`'s variant_processes, one
// half of the variants each, both after the generic functions): 2 where the cores the PoCL CPU devices
// leave give every one of them a core, the `running` processes' counted as the new one's, else 1.
// PoCL compiles the variants of one process one after the other (docs/design.md, "Compiled ahead").
int variant_processes(unsigned cores, unsigned cores_of_devices, size_t targets, size_t running);

// Whether a program's process is set up at the app's clCreateContext (compile_ahead_warm.h) and so
// starts at its clBuildProgram: `compile_ahead_start` `context`, or `auto` where a core is left that
// no PoCL CPU device in use runs on (`build` starts it at the build alone).
bool starts_at_context(Services& services);

// variant_processes for a process of `targets` targets now, `running` processes running.
int processes_per_target(Services& services, size_t targets, size_t running = 0);

// At exit: the processes still running are ended, not waited for; what they compiled so far stays in
// PoCL's cache (PoCL writes a file whole, then renames it into place).
void stop_all();

}  // namespace coex::exec::compile_ahead
