// rewrite_for_split on the corpus: the rewritten source parses again without new errors, the five
// coex_* parameters end exactly the kernels that use a launch builtin and may be split, nothing
// else changes, and the builtins inside those bodies are the redefined ones.
#include <gtest/gtest.h>

#include <set>

#include "kernel/clang_session.h"
#include "kernel/kernel_analysis.h"
#include "kernel/kernel_analysis_detail.h"
#include "kernel/split_rewrite.h"
#include "kernel_corpus.h"

namespace coex::kernel {
namespace {

const char* const kExtraNames[kRewriteExtraArgs] = {"coex_split_dim", "coex_group_base", "coex_num_groups",
                                                    "coex_global_size", "coex_global_offset"};
const char* const kExtraTypes[kRewriteExtraArgs] = {"uint", "ulong", "ulong", "ulong", "ulong"};

size_t error_count(const std::string& source, const std::string& options, BuiltinsMode mode) {
  ParsedSource parsed(source, options, mode);
  EXPECT_TRUE(parsed.ok());
  size_t errors = 0;
  for (unsigned i = 0; parsed.ok() && i < clang_getNumDiagnostics(parsed.unit()); ++i) {
    CXDiagnostic d = clang_getDiagnostic(parsed.unit(), i);
    errors += clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error;
    clang_disposeDiagnostic(d);
  }
  return errors;
}

bool needs_rewrite(const KernelInfo& k) { return k.uses_launch_builtins && k.not_split_reason.empty(); }

void check_rewrite(const testing::CorpusProgram& program, BuiltinsMode mode) {
  SCOPED_TRACE(program.name);
  ProgramInfo before = analyze_program_with(program.source, program.build_options, mode);
  std::string rewritten = rewrite_for_split(program.source, before);
  bool any = false;
  for (const auto& k : before.kernels) any |= needs_rewrite(k);
  if (!any) {
    EXPECT_EQ(rewritten, program.source) << "a program without launch builtins comes back unchanged";
    return;
  }
  ASSERT_NE(rewritten, program.source);
  EXPECT_EQ(error_count(rewritten, program.build_options, mode), error_count(program.source, program.build_options, mode))
      << rewritten;
  ProgramInfo after = analyze_program_with(rewritten, program.build_options, mode);
  EXPECT_EQ(after.parse_error, "");
  ASSERT_EQ(after.kernels.size(), before.kernels.size());
  for (size_t i = 0; i < before.kernels.size(); ++i) {
    const KernelInfo& b = before.kernels[i];
    const KernelInfo& a = after.kernels[i];
    SCOPED_TRACE(b.name);
    EXPECT_EQ(a.name, b.name);
    // The rewritten kernels keep their macros, so they are never rewritten twice; the others keep
    // their verdicts.
    if (!needs_rewrite(b)) { EXPECT_EQ(a.not_split_reason, b.not_split_reason); }
    size_t extra = needs_rewrite(b) ? kRewriteExtraArgs : 0;
    ASSERT_EQ(a.args.size(), b.args.size() + extra);
    for (size_t j = 0; j < b.args.size(); ++j) {
      EXPECT_EQ(a.args[j].name, b.args[j].name);
      EXPECT_EQ(a.args[j].read, b.args[j].read);
      EXPECT_EQ(a.args[j].written, b.args[j].written);
    }
    for (size_t j = 0; j < extra; ++j) {
      const ArgInfo& arg = a.args[b.args.size() + j];
      EXPECT_EQ(arg.name, kExtraNames[j]);
      EXPECT_EQ(arg.kind, ArgKind::Scalar);
      EXPECT_NE(arg.type_name.find(kExtraTypes[j]), std::string::npos) << arg.type_name;
    }
  }
}

TEST(KernelRewrite, CorpusReparsesWithClangHeaders) {
  if (detect_builtins_mode() != BuiltinsMode::ClangHeaders) GTEST_SKIP() << "libclang has no OpenCL headers here";
  for (const auto& program : testing::load_corpus()) check_rewrite(program, BuiltinsMode::ClangHeaders);
}

TEST(KernelRewrite, CorpusReparsesWithFallbackDeclarations) {
  for (const auto& program : testing::load_corpus()) check_rewrite(program, BuiltinsMode::Fallback);
}

TEST(KernelRewrite, SomeCorpusKernelsNeedTheRewrite) {
  size_t rewritten = 0;
  for (const auto& program : testing::load_corpus()) {
    ProgramInfo info = analyze_program(program.source, program.build_options);
    for (const auto& k : info.kernels) rewritten += needs_rewrite(k);
  }
  EXPECT_GE(rewritten, 10u);
}

size_t count_text(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

TEST(KernelRewrite, DefinesAreInsideTheBodyAndUndefinedAtItsEnd) {
  const std::string source =
      "int helper(int x) { return x + 1; }\n"
      "__kernel void k(__global int* out) {\n"
      "  out[get_group_id(0)] = helper(get_num_groups(0));\n"
      "}\n"
      "__kernel void plain(__global int* out) { out[get_global_id(0)] = 0; }\n";
  ProgramInfo info = analyze_program(source, "");
  std::string out = rewrite_for_split(source, info);
  size_t open = out.find("__kernel void k(");
  size_t define = out.find("#define get_group_id(d)");
  size_t use = out.find("out[get_group_id(0)]");
  size_t undef = out.find("#undef get_group_id");
  size_t plain = out.find("__kernel void plain(__global int* out) {");
  ASSERT_NE(define, std::string::npos);
  EXPECT_LT(open, define);
  EXPECT_LT(define, use);
  EXPECT_LT(use, undef);
  EXPECT_LT(undef, plain);
  EXPECT_EQ(out.find("int helper(int x) { return x + 1; }"), 0u) << "the helper is untouched";
  EXPECT_EQ(count_text(out, "#define get_"), 5u);
  EXPECT_EQ(count_text(out, "#undef get_"), 5u);
  EXPECT_NE(out.find("__kernel void k(__global int* out, uint coex_split_dim, ulong coex_group_base, "
                     "ulong coex_num_groups, ulong coex_global_size, ulong coex_global_offset) {"),
            std::string::npos);
}

TEST(KernelRewrite, LineDirectivesKeepTheOriginalLineNumbers) {
  const std::string source =
      "// line 1\n"
      "__kernel void k(__global int* out)\n"
      "{\n"
      "  out[get_group_id(0)] = __LINE__;\n"
      "}\n";
  ProgramInfo info = analyze_program(source, "");
  std::string out = rewrite_for_split(source, info);
  EXPECT_NE(out.find("{\n#define get_group_id"), std::string::npos);
  EXPECT_NE(out.find("#line 3\n\n  out[get_group_id(0)] = __LINE__;"), std::string::npos) << out;
  EXPECT_NE(out.find("#line 5\n}"), std::string::npos) << out;
}

TEST(KernelRewrite, PrototypeAndDefinitionBothGetTheParameters) {
  auto corpus = testing::load_corpus();
  auto it = std::find_if(corpus.begin(), corpus.end(), [](const auto& p) { return p.name == "prototype"; });
  ASSERT_NE(it, corpus.end());
  std::string out = rewrite_for_split(it->source, analyze_program(it->source, it->build_options));
  EXPECT_EQ(count_text(out, "int k, uint coex_split_dim, ulong coex_group_base"), 2u);
}

TEST(KernelRewrite, VoidParameterListIsReplaced) {
  const std::string source = "__kernel void k(void) { if (get_num_groups(0) > 4) return; }\n";
  std::string out = rewrite_for_split(source, analyze_program(source, ""));
  EXPECT_EQ(out.find("(void)"), std::string::npos);
  EXPECT_NE(out.find("__kernel void k(uint coex_split_dim,"), std::string::npos);
}

TEST(KernelRewrite, RefusesAnotherSource) {
  const std::string source = "__kernel void k(__global int* o) { o[get_group_id(0)] = 1; }\n";
  ProgramInfo info = analyze_program(source, "");
  EXPECT_EQ(rewrite_for_split(source + " ", info), "");
  EXPECT_NE(rewrite_for_split(source, info), "");
}

TEST(KernelRewrite, ProgramDefiningAReservedMacroIsNotRewritten) {
  const std::string source =
      "#define coex_split_dim 3\n"
      "__kernel void k(__global int* o) { o[get_group_id(0)] = coex_split_dim; }\n";
  ProgramInfo info = analyze_program(source, "");
  ASSERT_EQ(info.kernels.size(), 1u);
  EXPECT_EQ(info.kernels[0].not_split_reason, "unanalysable");
  EXPECT_EQ(rewrite_for_split(source, info), source);
}

TEST(KernelRewrite, EditsTouchOnlyPlainProgramText) {
  for (const auto& program : testing::load_corpus()) {
    ProgramInfo info = analyze_program(program.source, program.build_options);
    for (const auto& k : info.kernels) {
      if (!needs_rewrite(k)) {
        EXPECT_TRUE(k.split_edits.empty()) << program.name << ": " << k.name;
        continue;
      }
      ASSERT_GE(k.split_edits.size(), 3u) << program.name << ": " << k.name;
      for (const auto& e : k.split_edits) {
        ASSERT_LE(e.offset + e.length, program.source.size());
        // Only "void" is ever replaced; everything else is inserted.
        if (e.length) { EXPECT_EQ(program.source.substr(e.offset, e.length), "void"); }
      }
    }
  }
}

}  // namespace
}  // namespace coex::kernel
