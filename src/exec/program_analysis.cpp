#include "exec/program_analysis.h"

#include <spdlog/spdlog.h>

namespace coex::exec {

namespace {

// The caller holds program.mutex.
void analyse_locked(model::ProgramRecord& program) {
  if (!program.analysed) {
    program.analysed = true;
    program.info = kernel::analyze_program(program.source, program.build_options);
    if (!program.info.parse_error.empty())
      spdlog::info("program {}: kernel analysis failed: {}", static_cast<void*>(program.handle),
                   program.info.parse_error);
    bool needs_rewrite = false;
    for (const auto& k : program.info.kernels) needs_rewrite |= k.uses_launch_builtins && k.not_split_reason.empty();
    if (needs_rewrite) program.rewritten_source = kernel::rewrite_for_split(program.source, program.info);
    program.analysis_done.store(true, std::memory_order_release);
  }
}

}  // namespace

bool analyse_program(model::ProgramRecord& program) {
  if (program.origin != model::ProgramOrigin::Source) return false;
  std::lock_guard lock(program.mutex);
  analyse_locked(program);
  for (const auto& k : program.info.kernels)
    if (k.not_split_reason.empty()) return true;
  return false;
}

const kernel::KernelInfo* analysed_kernel(model::ProgramRecord& program, const std::string& kernel_name) {
  if (program.origin != model::ProgramOrigin::Source) return nullptr;
  std::lock_guard lock(program.mutex);
  analyse_locked(program);
  return program.info.find(kernel_name);
}

bool analysis_ready(const model::ProgramRecord& program) {
  return program.analysis_done.load(std::memory_order_acquire);
}

}  // namespace coex::exec
