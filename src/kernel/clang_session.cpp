#include "kernel/clang_session.h"

#include <cctype>

#include "kernel/opencl_fallback_prelude.h"

namespace coex::kernel {
namespace {

// Parsed as OpenCL C for a 64-bit x86 target: sizes and alignments are those of the usual 64-bit
// devices, and an x86 target gives kernels their own calling convention, which is how kernels are
// told from helper functions (see is_kernel_function).
const char* const kTarget = "--target=x86_64-unknown-linux-gnu";
const char* const kDefaultStd = "-cl-std=CL1.2";

// Splits like a POSIX shell without expansions: blanks separate, quotes group, backslash escapes.
std::vector<std::string> split_words(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quote) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"' && i + 1 < text.size()) {
        word += text[++i];
      } else {
        word += c;
      }
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '\\' && i + 1 < text.size()) {
      word += text[++i];
    } else {
      word += c;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

std::vector<const char*> as_argv(const std::vector<std::string>& words) {
  std::vector<const char*> argv;
  argv.reserve(words.size());
  for (const auto& w : words) argv.push_back(w.c_str());
  return argv;
}

bool has_errors(CXTranslationUnit unit) {
  unsigned count = clang_getNumDiagnostics(unit);
  for (unsigned i = 0; i < count; ++i) {
    CXDiagnostic d = clang_getDiagnostic(unit, i);
    CXDiagnosticSeverity severity = clang_getDiagnosticSeverity(d);
    clang_disposeDiagnostic(d);
    if (severity >= CXDiagnostic_Error) return true;
  }
  return false;
}

// A kernel that needs the work-item functions, a vector type, a fence flag and an unsigned type:
// it parses without errors only where the OpenCL declarations are complete.
const char* const kProbeKernel =
    "__kernel void coex_probe(__global uint4* p) {\n"
    "  p[get_global_id(0)] = (uint4)(get_group_id(0));\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "}\n";

}  // namespace

namespace {

bool known_cl_std(std::string value) {
  for (char& c : value) c = char(std::toupper(static_cast<unsigned char>(c)));
  for (const char* known : {"CL1.0", "CL1.1", "CL1.2", "CL2.0", "CL3.0"})
    if (value == known) return true;
  return false;
}

}  // namespace

std::vector<std::string> parser_options_from_build_options(const std::string& build_options) {
  std::vector<std::string> words = split_words(build_options);
  std::vector<std::string> kept;
  bool has_std = false;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    bool takes_value = w == "-D" || w == "-U" || w == "-I";
    if (takes_value) {
      if (i + 1 < words.size()) kept.push_back(w + words[++i]);
      continue;
    }
    bool joined =
        w.size() > 2 && (w.compare(0, 2, "-D") == 0 || w.compare(0, 2, "-U") == 0 || w.compare(0, 2, "-I") == 0);
    if (joined) {
      kept.push_back(w);
    } else if (w.compare(0, 8, "-cl-std=") == 0 && known_cl_std(w.substr(8))) {
      // A value clang does not know fails the parse (the driver refuses the build anyway), and
      // libclang 15 then leaks its copy of the source: the default stands in for it.
      kept.push_back(w);
      has_std = true;
    }
  }
  if (!has_std) kept.insert(kept.begin(), kDefaultStd);
  return kept;
}

ParsedSource::ParsedSource(const std::string& source, const std::string& build_options, BuiltinsMode mode)
    : source_(source) {
  if (!libclang::load(&failure_)) return;
  // No error limit: an error that clang stops reporting would leave a broken kernel looking clean.
  std::vector<std::string> args = {"-x", "cl", kTarget, "-ferror-limit=0"};
  if (mode == BuiltinsMode::ClangHeaders) {
    // clang 13 and later add both for OpenCL by default; said explicitly so that an older or
    // differently configured libclang behaves the same.
    args.insert(args.end(), {"-Xclang", "-finclude-default-header", "-Xclang", "-fdeclare-opencl-builtins"});
  } else {
    prelude_ = opencl_fallback_prelude();
    args.insert(args.end(), {"-cl-no-stdinc", "-Xclang", "-fdeclare-opencl-builtins", "-include", kPreludeFileName});
  }
  for (auto& option : parser_options_from_build_options(build_options)) args.push_back(option);

  std::vector<CXUnsavedFile> files;
  files.push_back({kMainFileName, source_.c_str(), static_cast<unsigned long>(source_.size())});
  if (!prelude_.empty())
    files.push_back({kPreludeFileName, prelude_.c_str(), static_cast<unsigned long>(prelude_.size())});

  index_ = clang_createIndex(/*excludeDeclarationsFromPCH=*/0, /*displayDiagnostics=*/0);
  std::vector<const char*> argv = as_argv(args);
  // KeepGoing: a missing #include or another fatal error must not hide the kernels that parsed.
  // DetailedPreprocessingRecord: macro expansions are cursors, so that an edit never lands inside one.
  unsigned flags = CXTranslationUnit_KeepGoing | CXTranslationUnit_DetailedPreprocessingRecord;
  CXErrorCode code = clang_parseTranslationUnit2(index_, kMainFileName, argv.data(), static_cast<int>(argv.size()),
                                                 files.data(), static_cast<unsigned>(files.size()), flags, &unit_);
  if (code != CXError_Success || !unit_) {
    unit_ = nullptr;
    failure_ = "libclang failed to parse the program (CXErrorCode " + std::to_string(static_cast<int>(code)) + ")";
  }
}

ParsedSource::~ParsedSource() {
  if (unit_) clang_disposeTranslationUnit(unit_);
  if (index_) clang_disposeIndex(index_);
}

CXFile ParsedSource::main_file() const { return unit_ ? clang_getFile(unit_, kMainFileName) : nullptr; }

BuiltinsMode detect_builtins_mode() {
  static const BuiltinsMode mode = [] {
    ParsedSource probe(kProbeKernel, "", BuiltinsMode::ClangHeaders);
    return probe.ok() && !has_errors(probe.unit()) ? BuiltinsMode::ClangHeaders : BuiltinsMode::Fallback;
  }();
  return mode;
}

}  // namespace coex::kernel
