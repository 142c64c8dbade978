// The analysis made in its own process (kernel/analysis_process.h) and carried back as JSON
// (kernel/analysis_codec.h): over the corpus (tests/unit/kernels), what comes back is what the
// analysis in this process makes, footprints included; a process that ends mid-analysis leaves the
// program unanalysed, and one that cannot start leaves the analysis to this process.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "kernel/analysis_codec.h"
#include "kernel/analysis_process.h"
#include "kernel/footprint.h"
#include "kernel/libclang_api.h"
#include "kernel_corpus.h"
#include "kernel_launch_spec.h"

namespace coex::kernel {
namespace {

using testing::load_corpus;

void expect_same_footprint(const Footprint& a, const Footprint& b, const std::string& where) {
  ASSERT_EQ(a.args.size(), b.args.size()) << where;
  for (size_t i = 0; i < a.args.size(); ++i) {
    EXPECT_EQ(a.args[i].read, b.args[i].read) << where << " arg " << i;
    EXPECT_EQ(a.args[i].write, b.args[i].write) << where << " arg " << i;
    EXPECT_EQ(a.args[i].reads, b.args[i].reads) << where << " arg " << i;
    EXPECT_EQ(a.args[i].writes, b.args[i].writes) << where << " arg " << i;
    EXPECT_EQ(a.args[i].writes_cover, b.args[i].writes_cover) << where << " arg " << i;
    EXPECT_EQ(a.args[i].writes_injective, b.args[i].writes_injective) << where << " arg " << i;
  }
}

// Field by field, not through the codec (which would miss a field it leaves out on both sides).
void expect_same_analysis(const ProgramInfo& a, const ProgramInfo& b, const std::string& source,
                          const std::string& where) {
  EXPECT_EQ(a.parse_error, b.parse_error) << where;
  EXPECT_EQ(a.builtins_mode, b.builtins_mode) << where;
  EXPECT_EQ(a.source_size, b.source_size) << where;
  EXPECT_EQ(a.source_fingerprint, b.source_fingerprint) << where;
  ASSERT_EQ(a.kernels.size(), b.kernels.size()) << where;
  for (size_t k = 0; k < a.kernels.size(); ++k) {
    const KernelInfo& x = a.kernels[k];
    const KernelInfo& y = b.kernels[k];
    EXPECT_EQ(x.name, y.name) << where;
    EXPECT_EQ(x.not_split_reason, y.not_split_reason) << where << "/" << x.name;
    EXPECT_EQ(x.uses_launch_builtins, y.uses_launch_builtins) << where << "/" << x.name;
    EXPECT_EQ(x.loops, y.loops) << where << "/" << x.name;
    EXPECT_EQ(bool(x.footprint), bool(y.footprint)) << where << "/" << x.name;
    ASSERT_EQ(x.args.size(), y.args.size()) << where << "/" << x.name;
    for (size_t i = 0; i < x.args.size(); ++i) {
      const ArgInfo& p = x.args[i];
      const ArgInfo& q = y.args[i];
      EXPECT_TRUE(p.name == q.name && p.type_name == q.type_name && p.kind == q.kind && p.read == q.read &&
                  p.written == q.written && p.pointee_size == q.pointee_size && p.value_size == q.value_size)
          << where << "/" << x.name << " arg " << i;
    }
  }
  // The edits (helpers', kernels' split and unsplit ones) all show in the rewritten source.
  EXPECT_EQ(rewrite_for_split(source, a), rewrite_for_split(source, b)) << where;
}

TEST(AnalysisCodec, EveryCorpusAnalysisComesBackWhole) {
  ASSERT_TRUE(libclang::load());
  int footprints_compared = 0;
  for (const auto& program : load_corpus()) {
    const ProgramInfo made = analyze_program(program.source, program.build_options);
    const nlohmann::json sent = program_info_to_json(made);
    ProgramInfo back;
    std::string why;
    ASSERT_TRUE(program_info_from_json(nlohmann::json::parse(sent.dump()), back, &why)) << program.name << ": " << why;
    EXPECT_EQ(program_info_to_json(back), sent) << program.name;
    expect_same_analysis(made, back, program.source, program.name);
    // The decoded models evaluate as the made ones, at the corpus's launch, on the first half.
    for (const auto& expected : program.expected.at("kernels")) {
      const KernelInfo* a = made.find(expected.at("name").get<std::string>());
      const KernelInfo* b = back.find(expected.at("name").get<std::string>());
      ASSERT_TRUE(a && b) << program.name;
      if (!a->footprint || !expected.contains("launch")) continue;
      ASSERT_TRUE(b->footprint) << program.name;
      std::string error;
      const testing::CorpusLaunch launch = testing::make_launch(expected.at("launch"), *a, error);
      ASSERT_TRUE(error.empty()) << program.name << ": " << error;
      const uint64_t half = launch.groups_along_split() / 2;
      expect_same_footprint(a->footprint->evaluate(launch.geometry, launch.values, 0, half),
                            b->footprint->evaluate(launch.geometry, launch.values, 0, half),
                            program.name + "/" + a->name);
      ++footprints_compared;
    }
  }
  EXPECT_GT(footprints_compared, 10);
}

TEST(AnalysisCodec, AMalformedAnalysisIsRefusedWithTheReason) {
  ProgramInfo info;
  std::string why;
  EXPECT_FALSE(program_info_from_json(nlohmann::json{{"kernels", 3}}, info, &why));
  EXPECT_NE(why.find("malformed analysis"), std::string::npos) << why;
}

class AnalysisProcess : public ::testing::Test {
 protected:
  void TearDown() override { analysis_process::set_executable(""); }
};

TEST_F(AnalysisProcess, AnswersAsTheAnalysisInThisProcess) {
  ASSERT_TRUE(libclang::load());
  analysis_process::set_executable(COEX_LAUNCHER);
  ASSERT_TRUE(analysis_process::start());
  std::string why;
  ASSERT_EQ(analysis_process::libclang_loaded(&why), std::optional<bool>(true)) << why;
  for (const auto& program : load_corpus()) {
    std::optional<ProgramInfo> there = analysis_process::analyze(program.source, program.build_options);
    ASSERT_TRUE(there) << program.name;
    expect_same_analysis(*there, analyze_program(program.source, program.build_options), program.source, program.name);
  }
}

TEST_F(AnalysisProcess, TakesASourceThatIsNotUtf8) {
  ASSERT_TRUE(libclang::load());
  analysis_process::set_executable(COEX_LAUNCHER);
  const std::string source = "/* caf\xe9 */ __kernel void k(__global int* a) { a[get_global_id(0)] = 1; }";
  std::optional<ProgramInfo> there = analysis_process::analyze(source, "");
  ASSERT_TRUE(there);
  ASSERT_EQ(there->kernels.size(), 1u) << there->parse_error;
  expect_same_analysis(*there, analyze_program(source, ""), source, "latin-1 comment");
}

// The program the stand-in below is sent: its request is read whole before the stand-in ends.
const std::string kOneKernel = "__kernel void k(__global int* a) { a[0] = 1; }";

// A stand-in for the analysis process: detaches as the real one does (its launcher exiting
// `detach_delay` seconds late: a slow start), says hello (`hello_delay` seconds late: a slow load of
// libclang), then ends at the first request, having read it whole (kOneKernel with no options). Ending
// on a part of it would race the app's sends of the rest: a send that finds the process gone is taken
// for a process that ended while idle, and another is started, one start more than the test counts.
std::string process_that_ends_mid_analysis(int hello_delay = 0, int detach_delay = 0) {
  const std::string hello = R"({"libclang":true,"why":""})";
  std::string frame;
  uint64_t size = hello.size();
  for (int i = 0; i < 8; ++i) {
    char octal[8];
    std::snprintf(octal, sizeof octal, "\\%03o", unsigned((size >> (8 * i)) & 0xff));
    frame += octal;
  }
  const size_t request_size = 8 + kOneKernel.size() + 8;  // two frames: the source, the empty options
  const auto path = std::filesystem::temp_directory_path() / ("coex-ends-" + std::to_string(::getpid()) + ".sh");
  std::ofstream(path) << "#!/bin/sh\n( sleep " << hello_delay << "; printf '" << frame << hello << "' >&3; head -c "
                      << request_size << " <&3 >/dev/null; exit 1 ) &\nsleep " << detach_delay << "\nexit 0\n";
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path.string();
}

TEST_F(AnalysisProcess, OneThatEndsMidAnalysisLeavesTheProgramUnanalysedAndIsStartedAgain) {
  const std::string script = process_that_ends_mid_analysis();
  analysis_process::set_executable(script);
  std::string why;
  ASSERT_EQ(analysis_process::libclang_loaded(&why), std::optional<bool>(true));
  const std::string& source = kOneKernel;
  // Three starts, each ending at its request; then none again, and still nothing analysed here. Each
  // process after the first is started ahead (as a new context does): its hello is read before the
  // request, never taken for the answer.
  for (const char* expected : {"ended or stalled", "ended or stalled", "ended or stalled", "could be started again"}) {
    std::optional<ProgramInfo> info = analysis_process::analyze(source, "");
    ASSERT_TRUE(info) << expected;
    EXPECT_TRUE(info->kernels.empty()) << expected;
    EXPECT_NE(info->parse_error.find(expected), std::string::npos) << info->parse_error;
    analysis_process::start();
  }
  std::filesystem::remove(script);
}

// What the process said of libclang is told without waiting: the first launch's notice asks it while an
// analysis may hold the socket, waiting for the hello and then for its answer.
TEST_F(AnalysisProcess, ItsWordOnLibclangIsToldWithoutWaitingForAnAnalysisUnderWay) {
  using analysis_process::LibclangStatus;
  const std::string script = process_that_ends_mid_analysis(2);
  analysis_process::set_executable(script);
  EXPECT_EQ(analysis_process::libclang_status(nullptr), LibclangStatus::none_runs);
  ASSERT_TRUE(analysis_process::start());
  std::atomic<bool> analysed{false};
  std::thread analysis([&] {
    analysis_process::analyze(kOneKernel, "");
    analysed = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the analysis holds the socket by now
  EXPECT_EQ(analysis_process::libclang_status(nullptr), LibclangStatus::not_said_yet);
  EXPECT_FALSE(analysed);  // told while the analysis still waited for the hello
  analysis.join();
  EXPECT_EQ(analysis_process::libclang_status(nullptr), LibclangStatus::loaded);
  std::filesystem::remove(script);
}

// The app's exit (stop_for_exit) ends an analysis under way at once, one whose process was still
// starting included (stop_for_exit then found no socket to shut down), and none is made after it,
// neither there nor in this process. In a child process: the exit holds for the rest of the process.
TEST_F(AnalysisProcess, TheExitEndsAnAnalysisUnderWayAtOnce) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string script = process_that_ends_mid_analysis(3, 1);
  const std::string& source = kOneKernel;
  auto ended_at_exit = [](const std::optional<ProgramInfo>& info) {
    return info && info->kernels.empty() && info->parse_error.find("began to exit") != std::string::npos;
  };
  EXPECT_EXIT(
      {
        analysis_process::set_executable(script);
        const auto began = std::chrono::steady_clock::now();
        std::optional<ProgramInfo> info;
        std::thread analysis([&] { info = analysis_process::analyze(source, ""); });
        std::this_thread::sleep_for(std::chrono::milliseconds(300));  // its process is starting (1 s)
        analysis_process::stop_for_exit();
        analysis.join();
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
        // Not the hello's 3 s, nor a process started or an analysis made here afterwards.
        const bool ok = ended_at_exit(info) && seconds < 2.5 && !analysis_process::start() &&
                        ended_at_exit(analysis_process::analyze(source, ""));
        if (!ok) std::fprintf(stderr, "%.2f s: %s\n", seconds, info ? info->parse_error.c_str() : "nothing");
        // The death test's child ran the test from its start, and wrote a script of its own.
        std::filesystem::remove(script);
        std::exit(ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
  std::filesystem::remove(script);
}

TEST_F(AnalysisProcess, OneThatCannotStartLeavesTheAnalysisHere) {
  analysis_process::set_executable("/bin/false");
  EXPECT_FALSE(analysis_process::libclang_loaded(nullptr));
  EXPECT_EQ(analysis_process::libclang_status(nullptr), analysis_process::LibclangStatus::none_runs);
  EXPECT_FALSE(analysis_process::analyze(kOneKernel, ""));
  analysis_process::set_executable(std::filesystem::temp_directory_path() / "coex-no-such-program");
  EXPECT_FALSE(analysis_process::start());
}

// `coex run`'s head start (analysis_process::start_for_exec): the process the launcher started is
// this process's where kInheritedVar names its socket and this process, and answers as one started
// here does; the variable is what a process exec'd by the launcher finds.
TEST_F(AnalysisProcess, TakesTheOneStartedForThisProcess) {
  ASSERT_TRUE(libclang::load());
  const std::string inherited = analysis_process::start_for_exec(COEX_LAUNCHER);
  ASSERT_FALSE(inherited.empty());
  const int fd = std::stoi(inherited);
  EXPECT_EQ(::fcntl(fd, F_GETFD) & FD_CLOEXEC, 0) << "the socket must stay open across exec";
  ::setenv(analysis_process::kInheritedVar, inherited.c_str(), 1);
  analysis_process::set_executable(COEX_LAUNCHER);
  EXPECT_TRUE(analysis_process::adopt_inherited());
  ::unsetenv(analysis_process::kInheritedVar);
  EXPECT_TRUE(analysis_process::started_by_launcher());
  EXPECT_NE(::fcntl(fd, F_GETFD) & FD_CLOEXEC, 0) << "taken, it is not handed to the app's own children";
  const std::string source = "__kernel void k(__global int* a) { a[get_global_id(0)] = 1; }";
  std::optional<ProgramInfo> there = analysis_process::analyze(source, "");
  ASSERT_TRUE(there);
  expect_same_analysis(*there, analyze_program(source, ""), source, "from the launcher");
}

// Inherited by another process than the one it was started for (a child of a script `coex run`
// ran), the socket is closed there and not taken; a descriptor that is not that socket (the app
// closed it and opened another) is left alone; without an executable set, it is closed.
TEST_F(AnalysisProcess, TakesNoOtherProcessesOne) {
  analysis_process::set_executable(COEX_LAUNCHER);
  int ends[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, ends), 0);
  struct stat socket {};
  ASSERT_EQ(::fstat(ends[0], &socket), 0);
  const std::string inode = std::to_string(uint64_t(socket.st_ino));
  auto inherited = [&](int fd, const std::string& ino, long pid) {
    ::setenv(analysis_process::kInheritedVar, (std::to_string(fd) + ":" + ino + ":" + std::to_string(pid)).c_str(), 1);
    const bool taken = analysis_process::adopt_inherited();
    ::unsetenv(analysis_process::kInheritedVar);
    return taken;
  };
  EXPECT_FALSE(inherited(ends[1], inode, long(::getpid())));  // another socket than the one named
  EXPECT_EQ(::fcntl(ends[1], F_GETFD), 0) << "a descriptor not named is left open";
  EXPECT_FALSE(inherited(ends[0], inode, long(::getpid()) + 1));
  EXPECT_EQ(::fcntl(ends[0], F_GETFD), -1) << "inherited by another process: closed";
  EXPECT_FALSE(analysis_process::started_by_launcher());
  ::close(ends[1]);
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, ends), 0);
  ASSERT_EQ(::fstat(ends[0], &socket), 0);
  analysis_process::set_executable("");
  EXPECT_FALSE(inherited(ends[0], std::to_string(uint64_t(socket.st_ino)), long(::getpid())));
  EXPECT_EQ(::fcntl(ends[0], F_GETFD), -1) << "no analysis process wanted: closed";
  ::close(ends[1]);
}

}  // namespace
}  // namespace coex::kernel
