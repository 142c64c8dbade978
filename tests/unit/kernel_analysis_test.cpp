// The verdicts of analyze_program on the corpus (tests/unit/kernels/*.cl against their .json
// sidecars), with clang's OpenCL headers and with coex's fallback declarations (the GPU machine's
// case: libclang without its resource directory), plus the option handling and the failure paths.
#include <gtest/gtest.h>

#include "kernel/clang_session.h"
#include "kernel/kernel_analysis.h"
#include "kernel/kernel_analysis_detail.h"
#include "kernel_corpus.h"

namespace coex::kernel {
namespace {

using testing::CorpusProgram;

const char* kind_name(ArgKind kind) {
  switch (kind) {
    case ArgKind::Scalar: return "scalar";
    case ArgKind::GlobalPointer: return "global";
    case ArgKind::ConstantPointer: return "constant";
    case ArgKind::LocalPointer: return "local";
    case ArgKind::Image: return "image";
    case ArgKind::Sampler: return "sampler";
    case ArgKind::Pipe: return "pipe";
    case ArgKind::Other: return "other";
  }
  return "?";
}

void expect_matches_sidecar(const CorpusProgram& program, const ProgramInfo& info) {
  SCOPED_TRACE(program.name + " (" + info.builtins_mode + " builtins)");
  EXPECT_EQ(info.parse_error, "");
  const auto& kernels = program.expected.at("kernels");
  ASSERT_EQ(info.kernels.size(), kernels.size());
  for (size_t k = 0; k < kernels.size(); ++k) {
    const auto& want = kernels[k];
    const KernelInfo& got = info.kernels[k];
    SCOPED_TRACE("kernel " + want.at("name").get<std::string>());
    EXPECT_EQ(got.name, want.at("name").get<std::string>());
    EXPECT_EQ(got.not_split_reason, want.at("not_split_reason").get<std::string>());
    if (want.contains("uses_launch_builtins")) {
      EXPECT_EQ(got.uses_launch_builtins, want.at("uses_launch_builtins").get<bool>());
    }
    if (want.contains("loops")) {
      EXPECT_EQ(got.loops, want.at("loops").get<bool>());
    }
    const auto& args = want.at("args");
    ASSERT_EQ(got.args.size(), args.size());
    for (size_t a = 0; a < args.size(); ++a) {
      const auto& arg = args[a];
      SCOPED_TRACE("argument " + arg.at("name").get<std::string>());
      EXPECT_EQ(got.args[a].name, arg.at("name").get<std::string>());
      if (arg.contains("kind")) {
        EXPECT_STREQ(kind_name(got.args[a].kind), arg.at("kind").get<std::string>().c_str());
      }
      if (arg.contains("read")) { EXPECT_EQ(got.args[a].read, arg.at("read").get<bool>()); }
      if (arg.contains("written")) { EXPECT_EQ(got.args[a].written, arg.at("written").get<bool>()); }
      if (arg.contains("pointee_size")) { EXPECT_EQ(got.args[a].pointee_size, arg.at("pointee_size").get<size_t>()); }
      if (arg.contains("value_size")) { EXPECT_EQ(got.args[a].value_size, arg.at("value_size").get<size_t>()); }
    }
  }
}

TEST(KernelCorpus, HasTheProgramsTheSplitNeeds) {
  auto corpus = testing::load_corpus();
  EXPECT_GE(corpus.size(), 40u);  // the corpus the footprint oracle checks
  size_t kernels = 0;
  for (const auto& p : corpus) {
    EXPECT_NE(p.source, "") << p.name;
    kernels += p.expected.at("kernels").size();
  }
  EXPECT_GE(kernels, 40u);
}

// Every kernel that may be split has a launch (the footprint test and the oracle run it) and, per
// buffer argument, the tiers expected there; an exact write says whether it is injective.
TEST(KernelCorpus, SplittableKernelsHaveALaunchAndTiers) {
  for (const auto& program : testing::load_corpus()) {
    for (const auto& k : program.expected.at("kernels")) {
      if (!k.at("not_split_reason").get<std::string>().empty()) continue;
      SCOPED_TRACE(program.name + ": " + k.at("name").get<std::string>());
      EXPECT_TRUE(k.contains("launch"));
      for (const auto& arg : k.at("args")) {
        std::string kind = arg.value("kind", "");
        if (kind != "global" && kind != "constant") continue;
        SCOPED_TRACE(arg.at("name").get<std::string>());
        EXPECT_TRUE(arg.contains("read_tier") && arg.contains("write_tier"));
        if (arg.value("write_tier", "") == "exact") { EXPECT_TRUE(arg.contains("injective")); }
      }
    }
  }
}

TEST(KernelAnalysis, CorpusWithClangHeaders) {
  if (detect_builtins_mode() != BuiltinsMode::ClangHeaders) GTEST_SKIP() << "libclang has no OpenCL headers here";
  for (const auto& program : testing::load_corpus())
    expect_matches_sidecar(program, analyze_program_with(program.source, program.build_options, BuiltinsMode::ClangHeaders));
}

TEST(KernelAnalysis, CorpusWithFallbackDeclarations) {
  for (const auto& program : testing::load_corpus())
    expect_matches_sidecar(program, analyze_program_with(program.source, program.build_options, BuiltinsMode::Fallback));
}

TEST(KernelAnalysis, PublicEntryPointUsesTheDetectedMode) {
  ProgramInfo info = analyze_program("__kernel void k(__global int* p) { p[get_global_id(0)] = 1; }", "");
  EXPECT_EQ(info.builtins_mode, detect_builtins_mode() == BuiltinsMode::ClangHeaders ? "clang" : "fallback");
  ASSERT_NE(info.find("k"), nullptr);
  EXPECT_EQ(info.find("k")->not_split_reason, "");
  EXPECT_EQ(info.find("missing"), nullptr);
}

TEST(KernelAnalysis, SourceWithoutKernelsAndWithErrorsReportsParseError) {
  ProgramInfo info = analyze_program("this is not OpenCL C at all", "");
  EXPECT_TRUE(info.kernels.empty());
  EXPECT_NE(info.parse_error, "");
}

TEST(KernelAnalysis, EmptySourceHasNoKernelsAndNoError) {
  ProgramInfo info = analyze_program("", "");
  EXPECT_TRUE(info.kernels.empty());
  EXPECT_EQ(info.parse_error, "");
}

TEST(KernelAnalysis, MissingIncludeDoesNotHideOtherKernels) {
  ProgramInfo info = analyze_program(
      "#include \"no_such_header_anywhere.h\"\n"
      "__kernel void fine(__global float* x) { x[get_global_id(0)] = 1.0f; }\n",
      "");
  ASSERT_EQ(info.kernels.size(), 1u);
  EXPECT_EQ(info.kernels[0].name, "fine");
}

TEST(KernelAnalysis, ErrorsLateInALongProgramStillMarkTheirKernel) {
  // More errors than clang's default limit of 20 come first.
  std::string source;
  for (int i = 0; i < 30; ++i) source += "__kernel void broken" + std::to_string(i) + "(__global int* p) { p[0] = nope; }\n";
  source += "__kernel void last(__global int* p) { p[0] = also_nope; }\n";
  ProgramInfo info = analyze_program(source, "");
  ASSERT_NE(info.find("last"), nullptr);
  EXPECT_EQ(info.find("last")->not_split_reason, "unanalysable");
}

TEST(KernelAnalysis, IncludeDirectoriesFromBuildOptions) {
  std::string dir = (testing::corpus_dir() / "include").string();
  ProgramInfo info = analyze_program(
      "#include \"corpus_helpers.h\"\n"
      "__kernel void k(__global float* out, __global const float* in) { copy_one(out, in, get_global_id(0)); }\n",
      "-I " + dir);
  ASSERT_EQ(info.kernels.size(), 1u);
  EXPECT_EQ(info.kernels[0].not_split_reason, "");
  EXPECT_TRUE(info.kernels[0].args[0].written);
  EXPECT_FALSE(info.kernels[0].args[0].read);
  EXPECT_TRUE(info.kernels[0].args[1].read);
  EXPECT_FALSE(info.kernels[0].args[1].written);
}

TEST(ParserOptions, KeepsDefinesIncludesUndefsAndStandard) {
  auto options = parser_options_from_build_options(
      "-cl-mad-enable -D N=4 -DM=5 -I /x/y -I/z -U FOO -DNAME=\"a b\" -cl-std=CL2.0 -Werror -cl-fast-relaxed-math");
  std::vector<std::string> want = {"-DN=4", "-DM=5", "-I/x/y", "-I/z", "-UFOO", "-DNAME=a b", "-cl-std=CL2.0"};
  EXPECT_EQ(options, want);
}

TEST(ParserOptions, DefaultsToOpenCL12) {
  auto options = parser_options_from_build_options("-DX");
  std::vector<std::string> want = {"-cl-std=CL1.2", "-DX"};
  EXPECT_EQ(options, want);
}

TEST(ParserOptions, AnUnknownStandardGivesWayToTheDefault) {
  // The driver refuses the build; the parse, which may run beside it, must not fail (libclang leaks then).
  std::vector<std::string> want = {"-cl-std=CL1.2", "-DX"};
  EXPECT_EQ(parser_options_from_build_options("-cl-std=CL9.9 -DX"), want);
  want = {"-cl-std=cl3.0"};
  EXPECT_EQ(parser_options_from_build_options("-cl-std=cl3.0"), want);
}

TEST(ParserOptions, QuotedDefineReachesThePreprocessor) {
  ProgramInfo info = analyze_program("__kernel void k(__global int* p) { p[0] = VALUE; }", "-D VALUE=\"(1 + 2)\"");
  ASSERT_EQ(info.kernels.size(), 1u);
  EXPECT_EQ(info.kernels[0].not_split_reason, "");
}

TEST(ParserOptions, UndefinedMacroMakesTheKernelUnanalysable) {
  ProgramInfo info = analyze_program("__kernel void k(__global int* p) { p[0] = VALUE; }", "-DVALUE=1 -UVALUE");
  ASSERT_EQ(info.kernels.size(), 1u);
  EXPECT_EQ(info.kernels[0].not_split_reason, "unanalysable");
}

}  // namespace
}  // namespace coex::kernel
