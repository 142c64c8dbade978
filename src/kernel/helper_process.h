// A command of the `coex` launcher started from libcoex.so to work beside the app: the analysis
// process (kernel/analysis_process.h) and PoCL's compiles at a nonzero offset
// (exec/compile_process.h). The command forks once and exits, so that it is reaped here at once: the
// process that works is not the app's child (an app that waits for all its children, or reaps
// whatever ends, never meets it), and in a session of its own it gets no Ctrl-C from the app's
// terminal.
#pragma once

#include <string>
#include <vector>

namespace coex::kernel::helper_process {

inline constexpr int kServedFd = 3;  // where the command finds the descriptor given to it

// Starts `executable command arguments...` with `fd` as its descriptor kServedFd, stdin and stdout
// (and stderr unless `keep_stderr`) on /dev/null, signals at their defaults, the app's other
// descriptors closed, and the app's environment less what would load coex into it too (LD_PRELOAD,
// OPENCL_LAYERS), `environment`'s "NAME=value" entries replacing the app's. Waits for the command's
// first process to exit (5 s at most). False when it could not start or did not exit.
bool start(const std::string& executable, const std::string& command, const std::vector<std::string>& arguments, int fd,
           const std::vector<std::string>& environment, bool keep_stderr);

}  // namespace coex::kernel::helper_process
