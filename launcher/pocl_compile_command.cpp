// `coex pocl-compile`: the process libcoex.so starts to compile PoCL's work-group functions at a
// nonzero offset out of the app's process (exec/compile_process.h). It builds the binary on the one
// device POCL_DEVICES names (PoCL's "basic" driver, which compiles a command's function as the command
// is submitted) and submits one work-group of each function behind a user event it never sets: the
// functions are compiled into PoCL's cache and nothing runs, so that the arguments need only be of the
// right kinds and sizes. It ends with its work (an alarm ends it after kMostSeconds, whatever PoCL
// does), without releasing anything: the user event never set, PoCL must not wait for it.
#include <CL/cl_icd.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "api/libopencl_table.h"
#include "commands.h"
#include "exec/compile_process.h"

namespace coex::launcher {
namespace {

// A device of PoCL's platform, the only one POCL_DEVICES leaves it; null when there is none.
cl_device_id pocl_device(const cl_icd_dispatch& cl) {
  cl_uint count = 0;
  if (cl.clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || count == 0) return nullptr;
  std::vector<cl_platform_id> platforms(count);
  if (cl.clGetPlatformIDs(count, platforms.data(), nullptr) != CL_SUCCESS) return nullptr;
  for (cl_platform_id platform : platforms) {
    char name[256] = {};
    cl.clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof name - 1, name, nullptr);
    cl_device_id device = nullptr;
    if (std::string(name) == "Portable Computing Language" &&
        cl.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr) == CL_SUCCESS)
      return device;
  }
  return nullptr;
}

// Arguments of the right kinds, found by trying, since a binary's kernels have no argument info
// (CL_KERNEL_ARG_INFO_NOT_AVAILABLE) unless built with -cl-kernel-arg-info: a buffer serves a pointer to
// global or constant memory (and a value of its size), a size a pointer to local memory, zero bytes of
// the size the driver accepts another value. False when none fits an argument.
bool set_placeholder_arguments(const cl_icd_dispatch& cl, cl_context context, cl_kernel kernel) {
  cl_uint count = 0;
  if (cl.clGetKernelInfo(kernel, CL_KERNEL_NUM_ARGS, sizeof count, &count, nullptr) != CL_SUCCESS) return false;
  cl_mem buffer = cl.clCreateBuffer(context, CL_MEM_READ_WRITE, 4096, nullptr, nullptr);
  if (!buffer) return false;
  static const unsigned char kZeros[256] = {};
  for (cl_uint i = 0; i < count; ++i) {
    bool set = cl.clSetKernelArg(kernel, i, sizeof buffer, &buffer) == CL_SUCCESS ||
               cl.clSetKernelArg(kernel, i, 64, nullptr) == CL_SUCCESS;
    for (size_t size = 1; !set && size <= sizeof kZeros; size *= 2)
      set = cl.clSetKernelArg(kernel, i, size, kZeros) == CL_SUCCESS;
    if (!set) return false;
  }
  return true;
}

// Submits one work-group at a nonzero offset behind `never`: PoCL compiles its function.
void compile_function(const cl_icd_dispatch& cl, cl_context context, cl_command_queue queue, cl_program program,
                      cl_event never, const std::vector<std::string>& words) {
  const std::string& name = words[0];
  const unsigned work_dim = unsigned(std::strtoul(words[1].c_str(), nullptr, 10));
  size_t local[3], offset[3] = {0, 0, 0};
  for (int d = 0; d < 3; ++d) local[d] = std::strtoull(words[2 + d].c_str(), nullptr, 10);
  if (work_dim < 1 || work_dim > 3 || !local[0] || !local[1] || !local[2]) return;
  offset[0] = local[0];
  cl_kernel kernel = cl.clCreateKernel(program, name.c_str(), nullptr);
  if (!kernel || !set_placeholder_arguments(cl, context, kernel)) return;
  cl.clEnqueueNDRangeKernel(queue, kernel, work_dim, offset, local, local, 1, &never, nullptr);
}

int compile(const Args& args) {
  std::ifstream in(args[0], std::ios::binary);
  const std::vector<unsigned char> binary{std::istreambuf_iterator<char>(in), {}};
  ::unlink(args[0].c_str());
  cl_icd_dispatch cl{};
  std::string error;
  if (binary.empty() || !api::load_libopencl_table(cl, &error)) return 1;
  cl_device_id device = pocl_device(cl);
  if (!device) return 1;
  cl_context context = cl.clCreateContext(nullptr, 1, &device, nullptr, nullptr, nullptr);
  cl_command_queue queue = context ? cl.clCreateCommandQueue(context, device, 0, nullptr) : nullptr;
  const unsigned char* bytes = binary.data();
  const size_t size = binary.size();
  cl_program program =
      queue ? cl.clCreateProgramWithBinary(context, 1, &device, &size, &bytes, nullptr, nullptr) : nullptr;
  if (!program || cl.clBuildProgram(program, 1, &device, "", nullptr, nullptr) != CL_SUCCESS) return 1;
  cl_event never = cl.clCreateUserEvent(context, nullptr);
  if (!never) return 1;
  for (size_t at = 1; at + 5 <= args.size(); at += 5)
    compile_function(cl, context, queue, program, never, Args(args.begin() + long(at), args.begin() + long(at) + 5));
  return 0;
}

}  // namespace

int compile_pocl_functions(const Args& args) {
  if (args.empty() || (args.size() - 1) % 5 != 0) {
    std::fprintf(stderr, "coex %s: started by libcoex.so only\n", exec::compile_process::kCommand);
    return 2;
  }
  const pid_t worker = ::fork();
  if (worker != 0) _exit(worker > 0 ? 0 : 1);  // the app's process reaps this one at once
  ::setsid();
  ::alarm(exec::compile_process::kMostSeconds);
  _exit(compile(args));  // nothing torn down: a command waits on the user event
}

}  // namespace coex::launcher
