#include "kernel/analysis_process.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "kernel/analysis_codec.h"
#include "kernel/build_id.h"
#include "kernel/child_process.h"
#include "kernel/libclang_api.h"

namespace coex::kernel::analysis_process {

namespace {

using nlohmann::json;

// libclang's load is 15 to 25 ms; a slow start (a loaded machine) gets far more. An analysis takes
// tens of milliseconds; one that has not answered in a minute is taken as stuck.
constexpr int kHelloTimeoutMs = 10000;
constexpr int kAnswerTimeoutMs = 60000;
constexpr int kDetachTimeoutMs = 5000;
constexpr const char* kAtExit = "the app began to exit before the analysis ended";  // stop_for_exit's
constexpr int kMostStarts = 3;  // a process that keeps ending is not started again and again

// The socket and its process, under `mutex` (held across a request and its answer: one at a time).
// What the first hello said is kept apart, under `status_mutex`, so that the first launch's notice
// does not wait for an analysis under way.
struct State {
  std::mutex mutex;
  std::string executable;
  int fd = -1;
  bool hello_read = false;  // the process on `fd` said hello
  int starts = 0;
  bool start_failed = false;  // no hello ever came: analyses stay in this process
  std::mutex status_mutex;
  bool started = false;  // some analysis process was started (its hello may not have come yet)
  bool said = false;     // some analysis process said hello (analyses never come back to this process)
  bool libclang_ok = false;
  std::string libclang_why;
  std::string served_build;  // the build ID the last hello gave: "" for none (kernel/build_id.h)
  // stop_for_exit's: `fd` as it is open (set and cleared with it), which the exit shuts down to end a
  // read under way; no process is started nor analysis made after it.
  int live_fd = -1;
  bool exiting = false;
  bool adopted = false;  // the process was started by `coex run` (adopt_inherited)
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

bool write_frame(int fd, const std::string& bytes) {
  const uint64_t size = bytes.size();
  return write_all(fd, reinterpret_cast<const char*>(&size), sizeof size) && write_all(fd, bytes.data(), bytes.size());
}

bool write_message(int fd, const json& message) { return write_frame(fd, message.dump()); }

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

bool read_frame(int fd, std::string& bytes, int timeout_ms) {
  uint64_t size = 0;
  if (!read_all(fd, reinterpret_cast<char*>(&size), sizeof size, timeout_ms)) return false;
  if (size > (uint64_t(1) << 32)) return false;
  bytes.assign(size, '\0');
  return read_all(fd, bytes.data(), bytes.size(), timeout_ms);
}

bool read_message(int fd, json& message, int timeout_ms) {
  std::string text;
  if (!read_frame(fd, text, timeout_ms)) return false;
  message = json::parse(text, nullptr, false);
  return !message.is_discarded();
}

// Closing the socket ends the analysis process: it watches for that even while it parses (serve()).
void end_locked(State& s) {
  {
    std::lock_guard status(s.status_mutex);
    s.live_fd = -1;
  }
  if (s.fd >= 0) ::close(s.fd);
  s.fd = -1;
}

bool exiting(State& s) {
  std::lock_guard status(s.status_mutex);
  return s.exiting;
}

// The process started is the launcher's `analysis-process`, which forks once and exits (so that it
// is reaped here at once): the process that serves is not the app's child (an app that waits for all
// its children, or reaps whatever ends, never meets it), and in a session of its own it gets no
// Ctrl-C from the app's terminal. Waited for kDetachTimeoutMs at most.
bool reaped(pid_t pid) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kDetachTimeoutMs);
  for (;;) {
    const pid_t r = ::waitpid(pid, nullptr, WNOHANG);
    if (r == pid || (r < 0 && errno == ECHILD)) return true;  // ECHILD: the app reaps its children itself
    if (r < 0 && errno != EINTR) return false;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

// A socket for an analysis process: this process's end (close-on-exec), and the child's, which moves
// to kServedFd there and is kept above it here, so that dup2 always copies it (a dup2 onto itself
// would leave FD_CLOEXEC set and close it at exec). False when none could be made.
bool served_socket(int& own_end, int& child_end) {
  int ends[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0) return false;
  child_end = ::fcntl(ends[1], F_DUPFD_CLOEXEC, kServedFd + 1);
  ::close(ends[1]);
  if (child_end < 0) {
    ::close(ends[0]);
    return false;
  }
  own_end = ends[0];
  return true;
}

// Starts `executable`'s analysis process; the other end of its socket (close-on-exec), or -1.
// `extra_env`: entries added to the app's environment there.
int spawn_served(const std::string& executable_path, const std::vector<std::string>& extra_env = {}) {
  int own_end = -1, child_end = -1;
  if (!served_socket(own_end, child_end)) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);  // stderr stays the app's
  posix_spawn_file_actions_adddup2(&actions, child_end, kServedFd);
  const pid_t pid = child_process::spawn(executable_path, {kCommand}, actions, kServedFd, extra_env);
  posix_spawn_file_actions_destroy(&actions);
  ::close(child_end);
  if (pid < 0 || !reaped(pid)) {
    if (pid >= 0 && ::kill(pid, SIGKILL) == 0) ::waitpid(pid, nullptr, 0);  // not reaped yet: still ours
    ::close(own_end);
    return -1;
  }
  return own_end;
}

// `coex run`'s start (start_for_exec: the launcher, one thread, about to exec the app): forked twice,
// so that the analysis process is never the app's child, and the launcher waits for the middle
// process's fork alone, not for `coex analysis-process` to start (spawn_served's wait: about 4 ms
// of `coex run -- true`'s 18 on the development machine). The process serves as it starts
// (kDetachedVar), in a session of its own (kernel/child_process.h). The other end of its socket
// (close-on-exec), or -1.
int spawn_detached(const std::string& executable_path, const std::vector<std::string>& extra_env) {
  int own_end = -1, child_end = -1;
  if (!served_socket(own_end, child_end)) return -1;
  std::vector<std::string> env = extra_env;
  env.push_back(std::string(kDetachedVar) + "=1");
  const bool forked = child_process::fork_apart(executable_path, {kCommand}, env, child_end, kServedFd);
  ::close(child_end);
  if (!forked) {
    ::close(own_end);
    return -1;
  }
  return own_end;
}

// Takes `fd`, the socket of an analysis process that has not said hello yet, as this process's.
void use_socket_locked(State& s, int fd) {
  s.fd = fd;
  {
    std::lock_guard status(s.status_mutex);
    s.live_fd = s.fd;
    // The exit began while this process started (the start waits for the launcher's own exit, up to
    // kDetachTimeoutMs): stop_for_exit found no socket to shut down, so it is done here.
    if (s.exiting) ::shutdown(s.fd, SHUT_RDWR);
  }
  s.hello_read = false;
  ++s.starts;
}

bool spawn_locked(State& s) {
  const int fd = spawn_served(s.executable);
  if (fd < 0) return false;
  use_socket_locked(s, fd);
  std::lock_guard status(s.status_mutex);
  s.adopted = false;  // the analyses are this one's from now on
  return true;
}

// A process forked from the app's (without exec) must not share the socket with it: it starts its own.
void forget_in_forked_child() {
  State& s = state();
  new (&s.mutex) std::mutex;  // another thread may have held it at the fork
  new (&s.status_mutex) std::mutex;
  if (s.fd >= 0) ::close(s.fd);
  s.fd = -1;
  s.live_fd = -1;
  s.starts = 0;
  s.started = false;
  s.adopted = false;
}

void forget_in_forked_children() {
  static std::once_flag at_fork;
  std::call_once(at_fork, [] { ::pthread_atfork(nullptr, nullptr, forget_in_forked_child); });
}

bool start_locked(State& s) {
  if (s.fd >= 0) return true;
  if (s.executable.empty() || s.start_failed || s.starts >= kMostStarts || exiting(s)) return false;
  forget_in_forked_children();
  const bool spawned = spawn_locked(s);
  std::lock_guard status(s.status_mutex);
  if (spawned) s.started = true;
  if (!spawned && !s.said) s.start_failed = true;
  return spawned;
}

bool said_hello(State& s) {
  std::lock_guard status(s.status_mutex);
  return s.said;
}

// Reads the hello of a process just started (s.fd open). False when it ends or stalls first: the
// socket is closed; before any process ever said hello, analyses then stay in this process.
bool hello_locked(State& s) {
  json hello;
  if (!read_message(s.fd, hello, kHelloTimeoutMs) || !hello.is_object()) {
    end_locked(s);
    std::lock_guard status(s.status_mutex);
    if (!s.said) s.start_failed = true;
    s.adopted = false;
    return false;
  }
  s.hello_read = true;
  std::lock_guard status(s.status_mutex);
  const json* build = hello.contains("build") && hello["build"].is_string() ? &hello["build"] : nullptr;
  s.served_build = build ? build->get<std::string>() : "";
  if (!s.said) {
    s.said = true;
    s.libclang_ok = hello.value("libclang", false);
    s.libclang_why = hello.value("why", std::string());
  }
  return true;
}

// A process that runs and has said hello; one is started when none runs (kMostStarts in all).
bool ready_locked(State& s) {
  if (s.fd < 0 && !start_locked(s)) return false;
  return s.hello_read || hello_locked(s);
}

ProgramInfo unanalysed(const std::string& why) {
  ProgramInfo info;
  info.parse_error = why;
  return info;
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
  std::lock_guard status(s.status_mutex);
  s.start_failed = false;  // written with both locks held: libclang_status reads it under status_mutex
  s.started = false;
  s.said = false;
  s.adopted = false;
}

std::string start_for_exec(const std::string& executable) {
  // Whatever inherited socket this process holds (a `coex run` under another's app) is closed: its
  // analysis process would wait for the ones holding it.
  adopt_inherited();
  const int spawned = spawn_detached(executable, {std::string(kForProcessVar) + "=" + std::to_string(::getpid())});
  // Not at 0, 1 or 2 (a launcher started with one of them closed): the app would read it as a stream.
  const int fd = spawned < 0 ? -1 : ::fcntl(spawned, F_DUPFD, kServedFd);
  if (spawned >= 0) ::close(spawned);
  struct stat socket {};
  if (fd < 0 || ::fstat(fd, &socket) != 0) {
    if (fd >= 0) ::close(fd);
    return {};
  }
  return std::to_string(fd) + ":" + std::to_string(uint64_t(socket.st_ino)) + ":" + std::to_string(::getpid());
}

bool adopt_inherited() {
  const char* value = std::getenv(kInheritedVar);
  if (!value) return false;
  // "fd:inode:pid", three decimal numbers.
  uint64_t fields[3] = {};
  const char* at = value;
  for (int i = 0; i < 3; ++i) {
    char* end = nullptr;
    errno = 0;
    fields[i] = std::strtoull(at, &end, 10);
    if (end == at || errno != 0 || *end != (i < 2 ? ':' : '\0') || !std::isdigit(static_cast<unsigned char>(*at)))
      return false;
    at = end + 1;
  }
  if (fields[0] > uint64_t(INT_MAX) || fields[2] > uint64_t(INT_MAX)) return false;
  const int fd = int(fields[0]);
  State& s = state();
  std::lock_guard lock(s.mutex);
  // Only the socket the launcher made: the app may have closed that descriptor and opened another.
  struct stat socket {};
  if (::fstat(fd, &socket) != 0 || !S_ISSOCK(socket.st_mode) || uint64_t(socket.st_ino) != fields[1]) return false;
  const long pid = long(fields[2]);
  // Another process than the one `coex run` started (a child of a shell script it ran) inherited it:
  // closed here, so that the analysis process ends with the processes that hold it. Closed as well
  // where no analysis process is wanted, or one runs already.
  if (pid != long(::getpid()) || s.executable.empty() || s.fd >= 0 || exiting(s)) {
    ::close(fd);
    return false;
  }
  ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  forget_in_forked_children();
  use_socket_locked(s, fd);
  std::lock_guard status(s.status_mutex);
  s.started = true;
  s.adopted = true;
  return true;
}

bool started_by_launcher() {
  State& s = state();
  std::lock_guard status(s.status_mutex);
  return s.adopted;
}

bool start() {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return start_locked(s);
}

std::optional<bool> libclang_loaded(std::string* why_not) {
  State& s = state();
  if (!said_hello(s)) {
    // No hello yet: an analysis under way holds the lock while it waits for the hello, and then for
    // its answer (what libclang_status does not wait for).
    std::lock_guard lock(s.mutex);
    if (!said_hello(s) && !ready_locked(s)) return std::nullopt;
  }
  std::lock_guard status(s.status_mutex);
  if (!s.libclang_ok && why_not) *why_not = s.libclang_why;
  return s.libclang_ok;
}

LibclangStatus libclang_status(std::string* why_not) {
  State& s = state();
  std::lock_guard status(s.status_mutex);
  if (!s.said) return s.started && !s.start_failed ? LibclangStatus::not_said_yet : LibclangStatus::none_runs;
  if (s.libclang_ok) return LibclangStatus::loaded;
  if (why_not) *why_not = s.libclang_why;
  return LibclangStatus::missing;
}

std::string served_build() {
  State& s = state();
  std::lock_guard status(s.status_mutex);
  return s.served_build;
}

void stop_for_exit() {
  State& s = state();
  std::lock_guard status(s.status_mutex);
  s.exiting = true;
  if (s.live_fd >= 0) ::shutdown(s.live_fd, SHUT_RDWR);  // the fd stays open: end_locked closes it
}

std::optional<ProgramInfo> analyze(const std::string& source, const std::string& build_options) {
  State& s = state();
  if (exiting(s)) return unanalysed(kAtExit);
  std::lock_guard lock(s.mutex);
  try {
    // A process ended while idle (the socket says so only at the request): one new start, then the
    // request again.
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (!ready_locked(s)) {
        if (exiting(s)) return unanalysed(kAtExit);  // not in this process either
        // Once some process has analysed here, a program never comes back to this process: what
        // ended the others (libclang crashing on the app's programs) would end the app.
        if (!said_hello(s)) return std::nullopt;
        return unanalysed("no analysis process could be started again (" + s.executable + " " + kCommand + ")");
      }
      // The source and options go as bytes (frames of their own, not JSON strings): a source need not
      // be UTF-8 (a Latin-1 comment).
      if (write_frame(s.fd, source) && write_frame(s.fd, build_options)) break;
      end_locked(s);
      if (attempt == 1) return unanalysed("the analysis process could not be sent the program");
    }
    json answer;
    if (!read_message(s.fd, answer, kAnswerTimeoutMs)) {
      // libclang crashed or hung on this program: it is not split; the next analysis starts anew.
      end_locked(s);
      if (exiting(s)) return unanalysed(kAtExit);
      return unanalysed("the analysis process (" + s.executable + " " + kCommand +
                        ") ended or stalled on this program");
    }
    ProgramInfo info;
    std::string why;
    if (!program_info_from_json(answer, info, &why)) return unanalysed(why);
    return info;
  } catch (const std::exception& e) {
    end_locked(s);
    return unanalysed(std::string("the analysis process failed: ") + e.what());
  }
}

namespace {

// A descriptor that turns readable when the app's process ends (kForProcessVar, for a process `coex
// run` started), or -1: pidfd_open (Linux 5.3) refers to the process across its exec.
int app_process_watch() {
  errno = 0;
  const char* pid = std::getenv(kForProcessVar);
  if (!pid || !std::isdigit(static_cast<unsigned char>(*pid))) return -1;
#ifdef SYS_pidfd_open
  return int(::syscall(SYS_pidfd_open, std::atoi(pid), 0));
#else
  return -1;
#endif
}

// Waits for a request on `fd`; false when the app's process ended first (`app`, -1 for none).
bool request_comes(int fd, int app) {
  for (;;) {
    pollfd p[2] = {{fd, POLLIN, 0}, {app, POLLIN, 0}};
    const int ready = ::poll(p, app >= 0 ? 2 : 1, -1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0 || p[0].revents) return true;  // a request, or the end of the socket: read_frame says
    if (p[1].revents) return false;
  }
}

// The analysis of one program as the text to send, made on a thread of its own while this one
// watches the socket: the app sends nothing until it has the answer, so a socket that turns readable
// meanwhile has been closed (the app ended, or gave up waiting), and the process ends at once, even
// with libclang stuck in a parse. So does the end of the app's process (`app`, -1 for none).
std::string analysis_while_watching(int fd, int app, const std::string& source, const std::string& options) {
  int done[2];
  if (::pipe2(done, O_CLOEXEC) != 0) ::_exit(1);
  std::string text;
  std::thread worker([&] {
    try {
      text = program_info_to_json(analyze_program(source, options)).dump();
    } catch (const std::exception& e) {
      // dump() refuses strings that are not UTF-8: such a program is not split.
      text = program_info_to_json(unanalysed(std::string("the analysis could not be sent back: ") + e.what())).dump();
    }
    const char byte = 0;
    while (::write(done[1], &byte, 1) < 0 && errno == EINTR) {
    }
  });
  for (;;) {
    pollfd p[3] = {{fd, POLLIN, 0}, {done[0], POLLIN, 0}, {app, POLLIN, 0}};
    const int ready = ::poll(p, app >= 0 ? 3 : 2, -1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0 || p[0].revents || p[2].revents) ::_exit(0);
    if (p[1].revents) break;
  }
  worker.join();
  ::close(done[0]);
  ::close(done[1]);
  return text;
}

}  // namespace

int serve(int fd, std::chrono::milliseconds load_delay, int app) {
  std::this_thread::sleep_for(load_delay);
  std::string why;
  const bool loaded = libclang::load(&why);
  if (!write_message(fd, {{"libclang", loaded}, {"why", why}, {"build", own_build_id()}})) return 0;
  std::string source, options;
  while (request_comes(fd, app) && read_frame(fd, source, -1) && read_frame(fd, options, -1))
    if (!write_frame(fd, analysis_while_watching(fd, app, source, options))) break;
  return 0;
}

int detach_and_serve(std::chrono::milliseconds load_delay) {
  // The app's process, the launcher's until its exec. Started by spawn_detached, which does not wait
  // for it, this process may find it gone already; its ID taken by another process meanwhile (the app
  // ended within this process's start) would be watched instead, and the end of the socket still
  // ends this one.
  const int app = app_process_watch();
  if (app < 0 && errno == ESRCH) return 0;                                  // the app is gone already
  if (std::getenv(kDetachedVar)) return serve(kServedFd, load_delay, app);  // forked apart already
  const pid_t served_by = ::fork();
  if (served_by != 0) return served_by > 0 ? 0 : 1;  // the app's process reaps this one at once
  ::setsid();
  return serve(kServedFd, load_delay, app);
}

}  // namespace coex::kernel::analysis_process
