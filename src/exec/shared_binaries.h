// A program coex builds for several devices of one kind (devices::Device::same_kind) is built from
// source once and from that binary on the others (setting share_device_binaries). PoCL preprocesses
// the source with its OpenCL header at every build, its kernel cache notwithstanding: about 30 ms a
// device on PoCL 3.1 (2 cores) and 45 to 60 ms on PoCL 5 (16 cores), in turn, where a build from a
// binary takes about 1 ms. Among N identical devices that was the whole wait before the last one
// joined a first launch (docs/design.md, "One-time costs").
#pragma once

#include <CL/cl.h>
#include <CL/cl_icd.h>

#include <string>
#include <utility>
#include <vector>

#include "exec/services.h"
#include "model/records.h"

namespace coex::exec {

// The binary `program` holds for `device` (one of the devices it was built for); empty when the
// driver gives none.
std::vector<unsigned char> program_binary(const cl_icd_dispatch& cl, cl_program program, cl_device_id device);

// The kernels of a built program, by the driver's word (CL_PROGRAM_KERNEL_NAMES); empty when it gives none.
std::vector<std::string> program_kernel_names(const cl_icd_dispatch& cl, cl_program program);

// Whether another device of `device`'s kind is among `among` and the setting is on: a build of
// `device` from source may serve it, so its binary is read at once (below).
bool another_of_kind(Services& services, int device, const std::vector<int>& among);

// The device whose build the others of `device`'s kind build from: the lowest index of that kind
// among `devices`, so that which device builds from source, and with it every device's build hash and
// PoCL cache folder, is the same from run to run (when it varied, with home of another kind, a warm
// PoCL cache was cold again: 0.6 s builds in a mixed set). -1: none before it, or sharing is off.
int first_of_kind(Services& services, int device, const std::vector<int>& devices);

// When is a binary read. PoCL compiles a generic work-group function of every kernel when asked for a
// program's binary, and keeps the library it loads for that under the kernel's build hash and the
// local size (the kernel's reqd_work_group_size where it has one). It releases its loaded functions
// by hash and local size alone (pocl_release_dlhandle_cache), so that a launch of such a kernel that
// was running when the binary was read of its program released that entry instead of its own, and
// PoCL aborted (assertion `found->ref_count > 0`; benchmarks/gram_schmidt over eight `cpu-minimal`
// devices of PoCL 5.0, 2 runs in 25, when the binary was read on another device's worker while the
// app's launches ran). So a binary is read only while no launch can run its program: the app's
// program on the app's thread in its clBuildProgram (read_app_program_binary), coex's builds from
// source before they are marked finished (device_kernels.cpp). With PoCL's cache cold the read is a
// full compile on the app's thread; with it warm, a few milliseconds. Under auto the app's program is
// read at its first launch that may be split instead, while launches of it may run: safe where no
// kernel has a reqd_work_group_size, else after they ended (exec/deferred_app_binary.h).

// At the app's clBuildProgram of `program` for `home` alone, on the app's thread, once the driver has
// built it, or at a launch of it (read_deferred_app_binary): reads its binary for the devices of home's kind among `to_build` (ProgramRecord::app_binary),
// unless the analysis, already done, rewrote the program (those devices then build from home's build
// of the rewrite) or says no kernel of it may be split (nothing is built from it). Traced as "read
// binary" on home's track, `app_program`.
void read_app_program_binary(Services& services, model::ProgramRecord& program, int home,
                             const std::vector<int>& to_build);

// The binary of coex's build `program` for `device`, read under the platform's build lock
// (exec/pocl_compiles.h) before the build is marked finished; empty once the process has begun to
// exit. Traced as "read binary" on the device's track.
std::vector<unsigned char> read_build_binary(Services& services, cl_program program, int device);

// Once a binary others of its kind build from was read from `build` (a key of ProgramRecord::builds):
// its hash in ProgramRecord::pocl_hashes, as the family of every build from it. The caller holds
// program.mutex.
// The donor shares its first runs (exec/shared_first_runs.h) from the read on, not from the first
// other build's end: home splits a program's first launch while the others still build, and its
// compile of a function for a nonzero offset is then the family's, where another device would compile
// it again (PoCL's lock holding every device of the process meanwhile: tiny_steps' first launch over
// two `basic` devices, 25 ms instead of 65 for device 1's first chunk). Nothing where the binary
// carries no PoCL hash.
void note_donor_hash(model::ProgramRecord& program, std::pair<int, bool> build,
                     const std::vector<unsigned char>& binary);

// A binary another device of `device`'s kind has built of the source `device` is about to build
// (the app's own, or the rewrite when `rewritten`): a copy of the one read at the app's build or at
// that device's build; empty when there is none yet, or when the setting is off. Under program.mutex.
// `built_by`, when given, is set to the device whose build from source of coex's gave the binary, or
// -1 (none, or the app's own program).
std::vector<unsigned char> binary_of_same_kind(Services& services, model::ProgramRecord& program, int device,
                                               bool rewritten, int* built_by = nullptr);

// PoCL keys the work-group functions it has loaded by the program's build hash and the local size
// alone when it releases them (pocl_release_dlhandle_cache, PoCL 3.1 and 5.0), so that two devices
// running one build hash at once, one at a zero global offset and one not, abort it (assertion
// `found->ref_count > 0`, seen here with four `basic` devices sharing a binary as it was). A PoCL
// binary carries its build hash, the 40 letters A to P of its cache folder ("NJ/IFHO..."), near its
// start: this makes it `device`'s own by shifting the last two letters, so that each device has its
// own hash (and cache folder) as with its own build. False when no such hash is found: the binary
// must not be shared then.
bool give_pocl_binary_its_own_hash(std::vector<unsigned char>& binary, int device);

// The program of `binary` built for `device` in `context`; null when the driver refuses the binary or
// its build (the caller then builds from source).
cl_program build_from_binary(const cl_icd_dispatch& cl, cl_context context, cl_device_id device,
                             const std::vector<unsigned char>& binary, const std::string& options);

}  // namespace coex::exec
