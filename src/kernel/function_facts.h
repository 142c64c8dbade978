// What one function of an OpenCL C program does with its pointer parameters and which builtins that
// matter to a split it calls, found by walking its body in libclang's AST. Calls to functions that
// the program defines are followed (their facts are computed first), so a pointer handed to a
// helper counts as read or written exactly when the helper reads or writes it.
#pragma once

#include "kernel/libclang_api.h"

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "kernel/expr_shape.h"

namespace coex::kernel {

// Where a pointer may point: indices of the function's parameters, plus kOtherMemory for anything
// else (private or local variables, program-scope data, pointers loaded from memory).
using PointerRoots = std::set<int>;
inline constexpr int kOtherMemory = -1;

enum class AccessMode { Read, Write, ReadWrite };

// One load or store through a pointer in the function's own body (not in callees): the lvalue
// expression and where its pointer may point. Phase 2 (footprints) reads the index expressions.
struct MemoryAccess {
  CXCursor lvalue;  // the lvalue, or the pointer argument of a vloadn/vstoren call
  PointerRoots roots;
  AccessMode mode;
  CXCursor call;    // the vloadn/vstoren call, or a null cursor
};

struct ParamUse {
  bool read = false;
  bool written = false;
  bool escapes = false;  // stored, converted to an integer or passed where it cannot be followed
  // Read or written other than by a MemoryAccess of this body or of a callee's (by a builtin, after
  // escaping): the footprint cannot say where. A callee's accesses count as modelled: the footprint
  // builder walks the callee's body for each call, and falls back itself where that fails.
  bool unmodelled_read = false;
  bool unmodelled_write = false;
};

struct FunctionFacts {
  std::string name;
  CXCursor definition;
  std::vector<CXCursor> params;
  std::vector<ParamUse> param_uses;  // one per parameter; only pointer parameters get marked
  std::vector<MemoryAccess> accesses;
  std::vector<CXCursor> callees;  // definitions of the program's own functions called here
  // Each call of one of them, with where its pointer arguments may point (empty for the others).
  struct CallSite {
    CXCursor call;
    std::vector<PointerRoots> arg_roots;
  };
  std::vector<CallSite> call_sites;
  bool launch_builtins = false;   // get_group_id, get_num_groups, get_global_size, get_global_offset, get_global_linear_id
  bool global_atomics = false;    // an atomic builtin on memory not provably __local
  bool device_enqueue = false;    // enqueue_kernel, enqueue_marker, get_default_queue or a block
  bool integer_to_pointer = false;  // a pointer made from an integer: memory no argument names (SVM)
  bool program_scope_variables = false;  // reads or writes a non-constant program-scope variable
  bool recursion = false;         // calls back into a function under analysis
  bool loops = false;             // a for, while or do statement in its own body
  bool has_errors = false;        // clang reported an error inside its definition
};

class ProgramFacts {
 public:
  explicit ProgramFacts(SourceTokens& tokens) : tokens_(tokens) {}
  // The facts of a function definition, computed once (callees first).
  const FunctionFacts& of(CXCursor definition);
  // Error positions that mark the functions containing them as unanalysable.
  void set_error_positions(std::vector<FilePosition> errors) { errors_ = std::move(errors); }
  SourceTokens& tokens() { return tokens_; }

 private:
  SourceTokens& tokens_;
  std::vector<FilePosition> errors_;
  std::map<std::string, std::unique_ptr<FunctionFacts>> done_;
  std::vector<std::unique_ptr<FunctionFacts>> cycle_stand_ins_;
  std::set<std::string> in_progress_;
};

// A stable key for a declaration: its USR, or its location for declarations without one.
std::string declaration_key(CXCursor declaration);

// Names of the builtins that return values of the original launch (docs/design.md, "A launch").
bool is_launch_builtin(const std::string& name);

}  // namespace coex::kernel
