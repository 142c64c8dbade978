#include "exec/compile_ahead_warm.h"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
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

namespace coex::exec::compile_ahead::warm {
namespace {

// The process waits for its request until 5 s after its start (launcher/compile_ahead_command.cpp,
// kVariantsWait): one handed later than this may find it gone.
constexpr std::chrono::milliseconds kHandWithin{4500};

struct Spawned {
  pid_t pid = -1;
  int input = -1;  // this end of its standard input, until handed
  int home_index = -1;
  int per_target = 1;
  std::chrono::steady_clock::time_point started{};
};

std::mutex spawned_mutex;
Spawned spawned;  // under spawned_mutex
bool tried = false;

// How long a send of a block may wait for the process to read: it reads the request once PoCL is set
// up (tens to hundreds of milliseconds); a source larger than the socket's buffer waits that long, and
// a process that reads nothing in this time is given up (the build then spawns one of its own).
constexpr std::chrono::milliseconds kSendWithin{1000};

// A block of the process's input: a line with the text's length, then the text. False where the
// process has ended or read too little within kSendWithin.
bool send_block(int input, const std::string& text) {
  const std::string block = std::to_string(text.size()) + "\n" + text;
  const auto until = std::chrono::steady_clock::now() + kSendWithin;
  for (size_t done = 0; done < block.size();) {
    const ssize_t n = ::send(input, block.data() + done, block.size() - done, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      done += size_t(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    pollfd writable{input, POLLOUT, 0};
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) || left.count() <= 0 ||
        ::poll(&writable, 1, int(left.count())) != 1)
      return false;
  }
  return true;
}

// Ends the process not handed a request, under spawned_mutex: killed where still this process's
// child, then reaped.
void end_spawned() {
  if (spawned.pid > 0 && ::waitpid(spawned.pid, nullptr, WNOHANG) == 0 && ::kill(spawned.pid, SIGKILL) == 0)
    ::waitpid(spawned.pid, nullptr, 0);
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
  // a process would compile (the analysis process waits likewise: exec/device_kernels.h).
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
  if (pid < 0 || !send_block(input[0], set_up)) {
    std::lock_guard lock(spawned_mutex);
    spawned = {pid, input[0], index, per_target, started};
    end_spawned();
    return;
  }
  std::lock_guard lock(spawned_mutex);
  spawned = {pid, input[0], index, per_target, started};
}

Handed hand(int home_index, int per_target, const std::string& request) {
  std::lock_guard lock(spawned_mutex);
  if (spawned.pid <= 0) return {};
  const auto now = std::chrono::steady_clock::now();
  if (spawned.home_index != home_index || spawned.per_target != per_target || now - spawned.started >= kHandWithin ||
      ::waitpid(spawned.pid, nullptr, WNOHANG) != 0 || !send_block(spawned.input, request)) {
    end_spawned();  // no other program will take it: its set-up matches this one's or none
    return {};
  }
  const Handed handed{spawned.pid, spawned.input,
                      std::chrono::duration<double, std::milli>(now - spawned.started).count()};
  spawned = {};
  return handed;
}

void stop() {
  std::lock_guard lock(spawned_mutex);
  end_spawned();
}

}  // namespace coex::exec::compile_ahead::warm
