// The loader-layer entry points (cl_loader_layers). ocl-icd 2.3 calls clInitLayer; the Khronos
// loader since v2026.05.29 requires clInitLayerWithProperties: both are exported.
#include <CL/cl_icd.h>
#include <CL/cl_layer.h>

#include <cstring>

#include "api/runtime.h"

#define COEX_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

constexpr char kLayerName[] = "coex: split kernel launches across all devices";

cl_int init_layer(cl_uint num_entries, const cl_icd_dispatch* target_dispatch, cl_uint* num_entries_ret,
                  const cl_icd_dispatch** layer_dispatch_ret) {
  constexpr cl_uint kEntries = sizeof(cl_icd_dispatch) / sizeof(void*);
  if (!target_dispatch || !num_entries_ret || !layer_dispatch_ret) return CL_INVALID_VALUE;
  const cl_icd_dispatch* table = coex::api::init_as_layer(target_dispatch, num_entries);
  if (!table) return CL_INVALID_VALUE;
  *num_entries_ret = kEntries;
  *layer_dispatch_ret = table;
  return CL_SUCCESS;
}

}  // namespace

COEX_EXPORT cl_int CL_API_CALL clGetLayerInfo(cl_layer_info param_name, size_t param_value_size, void* param_value,
                                              size_t* param_value_size_ret) {
  const void* src = nullptr;
  size_t size = 0;
  cl_layer_api_version version = CL_LAYER_API_VERSION_100;
  switch (param_name) {
    case CL_LAYER_API_VERSION:
      src = &version;
      size = sizeof(version);
      break;
#ifdef CL_LAYER_NAME
    case CL_LAYER_NAME:
      src = kLayerName;
      size = sizeof(kLayerName);
      break;
#endif
    default:
      return CL_INVALID_VALUE;
  }
  if (param_value) {
    if (param_value_size < size) return CL_INVALID_VALUE;
    std::memcpy(param_value, src, size);
  }
  if (param_value_size_ret) *param_value_size_ret = size;
  return CL_SUCCESS;
}

COEX_EXPORT cl_int CL_API_CALL clInitLayer(cl_uint num_entries, const cl_icd_dispatch* target_dispatch,
                                           cl_uint* num_entries_ret, const cl_icd_dispatch** layer_dispatch_ret) {
  return init_layer(num_entries, target_dispatch, num_entries_ret, layer_dispatch_ret);
}

// The properties list carries nothing coex needs yet (the Khronos loader passes none today).
COEX_EXPORT cl_int CL_API_CALL clInitLayerWithProperties(cl_uint num_entries, const cl_icd_dispatch* target_dispatch,
                                                         cl_uint* num_entries_ret,
                                                         const cl_icd_dispatch** layer_dispatch_ret,
                                                         const void* /*properties*/) {
  return init_layer(num_entries, target_dispatch, num_entries_ret, layer_dispatch_ret);
}

COEX_EXPORT cl_int CL_API_CALL clDeinitLayer(void) {
  coex::api::shutdown();
  return CL_SUCCESS;
}
