#include "exec/device_kernels.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "config/fault_spec.h"
#include "config/settings.h"
#include "devices/device_set.h"
#include "exec/background_tasks.h"
#include "exec/compile_ahead.h"
#include "exec/deferred_app_binary.h"
#include "exec/executor.h"
#include "exec/exit_guard.h"
#include "exec/kept_binaries.h"
#include "exec/kept_binary_choice.h"
#include "exec/late_devices.h"
#include "exec/pocl_compiles.h"
#include "exec/pocl_kernel_cache.h"
#include "exec/policy_binding.h"
#include "exec/program_analysis.h"
#include "exec/shared_binaries.h"
#include "kernel/analysis_process.h"
#include "report/report.h"
#include "report/trace.h"

namespace coex::exec {
namespace {

// The delays of the slow_build and slow_analysis faults (testing aids): until `done` holds or `limit`
// has passed, cut short when the process exits.
template <typename Done>
void wait_unless_exiting(std::chrono::milliseconds limit, Done done) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!done() && !exit_begun() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

void wait_a_second_unless_exiting() {
  wait_unless_exiting(std::chrono::seconds(1), [] { return false; });
}

// COEX_FAULT=slow_analysis: the analysis begins a second after the program's first launch that waits
// for it (auto_analysis_wait), or ten seconds late where none does. Counted from that launch, not from
// the build: on a loaded machine the app itself can take longer than a second to reach its first launch.
void slow_analysis_fault(Services& services, const model::ProgramRecord& program) {
  if (!config::fault_injected(services.settings().fault, config::FaultSpec::Kind::SlowAnalysis, -1)) return;
  wait_unless_exiting(std::chrono::seconds(10), [&program] { return program.analysis_waited.load(); });
  wait_a_second_unless_exiting();
}

std::string build_log(const cl_icd_dispatch& cl, cl_program program, cl_device_id device) {
  size_t size = 0;
  cl.clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
  std::string log(size, '\0');
  if (size) cl.clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
  return log;
}

// COEX_FAULT=build:<index> (a testing aid): that device's builds fail, as a driver's would.
bool build_fault_injected_on(const Services& services, int device) {
  return config::fault_injected(services.settings().fault, config::FaultSpec::Kind::Build, device);
}

// The program built for `device` (in the app's context or in the device's shadow context), built on
// first need; a build under way elsewhere (a prebuild) is waited for. The caller reads the result
// under build.mutex.
model::DeviceBuild& device_build(Services& services, model::ProgramRecord& program, int device, bool in_app_context,
                                 cl_context app_context) {
  const cl_icd_dispatch& cl = services.next();
  model::DeviceBuild* slot = nullptr;
  {
    std::lock_guard lock(program.mutex);
    slot = &program.builds[{device, in_app_context}];  // map nodes stay put
  }
  model::DeviceBuild& build = *slot;
  std::lock_guard build_lock(build.mutex);
  if (build.program || build.failed) return build;  // built, or tried and failed
  // Home needs no build of coex's own when the analysis rewrote nothing: the app's program serves
  // (use_app_program_on_home, on an app thread). A worker must not take it: the app may have
  // released it by then (PoCL asserted on the retain in reliability's bad_input).
  if (in_app_context && analysis_ready(program) && program.rewritten_source.empty()) {
    build.finished.store(true, std::memory_order_release);  // nothing to build: the other builds go on
    return build;
  }
  const devices::Device& d = services.devices().at(device);
  cl_context context = in_app_context ? app_context : services.devices().shadow_context(device);
  if (!context) {
    build.failed = true;
    build.finished.store(true, std::memory_order_release);
    return build;
  }
  // One build serves every kernel of the program: the rewrite leaves kernels that need no
  // rewrite as they are, so when any kernel needs it, every device builds the rewritten source.
  std::string source, options;
  bool rewritten = false;
  {
    std::lock_guard lock(program.mutex);
    rewritten = !program.rewritten_source.empty();
    source = rewritten ? program.rewritten_source : program.source;
    options = program.build_options;
  }
  // Home builds coex's own only where the analysis rewrote the program (else the app's program serves it).
  const KeptBinary kept =
      kept_binary_for(services, d, device, rewritten ? home_of(services, program) : -1, source, options);
  options = own_build_options(d, options, device);
  // COEX_FAULT=slow_build:<index> (a testing aid): the build begins a second late.
  if (config::fault_injected(services.settings().fault, config::FaultSpec::Kind::SlowBuild, device))
    wait_a_second_unless_exiting();
  auto started = std::chrono::steady_clock::now();
  cl_int err = CL_SUCCESS;
  std::vector<unsigned char> to_keep;  // the keeper's binary, when this device builds from it
  pocl_kernel_cache::ProgramTimes before_source_build;  // PoCL's cache then, where a lone keeper builds
  {
    // One build at a time per platform (exec/pocl_compiles.h): eight 0.7 s builds end 0.8 to 6.0 s
    // after the app's clBuildProgram, but each device is ready as soon as its own is done.
    auto compile_lock = lock_build(services, device);
    if (exit_begun()) {  // nobody needs it now, and the compiler is about to be torn down
      build.failed = true;
      build.finished.store(true, std::memory_order_release);
      return build;
    }
    // Looked for after the wait for the platform's build lock (PoCL's): the build that held it may be
    // of the same kind.
    int built_by = -1;
    std::vector<unsigned char> binary = binary_of_same_kind(services, program, device, rewritten, &built_by);
    if (built_by == kept.keeper && !kept.folder.empty()) to_keep = binary;  // before its hash is shifted
    if (binary.empty()) {
      binary = read_kept_binary(kept.folder, kept.key);
      build.from_kept_binary = !binary.empty();
    }
    // A kept binary is the lowest device of the kind's own build (kept below), with its build hash:
    // that device keeps the hash, the others shift it as from a donor's, so that each device has the
    // hash, and PoCL's cache folder of compiled work-group functions, it had in the run that kept it.
    const bool own_hash = build.from_kept_binary && kept.keeper == device;
    const std::string family = d.is_pocl() ? pocl_kernel_cache::binary_hash(binary) : "";
    if (!binary.empty() && (!d.is_pocl() || own_hash || give_pocl_binary_its_own_hash(binary, device)))
      build.program = build_from_binary(cl, context, d.id, binary, options);
    build.from_binary = build.program != nullptr;
    build.from_kept_binary = build.from_kept_binary && build.from_binary;
    // The hashes a first run's sharing goes by (shared_first_runs.h); the donor's were noted when its
    // binary was read (note_donor_hash).
    if (build.from_binary && !family.empty()) {
      std::lock_guard lock(program.mutex);
      program.pocl_hashes[{device, in_app_context}] = {pocl_kernel_cache::binary_hash(binary), family};
    }
    if (!build.program) {
      const char* text = source.c_str();
      size_t length = source.size();
      before_source_build = before_keepers_build(d, kept, device);
      build.program = cl.clCreateProgramWithSource(context, 1, &text, &length, &err);
      if (build.program) err = cl.clBuildProgram(build.program, 1, &d.id, options.c_str(), nullptr, nullptr);
    }
  }
  if (auto* t = services.trace())
    t->record("build", "build", device, started, std::chrono::steady_clock::now(),
              {{"from_binary", build.from_binary}, {"kept_binary", build.from_kept_binary}});
  if (build.program)
    services.report().record_build(device,
                                   std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(),
                                   err != CL_SUCCESS, build.from_binary);
  if (err == CL_SUCCESS && build_fault_injected_on(services, device)) err = CL_BUILD_PROGRAM_FAILURE;
  if (err != CL_SUCCESS) {
    spdlog::warn("device {} ({}) cannot build program {} (error {}): it gets no work from its kernels. {}", device,
                 d.name, static_cast<void*>(program.handle), err,
                 build.program ? build_log(cl, build.program, d.id) : "");
    build.failed = true;
  }
  // Others of its kind build from this one (exec/shared_binaries.h, "When is a binary read"): its binary
  // is read now, while no launch can run the program.
  if (!build.failed && !build.from_binary && another_of_kind(services, device, services.devices().selected())) {
    build.binary = read_build_binary(services, build.program, device);
    std::lock_guard lock(program.mutex);
    note_donor_hash(program, {device, in_app_context}, build.binary);
  }
  build.finished.store(true, std::memory_order_release);
  // The keeper's build from source (none kept yet, or one the driver refused or no binary of coex's)
  // is kept, as read for this device's build from it, or by the keeper itself where no other device
  // of its kind builds from it (kept_binary_for) and the read compiles nothing (keeper_reads_binary).
  // The keeper reads it with build.mutex still held, so that no launch creates a kernel of
  // the program at once, and under the platform's build lock, as the other devices of the kind read
  // it (binary_of_same_kind): PoCL 3.1 fills a program's binaries on demand without a lock of its own
  // (ThreadSanitizer saw two reads race in `apps.threads4` on two pthread devices).
  const auto keep_started = std::chrono::steady_clock::now();
  if (build.program && !build.failed && !build.from_binary && kept.keeper == device && kept.keeper_writes &&
      !kept.folder.empty() && !exit_begun()) {
    auto compile_lock = lock_build(services, device);
    const bool read = keeper_reads_binary(cl, d, build.program, before_source_build);
    if (read && !exit_begun()) to_keep = program_binary(cl, build.program, d.id);
    if (auto* t = services.trace(); t && !read)
      t->record("binary not kept (its read would compile)", "build", device, keep_started, keep_started);
  }
  if (!to_keep.empty()) {
    const bool written = write_kept_binary(kept.folder, kept.key, to_keep);
    if (auto* t = services.trace())
      t->record("keep binary", "build", device, keep_started, std::chrono::steady_clock::now(),
                {{"written", written}, {"keeper", kept.keeper}});
  }
  return build;
}

// Whether `device`'s build of the program has run, without waiting for one under way.
bool build_finished(model::ProgramRecord& program, int device, bool in_app_context) {
  std::lock_guard lock(program.mutex);
  auto it = program.builds.find({device, in_app_context});
  return it != program.builds.end() && it->second.finished.load(std::memory_order_acquire);
}

// Waits for `device`'s build of the program to finish, bounded by the compile lock's wait, by exit and
// by that device being left out (its build task is then skipped). Builds on one platform run one at a
// time (exec/pocl_compiles.h), in no set order otherwise.
void wait_for_build_of(Services& services, model::ProgramRecord& program, int device, bool in_app_context) {
  const auto deadline = std::chrono::steady_clock::now() + kCompileLockWait;
  while (!build_finished(program, device, in_app_context) && !exit_begun() && !services.executor().left_out(device) &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

}  // namespace

model::KernelGroupInfo kernel_group_info(const cl_icd_dispatch& cl, cl_kernel kernel, model::KernelRecord* record,
                                         cl_device_id device) {
  if (record) {
    std::lock_guard lock(record->mutex);
    auto it = record->group_info.find(device);
    if (it != record->group_info.end()) return it->second;
  }
  model::KernelGroupInfo info;
  if (cl.clGetKernelWorkGroupInfo(kernel, device, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof(info.compiled),
                                  info.compiled, nullptr) != CL_SUCCESS)
    info.compiled[0] = info.compiled[1] = info.compiled[2] = 0;
  if (cl.clGetKernelWorkGroupInfo(kernel, device, CL_KERNEL_WORK_GROUP_SIZE, sizeof(info.limit), &info.limit,
                                  nullptr) != CL_SUCCESS)
    info.limit = 0;
  if (record) {
    std::lock_guard lock(record->mutex);
    record->group_info[device] = info;
  }
  return info;
}

size_t max_group_size(const cl_icd_dispatch& cl, const devices::DeviceSet& devices, model::KernelRecord& kernel,
                      cl_device_id home, const std::vector<int>& participants, size_t compiled[3]) {
  size_t limit = SIZE_MAX;
  for (int index : participants) limit = std::min(limit, devices.at(index).max_work_group_size);
  const model::KernelGroupInfo info = kernel_group_info(cl, kernel.handle, &kernel, home);
  if (info.limit) limit = std::min(limit, info.limit);
  for (int d = 0; d < 3; ++d) compiled[d] = info.compiled[d];
  return limit == SIZE_MAX ? 1 : limit;
}

bool split_geometry(Services& services, model::KernelRecord& kernel, cl_device_id home, const std::vector<int>& devices,
                    cl_uint work_dim, const size_t* offset, const size_t* global, const size_t* local,
                    LaunchGeometry& out) {
  size_t compiled[3] = {0, 0, 0};
  const size_t limit = max_group_size(services.next(), services.devices(), kernel, home, devices, compiled);
  const bool made =
      make_geometry(work_dim, offset, global, local ? local : (compiled[0] ? compiled : nullptr), limit, out);
  if (!local && compiled[0]) out.local_given = false;
  return made;
}

cl_kernel device_kernel(const LaunchJob& job, int device) {
  Services& services = *job.services;
  // As its task posted to its worker would (prepare_program), a device of home's platform lets home's
  // build, posted too, go first: a split's threads reach here in no set order, and the device that
  // won the platform's build lock built from source, home from its binary, and no binary was kept
  // (layer.kept_binaries with the app on device 1, under load).
  if (device != job.home && services.devices().at(device).platform == services.devices().at(job.home).platform &&
      !build_finished(*job.program, device, false)) {
    bool home_posted = false;
    {
      std::lock_guard lock(job.program->mutex);
      home_posted = job.program->builds_posted.count({job.home, true}) > 0;
    }
    if (home_posted) wait_for_build_of(services, *job.program, job.home, true);
  }
  model::DeviceBuild& build = device_build(services, *job.program, device, device == job.home, job.app_context);
  std::unique_lock lock(build.mutex);
  if (build.failed || !build.program) return nullptr;
  auto it = build.kernels.find(job.kernel_name);
  if (it != build.kernels.end()) return it->second;
  cl_int err = CL_SUCCESS;
  cl_kernel kernel = services.next().clCreateKernel(build.program, job.kernel_name.c_str(), &err);
  if (!kernel) {
    spdlog::warn("device {}: cannot create kernel {} (error {})", device, job.kernel_name, err);
    return nullptr;
  }
  build.kernels[job.kernel_name] = kernel;
  return kernel;
}

bool first_launch_from_build(const LaunchJob& job, int device) {
  model::DeviceBuild* build = nullptr;
  {
    std::lock_guard lock(job.program->mutex);
    auto it = job.program->builds.find({device, device == job.home});
    if (it == job.program->builds.end()) return true;
    build = &it->second;
  }
  std::lock_guard lock(build->mutex);
  return build->launched.insert(job.kernel_name).second;
}

void prepare_program(Services& services, const std::shared_ptr<model::ProgramRecord>& program, cl_context app_context,
                     int home, const std::vector<int>& devices) {
  if (program->origin != model::ProgramOrigin::Source) return;
  // Late devices not let in yet (exec/late_devices.h) get no build, nor are built from.
  const std::vector<int> building =
      devices_without(devices, services.executor().late_devices().waiting_among(devices, home));
  std::vector<int> to_post;
  {
    std::lock_guard lock(program->mutex);
    for (int device : building)
      if (!waits_for_app_binary(services, *program, home, device) &&
          program->builds_posted.insert({device, device == home}).second)
        to_post.push_back(device);
  }
  if (to_post.empty()) return;
  // On the devices' own threads. The first to start runs the analysis
  // (the others wait for it: they build its rewritten source); when no kernel may be split,
  // nothing is built.
  const cl_platform_id home_platform = services.devices().at(home).platform;
  for (int device : to_post) {
    const bool in_app_context = device == home;
    // The home build goes into the app's context: held until the task is gone, run or skipped.
    std::shared_ptr<void> held = in_app_context ? hold_app_context(services, app_context) : nullptr;
    // A device of home's platform lets home's build go first, since no split can start without it;
    // then the first of its kind, whose build it builds from.
    const bool after_home = !in_app_context && services.devices().at(device).platform == home_platform;
    const int after = in_app_context ? -1 : first_of_kind(services, device, building);
    post_background_task(services.executor(), device,
                         [&services, program, app_context, device, home, in_app_context, after_home, after, held] {
                           if (!analyse_traced(services, *program, device)) return;
                           if (after_home) wait_for_build_of(services, *program, home, true);
                           if (after >= 0) wait_for_build_of(services, *program, after, after == home);
                           compile_ahead::wait_before_build(services, *program, device);
                           device_build(services, *program, device, in_app_context, app_context);
                         });
  }
}

bool use_app_program_on_home(Services& services, model::ProgramRecord& program, int home) {
  if (!analysis_ready(program) || !program.rewritten_source.empty() || !program.handle) return false;
  model::DeviceBuild* slot = nullptr;
  {
    std::lock_guard lock(program.mutex);
    slot = &program.builds[{home, true}];
  }
  std::lock_guard build_lock(slot->mutex);
  if (!slot->program && !slot->failed) {
    if (services.next().clRetainProgram(program.handle) != CL_SUCCESS) return false;
    slot->program = program.handle;
    slot->finished.store(true, std::memory_order_release);
  }
  return true;
}

double home_build_wait(double setting_seconds, const model::ProgramRecord& program) {
  return std::max(setting_seconds, std::min(kLongestBuildWait, 2 * program.app_build_seconds.load()));
}

bool wait_for_build(model::ProgramRecord& program, int device, bool in_app_context, double seconds) {
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
  for (;;) {
    if (build_finished(program, device, in_app_context)) return true;
    if (exit_begun() || std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
}

double home_build_budget_left(const model::ProgramRecord& program, double budget) {
  return budget - double(program.home_build_waited_ns.load(std::memory_order_relaxed)) * 1e-9;
}

bool wait_for_home_build_within(model::ProgramRecord& program, int home, double budget) {
  const auto since = std::chrono::steady_clock::now();
  const bool built = wait_for_build(program, home, true, home_build_budget_left(program, budget));
  program.home_build_waited_ns.fetch_add(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - since).count(),
      std::memory_order_relaxed);
  return built;
}

std::vector<int> devices_ready(Services& services, const std::shared_ptr<model::ProgramRecord>& program,
                               cl_context app_context, int home, const std::vector<int>& devices) {
  prepare_program(services, program, app_context, home, devices);
  std::vector<int> ready;
  if (!analysis_ready(*program)) return ready;
  for (int device : devices)
    if (build_finished(*program, device, device == home)) ready.push_back(device);
  return ready;
}

void prepare_analysis(Services& services, const std::shared_ptr<model::ProgramRecord>& program, int device) {
  {
    std::lock_guard lock(program->mutex);
    if (program->analysis_posted) return;
    program->analysis_posted = true;
  }
  post_background_task(
      services.executor(), device, [&services, program, device] { analyse_traced(services, *program, device); }, false);
}

bool analyse_traced(Services& services, model::ProgramRecord& program, int track, bool app_thread) {
  std::optional<std::chrono::steady_clock::time_point> started;
  const bool splittable = analyse_program(program, [&] {
    started = std::chrono::steady_clock::now();
    if (!app_thread) slow_analysis_fault(services, program);  // a fault of the background analysis
  });
  if (auto* t = services.trace(); t && started) {
    nlohmann::json args = nlohmann::json::object();
    if (app_thread) args["app_thread"] = true;
    if (program.analysis_done.load(std::memory_order_acquire) && program.analysis_kept)
      args["kept"] = true;
    else if (kernel::analysis_process::started_by_launcher())
      args["process_from"] = "coex run";  // libclang loaded while the app started
    t->record("analysis", "build", track, *started, std::chrono::steady_clock::now(),
              args.empty() ? nlohmann::json() : std::move(args));
  }
  // A process started at the build compiles the app's program for splits that will run the rewrite,
  // or never come: ended now rather than at the exit, and one serves the rewrite instead where it
  // can (docs/design.md, "Compiled ahead").
  if (splits_run_none_of_app_program(program)) compile_ahead::serve_rewrite(services, program);
  return splittable;
}

void when_splittable(Services& services, const std::shared_ptr<model::ProgramRecord>& program, int device,
                     std::function<void()> then) {
  post_background_task(
      services.executor(), device,
      [&services, program, device, then = std::move(then)] {
        if (analyse_traced(services, *program, device)) then();
      },
      false);
}

std::shared_ptr<void> hold_app_context(Services& services, cl_context app_context) {
  if (services.next().clRetainContext(app_context) != CL_SUCCESS) return nullptr;
  return std::shared_ptr<void>(
      app_context, [release = services.next().clReleaseContext](void* c) { release(static_cast<cl_context>(c)); });
}

void release_device_builds(const cl_icd_dispatch& cl, model::ProgramRecord& program) {
  // The launches a deferred read was to wait for (exec/deferred_app_binary.h); not from inside that
  // read (an event callback its flush ran), which releases them itself.
  if (std::unique_lock read_lock(program.app_binary_read, std::try_to_lock); read_lock) {
    for (auto& [queue, events] : program.gated_launches)
      for (cl_event event : events) cl.clReleaseEvent(event);
    program.gated_launches.clear();
  }
  std::lock_guard lock(program.mutex);
  for (auto& [key, build] : program.builds) {
    for (auto& [name, kernel] : build.kernels) {
      forget_first_runs(kernel);
      cl.clReleaseKernel(kernel);
    }
    if (build.program) cl.clReleaseProgram(build.program);
  }
  program.app_binary.clear();
  program.app_binary_device = -1;
  end_app_binary_deferral(program);
  compile_ahead::not_needed(program);
  program.builds.clear();
  program.builds_posted.clear();
}

}  // namespace coex::exec
