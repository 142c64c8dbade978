#include "kernel/expr_shape.h"

#include <algorithm>

namespace coex::kernel {
namespace {

bool is_binary_operator_spelling(const std::string& s) {
  static const char* const kOps[] = {"=",  "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^=", "+",
                                     "-",  "*",  "/",  "%",  "<<", ">>", "&",   "|",   "^",  "&&", "||", "<",
                                     ">",  "<=", ">=", "==", "!="};
  return std::find(std::begin(kOps), std::end(kOps), s) != std::end(kOps);
}

CXSourceLocation start_of(CXCursor c) { return clang_getRangeStart(clang_getCursorExtent(c)); }
CXSourceLocation end_of(CXCursor c) { return clang_getRangeEnd(clang_getCursorExtent(c)); }

int pointer_depth(CXType t) {
  int depth = 0;
  for (CXType c = clang_getCanonicalType(t); is_pointer_or_array(c) && depth < 32; c = pointee_or_element(c)) ++depth;
  return depth;
}

}  // namespace

SourceTokens::SourceTokens(CXTranslationUnit unit) : unit_(unit) {
  struct Collect {
    SourceTokens* self;
    std::vector<CXCursor> definitions, expansions;
  } collect{this, {}, {}};
  clang_visitChildren(
      clang_getTranslationUnitCursor(unit),
      [](CXCursor c, CXCursor, CXClientData data) {
        auto* col = static_cast<Collect*>(data);
        CXCursorKind kind = clang_getCursorKind(c);
        if (kind == CXCursor_MacroDefinition) col->definitions.push_back(c);
        if (kind == CXCursor_MacroExpansion) col->expansions.push_back(c);
        return CXChildVisit_Continue;
      },
      &collect);
  for (CXCursor c : collect.definitions) {
    FileSpan span = expansion_span(c);
    Macro m;
    m.name = cursor_spelling(c);
    if (!span.file) {  // predefined and command-line macros: known by name only
      macros_.push_back(m);
      continue;
    }
    m.file = span.file;
    m.begin = span.begin;
    m.end = span.end;
    const std::vector<Token>& all = file_tokens(span.file);
    int i = token_at(span.file, span.begin);
    if (i < 0) continue;
    size_t k = static_cast<size_t>(i) + 1;
    m.body_begin = all[static_cast<size_t>(i)].end_offset;
    if (clang_Cursor_isMacroFunctionLike(c)) {
      for (; k < all.size() && all[k].offset < span.end; ++k) {
        if (all[k].kind == CXToken_Identifier) m.params.push_back(all[k].spelling);
        if (all[k].spelling == ")") {
          m.body_begin = all[k].end_offset;
          ++k;
          break;
        }
      }
    }
    for (; k < all.size() && all[k].offset < span.end; ++k) {
      const Token& t = all[k];
      bool is_param = std::find(m.params.begin(), m.params.end(), t.spelling) != m.params.end();
      if ((t.kind == CXToken_Identifier || t.kind == CXToken_Keyword) && !is_param) m.body_identifiers.push_back(t.spelling);
    }
    macros_.push_back(m);
  }
  for (CXCursor c : collect.expansions) {
    FileSpan span = expansion_span(c);
    if (!span.file) continue;
    uses_.push_back({span.file, span.begin, span.end, cursor_spelling(c)});
  }
}

const std::vector<Token>& SourceTokens::file_tokens(CXFile file) {
  for (auto& f : files_)
    if (same_file(f.file, file)) return f.tokens;
  size_t size = 0;
  clang_getFileContents(unit_, file, &size);
  files_.push_back({file, tokens_in(unit_, file, 0, static_cast<unsigned>(size))});
  return files_.back().tokens;
}

int SourceTokens::token_at(CXFile file, unsigned offset) {
  if (!file) return -1;
  const auto& t = file_tokens(file);
  auto it = std::lower_bound(t.begin(), t.end(), offset, [](const Token& a, unsigned o) { return a.offset < o; });
  if (it == t.end() || it->offset != offset) return -1;
  return static_cast<int>(it - t.begin());
}

int SourceTokens::token_before(CXFile file, unsigned offset) {
  if (!file) return -1;
  const auto& t = file_tokens(file);
  auto it = std::upper_bound(t.begin(), t.end(), offset, [](unsigned o, const Token& a) { return o < a.end_offset; });
  return static_cast<int>(it - t.begin()) - 1;
}

bool SourceTokens::is_macro_name(const std::string& name) const { return macro_named(name) != nullptr; }

const SourceTokens::Macro* SourceTokens::macro_named(const std::string& name) const {
  // The last definition wins; a macro #undef'ed and defined again is rare enough to be ambiguous.
  const Macro* found = nullptr;
  for (const auto& m : macros_)
    if (m.name == name) found = &m;
  return found;
}

const SourceTokens::Macro* SourceTokens::definition_body_at(const FilePosition& p) const {
  for (const auto& m : macros_)
    if (m.file && p.file && same_file(m.file, p.file) && p.offset >= m.body_begin && p.offset < m.end) return &m;
  return nullptr;
}

const SourceTokens::Use* SourceTokens::use_at(const FilePosition& p) const {
  for (const auto& u : uses_)
    if (u.file && p.file && same_file(u.file, p.file) && p.offset >= u.begin && p.offset < u.end) return &u;
  return nullptr;
}

UnexposedRole classify_unexposed(CXCursor c) {
  if (clang_getCursorKind(c) != CXCursor_UnexposedExpr) return UnexposedRole::Other;
  std::vector<CXCursor> kids = children_of(c);
  if (kids.size() != 1) return UnexposedRole::Other;
  CXType from = clang_getCanonicalType(clang_getCursorType(kids[0]));
  CXType to = clang_getCanonicalType(clang_getCursorType(c));
  if (from.kind != CXType_ExtVector) return UnexposedRole::ImplicitCast;
  // No implicit conversion turns a vector into a scalar or changes its length: a swizzle does.
  if (to.kind != CXType_ExtVector || clang_getNumElements(to) != clang_getNumElements(from))
    return UnexposedRole::VectorElement;
  // Same length (v.xyzw or a cast): a swizzle ends with its own token, a cast covers its operand.
  if (is_macro_location(start_of(c)) || is_macro_location(end_of(c))) return UnexposedRole::MaybeVectorElement;
  FileSpan outer = expansion_span(c), inner = expansion_span(kids[0]);
  return outer.end != inner.end ? UnexposedRole::VectorElement : UnexposedRole::ImplicitCast;
}

bool is_lvalue_form(CXCursor c) {
  switch (clang_getCursorKind(c)) {
    case CXCursor_DeclRefExpr:
    case CXCursor_ArraySubscriptExpr:
    case CXCursor_MemberRefExpr:
      return true;
    case CXCursor_ParenExpr: {
      std::vector<CXCursor> kids = children_of(c);
      return kids.size() == 1 && is_lvalue_form(kids[0]);
    }
    case CXCursor_UnaryOperator: {
      // *p is an lvalue; its operand is an rvalue pointer (wrapped in a cast).
      std::vector<CXCursor> kids = children_of(c);
      return kids.size() == 1 && !is_lvalue_form(kids[0]) && is_pointer_type(clang_getCursorType(kids[0])) &&
             pointer_depth(clang_getCursorType(c)) + 1 == pointer_depth(clang_getCursorType(kids[0]));
    }
    case CXCursor_UnexposedExpr: {
      UnexposedRole role = classify_unexposed(c);
      if (role != UnexposedRole::VectorElement && role != UnexposedRole::MaybeVectorElement) return false;
      return is_lvalue_form(children_of(c)[0]);
    }
    default:
      return false;
  }
}

UnaryOp unary_operator(CXCursor c, SourceTokens& tokens) {
  std::vector<CXCursor> kids = children_of(c);
  if (kids.size() != 1) return UnaryOp::Unknown;
  // A postfix operator starts where its operand starts (the raw locations, macros or not).
  if (clang_equalLocations(start_of(c), start_of(kids[0]))) {
    FilePosition end = spelling_position(end_of(c));
    if (!is_macro_location(end_of(c))) {
      int i = tokens.token_before(end.file, end.offset);
      if (i >= 0 && tokens.file_tokens(end.file)[static_cast<size_t>(i)].spelling == "--") return UnaryOp::PostDec;
    }
    return UnaryOp::PostInc;  // ++ or --: both modify
  }
  // A prefix operator is the token spelled where the expression starts.
  FilePosition op = spelling_position(start_of(c));
  int i = tokens.token_at(op.file, op.offset);
  if (i >= 0) {
    const std::string& s = tokens.file_tokens(op.file)[static_cast<size_t>(i)].spelling;
    if (s == "*") return UnaryOp::Deref;
    if (s == "&") return UnaryOp::AddressOf;
    if (s == "++") return UnaryOp::PreInc;
    if (s == "--") return UnaryOp::PreDec;
    if (s == "+") return UnaryOp::Plus;
    if (s == "-") return UnaryOp::Minus;
    if (s == "~") return UnaryOp::BitNot;
    if (s == "!") return UnaryOp::LogicalNot;
  }
  return UnaryOp::Unknown;
}

bool unary_modifies_operand(CXCursor c, SourceTokens& tokens) {
  UnaryOp op = unary_operator(c, tokens);
  if (op != UnaryOp::Unknown) return op == UnaryOp::PreInc || op == UnaryOp::PreDec || op == UnaryOp::PostInc || op == UnaryOp::PostDec;
  // Hidden token: ++x and &x both take an lvalue operand; only & adds a pointer level.
  std::vector<CXCursor> kids = children_of(c);
  if (kids.size() != 1 || !is_lvalue_form(kids[0])) return false;
  return pointer_depth(clang_getCursorType(c)) != pointer_depth(clang_getCursorType(kids[0])) + 1;
}

bool unary_takes_address(CXCursor c, SourceTokens& tokens) {
  UnaryOp op = unary_operator(c, tokens);
  if (op != UnaryOp::Unknown) return op == UnaryOp::AddressOf;
  std::vector<CXCursor> kids = children_of(c);
  if (kids.size() != 1 || !is_lvalue_form(kids[0])) return false;
  return pointer_depth(clang_getCursorType(c)) == pointer_depth(clang_getCursorType(kids[0])) + 1;
}

bool unary_dereferences(CXCursor c, SourceTokens& tokens) {
  UnaryOp op = unary_operator(c, tokens);
  if (op != UnaryOp::Unknown) return op == UnaryOp::Deref;
  std::vector<CXCursor> kids = children_of(c);
  if (kids.size() != 1 || is_lvalue_form(kids[0]) || !is_pointer_type(clang_getCursorType(kids[0]))) return false;
  return pointer_depth(clang_getCursorType(c)) + 1 == pointer_depth(clang_getCursorType(kids[0]));
}

namespace {

// The end of the left operand, moved past the whole macro use when it ends inside one.
bool left_end(CXCursor left, SourceTokens& tokens, FilePosition& out) {
  CXSourceLocation end = end_of(left);
  out = expansion_position(end);
  if (!out.file) return false;
  if (!is_macro_location(end)) return true;
  const SourceTokens::Use* use = tokens.use_at(out);
  if (!use) return false;
  out.offset = use->end;
  return true;
}

// The start of the right operand, moved before the whole macro use when it starts inside one.
bool right_start(CXCursor right, SourceTokens& tokens, FilePosition& out) {
  CXSourceLocation start = start_of(right);
  out = expansion_position(start);
  if (!out.file) return false;
  if (!is_macro_location(start)) return true;
  const SourceTokens::Use* use = tokens.use_at(out);
  if (!use) return false;
  out.offset = use->begin;
  return true;
}

}  // namespace

std::string binary_operator(CXCursor c, SourceTokens& tokens) {
  std::vector<CXCursor> kids = children_of(c);
  if (kids.size() != 2) return "";
  // Rule 1: outside macros. Only the operator can stand between the text of the left operand
  // (or the macro use it ends in) and the text of the right one: if exactly one punctuator lies
  // there, any token a macro contributed would have to be another one, so that one is it.
  FilePosition l, r;
  if (left_end(kids[0], tokens, l) && right_start(kids[1], tokens, r) && same_file(l.file, r.file) &&
      l.offset <= r.offset) {
    const auto& all = tokens.file_tokens(l.file);
    int first = tokens.token_before(l.file, l.offset) + 1;
    int last = tokens.token_before(r.file, r.offset);
    if (first == last && all[static_cast<size_t>(first)].kind == CXToken_Punctuation &&
        is_binary_operator_spelling(all[static_cast<size_t>(first)].spelling))
      return all[static_cast<size_t>(first)].spelling;
  }
  // Rule 2: the right operand starts inside a macro body or a macro argument; the token spelled
  // before it there is copied next to it by every expansion (unless it is a parameter, the macro
  // name or a separator, none of which is an operator).
  CXSourceLocation rstart = start_of(kids[1]);
  if (!is_macro_location(rstart)) return "";
  FilePosition s = spelling_position(rstart);
  if (tokens.token_at(s.file, s.offset) < 0) return "";
  int prev = tokens.token_before(s.file, s.offset);
  if (prev < 0) return "";
  const Token& p = tokens.file_tokens(s.file)[static_cast<size_t>(prev)];
  bool operator_token = p.kind == CXToken_Punctuation && is_binary_operator_spelling(p.spelling);
  const SourceTokens::Macro* body = tokens.definition_body_at(s);
  if (body && p.offset >= body->body_begin) return operator_token ? p.spelling : "";
  const SourceTokens::Use* use = tokens.use_at(s);
  if (!body && use && p.offset > use->begin) return operator_token ? p.spelling : "";
  // Rule 3: the right operand starts with the first token of macro X, used once in the body of
  // the macro M that the code invokes, with no other macro in M's body or arguments: the token
  // before X in M's body precedes it in every expansion.
  if (!body || tokens.token_before(s.file, body->body_begin) + 1 != tokens.token_at(s.file, s.offset)) return "";
  const SourceTokens::Use* outer = tokens.use_at(expansion_position(rstart));
  const SourceTokens::Macro* m = outer ? tokens.macro_named(outer->name) : nullptr;
  if (!m || !m->file || m == body) return "";
  int uses_of_x = 0;
  for (const auto& id : m->body_identifiers) {
    if (id == body->name) ++uses_of_x;
    else if (tokens.is_macro_name(id)) return "";
  }
  if (uses_of_x != 1) return "";
  const auto& outer_tokens = tokens.file_tokens(outer->file);
  int name_index = tokens.token_at(outer->file, outer->begin);
  if (name_index < 0) return "";
  for (size_t i = static_cast<size_t>(name_index) + 1; i < outer_tokens.size() && outer_tokens[i].offset < outer->end; ++i)
    if (outer_tokens[i].kind == CXToken_Identifier && tokens.is_macro_name(outer_tokens[i].spelling)) return "";
  const auto& def_tokens = tokens.file_tokens(m->file);
  for (size_t i = 1; i < def_tokens.size(); ++i) {
    if (def_tokens[i].offset < m->body_begin || def_tokens[i].offset >= m->end) continue;
    if (def_tokens[i].spelling != body->name) continue;
    const Token& before = def_tokens[i - 1];
    if (before.offset < m->body_begin) return "";
    return before.kind == CXToken_Punctuation && is_binary_operator_spelling(before.spelling) ? before.spelling : "";
  }
  return "";
}

bool is_plain_assignment(CXCursor c, SourceTokens& tokens) {
  if (clang_getCursorKind(c) != CXCursor_BinaryOperator) return false;
  std::string op = binary_operator(c, tokens);
  if (!op.empty()) return op == "=";
  std::vector<CXCursor> kids = children_of(c);
  return kids.size() == 2 && is_lvalue_form(kids[0]);
}

}  // namespace coex::kernel
