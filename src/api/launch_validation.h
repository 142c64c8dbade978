// Launches coex leaves to the driver: whatever the driver might reject, or treat in its own way,
// runs unsplit, so that the app gets the driver's own answer (DEVELOPERS.md: the driver's error
// code returned to the app).
#pragma once

#include <CL/cl.h>

namespace coex::api {

// Null when coex may plan the launch; otherwise the reason it goes to the driver as it is.
const char* launch_left_to_driver(cl_command_queue queue, cl_kernel kernel, cl_uint work_dim, const size_t* global,
                                  const size_t* local, cl_uint num_wait, const cl_event* wait_list);

}  // namespace coex::api
