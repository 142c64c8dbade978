#include "exec/compile_ahead.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "config/settings.h"
#include "devices/device_set.h"
#include "exec/compile_ahead_cores.h"
#include "exec/compile_ahead_kinds.h"
#include "exec/compile_ahead_request.h"
#include "exec/compile_ahead_warm.h"
#include "exec/executor.h"
#include "exec/exit_guard.h"
#include "exec/kept_binary_choice.h"
#include "exec/pocl_compiles.h"
#include "exec/pocl_kernel_cache.h"
#include "exec/program_analysis.h"
#include "exec/shared_binaries.h"
#include "exec/spin_wait.h"
#include "kernel/analysis_process.h"
#include "kernel/child_process.h"
#include "report/report.h"
#include "report/trace.h"

namespace coex::exec::compile_ahead {
namespace {

// kWaiting: started at the app's clBuildProgram, the process waits for the variants (begin_at_build).
enum State : int { kNotAsked = 0, kStarting, kWaiting, kRunning, kEnded };

// PoCL touches its program folder's `last_accessed` during the build, and a file's time is the
// kernel's coarse clock (a tick of a few milliseconds behind a precise reading): a margin each side.
constexpr std::chrono::milliseconds kTouchMargin{50};

struct Running {
  std::string request;  // the request file: the process removes it once read, and this once it has ended
  std::chrono::steady_clock::time_point started;
  report::TraceRecorder* trace = nullptr;  // where its slice goes, on home's track
  int home = 0;
  report::ReportRecorder* report = nullptr;  // what it cost, in the report's `compile_ahead`
  const model::ProgramRecord* program = nullptr;  // the program it compiles for (its ID may be reused)
  int input = -1;         // started at the build: where the variants go (its standard input), until sent
  bool at_build = false;  // started at the app's clBuildProgram (begin_at_build)
  std::vector<int> kinds{};                       // the devices of other kinds it builds for (compile_ahead_kinds.h)
  std::chrono::steady_clock::time_point asked{};  // when it was sent the variants (started at the build)
  int per_target = 1;                             // processes compiling each target (variant_processes)
  double set_up_ms = 0;  // spawned at clCreateContext: how long before the hand-over (compile_ahead_warm.h)
  bool served_none = false;  // killed, its program needing none of it (end_process_serving_none)
  bool rewrite = false;      // it compiles the program's rewrite (serve_rewrite)
  kernel::child_process::Child child{};  // its ID and pidfd, released once reaped or given up
};

std::mutex running_mutex;
// Never destroyed: a program's last release may come from an app's static destructor (not_needed).
std::map<pid_t, Running>& running() {
  static auto* processes = new std::map<pid_t, Running>;  // under running_mutex
  return *processes;
}

// A program's state once claimed (kStarting): `fallback` where what follows throws (a driver's
// exception, an allocation), so that a state left at kStarting does not keep its launches on home.
struct Claimed {
  std::atomic<int>& state;
  int fallback;
  bool stored = false;
  void store(int value) {
    state.store(value, std::memory_order_release);
    stored = true;
  }
  ~Claimed() {
    if (!stored) state.store(fallback, std::memory_order_release);
  }
};

// How long after its start a process started at the build takes its variants: it waits until 5 s
// after its start (launcher/compile_ahead_command.cpp), and a line sent later than this may come after
// its wait ended.
constexpr std::chrono::milliseconds kSendVariantsWithin{4500};

// The app's program folders found so far, under running_mutex: a process compiling ahead for one of
// them touches it when it builds, maybe during another program's clBuildProgram, which would then
// find two folders touched.
std::set<std::string>& folders_found() {
  static std::set<std::string> found;
  return found;
}

// The program's folder of PoCL's kernel cache, looked for once a build: the one folder PoCL touched
// during the app's clBuildProgram, the folders found for other programs left aside. Empty where none
// or several were.
std::string program_folder(const std::string& root, model::ProgramRecord& program) {
  std::filesystem::file_time_type began, ended;
  {
    std::lock_guard lock(program.mutex);
    if (program.pocl_folder_sought) return program.pocl_folder;
    began = program.app_build_began;
    ended = program.app_build_ended;
  }
  if (began == std::filesystem::file_time_type{}) return "";
  std::set<std::string> others;
  {
    std::lock_guard lock(running_mutex);
    others = folders_found();
  }
  const std::string hash =
      pocl_kernel_cache::program_touched_within(root, began - kTouchMargin, ended + kTouchMargin, others);
  if (!hash.empty()) {
    std::lock_guard lock(running_mutex);
    folders_found().insert(hash);
  }
  std::lock_guard lock(program.mutex);
  if (program.app_build_began == began) {
    program.pocl_folder = hash;
    program.pocl_folder_sought = true;
  }
  return hash;
}

// The hash of the program's folder of PoCL's cache, where a process may compile for the program at
// all (compile_ahead on, home a PoCL device of this machine, the program built from one source, the
// folder found); "" otherwise.
std::string folder_to_compile_into(Services& services, model::ProgramRecord& program, int home) {
  const devices::Device& device = services.devices().at(home);
  if (!services.settings().compile_ahead || !device.is_pocl() || device.remote ||
      program.origin != model::ProgramOrigin::Source || program.source.empty())
    return "";
  const std::string root = pocl_kernel_cache::root();
  return root.empty() ? "" : program_folder(root, program);
}

// Whether the program's first split would compile in the app's process what a process of its own can
// compile first: PoCL's cache lacks the kernel's generic function in the app's program folder.
bool wanted(Services& services, model::ProgramRecord& program, int home, const std::string& kernel) {
  if (!pocl_kernel_cache::folder_named_as_kernel(kernel)) return false;
  const std::string hash = folder_to_compile_into(services, program, home);
  return !hash.empty() && !pocl_kernel_cache::has_generic(pocl_kernel_cache::root(), hash, kernel);
}

// At the app's clBuildProgram: whether PoCL's cache lacks the generic function of some kernel of the
// program in its folder (what the first split's read would compile).
bool wanted_at_build(Services& services, model::ProgramRecord& program, int home) {
  const std::string hash = folder_to_compile_into(services, program, home);
  if (hash.empty()) return false;
  const std::string root = pocl_kernel_cache::root();
  for (const std::string& kernel : program_kernel_names(services.next(), program.handle))
    if (pocl_kernel_cache::folder_named_as_kernel(kernel) && !pocl_kernel_cache::has_generic(root, hash, kernel))
      return true;
  return false;
}

// `variants_from_input`: started at the app's clBuildProgram, the process takes the variants later, a
// line on its standard input (input_pair). `kinds`: the devices of other kinds it builds for too
// (compile_ahead_kinds.h), whose builds wait for it. Such a process with no other kinds is the one
// spawned at clCreateContext where that one waits for it (compile_ahead_warm.h), else spawned now. It
// compiles the app's source with the app's options, or the rewrite (serve_rewrite) with those of
// home's build of it; for each of `kinds`, with those of that device's build (own_build_options).
bool start(Services& services, model::ProgramRecord& program, int home, const std::string& variants,
           bool variants_from_input, const std::vector<int>& kinds) {
  const std::string executable = kernel::analysis_process::find_executable();
  const devices::Device& device = services.devices().at(home);
  size_t platform_devices = 0;
  const int index = index_in_platform(services.next(), device, platform_devices);
  if (executable.empty() || index < 0) return false;
  std::string options;
  const bool rewrite = program.compile_ahead_rewrite.load(std::memory_order_acquire);
  {
    std::lock_guard lock(program.mutex);
    options = program.build_options;
  }
  std::vector<Target> targets;
  for (int kind : kinds)
    targets.push_back(
        {services.devices().at(kind).name, own_build_options(services.devices().at(kind), options, kind)});
  std::unique_lock running_lock(running_mutex);
  const size_t running_now = running().size();
  running_lock.unlock();
  const int processes =
      variants.empty() && !variants_from_input ? 1 : processes_per_target(services, 1 + kinds.size(), running_now);
  const std::string text =
      request_text(device, index, pocl_devices_entry(std::getenv("POCL_DEVICES"), platform_devices), variants,
                   variants_from_input, processes, rewrite ? own_build_options(device, options, home) : options,
                   targets, rewrite ? program.rewritten_source : program.source);
  std::error_code ec;
  std::string request = (std::filesystem::temp_directory_path(ec) / "coex-compile-ahead-XXXXXX").string();
  const int fd = ec ? -1 : ::mkstemp(request.data());
  if (fd < 0) return false;
  ::close(fd);
  if (!write_request(request, text)) {
    ::unlink(request.c_str());
    return false;
  }
  // Before the spawn: the process's wait for the variants counts from its start, or from the hand-over.
  const auto started = std::chrono::steady_clock::now();
  warm::Handed handed;
  if (variants_from_input && kinds.empty()) handed = warm::hand(index, processes, request);
  int input[2] = {handed.input, -1};  // this end, the process's
  pid_t pid = handed.pid;
  int pidfd = handed.pidfd;
  if (pid < 0) {
    if (variants_from_input && !input_pair(input)) {
      ::unlink(request.c_str());
      return false;
    }
    pid = spawn(executable, request, input[1]);
    pidfd = kernel::child_process::open_pidfd(pid);
    if (input[1] >= 0) ::close(input[1]);
  }
  if (pid < 0) {
    if (input[0] >= 0) ::close(input[0]);
    ::unlink(request.c_str());
    return false;
  }
  {
    // Not under running_mutex, which is taken under program.mutex (not_needed at a program's release).
    std::lock_guard lock(program.mutex);
    program.compile_ahead_kinds = kinds;
  }
  std::lock_guard lock(running_mutex);
  Running& process = running()[pid];
  if (process.input >= 0) ::close(process.input);  // an entry of an ended process whose ID came again
  kernel::child_process::release(process.child);
  process = {request, started, services.trace(), home, &services.report(), &program};
  process.child = {pid, pidfd};
  process.input = input[0];
  process.at_build = variants_from_input;
  process.rewrite = rewrite;
  process.kinds = kinds;
  process.per_target = processes;
  process.set_up_ms = handed.set_up_ms;
  program.compile_ahead_pid.store(pid, std::memory_order_release);
  return true;
}

// Ends the program's process's wait for the variants: sends them (a line), or with `variants` null
// only closes its input (it then ends without them). Whether they were sent: not where its input was
// closed already, the send failed (it had ended, or would wait: the line is short and the socket's
// buffer holds little else, so a full one means it reads nothing), or its wait for them may have ended
// (it waits until 5 s after its start: launcher/compile_ahead_command.cpp; sent only within
// kSendVariantsWithin).
bool end_wait_for_variants(model::ProgramRecord& program, const std::string* variants) {
  const pid_t pid = program.compile_ahead_pid.load(std::memory_order_acquire);
  std::lock_guard lock(running_mutex);
  auto it = running().find(pid);
  if (it == running().end() || it->second.program != &program || it->second.input < 0) return false;
  bool sent = false;
  if (variants && std::chrono::steady_clock::now() - it->second.started < kSendVariantsWithin) {
    const std::string line = *variants + "\n";
    sent = ::send(it->second.input, line.data(), line.size(), MSG_NOSIGNAL | MSG_DONTWAIT) == ssize_t(line.size());
    if (sent) it->second.asked = std::chrono::steady_clock::now();
  }
  ::close(it->second.input);
  it->second.input = -1;
  return sent;
}

// Ends the wait of every process started at a build and not sent its variants yet: each ends once its
// generic functions are compiled, and a launch of its program that finds it ended starts one of its
// own where the variants are missing (under_way).
void end_unasked_waits() {
  std::lock_guard lock(running_mutex);
  for (auto& [pid, process] : running())
    if (process.input >= 0) {
      ::close(process.input);
      process.input = -1;
    }
}

// The program's folder of PoCL's cache as found (program_folder), "" before.
std::string folder_found(model::ProgramRecord& program) {
  std::lock_guard lock(program.mutex);
  return program.pocl_folder;
}

// Whether the program's folder lacks a variant the launch's chunks run (variants_for): a small grid
// at a zero or a nonzero offset with the launch's local size.
bool variants_missing(model::ProgramRecord& program, const Launch& launch) {
  if (!launch.local || launch.work_dim == 0 || launch.work_dim > 3) return false;
  size_t local[3] = {1, 1, 1};
  for (cl_uint d = 0; d < launch.work_dim; ++d) local[d] = launch.local[d];
  const std::string hash = folder_found(program);
  const std::string root = pocl_kernel_cache::root();
  return !hash.empty() && (!pocl_kernel_cache::has_variant(root, hash, launch.kernel, local, true, true) ||
                           !pocl_kernel_cache::has_variant(root, hash, launch.kernel, local, false, true));
}

// A process seen ended now, or ended at exit: its `compile ahead` slice on home's track and its
// seconds in the report. Its input, if still open, is closed.
void note_end(Running& process, bool made, bool at_exit) {
  if (process.input >= 0) ::close(process.input);
  process.input = -1;
  const auto now = std::chrono::steady_clock::now();
  if (process.trace) {
    nlohmann::json args{{"made", made}};
    if (at_exit) args["ended_at_exit"] = true;
    if (process.served_none) args["served_none"] = true;
    if (process.rewrite) args["rewrite"] = true;
    if (!process.kinds.empty()) args["kinds"] = process.kinds;
    if (process.per_target > 1) args["processes_per_target"] = process.per_target;
    if (process.set_up_ms > 0) args["set_up_at_context_ms"] = process.set_up_ms;
    if (process.at_build) {
      args["at_build"] = true;
      if (process.asked != std::chrono::steady_clock::time_point{})
        args["variants_after_ms"] = std::chrono::duration<double, std::milli>(process.asked - process.started).count();
    }
    process.trace->record("compile ahead", "build", process.home, process.started, now, std::move(args));
  }
  if (process.report)
    process.report->record_compile_ahead(std::chrono::duration<double>(now - process.started).count(), made, at_exit,
                                         process.at_build, process.kinds.size(), process.served_none);
}

// Takes every process that has ended out of running(), its request file removed and its slice and
// seconds noted, then returns `look()`, read under the same lock. Each is waited for under
// running_mutex while running() holds it, so that an ID is waited for only while it is coex's child
// (once reaped, the system may give it to another child of the app). ECHILD: the app reaped it, how it
// went unknown (the read compiles what is missing). The slice ends where coex found the process
// ended: it may have ended a little before.
template <typename Look>
auto reap_ended(Look look) {
  warm::reap();                                 // one never handed a request, ended on its own
  std::vector<std::pair<Running, bool>> ended;  // and whether it made its binary
  decltype(look()) result;
  {
    std::lock_guard lock(running_mutex);
    for (auto it = running().begin(); it != running().end();) {
      bool exited_zero = false;
      if (kernel::child_process::reap(it->second.child, true, &exited_zero) == 0) {
        ++it;
        continue;
      }
      kernel::child_process::release(it->second.child);
      ended.emplace_back(it->second, exited_zero);
      it = running().erase(it);
    }
    result = look();
  }
  for (auto& [process, made] : ended) {
    ::unlink(process.request.c_str());
    note_end(process, made, false);
  }
  return result;
}

// Whether the program's process still runs (taken out of running() once it has ended).
bool alive(const model::ProgramRecord& program) {
  const pid_t pid = program.compile_ahead_pid.load(std::memory_order_acquire);
  return reap_ended([&] {
    const auto it = running().find(pid);
    return it != running().end() && it->second.program == &program;
  });
}

// Whether the program's process still runs; once it has ended, the trace's `compile ahead` slice on
// home's track says how it went, and the kinds it built for are done with (pending, the probe's rule).
bool still_running(model::ProgramRecord& program) {
  const pid_t pid = program.compile_ahead_pid.load(std::memory_order_acquire);
  if (reap_ended([&] { return running().count(pid) > 0; })) return true;
  program.compile_ahead.store(kEnded, std::memory_order_release);
  std::lock_guard lock(program.mutex);
  program.compile_ahead_kinds.clear();
  return false;
}

// Whether another process may start now (`compile_ahead_processes`). Processes that have ended are
// taken off the count first, whichever program they compiled for: one program's process, ended
// while nothing of its own program launches, would otherwise hold a place until the exit.
bool below_process_limit(Services& services) {
  size_t limit = size_t(services.settings().compile_ahead_processes);
  if (limit == 0) limit = default_process_limit(usable_cores(), cores_of_pocl_cpu_devices(services));
  return reap_ended([&] { return running().size() < limit; });
}

}  // namespace

bool under_way(Services& services, model::ProgramRecord& program, int home, const Launch& launch) {
  int state = program.compile_ahead.load(std::memory_order_acquire);
  if (state == kWaiting && program.compile_ahead.compare_exchange_strong(state, kStarting)) {
    Claimed claimed{program.compile_ahead, kEnded};
    const std::string variants = variants_for(launch.work_dim, launch.local);
    // What the read and the first chunks would compile here: a generic function of the program (the
    // read compiles every kernel's) or this launch's variants. Where PoCL's cache holds all of it by
    // now, nothing is waited for.
    const std::vector<int> kinds = kinds_of(program);
    // (The folders looked in are the app's program's: the rewrite's process is sent its variants.)
    if (kinds.empty() && !program.compile_ahead_rewrite.load(std::memory_order_acquire) &&
        !wanted_at_build(services, program, home) && !variants_missing(program, launch)) {
      end_wait_for_variants(program, nullptr);
      claimed.store(kEnded);
      return false;
    }
    if (end_wait_for_variants(program, &variants)) {
      claimed.store(kRunning);
      return still_running(program);
    }
    // Its wait for them has ended (a long time between the build and this launch, or ended for
    // another program's process): while it still runs, compiling generic functions, this launch runs
    // on home; once it has ended, a process of this launch's own compiles the variants PoCL's cache
    // lacks, as a process started at the launch would.
    if (alive(program)) {
      claimed.store(kWaiting);
      return true;
    }
    bool started = false;
    if (!kinds.empty() || variants_missing(program, launch)) {
      if (below_process_limit(services)) {
        started = start(services, program, home, variants, false, kinds);
      } else {
        services.report().record_compile_ahead_beyond_limit();
        end_unasked_waits();
      }
    }
    claimed.store(started ? kRunning : kEnded);
    return started;
  }
  if (state == kNotAsked && program.compile_ahead.compare_exchange_strong(state, kStarting)) {
    Claimed claimed{program.compile_ahead, kEnded};
    bool started = false;
    if (wanted(services, program, home, launch.kernel)) {
      if (below_process_limit(services)) {
        started = start(services, program, home, variants_for(launch.work_dim, launch.local), false, {});
      } else {
        services.report().record_compile_ahead_beyond_limit();
        end_unasked_waits();  // the places they hold come free for the next program's
      }
    }
    claimed.store(started ? kRunning : kEnded);
    return started;
  }
  if (state == kStarting) return true;  // another thread starts it: that launch runs on home too
  return state == kRunning && still_running(program);
}

bool would_start_process(Services& services, model::ProgramRecord& program, int home, const std::string& kernel) {
  const int state = program.compile_ahead.load(std::memory_order_acquire);
  return state == kWaiting ||
         (state == kNotAsked && wanted(services, program, home, kernel) && below_process_limit(services));
}

bool waits_for_variants(Services& services, model::ProgramRecord& program) {
  return program.compile_ahead.load(std::memory_order_acquire) == kWaiting && starts_at_context(services);
}

void begin_at_build(Services& services, model::ProgramRecord& program, int home, const std::vector<int>& to_build) {
  if (!starts_at_build(services) || services.executor().policy().waits_for_preparation()) return;
  const bool deferred = program.app_binary_deferred.load(std::memory_order_acquire);
  if (deferred && program.app_binary_needs_quiet) return;  // no process serves a read that waits for quiet
  if (splits_run_none_of_app_program(program)) return;     // a process would serve none
  std::string options;
  {
    std::lock_guard lock(program.mutex);
    options = program.build_options;
  }
  const std::vector<int> kinds = other_kinds_to_compile(services, program.source, options, home, to_build);
  // Not put off, the app's binary is not read: the process compiles home's variants beside other kinds.
  if ((!deferred && kinds.empty()) || folder_to_compile_into(services, program, home).empty()) return;
  int state = kNotAsked;
  if (!program.compile_ahead.compare_exchange_strong(state, kStarting)) return;
  Claimed claimed{program.compile_ahead, kNotAsked};
  const bool started = (!kinds.empty() || wanted_at_build(services, program, home)) && below_process_limit(services) &&
                       start(services, program, home, "", true, kinds);
  claimed.store(started ? kWaiting : kNotAsked);
  if (started && splits_run_none_of_app_program(program)) end_process_serving_none(program);  // analysed meanwhile
}

bool pending(model::ProgramRecord& program) {
  const int state = program.compile_ahead.load(std::memory_order_acquire);
  return (state == kWaiting || state == kStarting || state == kRunning) &&
         (!kinds_of(program).empty() || program.compile_ahead_rewrite.load(std::memory_order_acquire));
}

void wait_before_build(Services& services, model::ProgramRecord& program, int device) {
  // A build of a rewrite: its process is started first where it may be (serve_rewrite runs as the
  // analysis ends too, on the worker that ran it, which may be another's: no build of the rewrite
  // must pass before it; serve_rewrite returns once a start under way is done), and home's, and those
  // of the devices it compiles for, wait for it.
  const bool at_home = device == home_of(services, program);
  if (splits_run_none_of_app_program(program)) serve_rewrite(services, program);
  const bool rewrite = program.compile_ahead_rewrite.load(std::memory_order_acquire);
  const std::vector<int> kinds = kinds_of(program);
  if (!(at_home && rewrite) && std::find(kinds.begin(), kinds.end(), device) == kinds.end()) return;
  if (!rewrite && splits_run_none_of_app_program(program))
    return end_process_serving_none(program);  // builds the rewrite
  const auto began = std::chrono::steady_clock::now();
  const auto until = began + kCompileLockWait;
  while (alive(program) && !exit_begun() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  if (auto* trace = services.trace())
    trace->record("wait for compile ahead", "build", device, began, std::chrono::steady_clock::now());
}

void not_needed(model::ProgramRecord& program) {
  int state = kWaiting;
  if (program.compile_ahead.compare_exchange_strong(state, kEnded)) end_wait_for_variants(program, nullptr);
}

namespace {

// Orders the end of a process serving none with the start of one for the rewrite (serve_rewrite): a
// caller of either sees the other done, never between a look at compile_ahead_rewrite and the kill or
// the start that look allowed (another thread's end_process_serving_none would kill the rewrite's).
std::mutex serving_mutex;

// end_process_serving_none, serving_mutex held.
void end_serving_none_locked(model::ProgramRecord& program) {
  not_needed(program);
  pid_t pid = 0;  // read under running_mutex, as start() writes it
  Running process;
  {
    std::lock_guard lock(running_mutex);
    pid = program.compile_ahead_pid.load(std::memory_order_acquire);
    const auto it = running().find(pid);
    if (it == running().end() || it->second.program != &program) return;
    // Killed only while it runs, not reaped (one ended is left to reap_ended); its forks die with it
    // (PR_SET_PDEATHSIG); PoCL writes each file whole, as at the exit (stop_all).
    if (!kernel::child_process::signal_if_running(it->second.child, SIGKILL)) return;
    process = it->second;
    running().erase(it);
  }
  kernel::child_process::reap(process.child, false);
  kernel::child_process::release(process.child);
  ::unlink(process.request.c_str());
  process.served_none = true;
  note_end(process, false, false);
  std::lock_guard lock(program.mutex);
  program.compile_ahead_kinds.clear();  // done with, as once seen ended (still_running)
}

}  // namespace

bool serves_none(const model::ProgramRecord& program) {
  return splits_run_none_of_app_program(program) && !program.compile_ahead_rewrite.load(std::memory_order_acquire);
}

void end_process_serving_none(model::ProgramRecord& program) {
  std::lock_guard lock(serving_mutex);
  if (!program.compile_ahead_rewrite.load(std::memory_order_acquire)) end_serving_none_locked(program);
}

void serve_rewrite(Services& services, model::ProgramRecord& program) {
  std::lock_guard lock(serving_mutex);
  if (program.compile_ahead_rewrite.load(std::memory_order_acquire)) return;  // served already
  end_serving_none_locked(program);
  const int home = home_of(services, program);
  if (home < 0 || program.rewritten_source.empty() || program.analysis_kept || !rewrite_served(services, home)) return;
  // Claimed where no process was asked for, or the app's program's has ended (end_process_serving_none);
  // tried once a program (a later analyse_traced, for a device posted late, must not start another).
  int state = program.compile_ahead.load(std::memory_order_acquire);
  if ((state != kNotAsked && state != kEnded) || alive(program) ||
      program.compile_ahead_rewrite_tried.exchange(true, std::memory_order_acq_rel) ||
      !program.compile_ahead.compare_exchange_strong(state, kStarting))
    return;
  Claimed claimed{program.compile_ahead, kEnded};
  const std::vector<int> kinds = other_kinds_of_rewrite(services, program, home);
  program.compile_ahead_rewrite.store(true, std::memory_order_release);
  const bool started = below_process_limit(services) && start(services, program, home, "", true, kinds);
  if (!started) program.compile_ahead_rewrite.store(false, std::memory_order_release);
  claimed.store(started ? kWaiting : kEnded);
}

bool would_start(Services& services, model::ProgramRecord& program, int home, const std::string& kernel,
                 const size_t local[3], bool offset_zero) {
  if (!would_start_process(services, program, home, kernel)) return false;
  return pocl_kernel_cache::has_variant(pocl_kernel_cache::root(), folder_found(program), kernel, local, offset_zero,
                                        true);
}

void stop_all() {
  warm::stop();
  std::map<pid_t, Running> left;
  {
    std::lock_guard lock(running_mutex);
    left.swap(running());
  }
  for (auto& [pid, process] : left) {
    // Still this process's child (an app that reaps every child may have reaped it: without a pidfd,
    // its ID may be another process's by now), then ended.
    kernel::child_process::Child& child = process.child;
    // One that ends between the looks is reaped too (not signalled: it no longer runs).
    if (kernel::child_process::reap(child, true) == 0 &&
        (kernel::child_process::signal_if_running(child, SIGKILL) || !kernel::child_process::runs(child)))
      kernel::child_process::reap(child, false);
    kernel::child_process::release(child);
    ::unlink(process.request.c_str());
    note_end(process, false, true);
  }
}

}  // namespace coex::exec::compile_ahead
