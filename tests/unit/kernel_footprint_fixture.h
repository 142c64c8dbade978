// Helpers of the footprint tests (kernel_footprint_test.cpp, kernel_footprint_bounded_test.cpp):
// small launch geometries, argument bytes, and kernels analysed from source text or the corpus.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "kernel/footprint.h"
#include "kernel/kernel_analysis.h"
#include "kernel_corpus.h"

namespace coex::kernel::testing {

using Ranges = std::vector<std::pair<uint64_t, uint64_t>>;

inline LaunchGeometry geometry_1d(uint64_t global, uint64_t local, uint64_t offset = 0) {
  LaunchGeometry g;
  g.work_dim = 1;
  g.global_size[0] = global;
  g.local_size[0] = local;
  g.global_offset[0] = offset;
  return g;
}

inline LaunchGeometry geometry_2d(uint64_t gx, uint64_t gy, uint64_t lx, uint64_t ly, uint32_t split) {
  LaunchGeometry g;
  g.work_dim = 2;
  g.global_size[0] = gx;
  g.global_size[1] = gy;
  g.local_size[0] = lx;
  g.local_size[1] = ly;
  g.split_dim = split;
  return g;
}

template <typename T>
inline std::vector<unsigned char> bytes_of(T value) {
  std::vector<unsigned char> b(sizeof(T));
  std::memcpy(b.data(), &value, sizeof(T));
  return b;
}

// The analysed kernel (from source text) and its footprint model.
struct Analysed {
  ProgramInfo info;
  const KernelInfo* kernel = nullptr;
};

inline Analysed analyse(const std::string& source, const std::string& name, const std::string& options = "") {
  Analysed a;
  a.info = analyze_program(source, options);
  a.kernel = a.info.find(name);
  return a;
}

inline Analysed analyse_corpus(const std::string& file, const std::string& name) {
  std::string source = read_text(corpus_dir() / (file + ".cl"));
  return analyse(source, name);
}

inline Footprint evaluate(const Analysed& a, const LaunchGeometry& g, const ArgValues& v, uint64_t g0, uint64_t g1) {
  EXPECT_NE(a.kernel, nullptr);
  if (!a.kernel) return {};
  EXPECT_NE(a.kernel->footprint, nullptr) << a.kernel->name << ": " << a.kernel->not_split_reason;
  if (!a.kernel->footprint) return {};
  Footprint fp = a.kernel->footprint->evaluate(g, v, g0, g1);
  EXPECT_EQ(fp.args.size(), a.kernel->args.size());
  return fp;
}

inline ArgValues values(size_t args, std::vector<std::pair<size_t, std::vector<unsigned char>>> set) {
  ArgValues v;
  v.bytes.resize(args);
  for (auto& [i, b] : set) v.bytes[i] = b;
  return v;
}

}  // namespace coex::kernel::testing
