// Processes of coex's own, started from the app's process or the launcher (the analysis process,
// kernel/analysis_process.h; exec/compile_ahead.h's compiler): the app's environment less what would
// load coex there too (LD_PRELOAD, OPENCL_LAYERS), plus what the caller adds; no signal blocked,
// default handling of SIGPIPE, SIGINT, SIGTERM, SIGCHLD and SIGHUP whatever the app set; none of the
// app's descriptors above those the caller keeps (one without FD_CLOEXEC, a pipe to a child of the
// app's own, must not stay open there).
#pragma once

#include <spawn.h>
#include <sys/types.h>

#include <string>
#include <vector>

namespace coex::kernel::child_process {

// Starts `executable` with `args` after its own name, with `actions` (the caller's, for descriptors
// 0 to `keep_up_to`). The process ID, or -1.
pid_t spawn(const std::string& executable, const std::vector<std::string>& args, posix_spawn_file_actions_t& actions,
            int keep_up_to, const std::vector<std::string>& extra_env = {});

// Forks twice, from a process of one thread (the launcher, before it execs the app): the grandchild
// runs `executable` with `args` in a session of its own, /dev/null as its standard input and output
// (its standard error this process's), `fd` at descriptor `at` and nothing open above `at`. This
// process waits for the middle one alone, which forks and exits at once: the new process is never
// its child, nor the child of the program it execs next, and its start is not waited for. False when
// no fork was made.
bool fork_apart(const std::string& executable, const std::vector<std::string>& args,
                const std::vector<std::string>& extra_env, int fd, int at);

// A child started by spawn, held by a pidfd where the kernel gives one (pidfd_open, Linux 5.3; a wait
// by it, 5.4): a signal or a wait by the pidfd reaches that process alone, never another that the
// system gave its ID once the app reaped it (an app that waits for any child may reap coex's too).
// Without one (-1) they go by the ID, as before Linux 5.4. The pidfd is close-on-exec.
struct Child {
  pid_t pid = -1;
  int pidfd = -1;
};
// The pidfd of `pid`, just spawned; -1 where the kernel gives none, or waits and signals by one are
// not known to work (checked once), or the child is gone already. Opened after the spawn, it names
// the process that has the ID then: one that ended and was reaped by another thread of the app in
// that moment is not coex's (a compile-ahead process lives hundreds of milliseconds at least).
int open_pidfd(pid_t pid);
// Whether the child still runs (ended children are not reaped by the look).
bool runs(const Child& child);
// Sends `signal` while it runs; false where it has ended, or was reaped by the app.
bool signal_if_running(const Child& child, int signal);
// Reaps it (waiting, unless `no_hang`): its ID when reaped, with whether it exited with status 0 in
// `exited_zero`; 0 while it runs (`no_hang`); -1 where it is not this process's to reap (the app
// reaped it). Interrupted waits are made again.
pid_t reap(const Child& child, bool no_hang, bool* exited_zero = nullptr);
// Closes its pidfd, if any.
void release(Child& child);

}  // namespace coex::kernel::child_process
