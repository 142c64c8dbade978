#include "exec/resident_results.h"

#include <spdlog/spdlog.h>

#include "config/settings.h"
#include "devices/device_set.h"
#include "exec/data_moves.h"

namespace coex::exec {

using coherence::IntervalSet;

cl_int fetch_sole(Services& services, coherence::BufferState& state, const IntervalSet& ranges, uint64_t& moved) {
  if (ranges.empty()) return CL_SUCCESS;
  for (auto& [device, shadow] : state.shadows()) {
    if (shadow.sole.empty()) continue;
    IntervalSet wanted = intersection(shadow.sole, ranges);
    if (wanted.empty()) continue;
    cl_command_queue queue = services.devices().fetch_queue(device);
    std::lock_guard fetching(services.devices().fetch_mutex(device));
    // Blocking, also after an error: the caller lets the lock go after this, and no read may still be
    // writing into the host copy then.
    cl_int err = queue ? read_ranges(services.next(), queue, shadow.mem, wanted, state.host_copy().data(), moved)
                       : CL_OUT_OF_RESOURCES;
    if (err != CL_SUCCESS) {
      spdlog::error("reading {} bytes of results that only device {} holds failed (error {})", wanted.total(), device,
                    err);
      return err;
    }
    state.host_valid().add(wanted);
    shadow.sole.subtract(wanted);
  }
  return CL_SUCCESS;
}

bool results_may_stay(Services& services, const coherence::BufferState& state, int device) {
  const auto& settings = services.settings();
  return state.lazy_allowed && settings.lazy_home && settings.resident_results && !services.devices().at(device).remote;
}

}  // namespace coex::exec
