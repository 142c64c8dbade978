// Kernels and the current value of every argument: a launch is replayed elsewhere from these.
#include <array>
#include <atomic>
#include <cstring>
#include <mutex>
#include <type_traits>
#include <utility>

#include "api/extension_functions.h"
#include "api/handler_util.h"

namespace coex::api {
namespace {

void record_kernel(cl_kernel kernel, cl_program program, std::string name) {
  record_safely("clCreateKernel", [&] {
    auto record = std::make_shared<model::KernelRecord>();
    record->handle = kernel;
    record->program = rt().registries().programs.find(program);
    if (name.empty()) {
      size_t size = 0;
      cl().clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, 0, nullptr, &size);
      name.resize(size);
      cl().clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, size, name.data(), nullptr);
      while (!name.empty() && name.back() == '\0') name.pop_back();
    }
    record->name = std::move(name);
    cl_uint num_args = 0;
    cl().clGetKernelInfo(kernel, CL_KERNEL_NUM_ARGS, sizeof(num_args), &num_args, nullptr);
    record->args.resize(num_args);
    rt().registries().kernels.insert(kernel, record);
  });
}

cl_kernel CL_API_CALL create_kernel(cl_program program, const char* name, cl_int* errcode_ret) {
  cl_kernel kernel = cl().clCreateKernel(program, name, errcode_ret);
  if (kernel) record_kernel(kernel, program, name);
  return kernel;
}

cl_int CL_API_CALL create_kernels_in_program(cl_program program, cl_uint num_kernels, cl_kernel* kernels,
                                             cl_uint* num_kernels_ret) {
  cl_uint created = 0;
  cl_int err = cl().clCreateKernelsInProgram(program, num_kernels, kernels, &created);
  if (num_kernels_ret) *num_kernels_ret = created;
  if (err == CL_SUCCESS && kernels)
    for (cl_uint i = 0; i < created && i < num_kernels; ++i) record_kernel(kernels[i], program, {});
  return err;
}

cl_kernel CL_API_CALL clone_kernel(cl_kernel source, cl_int* errcode_ret) {
  cl_kernel kernel = cl().clCloneKernel(source, errcode_ret);
  if (!kernel) return kernel;
  record_safely("clCloneKernel", [&] {
    auto original = rt().registries().kernels.find(source);
    if (!original) return;
    auto record = std::make_shared<model::KernelRecord>();
    record->handle = kernel;
    record->program = original->program;
    record->name = original->name;
    std::lock_guard lock(original->mutex);
    record->args = original->args;
    record->exec_info_set = original->exec_info_set;
    rt().registries().kernels.insert(kernel, record);
  });
  return kernel;
}

cl_int CL_API_CALL set_kernel_arg(cl_kernel kernel, cl_uint index, size_t size, const void* value) {
  cl_int err = cl().clSetKernelArg(kernel, index, size, value);
  if (err != CL_SUCCESS) return err;
  record_safely("clSetKernelArg", [&] {
    auto record = rt().registries().kernels.find(kernel);
    if (!record) return;
    std::lock_guard lock(record->mutex);
    if (index >= record->args.size()) return;
    auto& arg = record->args[index];
    arg.set = true;
    arg.svm = false;
    arg.local = value == nullptr;
    arg.size = size;
    const auto* bytes = static_cast<const uint8_t*>(value);
    arg.bytes.assign(bytes, bytes + (value ? size : 0));
  });
  return err;
}

// An argument set to a pointer rather than a buffer: SVM, a USM allocation (cl_intel_unified_shared_
// memory) or a buffer's device address (cl_ext_buffer_device_address). coex cannot tell what it points
// to, so a launch with one runs on the app's device whole (reason `svm`).
void record_pointer_arg(const char* call, cl_kernel kernel, cl_uint index) {
  record_safely(call, [&] {
    auto record = rt().registries().kernels.find(kernel);
    if (!record) return;
    std::lock_guard lock(record->mutex);
    if (index < record->args.size()) record->args[index] = {true, false, true, sizeof(void*), {}};
  });
}

cl_int CL_API_CALL set_kernel_arg_svm(cl_kernel kernel, cl_uint index, const void* value) {
  cl_int err = cl().clSetKernelArgSVMPointer(kernel, index, value);
  if (err == CL_SUCCESS) record_pointer_arg("clSetKernelArgSVMPointer", kernel, index);
  return err;
}

