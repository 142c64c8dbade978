#include "kernel/split_rewrite.h"

#include <algorithm>

#include "kernel/function_facts.h"

namespace coex::kernel {
namespace {

// A macro's replacement is not rescanned for its own name (C99 6.10.3.4p2), so the inner
// get_group_id(d) below is the builtin: the sub-launch's group index, to which the first group of
// the sub-launch is added back. The other three return the original launch's values along the
// split dimension; get_global_linear_id (OpenCL C 2.0, 6.13.1) is rebuilt from them.
const char* const kDefines =
    "#define get_group_id(d) ((uint)(d) == coex_split_dim ? (size_t)(get_group_id(d) + coex_group_base) : "
    "get_group_id(d))\n"
    "#define get_num_groups(d) ((uint)(d) == coex_split_dim ? (size_t)coex_num_groups : get_num_groups(d))\n"
    "#define get_global_size(d) ((uint)(d) == coex_split_dim ? (size_t)coex_global_size : get_global_size(d))\n"
    "#define get_global_offset(d) ((uint)(d) == coex_split_dim ? (size_t)coex_global_offset : "
    "get_global_offset(d))\n"
    "#define get_global_linear_id() (get_work_dim() == 1 ? (get_global_id(0) - get_global_offset(0)) : "
    "get_work_dim() == 2 ? ((get_global_id(1) - get_global_offset(1)) * get_global_size(0) + "
    "(get_global_id(0) - get_global_offset(0))) : "
    "(((get_global_id(2) - get_global_offset(2)) * get_global_size(1) + (get_global_id(1) - get_global_offset(1))) "
    "* get_global_size(0) + (get_global_id(0) - get_global_offset(0))))\n";

const char* const kUndefs =
    "#undef get_group_id\n#undef get_num_groups\n#undef get_global_size\n#undef get_global_offset\n"
    "#undef get_global_linear_id\n";

const char* const kParameters =
    "uint coex_split_dim, ulong coex_group_base, ulong coex_num_groups, ulong coex_global_size, "
    "ulong coex_global_offset";

// What a call of a rewritten helper passes on: the caller's own values of the five parameters.
const char* const kArguments = "coex_split_dim, coex_group_base, coex_num_groups, coex_global_size, coex_global_offset";

// A kernel that is not split but calls a rewritten helper runs whole: it declares the values of an
// unsplit launch. No dimension equals coex_split_dim, so every macro above yields the builtin itself.
const char* const kUnsplitValues =
    "const uint coex_split_dim = 0xffffffffu; const ulong coex_group_base = 0, coex_num_groups = 0, "
    "coex_global_size = 0, coex_global_offset = 0;\n";

bool is_reserved_name(const std::string& name) { return is_launch_builtin(name) || name.rfind("coex_", 0) == 0; }

bool in_main_file(const ParsedSource& parsed, const FilePosition& p) {
  return p.file && same_file(p.file, parsed.main_file());
}

// The token at a location that must be plain program text: not produced by a macro, not inside
// the arguments of a macro use.
int plain_token(const ParsedSource& parsed, SourceTokens& tokens, CXSourceLocation loc) {
  if (is_macro_location(loc)) return -1;
  FilePosition p = spelling_position(loc);
  if (!in_main_file(parsed, p) || tokens.use_at(p)) return -1;
  return tokens.token_at(p.file, p.offset);
}

bool parameter_list_edit(const ParsedSource& parsed, SourceTokens& tokens, CXCursor declaration,
                         std::vector<SourceEdit>& edits, std::string& why_not) {
  int name = plain_token(parsed, tokens, clang_getCursorLocation(declaration));
  if (name < 0) {
    why_not = "the name of " + cursor_spelling(declaration) + " is not plain text of the program source";
    return false;
  }
  CXFile file = parsed.main_file();
  const auto& all = tokens.file_tokens(file);
  size_t open = static_cast<size_t>(name) + 1;
  if (all[static_cast<size_t>(name)].spelling != cursor_spelling(declaration) || open >= all.size() ||
      all[open].spelling != "(") {
    why_not = "no '(' follows the name of " + cursor_spelling(declaration);
    return false;
  }
  size_t close = open;
  for (int depth = 0; close < all.size(); ++close) {
    if (all[close].spelling == "(") ++depth;
    if (all[close].spelling == ")" && --depth == 0) break;
  }
  if (close >= all.size() || tokens.use_at({file, all[close].offset, 0})) {
    why_not = "the parameter list of " + cursor_spelling(declaration) + " does not end in plain text";
    return false;
  }
  int parameters = clang_Cursor_getNumArguments(declaration);
  for (int i = 0; i < parameters; ++i)
    if (is_reserved_name(cursor_spelling(clang_Cursor_getArgument(declaration, static_cast<unsigned>(i))))) {
      why_not = "a parameter already has a coex_ name";
      return false;
    }
  size_t inside = close - open - 1;
  if (parameters > 0) {
    edits.push_back({all[close].offset, 0, split_parameters_text(true)});
  } else if (inside == 0) {
    edits.push_back({all[close].offset, 0, split_parameters_text(false)});
  } else if (inside == 1 && all[open + 1].spelling == "void") {
    edits.push_back(
        {all[open + 1].offset, all[open + 1].end_offset - all[open + 1].offset, split_parameters_text(false)});
  } else {
    why_not = "the empty parameter list of " + cursor_spelling(declaration) + " is not () or (void)";
    return false;
  }
  return true;
}

// The prelude goes right after the body's opening brace; the epilogue (when not empty) right before
// its closing brace.
bool body_edits(const ParsedSource& parsed, SourceTokens& tokens, CXCursor definition, const std::string& prelude,
                const std::string& epilogue, std::vector<SourceEdit>& edits, std::string& why_not) {
  CXCursor body = clang_getNullCursor();
  for (CXCursor c : children_of(definition))
    if (clang_getCursorKind(c) == CXCursor_CompoundStmt) body = c;
  if (clang_Cursor_isNull(body)) {
    why_not = cursor_spelling(definition) + " has no body";
    return false;
  }
  CXSourceRange extent = clang_getCursorExtent(body);
  int open = plain_token(parsed, tokens, clang_getRangeStart(extent));
  CXSourceLocation end = clang_getRangeEnd(extent);
  FilePosition end_pos = spelling_position(end);
  int close = is_macro_location(end) ? -1 : tokens.token_before(end_pos.file, end_pos.offset);
  const auto& all = tokens.file_tokens(parsed.main_file());
  if (open < 0 || close < 0 || !in_main_file(parsed, end_pos) || all[static_cast<size_t>(open)].spelling != "{" ||
      all[static_cast<size_t>(close)].spelling != "}" || all[static_cast<size_t>(close)].end_offset != end_pos.offset ||
      tokens.use_at({parsed.main_file(), all[static_cast<size_t>(close)].offset, 0})) {
    why_not = "the braces of " + cursor_spelling(definition) + " are not plain text of the program source";
    return false;
  }
  const Token& open_brace = all[static_cast<size_t>(open)];
  const Token& close_brace = all[static_cast<size_t>(close)];
  FilePosition open_pos = spelling_position(clang_getRangeStart(extent));
  unsigned close_line = 0, column = 0, offset = 0;
  CXFile file = nullptr;
  clang_getSpellingLocation(clang_getLocationForOffset(tokens.unit(), parsed.main_file(), close_brace.offset), &file,
                            &close_line, &column, &offset);
  // #line keeps the driver's messages and __LINE__ pointing at the app's own lines.
  edits.push_back({open_brace.end_offset, 0, "\n" + prelude + "#line " + std::to_string(open_pos.line) + "\n"});
  if (!epilogue.empty())
    edits.push_back({close_brace.offset, 0, "\n" + epilogue + "#line " + std::to_string(close_line) + "\n"});
  return true;
}

// The parameters go into every declaration of the function.
bool declaration_edits(const ParsedSource& parsed, SourceTokens& tokens, CXCursor definition,
                       std::vector<SourceEdit>& edits, std::string& why_not) {
  std::string key = declaration_key(definition);
  for (CXCursor c : children_of(clang_getTranslationUnitCursor(parsed.unit())))
    if (clang_getCursorKind(c) == CXCursor_FunctionDecl && declaration_key(c) == key &&
        !parameter_list_edit(parsed, tokens, c, edits, why_not))
      return false;
  return true;
}

// A call of a rewritten helper passes the caller's five values on, before its closing parenthesis.
bool call_edit(const ParsedSource& parsed, SourceTokens& tokens, CXCursor call, std::vector<SourceEdit>& edits,
               std::string& why_not) {
  CXSourceRange extent = clang_getCursorExtent(call);
  CXSourceLocation end = clang_getRangeEnd(extent);
  FilePosition end_pos = spelling_position(end);
  int close = is_macro_location(end) ? -1 : tokens.token_before(end_pos.file, end_pos.offset);
  const auto& all = tokens.file_tokens(parsed.main_file());
  if (plain_token(parsed, tokens, clang_getRangeStart(extent)) < 0 || close < 0 || !in_main_file(parsed, end_pos) ||
      all[static_cast<size_t>(close)].spelling != ")" || all[static_cast<size_t>(close)].end_offset != end_pos.offset ||
      tokens.use_at({parsed.main_file(), all[static_cast<size_t>(close)].offset, 0})) {
    why_not =
        "a call of " + cursor_spelling(clang_getCursorReferenced(call)) + " is not plain text of the program source";
    return false;
  }
  bool has_arguments = clang_Cursor_getNumArguments(call) > 0;
  edits.push_back(
      {all[static_cast<size_t>(close)].offset, 0, (has_arguments ? std::string(", ") : std::string()) + kArguments});
  return true;
}

bool call_edits(const ParsedSource& parsed, SourceTokens& tokens, const std::vector<CXCursor>& calls,
                std::vector<SourceEdit>& edits, std::string& why_not) {
  for (CXCursor call : calls)
    if (!call_edit(parsed, tokens, call, edits, why_not)) return false;
  return true;
}

bool defines_reserved_macro(SourceTokens& tokens, std::string& why_not) {
  for (const auto& macro : tokens.macros())
    if (is_reserved_name(macro.name)) {
      why_not = "the program defines a macro named " + macro.name;
      return true;
    }
  return false;
}

}  // namespace

std::string split_parameters_text(bool after_other_parameters) {
  return (after_other_parameters ? std::string(", ") : std::string()) + kParameters;
}

uint64_t source_fingerprint(const std::string& source) {
  uint64_t hash = 1469598103934665603ull;  // FNV-1a, 64 bit
  for (unsigned char c : source) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

bool compute_split_edits(const ParsedSource& parsed, SourceTokens& tokens, CXCursor definition,
                         const std::vector<CXCursor>& helper_calls, std::vector<SourceEdit>& edits,
                         std::string& why_not) {
  std::vector<SourceEdit> out;
  if (defines_reserved_macro(tokens, why_not) || !declaration_edits(parsed, tokens, definition, out, why_not) ||
      !body_edits(parsed, tokens, definition, kDefines, kUndefs, out, why_not) ||
      !call_edits(parsed, tokens, helper_calls, out, why_not))
    return false;
  edits = std::move(out);
  return true;
}

bool compute_unsplit_kernel_edits(const ParsedSource& parsed, SourceTokens& tokens, CXCursor definition,
                                  const std::vector<CXCursor>& helper_calls, std::vector<SourceEdit>& edits,
                                  std::string& why_not) {
  std::vector<SourceEdit> out;
  for (CXCursor parameter : children_of(definition))
    if (clang_getCursorKind(parameter) == CXCursor_ParmDecl && is_reserved_name(cursor_spelling(parameter))) {
      why_not = "a parameter of " + cursor_spelling(definition) + " already has a coex_ name";
      return false;
    }
  if (!body_edits(parsed, tokens, definition, kUnsplitValues, "", out, why_not) ||
      !call_edits(parsed, tokens, helper_calls, out, why_not))
    return false;
  edits = std::move(out);
  return true;
}

bool compute_helper_edits(const ParsedSource& parsed, SourceTokens& tokens,
                          const std::vector<std::pair<CXCursor, std::vector<CXCursor>>>& helpers,
                          std::vector<SourceEdit>& edits, std::string& why_not) {
  std::vector<SourceEdit> out;
  if (defines_reserved_macro(tokens, why_not)) return false;
  for (const auto& [definition, calls] : helpers)
    if (!declaration_edits(parsed, tokens, definition, out, why_not) ||
        !body_edits(parsed, tokens, definition, kDefines, kUndefs, out, why_not) ||
        !call_edits(parsed, tokens, calls, out, why_not))
      return false;
  edits = std::move(out);
  return true;
}

std::string rewrite_for_split(const std::string& source, const ProgramInfo& info) {
  try {
    if (source.size() != info.source_size || source_fingerprint(source) != info.source_fingerprint) return "";
    std::vector<const SourceEdit*> edits;
    for (const auto& kernel : info.kernels)
      if (kernel.uses_launch_builtins && kernel.not_split_reason.empty())
        for (const auto& e : kernel.split_edits) edits.push_back(&e);
    // The rewritten helpers come with every call of them: the split kernels' (above) and the others'.
    if (!edits.empty() && !info.helper_edits.empty()) {
      for (const auto& e : info.helper_edits) edits.push_back(&e);
      for (const auto& kernel : info.kernels)
        if (!kernel.not_split_reason.empty())
          for (const auto& e : kernel.unsplit_edits) edits.push_back(&e);
    }
    // From the end backwards, so that earlier offsets stay valid.
    std::stable_sort(edits.begin(), edits.end(),
                     [](const SourceEdit* a, const SourceEdit* b) { return a->offset > b->offset; });
    std::string out = source;
    for (const SourceEdit* e : edits) {
      if (e->offset + e->length > out.size()) return "";
      out.replace(e->offset, e->length, e->text);
    }
    return out;
  } catch (...) {
    return "";
  }
}

}  // namespace coex::kernel
