// The read of the app's program binary, put off from its clBuildProgram to the first launch of the
// program that may be split (docs/design.md, "Devices of one kind build from one binary"). With
// PoCL's cache cold for coex the read compiles a generic work-group function of every kernel on the
// app's thread (226 ms of benchmarks/gram_schmidt's 250 ms clBuildProgram over two `basic` devices),
// for devices that build from it only when some launch is split: none of gram_schmidt's 1,535 is.
#pragma once

#include <CL/cl.h>

#include <memory>
#include <mutex>
#include <shared_mutex>
#include <vector>

#include "exec/compile_ahead.h"
#include "exec/services.h"
#include "model/records.h"

namespace coex::exec {

// At the app's clBuildProgram of `program` for `home`, in place of read_app_program_binary: true
// where the read waits for a launch (ProgramRecord::app_binary_deferred), which it does under a
// policy that does not wait for preparation (auto). Until the read, the devices of home's kind get
// no build (waits_for_app_binary). A deferred read that does not wait for quiet may start its
// compile-ahead process at the build (compile_ahead::begin_at_build, called after this).
// PoCL keeps the generic function of a kernel with a reqd_work_group_size under the key a launch of
// it uses, and a launch running while the binary was read released the read's entry and aborted PoCL
// (exec/shared_binaries.h, "When is a binary read"); the generic function of any other kernel has a
// local size of zero, which no launch has. For a program with such a kernel the read waits for the
// program's launches to end (app_binary_needs_quiet), and is put off only where every selected device
// is of home's kind: no split of the program, whose chunks on home run outside the app's queues, can
// come before it.
bool defer_app_program_binary(Services& services, model::ProgramRecord& program, int home,
                              const std::vector<int>& to_build);

// Whether `device`'s build of the program waits for the deferred read: a device of home's kind
// other than home, while the read has not been made and the analysis has not rewritten the program
// (those devices then build from home's build of the rewrite). The caller holds program.mutex.
bool waits_for_app_binary(Services& services, const model::ProgramRecord& program, int home, int device);

// On the app's thread, at a launch of the program's kernel that may be split (it has
// min_split_work_items, or home's time of it reached min_split_seconds), or before its first such
// launch waits for the analysis: the deferred read, once, then the builds of `devices` are posted
// (prepare_program), and the launch waits up to auto_wait_seconds for those from the binary (about a
// millisecond each), so that it finds them ready. The app's kernel holds its program meanwhile.
// Where the read waits for the program's launches, it first waits for those the app enqueued
// (gated_launches: their queues flushed, their events polled) up to kQuietWait; past that (a launch
// held by a user event the app sets later, a long one) the binary is not read, and the devices of
// home's kind build from source. No wait where the analysis says nothing will be read (a rewritten
// or unsplittable program). Nothing where nothing was deferred, nor on a thread inside such a read
// (an event callback a flush ran): a launch there is not split.
// Where PoCL's cache lacks what the read would compile, a process of coex's own compiles it first
// (exec/compile_ahead.h; not for a program whose read waits for quiet): while it runs nothing is read,
// the read stays deferred, and the launch (`ahead`; null: no compile ahead) runs on home.
inline constexpr double kQuietWait = 0.2;
void read_deferred_app_binary(Services& services, const std::shared_ptr<model::ProgramRecord>& program,
                              cl_context app_context, int home, const std::vector<int>& devices,
                              const compile_ahead::Launch* ahead);

// Ends the deferral of the program's read, made or given up (or its builds released): the devices of
// home's kind may build. The caller holds program.mutex.
void end_app_binary_deferral(model::ProgramRecord& program);

// Held by the app's launch of `kernel` around its enqueue to the driver while the read of its program
// is to wait for the program's launches (app_binary_needs_quiet): the read holds
// program.app_binary_read from that wait to its end, so that no launch of the program begins
// meanwhile, and waits for the launches noted (note_launch) before. Inactive otherwise: one atomic
// load where no read is to wait so.
struct LaunchGate {
  std::shared_ptr<model::ProgramRecord> program;  // null: inactive
  std::unique_lock<std::mutex> lock;
  // After the driver took the launch on `queue`: its event, retained, for the read to wait for.
  void note_launch(Services& services, cl_command_queue queue, cl_event event);
};
LaunchGate launch_gate(Services& services, cl_kernel kernel);

// The app asked for a function of cl_khr_command_buffer: a kernel recorded in a command buffer runs
// outside launch_gate, so no later read waits for quiet (it is given up, those devices build from
// source), nor is one deferred so.
void note_command_buffers_used();

// Held exclusively by the app's clReleaseCommandQueue around the driver's release and the registry's
// erase; shared by a read waiting for quiet while it flushes the queues of the launches it waits for,
// each still in the registry: no flush of a queue the app released meanwhile.
std::shared_mutex& queue_release_lock();

}  // namespace coex::exec
