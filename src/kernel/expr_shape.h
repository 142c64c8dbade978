// What an expression cursor is, beyond its libclang kind. libclang 14 and 16 (what coex runs on)
// do not say which operator a BinaryOperator or UnaryOperator holds (clang_getCursorBinaryOperatorKind
// came in 17), nor whether an unexposed expression is an implicit cast or a vector swizzle. The
// operator is read from the token clang lexed between the operands when that token provably is the
// operator (also through macros, see operator_token), and otherwise from the shape of the operands:
// clang wraps every operand it reads in an implicit cast, so an operand that is an lvalue without
// one is the target of an assignment, an increment or an address-of.
#pragma once

#include "kernel/libclang_api.h"

#include <map>
#include <string>
#include <vector>

#include "kernel/cursor_util.h"

namespace coex::kernel {

// Tokens of every file of a translation unit and its macro definitions and uses, looked up by offset.
class SourceTokens {
 public:
  explicit SourceTokens(CXTranslationUnit unit);
  CXTranslationUnit unit() const { return unit_; }

  // Tokens of the file, in order (lexed once per file).
  const std::vector<Token>& file_tokens(CXFile file);
  // Index of the token starting at offset, or -1.
  int token_at(CXFile file, unsigned offset);
  // Index of the last token that ends at or before offset, or -1.
  int token_before(CXFile file, unsigned offset);

  struct Macro {
    CXFile file = nullptr;  // null for predefined and command-line macros
    std::string name;
    bool single_token = false;  // object-like, defined in a file as one token: #define N 64
    bool function_like = false;
    unsigned begin = 0, end = 0;  // the definition in file: the name through the last token
  };
  struct Use {
    CXFile file = nullptr;
    unsigned begin = 0, end = 0;  // the name through the closing parenthesis of the arguments
    std::string name;
  };
  const std::vector<Macro>& macros() const { return macros_; }
  const std::vector<Use>& uses() const { return uses_; }
  bool is_macro_name(const std::string& name) const;
  const Macro* macro_named(const std::string& name) const;  // the last definition
  // The macro use (in a file, not inside another macro) that covers the position, or null.
  const Use* use_at(const FilePosition& p) const;
  // The operator of a binary operator cursor that comes from the body of a function-like macro
  // (see macro_body_operators), or "".
  std::string macro_body_operator(CXCursor binary);

 private:
  CXTranslationUnit unit_;
  struct FileTokens {
    CXFile file;
    std::vector<Token> tokens;
  };
  std::vector<FileTokens> files_;
  std::vector<Macro> macros_;
  std::vector<Use> uses_;
  bool body_operators_done_ = false;
  std::multimap<unsigned, std::pair<CXCursor, std::string>> body_operators_;  // by cursor hash
  void find_macro_body_operators();
};

enum class UnexposedRole {
  ImplicitCast,        // also the other one-operand wrappers clang does not expose (ConstantExpr, as_type)
  VectorElement,       // v.x, v.xy, v.s0123: an lvalue when v is one
  MaybeVectorElement,  // an implicit cast or v.xyzw, told apart only by tokens that a macro hid
  Other,
};
UnexposedRole classify_unexposed(CXCursor c);

// An expression that designates an object as written, without an implicit cast around it:
// a variable, p[i], *p, s.f, p->f, v.x, (lvalue).
bool is_lvalue_form(CXCursor c);

enum class UnaryOp { Deref, AddressOf, PreInc, PreDec, PostInc, PostDec, Plus, Minus, BitNot, LogicalNot, Unknown };
UnaryOp unary_operator(CXCursor c, SourceTokens& tokens);
// True when a UnaryOperator changes its operand (++ or --), decided from the operand's shape when
// the token is hidden.
bool unary_modifies_operand(CXCursor c, SourceTokens& tokens);
bool unary_takes_address(CXCursor c, SourceTokens& tokens);
bool unary_dereferences(CXCursor c, SourceTokens& tokens);

// The operator spelling of a BinaryOperator or CompoundAssignOperator ("+", "<<=", ...), or "" when
// it cannot be proven from the tokens.
std::string binary_operator(CXCursor c, SourceTokens& tokens);
// A plain assignment (=): from the token when known, else from the left operand's shape.
bool is_plain_assignment(CXCursor binary_operator_cursor, SourceTokens& tokens);

}  // namespace coex::kernel
