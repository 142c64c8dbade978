// Which device's build of a program is kept across runs, and under which key (exec/kept_binaries.h
// keeps the files; docs/design.md, "Binaries are kept from run to run"): the kind's device that
// builds from source, with coex's define for that device in the key on PoCL.
#pragma once

#include <CL/cl.h>
#include <CL/cl_icd.h>

#include <string>

#include "devices/device_set.h"
#include "exec/kept_binaries.h"
#include "exec/pocl_kernel_cache.h"
#include "exec/services.h"
#include "model/records.h"

namespace coex::exec {

// Where a build's binary is kept across runs, and under which key.
struct KeptBinary {
  std::string folder;  // "" for none
  KeptBinaryKey key;
  int keeper = -1;     // the device of the kind whose build from source is kept
  bool keeper_writes;  // the keeper writes it itself: no other device of its kind builds from it
};

// The options of coex's build from source of a program for `device` (d), the app's `options` given
// (exec/device_kernels.cpp, device_build; exec/compile_ahead_kinds.h builds ahead with them, for the
// same build hash): on PoCL, a define of coex's own makes each such build differ from the app's and
// from the other devices': PoCL 5.0 shares one loaded kernel library among identical builds (same
// source, options and device model) and releases it once too often when they go (assertion
// `found->ref_count > 0` in pocl_release_dlhandle_cache with POCL_DEVICES="cpu cpu"; docs/gpu.md).
std::string own_build_options(const devices::Device& d, const std::string& options, int device);

// The app's one device for `program` (its context's), or -1.
int home_of(Services& services, const model::ProgramRecord& program);

// Where `device`'s build of `source` with the app's `options` is kept across runs
// (exec/kept_binaries.h): nowhere for a device served by PoCL's remote driver, whose servers may
// differ from run to run, nor for a source that includes files. The kind's device that builds from
// source keeps its build: `home` (given for a rewritten program) where it is of the kind, as its
// build of the rewrite comes first and the others build from it (with the kind's lowest device as the
// keeper instead, an app on device 1 of two `basic` devices never had a binary kept), else the kind's
// lowest; on PoCL the key holds that device's define, so that its binary, and the build hash in it,
// serves only a set in which the same device keeps it: in a set where another kind's device has that
// index, and a driver that hashes builds alike (PoCL's basic and pthread), a build of that device
// from source has the kept binary's hash, and two loaded builds of one hash abort PoCL.
// Where other devices of the kind build from the keeper's binary (exec/shared_binaries.h), the first
// of them to build from it writes it, with the bytes the keeper read at the end of its build.
KeptBinary kept_binary_for(Services& services, const devices::Device& d, int device, int home,
                           const std::string& source, const std::string& options);

// Whether a keeper alone of its kind (KeptBinary::keeper_writes) reads the binary of its build from
// source to keep it. The read runs before the device takes a chunk, and on PoCL's CPU devices it
// compiles every kernel's generic work-group function in the app's process, where no kernel runs on
// any PoCL device while PoCL compiles: a first run of benchmarks/matmul over a one-thread `pthread`
// home and a `basic` device spent 0.95 s in it and home's first split waited (docs/design.md,
// "Binaries are kept from run to run"). So it reads only where that compiles nothing: PoCL's cache
// holds each kernel's generic function in the build's folder (the one the build touched, against
// `before`, what before_keepers_build saw), as after a compile-ahead process built for the kind
// (exec/compile_ahead_kinds.h). Otherwise nothing is kept, and a later run builds from source again,
// from PoCL's cache. before_keepers_build: PoCL's cache as `device`'s build from source begins, under
// the platform's build lock (exec/pocl_compiles.h), where that build is such a keeper's on PoCL's CPU
// devices; empty otherwise.
pocl_kernel_cache::ProgramTimes before_keepers_build(const devices::Device& d, const KeptBinary& kept, int device);
bool keeper_reads_binary(const cl_icd_dispatch& cl, const devices::Device& d, cl_program program,
                         const pocl_kernel_cache::ProgramTimes& before);

}  // namespace coex::exec
