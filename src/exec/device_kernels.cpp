#include "exec/device_kernels.h"

#include <spdlog/spdlog.h>

#include <string>

#include "api/runtime.h"
#include "config/fault_spec.h"
#include "devices/device_set.h"

namespace coex::exec {
namespace {

std::string build_log(const cl_icd_dispatch& cl, cl_program program, cl_device_id device) {
  size_t size = 0;
  cl.clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
  std::string log(size, '\0');
  if (size) cl.clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
  return log;
}

// COEX_FAULT=build:<index> (a testing aid): that device's builds fail, as a driver's would.
bool build_fault_injected_on(int device) {
  return config::fault_injected(api::Runtime::get().settings().fault, config::FaultSpec::Kind::Build, device);
}

}  // namespace

cl_kernel device_kernel(const LaunchJob& job, int device) {
  api::Runtime& rt = api::Runtime::get();
  const cl_icd_dispatch& cl = rt.next();
  model::ProgramRecord& program = *job.program;
  bool in_app_context = device == job.home;
  std::lock_guard lock(program.mutex);
  model::DeviceBuild& build = program.builds[{device, in_app_context}];
  if (build.failed) return nullptr;
  const devices::Device& d = rt.devices().at(device);
  if (!build.program) {
    cl_context context = in_app_context ? job.app_context : rt.devices().shadow_context(device);
    if (!context) {
      build.failed = true;
      return nullptr;
    }
    // One build serves every kernel of the program: the rewrite leaves kernels that need no
    // rewrite as they are, so when any kernel needs it, every device builds the rewritten source.
    const std::string& source = program.rewritten_source.empty() ? program.source : program.rewritten_source;
    const char* text = source.c_str();
    size_t length = source.size();
    cl_int err = CL_SUCCESS;
    build.program = cl.clCreateProgramWithSource(context, 1, &text, &length, &err);
    // On PoCL, a define of coex's own makes each of its builds differ from the app's and from the
    // other devices': PoCL 5.0 shares one loaded kernel library among identical builds (same
    // source, options and device model) and releases it once too often when they go (assertion
    // `found->ref_count > 0` in pocl_release_dlhandle_cache with POCL_DEVICES="cpu cpu"; docs/gpu.md).
    std::string options = program.build_options;
    if (d.is_pocl()) options += " -DCOEX_BUILD_FOR_DEVICE=" + std::to_string(device);
    if (build.program) err = cl.clBuildProgram(build.program, 1, &d.id, options.c_str(), nullptr, nullptr);
    if (err == CL_SUCCESS && build_fault_injected_on(device)) err = CL_BUILD_PROGRAM_FAILURE;
    if (err != CL_SUCCESS) {
      spdlog::warn("device {} ({}) cannot build the program of kernel {} (error {}): it gets no work from it. {}",
                   device, d.name, job.kernel_name, err, build.program ? build_log(cl, build.program, d.id) : "");
      build.failed = true;
      return nullptr;
    }
  }
  auto it = build.kernels.find(job.kernel_name);
  if (it != build.kernels.end()) return it->second;
  cl_int err = CL_SUCCESS;
  cl_kernel kernel = cl.clCreateKernel(build.program, job.kernel_name.c_str(), &err);
  if (!kernel) {
    spdlog::warn("device {} ({}): cannot create kernel {} (error {})", device, d.name, job.kernel_name, err);
    return nullptr;
  }
  build.kernels[job.kernel_name] = kernel;
  return kernel;
}

void release_device_builds(model::ProgramRecord& program) {
  const cl_icd_dispatch& cl = api::Runtime::get().next();
  std::lock_guard lock(program.mutex);
  for (auto& [key, build] : program.builds) {
    for (auto& [name, kernel] : build.kernels) cl.clReleaseKernel(kernel);
    if (build.program) cl.clReleaseProgram(build.program);
  }
  program.builds.clear();
}

}  // namespace coex::exec
