// Kernels and the current value of every argument: a launch is replayed elsewhere from these.
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

cl_int CL_API_CALL set_kernel_arg_svm(cl_kernel kernel, cl_uint index, const void* value) {
  cl_int err = cl().clSetKernelArgSVMPointer(kernel, index, value);
  if (err == CL_SUCCESS)
    record_safely("clSetKernelArgSVMPointer", [&] {
      auto record = rt().registries().kernels.find(kernel);
      if (!record) return;
      std::lock_guard lock(record->mutex);
      if (index < record->args.size()) record->args[index] = {true, false, true, sizeof(void*), {}};
    });
  return err;
}

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
