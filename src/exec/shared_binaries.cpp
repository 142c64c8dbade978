#include "exec/shared_binaries.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <string>

#include "config/settings.h"
#include "devices/device_set.h"
#include "exec/exit_guard.h"
#include "exec/pocl_compiles.h"
#include "exec/pocl_kernel_cache.h"
#include "exec/program_analysis.h"
#include "report/trace.h"

namespace coex::exec {

std::vector<unsigned char> program_binary(const cl_icd_dispatch& cl, cl_program program, cl_device_id device) {
  cl_uint count = 0;
  if (cl.clGetProgramInfo(program, CL_PROGRAM_NUM_DEVICES, sizeof count, &count, nullptr) != CL_SUCCESS || !count)
    return {};
  std::vector<cl_device_id> ids(count);
  if (cl.clGetProgramInfo(program, CL_PROGRAM_DEVICES, count * sizeof(cl_device_id), ids.data(), nullptr) != CL_SUCCESS)
    return {};
  const auto at = std::find(ids.begin(), ids.end(), device);
  if (at == ids.end()) return {};
  const size_t index = size_t(at - ids.begin());
  std::vector<size_t> sizes(count);
  if (cl.clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, count * sizeof(size_t), sizes.data(), nullptr) !=
          CL_SUCCESS ||
      !sizes[index])
    return {};
  // A buffer for every device: OpenCL 3.0 lets a null entry skip one, but PoCL copies into every
  // entry of a device it built for.
  std::vector<std::vector<unsigned char>> binaries(count);
  std::vector<unsigned char*> into(count);
  for (size_t i = 0; i < count; ++i) {
    binaries[i].resize(std::max<size_t>(sizes[i], 1));
    into[i] = binaries[i].data();
  }
  if (cl.clGetProgramInfo(program, CL_PROGRAM_BINARIES, count * sizeof(unsigned char*), into.data(), nullptr) !=
      CL_SUCCESS)
    return {};
  binaries[index].resize(sizes[index]);
  return std::move(binaries[index]);
}

