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

}  // namespace coex::kernel::child_process
