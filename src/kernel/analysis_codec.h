// A program's analysis as JSON: what the analysis process (kernel/analysis_process.h) sends back
// to the app's process. Every field of ProgramInfo travels, the footprint models' definitions with
// them, so that a decoded analysis plans, checks and rewrites as the one made in the app's process.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "kernel/kernel_analysis.h"

namespace coex::kernel {

nlohmann::json program_info_to_json(const ProgramInfo& info);
// False, with the reason, when `j` is not an analysis of this version's shape; `info` is then unset.
bool program_info_from_json(const nlohmann::json& j, ProgramInfo& info, std::string* why);

}  // namespace coex::kernel
