#include "exec/launch_planner.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "config/settings.h"
#include "devices/device_set.h"
#include "exec/compile_ahead.h"
#include "exec/compile_ahead_at_launch.h"
#include "exec/deferred_app_binary.h"
#include "exec/device_kernels.h"
#include "exec/executor.h"
#include "exec/kernel_arguments.h"
#include "exec/launch_shape.h"
#include "exec/pocl_compiles.h"
#include "exec/policy_binding.h"
#include "exec/policy_gate.h"
#include "exec/program_analysis.h"
#include "exec/repeated_launches.h"
#include "exec/size_rules.h"
#include "exec/split_safety.h"
#include "model/registries.h"
#include "report/report.h"
#include "sched/split_math.h"

namespace coex::exec {
namespace {

const char* origin_reason(model::ProgramOrigin origin) {
  switch (origin) {
    case model::ProgramOrigin::Binary:
      return "binary_program";
    case model::ProgramOrigin::IL:
      return "il_program";
    case model::ProgramOrigin::BuiltIn:
      return "builtin_kernels";
    case model::ProgramOrigin::Linked:
      return "linked_program";
    case model::ProgramOrigin::Source:
      return "";
  }
  return "unknown_program";
}

// The plan of a launch. `repeat` says whether the decision may serve the launches that repeat this one
// (exec/repeated_launches.h), and `args` gets the arguments it was made with.
LaunchDecision plan(Services& services, const std::shared_ptr<model::KernelRecord>& kernel,
                    const LaunchRequest& request, RepeatableDecision& repeat,
                    std::vector<model::KernelArgValue>& args) {
  const cl_command_queue queue = request.queue;
  const cl_uint work_dim = request.work_dim;
  const size_t *offset = request.offset, *global = request.global, *local = request.local;
  LaunchDecision decision;
  auto not_split = [&](const char* reason) {
    decision.not_split_reason = reason;
    return std::move(decision);
  };
  // A reason that holds until what RepeatedLaunches compares changes.
  auto lasting = [&](const char* reason) {
    repeat.keep = true;
    return not_split(reason);
  };

  auto queue_record = services.registries().queues.find(queue);
  if (!kernel || !queue_record || !kernel->program) return not_split("untracked_kernel");
  decision.kernel_name = kernel->name;
  auto program = kernel->program;

  // The app's arguments as they are now: what this launch runs with.
  bool exec_info_set = false;
  {
    std::lock_guard lock(kernel->mutex);
    args = kernel->args;
    exec_info_set = kernel->exec_info_set;
    repeat.exec_info_set = exec_info_set;
  }
  devices::DeviceSet& devices = services.devices();
  int home = devices.index_of(queue_record->device);
  decision.home = home;
  std::vector<int> participants = devices.selected();
  // Home runs its share even when the selection leaves it out.
  auto device_count = [&] {
    return participants.size() + (std::find(participants.begin(), participants.end(), home) == participants.end());
  };
  auto fewer_than_two = [&] { return device_count() < 2; };
  // With one device in all there is nothing to split: no analysis (a libclang parse, milliseconds).
  bool single_device = home >= 0 && fewer_than_two();
  // A policy may not wait for what a split needs (auto; docs/design.md, "One-time costs"): while the
  // analysis or the builds run on the devices' workers, launches run on home as the app made them,
  // timed; once a launch of the kernel and size was measured at auto_wait_seconds or more there, the
  // next ones wait.
  uint64_t launch_items = 1;
  for (cl_uint d = 0; d < work_dim && d < 3 && global; ++d) launch_items *= global[d];
  // Made once per plan: a launch of a new size (a factorization's, each smaller than the last) is
  // planned in full, and each of these strings cost about a thousand instructions to make.
  const std::string kernel_key = history_key(kernel->name, program->source_hash);
  const std::string home_key = home_launch_key(kernel_key, launch_items);
  // The History's time of a split of this launch over `devices`, at this size.
  auto split_seconds = [&](const std::vector<int>& devices) -> std::optional<double> {
    auto history = services.executor().history();
    if (!history) return std::nullopt;
    return history->split_launch_seconds(kernel_key, launch_items, devices);
  };
  const bool waits_for_preparation = single_device || services.executor().policy().waits_for_preparation() || [&] {
    auto measured = services.executor().home_launch_times().seconds(home_key);
    return measured && *measured >= services.settings().auto_wait_seconds;
  }();
  // How long a launch of this size took on home, or would take by the kernel's pace there; whether
  // that is less than `limit`. Asked after settled_on_home (below) has settled home's timings.
  auto seconds_on_home = [&]() -> std::optional<double> {
    HomeLaunchTimes& times = services.executor().home_launch_times();
    if (std::optional<double> seconds = times.seconds(home_key)) return seconds;
    if (const auto pace = times.pace(kernel_key)) return *pace * double(launch_items);
    return std::nullopt;
  };
  auto launch_shorter_on_home = [&](double limit) {
    const std::optional<double> seconds = seconds_on_home();
    return seconds && *seconds < limit;
  };
  // Whether a split of the kernel (at any size) is in flight while nothing says yet how long the
  // launch takes on home.
  auto home_time_awaited = [&] {
    HomeLaunchTimes& times = services.executor().home_launch_times();
    auto history = services.executor().history();
    return history && !times.seconds(home_key) && !times.pace(kernel_key) &&
           history->kernel_split_in_flight(kernel_key);
  };
  auto all_devices = [&] {
    std::vector<int> all = participants;
    if (std::find(all.begin(), all.end(), home) == all.end()) all.push_back(home);
    return all;
  };
  // A launch nothing has timed on home yet, with none but late devices (exec/late_devices.h) to take
  // part: it runs there whole (`preparing`), timed. A split on home alone, for a late device to join,
  // paid home's chunks (PoCL compiles the kernel again for a nonzero offset: 125 ms of a 0.66 s launch
  // of benchmarks/nbody), the wait for the analysis and home's build, for a device whose context
  // comes 1.5 s or more later: only launches of 2 s or more could gain. It starts the clock
  // (auto_late_after), and one as long as that and the device's preparation (auto_late_cost) has the
  // next run of the program let it in at once. Not a launch too small to split: it takes no device.
  LateDevices& late = services.executor().late_devices();
  // Whether the devices `waiting` (LateDevices::waiting_among) are all of the `others` devices beside
  // home that could take part.
  auto late_only = [](const std::vector<int>& waiting, size_t others) {
    return !waiting.empty() && waiting.size() >= others;
  };
  auto untimed_beside_late_only = [&](const std::vector<int>& waiting, size_t others, std::optional<double> on_home) {
    if (!late_only(waiting, others) || launch_items < min_split_items(services, home)) return false;
    if (on_home) return false;
    for (int device : waiting) services.report().record_late_device(device, std::nullopt);
    late.note_untimed(program->source_hash, home_key);
    return true;
  };
  bool preparing = false;
  bool others_held_back = false;
  std::optional<double> too_short_for_late;  // beside none but late devices: home's time, too short to let them in
  const kernel::KernelInfo* info = nullptr;
  if (!single_device) {
    const bool analysed = home < 0 || program->origin != model::ProgramOrigin::Source || analysis_ready(*program);
    std::vector<int> to_build;
    if (!analysed && !services.executor().policy().waits_for_preparation()) {
      const std::vector<int> all = all_devices();
      const std::optional<double> on_home = services.executor().home_launch_times().settled_seconds(home_key, 2);
      to_build = devices_without(all, devices_held_back(services, home, all, on_home, split_seconds));
      // With every other device held back the launch stays on home (too_small, below) and nothing is
      // prepared: not even the analysis, whose load of libclang would stall the driver on the app's
      // thread (analyse_in_background), nor, once home's launches were timed long, a wait for it.
      others_held_back = to_build.size() < 2;
    }
    const std::vector<int> waiting = late.waiting_among(to_build, home);  // none once analysed
    const size_t others = to_build.empty() ? 0 : to_build.size() - 1;     // home is in to_build
    const std::optional<double> on_home = seconds_on_home();  // read once: a launch's time may land meanwhile
    if (others_held_back) {
      // no info: the launch runs on home as too_small
    } else if (late_only(waiting, others) && on_home && *on_home < services.settings().auto_late_cost &&
               !exec_info_set) {
      // Beside none but late devices nothing is prepared, neither the analysis nor home's build, until
      // a launch may let them in: no split can come before (exec/late_devices.h). One nothing has timed
      // runs on home whole (below). One shorter than auto_late_cost that would let them in asks for the
      // analysis and runs on home whole; a later one lets them in (below) once the analysis says some
      // kernel can be split: a program that never splits makes no context for them. One that long goes
      // on below: its split waits for the analysis and has them join (split_runner.cpp).
      for (int device : waiting) services.report().record_late_device(device, std::nullopt);
      if (judge_late_devices(late, services.settings(), *on_home) == LateCall::let_in) {
        prepare_analysis(services, program, home);
        preparing = true;
      } else {
        too_short_for_late = on_home;
      }
    } else if (late_only(waiting, others) && !on_home && program->late_devices_remembered.load() &&
               !program->analysis_waited.exchange(true) &&
               wait_for_analysis(*program, services.settings().auto_analysis_wait)) {
      // The History remembers the program as one that let late devices in (let_in_if_remembered): its
      // first launch nothing has timed waits briefly for the analysis posted at clBuildProgram, and
      // where the kernel may be split lets them in itself, to split with them as joiners. Run on home
      // whole meanwhile, benchmarks/mandel_uniform's one launch of 3 s on PoCL's CPU beside an H200
      // began 3 ms before the analysis's end let the GPU in, and never had it.
      info = analysed_kernel(*program, kernel->name);
      if (info && info->not_split_reason.empty())
        let_in_remembered(services, program, queue_record->context, home, waiting);
    } else if (waits_for_preparation || analysed) {
      if (!analysed && home >= 0) analyse_traced(services, *program, home, true);
      info = analysed_kernel(*program, kernel->name);
    } else {
      if (!late_only(waiting, others)) prepare_program(services, program, queue_record->context, home, to_build);
      // The program's first launch large enough to be split waits for the analysis, briefly: it
      // usually ends tens of milliseconds after the app's clBuildProgram, and a launch run on home
      // meanwhile can be most of a short program (benchmarks/binomial over 8 devices: its first of
      // three launches, 0.64 s on home alone).
      // Not a launch that much data keeps on home until it is timed (below): the buffers' sizes stand
      // in for what it reads.
      const bool large =
          launch_items >= min_split_items(services, home) &&
          !first_split_moves(services, home, to_build, buffers_bytes(services, args, {}), split_seconds, false);
      const bool beside_late_only = large && untimed_beside_late_only(waiting, others, on_home);
      // The app's binary, its read put off to such a launch (below), is read before the wait: it
      // overlaps the analysis, as it did inside clBuildProgram (serial, benchmarks/nbody's and
      // mandel_uniform's single long launches over eight devices in a PoCL cache a bare run filled
      // took 50 to 60 ms longer); not where it may be compiled ahead, decided after the analysis.
      if (large && !beside_late_only && !late_only(waiting, others) && !program->analysis_waited.load() &&
          !services.settings().compile_ahead)
        read_deferred_app_binary(services, program, queue_record->context, home, to_build, nullptr);
      preparing = !large || beside_late_only ||
                  !(!program->analysis_waited.exchange(true) &&
                    wait_for_analysis(*program, services.settings().auto_analysis_wait));
      if (!preparing) info = analysed_kernel(*program, kernel->name);
    }
  }
  // Without an analysis every buffer argument may be written.
  repeat.written.assign(args.size(), false);
  for (size_t i = 0; i < args.size(); ++i) repeat.written[i] = !info || i >= info->args.size() || info->args[i].written;
  decision.written_buffers = written_buffers(services, args, repeat.written);

  if (const char* reason = origin_reason(program->origin); *reason) return lasting(reason);
  if (single_device) {
    services.note_home(home);
    return lasting("single_device");
  }
  if (exec_info_set) return lasting("svm");
  // A launch auto runs on home while it prepares still counts among the kernel's launches (the
  // History's launch numbers, which its probes follow).
  auto preparing_on_home = [&] {
    if (auto history = services.executor().history()) history->note_launch(kernel_key, launch_items);
    if (services.executor().home_launch_times().wants_timing(home_key)) decision.time_on_home_key = home_key;
    // Kept a moment, each launch that takes it over counted alike (RepeatedLaunches::kPreparingHold).
    repeat.keep = true;
    repeat.any_values = true;  // the preparation reads no value
    repeat.counts_launch.emplace(kernel_key, launch_items);
    return not_split("preparing");
  };
  // The size rule: few work-items for home's width, split only once a launch of this kernel and size
  // was measured long enough on home. A device much slower than home by its specification sits the
  // launch out until home's time, weighed by the share it promises, is long enough, and its build
  // waits for that launch too (devices_held_back): with none left but home, the launch is kept there
  // before it could ask for a build.
  // Under auto (the policy that does not wait for preparation), a launch of any size measured (or paced)
  // on home shorter than a split over the devices costs stays there too (auto_split_floor_seconds per
  // device; docs/design.md, "Size by time").
  auto split_floor = [&] { return services.settings().auto_split_floor_seconds * double(device_count()); };
  auto below_size_rule = [&](uint64_t items) {
    if (items >= min_split_items(services, home)) {
      if (services.executor().policy().waits_for_preparation()) return false;
      const double floor = split_floor();
      if (floor <= 0) return false;
      const std::optional<double> on_home = seconds_on_home();
      return on_home && *on_home < floor;
    }
    const std::optional<double> measured = services.executor().home_launch_times().settled_seconds(home_key);
    return !measured || *measured < services.settings().min_split_seconds;
  };
  auto too_small = [&] {
    if (services.executor().home_launch_times().wants_timing(home_key)) decision.time_on_home_key = home_key;
    repeat.by_home_times = true;
    repeat.any_values = true;  // the size, home's times of it, the devices held back: no value read
    return lasting("too_small");
  };
  // A launch too short to let late devices in, with none but them to take it: too small, held like
  // the launches home's times keep there while short of min_split_seconds, where `preparing` (nothing
  // is) would plan it again every kPreparingHold (stencil1d's 20,000 launches of 80 us beside a late
  // GPU). One short of auto_late_cost alone is planned again at each launch, as the program's time
  // goes on (repeated launches would otherwise keep it for good).
  auto too_short_beside_late = [&](double on_home) {
    if (on_home < services.settings().min_split_seconds) return too_small();
    if (services.executor().home_launch_times().wants_timing(home_key)) decision.time_on_home_key = home_key;
    return not_split("too_small");
  };
  if (preparing || others_held_back || too_short_for_late) {
    services.note_home(home);
    if (too_short_for_late) return too_short_beside_late(*too_short_for_late);
    return preparing ? preparing_on_home() : too_small();
  }
  if (!info) return lasting("unanalysable");
  if (!info->not_split_reason.empty()) return lasting(info->not_split_reason.c_str());
  if (info->args.size() != args.size()) return lasting("unanalysable");

  if (home < 0) return not_split("unknown_device");
  services.note_home(home);
  use_app_program_on_home(services, *program, home);
  // A device abandoned in an earlier split (exec/split_progress.h) sits out until it returns; one
  // whose sub-launch failed, for good.
  const char* left_out = nullptr;
  participants.erase(std::remove_if(participants.begin(), participants.end(),
                                    [&](int d) {
                                      const char* why = d == home ? nullptr : services.executor().left_out(d);
                                      if (why && (!left_out || std::string(why) == "device_failed")) left_out = why;
                                      return why != nullptr;
                                    }),
                     participants.end());
  if (fewer_than_two()) return not_split(left_out ? left_out : "single_device");
  // Home's time once two launches were measured: the first includes the driver's first run of the
  // kernel, and a device let in on it would be built for nothing when the next ones are shorter.
  const std::optional<double> settled_on_home = services.executor().home_launch_times().settled_seconds(home_key, 2);
  if (const std::vector<int> held = devices_held_back(services, home, all_devices(), settled_on_home, split_seconds);
      !held.empty()) {
    participants = devices_without(participants, held);
    repeat.by_home_times = true;  // a decision without them holds until home's times change
    if (fewer_than_two()) return too_small();
  }
  // A kernel without loops whose first split would move, by what it reads, at least
  // min_split_seconds into new memory (moves_keep_on_home, below, once the job is made) stays on home
  // while something is still to be read or built for the others: benchmarks/saxpy's first launch over
  // two basic PoCL devices read the app's binary and built it on the other device, 20 to 34 ms on the
  // app's thread, and then ran on home as too_small. It weighs what that check weighs, over the devices
  // with and without the late ones still waiting (let in, or their call still to come; or too short
  // to let in): reads_keep_on_home_before_job. Once prepared, that check alone says.
  const std::vector<int> early_sharing = devices_without(participants, late.waiting_among(participants, home));
  auto left_to_prepare = [&] {
    if (program->app_binary_deferred.load(std::memory_order_acquire)) return true;
    std::lock_guard lock(program->mutex);
    return std::any_of(early_sharing.begin(), early_sharing.end(), [&](int d) {
      return d != home && !program->builds_posted.count({d, false});
    });
  };
  if (!info->loops && left_to_prepare() &&
      reads_keep_on_home_before_job(services, home, early_sharing, participants, *info, args, work_dim, offset, global,
                                    local, home_key, split_seconds))
    return too_small();
  // The app's binary, its read put off from clBuildProgram (exec/deferred_app_binary.h), is read by the
  // first launch the size rule lets be split (none of benchmarks/gram_schmidt's 1,535), or compiled
  // ahead while launches run on home, as a program not read whose process builds for other kinds
  // (exec/compile_ahead_kinds.h); one nothing timed whose kernel loops may be long enough to split now,
  // which a probe tells (docs/design.md, "Compiled ahead"; compile_ahead::at_launch). Still deferred
  // after it: compiled ahead, or a thread inside a read (whose launches are not split).
  const bool read_deferred = program->app_binary_deferred.load(std::memory_order_acquire);
  if (read_deferred || compile_ahead::pending(*program)) {
    if (below_size_rule(launch_items)) return too_small();
    const std::vector<int> devices = all_devices();
    const compile_ahead::PlannedLaunch planned{program,       *kernel,       *info,          args,     request,
                                               *queue_record, home,          devices,        home_key, kernel_key,
                                               split_floor(), read_deferred, seconds_on_home};
    switch (compile_ahead::at_launch(services, planned, decision, repeat)) {
      case compile_ahead::LaunchStep::plan_on:
        break;
      case compile_ahead::LaunchStep::too_small:
        return too_small();
      case compile_ahead::LaunchStep::preparing:
        return preparing_on_home();
      case compile_ahead::LaunchStep::probing:
        return not_split("probing");
    }
  }
  // Under a policy that does not wait for preparation (auto) a device other than home is never
  // waited for: one whose build has not finished joins the split when it has, if the policy hands
  // out chunks on demand (split_runner.cpp), else sits the launch out. Home's build, under way, is
  // waited for briefly (home_building): by a launch timed on home within a budget, below.
  std::vector<int> building;
  bool home_building = false;  // the analysis is done, home's build under way: waited for below
  std::optional<double> home_budget;  // that wait's budget, where not home_build_wait's
  if (!services.executor().policy().waits_for_preparation()) {
    const std::vector<int> ready = devices_ready(services, program, queue_record->context, home, all_devices());
    auto takes_part = [&](int d) {
      return std::find(ready.begin(), ready.end(), d) != ready.end() ||
             (d == home && (waits_for_preparation || home_building));
    };
    if (std::find(ready.begin(), ready.end(), home) == ready.end()) {
      if (!takes_part(home) && !analysis_ready(*program)) return preparing_on_home();
      // A launch timed on home waits for home's build, but the launches that wait for it wait no
      // longer in all than a split over the devices could save of one (home's time times 1 - 1/N):
      // a wait that long costs at most what waiting could gain (on two cores, benchmarks/binomial's
      // second launch, 0.36 s on home, waited 0.53 s for home's build of the rewrite and the read of
      // its binary, 0.86 s beside the first launch, then ran split and cold: 0.92 s in all; and one
      // timed shorter than auto_wait_seconds waited home_build_wait at every launch; docs/design.md,
      // "One-time costs"). One nothing has timed waits up to home_build_wait.
      if (const std::optional<double> on_home = seconds_on_home()) {
        const double saving = *on_home * (1.0 - 1.0 / double(std::max<size_t>(all_devices().size(), 1)));
        if (home_build_budget_left(*program, saving) <= 0) return preparing_on_home();
        home_budget = saving;
      }
      home_building = true;
    }
    for (int d : participants)
      if (!takes_part(d)) building.push_back(d);
    participants.erase(std::remove_if(participants.begin(), participants.end(), [&](int d) { return !takes_part(d); }),
                       participants.end());
    if (fewer_than_two() && building.empty()) return preparing_on_home();
    // A device of auto_late_devices (exec/late_devices.h) is one of those still building, with no build
    // posted, until the program has run launches that could take it for auto_late_after; then one
    // measured (or paced) at min_split_seconds or more on home lets it in, where it or the program's
    // launches so far have run auto_late_cost, its expected preparation (a launch that ends before,
    // the last of its program, would have the exit wait for it). A split still running then lets it
    // in too where enough of it is left (split_runner.cpp): a launch nothing has timed yet beside
    // devices ready, or timed long enough but before auto_late_after. Beside none but late devices,
    // a launch is planned here only once the program was analysed (above: nothing is prepared before).
    std::vector<int> waiting = late.waiting_among(building, home);
    const std::optional<double> on_home = seconds_on_home();
    // A program the History remembers lets its late devices in once its analysis ends, by a task on
    // home's worker (let_in_if_remembered), which a launch planned first does not wait for: that one,
    // untimed, lets them in itself and splits with them joining, as it would have a moment later
    // (layer.late_devices: long_items' one launch, planned 3 ms before the task ran, ran on home whole
    // in 7 of 25 runs beside a compile).
    if (!on_home && !waiting.empty() && program->late_devices_remembered.load()) {
      let_in_remembered(services, program, queue_record->context, home, waiting);
      waiting = late.waiting_among(building, home);
    }
    if (fewer_than_two() && untimed_beside_late_only(waiting, building.size(), on_home)) return preparing_on_home();
    for (int device : waiting) services.report().record_late_device(device, std::nullopt);  // kept once let in
    if (!waiting.empty() || late.any_remembered()) {
      const LateCall call = on_home ? judge_late_devices(late, services.settings(), *on_home) : LateCall::wait;
      if (call == LateCall::let_in) {
        let_in_late_devices(services, program, queue_record->context, home, waiting);
      } else if (call == LateCall::too_short && !waiting.empty()) {
        // Beside devices ready, the late ones are no joiners (a split with joiners is cold: no verdict).
        if (fewer_than_two() && !home_building && waiting.size() == building.size())
          return too_short_beside_late(*on_home);
        building = devices_without(building, waiting);
      }
    }
    // With home the only device ready, a launch nothing has timed runs there whole where every device to
    // join builds from source beside it in this process: PoCL compiles one thing at a time, so home's
    // chunks at a nonzero offset waited for those builds to compile their variant (benchmarks/matmul at
    // 1,024 beside a `basic` device: 2.25 s against 1.15 s alone; docs/design.md, "One-time costs").
    if (fewer_than_two() && !home_building && !seconds_on_home() && !building.empty() &&
        others_build_beside_home(services.devices(), home, building))
      return preparing_on_home();
    // With home the only device ready, a split can gain only from a device that joins while it runs:
    // a launch measured shorter than auto_wait_seconds on home (this size, or the kernel's pace at
    // another) runs there whole. Split, it paid host copies and home's chunks, and as a cold split no
    // verdict, so the next one split again (benchmarks/lu beside a pthread device building from source:
    // 1.1 s against 0.15 s bare). Nor does a launch planned while such a split of its kernel is in flight
    // before home's time is known: it would split on the same guess (stencil1d beside a GPU whose context
    // and build took 0.3 s: 31 cold splits, none a verdict). The first split's time paces the next ones.
    // Where every device to join is a late one let in (its context, then its build: a second or more
    // for a GPU), so is a launch shorter than auto_late_cost, home's build under way or not: it would
    // wait for home's build to run a split on home alone.
    const bool late_joiners_only = late.all_named(building);
    if (fewer_than_two() && (!home_building || late_joiners_only) &&
        (launch_shorter_on_home(services.settings().auto_wait_seconds) || home_time_awaited() ||
         (late_joiners_only && launch_shorter_on_home(services.settings().auto_late_cost))))
      return preparing_on_home();
  }
  // Every device that may take part: those ready, and those that may join.
  std::vector<int> may_take_part = participants;
  may_take_part.insert(may_take_part.end(), building.begin(), building.end());

  auto job = std::make_unique<LaunchJob>();
  job->services = &services;
  if (!split_geometry(services, *kernel, queue_record->device, may_take_part, work_dim, offset, global, local,
                      job->geometry))
    return not_split("invalid_launch");  // the driver gives the app its error code
  if (below_size_rule(job->geometry.work_items())) return too_small();
  if (job->geometry.groups_along_split() < 2) return lasting("too_small");

  // Arguments: every one set; buffers tracked, grouped by root buffer.
  if (const char* reason = bind_arguments(services, *info, args, *job)) return not_split(reason);
  capture_footprint_inputs(*info, args, *job);
  // Much data for the other devices to read: a first split would move it before it could gain
  // anything (benchmarks/saxpy and jacobi beside a second H100: 1 GiB buffers and launches of about a
  // millisecond, whose first runs lost 0.4 to 0.5 s to one split; saxpy over two PoCL devices, into
  // their new buffers, 0.22 s against 15 ms). Under auto such a launch is timed on home first, and
  // split once home takes as long as those moves. Those of its footprint: a kernel over part of large
  // buffers moves that part (the whole buffers first: the footprint is evaluated only where they keep
  // the launch on home).
  auto keeps_on_home = [&](uint64_t bytes) {
    return moves_keep_on_home(services, home, may_take_part, bytes, home_key, split_seconds, !info->loops);
  };
  if (const uint64_t bound = bytes_read(*info, *job);
      keeps_on_home(bound) && keeps_on_home(footprint_bytes_read(*job, bound)))
    return too_small();
  // The policy's gate before the check of the chunks: a launch it keeps on home needs none, and the
  // check evaluates every footprint of several pieces (most of a plan's time in benchmarks/lu, whose
  // arguments change at every launch). A launch it would split that the check keeps on home was
  // numbered all the same; it ends here, and so does its place among the splits in flight.
  std::optional<sched::LaunchShape> asked;
  const std::string drained = drained_home_key(home_key);
  if (const char* reason =
          policy_keeps_on_home(services, kernel_key, drained, *job, may_take_part, home, job->gate, asked)) {
    if (job->gate) {
      decision.gate = std::make_shared<const report::GateRecord>(*job->gate);
      decision.gate_launch = job->gate->launch;
      // A verdict against a split measured at this size: home's own time of the launch, measured from an
      // idle queue, takes the place of the gate's estimate from home's chunks (sched/policy.h,
      // home_measured_seconds). Timed like the launches of few work-items, the first few. Not a verdict
      // from a larger size: each of a factorization's sizes would drain the queue once (benchmarks/lu
      // over two devices: 700 launches, 0.2 s).
      if (std::string(reason) == "one_device_pays" && job->gate->split_seconds >= 0 && !job->gate->measured_size &&
          services.executor().home_launch_times().wants_timing(drained)) {
        decision.time_on_home_key = drained;
        decision.time_drained = true;
      }
    }
    repeat.policy_shape = std::move(asked);
    return lasting(reason);
  }
  // A probe measures the split again: home's own time is measured again too, by the launches it keeps
  // after the probe (HomeLaunchTimes::renew), so that the verdict weighs two times of one moment.
  if (job->gate && job->gate->probe) services.executor().home_launch_times().renew(drained);
  // Never wrong (docs/design.md, "What is split"): chunks that read or write what another writes stay
  // on one device, whatever the policy.
  std::string verdict = chunk_verdict(*program, kernel->name, *job, size_t(services.settings().split_check_pieces));
  if (!verdict.empty()) {
    // The gate numbered it as a split: it is counted as a launch run on home, as preparing_on_home does.
    if (auto history = services.executor().history(); history && job->launch_number)
      history->note_launch(kernel_key, job->geometry.work_items());
    decision.not_split_reason = verdict;
    repeat.keep = true;
    return decision;
  }
  // Home's build (of a rewritten program: the app's own serves otherwise) is the first of the builds
  // and takes about as long as the app's own: a launch worth splitting waits for it, up to
  // home_build_wait where nothing has timed it on home (it could take much longer there), else
  // within home_budget (docs/design.md, "One-time costs").
  if (home_building &&
      !(home_budget ? wait_for_home_build_within(*program, home, *home_budget)
                    : wait_for_build(*program, home, true,
                                     home_build_wait(services.settings().auto_home_build_wait, *program))))
    return preparing_on_home();

  // Capture: from here on the job owns retained buffers and must run. Begun before the first capture:
  // should one throw (an allocation), the job's end still releases those made (a use not captured has
  // split number 0, which no state holds).
  job->buffer_uses_begun = true;
  for (auto& use : job->roots) {
    std::lock_guard lock(use.root->state->mutex());
    use.generation_at_enqueue = use.root->state->generation();
    use.split_number = use.root->state->split_captured(queue);  // until end_buffer_uses (exec/home_sync.h)
  }
  for (const auto& binding : job->bindings) {
    if (binding.kind != ArgBinding::Kind::Buffer) continue;
    if (services.next().clRetainMemObject(binding.app_mem) == CL_SUCCESS) job->retained.push_back(binding.app_mem);
  }
  job->kernel = kernel;
  job->program = program;
  job->kernel_name = kernel->name;
  job->rewrite = info->uses_launch_builtins;
  job->args = std::move(args);
  job->app_queue = queue;
  job->app_context = queue_record->context;
  job->home_device = queue_record->device;
  job->home = home;
  job->devices = participants;
  job->joiners = building;
  decision.job = std::move(job);
  return decision;
}

}  // namespace

LaunchDecision plan_launch(Services& services, cl_command_queue queue, cl_kernel kernel_handle, cl_uint work_dim,
                           const size_t* offset, const size_t* global, const size_t* local) {
  const LaunchRequest request{queue, work_dim, offset, global, local};
  auto kernel = services.registries().kernels.find(kernel_handle);
  RepeatableDecision repeat;
  repeat.versions = PlanVersions::now(services);
  std::vector<model::KernelArgValue> args;
  LaunchDecision decision = plan(services, kernel, request, repeat, args);
  services.executor().repeated_launches().remember(services, kernel, request, args, decision, repeat);
  return decision;
}

bool repeated_launch(Services& services, cl_command_queue queue, cl_kernel kernel, cl_uint work_dim,
                     const size_t* offset, const size_t* global, const size_t* local, LaunchDecision& decision) {
  return services.executor().repeated_launches().find(services, services.registries().kernels.find(kernel),
                                                      LaunchRequest{queue, work_dim, offset, global, local}, decision);
}

}  // namespace coex::exec
