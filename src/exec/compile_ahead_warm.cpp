#include "exec/compile_ahead_warm.h"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <mutex>

#include "config/settings.h"
#include "devices/device_set.h"
#include "exec/compile_ahead.h"
#include "exec/compile_ahead_kinds.h"
#include "exec/compile_ahead_request.h"
#include "exec/executor.h"
#include "exec/kept_analyses.h"
#include "exec/pocl_kernel_cache.h"
#include "kernel/analysis_process.h"
#include "kernel/child_process.h"

namespace coex::exec::compile_ahead::warm {
namespace {

// The process waits for its request until 5 s after its start (launcher/compile_ahead_command.cpp,
// kVariantsWait): one handed later than this may find it gone.
constexpr std::chrono::milliseconds kHandWithin{4500};

struct Spawned {
  pid_t pid = -1;
  int pidfd = -1;  // kernel/child_process.h's
  int input = -1;  // this end of its standard input, until handed
  int home_index = -1;
  int per_target = 1;
  std::chrono::steady_clock::time_point started{};
};

std::mutex spawned_mutex;
Spawned spawned;  // under spawned_mutex
bool tried = false;

// Sends all of `bytes` at once or nothing: what goes to the process is short (what sets PoCL up, a
// request file's path) and its socket's buffer empty, so a send that would wait means it is not
// reading. False where it has ended or the send would wait.
bool send_now(int input, const std::string& bytes) {
  return ::send(input, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT) == ssize_t(bytes.size());
}

// Whether the process still holds its end of the socket: it does until it ends (its forks, which
// hold it too, end with it). Only then is its ID surely still its own (an app that reaps every child
// may have reaped it, and the system given the ID to another).
bool holds_its_end(int input) {
  pollfd closed{input, POLLRDHUP, 0};
  return ::poll(&closed, 1, 0) == 0;
}

// Ends the process not handed a request, under spawned_mutex: killed where it still runs, reaped
// where still this process's child.
void end_spawned() {
  kernel::child_process::Child child{spawned.pid, spawned.pidfd};
  if (spawned.pid > 0) {
    if (spawned.input >= 0 && holds_its_end(spawned.input)) kernel::child_process::signal_if_running(child, SIGKILL);
    kernel::child_process::reap(child, false);
  }
  kernel::child_process::release(child);
  if (spawned.input >= 0) ::close(spawned.input);
  spawned = {};
}

}  // namespace

void spawn_at_context(Services& services, int home, const std::vector<int>& others) {
  if (!starts_at_context(services) || services.executor().policy().waits_for_preparation() || others.empty()) return;
  const devices::DeviceSet& set = services.devices();
  const devices::Device& device = set.at(home);
  if (!services.settings().compile_ahead || !device.is_pocl() || device.remote || !(device.type & CL_DEVICE_TYPE_CPU))
    return;
  for (int other : others)
    if (!set.at(other).same_kind(device)) return;  // its request would name other kinds too
  // Where this build of coex kept analyses the run is likely a later one, whose PoCL cache holds what
  // a process would compile (the analysis process waits likewise: prepare_other_devices,
  // exec/context_and_build_preparation.h).
  if (analyses_kept()) return;
  {
    std::lock_guard lock(spawned_mutex);
    if (tried) return;
    tried = true;
  }
  const std::string executable = kernel::analysis_process::find_executable();
  size_t platform_devices = 0;
  const int index = index_in_platform(services.next(), device, platform_devices);
  if (executable.empty() || index < 0 || pocl_kernel_cache::root().empty()) return;
  const int per_target = processes_per_target(services, 1);
  const std::string set_up =
      request_text(device, index, pocl_devices_entry(std::getenv("POCL_DEVICES"), platform_devices), "", true,
                   per_target, "", {}, "");
  int input[2] = {-1, -1};
  if (!input_pair(input)) return;
  const auto started = std::chrono::steady_clock::now();
  const pid_t pid = spawn(executable, "-", input[1]);
  ::close(input[1]);
  std::lock_guard lock(spawned_mutex);
  spawned = {pid, kernel::child_process::open_pidfd(pid), input[0], index, per_target, started};
  if (pid < 0 || !send_now(input[0], std::to_string(set_up.size()) + "\n" + set_up)) end_spawned();
}

Handed hand(int home_index, int per_target, const std::string& request) {
  std::lock_guard lock(spawned_mutex);
  if (spawned.pid <= 0) return {};
  const auto now = std::chrono::steady_clock::now();
  if (spawned.home_index != home_index || spawned.per_target != per_target || now - spawned.started >= kHandWithin ||
      !holds_its_end(spawned.input) || !send_now(spawned.input, request + "\n")) {
    end_spawned();  // no other program will take it: its set-up matches this one's or none
    return {};
  }
  const Handed handed{spawned.pid, spawned.pidfd, spawned.input,
                      std::chrono::duration<double, std::milli>(now - spawned.started).count()};
  spawned = {};
  return handed;
}

void reap() {
  std::lock_guard lock(spawned_mutex);
  if (spawned.pid > 0 && spawned.input >= 0 && !holds_its_end(spawned.input)) end_spawned();
}

void stop() {
  std::lock_guard lock(spawned_mutex);
  end_spawned();
}

}  // namespace coex::exec::compile_ahead::warm
