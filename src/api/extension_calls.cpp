// clGetExtensionFunctionAddress[ForPlatform]: the driver's entry point, or coex's own in its place
// where coex must see the call (api/extension_functions.h). Every other extension function reaches
// the driver straight from the app, unseen.
#include "api/extension_functions.h"
#include "api/handler_util.h"

namespace coex::api {
namespace {

void* extension_function(cl_platform_id platform, const char* name, void* function) {
  if (!function || !name) return function;
  return kernel_arg_function(name, command_buffer_function(platform, name, function));
}

void* CL_API_CALL get_extension_function_for_platform(cl_platform_id platform, const char* name) {
  return extension_function(platform, name, cl().clGetExtensionFunctionAddressForPlatform(platform, name));
}

void* CL_API_CALL get_extension_function(const char* name) {
  return extension_function(nullptr, name, cl().clGetExtensionFunctionAddress(name));
}

}  // namespace

void install_extension_calls(cl_icd_dispatch& table) {
  table.clGetExtensionFunctionAddressForPlatform = get_extension_function_for_platform;
  table.clGetExtensionFunctionAddress = get_extension_function;
}

}  // namespace coex::api
