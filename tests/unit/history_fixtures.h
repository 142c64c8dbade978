// Chunk timings and temporary folders for the History's tests (sched_history_test.cpp, its
// throughputs, split times and launch numbers; sched_history_file_test.cpp, its file).
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "sched/policy.h"

namespace coex::sched::history_fixtures {

inline ChunkTiming timing(int device, uint64_t groups, double seconds, double transfer = 0) {
  ChunkTiming t;
  t.chunk = {device, 0, groups};
  t.start = 1;
  t.end = 1 + seconds;
  t.transfer_seconds = transfer;
  return t;
}

// An empty folder path of this process under the system's temporary folder (not made).
inline std::filesystem::path temp_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("coex_sched_history_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir;
}

}  // namespace coex::sched::history_fixtures
