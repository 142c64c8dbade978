#include "kernel/cursor_util.h"

#include <sstream>

namespace coex::kernel {

std::string take_string(CXString s) {
  const char* text = clang_getCString(s);
  std::string result = text ? text : "";
  clang_disposeString(s);
  return result;
}

std::string cursor_spelling(CXCursor c) { return take_string(clang_getCursorSpelling(c)); }
std::string type_spelling(CXType t) { return take_string(clang_getTypeSpelling(t)); }

std::vector<CXCursor> children_of(CXCursor c) {
  std::vector<CXCursor> out;
  clang_visitChildren(
      c,
      [](CXCursor child, CXCursor, CXClientData data) {
        static_cast<std::vector<CXCursor>*>(data)->push_back(child);
        return CXChildVisit_Continue;
      },
      &out);
  return out;
}

bool is_integer_type(CXType t) {
  switch (clang_getCanonicalType(t).kind) {
    case CXType_Bool: case CXType_Char_U: case CXType_UChar: case CXType_UShort: case CXType_UInt:
    case CXType_ULong: case CXType_ULongLong: case CXType_Char_S: case CXType_SChar: case CXType_Short:
    case CXType_Int: case CXType_Long: case CXType_LongLong: case CXType_Enum:
      return true;
    default:
      return false;
  }
}

bool is_signed_type(CXType t) {
  switch (clang_getCanonicalType(t).kind) {
    case CXType_Char_S: case CXType_SChar: case CXType_Short: case CXType_Int: case CXType_Long:
    case CXType_LongLong: case CXType_Enum:
      return true;
    default:
      return false;
  }
}

std::optional<uint64_t> type_size(CXType t) {
  long long size = clang_Type_getSizeOf(t);
  if (size <= 0) return std::nullopt;
  return uint64_t(size);
}

std::vector<CXCursor> expression_kids(CXCursor c) {
  std::vector<CXCursor> out;
  for (CXCursor k : children_of(c))
    if (clang_isExpression(clang_getCursorKind(k))) out.push_back(k);
  return out;
}

// The same AST node. clang_equalCursors also compares the parent declaration a cursor was made
// with, which differs between clang_Cursor_getArgument and a visit through a VarDecl.
bool same_node(CXCursor a, CXCursor b) {
  if (clang_equalCursors(a, b)) return true;
  if (clang_getCursorKind(a) != clang_getCursorKind(b) || clang_hashCursor(a) != clang_hashCursor(b)) return false;
  CXSourceRange ra = clang_getCursorExtent(a), rb = clang_getCursorExtent(b);
  return clang_equalLocations(clang_getRangeStart(ra), clang_getRangeStart(rb)) &&
         clang_equalLocations(clang_getRangeEnd(ra), clang_getRangeEnd(rb));
}

// True when the statement may leave the enclosing block early (return, break, continue, goto).
bool contains_exit(CXCursor c) {
  CXCursorKind kind = clang_getCursorKind(c);
  if (kind == CXCursor_ReturnStmt || kind == CXCursor_BreakStmt || kind == CXCursor_ContinueStmt ||
      kind == CXCursor_GotoStmt || kind == CXCursor_IndirectGotoStmt)
    return true;
  for (CXCursor k : children_of(c))
    if (contains_exit(k)) return true;
  return false;
}

CXType canonical_type(CXCursor c) { return clang_getCanonicalType(clang_getCursorType(c)); }

bool is_pointer_type(CXType t) { return clang_getCanonicalType(t).kind == CXType_Pointer; }

bool is_array_type(CXType t) {
  switch (clang_getCanonicalType(t).kind) {
    case CXType_ConstantArray:
    case CXType_IncompleteArray:
    case CXType_VariableArray:
    case CXType_DependentSizedArray:
      return true;
    default:
      return false;
  }
}

bool is_pointer_or_array(CXType t) { return is_pointer_type(t) || is_array_type(t); }
bool is_ext_vector_type(CXType t) { return clang_getCanonicalType(t).kind == CXType_ExtVector; }
bool is_record_type(CXType t) { return clang_getCanonicalType(t).kind == CXType_Record; }
bool same_type(CXType a, CXType b) { return clang_equalTypes(clang_getCanonicalType(a), clang_getCanonicalType(b)) != 0; }

CXType pointee_or_element(CXType t) {
  CXType c = clang_getCanonicalType(t);
  if (c.kind == CXType_Pointer) return clang_getCanonicalType(clang_getPointeeType(c));
  if (is_array_type(c)) return clang_getCanonicalType(clang_getArrayElementType(c));
  CXType invalid{};
  invalid.kind = CXType_Invalid;
  return invalid;
}

std::string address_space_of(CXType t) {
  // clang spells OpenCL address spaces as qualifiers: "float const __global", and a pointer's own
  // qualifiers after its star: "__global float *__private". The numeric clang_getAddressSpace
  // differs between clang versions (and crashes on some types); the spelling does not.
  CXType canonical = clang_getCanonicalType(t);
  std::string text = type_spelling(canonical);
  if (canonical.kind == CXType_Pointer) {
    size_t star = text.rfind('*');
    text = star == std::string::npos ? "" : text.substr(star + 1);
  }
  std::istringstream words(text);
  std::string word;
  while (words >> word) {
    if (word == "__global") return "global";
    if (word == "__local") return "local";
    if (word == "__constant") return "constant";
    if (word == "__private") return "private";
    if (word == "__generic") return "generic";
  }
  return "";
}

std::string pointee_address_space(CXType pointer_or_array) {
  CXType inner = pointee_or_element(pointer_or_array);
  return inner.kind == CXType_Invalid ? "" : address_space_of(inner);
}

namespace {
bool contains_pointer_at(CXType t, int depth) {
  if (depth > 16) return true;  // a cycle through pointers is a pointer anyway
  CXType c = clang_getCanonicalType(t);
  if (c.kind == CXType_Pointer) return true;
  if (is_array_type(c)) return contains_pointer_at(clang_getArrayElementType(c), depth + 1);
  if (c.kind != CXType_Record) return false;
  struct Search {
    int depth;
    bool found;
  } search{depth, false};
  clang_Type_visitFields(
      c,
      [](CXCursor field, CXClientData data) {
        auto* s = static_cast<Search*>(data);
        if (contains_pointer_at(clang_getCursorType(field), s->depth + 1)) {
          s->found = true;
          return CXVisit_Break;
        }
        return CXVisit_Continue;
      },
      &search);
  return search.found;
}
}  // namespace

bool contains_pointer(CXType t) { return contains_pointer_at(t, 0); }

bool same_file(CXFile a, CXFile b) {
  if (!a || !b) return false;
  if (a == b) return true;
  return clang_File_isEqual(a, b) && take_string(clang_getFileName(a)) == take_string(clang_getFileName(b));
}

FilePosition expansion_position(CXSourceLocation loc) {
  FilePosition p;
  unsigned column = 0;
  clang_getExpansionLocation(loc, &p.file, &p.line, &column, &p.offset);
  return p;
}

FilePosition spelling_position(CXSourceLocation loc) {
  FilePosition p;
  unsigned column = 0;
  clang_getSpellingLocation(loc, &p.file, &p.line, &column, &p.offset);
  return p;
}

bool is_macro_location(CXSourceLocation loc) {
  FilePosition e = expansion_position(loc);
  FilePosition s = spelling_position(loc);
  if (!e.file || !s.file) return true;
  return !same_file(e.file, s.file) || e.offset != s.offset;
}

FileSpan expansion_span(CXCursor c) {
  CXSourceRange range = clang_getCursorExtent(c);
  FilePosition b = expansion_position(clang_getRangeStart(range));
  FilePosition e = expansion_position(clang_getRangeEnd(range));
  FileSpan span;
  if (!b.file || !e.file || !same_file(b.file, e.file)) return span;
  span.file = b.file;
  span.begin = b.offset;
  span.end = e.offset;
  return span;
}

std::vector<Token> tokens_in(CXTranslationUnit unit, CXFile file, unsigned begin, unsigned end) {
  std::vector<Token> out;
  if (!file || end <= begin) return out;
  CXSourceRange range =
      clang_getRange(clang_getLocationForOffset(unit, file, begin), clang_getLocationForOffset(unit, file, end));
  CXToken* tokens = nullptr;
  unsigned count = 0;
  clang_tokenize(unit, range, &tokens, &count);
  for (unsigned i = 0; i < count; ++i) {
    CXSourceRange extent = clang_getTokenExtent(unit, tokens[i]);
    FilePosition b = spelling_position(clang_getRangeStart(extent));
    FilePosition e = spelling_position(clang_getRangeEnd(extent));
    if (b.offset < begin || e.offset > end) continue;  // clang_tokenize may run one token over
    out.push_back({take_string(clang_getTokenSpelling(unit, tokens[i])), clang_getTokenKind(tokens[i]), b.offset,
                   e.offset});
  }
  if (tokens) clang_disposeTokens(unit, tokens, count);
  return out;
}

CXCursor strip_implicit(CXCursor c) {
  for (;;) {
    CXCursorKind kind = clang_getCursorKind(c);
    if (kind != CXCursor_UnexposedExpr && kind != CXCursor_ParenExpr) return c;
    std::vector<CXCursor> kids = children_of(c);
    if (kids.size() != 1) return c;
    c = kids[0];
  }
}

}  // namespace coex::kernel
