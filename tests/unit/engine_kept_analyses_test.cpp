// Kernel analyses kept on disk across runs (exec/kept_analyses.h): an analysis is read back only for
// the same source, options and build of coex, and only one that ran to its end is kept.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "exec/kept_analyses.h"
#include "kernel/analysis_codec.h"
#include "kernel/build_id.h"
#include "kernel/libclang_api.h"

using coex::exec::analyses_kept;
using coex::exec::keep_analyses_in;
using coex::exec::keep_analysis;
using coex::exec::keyed_analyser_made;
using coex::exec::read_kept_analysis;
using coex::kernel::file_build_id;
using coex::kernel::own_build_id;
using coex::kernel::ProgramInfo;

namespace {

const char* const kSource =
    "__kernel void scale(__global const float* in, __global float* out, float k) {\n"
    "  size_t i = get_global_id(0);\n"
    "  out[i] = k * in[i + 1];\n"
    "}\n";

std::string file_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

class KeptAnalyses : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ =
        std::filesystem::temp_directory_path() / ("coex-kept-analyses-" + std::to_string(::getpid()) + "-" +
                                                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(folder_);
    keep_analyses_in(folder_.string(), false, "");
  }
  void TearDown() override {
    keep_analyses_in("", false, "");
    std::filesystem::remove_all(folder_);
  }
  // A real analysis (footprints and all), so that the round trip covers what a launch plans with.
  static ProgramInfo analysis() {
    ProgramInfo info = coex::kernel::analyze_program(kSource, "-DUNUSED=1");
    return info;
  }
  size_t files() const {
    if (!std::filesystem::exists(kept())) return 0;
    return static_cast<size_t>(
        std::distance(std::filesystem::directory_iterator(kept()), std::filesystem::directory_iterator()));
  }
  // Where the analyses go: a folder of their own in the binaries' one, and in it this build's.
  std::filesystem::path kept() const { return folder_ / "analyses" / own_build_id(); }
  std::filesystem::path folder_;
};

TEST(OwnBuildId, IsTheGnuBuildIdNoteOfTheFileHoldingTheCode) {
  // This test program holds coex's code: its file must carry a note "GNU" with these bytes.
  const std::string hex = own_build_id();
  ASSERT_FALSE(hex.empty()) << "the test program has no GNU build ID (linked without --build-id?)";
  ASSERT_EQ(hex.size() % 2, 0u);
  std::string id;
  for (size_t i = 0; i < hex.size(); i += 2) id += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  const std::string exe = file_text("/proc/self/exe");
  EXPECT_NE(exe.find(std::string("GNU\0", 4) + id), std::string::npos) << hex;
}

TEST(OwnBuildId, IsReadFromTheFileAsFromTheRunningCode) {
  EXPECT_EQ(file_build_id("/proc/self/exe"), own_build_id());
  EXPECT_EQ(file_build_id("/nonexistent/coex"), "");
  EXPECT_EQ(file_build_id("/proc/self/status"), "");  // not an ELF file
}

TEST_F(KeptAnalyses, AnalysesOfAnAnalysisProcessAreKeyedByItsBuildToo) {
  // Made by the analysis process of a `coex` program of build "abc": kept in a folder of the
  // library's and its build, and only an analysis its hello vouches for.
  keep_analyses_in(folder_.string(), true, "abc");
  EXPECT_FALSE(keyed_analyser_made(true, ""));  // made here, not by the analyser keyed
  EXPECT_FALSE(keyed_analyser_made(false, "abd"));
  EXPECT_FALSE(keyed_analyser_made(false, ""));  // a process that gave no build ID
  EXPECT_TRUE(keyed_analyser_made(false, "abc"));
  if (!coex::kernel::libclang::load(nullptr)) GTEST_SKIP() << "no libclang to analyse with";
  ASSERT_TRUE(keep_analysis(kSource, "", analysis()));
  EXPECT_TRUE(std::filesystem::is_directory(folder_ / "analyses" / (own_build_id() + "-abc")));
  EXPECT_TRUE(read_kept_analysis(kSource, ""));
  // Another `coex` beside the library (rebuilt, or installed apart): none of the old one's analyses.
  keep_analyses_in(folder_.string(), true, "abd");
  EXPECT_FALSE(read_kept_analysis(kSource, ""));
  // An analyser without a build ID: nothing kept.
  keep_analyses_in(folder_.string(), true, "");
  EXPECT_FALSE(keep_analysis(kSource, "", analysis()));
  // In this process (no analyser named): made here only.
  keep_analyses_in(folder_.string(), false, "");
  EXPECT_TRUE(keyed_analyser_made(true, ""));
  EXPECT_FALSE(keyed_analyser_made(false, "abc"));
}

