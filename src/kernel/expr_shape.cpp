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
    Macro m{span.file, cursor_spelling(c), false, clang_Cursor_isMacroFunctionLike(c) != 0, span.begin, span.end};
    if (span.file && !m.function_like)
      m.single_token = tokens_in(unit, span.file, span.begin, span.end).size() == 2;  // the name and its value
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
  const Macro* found = nullptr;
  for (const auto& m : macros_)
    if (m.name == name) found = &m;
  return found;
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
  // A postfix operator starts where its operand starts. libclang moves starts inside a macro body
  // to the macro use, so equal starts prove it only with an lvalue operand, which is what ++ and --
  // take (and neither *, which takes an rvalue pointer, nor the value operators do).
  if (clang_equalLocations(start_of(c), start_of(kids[0]))) {
    if (!is_lvalue_form(kids[0])) return UnaryOp::Unknown;
    // Equal starts inside a macro body may also be &x: ++ and -- keep the type, & adds a pointer.
    if (pointer_depth(clang_getCursorType(c)) == pointer_depth(clang_getCursorType(kids[0])) + 1) return UnaryOp::AddressOf;
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

// The name or literal an expression starts with, when no token of its own comes before it (no
// parenthesis, cast, prefix operator or compound literal); a null cursor otherwise.
CXCursor leftmost_leaf(CXCursor e) {
  for (int depth = 0; depth < 64; ++depth) {
    CXCursorKind kind = clang_getCursorKind(e);
    if (kind == CXCursor_DeclRefExpr || kind == CXCursor_IntegerLiteral || kind == CXCursor_FloatingLiteral ||
        kind == CXCursor_CharacterLiteral)
      return e;
    bool starts_with_child = kind == CXCursor_BinaryOperator || kind == CXCursor_CompoundAssignOperator ||
                             kind == CXCursor_ConditionalOperator || kind == CXCursor_ArraySubscriptExpr ||
                             kind == CXCursor_MemberRefExpr || kind == CXCursor_CallExpr ||
                             (kind == CXCursor_UnexposedExpr && classify_unexposed(e) != UnexposedRole::Other);
    std::vector<CXCursor> kids = children_of(e);
    if (!starts_with_child || kids.empty()) break;
    if (kind == CXCursor_UnaryOperator) break;
    e = kids[0];
  }
  return clang_getNullCursor();
}

std::string operator_from_tokens(CXCursor c, SourceTokens& tokens);

// A punctuator of a macro body that stands between two operands: the token before it ends an
// operand (a name, a literal, ')' or ']'), so it is no prefix operator.
bool binary_in_body(const std::vector<Token>& body, size_t i) {
  if (i == 0 || body[i].kind != CXToken_Punctuation || !is_binary_operator_spelling(body[i].spelling)) return false;
  const Token& before = body[i - 1];
  return before.kind == CXToken_Identifier || before.kind == CXToken_Literal || before.spelling == ")" ||
         before.spelling == "]";
}

}  // namespace

