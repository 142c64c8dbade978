#include "exec/first_launch_probe.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <vector>

#include "config/settings.h"
#include "devices/device_set.h"
#include "exec/compile_ahead.h"
#include "exec/launch_geometry.h"
#include "exec/pocl_compiles.h"
#include "exec/pocl_kernel_cache.h"
#include "exec/shared_binaries.h"
#include "model/registries.h"
#include "report/report.h"
#include "report/trace.h"

namespace coex::exec::first_launch_probe {
namespace {

std::mutex found_mutex;
std::map<std::string, Found>& found_by_key() {
  static auto* kept = new std::map<std::string, Found>();  // never freed: app threads may launch during exit
  return *kept;
}

void keep(const std::string& home_key, std::optional<double> seconds) {
  std::lock_guard lock(found_mutex);
  found_by_key()[home_key] = Found{true, seconds};
}

// Waits for the event; true where its command completed.
bool completed(const cl_icd_dispatch& cl, cl_event event) {
  cl_int status = CL_QUEUED;
  const bool waited =
      cl.clWaitForEvents(1, &event) == CL_SUCCESS &&
      cl.clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr) == CL_SUCCESS &&
      status == CL_COMPLETE;
  cl.clReleaseEvent(event);
  return waited;
}

}  // namespace

std::optional<Piece> piece_of(cl_uint work_dim, const size_t* offset, const size_t* global, const size_t* local,
                              size_t home_units) {
  if (!global || !local || work_dim < 1 || work_dim > 3) return std::nullopt;
  Piece piece;
  piece.work_dim = work_dim;
  size_t groups[3] = {1, 1, 1};
  size_t total = 1;
  for (cl_uint d = 0; d < work_dim; ++d) {
    if (local[d] == 0 || global[d] % local[d] != 0 || global[d] >= pocl_kernel_cache::kSmallGridWidth)
      return std::nullopt;
    piece.offset[d] = offset ? offset[d] : 0;
    piece.offset_zero = piece.offset_zero && piece.offset[d] == 0;
    piece.local[d] = local[d];
    groups[d] = global[d] / local[d];
    total *= groups[d];
  }
  if (total < kMinGroups) return std::nullopt;
  // From the highest dimension down: as few of its rows as make the share with the dimensions below
  // it whole, then the same along the next where one row is already more.
  const size_t wanted = std::max<size_t>(1, total / kShare);
  size_t block[3] = {groups[0], groups[1], groups[2]};
  for (int d = int(work_dim) - 1; d >= 0; --d) {
    const size_t others = block[0] * block[1] * block[2] / block[d];
    block[d] = std::clamp<size_t>((wanted + others - 1) / others, 1, block[d]);
  }
  const size_t in_block = block[0] * block[1] * block[2];
  for (cl_uint d = 0; d < work_dim; ++d) {
    piece.one_group[d] = local[d];
    piece.block[d] = block[d] * local[d];
  }
  const size_t units = std::max<size_t>(1, home_units);
  piece.scale = double((total + units - 1) / units) / double((in_block + units - 1) / units);
  return piece;
}

bool runs_twice_alike(const kernel::KernelInfo& info, const ArgumentRoots& roots, const std::string& source) {
  if (info.args.size() != roots.size() || source.find("printf") != std::string::npos) return false;
  for (size_t i = 0; i < roots.size(); ++i) {
    if (!roots[i] || !info.args[i].written) continue;
    if (info.args[i].read) return false;
    for (size_t j = 0; j < roots.size(); ++j)
      if (j != i && roots[j] == roots[i]) return false;
  }
  return true;
}

