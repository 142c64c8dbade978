// Where and when coex's compile-ahead processes run (exec/compile_ahead.h): the cores the PoCL CPU
// devices in use leave them, and what the settings `compile_ahead_start` and `compile_ahead_rewrite`
// make of that. compile_ahead.h declares the rest of what is defined here.
#pragma once

#include "exec/services.h"

namespace coex::exec::compile_ahead {

// The cores the PoCL CPU devices in use leave free (`cores_of_devices`, their compute units).
unsigned cores_left(unsigned cores, unsigned cores_of_devices);

// The compute units of the PoCL CPU devices in use: the cores they run on.
unsigned cores_of_pocl_cpu_devices(Services& services);

// Whether a core is left that no PoCL CPU device in use runs on (their compute units).
bool spare_core(Services& services);

// Whether a program's process starts at the app's clBuildProgram (`compile_ahead_start`): under `auto`
// where a core is left that no PoCL CPU device in use runs on, so that the process takes none from them.
bool starts_at_build(Services& services);

// Whether a rewritten program gets a process for its rewrite (`compile_ahead_rewrite`, serve_rewrite):
// with compile_ahead on, under auto, its process started at the build, home a PoCL CPU device of this
// machine and PoCL's cache found; then under `auto` where a PoCL CPU device of this machine of another
// kind than home's takes part (a remote one compiles on its server).
bool rewrite_served(Services& services, int home);

}  // namespace coex::exec::compile_ahead
