#pragma once

#include <functional>
#include <optional>
#include <string>

#include "kernel/kernel_analysis.h"
#include "model/records.h"

namespace coex::exec {

// Runs the program's analysis now (clBuildProgram's prebuild), once per program (libclang parse),
// with the rewritten source prepared when some kernel needs it. True when some kernel may be split.
// `before_parse` runs first on the thread that makes the analysis (a testing aid's delay).
bool analyse_program(model::ProgramRecord& program, const std::function<void()>& before_parse = {});

// The analysis of `kernel_name` in `program` (analyse_program's, run first if it has not run). Null
// when the kernel is not in the analysis.
const kernel::KernelInfo* analysed_kernel(model::ProgramRecord& program, const std::string& kernel_name);

// Whether the analyses can load libclang (false with the reason when they cannot): the analysis
// process's answer where one runs (kernel/analysis_process.h), else the load here, where known
// without waiting: nullopt while the process (or the load posted here) has not said yet. The first
// launch's notice asks this: it must not wait for an analysis under way.
std::optional<bool> libclang_known(std::string* why_not);

// The line that says no kernel can be analysed (`why`: libclang's load failed so). Where this build of
// coex kept analyses, or this run read one (exec/kept_analyses.h), it says that only programs an earlier
// run analysed are split: a program whose analysis is read later in the run is split all the same.
std::string missing_libclang_notice(const std::string& why);

// Whether the analysis has run (without waiting for one under way, as analysed_kernel would).
bool analysis_ready(const model::ProgramRecord& program);

// Whether the analysis has run and says no kernel of the program may be split (a global atomic in
// each, a source it could not parse, no libclang): then nothing of coex's is built for it.
bool analysed_unsplittable(const model::ProgramRecord& program);

// Whether the analysis has run and says no split will run the app's program: rewritten (every split
// runs the rewrite, which the devices build from source) or with nothing to split. Then nothing of it
// is read or compiled ahead (exec/deferred_app_binary.h, exec/compile_ahead.h).
bool splits_run_none_of_app_program(const model::ProgramRecord& program);

// Waits up to `seconds` for the analysis to have run (posted to a worker); whether it has.
bool wait_for_analysis(const model::ProgramRecord& program, double seconds);

}  // namespace coex::exec
