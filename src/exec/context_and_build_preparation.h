// What coex prepares at the app's clCreateContext and clBuildProgram, before any launch, for the
// devices a split would take: their contexts, libclang's load, the program's analysis and its builds
// (docs/design.md, "One-time costs"). The builds themselves, and the kernels made of them:
// exec/device_kernels.h.
#pragma once

#include <CL/cl.h>

#include <memory>
#include <vector>

#include "exec/services.h"
#include "model/records.h"

namespace coex::exec {

// At the app's clCreateContext with one device (the home to be): makes coex's context and queue on
// every other selected device, each on that device's worker thread (an NVIDIA context takes about
// 100 ms), so that the first split launch does not wait for them.
void prepare_other_devices(Services& services, const std::vector<cl_device_id>& app_devices);

// At the app's clBuildProgram, before the driver builds: the analysis (a libclang parse of tens of
// milliseconds) starts on home's worker, so that the app's first launch, right after its
// build, finds it done and can be split (docs/design.md, "One-time costs"). Same conditions as
// prebuild_program.
void analyse_in_background(Services& services, const std::shared_ptr<model::ProgramRecord>& program,
                           const std::vector<cl_device_id>& app_devices);

// At the app's successful clBuildProgram: analyses the program and builds it for every device coex
// would split its kernels over, each on that device's worker thread, so that the first split launch
// finds them ready instead of building them one after another. Only for a program built for one
// device (the home); nothing when the program has no kernel that may be split, nor for the devices
// held back (devices_held_back).
void prebuild_program(Services& services, std::shared_ptr<model::ProgramRecord> program, cl_context app_context,
                      const std::vector<cl_device_id>& app_devices);

}  // namespace coex::exec