std::vector<std::string> program_kernel_names(const cl_icd_dispatch& cl, cl_program program) {
  size_t size = 0;
  if (!program || cl.clGetProgramInfo(program, CL_PROGRAM_KERNEL_NAMES, 0, nullptr, &size) != CL_SUCCESS || !size)
    return {};
  std::string names(size, '\0');
  if (cl.clGetProgramInfo(program, CL_PROGRAM_KERNEL_NAMES, size, names.data(), nullptr) != CL_SUCCESS) return {};
  names.resize(std::strlen(names.c_str()));
  std::vector<std::string> out;
  for (size_t at = 0; at < names.size();) {
    const size_t end = std::min(names.find(';', at), names.size());
    if (end > at) out.push_back(names.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

bool another_of_kind(Services& services, int device, const std::vector<int>& among) {
  const devices::DeviceSet& devices = services.devices();
  return services.settings().share_device_binaries && std::any_of(among.begin(), among.end(), [&](int d) {
           return d != device && devices.at(d).same_kind(devices.at(device));
         });
}

int first_of_kind(Services& services, int device, const std::vector<int>& devices) {
  if (!services.settings().share_device_binaries) return -1;
  const devices::DeviceSet& set = services.devices();
  int first = -1;
  for (int other : devices)
    if (other < device && set.at(other).same_kind(set.at(device)) && (first < 0 || other < first)) first = other;
  return first;
}

void read_app_program_binary(Services& services, model::ProgramRecord& program, int home,
                             const std::vector<int>& to_build) {
  if (!program.handle || !another_of_kind(services, home, to_build)) return;
  // The analysis runs beside the app's build and is often done by now: a program it rewrote is built
  // from home's build of the rewrite instead, and one with no kernel to split is built nowhere else
  // (with PoCL's cache cold for coex the read compiles a work-group function of every kernel).
  if (analysis_ready(program) && (!program.rewritten_source.empty() || analysed_unsplittable(program))) return;
  const auto started = std::chrono::steady_clock::now();
  std::vector<unsigned char> binary = program_binary(services.next(), program.handle, services.devices().at(home).id);
  {
    std::lock_guard lock(program.mutex);
    if (binary.empty() || !program.app_binary.empty()) return;
    program.app_binary = std::move(binary);
    program.app_binary_device = home;
    note_donor_hash(program, {home, true}, program.app_binary);
  }
  if (auto* t = services.trace())
    t->record("read binary", "build", home, started, std::chrono::steady_clock::now(), {{"app_program", true}});
}

std::vector<unsigned char> read_build_binary(Services& services, cl_program program, int device) {
  if (exit_begun()) return {};
  const auto started = std::chrono::steady_clock::now();
  auto compile_lock = lock_build(services, device);
  std::vector<unsigned char> binary;
  if (!exit_begun()) binary = program_binary(services.next(), program, services.devices().at(device).id);
  if (auto* t = services.trace())
    t->record("read binary", "build", device, started, std::chrono::steady_clock::now(), {{"bytes", binary.size()}});
  return binary;
}

void note_donor_hash(model::ProgramRecord& program, std::pair<int, bool> build,
                     const std::vector<unsigned char>& binary) {
  const std::string hash = pocl_kernel_cache::binary_hash(binary);
  if (!hash.empty()) program.pocl_hashes[build] = {hash, hash};
}

std::vector<unsigned char> binary_of_same_kind(Services& services, model::ProgramRecord& program, int device,
                                               bool rewritten, int* built_by) {
  if (built_by) *built_by = -1;
  if (!services.settings().share_device_binaries) return {};
  const devices::DeviceSet& devices = services.devices();
  const devices::Device& d = devices.at(device);
  std::lock_guard lock(program.mutex);
  if (!rewritten && !program.app_binary.empty() && devices.at(program.app_binary_device).same_kind(d)) {
    return program.app_binary;
  }
  // coex's own builds of the same source: every build of a program builds the rewrite when there is
  // one (device_kernels.cpp), so only the app's program differs; home's slot in the app's context
  // holds it when nothing is rewritten (use_app_program_on_home sets it after `finished`: skipped).
  // A build from source only: the hashes give_pocl_binary_its_own_hash makes from one are then
  // distinct. Its binary was read before `finished` was set, while no launch could run it.
  for (const auto& [key, build] : program.builds) {
    if (key.first == device || (key.second && !rewritten) || !build.finished.load(std::memory_order_acquire) ||
        build.failed || !build.program || build.from_binary || build.binary.empty() ||
        !devices.at(key.first).same_kind(d))
      continue;
    if (built_by) *built_by = key.first;
    return build.binary;
  }
  return {};
}

bool give_pocl_binary_its_own_hash(std::vector<unsigned char>& binary, int device) {
  const size_t at = pocl_kernel_cache::binary_hash_at(binary);
  if (at == std::string::npos) return false;
  // Two letters, 256 values: device + 1 added, so that no device keeps the donor's hash.
  unsigned char& high = binary[at + pocl_kernel_cache::kHashLetters - 2];
  unsigned char& low = binary[at + pocl_kernel_cache::kHashLetters - 1];
  const unsigned value = (unsigned(high - 'A') * 16 + unsigned(low - 'A') + unsigned(device) + 1) % 256;
  high = static_cast<unsigned char>('A' + value / 16);
  low = static_cast<unsigned char>('A' + value % 16);
  return true;
}

cl_program build_from_binary(const cl_icd_dispatch& cl, cl_context context, cl_device_id device,
                             const std::vector<unsigned char>& binary, const std::string& options) {
  const unsigned char* data = binary.data();
  const size_t size = binary.size();
  cl_int status = CL_SUCCESS, err = CL_SUCCESS;
  cl_program program = cl.clCreateProgramWithBinary(context, 1, &device, &size, &data, &status, &err);
  if (!program) return nullptr;
  if (err != CL_SUCCESS || status != CL_SUCCESS ||
      cl.clBuildProgram(program, 1, &device, options.c_str(), nullptr, nullptr) != CL_SUCCESS) {
    cl.clReleaseProgram(program);
    return nullptr;
  }
  return program;
}

}  // namespace coex::exec
