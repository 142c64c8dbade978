#include "kernel/helper_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>

extern char** environ;

namespace coex::kernel::helper_process {
namespace {

constexpr int kDetachTimeoutMs = 5000;

// The app's environment less what would load coex into the command too, with `extra` replacing it.
std::vector<std::string> child_environment(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  auto replaced = [&](const std::string& entry) {
    for (const std::string& e : extra)
      if (const size_t name = e.find('='); name != std::string::npos && entry.compare(0, name + 1, e, 0, name + 1) == 0)
        return true;
    return false;
  };
  for (char** e = environ; e && *e; ++e) {
    const std::string entry = *e;
    if (entry.rfind("LD_PRELOAD=", 0) == 0 || entry.rfind("OPENCL_LAYERS=", 0) == 0 || replaced(entry)) continue;
    env.push_back(entry);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

// The command's first process forks once and exits: waited for kDetachTimeoutMs at most.
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

}  // namespace

bool start(const std::string& executable, const std::string& command, const std::vector<std::string>& arguments, int fd,
           const std::vector<std::string>& environment, bool keep_stderr) {
  // Moved to kServedFd in the child; kept above it here, so that dup2 always copies it (a dup2 onto
  // itself would leave FD_CLOEXEC set and close it at exec).
  const int child_end = ::fcntl(fd, F_DUPFD_CLOEXEC, kServedFd + 1);
  if (child_end < 0) return false;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  if (!keep_stderr) posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, child_end, kServedFd);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
  // The app's descriptors without FD_CLOEXEC (a pipe to a child of its own) must not stay open there.
  posix_spawn_file_actions_addclosefrom_np(&actions, kServedFd + 1);
#endif
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int signal : {SIGPIPE, SIGINT, SIGTERM, SIGCHLD, SIGHUP, SIGALRM}) sigaddset(&defaults, signal);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<std::string> words{executable, command};
  words.insert(words.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  std::vector<std::string> env = child_environment(environment);
  std::vector<char*> envp;
  for (std::string& entry : env) envp.push_back(entry.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  const int err = ::posix_spawn(&pid, executable.c_str(), &actions, &attributes, argv.data(), envp.data());
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  ::close(child_end);
  if (err != 0) return false;
  if (!reaped(pid)) {
    if (::kill(pid, SIGKILL) == 0) ::waitpid(pid, nullptr, 0);  // not reaped yet: still ours
    return false;
  }
  return true;
}

}  // namespace coex::kernel::helper_process
