#include "kernel/function_facts.h"

#include <algorithm>

namespace coex::kernel {
namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

bool is_atomic_builtin(const std::string& name) {
  if (name == "atomic_work_item_fence" || starts_with(name, "atomic_flag_init")) return false;
  return starts_with(name, "atomic_") || starts_with(name, "atom_") || starts_with(name, "__sync_") ||
         starts_with(name, "__atomic_") || starts_with(name, "__c11_atomic_") || starts_with(name, "__opencl_atomic_");
}

AccessMode atomic_mode(const std::string& name) {
  if (starts_with(name, "atomic_load")) return AccessMode::Read;
  if (starts_with(name, "atomic_store") || starts_with(name, "atomic_init")) return AccessMode::Write;
  return AccessMode::ReadWrite;
}

bool is_device_enqueue_builtin(const std::string& name) {
  return name == "enqueue_kernel" || name == "enqueue_marker" || name == "get_default_queue" ||
         starts_with(name, "get_kernel_");
}

// Builtins that only convert a pointer's address space (OpenCL C 2.0, 6.13.9).
bool is_address_space_cast(const std::string& name) {
  return name == "to_global" || name == "to_local" || name == "to_private";
}

enum class Context { Value, Store, Update, Address };

bool reads(Context c) { return c == Context::Value || c == Context::Update; }
bool writes(Context c) { return c == Context::Store || c == Context::Update; }

bool is_expression(CXCursor c) { return clang_isExpression(clang_getCursorKind(c)) != 0; }

std::vector<CXCursor> expression_children(CXCursor c) {
  std::vector<CXCursor> out;
  for (CXCursor k : children_of(c))
    if (is_expression(k)) out.push_back(k);
  return out;
}

bool is_null_constant(CXCursor c) {
  CXCursor inner = strip_implicit(c);
  if (clang_getCursorKind(inner) != CXCursor_IntegerLiteral) return false;
  CXEvalResult result = clang_Cursor_Evaluate(inner);
  if (!result) return false;
  bool zero = clang_EvalResult_getKind(result) == CXEval_Int && clang_EvalResult_getAsLongLong(result) == 0;
  clang_EvalResult_dispose(result);
  return zero;
}

class BodyWalker {
 public:
  BodyWalker(ProgramFacts& program, FunctionFacts& facts) : program_(program), tokens_(program.tokens()), facts_(facts) {
    for (size_t i = 0; i < facts.params.size(); ++i)
      variable_roots_[declaration_key(facts.params[i])] = {static_cast<int>(i)};
  }

  void run(CXCursor body) {
    // Pointer variables first: which parameters each may point into (flow-insensitive, to a
    // fixed point, so that an assignment later in the body counts for uses earlier in a loop).
    for (int round = 0; round < 16; ++round) {
      changed_ = false;
      collect_aliases(body);
      if (!changed_) break;
    }
    visit(body, Context::Value);
  }

 private:
  ProgramFacts& program_;
  SourceTokens& tokens_;
  FunctionFacts& facts_;
  std::map<std::string, PointerRoots> variable_roots_;
  bool changed_ = false;

  bool is_local_variable(CXCursor decl) const {
    CXCursorKind kind = clang_getCursorKind(decl);
    if (kind == CXCursor_ParmDecl) return true;
    if (kind != CXCursor_VarDecl) return false;
    // clang_isTranslationUnit, not CXCursor_TranslationUnit: that enum value moved in libclang 15.
    return !clang_isTranslationUnit(clang_getCursorKind(clang_getCursorSemanticParent(decl))) &&
           clang_Cursor_getStorageClass(decl) != CX_SC_Static;
  }

  void add_roots(CXCursor variable, const PointerRoots& roots) {
    PointerRoots& target = variable_roots_[declaration_key(variable)];
    size_t before = target.size();
    target.insert(roots.begin(), roots.end());
    if (target.size() != before) changed_ = true;
  }

  void collect_aliases(CXCursor c) {
    CXCursorKind kind = clang_getCursorKind(c);
    if (kind == CXCursor_VarDecl && is_pointer_type(clang_getCursorType(c))) {
      for (CXCursor init : expression_children(c)) add_roots(c, pointer_roots(init));
    } else if (kind == CXCursor_BinaryOperator && is_plain_assignment(c, tokens_)) {
      std::vector<CXCursor> kids = children_of(c);
      CXCursor target = strip_implicit(kids[0]);
      if (clang_getCursorKind(target) == CXCursor_DeclRefExpr && is_pointer_type(clang_getCursorType(target))) {
        CXCursor decl = clang_getCursorReferenced(target);
        if (is_local_variable(decl)) add_roots(decl, pointer_roots(kids[1]));
      }
    }
    for (CXCursor k : children_of(c)) collect_aliases(k);
  }

