#include "api/libopencl_table.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include <cstring>
#include <string>

namespace coex::api {

bool load_libopencl_table(cl_icd_dispatch& table, std::string* error) {
  std::memset(&table, 0, sizeof(table));
  // RTLD_NOLOAD first: an app linked against libOpenCL has it already; this takes that very copy.
  void* lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!lib) lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!lib) lib = dlopen("libOpenCL.so", RTLD_NOW | RTLD_GLOBAL);
  if (!lib) {
    if (error) *error = std::string("cannot load libOpenCL.so.1: ") + dlerror();
    return false;
  }
#define COEX_API(ret, name, params, args) table.name = reinterpret_cast<decltype(table.name)>(dlsym(lib, #name));
#include "api/cl_api_list.h"
#undef COEX_API
  if (!table.clGetPlatformIDs) {
    if (error) *error = "libOpenCL.so.1 has no clGetPlatformIDs";
    return false;
  }
  return true;
}

bool opencl_layers_names_this_library() {
  const char* layers = getenv("OPENCL_LAYERS");
  if (!layers || !*layers) return false;
  Dl_info self{};
  if (!dladdr(reinterpret_cast<void*>(&opencl_layers_names_this_library), &self) || !self.dli_fname) return false;
  char self_path[PATH_MAX];
  if (!realpath(self.dli_fname, self_path)) return false;
  std::string list(layers);
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(':', start);
    if (end == std::string::npos) end = list.size();
    std::string entry = list.substr(start, end - start);
    char entry_path[PATH_MAX];
    if (!entry.empty() && realpath(entry.c_str(), entry_path) && std::strcmp(entry_path, self_path) == 0) return true;
    start = end + 1;
  }
  return false;
}

}  // namespace coex::api
