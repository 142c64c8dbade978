// Small helpers over libclang's C API: strings, children, types, locations and tokens. They only
// read what clang already parsed; nothing here looks at the program's text by itself.
#pragma once

#include "kernel/libclang_api.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace coex::kernel {

std::string take_string(CXString s);
std::string cursor_spelling(CXCursor c);
std::string type_spelling(CXType t);
std::vector<CXCursor> children_of(CXCursor c);
std::vector<CXCursor> expression_kids(CXCursor c);  // the children that are expressions

bool is_integer_type(CXType t);  // canonical type is an integer (bool and enums included)
bool is_signed_type(CXType t);
std::optional<uint64_t> type_size(CXType t);  // bytes; nullopt when clang cannot tell

// The same AST node. clang_equalCursors also compares the parent declaration a cursor was made
// with, which differs between clang_Cursor_getArgument and a visit through a VarDecl.
bool same_node(CXCursor a, CXCursor b);
// True when the statement may leave the enclosing block early (return, break, continue, goto).
bool contains_exit(CXCursor c);

CXType canonical_type(CXCursor c);
bool is_pointer_type(CXType t);  // canonical type is a pointer
bool is_array_type(CXType t);    // canonical type is an array of any kind
bool is_pointer_or_array(CXType t);
bool is_ext_vector_type(CXType t);
bool is_record_type(CXType t);
bool same_type(CXType a, CXType b);  // equal canonical types
// The element type of an array or the pointee of a pointer (canonical), invalid otherwise.
CXType pointee_or_element(CXType t);

// OpenCL address space of the pointee of a pointer type (or of the elements of an array type), as
// clang spells the qualifier: "global", "local", "constant", "private", "generic", or "" when none
// is written (the default: private in OpenCL C 1.x).
std::string pointee_address_space(CXType pointer_or_array);
// The address space qualifier of a type itself (for a variable's type).
std::string address_space_of(CXType t);

// True when the canonical type is a pointer, or a record that holds a pointer in some field (at any
// depth, arrays included).
bool contains_pointer(CXType t);

// Unsaved (in-memory) files all share one unique id, so clang_File_isEqual calls any two of them
// equal; this compares the names too.
bool same_file(CXFile a, CXFile b);

// A location as an offset into a file, taken where the text was expanded (the outermost macro use).
struct FilePosition {
  CXFile file = nullptr;
  unsigned offset = 0;
  unsigned line = 0;
  bool valid() const { return file != nullptr; }
};
FilePosition expansion_position(CXSourceLocation loc);
FilePosition spelling_position(CXSourceLocation loc);
// True when the location lies in a macro expansion, i.e. its spelling is not where it expands.
bool is_macro_location(CXSourceLocation loc);

struct FileSpan {
  CXFile file = nullptr;
  unsigned begin = 0;  // offsets in the file, [begin, end)
  unsigned end = 0;
  bool contains(const FilePosition& p) const { return file && p.file && same_file(file, p.file) && p.offset >= begin && p.offset < end; }
};
FileSpan expansion_span(CXCursor c);

// The tokens of a file range, with the spelling, kind and offset of each.
struct Token {
  std::string spelling;
  CXTokenKind kind;
  unsigned offset;
  unsigned end_offset;
};
std::vector<Token> tokens_in(CXTranslationUnit unit, CXFile file, unsigned begin, unsigned end);

// The expression under implicit conversions and parentheses: clang wraps uses of lvalues, array and
// function names in implicit casts, which libclang shows as unexposed expressions.
CXCursor strip_implicit(CXCursor c);

}  // namespace coex::kernel
