// The preload entry points: every OpenCL 1.0-3.0 core function, generated from cl_api_list.h.
// Each forwards to the runtime's intercept table, or straight to libOpenCL when coex is also
// loaded as a layer (then the layer intercepts; doing it here too would intercept twice). A call by
// name from below coex (a driver calling a cl* symbol) resolves here too and is intercepted like the
// app's: there is no re-entry check (one would also pass through an app callback that a driver runs
// inside a call coex made).
#include <CL/cl_icd.h>

#include "api/runtime.h"

#define COEX_EXPORT __attribute__((visibility("default")))

#define COEX_API(ret, name, params, args) \
  extern "C" COEX_EXPORT ret CL_API_CALL name params { return coex::api::entry_table_for_preload().name args; }
#include "api/cl_api_list.h"
#undef COEX_API
