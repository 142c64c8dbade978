// Where the split rewrite edits a kernel (DESIGN.md decision 3): the five coex_* parameters go
// before the closing parenthesis of every declaration of the kernel, and a #define of each launch
// builtin goes right after the body's opening brace, #undef'ed before its closing brace. Every
// location is a token clang lexed in the program's own text, outside any macro use; when one is
// not, the kernel is left alone and reported unanalysable rather than edited at a guess.
#pragma once

#include "kernel/libclang_api.h"

#include <string>
#include <vector>

#include "kernel/clang_session.h"
#include "kernel/expr_shape.h"
#include "kernel/kernel_analysis.h"

namespace coex::kernel {

// The edits for one kernel definition, or false with why_not set.
bool compute_split_edits(const ParsedSource& parsed, SourceTokens& tokens, CXCursor definition,
                         std::vector<SourceEdit>& edits, std::string& why_not);

// The text the rewrite puts at the start and end of a kernel body (exposed for the tests).
std::string split_prelude_text(unsigned line_of_open_brace);
std::string split_epilogue_text(unsigned line_of_close_brace);
std::string split_parameters_text(bool after_other_parameters);

uint64_t source_fingerprint(const std::string& source);

}  // namespace coex::kernel
