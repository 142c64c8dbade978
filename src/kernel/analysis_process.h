// The kernel analysis in a process of its own (docs/kernel-analysis.md, "The analysis process").
// Loading libclang brings a second LLVM into the app's process: 15 to 25 ms of dynamic linking, with
// the dynamic linker's lock held, which the driver's own compile on the app's thread waits for (the
// app's first clBuildProgram ended about 16 ms later on average, over 24 runs on the device machine).
// So the analysis runs in `coex analysis-process`, the launcher started from the library's process:
// libclang is loaded there, the app's process only encodes the source and decodes the analysis
// (kernel/analysis_codec.h). A crash or hang of libclang on a program ends that process, not the app:
// the program is then not split (`unanalysable`).
//
// Where no such process can be started (no `coex` executable beside libcoex.so, a failed start), the
// analysis runs in the app's process as before.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "kernel/kernel_analysis.h"

namespace coex::kernel::analysis_process {

// The `coex` executable that serves analyses for the library or program holding this code: beside
// it (the build tree) or at the install's program directory relative to it; "" when there is none.
std::string find_executable();
// Which executable start() runs; "" (the default) keeps every analysis in this process. Ends the
// analysis process running and forgets earlier failed starts.
void set_executable(const std::string& path);
// Starts the analysis process, once per process (later calls return whether it runs); it begins by
// loading libclang. False when no executable was set or it could not start.
bool start();
// `coex run`'s head start (docs/kernel-analysis.md, "Started by coex run"): the launcher starts the
// analysis process just before it execs the app, so that libclang loads while the app starts (the app
// loads its driver and sets it up: 100 ms or more), not from its clCreateContext on.
// start_for_exec starts it with `executable` and leaves the other end of its socket open across exec;
// it returns what kInheritedVar is to say ("" when it could not start).
std::string start_for_exec(const std::string& executable);
// The library's side, after set_executable: takes that socket as this process's analysis process,
// where kInheritedVar names it (descriptor, inode, and the process it was started for: this one).
// Inherited by another process (a child of a script `coex run` ran), or where no analysis process is
// wanted (no executable set), it is closed: the analysis process ends when no process holds it.
bool adopt_inherited();
inline constexpr const char* kInheritedVar = "COEX_ANALYSIS_SOCKET";
// In the environment of an analysis process start_for_exec started: the process ID of the app it
// serves. It ends when that process does, even while other processes (the app's children started
// before coex took the socket) still hold the socket.
inline constexpr const char* kForProcessVar = "COEX_ANALYSIS_FOR_PROCESS";
// Whether this process's analysis process was started by `coex run` (adopted; the trace says so).
bool started_by_launcher();

// What the analysis process said of libclang, waiting for it to say (it loads it first; an analysis
// under way is waited for too): true when loaded. nullopt when no analysis process runs: ask
// libclang::load. For tests: the app's paths ask libclang_status, which never waits.
std::optional<bool> libclang_loaded(std::string* why_not);
// What the analysis process said of libclang, without waiting for it to say: the first launch's notice
// asks this while an analysis may hold the socket for tens of milliseconds (asking libclang_loaded,
// it waited for the whole analysis, and every launch behind it: docs/kernel-analysis.md).
enum class LibclangStatus {
  none_runs,     // no analysis process runs: ask libclang::load
  not_said_yet,  // one was started and is still loading it
  loaded,
  missing,  // with the reason in why_not
};
LibclangStatus libclang_status(std::string* why_not);
// The analysis of a program made there; nullopt when no analysis process runs (analyse in this
// process). When the process ends or stalls before its answer, the analysis says so in parse_error.
std::optional<ProgramInfo> analyze(const std::string& source, const std::string& build_options);

// The build ID the answering analysis process gave in its hello (kernel/build_id.h), "" for none:
// an analysis it made is kept only under the build ID of the `coex` program keyed beforehand
// (exec/kept_analyses.h), since a partial rebuild or install can leave another beside libcoex.so.
std::string served_build();

// The app's exit began: an analysis under way ends at once, unanalysed (its read of the process's
// answer, or hello, is cut short: the exit waited for it, 2.5 s behind a slow start), and none is made
// after, here or there. Nothing would read their results.
void stop_for_exit();

// The analysis process's side: loads libclang (`load_delay` late: COEX_FAULT=slow_libclang, a testing
// aid), says how that went and which build it is, then answers each request read from `fd` until the other end closes
// it (also while it parses) or the process `app` watches ends (a pidfd; -1: none). Returns the exit status.
int serve(int fd, std::chrono::milliseconds load_delay = {}, int app = -1);
// What `coex analysis-process` runs: forks, and the child serves kServedFd in a session of its own
// while this process returns at once (the app's process waits for it: spawn_locked); started by
// start_for_exec (kDetachedVar set), it is apart already and serves at once.
int detach_and_serve(std::chrono::milliseconds load_delay = {});
// In the environment of an analysis process start_for_exec forked apart from the launcher already.
inline constexpr const char* kDetachedVar = "COEX_ANALYSIS_DETACHED";

inline constexpr int kServedFd = 3;  // where the analysis process finds its end of the socket
inline constexpr const char* kCommand = "analysis-process";

}  // namespace coex::kernel::analysis_process
