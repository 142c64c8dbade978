#include "exec/program_analysis.h"

#include <spdlog/spdlog.h>

namespace coex::exec {

const kernel::KernelInfo* analysed_kernel(model::ProgramRecord& program, const std::string& kernel_name) {
  if (program.origin != model::ProgramOrigin::Source) return nullptr;
  std::lock_guard lock(program.mutex);
  if (!program.analysed) {
    program.analysed = true;
    program.info = kernel::analyze_program(program.source, program.build_options);
    if (!program.info.parse_error.empty())
      spdlog::info("program {}: kernel analysis failed: {}", static_cast<void*>(program.handle),
                   program.info.parse_error);
    bool needs_rewrite = false;
    for (const auto& k : program.info.kernels) needs_rewrite |= k.uses_launch_builtins && k.not_split_reason.empty();
    if (needs_rewrite) program.rewritten_source = kernel::rewrite_for_split(program.source, program.info);
  }
  return program.info.find(kernel_name);
}

}  // namespace coex::exec
