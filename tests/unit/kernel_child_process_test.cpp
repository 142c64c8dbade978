// kernel/child_process.h's hold on a child: by its pidfd, a signal or a wait reaches that process
// alone, never another that has its ID once the app reaped it.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "kernel/child_process.h"

namespace coex::kernel::child_process {
namespace {

Child start(const std::vector<std::string>& command) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const std::vector<std::string> args(command.begin() + 1, command.end());
  const pid_t pid = spawn(command.front(), args, actions, 2);
  posix_spawn_file_actions_destroy(&actions);
  return {pid, open_pidfd(pid)};
}

// Waits until the child has ended, leaving it unreaped.
void wait_until_ended(const Child& child) {
  siginfo_t info{};
  while (::waitid(P_PID, id_t(child.pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR) {
  }
}

TEST(ChildProcess, ARunningChildIsKilledAndReaped) {
  Child child = start({"/bin/sleep", "30"});
  ASSERT_GT(child.pid, 0);
  EXPECT_TRUE(runs(child));
  EXPECT_EQ(reap(child, true), 0);  // still running
  EXPECT_TRUE(signal_if_running(child, SIGKILL));
  bool exited_zero = true;
  EXPECT_EQ(reap(child, false, &exited_zero), child.pid);
  EXPECT_FALSE(exited_zero);
  EXPECT_FALSE(runs(child));
  EXPECT_EQ(reap(child, true), -1);  // reaped: no longer this process's child
  release(child);
  EXPECT_EQ(child.pidfd, -1);
}

TEST(ChildProcess, TellsHowItExited) {
  for (const auto& [command, zero] : {std::pair<const char*, bool>{"/bin/true", true}, {"/bin/false", false}}) {
    Child child = start({command});
    ASSERT_GT(child.pid, 0) << command;
    wait_until_ended(child);
    EXPECT_FALSE(signal_if_running(child, SIGKILL)) << command;  // ended: not signalled
    bool exited_zero = !zero;
    EXPECT_EQ(reap(child, false, &exited_zero), child.pid) << command;
    EXPECT_EQ(exited_zero, zero) << command;
    release(child);
  }
}

// The app reaped coex's child (an app that waits for any child), and the system gave its ID to
// another child of the app: by the pidfd, that one is neither signalled nor reaped. The other's ID
// stands in for the reused one (the system cannot be made to reuse an ID here).
TEST(ChildProcess, OneTheAppReapedLeavesTheProcessWithItsIdAlone) {
  Child coex_child = start({"/bin/true"});
  ASSERT_GT(coex_child.pid, 0);
  if (coex_child.pidfd < 0) GTEST_SKIP() << "no pidfd waits on this kernel (Linux 5.4)";
  wait_until_ended(coex_child);
  ASSERT_EQ(::waitpid(coex_child.pid, nullptr, 0), coex_child.pid);  // the app reaps it
  Child apps_child = start({"/bin/sleep", "30"});
  ASSERT_GT(apps_child.pid, 0);
  const Child reused{apps_child.pid, coex_child.pidfd};
  EXPECT_FALSE(runs(reused));
  EXPECT_FALSE(signal_if_running(reused, SIGKILL));
  EXPECT_EQ(reap(reused, true), -1);
  EXPECT_EQ(reap(reused, false), -1);  // no wait either
  EXPECT_TRUE(runs(apps_child));       // untouched, still the app's to reap
  EXPECT_EQ(::waitpid(apps_child.pid, nullptr, WNOHANG), 0);
  ::kill(apps_child.pid, SIGKILL);
  ::waitpid(apps_child.pid, nullptr, 0);
  release(coex_child);
  release(apps_child);
}

}  // namespace
}  // namespace coex::kernel::child_process
