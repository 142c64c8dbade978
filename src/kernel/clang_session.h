// One libclang parse of an OpenCL C program: the arguments it is parsed with, the way the OpenCL
// builtins get declared, and RAII ownership of the index and translation unit.
#pragma once

#include "kernel/libclang_api.h"

#include <memory>
#include <string>
#include <vector>

namespace coex::kernel {

// How the OpenCL builtin functions and types are made known to clang.
enum class BuiltinsMode {
  // clang's own: -fdeclare-opencl-builtins plus opencl-c-base.h from clang's resource directory.
  ClangHeaders,
  // The resource directory is missing (the GPU machine ships libclang-16.so.1 alone):
  // -cl-no-stdinc, -fdeclare-opencl-builtins and coex's own declarations (opencl_fallback_prelude).
  Fallback,
};

// ClangHeaders when a probe kernel parses cleanly with clang's own headers, Fallback otherwise.
// Probed once per process.
BuiltinsMode detect_builtins_mode();

// The build options of clBuildProgram/clCompileProgram that change what the source means to the
// parser: -D, -U, -I (joined or separate) and -cl-std=; the rest is dropped. Quotes and backslashes
// group as in a shell, since drivers accept -D NAME="a b".
std::vector<std::string> parser_options_from_build_options(const std::string& build_options);

// A parsed translation unit. The main file is named kMainFileName; the fallback prelude, when used,
// is a second unsaved file included before it.
class ParsedSource {
 public:
  static constexpr const char* kMainFileName = "coex_program.cl";
  // An absolute name: libclang finds an unsaved file given to -include only by its full path.
  static constexpr const char* kPreludeFileName = "/coex-virtual/coex_opencl_prelude.h";

  ParsedSource(const std::string& source, const std::string& build_options, BuiltinsMode mode);
  ~ParsedSource();
  ParsedSource(const ParsedSource&) = delete;
  ParsedSource& operator=(const ParsedSource&) = delete;

  bool ok() const { return unit_ != nullptr; }
  CXTranslationUnit unit() const { return unit_; }
  CXFile main_file() const;
  const std::string& source() const { return source_; }
  // Why libclang gave no translation unit (empty when ok()).
  const std::string& failure() const { return failure_; }

 private:
  std::string source_;
  std::string prelude_;
  CXIndex index_ = nullptr;
  CXTranslationUnit unit_ = nullptr;
  std::string failure_;
};

}  // namespace coex::kernel
