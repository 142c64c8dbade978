// The other kinds of device a compile-ahead process builds for (docs/design.md, "Compiled ahead, in a
// process of its own", "Every kind of the set"). Beside a home of another kind (the mixed set: PoCL's
// `cpu` device with four threads and four `cpu-minimal` ones), a user's first coex run split its first
// launch at once and paid in the app's process the build from source of the first device of each
// other kind (coex's define makes it a build of its own), the read of its binary (every kernel's
// generic work-group function, for the others of its kind) and the first chunks' variants, home's at a
// nonzero offset among them; while PoCL compiles a run's function no kernel of the process runs on any
// PoCL device. The process started at the app's clBuildProgram builds for those devices too, with
// coex's options for each, so that PoCL's cache holds it all under their build hashes; their builds in
// the app wait for it, and the launches run on home whole until it has ended.
#pragma once

#include <string>
#include <vector>

#include "exec/compile_ahead.h"
#include "exec/services.h"
#include "model/records.h"

namespace coex::exec::compile_ahead {

// The devices among `to_build` a process started at the program's build compiles for beside home: of
// each kind other than home's, on PoCL's CPU drivers of this machine, the lowest index (the one that
// builds from source: first_of_kind, exec/shared_binaries.h) where no binary of it was kept
// (exec/kept_binaries.h: a later run builds from that, and PoCL's cache holds its compiles), for the
// program's `source` built with the app's `options`.
std::vector<int> other_kinds_to_compile(Services& services, const std::string& source, const std::string& options,
                                        int home, const std::vector<int>& to_build);

// The same for the program's rewrite (serve_rewrite), among its devices_to_build: beside home's kind,
// the first device of each other kind builds the rewrite from source, and its process compiles it for
// them too, as for the app's program (begin_at_build). None where those are not known yet (the
// analysis asked for at a launch).
std::vector<int> other_kinds_of_rewrite(Services& services, model::ProgramRecord& program, int home);

// At a launch that may be split, of a program whose binary's read is not put off and whose process
// started at its build (pending): under_way, where `ahead` is the launch (not split at once: its
// probe's word) and the analysis neither rewrote the program nor found nothing to split, or the
// process compiles the rewrite (serve_rewrite); else false, the process ended where it serves none
// (end_process_serving_none: rewritten, or nothing to split) and told it is not needed where the
// launch is split at once (the devices of other kinds still wait for its builds).
bool under_way_beside_kinds(Services& services, model::ProgramRecord& program, int home, const Launch* ahead);

// The process's POCL_DEVICES: each driver the app's list (`list`, its POCL_DEVICES) names, once, in
// the list's order, where every entry names a CPU driver of one device an entry and the entries are as
// many as the platform's devices; "" otherwise (the process then lists what the app lists). PoCL then
// sets up one device of each driver, not all the app's (slices' request on the device machine: 0.33 s
// with one `cpu-minimal` device listed, 0.54 s with eight), and their build hashes, which name no
// other device, are the app's: the process's compiles land in the app's program folders. PoCL numbers
// its devices driver by driver, in an order of its own: the process finds them by name.
std::string pocl_devices_entry(const char* list, size_t platform_devices);

}  // namespace coex::exec::compile_ahead
