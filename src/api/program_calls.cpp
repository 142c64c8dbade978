// Programs: their sources and build options, so that coex can rebuild them for other devices.
// Only programs built from source can be; the others are recorded with their origin, and launches
// of their kernels are never split (DESIGN.md decision 2).
#include "api/handler_util.h"
#include "exec/device_kernels.h"
#include "exec/object_release.h"
#include "model/source_hash.h"

namespace coex::api {
namespace {

void record_program(cl_program program, cl_context context, model::ProgramOrigin origin, std::string source) {
  record_safely("clCreateProgram", [&] {
    // What coex built from it for other devices goes when the last holder lets go: the registry
    // (the app's last release), its kernels' records, and split launches still running.
    std::shared_ptr<model::ProgramRecord> record(new model::ProgramRecord, [](model::ProgramRecord* p) {
      exec::release_device_builds(*p);
      delete p;
    });
    record->handle = program;
    record->context = context;
    record->origin = origin;
    record->source_hash = model::fnv1a64(source);
    record->source = std::move(source);
    rt().registries().programs.insert(program, record);
  });
}

cl_program CL_API_CALL create_with_source(cl_context context, cl_uint count, const char** strings,
                                          const size_t* lengths, cl_int* errcode_ret) {
  cl_program program = cl().clCreateProgramWithSource(context, count, strings, lengths, errcode_ret);
  if (!program) return program;
  std::string source;
  record_safely("clCreateProgramWithSource", [&] {
    // The spec: strings are concatenated; a length of 0 (or no lengths) means NUL-terminated.
    for (cl_uint i = 0; i < count; ++i) {
      if (!strings[i]) continue;
      if (lengths && lengths[i]) source.append(strings[i], lengths[i]);
      else source.append(strings[i]);
    }
  });
  record_program(program, context, model::ProgramOrigin::Source, std::move(source));
  return program;
}

cl_program CL_API_CALL create_with_binary(cl_context context, cl_uint num_devices, const cl_device_id* devices,
                                          const size_t* lengths, const unsigned char** binaries,
                                          cl_int* binary_status, cl_int* errcode_ret) {
  cl_program program =
      cl().clCreateProgramWithBinary(context, num_devices, devices, lengths, binaries, binary_status, errcode_ret);
  if (program) record_program(program, context, model::ProgramOrigin::Binary, {});
  return program;
}

cl_program CL_API_CALL create_with_il(cl_context context, const void* il, size_t length, cl_int* errcode_ret) {
  cl_program program = cl().clCreateProgramWithIL(context, il, length, errcode_ret);
  if (program) record_program(program, context, model::ProgramOrigin::IL, {});
  return program;
}

cl_program CL_API_CALL create_with_builtin_kernels(cl_context context, cl_uint num_devices,
                                                   const cl_device_id* devices, const char* names,
                                                   cl_int* errcode_ret) {
  cl_program program = cl().clCreateProgramWithBuiltInKernels(context, num_devices, devices, names, errcode_ret);
  if (program) record_program(program, context, model::ProgramOrigin::BuiltIn, {});
  return program;
}

cl_int CL_API_CALL build_program(cl_program program, cl_uint num_devices, const cl_device_id* devices,
                                 const char* options, void(CL_CALLBACK* notify)(cl_program, void*), void* user_data) {
  cl_int err = cl().clBuildProgram(program, num_devices, devices, options, notify, user_data);
  record_safely("clBuildProgram", [&] {
    auto record = rt().registries().programs.find(program);
    if (!record) return;
    {
      std::lock_guard lock(record->mutex);
      record->build_options = options ? options : "";
    }
    if (err != CL_SUCCESS) return;
    // The devices built for: the app's list, or all of the program's context (as recorded at
    // clCreateContext).
    std::vector<cl_device_id> built_for;
    if (num_devices && devices) {
      built_for.assign(devices, devices + num_devices);
    } else if (auto context = rt().registries().contexts.find(record->context)) {
      built_for = context->devices;
    }
    exec::prebuild_program(record, record->context, built_for);
  });
  return err;
}

// clCompileProgram + clLinkProgram: the linked program has no single source coex could rebuild.
cl_program CL_API_CALL link_program(cl_context context, cl_uint num_devices, const cl_device_id* devices,
                                    const char* options, cl_uint num_inputs, const cl_program* inputs,
                                    void(CL_CALLBACK* notify)(cl_program, void*), void* user_data,
                                    cl_int* errcode_ret) {
  cl_program program =
      cl().clLinkProgram(context, num_devices, devices, options, num_inputs, inputs, notify, user_data, errcode_ret);
  if (program) record_program(program, context, model::ProgramOrigin::Linked, {});
  return program;
}

cl_int CL_API_CALL release_program(cl_program program) { return exec::release_app_program(program); }

cl_int CL_API_CALL retain_program(cl_program program) {
  cl_int err = cl().clRetainProgram(program);
  if (err == CL_SUCCESS)
    record_safely("clRetainProgram", [&] { app_retained(rt().registries().programs, program); });
  return err;
}

}  // namespace

void install_program_calls(cl_icd_dispatch& table) {
  table.clCreateProgramWithSource = create_with_source;
  table.clCreateProgramWithBinary = create_with_binary;
  table.clCreateProgramWithIL = create_with_il;
  table.clCreateProgramWithBuiltInKernels = create_with_builtin_kernels;
  table.clBuildProgram = build_program;
  table.clLinkProgram = link_program;
  table.clReleaseProgram = release_program;
  table.clRetainProgram = retain_program;
}

}  // namespace coex::api
