#include "kernel/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

extern char** environ;

namespace coex::kernel::child_process {
namespace {

// The words and the environment of the process, made before it starts: after a fork only calls safe
// there may run.
struct ChildCommand {
  std::vector<std::string> words, env;
  std::vector<char*> argv, envp;

  ChildCommand(const std::string& executable, const std::vector<std::string>& args,
               const std::vector<std::string>& extra_env)
      : words{executable} {
    words.insert(words.end(), args.begin(), args.end());
    for (char** e = environ; e && *e; ++e) {
      const std::string entry = *e;
      if (entry.rfind("LD_PRELOAD=", 0) == 0 || entry.rfind("OPENCL_LAYERS=", 0) == 0) continue;
      env.push_back(entry);
    }
    env.insert(env.end(), extra_env.begin(), extra_env.end());
    for (std::string& word : words) argv.push_back(word.data());
    argv.push_back(nullptr);
    for (std::string& entry : env) envp.push_back(entry.data());
    envp.push_back(nullptr);
  }
  ChildCommand(const ChildCommand&) = delete;  // argv and envp point into words and env
  ChildCommand& operator=(const ChildCommand&) = delete;
};

constexpr int kDefaultSignals[] = {SIGPIPE, SIGINT, SIGTERM, SIGCHLD, SIGHUP};

}  // namespace

pid_t spawn(const std::string& executable, const std::vector<std::string>& args, posix_spawn_file_actions_t& actions,
            int keep_up_to, const std::vector<std::string>& extra_env) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
  posix_spawn_file_actions_addclosefrom_np(&actions, keep_up_to + 1);
#else
  (void)keep_up_to;
#endif
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int signal : kDefaultSignals) sigaddset(&defaults, signal);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  ChildCommand command(executable, args, extra_env);
  pid_t pid = -1;
  const int err =
      ::posix_spawn(&pid, executable.c_str(), &actions, &attributes, command.argv.data(), command.envp.data());
  posix_spawnattr_destroy(&attributes);
  return err == 0 ? pid : -1;
}

bool fork_apart(const std::string& executable, const std::vector<std::string>& args,
                const std::vector<std::string>& extra_env, int fd, int at) {
  ChildCommand command(executable, args, extra_env);
  sigset_t none;
  sigemptyset(&none);
  struct sigaction default_handling {};
  default_handling.sa_handler = SIG_DFL;
  const pid_t middle = ::fork();
  if (middle == 0) {
    // Only calls safe after a fork from here on.
    if (::fork() == 0) {
      ::setsid();
      const int in = ::open("/dev/null", O_RDONLY);
      if (in > 0) {
        ::dup2(in, 0);
        ::close(in);
      }
      const int out = ::open("/dev/null", O_WRONLY);
      if (out > 1) {
        ::dup2(out, 1);
        ::close(out);
      }
      ::dup2(fd, at);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
      ::closefrom(at + 1);
#else
      for (int other = at + 1; other < 1024; ++other) ::close(other);
#endif
      for (int signal : kDefaultSignals) ::sigaction(signal, &default_handling, nullptr);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);
      ::execve(command.argv[0], command.argv.data(), command.envp.data());
      ::_exit(127);
    }
    ::_exit(0);
  }
  if (middle < 0) return false;
  while (::waitpid(middle, nullptr, 0) < 0 && errno == EINTR) {
  }
  return true;
}

#if defined(SYS_pidfd_open) && defined(SYS_pidfd_send_signal)
#ifndef P_PIDFD
#define P_PIDFD 3  // <linux/wait.h>'s, which glibc before 2.36 does not give
#endif
#define COEX_HAS_PIDFD 1
#endif

namespace {

#ifdef COEX_HAS_PIDFD
// waitid by a pidfd (Linux 5.4) came a release after pidfd_open (5.3): a kernel between the two gives
// a pidfd whose waits fail with EINVAL; and a filter of system calls may allow one call and not the
// other. Asked once, of this process's own pidfd: a wait finds no child (ECHILD), signal 0 is sent.
bool works_by_pidfd() {
  static const bool works = [] {
    const int self = int(::syscall(SYS_pidfd_open, ::getpid(), 0));
    if (self < 0) return false;
    siginfo_t info{};
    const bool waits = ::waitid(idtype_t(P_PIDFD), id_t(self), &info, WEXITED | WNOHANG) != 0 && errno == ECHILD;
    const bool signals = ::syscall(SYS_pidfd_send_signal, self, 0, nullptr, 0) == 0;
    ::close(self);
    return waits && signals;
  }();
  return works;
}
#endif

// waitid on the child: by its pidfd where it has one, else by its ID.
int wait_for(const Child& child, siginfo_t& info, int options) {
  info = {};
  const idtype_t type = child.pidfd >= 0 ? idtype_t(P_PIDFD) : P_PID;
  const id_t id = child.pidfd >= 0 ? id_t(child.pidfd) : id_t(child.pid);
  int result;
  while ((result = ::waitid(type, id, &info, options)) != 0 && errno == EINTR) {
  }
  return result;
}

}  // namespace

int open_pidfd(pid_t pid) {
#ifdef COEX_HAS_PIDFD
  if (pid > 0 && works_by_pidfd()) return int(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
#endif
  return -1;
}

bool runs(const Child& child) {
  if (child.pid <= 0) return false;
  siginfo_t info{};
  return wait_for(child, info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == 0;
}

bool signal_if_running(const Child& child, int signal) {
  if (!runs(child)) return false;
#ifdef COEX_HAS_PIDFD
  if (child.pidfd >= 0) return ::syscall(SYS_pidfd_send_signal, child.pidfd, signal, nullptr, 0) == 0;
#endif
  return ::kill(child.pid, signal) == 0;
}

pid_t reap(const Child& child, bool no_hang, bool* exited_zero) {
  if (exited_zero) *exited_zero = false;
  if (child.pid <= 0) return -1;
  siginfo_t info{};
  if (wait_for(child, info, WEXITED | (no_hang ? WNOHANG : 0)) != 0) return -1;
  if (info.si_pid == 0) return 0;
  if (exited_zero) *exited_zero = info.si_code == CLD_EXITED && info.si_status == 0;
  return child.pid;
}

void release(Child& child) {
  if (child.pidfd >= 0) ::close(child.pidfd);
  child = {};
}

}  // namespace coex::kernel::child_process