// The extensions' setters of pointer arguments, which the app calls through the address
// clGetExtensionFunctionAddress[ForPlatform] gave it: one wrapper per driver function (a platform's
// each), in slots, each calling its driver's setter and then recording the argument. Unseen, such a
// call would leave the argument's earlier value in coex's record, and a split would run with it.
// `Value`: the setter's third parameter (const void* for USM, cl_ulong for a device address).
constexpr size_t kSetterSlots = 4;

template <typename Value>
struct PointerSetter {
  using Function = cl_int(CL_API_CALL*)(cl_kernel, cl_uint, Value);
  static const char* name() {
    return std::is_pointer_v<Value> ? "clSetKernelArgMemPointerINTEL" : "clSetKernelArgDevicePointerEXT";
  }
  static std::array<std::atomic<Function>, kSetterSlots>& drivers() {
    static std::array<std::atomic<Function>, kSetterSlots> slots{};
    return slots;
  }
  template <size_t Slot>
  static cl_int CL_API_CALL call(cl_kernel kernel, cl_uint index, Value value) {
    const cl_int err = drivers()[Slot].load(std::memory_order_acquire)(kernel, index, value);
    if (err == CL_SUCCESS) record_pointer_arg(name(), kernel, index);
    return err;
  }
  // The wrapper of the driver's `function`: the slot it was given before, else the first free one.
  // All slots taken (more platforms than kSetterSlots with the extension): the driver's own, unseen.
  template <size_t... Slots>
  static void* wrapper(void* function, std::index_sequence<Slots...>) {
    static std::mutex mutex;
    static const std::array<void*, kSetterSlots> wrappers{reinterpret_cast<void*>(&call<Slots>)...};
    const auto driver = reinterpret_cast<Function>(function);
    std::lock_guard lock(mutex);
    for (size_t slot = 0; slot < kSetterSlots; ++slot) {
      Function held = drivers()[slot].load(std::memory_order_acquire);
      if (!held) drivers()[slot].store(held = driver, std::memory_order_release);
      if (held == driver) return wrappers[slot];
    }
    spdlog::warn(
        "{} of a {}th platform: coex does not see its calls, and a kernel whose argument it sets may "
        "be split with the argument's earlier value",
        name(), kSetterSlots + 1);
    return function;
  }
};

cl_int CL_API_CALL set_kernel_exec_info(cl_kernel kernel, cl_kernel_exec_info name, size_t size, const void* value) {
  cl_int err = cl().clSetKernelExecInfo(kernel, name, size, value);
  if (err == CL_SUCCESS)
    record_safely("clSetKernelExecInfo", [&] {
      if (auto record = rt().registries().kernels.find(kernel)) {
        std::lock_guard lock(record->mutex);
        record->exec_info_set = true;
      }
    });
  return err;
}

cl_int CL_API_CALL release_kernel(cl_kernel kernel) {
  cl_int err = cl().clReleaseKernel(kernel);
  if (err == CL_SUCCESS) record_safely("clReleaseKernel", [&] { app_released(rt().registries().kernels, kernel); });
  return err;
}

cl_int CL_API_CALL retain_kernel(cl_kernel kernel) {
  cl_int err = cl().clRetainKernel(kernel);
  if (err == CL_SUCCESS) record_safely("clRetainKernel", [&] { app_retained(rt().registries().kernels, kernel); });
  return err;
}

}  // namespace

void* kernel_arg_function(const char* name, void* function) {
  if (!function) return function;
  if (std::strcmp(name, PointerSetter<const void*>::name()) == 0)
    return PointerSetter<const void*>::wrapper(function, std::make_index_sequence<kSetterSlots>{});
  if (std::strcmp(name, PointerSetter<cl_ulong>::name()) == 0)
    return PointerSetter<cl_ulong>::wrapper(function, std::make_index_sequence<kSetterSlots>{});
  return function;
}

void install_kernel_calls(cl_icd_dispatch& table) {
  table.clCreateKernel = create_kernel;
  table.clCreateKernelsInProgram = create_kernels_in_program;
  table.clCloneKernel = clone_kernel;
  table.clSetKernelArg = set_kernel_arg;
  table.clSetKernelArgSVMPointer = set_kernel_arg_svm;
  table.clSetKernelExecInfo = set_kernel_exec_info;
  table.clReleaseKernel = release_kernel;
  table.clRetainKernel = retain_kernel;
}

}  // namespace coex::api
