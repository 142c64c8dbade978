// Programs: their sources and build options, so that coex can rebuild them for other devices.
// Only programs built from source can be, or from a binary coex saw read from such a program
// (model/binary_sources.h); the others are recorded with their origin, and launches of their
// kernels are never split (docs/design.md, "What is split" and "Programs loaded from binaries").
#include <chrono>
#include <filesystem>

#include "api/handler_util.h"
#include "exec/context_and_build_preparation.h"
#include "exec/device_kernels.h"
#include "exec/policy_binding.h"
#include "model/binary_sources.h"
#include "model/source_hash.h"

namespace coex::api {
namespace {

void record_program(cl_program program, cl_context context, model::ProgramOrigin origin, std::string source) {
  record_safely("clCreateProgram", [&] {
    // What coex built from it for other devices goes when the last holder lets go: the registry
    // (the app's last release), its kernels' records, and split launches still running.
    std::shared_ptr<model::ProgramRecord> record(new model::ProgramRecord, [](model::ProgramRecord* p) {
      exec::release_device_builds(rt().next(), *p);
      delete p;
    });
    record->handle = program;
    record->context = context;
    record->context_record = rt().registries().contexts.find(context);
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
      if (lengths && lengths[i])
        source.append(strings[i], lengths[i]);
      else
        source.append(strings[i]);
    }
  });
  record_program(program, context, model::ProgramOrigin::Source, std::move(source));
  return program;
}

// One per process, beside the history cache the settings name.
model::BinarySources& binary_sources() {
  static model::BinarySources sources(model::binary_sources_path(exec::history_path(rt().settings())));
  return sources;
}

// The source every given binary was built from, when coex saw them all, and all from one source.
std::optional<model::ProgramSource> source_of_binaries(cl_uint count, const size_t* lengths,
                                                       const unsigned char** binaries) {
  std::optional<model::ProgramSource> found;
  for (cl_uint i = 0; i < count; ++i) {
    if (!binaries || !lengths || !binaries[i] || !lengths[i]) return std::nullopt;
    auto one = binary_sources().find({reinterpret_cast<const char*>(binaries[i]), lengths[i]});
    if (!one || (found && !(*found == *one))) return std::nullopt;
    found = std::move(one);
  }
  return found;
}

cl_program CL_API_CALL create_with_binary(cl_context context, cl_uint num_devices, const cl_device_id* devices,
                                          const size_t* lengths, const unsigned char** binaries, cl_int* binary_status,
                                          cl_int* errcode_ret) {
  cl_program program =
      cl().clCreateProgramWithBinary(context, num_devices, devices, lengths, binaries, binary_status, errcode_ret);
  if (!program) return program;
  std::optional<model::ProgramSource> seen;
  record_safely("clCreateProgramWithBinary", [&] { seen = source_of_binaries(num_devices, lengths, binaries); });
  if (!seen) {
    record_program(program, context, model::ProgramOrigin::Binary, {});
    return program;
  }
  // Built from this source before (this run or an earlier one): analysed and rebuilt for the other
  // devices from it, as if the app had created it from source. The app's own program stays the
  // binary's; clBuildProgram's options (needed for a binary too) replace the recorded ones.
  spdlog::info("program {} from a binary coex saw built from source: its kernels may be split",
               static_cast<void*>(program));
  record_program(program, context, model::ProgramOrigin::Source, std::move(seen->source));
  record_safely("clCreateProgramWithBinary", [&] {
    if (auto record = rt().registries().programs.find(program)) {
      std::lock_guard lock(record->mutex);
      record->build_options = seen->options;
    }
  });
  return program;
}

// CL_PROGRAM_BINARIES of a program built from source: remembers each binary's source and options.
cl_int CL_API_CALL get_program_info(cl_program program, cl_program_info param_name, size_t param_value_size,
                                    void* param_value, size_t* param_value_size_ret) {
  cl_int err = cl().clGetProgramInfo(program, param_name, param_value_size, param_value, param_value_size_ret);
  if (err != CL_SUCCESS || param_name != CL_PROGRAM_BINARIES || !param_value) return err;
  record_safely("clGetProgramInfo", [&] {
    auto record = rt().registries().programs.find(program);
    if (!record || record->origin != model::ProgramOrigin::Source) return;
    model::ProgramSource source;
    {
      std::lock_guard lock(record->mutex);
      source = {record->source, record->build_options};
    }
    if (source.source.empty()) return;
    size_t sizes_bytes = 0;
    if (cl().clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, 0, nullptr, &sizes_bytes) != CL_SUCCESS) return;
    std::vector<size_t> sizes(sizes_bytes / sizeof(size_t));
    if (sizes.empty() || param_value_size < sizes.size() * sizeof(unsigned char*) ||
        cl().clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizes_bytes, sizes.data(), nullptr) != CL_SUCCESS)
      return;
    auto* binaries = static_cast<unsigned char**>(param_value);
    for (size_t i = 0; i < sizes.size(); ++i)  // the spec: a NULL entry is a device the app skipped
      if (binaries[i] && sizes[i])
        binary_sources().remember({reinterpret_cast<const char*>(binaries[i]), sizes[i]}, source);
  });
  return err;
}

