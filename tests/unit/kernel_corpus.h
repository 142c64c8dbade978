// The corpus of OpenCL C programs in tests/unit/kernels/: each NAME.cl has a sidecar NAME.json with
// the build options and the verdict expected for every kernel and argument:
//   {"build_options": "-DN=4",            (optional)
//    "kernels": [{"name": "k", "not_split_reason": "", "uses_launch_builtins": true,
//                 "args": [{"name": "a", "kind": "global", "read": true, "written": false,
//                           "pointee_size": 4, "value_size": 4}]}]}
// Fields left out of an argument are not checked.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "kernel/libclang_api.h"

namespace coex::kernel::testing {

// COEX_TEST_LIBCLANG=libclang-14.so.1 runs a test binary against that libclang rather than the
// newest one found (several may be installed: Debian 12 has 14 and 15).
inline const bool kLibclangChoice = [] {
  if (const char* path = std::getenv("COEX_TEST_LIBCLANG")) libclang::set_preferred_path(path);
  return true;
}();

struct CorpusProgram {
  std::string name;  // file name without .cl
  std::string source;
  std::string build_options;
  nlohmann::json expected;
};

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::filesystem::path corpus_dir() { return std::filesystem::path(COEX_SOURCE_DIR) / "tests/unit/kernels"; }

inline std::vector<CorpusProgram> load_corpus() {
  std::vector<CorpusProgram> out;
  for (const auto& entry : std::filesystem::directory_iterator(corpus_dir())) {
    if (entry.path().extension() != ".cl") continue;
    CorpusProgram p;
    p.name = entry.path().stem().string();
    p.source = read_text(entry.path());
    std::filesystem::path sidecar = entry.path();
    sidecar.replace_extension(".json");
    p.expected = nlohmann::json::parse(read_text(sidecar));
    p.build_options = p.expected.value("build_options", "");
    out.push_back(std::move(p));
  }
  std::sort(out.begin(), out.end(), [](const CorpusProgram& a, const CorpusProgram& b) { return a.name < b.name; });
  return out;
}

}  // namespace coex::kernel::testing