  PointerRoots union_of(const PointerRoots& a, const PointerRoots& b) const {
    PointerRoots out = a;
    out.insert(b.begin(), b.end());
    return out;
  }

  // Where the value of a pointer expression may point.
  PointerRoots pointer_roots(CXCursor e) {
    std::vector<CXCursor> kids = expression_children(e);
    switch (clang_getCursorKind(e)) {
      case CXCursor_ParenExpr:
        return kids.size() == 1 ? pointer_roots(kids[0]) : PointerRoots{kOtherMemory};
      case CXCursor_UnexposedExpr:
      case CXCursor_CStyleCastExpr: {
        if (clang_getCursorKind(e) == CXCursor_UnexposedExpr && classify_unexposed(e) != UnexposedRole::ImplicitCast)
          return {kOtherMemory};
        if (kids.empty()) return {kOtherMemory};
        CXCursor operand = kids.back();
        if (is_array_type(clang_getCursorType(operand))) return lvalue_roots(operand);
        if (is_pointer_type(clang_getCursorType(operand))) return pointer_roots(operand);
        return is_null_constant(operand) ? PointerRoots{} : PointerRoots{kOtherMemory};
      }
      case CXCursor_DeclRefExpr: {
        CXCursor decl = clang_getCursorReferenced(e);
        if (is_array_type(clang_getCursorType(decl))) return {kOtherMemory};
        if (!is_local_variable(decl)) return {kOtherMemory};
        auto it = variable_roots_.find(declaration_key(decl));
        return it == variable_roots_.end() ? PointerRoots{} : it->second;
      }
      case CXCursor_BinaryOperator:
      case CXCursor_ConditionalOperator: {
        PointerRoots out;
        size_t first = clang_getCursorKind(e) == CXCursor_ConditionalOperator ? 1 : 0;
        for (size_t i = first; i < kids.size(); ++i)
          if (is_pointer_or_array(clang_getCursorType(kids[i]))) out = union_of(out, pointer_roots(kids[i]));
        return out;
      }
      case CXCursor_CompoundAssignOperator:
        return kids.empty() ? PointerRoots{kOtherMemory} : pointer_roots(kids[0]);
      case CXCursor_UnaryOperator:
        if (kids.size() != 1) return {kOtherMemory};
        if (unary_takes_address(e, tokens_)) return lvalue_roots(kids[0]);
        if (unary_modifies_operand(e, tokens_)) return pointer_roots(kids[0]);
        return {kOtherMemory};
      case CXCursor_CallExpr: {
        std::string name = cursor_spelling(clang_getCursorReferenced(e));
        int n = clang_Cursor_getNumArguments(e);
        if (is_address_space_cast(name) && n >= 1) return pointer_roots(clang_Cursor_getArgument(e, 0));
        PointerRoots out{kOtherMemory};
        // A helper's result may point wherever its pointer arguments do.
        for (int i = 0; i < n; ++i) {
          CXCursor arg = clang_Cursor_getArgument(e, static_cast<unsigned>(i));
          if (is_pointer_or_array(clang_getCursorType(arg))) out = union_of(out, pointer_roots(arg));
        }
        return out;
      }
      default:
        return {kOtherMemory};
    }
  }

  // The memory an lvalue designates.
  PointerRoots lvalue_roots(CXCursor lv) {
    std::vector<CXCursor> kids = expression_children(lv);
    switch (clang_getCursorKind(lv)) {
      case CXCursor_ParenExpr:
        return kids.size() == 1 ? lvalue_roots(kids[0]) : PointerRoots{kOtherMemory};
      case CXCursor_ArraySubscriptExpr: {
        PointerRoots out;
        for (CXCursor k : kids)
          if (is_pointer_or_array(clang_getCursorType(k))) out = union_of(out, pointer_roots(k));
        return out.empty() ? PointerRoots{kOtherMemory} : out;
      }
      case CXCursor_UnaryOperator:
        return kids.size() == 1 && unary_dereferences(lv, tokens_) ? pointer_roots(kids[0]) : PointerRoots{kOtherMemory};
      case CXCursor_MemberRefExpr:
        if (kids.size() != 1) return {kOtherMemory};
        return is_pointer_type(clang_getCursorType(kids[0])) ? pointer_roots(kids[0]) : lvalue_roots(kids[0]);
      case CXCursor_UnexposedExpr:
        return kids.size() == 1 ? lvalue_roots(kids[0]) : PointerRoots{kOtherMemory};
      default:
        return {kOtherMemory};
    }
  }

