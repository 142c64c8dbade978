#pragma once

#include <CL/cl_icd.h>

#include <string>

namespace coex::api {

// Fills `table` with libOpenCL's own entry points (dlopen libOpenCL.so.1, dlsym each name of
// cl_api_list.h). Used when coex is preloaded, and by the launcher. False, with a reason, when
// libOpenCL cannot be loaded; entry points the loader lacks stay null.
bool load_libopencl_table(cl_icd_dispatch& table, std::string* error);

// Whether OPENCL_LAYERS names this very shared object (then the loader makes coex a layer too).
bool opencl_layers_names_this_library();

}  // namespace coex::api