TEST_F(KeptAnalyses, WhatWasKeptIsReadBackWhole) {
  if (!coex::kernel::libclang::load(nullptr)) GTEST_SKIP() << "no libclang to analyse with";
  const ProgramInfo made = analysis();
  ASSERT_TRUE(made.parse_error.empty()) << made.parse_error;
  EXPECT_FALSE(read_kept_analysis(kSource, "-DUNUSED=1"));  // nothing kept yet, no folder
  ASSERT_TRUE(keep_analysis(kSource, "-DUNUSED=1", made));
  const auto read = read_kept_analysis(kSource, "-DUNUSED=1");
  ASSERT_TRUE(read);
  EXPECT_EQ(coex::kernel::program_info_to_json(*read), coex::kernel::program_info_to_json(made));
  ASSERT_EQ(read->kernels.size(), 1u);
  EXPECT_EQ(read->kernels[0].name, "scale");
  // Another source or other options: another program, not this analysis.
  EXPECT_FALSE(read_kept_analysis(std::string(kSource) + "\n", "-DUNUSED=1"));
  EXPECT_FALSE(read_kept_analysis(kSource, "-DUNUSED=2"));
}

TEST_F(KeptAnalyses, AnotherBuildsAnalysisIsNotRead) {
  if (!coex::kernel::libclang::load(nullptr)) GTEST_SKIP() << "no libclang to analyse with";
  ASSERT_TRUE(keep_analysis(kSource, "", analysis()));
  ASSERT_EQ(files(), 1u);
  const std::filesystem::path file = std::filesystem::directory_iterator(kept())->path();
  std::string text = file_text(file);
  const std::string build = own_build_id();
  const size_t at = text.find(build);
  ASSERT_NE(at, std::string::npos) << "the key does not hold the build ID";
  text[at] = text[at] == '0' ? '1' : '0';  // the same file, made by another build of coex
  std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
  EXPECT_FALSE(read_kept_analysis(kSource, ""));
}

TEST_F(KeptAnalyses, OnlyAnAnalysisThatRanToItsEndIsKept) {
  ProgramInfo failed;
  failed.parse_error = "libclang could not be loaded";
  EXPECT_FALSE(keep_analysis(kSource, "", failed));
  EXPECT_EQ(files(), 0u);
  if (!coex::kernel::libclang::load(nullptr)) GTEST_SKIP() << "no libclang to analyse with";
  // A source with an #include, or options with -I: files the key does not see.
  const std::string including = std::string("#include \"scale.h\"\n") + kSource;
  EXPECT_FALSE(keep_analysis(including, "", analysis()));
  EXPECT_FALSE(keep_analysis(kSource, "-I include", analysis()));
  EXPECT_EQ(files(), 0u);
  // Nothing kept where no folder is set (binary_cache off, or no History file).
  keep_analyses_in("", false, "");
  EXPECT_FALSE(keep_analysis(kSource, "", analysis()));
  EXPECT_EQ(files(), 0u);
}

TEST_F(KeptAnalyses, WhetherThisBuildKeptAnyIsOneLook) {
  if (!coex::kernel::libclang::load(nullptr)) GTEST_SKIP() << "no libclang to analyse with";
  EXPECT_FALSE(analyses_kept());
  // Another build's analyses say nothing of this build's.
  const std::filesystem::path other = folder_ / "analyses" / "0123456789abcdef";
  std::filesystem::create_directories(other);
  std::ofstream(other / "5b9ca6416dc8e081-522.bin") << "an analysis of another build";
  EXPECT_FALSE(analyses_kept());
  ASSERT_TRUE(keep_analysis(kSource, "", analysis()));
  EXPECT_TRUE(analyses_kept());
  keep_analyses_in("", false, "");
  EXPECT_FALSE(analyses_kept());
}

TEST_F(KeptAnalyses, EarlierBuildsFoldersGoBeyondTheLatestFew) {
  if (!coex::kernel::libclang::load(nullptr)) GTEST_SKIP() << "no libclang to analyse with";
  // Six earlier builds' folders, the older the lower their number.
  const auto now = std::filesystem::file_time_type::clock::now();
  for (int i = 0; i < 6; ++i) {
    const std::filesystem::path build = folder_ / "analyses" / ("build" + std::to_string(i));
    std::filesystem::create_directories(build);
    std::ofstream(build / "a.bin") << i;
    std::filesystem::last_write_time(build, now - std::chrono::hours(10 - i));
  }
  ASSERT_TRUE(keep_analysis(kSource, "", analysis()));
  std::set<std::string> left;
  for (const auto& entry : std::filesystem::directory_iterator(folder_ / "analyses"))
    left.insert(entry.path().filename().string());
  EXPECT_EQ(left, (std::set<std::string>{own_build_id(), "build3", "build4", "build5"}));
}

TEST_F(KeptAnalyses, AFileCutShortIsNotRead) {
  if (!coex::kernel::libclang::load(nullptr)) GTEST_SKIP() << "no libclang to analyse with";
  ASSERT_TRUE(keep_analysis(kSource, "", analysis()));
  const std::filesystem::path file = std::filesystem::directory_iterator(kept())->path();
  const std::string text = file_text(file);
  std::ofstream(file, std::ios::binary | std::ios::trunc) << text.substr(0, text.size() - 10);
  EXPECT_FALSE(read_kept_analysis(kSource, ""));
}

}  // namespace
