// Where the split rewrite edits a kernel (docs/design.md, "A launch"): the five coex_* parameters go
// before the closing parenthesis of every declaration of the kernel, and a #define of each launch
// builtin goes right after the body's opening brace, #undef'ed before its closing brace. Helpers
// that read those builtins get the same, and each call of them passes the caller's values on. Every
// location is a token clang lexed in the program's own text, outside any macro use; when one is
// not, the kernel is left alone and reported unanalysable rather than edited at a guess.
#pragma once

#include "kernel/libclang_api.h"

#include <string>
#include <utility>
#include <vector>

#include "kernel/clang_session.h"
#include "kernel/expr_shape.h"
#include "kernel/kernel_analysis.h"

namespace coex::kernel {

// The edits for one kernel definition that a split launch runs, or false with why_not set.
// helper_calls: the calls in its body of helpers that compute_helper_edits rewrites.
bool compute_split_edits(const ParsedSource& parsed, SourceTokens& tokens, CXCursor definition,
                         const std::vector<CXCursor>& helper_calls, std::vector<SourceEdit>& edits,
                         std::string& why_not);

// A helper (a function other than a kernel) that reads a launch builtin, itself or through what it
// calls, is rewritten like a kernel: the parameters in every declaration, the #define/#undef pair in
// its body, and its own calls of such helpers pass its values on. helpers: each such definition with
// the calls in its body of the others.
bool compute_helper_edits(const ParsedSource& parsed, SourceTokens& tokens,
                          const std::vector<std::pair<CXCursor, std::vector<CXCursor>>>& helpers,
                          std::vector<SourceEdit>& edits, std::string& why_not);

// A kernel that is never split but calls rewritten helpers must still build in the rewritten
// program: its body declares the values of an unsplit launch and its calls pass them on.
bool compute_unsplit_kernel_edits(const ParsedSource& parsed, SourceTokens& tokens, CXCursor definition,
                                  const std::vector<CXCursor>& helper_calls, std::vector<SourceEdit>& edits,
                                  std::string& why_not);

std::string split_parameters_text(bool after_other_parameters);

uint64_t source_fingerprint(const std::string& source);

}  // namespace coex::kernel