std::optional<Piece> piece_for(Services& services, model::ProgramRecord& program, const std::string& kernel,
                               const kernel::KernelInfo& info, const std::vector<model::KernelArgValue>& args, int home,
                               cl_uint work_dim, const size_t* offset, const size_t* global, const size_t* local,
                               const std::vector<int>& devices) {
  if (services.settings().first_split_compile_seconds <= 0 || info.args.size() != args.size()) return std::nullopt;
  // A launch never split at once (every other device waits for the process: splits_from) is not
  // probed: the probe would only delay it and the variants' line to the process (9 and 43 ms of the
  // mixed set's first launches on the device machine; docs/design.md, "Every kind of the set").
  const double split_from = splits_from(services, program, home, devices);
  if (std::isinf(split_from)) return std::nullopt;
  std::optional<Piece> piece = piece_of(work_dim, offset, global, local, services.devices().at(home).compute_units);
  if (!piece) return std::nullopt;
  ArgumentRoots roots(args.size(), nullptr);
  for (size_t i = 0; i < args.size(); ++i) {
    if (!kernel::is_buffer_kind(info.args[i].kind)) continue;
    if (args[i].svm || args[i].bytes.size() != sizeof(cl_mem)) return std::nullopt;
    const cl_mem mem = *reinterpret_cast<const cl_mem*>(args[i].bytes.data());
    if (!mem) continue;
    const auto record = services.registries().buffers.find(mem);
    if (!record) return std::nullopt;
    roots[i] = record->root_or_self(record).get();
  }
  if (!runs_twice_alike(info, roots, program.source) ||
      !compile_ahead::would_start(services, program, home, kernel, piece->local, piece->offset_zero))
    return std::nullopt;
  piece->split_from = split_from;
  return piece;
}

Found found(const std::string& home_key) {
  std::lock_guard lock(found_mutex);
  const auto it = found_by_key().find(home_key);
  return it == found_by_key().end() ? Found{} : it->second;
}

namespace {

// Home's share of a split over `devices`: its compute units' over theirs where all are PoCL CPU
// devices, else one device's.
double home_share(Services& services, int home, const std::vector<int>& devices) {
  const devices::DeviceSet& set = services.devices();
  if (!std::all_of(devices.begin(), devices.end(),
                   [&](int d) { return set.at(d).is_pocl() && (set.at(d).type & CL_DEVICE_TYPE_CPU); }))
    return 1.0 / double(devices.size());
  double units = 0;
  for (int d : devices) units += set.at(d).compute_units;
  return set.at(home).compute_units / units;
}

// Whether every device of `devices` but home waits for the program's process before it builds: those
// it builds for (compile_ahead::wait_before_build) and the others of their kinds, which build from
// their binaries (first_of_kind). One of home's kind, or one it does not build for (a GPU, a device
// with a kept binary), could take part in a split now.
bool others_wait_for_process(Services& services, model::ProgramRecord& program, int home,
                             const std::vector<int>& devices) {
  const std::vector<int> kinds = compile_ahead::kinds_of(program);
  auto built_for = [&](int d) { return std::find(kinds.begin(), kinds.end(), d) != kinds.end(); };
  return !kinds.empty() && std::all_of(devices.begin(), devices.end(), [&](int d) {
    return d == home || built_for(d) || built_for(first_of_kind(services, d, devices));
  });
}

// What the program's first split compiles, in seconds: first_split_compile_seconds, times
// kWithoutBarriers without barrier(), times kPerOtherKind more for each other kind.
double first_split_compiles(Services& services, model::ProgramRecord& program, size_t kinds) {
  const bool barriers = program.source.find("barrier") != std::string::npos;
  return services.settings().first_split_compile_seconds * (barriers ? 1.0 : kWithoutBarriers) *
         (1.0 + kPerOtherKind * double(kinds));
}

}  // namespace

double splits_from(Services& services, model::ProgramRecord& program, int home, const std::vector<int>& devices) {
  const size_t kinds = compile_ahead::kinds_of(program).size();
  const double others_share = 1.0 - home_share(services, home, devices);
  // Where every other device waits for the process to build, a split now would run on home alone.
  if (others_wait_for_process(services, program, home, devices) || others_share <= 0)
    return std::numeric_limits<double>::infinity();
  return first_split_compiles(services, program, kinds) / others_share;
}