  // modelled: the use is a MemoryAccess of this body that the footprint can translate.
  void mark(const PointerRoots& roots, bool read, bool written, bool modelled = false) {
    for (int r : roots) {
      if (r < 0 || static_cast<size_t>(r) >= facts_.param_uses.size()) continue;
      ParamUse& use = facts_.param_uses[static_cast<size_t>(r)];
      use.read |= read;
      use.written |= written;
      use.unmodelled_read |= read && !modelled;
      use.unmodelled_write |= written && !modelled;
    }
  }

  void escape(const PointerRoots& roots) {
    mark(roots, true, true);
    for (int r : roots)
      if (r >= 0 && static_cast<size_t>(r) < facts_.param_uses.size()) facts_.param_uses[static_cast<size_t>(r)].escapes = true;
  }

  void escape_if_pointer(CXCursor e) {
    if (is_pointer_or_array(clang_getCursorType(e))) escape(pointer_roots(e));
  }

  void record_access(CXCursor lvalue, const PointerRoots& roots, Context ctx) {
    if (ctx == Context::Address) return;
    mark(roots, reads(ctx), writes(ctx), true);
    AccessMode mode = ctx == Context::Value ? AccessMode::Read : ctx == Context::Store ? AccessMode::Write : AccessMode::ReadWrite;
    facts_.accesses.push_back({lvalue, roots, mode, clang_getNullCursor()});
  }

  void note_variable_use(CXCursor ref) {
    CXCursor decl = clang_getCursorReferenced(ref);
    if (clang_getCursorKind(decl) != CXCursor_VarDecl || is_local_variable(decl)) return;
    CXType type = clang_getCursorType(decl);
    if (clang_getCanonicalType(type).kind == CXType_OCLSampler) return;
    if (address_space_of(type) == "constant" || clang_isConstQualifiedType(clang_getCanonicalType(type))) return;
    facts_.program_scope_variables = true;
  }

  void visit_children(CXCursor c, Context ctx) {
    for (CXCursor k : children_of(c)) visit(k, ctx);
  }

  void visit(CXCursor c, Context ctx) {
    std::vector<CXCursor> kids = expression_children(c);
    switch (clang_getCursorKind(c)) {
      case CXCursor_ForStmt:
      case CXCursor_WhileStmt:
      case CXCursor_DoStmt:
        facts_.loops = true;
        break;
      case CXCursor_UnaryExpr:  // sizeof, vec_step, alignof: not evaluated
        return;
      case CXCursor_DeclRefExpr:
        note_variable_use(c);
        return;
      case CXCursor_ArraySubscriptExpr:
        record_access(c, lvalue_roots(c), ctx);
        for (CXCursor k : kids) visit(k, Context::Value);
        return;
      case CXCursor_MemberRefExpr:
        if (kids.size() == 1 && is_pointer_type(clang_getCursorType(kids[0]))) {
          record_access(c, pointer_roots(kids[0]), ctx);
          visit(kids[0], Context::Value);
        } else {
          // s.f, p[i].f: the access is to the field, inside the memory of s.
          record_access(c, lvalue_roots(c), ctx);
          for (CXCursor k : kids) visit(k, Context::Address);
        }
        return;
      case CXCursor_ParenExpr:
        for (CXCursor k : kids) visit(k, ctx);
        return;
      case CXCursor_UnexposedExpr:
        visit_unexposed(c, kids, ctx);
        return;
      case CXCursor_UnaryOperator:
        if (kids.size() != 1) break;
        if (unary_modifies_operand(c, tokens_)) {
          visit(kids[0], Context::Update);
        } else if (unary_takes_address(c, tokens_)) {
          visit(kids[0], Context::Address);
        } else if (unary_dereferences(c, tokens_)) {
          record_access(c, pointer_roots(kids[0]), ctx);
          visit(kids[0], Context::Value);
        } else {
          visit(kids[0], Context::Value);
        }
        return;
      case CXCursor_BinaryOperator:
        if (kids.size() == 2 && is_plain_assignment(c, tokens_)) {
          visit(kids[0], Context::Store);
          visit(kids[1], Context::Value);
          CXCursor target = strip_implicit(kids[0]);
          bool to_pointer_variable = clang_getCursorKind(target) == CXCursor_DeclRefExpr &&
                                     is_pointer_type(clang_getCursorType(target)) &&
                                     is_local_variable(clang_getCursorReferenced(target));
          if (!to_pointer_variable) escape_if_pointer(kids[1]);
          return;
        }
        break;
      case CXCursor_CompoundAssignOperator:
        if (kids.size() == 2) {
          visit(kids[0], Context::Update);
          visit(kids[1], Context::Value);
          return;
        }
        break;
      case CXCursor_CStyleCastExpr:
        if (!kids.empty()) {
          CXCursor operand = kids.back();
          bool to_pointer = is_pointer_type(clang_getCursorType(c));
          bool from_pointer = is_pointer_or_array(clang_getCursorType(operand));
          if (from_pointer && !to_pointer) escape(pointer_roots(operand));
          if (to_pointer && !from_pointer && !is_null_constant(operand)) facts_.integer_to_pointer = true;
          visit(operand, Context::Value);
          return;
        }
        break;
      case CXCursor_InitListExpr:
      case CXCursor_CompoundLiteralExpr:
        for (CXCursor k : kids) {
          escape_if_pointer(k);
          visit(k, Context::Value);
        }
        return;
      case CXCursor_VarDecl:
        for (CXCursor init : kids) {
          if (!is_pointer_type(clang_getCursorType(c))) escape_if_pointer(init);
          visit(init, Context::Value);
        }
        if (!is_local_variable(c) && address_space_of(clang_getCursorType(c)) == "global")
          facts_.program_scope_variables = true;
        return;
      case CXCursor_CallExpr:
        visit_call(c);
        return;
      case CXCursor_BlockExpr:
        facts_.device_enqueue = true;
        break;
      default:
        break;
    }
    visit_children(c, Context::Value);
  }

