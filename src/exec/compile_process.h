// Work-group functions compiled in a process of its own (setting compile_apart; docs/design.md,
// "One-time costs"). PoCL compiles a kernel's work-group function at its first run with a local size
// and a zero or other global offset, and holds a lock of the whole process while it compiles
// (pocl_dlhandle_lock, which every command of every PoCL device takes as it is submitted and as it
// runs). On the device machine a first coex run of benchmarks/matmul over eight single-threaded
// devices, PoCL's cache holding only what the bare run compiled (the functions at a zero offset),
// stopped all eight devices, home's chunk included, for the 434 ms of the one compile at a nonzero
// offset (docs/testbed.md). `coex pocl-compile`, a process started from here, builds the family's
// binary on a PoCL device of its own, of the driver that compiles a command's function as the command
// is submitted ("basic", "cpu-minimal" in PoCL 5), and submits one work-group of each function at a
// nonzero offset behind a user event it never sets: nothing runs, and its folder of PoCL's cache holds
// the functions. Meanwhile the app's devices run what they can; a first run that needs one of those
// functions waits for the process as for a device of the family, and copies its files
// (exec/shared_first_runs.h).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "exec/services.h"

namespace coex::exec::compile_process {

inline constexpr const char* kCommand = "pocl-compile";
// The process's build has the family's hash shifted as give_pocl_binary_its_own_hash shifts a
// device's, for an index no device has: a folder of its own in PoCL's cache.
inline constexpr int kHashIndex = 254;
// The process ends by then (an alarm), its compiles done or not; the app's devices wait for it no
// longer than for a device of the family (kCompileLockWait).
inline constexpr unsigned kMostSeconds = 60;

struct Function {
  std::string kernel;
  unsigned work_dim = 1;
  size_t local[3] = {1, 1, 1};
};

// The build hash of the process's builds of the family whose hash is `family`.
std::string process_hash(const std::string& family);

// Keeps the binary of the family with build hash `family` (the app's own program read at its build,
// or the binary a device of coex's built from): the process builds from it. Once per family.
void remember_family_binary(const std::string& family, const std::vector<unsigned char>& binary);

// Starts the process for those of `functions` (at a nonzero offset, of the family built for `device`'s
// kind) that no folder of the family holds and no process compiles yet: each is announced to the
// devices' first runs as compiled into the process's folder (shared_first_runs.h, announce_compile)
// until the process ends. False where none started: the setting off, no `coex` executable, a driver
// other than PoCL's CPU drivers, the family's binary not kept, a failed start, nothing left to compile.
bool start(Services& services, int device, const std::string& family, const std::vector<Function>& functions);

// At the app's build of its program for `home`, once its binary (the family `family`) was read for the
// other devices of home's kind: the functions the family's folder holds at a zero offset, those its
// bare runs compiled, are compiled at a nonzero offset in a process, before any launch needs them.
void start_from_earlier_runs(Services& services, int home, const std::string& family);

// The process's side is the launcher's `coex pocl-compile BINARY_FILE (KERNEL WORK_DIM L0 L1 L2)...`
// (launcher/pocl_compile_command.cpp), started with POCL_DEVICES naming that one driver and a pipe's
// end as its descriptor 3, which closes as it ends.

}  // namespace coex::exec::compile_process
