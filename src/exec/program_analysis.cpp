#include "exec/program_analysis.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <optional>

#include "exec/exit_guard.h"
#include "exec/kept_analyses.h"
#include "kernel/analysis_process.h"
#include "kernel/libclang_api.h"

namespace coex::exec {

namespace {

// Whether the analysis left some kernel of the program splittable (no not_split_reason).
bool some_kernel_may_split(const kernel::ProgramInfo& info) {
  return std::any_of(info.kernels.begin(), info.kernels.end(),
                     [](const kernel::KernelInfo& k) { return k.not_split_reason.empty(); });
}

// Signalled at the end of every program's analysis: those waiting for one look whether it was theirs.
// Analyses are few (one per program), so one condition serves them all.
std::mutex& done_mutex() {
  static auto* m = new std::mutex;  // never destroyed: an analysis may end while the process exits
  return *m;
}
std::condition_variable& done_signal() {
  static auto* cv = new std::condition_variable;
  return *cv;
}

// The analysis of `source`: kept by an earlier run (`kept`: exec/kept_analyses.h), else made in the
// analysis process where one runs (kernel/analysis_process.h), else here; not here once the exit began
// (libclang's load and the parse would only hold it: docs/design.md, "Exit").
// `may_keep`: made by the analyser the kept analyses are keyed by (exec/kept_analyses.h: here, or by
// the analysis process of the `coex` program whose build ID was read at start).
kernel::ProgramInfo analysis_of(const std::string& source, const std::string& options, bool& kept, bool& may_keep) {
  if (std::optional<kernel::ProgramInfo> earlier = read_kept_analysis(source, options)) {
    kept = true;  // libclang is not asked: whether it loads says nothing of this analysis
    return std::move(*earlier);
  }
  std::optional<kernel::ProgramInfo> analysed = kernel::analysis_process::analyze(source, options);
  const bool here = !analysed && !exit_begun();
  may_keep = keyed_analyser_made(here, analysed ? kernel::analysis_process::served_build() : "");
  kernel::ProgramInfo info;
  if (analysed)
    info = std::move(*analysed);
  else if (here)
    info = kernel::analyze_program(source, options);
  else
    info.parse_error = "the app began to exit before the analysis";
  // The first launch's notice says so where it was known then that libclang cannot be loaded; an
  // analysis that ended later (or was first asked for by a later launch: every other device held back
  // until then) says it here, once, as a notice (a line of its own on stderr, shown at the default
  // level, warn). Made here, the analysis loaded libclang here.
  std::string why_no_libclang;
  const std::optional<bool> libclang =
      here ? kernel::libclang::load(&why_no_libclang) : libclang_known(&why_no_libclang);
  if (!libclang.value_or(true) && kernel::libclang::claim_missing_notice() &&
      spdlog::default_logger()->should_log(spdlog::level::warn))
    std::fprintf(stderr, "%s\n", missing_libclang_notice(why_no_libclang).c_str());
  return info;
}

// The libclang parse runs without program.mutex held: the app's threads take it at every launch
// (launch_planner.cpp) and must not wait tens of milliseconds for an analysis they do not need yet.
// The first caller claims the analysis (`analysed`); later ones wait for its end.
void analyse_once(model::ProgramRecord& program, const std::function<void()>& before_parse) {
  std::string source, options;
  bool mine = false;
  {
    std::lock_guard lock(program.mutex);
    if (!program.analysed) {
      program.analysed = true;
      mine = true;
      source = program.source;
      options = program.build_options;
    }
  }
  if (!mine) {  // claimed by another thread: wait for its end
    std::unique_lock lock(done_mutex());
    done_signal().wait(lock, [&] { return program.analysis_done.load(std::memory_order_acquire); });
    return;
  }
  if (before_parse) before_parse();
  bool kept = false, may_keep = false;
  kernel::ProgramInfo info = analysis_of(source, options, kept, may_keep);
  if (!info.parse_error.empty())
    spdlog::info("program {}: kernel analysis failed: {}", static_cast<void*>(program.handle), info.parse_error);
  bool needs_rewrite = false;
  for (const auto& k : info.kernels) needs_rewrite |= k.uses_launch_builtins && k.not_split_reason.empty();
  std::string rewritten = needs_rewrite ? kernel::rewrite_for_split(source, info) : std::string();
  {
    std::lock_guard lock(program.mutex);
    program.analysis_kept = kept;
    program.info = std::move(info);
    program.rewritten_source = std::move(rewritten);
  }
  {
    std::lock_guard lock(done_mutex());
    program.analysis_done.store(true, std::memory_order_release);
  }
  done_signal().notify_all();
  // Once the launches waiting for it have it: the write, and the folder's trim, are off their path.
  if (may_keep && !exit_begun()) keep_analysis(source, options, program.info);
}

}  // namespace

std::optional<bool> libclang_known(std::string* why_not) {
  using kernel::analysis_process::LibclangStatus;
  switch (kernel::analysis_process::libclang_status(why_not)) {
    case LibclangStatus::loaded:
      return true;
    case LibclangStatus::missing:
      return false;
    case LibclangStatus::not_said_yet:
      return std::nullopt;
    case LibclangStatus::none_runs:
      break;
  }
  return kernel::libclang::loaded_without_waiting(why_not);
}

std::string missing_libclang_notice(const std::string& why) {
  return kernel::libclang::missing_notice(why, analyses_read() || analyses_kept());
}

bool analyse_program(model::ProgramRecord& program, const std::function<void()>& before_parse) {
  if (program.origin != model::ProgramOrigin::Source) return false;
  analyse_once(program, before_parse);
  return some_kernel_may_split(program.info);
}

const kernel::KernelInfo* analysed_kernel(model::ProgramRecord& program, const std::string& kernel_name) {
  if (program.origin != model::ProgramOrigin::Source) return nullptr;
  analyse_once(program, {});
  return program.info.find(kernel_name);
}

bool analysis_ready(const model::ProgramRecord& program) {
  return program.analysis_done.load(std::memory_order_acquire);
}

bool analysed_unsplittable(const model::ProgramRecord& program) {
  return analysis_ready(program) && !some_kernel_may_split(program.info);
}

bool splits_run_none_of_app_program(const model::ProgramRecord& program) {
  return analysis_ready(program) && (!program.rewritten_source.empty() || !some_kernel_may_split(program.info));
}

bool wait_for_analysis(const model::ProgramRecord& program, double seconds) {
  // In steps: an analysis skipped at exit never signals.
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                            std::chrono::duration<double>(std::min(seconds, 3600.0)));
  std::unique_lock lock(done_mutex());
  while (!analysis_ready(program)) {
    if (exit_begun() || std::chrono::steady_clock::now() >= until) return false;
    done_signal().wait_for(lock, std::chrono::milliseconds(10));
  }
  return true;
}

}  // namespace coex::exec
