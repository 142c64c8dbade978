#include "kernel/analysis_process.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <nlohmann/json.hpp>
#include <vector>

#include "kernel/analysis_codec.h"
#include "kernel/libclang_api.h"

extern char** environ;

namespace coex::kernel::analysis_process {
namespace {

using nlohmann::json;

// libclang's load is 15 to 25 ms; a slow start (a loaded machine) gets far more. An analysis takes
// tens of milliseconds; one that has not answered in a minute is taken as stuck.
constexpr int kHelloTimeoutMs = 10000;
constexpr int kAnswerTimeoutMs = 60000;
constexpr int kMostStarts = 3;  // a process that keeps ending is not started again and again

struct State {
  std::mutex mutex;
  std::string executable;
  int fd = -1;
  pid_t pid = -1;
  int starts = 0;
  bool start_failed = false;  // ended before its hello: analyses stay in this process
  bool hello = false;
  bool libclang_ok = false;
  std::string libclang_why;
};

State& state() {
  static auto* s = new State;  // never destroyed: an analysis may be under way while the process exits
  return *s;
}

// Messages are a 64-bit length, then that many bytes of JSON text. send() with MSG_NOSIGNAL: an
// analysis process that has ended must not take the app down with SIGPIPE.
bool write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= size_t(n);
  }
  return true;
}

bool write_message(int fd, const json& message) {
  const std::string text = message.dump();
  const uint64_t size = text.size();
  return write_all(fd, reinterpret_cast<const char*>(&size), sizeof size) && write_all(fd, text.data(), text.size());
}

// Reads `size` bytes by `deadline` (none when timeout_ms < 0).
bool read_all(int fd, char* data, size_t size, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (size > 0) {
    if (timeout_ms >= 0) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd p{fd, POLLIN, 0};
      int ready = ::poll(&p, 1, int(left.count()));
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) return false;
    }
    ssize_t n = ::recv(fd, data, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= size_t(n);
  }
  return true;
}

bool read_message(int fd, json& message, int timeout_ms) {
  uint64_t size = 0;
  if (!read_all(fd, reinterpret_cast<char*>(&size), sizeof size, timeout_ms)) return false;
  if (size > (uint64_t(1) << 32)) return false;
  std::string text(size, '\0');
  if (!read_all(fd, text.data(), text.size(), timeout_ms)) return false;
  message = json::parse(text, nullptr, false);
  return !message.is_discarded();
}

// The app's environment less what would load coex into the analysis process too.
std::vector<std::string> child_environment() {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string entry = *e;
    if (entry.rfind("LD_PRELOAD=", 0) == 0 || entry.rfind("OPENCL_LAYERS=", 0) == 0) continue;
    env.push_back(entry);
  }
  return env;
}

void end_locked(State& s) {
  if (s.fd >= 0) ::close(s.fd);
  s.fd = -1;
  if (s.pid > 0) {
    ::kill(s.pid, SIGKILL);
    ::waitpid(s.pid, nullptr, 0);
  }
  s.pid = -1;
}

bool spawn_locked(State& s) {
  int ends[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0) return false;
  // The child's end moves to kServedFd in the child; kept above it here, so that dup2 always copies it
  // (a dup2 onto itself would leave FD_CLOEXEC set and close it at exec).
  int child_end = ::fcntl(ends[1], F_DUPFD_CLOEXEC, kServedFd + 1);
  ::close(ends[1]);
  if (child_end < 0) {
    ::close(ends[0]);
    return false;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);  // stderr stays the app's
  posix_spawn_file_actions_adddup2(&actions, child_end, kServedFd);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int signal : {SIGPIPE, SIGINT, SIGTERM, SIGCHLD}) sigaddset(&defaults, signal);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::string executable = s.executable;
  std::string command = kCommand;
  std::vector<char*> argv{executable.data(), command.data(), nullptr};
  std::vector<std::string> env = child_environment();
  std::vector<char*> envp;
  for (std::string& entry : env) envp.push_back(entry.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  const int err = ::posix_spawn(&pid, executable.c_str(), &actions, &attributes, argv.data(), envp.data());
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  ::close(child_end);
  if (err != 0) {
    ::close(ends[0]);
    return false;
  }
  s.fd = ends[0];
  s.pid = pid;
  ++s.starts;
  s.hello = false;
  return true;
}

bool start_locked(State& s) {
  if (s.fd >= 0) return true;
  if (s.executable.empty() || s.start_failed || s.starts >= kMostStarts) return false;
  if (!spawn_locked(s)) s.start_failed = true;
  return !s.start_failed;
}

// Waits for the hello of a process just started. One that ends or stalls before it never ran an
// analysis: analyses go back to this process.
bool hello_locked(State& s) {
  if (s.hello) return true;
  json hello;
  if (!read_message(s.fd, hello, kHelloTimeoutMs) || !hello.is_object()) {
    end_locked(s);
    s.start_failed = true;
    return false;
  }
  s.hello = true;
  s.libclang_ok = hello.value("libclang", false);
  s.libclang_why = hello.value("why", std::string());
  return true;
}

}  // namespace

std::string find_executable() {
  Dl_info info{};
  if (!::dladdr(reinterpret_cast<void*>(&find_executable), &info) || !info.dli_fname) return {};
  std::string self = info.dli_fname;
  const size_t slash = self.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : self.substr(0, slash);
  for (const std::string& candidate : {dir + "/coex", dir + "/" COEX_LAUNCHER_DIR_FROM_LAYER "/coex"})
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  return {};
}

void set_executable(const std::string& path) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  end_locked(s);
  s.executable = path;
  s.starts = 0;
  s.start_failed = false;
  s.hello = false;
}

bool start() {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return start_locked(s);
}

std::optional<bool> libclang_loaded(std::string* why_not) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.hello && (!start_locked(s) || !hello_locked(s))) return std::nullopt;
  if (!s.libclang_ok && why_not) *why_not = s.libclang_why;
  return s.libclang_ok;
}

std::optional<ProgramInfo> analyze(const std::string& source, const std::string& build_options) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!start_locked(s) || !hello_locked(s)) return std::nullopt;
  ProgramInfo info;
  json answer;
  if (!write_message(s.fd, {{"source", source}, {"options", build_options}}) ||
      !read_message(s.fd, answer, kAnswerTimeoutMs)) {
    // libclang crashed or hung on this program: it is not split; the next analysis starts anew.
    end_locked(s);
    info.parse_error = "the analysis process (" + s.executable + " " + kCommand + ") ended or stalled on this program";
    return info;
  }
  std::string why;
  if (!program_info_from_json(answer, info, &why)) {
    info = ProgramInfo{};
    info.parse_error = why;
  }
  return info;
}

int serve(int fd) {
  std::string why;
  const bool loaded = libclang::load(&why);
  if (!write_message(fd, {{"libclang", loaded}, {"why", why}})) return 0;
  json request;
  while (read_message(fd, request, -1)) {
    ProgramInfo info;
    try {
      info = analyze_program(request.at("source").get<std::string>(), request.at("options").get<std::string>());
    } catch (const std::exception& e) {
      info = ProgramInfo{};
      info.parse_error = std::string("analysis failed: ") + e.what();
    }
    if (!write_message(fd, program_info_to_json(info))) break;
  }
  return 0;
}

}  // namespace coex::kernel::analysis_process