  void visit_unexposed(CXCursor c, const std::vector<CXCursor>& kids, Context ctx) {
    UnexposedRole role = classify_unexposed(c);
    if (role == UnexposedRole::VectorElement || role == UnexposedRole::MaybeVectorElement) {
      // v.x = 1 stores into (part of) v: the access is the swizzle's, inside the memory of v.
      record_access(c, lvalue_roots(c), ctx);
      for (CXCursor k : kids) visit(k, Context::Address);
      return;
    }
    if (role == UnexposedRole::ImplicitCast && kids.size() == 1) {
      // Array-to-pointer decay reads nothing; every other implicit conversion reads its operand.
      visit(kids[0], is_array_type(clang_getCursorType(kids[0])) ? Context::Address : Context::Value);
      return;
    }
    for (CXCursor k : kids) {
      escape_if_pointer(k);  // an expression libclang does not expose: its pointers cannot be followed
      visit(k, Context::Value);
    }
  }

  void visit_call(CXCursor call) {
    CXCursor callee = clang_getCursorReferenced(call);
    std::string name = cursor_spelling(callee);
    int n = clang_Cursor_getNumArguments(call);
    std::vector<CXCursor> args;
    for (int i = 0; i < n; ++i) args.push_back(clang_Cursor_getArgument(call, static_cast<unsigned>(i)));
    CXCursor definition = clang_getCursorDefinition(callee);
    if (!clang_Cursor_isNull(definition) && clang_getCursorKind(definition) == CXCursor_FunctionDecl) {
      const FunctionFacts& callee_facts = program_.of(definition);
      if (callee_facts.recursion || declaration_key(definition) == declaration_key(facts_.definition))
        facts_.recursion = true;
      facts_.callees.push_back(definition);
      FunctionFacts::CallSite site{call, std::vector<PointerRoots>(args.size())};
      for (size_t i = 0; i < args.size(); ++i) {
        if (is_pointer_or_array(clang_getCursorType(args[i]))) {
          PointerRoots roots = pointer_roots(args[i]);
          site.arg_roots[i] = roots;
          if (i < callee_facts.param_uses.size()) {
            const ParamUse& use = callee_facts.param_uses[i];
            mark(roots, use.read, use.written, true);
            mark(roots, use.unmodelled_read, use.unmodelled_write);
            if (use.escapes) escape(roots);
          } else {
            escape(roots);
          }
        }
        visit(args[i], Context::Value);
      }
      facts_.call_sites.push_back(std::move(site));
      return;
    }
    visit_builtin_call(call, name, args);
  }

