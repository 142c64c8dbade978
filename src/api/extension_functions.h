// The extension entry points coex must see the app call. clGetExtensionFunctionAddress[ForPlatform]
// (api/extension_calls.cpp) pass the driver's `function` for `name` through each of these: each
// returns coex's own function in place of it for the names it handles, else `function` itself.
#pragma once

#include <CL/cl.h>

namespace coex::api {

// clEnqueueCommandBufferKHR (cl_khr_command_buffer): api/command_buffer_calls.cpp.
void* command_buffer_function(cl_platform_id platform, const char* name, void* function);

// clSetKernelArgMemPointerINTEL (cl_intel_unified_shared_memory) and clSetKernelArgDevicePointerEXT
// (cl_ext_buffer_device_address): api/kernel_calls.cpp.
void* kernel_arg_function(const char* name, void* function);

}  // namespace coex::api
