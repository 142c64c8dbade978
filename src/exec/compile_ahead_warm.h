// A `coex compile-ahead` process spawned at the app's clCreateContext, which sets PoCL up and makes
// the device's context while the app builds its program, then takes the request (a file's path, a
// line on its input) of the first program that starts a process at its clBuildProgram (docs/design.md, "Compiled ahead,
// in a process of its own", "Set up at clCreateContext"). Started at the build, a process spent PoCL's start and the
// build from PoCL's cache before any compile: 160 ms of benchmarks/slices' 469 ms over eight
// `cpu-minimal` devices on the device machine, while the launches ran on home.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "exec/services.h"

namespace coex::exec::compile_ahead::warm {

// At the app's clCreateContext, once a process: spawns `coex compile-ahead -` for `home`, where a
// program's process would start at its clBuildProgram on cores of its own (compile_ahead_start
// `context`, or `auto` with a core to spare), every device of `others` (those to build soon) is of
// home's kind, so that a request names no other kind, and no analysis was kept (a later run, whose
// PoCL cache likely holds what the process would compile). It is sent at once what sets PoCL up, and
// waits for the request until 5 s after its start (launcher/compile_ahead_command.cpp), then ends on
// its own (reaped by reap) or at the exit (stop).
void spawn_at_context(Services& services, int home, const std::vector<int>& others);

// What hand gives: the process's ID (-1: none taken) and this end of its standard input, now the
// caller's, and how long before it was spawned.
struct Handed {
  pid_t pid = -1;
  int pidfd = -1;  // kernel/child_process.h's, now the taker's to close
  int input = -1;
  double set_up_ms = 0;
};

// Hands the request file `request` (write_request's: the process reads it and removes it) to the
// process spawned at clCreateContext, where it was spawned for `home_index` of its platform with
// `per_target` processes, has not been handed one and waits still (within 4.5 s of its start).
Handed hand(int home_index, int per_target, const std::string& request);

// Reaps the process never handed a request where it has ended on its own (each compile-ahead
// process's look at those running calls it): an app that waits for its children does not find it.
void reap();

// At exit: a process never handed a request is ended, not waited for.
void stop();

}  // namespace coex::exec::compile_ahead::warm
