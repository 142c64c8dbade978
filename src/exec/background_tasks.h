// Work coex does on a device's worker thread off the app's path (docs/design.md, "One-time costs"):
// builds, the analysis, contexts.
#pragma once

#include <functional>

namespace coex::exec {

class Executor;
class Services;

// On `device`'s worker thread, unless the process has begun to exit (then skipped: the driver's
// compiler may be half torn down by then; PoCL's clang crashed in FileSystemStatCache::get when an app
// exited while coex still built for its other device) or the device sits out. coex's shutdown
// (Executor::stop) waits for a task under way. The app's thread arms the exit guard, so that the
// shutdown runs before the compiler's statics made during a build are destroyed (exec/exit_guard.h).
// `uses_device` false: a task that only uses the worker's thread (the analysis, libclang's load) runs
// even while the device sits out, since launches wait for it.
void post_background_task(Executor& executor, int device, std::function<void()> task, bool uses_device = true);

// Makes the device's shadow context and queue on its worker (post_background_task), where none was
// made yet: a GPU's takes a large part of its preparation, and the trace shows it ("context").
void make_context_in_background(Services& services, int device);

}  // namespace coex::exec
