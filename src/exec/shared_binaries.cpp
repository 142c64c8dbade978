#include "exec/shared_binaries.h"

#include <algorithm>
#include <mutex>
#include <string>

#include "config/settings.h"
#include "devices/device_set.h"
#include "exec/pocl_kernel_cache.h"

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

void keep_app_program_for_binary(Services& services, model::ProgramRecord& program, int home) {
  if (!services.settings().share_device_binaries || !program.handle) return;
  const devices::DeviceSet& devices = services.devices();
  const devices::Device& home_device = devices.at(home);
  const std::vector<int> selected = devices.selected();
  if (std::none_of(selected.begin(), selected.end(),
                   [&](int d) { return d != home && devices.at(d).same_kind(home_device); }))
    return;
  std::lock_guard lock(program.mutex);
  if (program.app_program_for_binary || services.next().clRetainProgram(program.handle) != CL_SUCCESS) return;
  program.app_program_for_binary = program.handle;
  program.app_binary_device = home;
}

std::vector<unsigned char> binary_of_same_kind(Services& services, model::ProgramRecord& program, int device,
                                               bool rewritten, int* built_by, std::pair<int, bool>* donor_build) {
  if (built_by) *built_by = -1;
  if (!services.settings().share_device_binaries) return {};
  const devices::DeviceSet& devices = services.devices();
  const devices::Device& d = devices.at(device);
  cl_program donor = nullptr;
  int donor_device = -1;
  bool app_program = false;
  bool donor_in_app_context = false;  // home's build of the rewrite is in the app's context
  {
    std::lock_guard lock(program.mutex);
    if (!rewritten && program.app_program_for_binary && devices.at(program.app_binary_device).same_kind(d)) {
      donor = program.app_program_for_binary;
      donor_device = program.app_binary_device;
      app_program = true;
    }
    // coex's own builds of the same source: every build of a program builds the rewrite when there is
    // one (device_kernels.cpp), so only the app's program differs; home's slot in the app's context
    // holds it when nothing is rewritten (use_app_program_on_home sets it after `finished`: skipped).
    // A build from source only: the hashes give_pocl_binary_its_own_hash makes from one are then
    // distinct.
    if (!donor)
      for (const auto& [key, build] : program.builds) {
        if (key.first == device || (key.second && !rewritten) || !build.finished.load(std::memory_order_acquire) ||
            build.failed || !build.program || build.from_binary || !devices.at(key.first).same_kind(d))
          continue;
        donor = build.program;
        donor_device = key.first;
        donor_in_app_context = key.second;
        break;
      }
  }
  if (!donor) return {};
  if (built_by && !app_program) *built_by = donor_device;
  if (donor_build) *donor_build = {donor_device, app_program || donor_in_app_context};
  return program_binary(services.next(), donor, devices.at(donor_device).id);
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
