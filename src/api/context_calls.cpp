// clCreateContext[FromType] and clReleaseContext: the app's contexts and their devices.
#include "api/handler_util.h"
#include "devices/device_set.h"
#include "exec/context_and_build_preparation.h"

namespace coex::api {
namespace {

std::vector<cl_context_properties> copy_properties(const cl_context_properties* properties) {
  std::vector<cl_context_properties> out;
  if (!properties) return out;
  for (size_t i = 0; properties[i] != 0; i += 2) {
    out.push_back(properties[i]);
    out.push_back(properties[i + 1]);
  }
  out.push_back(0);
  return out;
}

void record_context(cl_context context, const cl_context_properties* properties) {
  record_safely("clCreateContext", [&] {
    // Held by the registry (the app's references) and by the records of the context's objects:
    // when the last of them lets go, coex's queues in the context go too, and the driver can
    // free it (they would keep it alive).
    std::shared_ptr<model::ContextRecord> record(new model::ContextRecord, [](model::ContextRecord* c) {
      rt().devices().release_home_queues(c->handle);
      delete c;
    });
    record->handle = context;
    record->properties = copy_properties(properties);
    cl_uint count = 0;
    if (cl().clGetContextInfo(context, CL_CONTEXT_NUM_DEVICES, sizeof(count), &count, nullptr) == CL_SUCCESS) {
      record->devices.resize(count);
      cl().clGetContextInfo(context, CL_CONTEXT_DEVICES, count * sizeof(cl_device_id), record->devices.data(), nullptr);
    }
    rt().registries().contexts.insert(context, record);
    exec::prepare_other_devices(rt(), record->devices);
  });
}

cl_context CL_API_CALL create_context(const cl_context_properties* properties, cl_uint num_devices,
                                      const cl_device_id* devices,
                                      void(CL_CALLBACK* notify)(const char*, const void*, size_t, void*),
                                      void* user_data, cl_int* errcode_ret) {
  cl_context context = cl().clCreateContext(properties, num_devices, devices, notify, user_data, errcode_ret);
  if (context) record_context(context, properties);
  return context;
}

cl_context CL_API_CALL create_context_from_type(const cl_context_properties* properties, cl_device_type type,
                                                void(CL_CALLBACK* notify)(const char*, const void*, size_t, void*),
                                                void* user_data, cl_int* errcode_ret) {
  cl_context context = cl().clCreateContextFromType(properties, type, notify, user_data, errcode_ret);
  if (context) record_context(context, properties);
  return context;
}

// The first look at the platforms is when coex takes its own: the report lists the devices even
// of a program that never creates a context, and no later call pays for the discovery.
cl_int CL_API_CALL get_platform_ids(cl_uint num_entries, cl_platform_id* platforms, cl_uint* num_platforms) {
  cl_int err = cl().clGetPlatformIDs(num_entries, platforms, num_platforms);
  if (err == CL_SUCCESS) record_safely("clGetPlatformIDs", [] { rt().devices(); });
  return err;
}

cl_int CL_API_CALL retain_context(cl_context context) {
  cl_int err = cl().clRetainContext(context);
  if (err == CL_SUCCESS) record_safely("clRetainContext", [&] { app_retained(rt().registries().contexts, context); });
  return err;
}

// The app's count, not the driver's: coex's own queues in the context hold references too.
cl_int CL_API_CALL release_context(cl_context context) {
  cl_int err = cl().clReleaseContext(context);
  if (err == CL_SUCCESS) record_safely("clReleaseContext", [&] { app_released(rt().registries().contexts, context); });
  return err;
}

}  // namespace

void install_context_calls(cl_icd_dispatch& table) {
  table.clGetPlatformIDs = get_platform_ids;
  table.clCreateContext = create_context;
  table.clCreateContextFromType = create_context_from_type;
  table.clRetainContext = retain_context;
  table.clReleaseContext = release_context;
}

}  // namespace coex::api