  void visit_builtin_call(CXCursor call, const std::string& name, const std::vector<CXCursor>& args) {
    if (is_launch_builtin(name)) facts_.launch_builtins = true;
    if (is_device_enqueue_builtin(name)) facts_.device_enqueue = true;
    int pointer_index = -1;
    for (size_t i = 0; i < args.size(); ++i)
      if (is_pointer_or_array(clang_getCursorType(args[i]))) {
        if (pointer_index < 0) pointer_index = static_cast<int>(i);
      }
    for (size_t i = 0; i < args.size(); ++i) {
      CXCursor arg = args[i];
      if (is_pointer_or_array(clang_getCursorType(arg))) {
        PointerRoots roots = pointer_roots(arg);
        bool last = i + 1 == args.size();
        if (is_atomic_builtin(name) && static_cast<int>(i) == pointer_index) {
          AccessMode mode = atomic_mode(name);
          mark(roots, mode != AccessMode::Write, mode != AccessMode::Read);
          if (!points_to_local(arg)) facts_.global_atomics = true;
        } else if (starts_with(name, "vload") && last) {
          mark(roots, true, false, true);
          facts_.accesses.push_back({arg, roots, AccessMode::Read, call});
        } else if (starts_with(name, "vstore") && last) {
          mark(roots, false, true, true);
          facts_.accesses.push_back({arg, roots, AccessMode::Write, call});
        } else if (starts_with(name, "async_work_group") && i <= 1) {
          mark(roots, i == 1, i == 0);
        } else if (name == "prefetch" || is_address_space_cast(name) || name == "printf") {
          if (name == "printf") mark(roots, true, false);
        } else {
          // A builtin coex does not know: whatever it does with the pointer, it may read and write.
          escape(roots);
        }
      }
      visit(arg, Context::Value);
    }
  }

  // True when the pointer, before any conversion to the generic address space, is __local.
  bool points_to_local(CXCursor arg) {
    for (CXCursor c = arg;;) {
      if (is_pointer_or_array(clang_getCursorType(c)) && pointee_address_space(clang_getCursorType(c)) == "local")
        return true;
      CXCursorKind kind = clang_getCursorKind(c);
      if (kind != CXCursor_UnexposedExpr && kind != CXCursor_ParenExpr && kind != CXCursor_CStyleCastExpr) return false;
      std::vector<CXCursor> kids = expression_children(c);
      if (kids.size() != 1) return false;
      c = kids[0];
    }
  }
};

FilePosition position_of(CXCursor c) { return expansion_position(clang_getCursorLocation(c)); }

}  // namespace

std::string declaration_key(CXCursor declaration) {
  std::string usr = take_string(clang_getCursorUSR(declaration));
  if (!usr.empty()) return usr;
  FilePosition p = position_of(declaration);
  return cursor_spelling(declaration) + "@" + take_string(clang_getFileName(p.file)) + ":" + std::to_string(p.offset);
}

bool is_launch_builtin(const std::string& name) {
  return name == "get_group_id" || name == "get_num_groups" || name == "get_global_size" ||
         name == "get_global_offset" || name == "get_global_linear_id";
}

const FunctionFacts& ProgramFacts::of(CXCursor definition) {
  std::string key = declaration_key(definition);
  auto it = done_.find(key);
  if (it != done_.end()) return *it->second;
  auto facts = std::make_unique<FunctionFacts>();
  facts->name = cursor_spelling(definition);
  facts->definition = definition;
  int n = clang_Cursor_getNumArguments(definition);
  for (int i = 0; i < n; ++i) facts->params.push_back(clang_Cursor_getArgument(definition, static_cast<unsigned>(i)));
  facts->param_uses.resize(facts->params.size());
  if (in_progress_.count(key)) {
    // OpenCL C forbids recursion; should clang accept it, assume the worst of the cycle.
    facts->recursion = true;
    for (auto& use : facts->param_uses) use = {true, true, true};
    cycle_stand_ins_.push_back(std::move(facts));
    return *cycle_stand_ins_.back();
  }
  in_progress_.insert(key);
  FileSpan span = expansion_span(definition);
  for (const auto& e : errors_)
    if (span.contains(e)) facts->has_errors = true;
  if (clang_isInvalidDeclaration(definition)) facts->has_errors = true;
  for (CXCursor child : children_of(definition))
    if (clang_getCursorKind(child) == CXCursor_CompoundStmt) BodyWalker(*this, *facts).run(child);
  in_progress_.erase(key);
  auto& stored = done_[key];
  stored = std::move(facts);
  return *stored;
}

}  // namespace coex::kernel
