#include "exec/resident_results.h"

#include <spdlog/spdlog.h>

#include "config/settings.h"
#include "devices/device_set.h"
#include "exec/data_moves.h"
#include "exec/spin_wait.h"

namespace coex::exec {

using coherence::IntervalSet;

namespace {

// One holder's part of fetch_sole_in_holders: its reads, one per root, in its fetch queue.
struct HolderReads {
  struct Read {
    size_t root;
    cl_mem mem;
    uint8_t* host;
    IntervalSet ranges;
    bool done = false;
  };
  std::vector<Read> reads;
  cl_int err = CL_SUCCESS;
  uint64_t moved = 0;
};

// Reads `ranges` of `mem`, a buffer of `holder`, into the same offsets of `host` through the holder's
// fetch queue, under its fetch lock. Blocking, also after an error: once it returns no read still
// writes into `host`.
cl_int read_from_holder(Services& services, int holder, cl_mem mem, const IntervalSet& ranges, uint8_t* host,
                        uint64_t& moved) {
  cl_command_queue queue = services.devices().fetch_queue(holder);
  if (!queue) return CL_OUT_OF_RESOURCES;
  std::lock_guard fetching(services.devices().fetch_mutex(holder));
  return read_ranges(services.next(), queue, mem, ranges, host, moved);
}

// Never throws: it may run in a device's worker thread, whose loop would end the process on an exception.
void read_holder(Services& services, int holder, HolderReads& part) noexcept {
  try {
    for (auto& read : part.reads) {
      part.err = read_from_holder(services, holder, read.mem, read.ranges, read.host, part.moved);
      if (part.err != CL_SUCCESS) return;
      read.done = true;
    }
  } catch (...) {
    part.err = CL_OUT_OF_HOST_MEMORY;
  }
}

// Waits for the reads posted to other threads when the scope ends, also on an exception: they write
// into this frame's `holders` and count down its latch.
struct PostedReadsWait {
  TaskLatch& latch;
  std::chrono::nanoseconds spin;
  ~PostedReadsWait() { latch.wait(spin); }
};

}  // namespace

void fetch_sole_in_holders(Services& services, const std::vector<coherence::BufferState*>& states,
                           const std::vector<IntervalSet>& ranges, const RunInDeviceThread& run_in_device_thread,
                           std::chrono::nanoseconds spin, uint64_t& moved) {
  std::map<int, HolderReads> holders;
  std::vector<uint64_t> generations(states.size());
  for (size_t k = 0; k < states.size() && k < ranges.size(); ++k) {
    if (ranges[k].empty()) continue;
    auto& state = *states[k];
    std::lock_guard lock(state.mutex());
    generations[k] = state.generation();
    for (auto& [holder, shadow] : state.shadows()) {
      if (shadow.sole.empty()) continue;
      IntervalSet wanted = intersection(shadow.sole, ranges[k]);
      if (!wanted.empty())
        holders[holder].reads.push_back({k, shadow.mem, state.host_copy().data(), std::move(wanted)});
    }
  }
  // Every holder but the first in its own thread where that polls for a task; the rest here, meanwhile.
  TaskLatch latch;
  PostedReadsWait wait_for_posted{latch, spin};
  std::vector<std::pair<int, HolderReads*>> here;
  here.reserve(holders.size());  // nothing below throws once a read is posted
  for (auto& [holder, part] : holders) {
    if (!here.empty()) {
      std::function<void()> task = [&services, &latch, holder = holder, part = &part] {
        read_holder(services, holder, *part);
        latch.done();
      };
      latch.add();
      if (run_in_device_thread(holder, task)) continue;
      latch.done();
    }
    here.emplace_back(holder, &part);
  }
  spdlog::debug("results only devices hold: {} holders, {} read in their own threads", holders.size(),
                holders.size() - here.size());
  for (auto& [holder, part] : here) read_holder(services, holder, *part);
  latch.wait(spin);
  for (auto& [holder, part] : holders) {
    moved += part.moved;
    if (part.err != CL_SUCCESS)
      spdlog::debug("reading results that only device {} holds failed (error {}); left to the next use", holder,
                    part.err);
    for (const auto& read : part.reads) {
      if (!read.done) continue;
      auto& state = *states[read.root];
      std::lock_guard lock(state.mutex());
      if (state.generation() != generations[read.root]) continue;
      state.host_valid().add(read.ranges);
      if (auto* shadow = state.find_shadow(holder)) shadow->sole.subtract(read.ranges);
    }
  }
}

cl_int fetch_sole(Services& services, coherence::BufferState& state, const IntervalSet& ranges, uint64_t& moved) {
  if (ranges.empty()) return CL_SUCCESS;
  for (auto& [device, shadow] : state.shadows()) {
    if (shadow.sole.empty()) continue;
    IntervalSet wanted = intersection(shadow.sole, ranges);
    if (wanted.empty()) continue;
    // Blocking, also after an error: the caller lets the state's lock go after this, and no read may
    // still be writing into the host copy then.
    cl_int err = read_from_holder(services, device, shadow.mem, wanted, state.host_copy().data(), moved);
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