// Inside a macro body libclang (up to 16) gives no token positions, but the body's tokens are in the
// definition, and a body operator's cursor says which use it came from: its spelling location is
// that use's macro name (also for a use inside another macro's arguments; an operator written in
// the text is spelled where it stands, never on a macro name). Taken in order (left
// operand, operator, right operand), the binary operators of one use are the binary punctuators of
// the body in the order the body spells them; when there are as many of each, they are those.
// Bodies that use # or ##, or macros that are not one token, are left alone, as are uses whose
// expansion appears more than once (an argument that the outer macro repeats).
void SourceTokens::find_macro_body_operators() {
  body_operators_done_ = true;
  std::map<const Use*, std::vector<CXCursor>> per_use;
  struct InOrder {
    SourceTokens* self;
    std::map<const Use*, std::vector<CXCursor>>& per_use;
    void record(CXCursor c) {
      FilePosition name = spelling_position(clang_getCursorLocation(c));
      for (const Use& u : self->uses_)
        if (name.file && same_file(u.file, name.file) && u.begin == name.offset) per_use[&u].push_back(c);
    }
    void walk(CXCursor c, int depth) {
      if (depth > 256) return;
      std::vector<CXCursor> kids = children_of(c);
      CXCursorKind kind = clang_getCursorKind(c);
      bool binary = (kind == CXCursor_BinaryOperator || kind == CXCursor_CompoundAssignOperator) && kids.size() == 2;
      for (size_t i = 0; i < kids.size(); ++i) {
        if (binary && i == 1) record(c);
        walk(kids[i], depth + 1);
      }
    }
  } in_order{this, per_use};
  for (CXCursor c : children_of(clang_getTranslationUnitCursor(unit_)))
    if (clang_getCursorKind(c) == CXCursor_FunctionDecl && !clang_Location_isInSystemHeader(clang_getCursorLocation(c)))
      in_order.walk(c, 0);
  for (const auto& [use, nodes] : per_use) {
    const Macro* m = macro_named(use->name);
    if (!m || !m->function_like || !m->file) continue;
    std::vector<Token> all = tokens_in(unit_, m->file, m->begin, m->end);
    size_t close = 0;
    while (close < all.size() && all[close].spelling != ")") ++close;
    std::vector<Token> body(all.begin() + long(std::min(all.size(), close + 1)), all.end());
    bool plain = true;
    std::vector<std::string> operators;
    for (size_t i = 0; i < body.size(); ++i) {
      const Macro* inner = body[i].kind == CXToken_Identifier ? macro_named(body[i].spelling) : nullptr;
      if (body[i].spelling == "#" || body[i].spelling == "##" || (inner && !inner->single_token)) plain = false;
      if (binary_in_body(body, i)) operators.push_back(body[i].spelling);
    }
    if (!plain || nodes.size() != operators.size()) continue;
    for (size_t i = 0; i < nodes.size(); ++i)
      body_operators_.emplace(clang_hashCursor(nodes[i]), std::make_pair(nodes[i], operators[i]));
  }
}

std::string SourceTokens::macro_body_operator(CXCursor binary) {
  if (!body_operators_done_) find_macro_body_operators();
  auto range = body_operators_.equal_range(clang_hashCursor(binary));
  for (auto it = range.first; it != range.second; ++it)
    if (same_node(it->second.first, binary)) return it->second.second;
  return "";
}

std::string binary_operator(CXCursor c, SourceTokens& tokens) {
  std::string op = operator_from_tokens(c, tokens);
  if (op.empty()) op = tokens.macro_body_operator(c);
  return op;
}

namespace {

std::string operator_from_tokens(CXCursor c, SourceTokens& tokens) {
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
  // Rule 2: the right operand starts inside a macro argument, with its own first token (no
  // parenthesis, cast or prefix operator before its leftmost name or literal). libclang reports
  // where that token is spelled in the argument text; the token before it there is copied next to
  // it by the expansion, so if it is an operator (not a ',' or '(' that separates arguments), it is
  // this one. Inside macro bodies libclang (up to 16) reports no spelling: those stay unknown.
  CXSourceLocation rstart = start_of(kids[1]);
  CXCursor leaf = leftmost_leaf(kids[1]);
  if (!is_macro_location(rstart) || clang_Cursor_isNull(leaf)) return "";
  FilePosition s = spelling_position(rstart);
  int at = tokens.token_at(s.file, s.offset);
  int prev = tokens.token_before(s.file, s.offset);
  const SourceTokens::Use* use = tokens.use_at(s);
  if (at < 0 || prev < 0 || !use) return "";
  const Token& first = tokens.file_tokens(s.file)[static_cast<size_t>(at)];
  const Token& p = tokens.file_tokens(s.file)[static_cast<size_t>(prev)];
  // The token there is the leaf itself, or a one-token macro (#define N 64) whose value it is.
  const SourceTokens::Macro* constant = tokens.macro_named(first.spelling);
  bool is_literal = clang_getCursorKind(leaf) != CXCursor_DeclRefExpr;
  bool leaf_matches = constant ? constant->single_token && is_literal
                               : is_literal ? first.kind == CXToken_Literal : first.spelling == cursor_spelling(leaf);
  if (!leaf_matches || p.offset <= use->begin) return "";
  return p.kind == CXToken_Punctuation && is_binary_operator_spelling(p.spelling) ? p.spelling : "";
}

}  // namespace

bool is_plain_assignment(CXCursor c, SourceTokens& tokens) {
  if (clang_getCursorKind(c) != CXCursor_BinaryOperator) return false;
  std::string op = binary_operator(c, tokens);
  if (!op.empty()) return op == "=";
  std::vector<CXCursor> kids = children_of(c);
  return kids.size() == 2 && is_lvalue_form(kids[0]);
}

}  // namespace coex::kernel
