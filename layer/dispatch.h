// The two dispatch tables every coex call goes through.
//   next():      the driver below coex: the loader's target table (as a layer) or libOpenCL's own
//                entry points, dlsym'ed (when preloaded). coex's own OpenCL calls all go here.
//   intercept(): what the app reaches: next() with the calls coex specialises replaced by handlers
//                (src/api/). With COEX_DISABLE=1 or a bad config it equals next().
#pragma once

#include <CL/cl_icd.h>

namespace coex {

enum class LoadMode { Unknown, Layer, Preload };

const cl_icd_dispatch& next();
const cl_icd_dispatch& intercept();

}  // namespace coex