bool splits_at_once(Services& services, model::ProgramRecord& program, const Found& found, int home,
                    const std::vector<int>& devices) {
  if (devices.size() < 2) return true;
  const double from = splits_from(services, program, home, devices);
  if (std::isinf(from)) return false;  // a split now would run on home alone (splits_from)
  if (!found.seconds) return true;
  if (*found.seconds < from) return false;
  services.report().record_split_after_probe();
  return true;
}

bool process_pays(Services& services, model::ProgramRecord& program, uint64_t launches_before, double seconds, int home,
                  const std::vector<int>& devices) {
  if (devices.size() < 2) return true;
  const double saved = seconds * (1.0 - home_share(services, home, devices));
  return saved * double(launches_before + 1) >=
         first_split_compiles(services, program, compile_ahead::kinds_of(program).size());
}

std::shared_ptr<std::atomic<uint64_t>> held_until_process_pays(Services& services, model::ProgramRecord& program,
                                                               const std::string& kernel, double seconds, int home,
                                                               const std::vector<int>& devices) {
  if (!compile_ahead::starts_once_it_pays(services) ||
      !compile_ahead::would_start_process(services, program, home, kernel))
    return nullptr;
  std::shared_ptr<std::atomic<uint64_t>> before;
  {
    std::lock_guard lock(program.mutex);
    auto& count = program.launches_before_process[kernel];
    if (!count) count = std::make_shared<std::atomic<uint64_t>>(0);
    before = count;
  }
  if (process_pays(services, program, before->load(std::memory_order_relaxed), seconds, home, devices)) return nullptr;
  before->fetch_add(1, std::memory_order_relaxed);
  services.report().record_held_until_paid();
  return before;
}

void not_run(const std::string& home_key) { keep(home_key, std::nullopt); }

bool run(Services& services, cl_command_queue queue, cl_kernel kernel, int home, const std::string& home_key,
         const Piece& piece) {
  const cl_icd_dispatch& cl = services.next();
  LaunchGeometry kind;  // the kind of run, as exec/pocl_compiles.h tells them apart
  kind.work_dim = piece.work_dim;
  for (cl_uint d = 0; d < piece.work_dim; ++d) {
    kind.offset[d] = piece.offset[d];
    kind.local[d] = piece.local[d];
  }
  const auto began = std::chrono::steady_clock::now();
  cl_event event = nullptr;
  std::vector<double> runs;       // the block's, each scaled to the launch
  std::optional<double> seconds;  // the fastest
  if (cl.clEnqueueNDRangeKernel(queue, kernel, piece.work_dim, piece.offset, piece.one_group, piece.local, 0, nullptr,
                                &event) == CL_SUCCESS &&
      completed(cl, event)) {
    first_run_of(home, kernel, kind);
    // Run again where a run slowed by what else runs could have made the split (kConfirmBelow).
    for (int round = 0; round < 2; ++round) {
      if (round == 1 && !runs_again(runs[0], piece.split_from)) break;
      const auto block_began = std::chrono::steady_clock::now();
      event = nullptr;
      if (cl.clEnqueueNDRangeKernel(queue, kernel, piece.work_dim, piece.offset, piece.block, piece.local, 0, nullptr,
                                    &event) != CL_SUCCESS ||
          !completed(cl, event))
        break;
      runs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - block_began).count() *
                     piece.scale);
      seconds = std::min(seconds.value_or(runs.back()), runs.back());
    }
  }
  const auto ended = std::chrono::steady_clock::now();
  keep(home_key, seconds);
  services.report().record_first_launch_probe(std::chrono::duration<double>(ended - began).count());
  if (auto* trace = services.trace())
    trace->record("first-launch probe", "plan", home, began, ended,
                  {{"estimate_seconds", seconds ? *seconds : -1.0}, {"share", 1.0 / piece.scale}, {"runs", runs}});
  return seconds.has_value();
}

}  // namespace coex::exec::first_launch_probe
