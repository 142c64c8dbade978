#include "exec/resident_results.h"

#include <spdlog/spdlog.h>

#include "api/runtime.h"
#include "devices/device_set.h"

namespace coex::exec {

using coherence::IntervalSet;

cl_int fetch_sole(coherence::BufferState& state, const IntervalSet& ranges, uint64_t& moved) {
  if (ranges.empty()) return CL_SUCCESS;
  api::Runtime& rt = api::Runtime::get();
  for (auto& [device, shadow] : state.shadows()) {
    if (shadow.sole.empty()) continue;
    IntervalSet wanted = intersection(shadow.sole, ranges);
    if (wanted.empty()) continue;
    cl_command_queue queue = rt.devices().fetch_queue(device);
    std::lock_guard fetching(rt.devices().fetch_mutex(device));
    cl_int err = queue ? CL_SUCCESS : CL_OUT_OF_RESOURCES;
    uint8_t* host = state.host_copy().data();
    bool enqueued = false;
    for (const auto& r : wanted) {
      if (err != CL_SUCCESS) break;
      err = rt.next().clEnqueueReadBuffer(queue, shadow.mem, CL_FALSE, r.begin, r.size(), host + r.begin, 0, nullptr,
                                          nullptr);
      if (err == CL_SUCCESS) moved += r.size();
      enqueued = enqueued || err == CL_SUCCESS;
    }
    // Blocking, also after an error: the caller lets the lock go after this, and no read may still be
    // writing into the host copy then.
    if (enqueued) {
      cl_int finished = rt.next().clFinish(queue);
      if (err == CL_SUCCESS) err = finished;
    }
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

bool results_may_stay(const coherence::BufferState& state) {
  const auto& settings = api::Runtime::get().settings();
  return state.lazy_allowed && settings.lazy_home && settings.resident_results;
}

}  // namespace coex::exec