cl_program CL_API_CALL create_with_il(cl_context context, const void* il, size_t length, cl_int* errcode_ret) {
  cl_program program = cl().clCreateProgramWithIL(context, il, length, errcode_ret);
  if (program) record_program(program, context, model::ProgramOrigin::IL, {});
  return program;
}

cl_program CL_API_CALL create_with_builtin_kernels(cl_context context, cl_uint num_devices, const cl_device_id* devices,
                                                   const char* names, cl_int* errcode_ret) {
  cl_program program = cl().clCreateProgramWithBuiltInKernels(context, num_devices, devices, names, errcode_ret);
  if (program) record_program(program, context, model::ProgramOrigin::BuiltIn, {});
  return program;
}

// The devices a clBuildProgram builds for: the app's list, or all of the program's context (as
// recorded at clCreateContext).
std::vector<cl_device_id> devices_built_for(const model::ProgramRecord& record, cl_uint num_devices,
                                            const cl_device_id* devices) {
  if (num_devices && devices) return {devices, devices + num_devices};
  if (auto context = rt().registries().contexts.find(record.context)) return context->devices;
  return {};
}

cl_int CL_API_CALL build_program(cl_program program, cl_uint num_devices, const cl_device_id* devices,
                                 const char* options, void(CL_CALLBACK* notify)(cl_program, void*), void* user_data) {
  std::shared_ptr<model::ProgramRecord> record;
  record_safely("clBuildProgram", [&] {
    record = rt().registries().programs.find(program);
    if (!record) return;
    {
      std::lock_guard lock(record->mutex);
      record->build_options = options ? options : "";
    }
    exec::analyse_in_background(rt(), record, devices_built_for(*record, num_devices, devices));
  });
  const auto started = std::chrono::steady_clock::now();
  const auto began = std::filesystem::file_time_type::clock::now();
  cl_int err = cl().clBuildProgram(program, num_devices, devices, options, notify, user_data);
  if (record) {
    std::lock_guard lock(record->mutex);
    record->app_build_began = began;
    record->app_build_ended = std::filesystem::file_time_type::clock::now();
    record->pocl_folder_sought = false;  // this build's folder is looked for anew
  }
  // With a callback the call may return before the build ends: not timed (0, no longer wait).
  if (record)
    record->app_build_seconds = err == CL_SUCCESS && !notify
                                    ? std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count()
                                    : 0.0;
  if (err == CL_SUCCESS && record)
    record_safely("clBuildProgram", [&] {
      exec::prebuild_program(rt(), record, record->context, devices_built_for(*record, num_devices, devices));
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

cl_int CL_API_CALL release_program(cl_program program) {
  cl_int err = cl().clReleaseProgram(program);
  if (err == CL_SUCCESS)  // the record's deleter releases coex's builds once nothing holds it
    record_safely("clReleaseProgram", [&] { app_released(rt().registries().programs, program); });
  return err;
}

cl_int CL_API_CALL retain_program(cl_program program) {
  cl_int err = cl().clRetainProgram(program);
  if (err == CL_SUCCESS) record_safely("clRetainProgram", [&] { app_retained(rt().registries().programs, program); });
  return err;
}

}  // namespace

void install_program_calls(cl_icd_dispatch& table) {
  table.clCreateProgramWithSource = create_with_source;
  table.clCreateProgramWithBinary = create_with_binary;
  table.clCreateProgramWithIL = create_with_il;
  table.clCreateProgramWithBuiltInKernels = create_with_builtin_kernels;
  table.clBuildProgram = build_program;
  table.clGetProgramInfo = get_program_info;
  table.clLinkProgram = link_program;
  table.clReleaseProgram = release_program;
  table.clRetainProgram = retain_program;
}

}  // namespace coex::api
