#include "exec/size_rules.h"

#include <algorithm>

#include "coherence/interval_set.h"
#include "config/settings.h"
#include "devices/device_set.h"
#include "devices/host_memory.h"
#include "exec/chunk_footprint.h"
#include "exec/executor.h"
#include "exec/home_launch_times.h"
#include "exec/kernel_arguments.h"
#include "exec/launch_geometry.h"
#include "exec/repeated_launches.h"
#include "sched/split_math.h"

namespace coex::exec {

uint64_t min_split_items(Services& services, int home) {
  const uint64_t configured = uint64_t(services.settings().min_split_work_items);
  const sched::DeviceProfile* profile = sched::find_profile(services.devices().profiles(), home);
  return profile ? sched::min_split_items_on(*profile, configured) : configured;
}

std::optional<double> first_split_moves(
    Services& services, int home, std::vector<int> sharing, uint64_t bytes,
    const std::function<std::optional<double>(const std::vector<int>&)>& split_seconds, bool into_fresh_memory) {
  if (services.executor().policy().waits_for_preparation()) return std::nullopt;
  if (std::find(sharing.begin(), sharing.end(), home) == sharing.end()) sharing.push_back(home);
  const auto& profiles = services.devices().profiles();
  // Fresh memory is measured only where, a hundred times slower than the nominal rate (the host
  // copy's fill of the others' bytes too), the moves could reach min_split_seconds.
  const double fresh =
      !into_fresh_memory
          ? 0
          : devices::fresh_memory_gbs_where_it_matters(
                services.settings().auto_fresh_memory_gbs,
                sched::others_transfer_seconds(profiles, home, sharing, bytes, sched::kNominalTransferGBs / 100),
                services.settings().min_split_seconds);
  const double moves = sched::others_transfer_seconds(profiles, home, sharing, bytes, fresh);
  if (moves < services.settings().min_split_seconds || split_seconds(sharing)) return std::nullopt;
  return moves;
}

// A process beside launches too short to split compiles for nothing (benchmarks/stencil1d over two basic
// devices, 20,000 launches of 10 us beside a process of 0.26 s on two cores). The kTimedLaunches
// launches of its size: the first pays the driver's first run of the kernel (0.2 ms of stencil1d's, its
// only time above the floor; 15 ms of tests/layer/two_programs' 2 ms launches), and of the other two
// one may be slowed by chance (tests/layer/tiny_steps' second, 5 us on an idle machine, measured above
// the floor of 0.1 ms on a loaded one, which then started a process). Two will do whose shorter took
// ten times the floor (kClearOfFloor; the process then starts a launch sooner for a kernel whose
// launches are long). One will do that took first_split_compile_seconds, about what the process
// compiles: one shorter leaves no time for it to end before the next launch. At a size not timed yet,
// the kernel's pace at another. Once home times no more launches of the size (a launch or its event
// failed) and none of those it timed is still running, what it has will do: none held on home for good.
bool timed_to_compile_ahead(Services& services, const std::string& home_key, const std::string& kernel_key,
                            double floor) {
  constexpr double kClearOfFloor = 10;
  HomeLaunchTimes& times = services.executor().home_launch_times();
  const std::optional<double> once = times.settled_seconds(home_key);
  const std::optional<double> twice = times.seconds(home_key, 2);
  if (once ? *once >= services.settings().first_split_compile_seconds || (twice && *twice >= kClearOfFloor * floor) ||
                 times.seconds(home_key, HomeLaunchTimes::kTimedLaunches)
           : times.pace(kernel_key).has_value())
    return true;
  return !times.wants_timing(home_key) && !times.time_to_come(home_key);
}

uint64_t buffers_bytes(Services& services, const std::vector<model::KernelArgValue>& args,
                       const std::vector<bool>& which) {
  // As bytes_read counts a job's (exec/kernel_arguments.h): the union of the ranges per root buffer,
  // so that a buffer passed twice, or a sub-buffer beside its parent, counts once.
  std::vector<std::pair<const model::BufferRecord*, coherence::IntervalSet>> roots;
  for (const auto& record : written_buffers(services, args, which)) {
    const model::BufferRecord* root = record->root_or_self(record).get();
    auto it = std::find_if(roots.begin(), roots.end(), [&](const auto& r) { return r.first == root; });
    if (it == roots.end()) {
      roots.emplace_back(root, coherence::IntervalSet{});
      it = roots.end() - 1;
    }
    it->second.add(coherence::ByteRange{record->origin, record->origin + record->size});
  }
  uint64_t bytes = 0;
  for (const auto& [root, ranges] : roots) bytes += ranges.total();
  return bytes;
}

bool moves_keep_on_home(Services& services, int home, const std::vector<int>& sharing, uint64_t bytes,
                        const std::string& home_key,
                        const std::function<std::optional<double>(const std::vector<int>&)>& split_seconds,
                        bool into_fresh_memory) {
  const auto moves = first_split_moves(services, home, sharing, bytes, split_seconds, into_fresh_memory);
  if (!moves) return false;
  const auto measured = services.executor().home_launch_times().settled_seconds(home_key);
  return !measured || *measured < *moves;
}

uint64_t buffers_read_bytes(Services& services, const kernel::KernelInfo& info,
                            const std::vector<model::KernelArgValue>& args) {
  // Buffer arguments alone, as bytes_read takes them: a plain 8-byte value is no handle, whatever its bits.
  std::vector<bool> read(args.size(), false);
  for (size_t i = 0; i < args.size() && i < info.args.size(); ++i)
    read[i] = info.args[i].read && kernel::is_buffer_kind(info.args[i].kind);
  return buffers_bytes(services, args, read);
}

bool reads_keep_on_home_before_job(Services& services, int home, const std::vector<int>& early_sharing,
                                   const std::vector<int>& participants, const kernel::KernelInfo& info,
                                   const std::vector<model::KernelArgValue>& args, unsigned work_dim,
                                   const size_t* offset, const size_t* global, const size_t* local,
                                   const std::string& home_key,
                                   const std::function<std::optional<double>(const std::vector<int>&)>& split_seconds) {
  auto keeps_on_home = [&](uint64_t bytes) {
    auto keeps = [&](const std::vector<int>& sharing) {
      return moves_keep_on_home(services, home, sharing, bytes, home_key, split_seconds, true);
    };
    return keeps(early_sharing) && (early_sharing.size() == participants.size() || keeps(participants));
  };
  const uint64_t whole = buffers_read_bytes(services, info, args);
  if (!keeps_on_home(whole)) return false;
  constexpr size_t kAnyGroupLimit = 256;  // make_geometry's own cap on the local size it picks
  LaunchJob job;
  if (!make_geometry(work_dim, offset, global, local, kAnyGroupLimit, job.geometry) ||
      bind_arguments(services, info, args, job))
    return true;
  capture_footprint_inputs(info, args, job);
  return keeps_on_home(footprint_bytes_read(job, whole));
}

}  // namespace coex::exec
