// coex compile-ahead REQUEST: started by libcoex.so, not by users (exec/compile_ahead.h). Builds the
// app's program from its source for the app's device, in a process of its own, and asks PoCL for its
// binary: PoCL then compiles the generic work-group function of every kernel, and the variants that
// POCL_BINARY_SPECIALIZE_WG names, into its kernel cache on disk, under the same build hash as the
// app's own build of that source. The app's process then finds them there instead of compiling them
// itself, which stalls what the app runs on PoCL meanwhile
// (docs/design.md, "Compiled ahead, in a process of its own").
//
// REQUEST is a file: lines "key=value" (platform, device, device_name, pocl_devices, variants,
// variants_from_input, options), then a line "source:" and the source to the end of the file. With
// variants_from_input=1 (a process started at the app's clBuildProgram) the binary is asked for twice:
// at once, which compiles the generic functions, then with the variants of the line its standard input
// brings once the app's first split names them (PoCL makes the binary anew at each ask, compiling what
// its cache lacks). Exit status 0 when the binary was made, 3 when the input ended without a line.
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "api/libopencl_table.h"
#include "commands.h"

namespace coex::launcher {
namespace {

// Until how long after its start a process started at the app's clBuildProgram waits for its variants:
// it is the app's child, and an app that waits for all its children would wait for it this long at
// most. The app's process sends them only within 4.5 s of the start; a first split later than that
// starts a process of its own for what the generic functions lack (exec/compile_ahead.h).
constexpr std::chrono::milliseconds kVariantsWait{5000};

struct Request {
  std::string platform, device_name, pocl_devices, variants, options, source;
  int device = -1;
  bool variants_from_input = false;
};

bool read_request(const std::string& path, Request& request) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::string line;
  while (std::getline(in, line)) {
    if (line == "source:") {
      std::ostringstream rest;
      rest << in.rdbuf();
      request.source = rest.str();
      return !request.source.empty() && request.device >= 0;
    }
    const size_t eq = line.find('=');
    if (eq == std::string::npos) return false;
    const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    if (key == "platform")
      request.platform = value;
    else if (key == "device")
      request.device = std::atoi(value.c_str());
    else if (key == "device_name")
      request.device_name = value;
    else if (key == "pocl_devices")
      request.pocl_devices = value;
    else if (key == "variants")
      request.variants = value;
    else if (key == "variants_from_input")
      request.variants_from_input = value == "1";
    else if (key == "options")
      request.options = value;
  }
  return false;
}

std::string info_string(const cl_icd_dispatch& cl, cl_platform_id platform, cl_device_id device) {
  size_t size = 0;
  if (device)
    cl.clGetDeviceInfo(device, CL_DEVICE_NAME, 0, nullptr, &size);
  else
    cl.clGetPlatformInfo(platform, CL_PLATFORM_NAME, 0, nullptr, &size);
  std::string text(size, '\0');
  if (device)
    cl.clGetDeviceInfo(device, CL_DEVICE_NAME, size, text.data(), nullptr);
  else
    cl.clGetPlatformInfo(platform, CL_PLATFORM_NAME, size, text.data(), nullptr);
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

// POCL_BINARY_SPECIALIZE_WG for `variants`: the user's own specializations first, which stay.
void specialize(const char* own, const std::string& variants) {
  std::string all = own ? own : "";
  if (!variants.empty()) all += (all.empty() ? "" : ",") + variants;
  if (!all.empty()) setenv("POCL_BINARY_SPECIALIZE_WG", all.c_str(), 1);
}

// Asks for the program's binary: PoCL compiles what its cache lacks of it.
bool binary_made(const cl_icd_dispatch& cl, cl_program program) {
  size_t size = 0;
  return cl.clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr) == CL_SUCCESS && size > 0;
}

// The device the request names: the n-th of the first platform of that name, of that name.
cl_device_id find_device(const cl_icd_dispatch& cl, const Request& request) {
  cl_uint count = 0;
  if (cl.clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || !count) return nullptr;
  std::vector<cl_platform_id> platforms(count);
  cl.clGetPlatformIDs(count, platforms.data(), nullptr);
  for (cl_platform_id platform : platforms) {
    if (info_string(cl, platform, nullptr) != request.platform) continue;
    cl_uint devices = 0;
    if (cl.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &devices) != CL_SUCCESS ||
        request.device >= int(devices))
      return nullptr;
    std::vector<cl_device_id> ids(devices);
    cl.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, devices, ids.data(), nullptr);
    cl_device_id device = ids[size_t(request.device)];
    return info_string(cl, nullptr, device) == request.device_name ? device : nullptr;
  }
  return nullptr;
}

}  // namespace

int compile_ahead(const Args& args) {
  const auto began = std::chrono::steady_clock::now();
  Request request;
  if (args.size() != 1 || !read_request(args[0], request)) return 2;
  // Read: gone at once, so that none is left behind by an app that ends without removing it.
  ::unlink(args[0].c_str());
  // PoCL reads the variable as it makes the binary.
  const char* set = std::getenv("POCL_BINARY_SPECIALIZE_WG");
  const std::string own = set ? set : "";
  specialize(own.c_str(), request.variants);
  // The one device to compile for, where the app's list allows (exec/compile_ahead.h, pocl_devices_entry).
  if (!request.pocl_devices.empty()) setenv("POCL_DEVICES", request.pocl_devices.c_str(), 1);
  cl_icd_dispatch cl{};
  if (!api::load_libopencl_table(cl, nullptr)) return 1;
  cl_device_id device = find_device(cl, request);
  if (!device) return 1;
  cl_int err = CL_SUCCESS;
  cl_context context = cl.clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  if (err != CL_SUCCESS) return 1;
  const char* text = request.source.c_str();
  const size_t length = request.source.size();
  cl_program program = cl.clCreateProgramWithSource(context, 1, &text, &length, &err);
  int status =
      err == CL_SUCCESS &&
              cl.clBuildProgram(program, 1, &device, request.options.c_str(), nullptr, nullptr) == CL_SUCCESS &&
              binary_made(cl, program)
          ? 0
          : 1;
  if (status == 0 && request.variants_from_input) {
    std::string variants;
    pollfd input{0, POLLIN, 0};
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(began + kVariantsWait - std::chrono::steady_clock::now());
    if (::poll(&input, 1, int(std::max<int64_t>(0, left.count()))) != 1 || !std::getline(std::cin, variants))
      status = 3;  // none within the wait, none to ask for, or the app's process has ended
    else if (!variants.empty()) {
      specialize(own.c_str(), variants);
      status = binary_made(cl, program) ? 0 : 1;
    }
  }
  if (program) cl.clReleaseProgram(program);
  cl.clReleaseContext(context);
  return status;
}

}  // namespace coex::launcher
