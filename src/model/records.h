// What coex records about the app's objects: enough to replay a launch on another device.
// Records are created by the handlers in src/api/ and leave their registry when the app's object
// is destroyed (its last release).
#pragma once

#include <CL/cl.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "coherence/buffer_state.h"
#include "kernel/kernel_analysis.h"

namespace coex::model {

// The records of the app's objects in a context (queues, buffers, programs and through them kernels)
// hold its record: what coex keeps for the context (its queues there) goes when the app has released
// the context and nothing of it is left (the record's deleter, api/context_calls.cpp).
struct ContextRecord {
  cl_context handle = nullptr;
  std::atomic<int> app_refs{1};
  std::vector<cl_device_id> devices;
  std::vector<cl_context_properties> properties;  // zero-terminated, empty when none were given
};

struct QueueRecord {
  cl_command_queue handle = nullptr;
  cl_context context = nullptr;
  std::shared_ptr<ContextRecord> context_record;  // null for a context coex never saw
  cl_device_id device = nullptr;
  cl_command_queue_properties properties = 0;
  bool out_of_order() const { return properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE; }
  bool profiling() const { return properties & CL_QUEUE_PROFILING_ENABLE; }
};

// app_refs (buffers, programs, kernels): the app's own references, its creation and clRetain* calls
// less its clRelease* calls. coex's own retains go to the driver directly and are not counted: at
// zero the app can no longer use the handle, whatever the driver still holds (a sub-buffer keeps
// its parent alive, a kernel its program), and the record leaves its registry.
struct BufferRecord {
  cl_mem handle = nullptr;
  std::atomic<int> app_refs{1};
  cl_context context = nullptr;
  std::shared_ptr<ContextRecord> context_record;  // null for a context coex never saw
  cl_mem_flags flags = 0;
  size_t size = 0;
  void* host_ptr = nullptr;
  // Sub-buffers: the root record and this buffer's byte offset in it. Null root: a root itself.
  std::shared_ptr<BufferRecord> root;
  size_t origin = 0;
  std::shared_ptr<coherence::BufferState> state;  // the root's state; shared by its sub-buffers
  // An image made from a buffer (api/buffer_calls.cpp, record_image): that buffer, retained by coex
  // for as long as this record lives. Bytes coex writes home for the image go into it: a driver
  // takes no buffer command on an image. Null for a buffer.
  cl_mem image_of = nullptr;
  // Where coex writes bytes home for this record: its buffer, or the buffer an image was made from.
  cl_mem home_handle() const { return image_of ? image_of : handle; }
  std::shared_ptr<BufferRecord> root_or_self(const std::shared_ptr<BufferRecord>& self) const {
    return root ? root : self;
  }
  bool is_sub_buffer() const { return root != nullptr; }
};

// The program coex built for one device (from the app's source, or its rewrite), and the kernels
// it made from it: one kernel object per kernel name, used only by coex's executor.
struct DeviceBuild {
  // Held while building, so that a launch needing the build waits for a prebuild under way
  // (exec/device_kernels.h) rather than build it twice; builds for different devices run at once.
  std::mutex mutex;
  cl_program program = nullptr;
  bool failed = false;       // the build failed: that device gets no work from this program
  bool from_binary = false;  // built from another device's binary (exec/shared_binaries.h) or a kept one
  bool from_kept_binary = false;  // built from a binary an earlier run kept (exec/kept_binaries.h)
  // Set once the build has run (built or failed): a launch that does not wait for builds reads it
  // without taking `mutex`, which the build holds for its whole length.
  std::atomic<bool> finished{false};
  std::map<std::string, cl_kernel> kernels;
  // A build from source that other devices of its kind may build from: its binary, read before
  // `finished` was set (exec/shared_binaries.h). Final once `finished` is.
  std::vector<unsigned char> binary;
  // The kernels that have run a sub-launch from this build: a driver that compiles a kernel at its
  // first launch (PoCL) makes that one slow, and its time is no measure of the split (docs/design.md,
  // "One-time costs").
  std::set<std::string> launched;
};

enum class ProgramOrigin { Source, Binary, IL, BuiltIn, Linked };

struct ProgramRecord {
  cl_program handle = nullptr;
  std::atomic<int> app_refs{1};
  cl_context context = nullptr;
  std::shared_ptr<ContextRecord> context_record;  // null for a context coex never saw
  ProgramOrigin origin = ProgramOrigin::Source;
  std::string source;         // the sources, concatenated as the driver sees them
  std::string build_options;  // of the last clBuildProgram
  // How long the app's last clBuildProgram of it took, seconds (0: not built by the app): coex's
  // build of the rewritten source for the same device takes about as long (exec/device_kernels.h).
  std::atomic<double> app_build_seconds{0};
  // How long launches measured long on home have waited for home's build of the rewrite, nanoseconds:
  // at most what a split could save of one such launch, over all of them (launch_planner.cpp).
  std::atomic<int64_t> home_build_waited_ns{0};
  // When the app's last clBuildProgram began and ended, in the clock of file times, under `mutex`:
  // PoCL touches the program's folder of its kernel cache then (exec/compile_ahead.h finds it so).
  std::filesystem::file_time_type app_build_began{}, app_build_ended{};
  // exec/compile_ahead.h: whether its process was asked for (CompileAhead), and which one runs.
  std::atomic<int> compile_ahead{0};
  std::atomic<int> compile_ahead_pid{0};
  // Its process compiles the rewrite for home's kind (compile_ahead::serve_rewrite), not the app's
  // program: home's build of the rewrite waits for it.
  std::atomic<bool> compile_ahead_rewrite{false};
  std::atomic<bool> compile_ahead_rewrite_tried{false};  // one start of it a program, at most
  // The devices of other kinds its process builds for (each the first of its kind), under `mutex`:
  // their builds wait for it (compile_ahead::wait_before_build).
  std::vector<int> compile_ahead_kinds;
  // Home, then the other devices coex builds the program for at its clBuildProgram, under `mutex`:
  // foreseen as its analysis is posted, then as its builds are (exec/context_and_build_preparation.h):
  // the devices a rewrite's process compiles for are picked from it (compile_ahead::serve_rewrite) as
  // the builds pick the one of each kind that builds from source (first_of_kind).
  std::vector<int> devices_to_build;
  // By kernel name, under `mutex`: its launches run on home while its process, on a core the devices
  // run on, had not yet shown it would pay (first_launch_probe::process_pays).
  std::map<std::string, std::shared_ptr<std::atomic<uint64_t>>> launches_before_process;
  // The program's folder of PoCL's kernel cache (its build hash), looked for once, under `mutex`:
  // empty where none or several were touched during the app's build.
  std::string pocl_folder;
  bool pocl_folder_sought = false;
  uint64_t source_hash = 0;
  // The analysis and the rewritten source, made once (exec/program_analysis.cpp): `analysed` claims
  // it under `mutex`; once analysis_done, `info` and `rewritten_source` are final and read without it.
  std::mutex mutex;
  bool analysed = false;
  std::atomic<bool> analysis_done{false};
  bool analysis_kept = false;  // read from an earlier run's (exec/kept_analyses.h), not made
  // A launch has waited for the analysis (auto_analysis_wait): the later ones of the program do not.
  std::atomic<bool> analysis_waited{false};
  // The History remembers the program as one whose run let late devices in: they are let in once its
  // analysis says some kernel may be split (exec/late_devices.h, let_in_if_remembered).
  std::atomic<bool> late_devices_remembered{false};
  kernel::ProgramInfo info;
  std::string rewritten_source;
  // By (coex device index, built in the app's own context): the home device builds there, so that
  // it runs on the app's buffers; other devices build in coex's shadow context of that device.
  std::map<std::pair<int, bool>, DeviceBuild> builds;
  // The binary of the app's own program for its one device (`app_binary_device`, a coex index), read
  // at its clBuildProgram (or at its first launch that may be split: app_binary_deferred) when another
  // device of the same kind is to build it: while the analysis rewrites nothing, those devices build
  // from it (exec/shared_binaries.h). Set under mutex, before any of their builds is posted; cleared
  // with coex's builds (release_device_builds).
  std::vector<unsigned char> app_binary;
  int app_binary_device = -1;
  // The read of app_binary is put off to the first launch that may be split (exec/deferred_app_binary.h):
  // set at clBuildProgram before any build is posted, cleared under mutex once read; `app_binary_read`
  // makes it once, and while it waits for the program's launches to end (`app_binary_needs_quiet`,
  // set before app_binary_deferred) no launch of the program is enqueued.
  std::atomic<bool> app_binary_deferred{false};
  bool app_binary_needs_quiet = false;
  std::mutex app_binary_read;
  // While a read waits for quiet: the app's launches of the program enqueued since clBuildProgram that
  // may not have ended, by queue (an in-order queue's last only), their events retained. Under
  // app_binary_read.
  std::map<cl_command_queue, std::vector<cl_event>> gated_launches;
  // On PoCL, by the key of `builds`: the build hash of that build's program and of the binary it was
  // built from (its family: shared by every device built from one binary, its donor included), where
  // a binary of it passed through coex (exec/shared_first_runs.h), noted at its read for the donor
  // (exec/shared_binaries.h, note_donor_hash). {home, true} is first the app's program, read at its
  // clBuildProgram, until home's build of a rewrite replaces it. Under mutex.
  struct PoclHash {
    std::string own, family;
  };
  std::map<std::pair<int, bool>, PoclHash> pocl_hashes;
  // The builds posted to a device's worker and not begun yet, or begun (then in `builds` too).
  std::set<std::pair<int, bool>> builds_posted;
  bool analysis_posted = false;  // the analysis alone, posted to a worker (exec::prepare_analysis)
  // By kernel name, then by what the verdict depends on (exec/split_safety.h's conflict_key): whether
  // a launch's chunks may run on different devices, empty when they may, else the report's reason.
  // Learnt at enqueue from the footprints, or at the end of a split that found a conflict. Under mutex.
  std::map<std::string, std::map<std::string, std::string>> chunk_verdicts;
};

struct KernelArgValue {
  bool set = false;
  bool local = false;          // __local: clSetKernelArg(size, NULL)
  bool svm = false;            // clSetKernelArgSVMPointer
  size_t size = 0;             // as given to clSetKernelArg (for __local: the bytes to allocate)
  std::vector<uint8_t> bytes;  // the value; empty for __local and SVM arguments
};

// What clGetKernelWorkGroupInfo says of a kernel on one device: fixed once the kernel exists.
struct KernelGroupInfo {
  size_t compiled[3] = {0, 0, 0};  // CL_KERNEL_COMPILE_WORK_GROUP_SIZE (reqd_work_group_size); zeros: none
  size_t limit = 0;                // CL_KERNEL_WORK_GROUP_SIZE; 0: the driver did not say
};

struct KernelRecord {
  cl_kernel handle = nullptr;
  std::atomic<int> app_refs{1};
  std::shared_ptr<ProgramRecord> program;
  std::string name;
  std::mutex mutex;  // guards args and group_info: apps may set arguments from several threads
  std::vector<KernelArgValue> args;
  bool exec_info_set = false;  // clSetKernelExecInfo (SVM pointers): not split
  // Per device, asked of the driver once (a query per launch cost microseconds on NVIDIA's driver).
  std::map<cl_device_id, KernelGroupInfo> group_info;
};

// An event coex made for the app (the end marker of a split launch), with the start marker whose
// completion is the moment the split could begin: profiling info spans the whole split.
struct SplitEventRecord {
  cl_event start_marker = nullptr;
  // The app's references to the split's event (its creation and clRetainEvent calls less its
  // clReleaseEvent calls): the driver's count also holds the queue's own while the marker is pending.
  std::atomic<int> app_refs{1};
  // The split's outcome: CL_COMPLETE, or the driver's (negative) error. The user event the end
  // marker waits on always completes with CL_COMPLETE, since PoCL 3.1 aborts in
  // pocl_update_event_failed() when a user event is set to an error (seen here); the error is
  // reported through clGetEventInfo and clWaitForEvents instead.
  std::atomic<cl_int> status{CL_QUEUED};
};

}  // namespace coex::model
