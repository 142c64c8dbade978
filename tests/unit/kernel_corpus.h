// The corpus of OpenCL C programs in tests/unit/kernels/: each NAME.json names its program (NAME.cl
// beside it, or the "source" of a test app or benchmark: the string literals assigned to kSource
// there, joined) and holds the build options and the verdict expected for every kernel and argument:
//   {"source": "tests/apps/matmul.c",    (optional; default NAME.cl)
//    "build_options": "-DN=4",            (optional)
//    "kernels": [{"name": "k", "not_split_reason": "", "uses_launch_builtins": true,
//                 "args": [{"name": "a", "kind": "global", "read": true, "written": false,
//                           "pointee_size": 4, "value_size": 4,
//                           "read_tier": "exact", "write_tier": "none", "injective": true,
//                           "loose": "why the oracle may find this exact footprint > 10% larger"}],
//                 "launch": {...}}]}       (kernel_launch_spec.h)
// Fields left out of an argument are not checked. The tiers are those of the launch's first half of
// work-groups along its last dimension (what coex splits); "injective" and "cover" are the write
// footprint's writes_injective and writes_cover there.
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

inline std::filesystem::path source_dir() { return std::filesystem::path(COEX_SOURCE_DIR); }
inline std::filesystem::path corpus_dir() { return source_dir() / "tests/unit/kernels"; }

// The program of a test app or benchmark: the C string literals after `variable =` up to the `;`,
// joined (as clCreateProgramWithSource joins an array of strings). The apps all spell their
// sources this way; anything else in the file is not looked at.
inline std::string c_string_literals(const std::string& c_text, const std::string& variable) {
  // The first `variable` that an '=' follows (after an optional [N]): kSource, not kSources.
  size_t at = 0;
  for (;; at += variable.size()) {
    at = c_text.find(variable, at);
    if (at == std::string::npos) return "";
    size_t next = c_text.find_first_not_of(" []0123456789", at + variable.size());
    if (next != std::string::npos && c_text[next] == '=') break;
  }
  std::string out;
  for (size_t i = c_text.find('=', at) + 1; i < c_text.size() && c_text[i] != ';'; ++i) {
    if (c_text[i] != '"') continue;
    for (++i; i < c_text.size() && c_text[i] != '"'; ++i) {
      if (c_text[i] != '\\' || i + 1 >= c_text.size()) {
        out += c_text[i];
        continue;
      }
      char e = c_text[++i];
      out += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e == '0' ? '\0' : e;
    }
  }
  return out;
}

inline std::vector<CorpusProgram> load_corpus() {
  std::vector<CorpusProgram> out;
  for (const auto& entry : std::filesystem::directory_iterator(corpus_dir())) {
    if (entry.path().extension() != ".json") continue;
    CorpusProgram p;
    p.name = entry.path().stem().string();
    p.expected = nlohmann::json::parse(read_text(entry.path()));
    if (p.expected.contains("source")) {
      std::string file = p.expected.at("source").get<std::string>();
      p.source = c_string_literals(read_text(source_dir() / file), p.expected.value("source_variable", "kSource"));
    } else {
      std::filesystem::path cl = entry.path();
      p.source = read_text(cl.replace_extension(".cl"));
    }
    p.build_options = p.expected.value("build_options", "");
    out.push_back(std::move(p));
  }
  std::sort(out.begin(), out.end(), [](const CorpusProgram& a, const CorpusProgram& b) { return a.name < b.name; });
  return out;
}

}  // namespace coex::kernel::testing
