// What the Oclgrind plugin (access_recorder_plugin.cpp) saw of one kernel launch: per work-group,
// per kernel argument, the bytes loaded and stored through that argument's buffer, as offsets from
// the argument's own start. The oracle driver, in the same process, reads it through
// coex_oracle_last_run() once the launch has finished.
#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "coherence/interval_set.h"

namespace coex::oracle {

using GroupId = std::array<size_t, 3>;

struct ArgAccess {
  coherence::IntervalSet loads;
  coherence::IntervalSet stores;
};

struct KernelRun {
  std::string kernel;
  size_t launches = 0;                            // kernels begun since the plugin was loaded
  std::map<GroupId, std::vector<ArgAccess>> groups;  // by work-group, then by argument index
  size_t unattributed = 0;                        // global accesses through no argument (program scope)'s buffer
  std::vector<std::string> errors;                // Oclgrind's error messages during the launch
};

}  // namespace coex::oracle

// Exported by the plugin: the latest launch, valid until the next one begins.
extern "C" const coex::oracle::KernelRun* coex_oracle_last_run();
