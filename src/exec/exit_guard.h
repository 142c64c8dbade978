// When coex's one shutdown (api::Runtime::shutdown, docs/design.md "Exit") runs at exit: before
// anything coex's threads use is torn down.
//
// A process exits while coex's threads may still be in a driver: a background build (auto prepares
// off the app's path, docs/design.md "One-time costs") or a sub-launch a device was taken over in.
// The driver's compiler constructs some of its statics lazily, in the first build or compile, on
// coex's thread, so their destructors are registered after any atexit handler coex registered
// before it: at exit they ran first, under the build still going (PoCL 5's clang called a pure
// virtual method of its destroyed option table, in nearly every first run of the test apps under
// auto with the H100 as home). glibc's exit runs the exiting thread's thread_local destructors
// before every atexit handler and static destructor (stdlib/exit.c, __run_exit_handlers), so a
// thread_local guard on the app's main thread runs the waits first.
#pragma once

namespace coex::exec {

using ExitWait = void (*)();

// Adds a wait that runs once at exit (each kind is kept once; a wait must end): coex's shutdown. On
// the main thread the guard runs it before every atexit handler; for an exit from another thread,
// each call also registers an atexit handler, which runs before the teardown of what was loaded
// until then (call it again once more libraries are loaded).
void register_exit_wait(ExitWait wait);

// Called on the app's threads where coex may start background work: arms the guard on this thread.
// It waits only on the main thread (whose thread_local destructors run at exit, not at a thread's
// end; a main thread that calls pthread_exit runs them too, and coex builds nothing after); an exit
// from another thread falls back on the atexit handlers.
void arm_exit_guard();

// Whether the waits have begun (or the shutdown ran without them, begin_exit): work not yet started
// is skipped from then on, and launches are no longer split.
bool exit_begun();
void begin_exit();
// Whether coex's shutdown has looked for devices still in a sub-launch they were taken over in
// (Executor::stop): COEX_FAULT=late_start holds its sub-launch until then, so that the wait at exit
// is always there to be tested (a tiny sub-launch begun at exit_begun could end before the look).
bool busy_devices_checked();
void note_busy_devices_checked();

// Runs the registered waits (from the guard, or the atexit handlers); the first call runs them,
// later ones return at once.
void run_exit_waits();

}  // namespace coex::exec
