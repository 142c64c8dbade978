#include "kernel/footprint_builder.h"

#include <cctype>
#include <map>
#include <set>

namespace coex::kernel {
namespace {

class Builder {
 public:
  Builder(ProgramFacts& program, const FunctionFacts& facts, const KernelInfo& kernel)
      : tokens_(program.tokens()), facts_(facts) {
    size_t n = facts.params.size();
    d_.reads_unmodelled.resize(n);
    d_.writes_unmodelled.resize(n);
    d_.is_buffer.resize(n);
    for (size_t i = 0; i < n && i < kernel.args.size(); ++i) {
      d_.is_buffer[i] = kernel.args[i].kind == ArgKind::GlobalPointer || kernel.args[i].kind == ArgKind::ConstantPointer;
      d_.reads_unmodelled[i] = facts.param_uses[i].unmodelled_read;
      d_.writes_unmodelled[i] = facts.param_uses[i].unmodelled_write;
    }
    for (size_t i = 0; i < facts.accesses.size(); ++i) access_index_.emplace(clang_hashCursor(facts.accesses[i].lvalue), i);
    handled_.resize(facts.accesses.size());
  }

  std::shared_ptr<const FootprintModel> build() {
    for (CXCursor child : children_of(facts_.definition))
      if (clang_getCursorKind(child) == CXCursor_CompoundStmt) {
        collect_modified(child, modified_);
        walk(child, false);
      }
    for (size_t i = 0; i < handled_.size(); ++i)
      if (!handled_[i]) unmodelled(facts_.accesses[i]);
    return std::make_shared<const FootprintModel>(std::move(d_));
  }

 private:
  SourceTokens& tokens_;
  const FunctionFacts& facts_;
  FootprintModel::Definition d_;
  std::set<std::string> modified_;  // variables stored to, stepped or whose address is taken
  struct ActiveLoop {
    std::string counter;
    int index;
  };
  std::vector<ActiveLoop> loops_;  // the canonical loops around the walk, outermost first
  std::multimap<unsigned, size_t> access_index_;
  std::vector<bool> handled_;
  int depth_ = 0;  // of the recursion through nested expressions

  // Bounds that recursion: a source may nest expressions thousands deep.
  class Nesting {
   public:
    explicit Nesting(int& depth) : depth_(++depth) {}
    ~Nesting() { --depth_; }
    bool too_deep() const { return depth_ > 64; }

   private:
    int& depth_;
  };

  int param_id(const LaunchParam& p) {
    for (size_t i = 0; i < d_.params.size(); ++i)
      if (d_.params[i] == p) return int(i);
    d_.params.push_back(p);
    return int(d_.params.size() - 1);
  }

  Affine launch_value(LaunchParam::Kind kind, uint32_t dim) {
    LaunchParam p;
    p.kind = kind;
    p.index = dim;
    return Affine(Poly::param(param_id(p)));
  }

  std::optional<int64_t> constant_of(CXCursor e) {
    CXEvalResult r = clang_Cursor_Evaluate(e);
    if (!r) return std::nullopt;
    std::optional<int64_t> out;
    if (clang_EvalResult_getKind(r) == CXEval_Int) out = clang_EvalResult_getAsLongLong(r);
    clang_EvalResult_dispose(r);
    return out;
  }

  std::optional<Affine> constant_affine(CXCursor e) {
    auto c = constant_of(e);
    return c ? std::optional<Affine>(Affine(Poly::constant(*c))) : std::nullopt;
  }

  std::optional<size_t> param_index(const std::string& key) {
    for (size_t i = 0; i < facts_.params.size(); ++i)
      if (declaration_key(facts_.params[i]) == key) return i;
    return std::nullopt;
  }

  // The integer of `type` at byte_offset in by-value argument `index`, as a launch parameter.
  std::optional<Affine> argument_integer(size_t index, uint32_t byte_offset, CXType type) {
    auto size = type_size(type);
    if (!is_integer_type(type) || !size || *size > 8) return std::nullopt;
    LaunchParam p;
    p.index = uint32_t(index);
    p.byte_offset = byte_offset;
    p.byte_size = uint32_t(*size);
    p.is_signed = is_signed_type(type);
    return Affine(Poly::param(param_id(p)));
  }

  void collect_modified(CXCursor c, std::set<std::string>& into) {
    CXCursorKind kind = clang_getCursorKind(c);
    std::vector<CXCursor> kids = expression_kids(c);
    CXCursor target = clang_getNullCursor();
    if ((kind == CXCursor_BinaryOperator && is_plain_assignment(c, tokens_)) || kind == CXCursor_CompoundAssignOperator) {
      if (!kids.empty()) target = kids[0];
    } else if (kind == CXCursor_UnaryOperator && kids.size() == 1 &&
               (unary_modifies_operand(c, tokens_) || unary_takes_address(c, tokens_))) {
      target = kids[0];
    }
    if (!clang_Cursor_isNull(target)) {
      target = strip_implicit(target);
      if (clang_getCursorKind(target) == CXCursor_DeclRefExpr) into.insert(declaration_key(clang_getCursorReferenced(target)));
    }
    for (CXCursor k : children_of(c)) collect_modified(k, into);
  }

  std::optional<uint32_t> dimension(const std::vector<CXCursor>& args) {
    if (args.size() != 1) return std::nullopt;
    auto d = constant_of(args[0]);
    if (!d || *d < 0 || *d > 2) return std::nullopt;
    return uint32_t(*d);
  }

  std::optional<Affine> builtin(const std::string& name, const std::vector<CXCursor>& args) {
    using K = LaunchParam::Kind;
    if (name == "get_work_dim" && args.empty()) return launch_value(K::WorkDim, 0);
    if (name == "mul24" && args.size() == 2) {
      auto a = integer(args[0]), b = integer(args[1]);
      return a && b ? Affine::multiply(*a, *b) : std::nullopt;
    }
    if (name == "mad24" && args.size() == 3) {
      auto a = integer(args[0]), b = integer(args[1]), c = integer(args[2]);
      auto ab = a && b ? Affine::multiply(*a, *b) : std::nullopt;
      return ab && c ? std::optional<Affine>(*ab + *c) : std::nullopt;
    }
    auto d = dimension(args);
    if (!d) return std::nullopt;
    if (name == "get_local_id") return Affine::variable(kLocalId0 + int(*d));
    if (name == "get_group_id") return Affine::variable(kGroupId0 + int(*d));
    // get_global_id(d) = get_group_id(d) * local size + get_local_id(d) + global offset (OpenCL 1.2, 3.2).
    if (name == "get_global_id")
      return Affine::variable(kGroupId0 + int(*d)).scaled(launch_value(K::LocalSize, *d).constant()) +
             Affine::variable(kLocalId0 + int(*d)) + launch_value(K::GlobalOffset, *d);
    if (name == "get_local_size" || name == "get_enqueued_local_size") return launch_value(K::LocalSize, *d);
    if (name == "get_global_size") return launch_value(K::GlobalSize, *d);
    if (name == "get_num_groups") return launch_value(K::NumGroups, *d);
    if (name == "get_global_offset") return launch_value(K::GlobalOffset, *d);
    return std::nullopt;
  }

  std::optional<Affine> variable_value(CXCursor ref) {
    CXCursor decl = clang_getCursorReferenced(ref);
    std::string key = declaration_key(decl);
    for (auto it = loops_.rbegin(); it != loops_.rend(); ++it)
      if (it->counter == key) return Affine::variable(kFirstLoopVariable + it->index);
    CXCursorKind kind = clang_getCursorKind(decl);
    if (kind == CXCursor_EnumConstantDecl) return constant_affine(ref);
    if (modified_.count(key) || !is_integer_type(clang_getCursorType(decl))) return std::nullopt;
    if (kind == CXCursor_ParmDecl) {
      auto index = param_index(key);
      return index ? argument_integer(*index, 0, clang_getCursorType(decl)) : std::nullopt;
    }
    if (kind != CXCursor_VarDecl) return std::nullopt;
    std::vector<CXCursor> init = expression_kids(decl);
    if (init.size() != 1) return constant_affine(ref);
    return integer(init[0]);  // unmodified: its value is its initializer, wherever it is read
  }

  // A by-value struct argument's integer field, s.f or s.a.b.
  std::optional<Affine> argument_field(CXCursor member) {
    uint32_t offset = 0;
    CXCursor c = member;
    while (clang_getCursorKind(c) == CXCursor_MemberRefExpr) {
      long long bits = clang_Cursor_getOffsetOfField(clang_getCursorReferenced(c));
      std::vector<CXCursor> kids = expression_kids(c);
      if (bits < 0 || bits % 8 || kids.size() != 1 || is_pointer_type(clang_getCursorType(kids[0]))) return std::nullopt;
      offset += uint32_t(bits / 8);
      c = strip_implicit(kids[0]);
    }
    if (clang_getCursorKind(c) != CXCursor_DeclRefExpr) return std::nullopt;
    CXCursor decl = clang_getCursorReferenced(c);
    if (clang_getCursorKind(decl) != CXCursor_ParmDecl || modified_.count(declaration_key(decl))) return std::nullopt;
    auto index = param_index(declaration_key(decl));
    return index ? argument_integer(*index, offset, clang_getCursorType(member)) : std::nullopt;
  }

  // The value of an integer expression as an affine form, or nullopt.
  std::optional<Affine> integer(CXCursor e) {
    Nesting nesting(depth_);
    if (nesting.too_deep()) return std::nullopt;
    std::vector<CXCursor> kids = expression_kids(e);
    switch (clang_getCursorKind(e)) {
      case CXCursor_IntegerLiteral:
      case CXCursor_CharacterLiteral:
      case CXCursor_UnaryExpr:  // sizeof, vec_step, alignof
        return constant_affine(e);
      case CXCursor_ParenExpr:
        return kids.size() == 1 ? integer(kids[0]) : std::nullopt;
      case CXCursor_UnexposedExpr:
      case CXCursor_CStyleCastExpr:
        if (clang_getCursorKind(e) == CXCursor_UnexposedExpr && classify_unexposed(e) != UnexposedRole::ImplicitCast)
          return std::nullopt;
        if (kids.empty() || !is_integer_type(clang_getCursorType(e)) || !is_integer_type(clang_getCursorType(kids.back())))
          return std::nullopt;
        return integer(kids.back());
      case CXCursor_DeclRefExpr:
        return variable_value(e);
      case CXCursor_MemberRefExpr:
        return argument_field(e);
      case CXCursor_UnaryOperator: {
        if (kids.size() != 1) return std::nullopt;
        UnaryOp op = unary_operator(e, tokens_);
        auto v = integer(kids[0]);
        if (!v) return std::nullopt;
        if (op == UnaryOp::Plus) return v;
        if (op == UnaryOp::Minus) return v->scaled(Poly::constant(-1));
        return std::nullopt;
      }
      case CXCursor_BinaryOperator: {
        if (kids.size() != 2) return std::nullopt;
        std::string op = binary_operator(e, tokens_);
        if (op != "+" && op != "-" && op != "*" && op != "<<") return std::nullopt;
        auto a = integer(kids[0]), b = integer(kids[1]);
        if (!a || !b) return std::nullopt;
        if (op == "+") return *a + *b;
        if (op == "-") return *a - *b;
        if (op == "*") return Affine::multiply(*a, *b);
        auto shift = b->has_variables() ? std::nullopt : b->constant().as_constant();
        if (!shift || *shift < 0 || *shift > 32) return std::nullopt;
        return a->scaled(Poly::constant(int64_t(1) << *shift));
      }
      case CXCursor_CallExpr: {
        CXCursor callee = clang_getCursorReferenced(e);
        if (!clang_Cursor_isNull(clang_getCursorDefinition(callee))) return std::nullopt;  // a helper
        std::vector<CXCursor> args;
        for (int i = 0; i < clang_Cursor_getNumArguments(e); ++i) args.push_back(clang_Cursor_getArgument(e, unsigned(i)));
        return builtin(cursor_spelling(callee), args);
      }
      default:
        return std::nullopt;
    }
  }

  struct Pointer {
    int arg;
    Affine offset;  // bytes
  };

  std::optional<Pointer> pointer(CXCursor e) {
    Nesting nesting(depth_);
    if (nesting.too_deep()) return std::nullopt;
    std::vector<CXCursor> kids = expression_kids(e);
    switch (clang_getCursorKind(e)) {
      case CXCursor_ParenExpr:
        return kids.size() == 1 ? pointer(kids[0]) : std::nullopt;
      case CXCursor_UnexposedExpr:
      case CXCursor_CStyleCastExpr: {
        if (clang_getCursorKind(e) == CXCursor_UnexposedExpr && classify_unexposed(e) != UnexposedRole::ImplicitCast)
          return std::nullopt;
        if (kids.empty()) return std::nullopt;
        CXType from = clang_getCursorType(kids.back());
        if (is_array_type(from)) {
          auto p = place(kids.back());
          return p ? std::optional<Pointer>(Pointer{p->arg, p->offset}) : std::nullopt;
        }
        return is_pointer_type(from) ? pointer(kids.back()) : std::nullopt;
      }
      case CXCursor_DeclRefExpr: {
        CXCursor decl = clang_getCursorReferenced(e);
        std::string key = declaration_key(decl);
        if (modified_.count(key)) return std::nullopt;
        if (clang_getCursorKind(decl) == CXCursor_ParmDecl) {
          auto index = param_index(key);
          return index ? std::optional<Pointer>(Pointer{int(*index), Affine()}) : std::nullopt;
        }
        std::vector<CXCursor> init = expression_kids(decl);
        if (clang_getCursorKind(decl) != CXCursor_VarDecl || init.size() != 1) return std::nullopt;
        return pointer(init[0]);
      }
      case CXCursor_BinaryOperator: {
        if (kids.size() != 2) return std::nullopt;
        std::string op = binary_operator(e, tokens_);
        bool left_is_pointer = is_pointer_type(clang_getCursorType(kids[0]));
        if ((op != "+" && op != "-") || (op == "-" && !left_is_pointer)) return std::nullopt;
        CXCursor ptr = left_is_pointer ? kids[0] : kids[1];
        CXCursor index = left_is_pointer ? kids[1] : kids[0];
        auto p = pointer(ptr);
        auto i = integer(index);
        auto element = type_size(pointee_or_element(clang_getCursorType(ptr)));
        if (!p || !i || !element) return std::nullopt;
        Affine step = i->scaled(Poly::constant(int64_t(*element)));
        return Pointer{p->arg, op == "+" ? p->offset + step : p->offset - step};
      }
      case CXCursor_UnaryOperator: {
        if (kids.size() != 1 || !unary_takes_address(e, tokens_)) return std::nullopt;
        auto p = place(kids[0]);
        return p ? std::optional<Pointer>(Pointer{p->arg, p->offset}) : std::nullopt;
      }
      default:
        return std::nullopt;
    }
  }

  struct Place {
    int arg;
    Affine offset;
    uint64_t size;
    bool partial;  // the access touches only part of [offset, offset + size) (a swizzle)
  };

  std::optional<Place> place(CXCursor lv) {
    std::vector<CXCursor> kids = expression_kids(lv);
    auto size = type_size(clang_getCursorType(lv));
    switch (clang_getCursorKind(lv)) {
      case CXCursor_ParenExpr:
        return kids.size() == 1 ? place(kids[0]) : std::nullopt;
      case CXCursor_ArraySubscriptExpr: {
        if (kids.size() != 2 || !size) return std::nullopt;
        bool first_is_base = is_pointer_type(clang_getCursorType(kids[0]));
        CXCursor base = first_is_base ? kids[0] : kids[1];
        auto p = pointer(base);
        auto i = integer(first_is_base ? kids[1] : kids[0]);
        auto element = type_size(pointee_or_element(clang_getCursorType(base)));
        if (!p || !i || !element) return std::nullopt;
        return Place{p->arg, p->offset + i->scaled(Poly::constant(int64_t(*element))), *size, false};
      }
      case CXCursor_UnaryOperator: {
        if (kids.size() != 1 || !size || !unary_dereferences(lv, tokens_)) return std::nullopt;
        auto p = pointer(kids[0]);
        return p ? std::optional<Place>(Place{p->arg, p->offset, *size, false}) : std::nullopt;
      }
      case CXCursor_MemberRefExpr: {
        long long bits = clang_Cursor_getOffsetOfField(clang_getCursorReferenced(lv));
        if (kids.size() != 1 || !size || bits < 0 || bits % 8) return std::nullopt;
        Affine field(Poly::constant(bits / 8));
        if (is_pointer_type(clang_getCursorType(kids[0]))) {
          auto p = pointer(kids[0]);
          return p ? std::optional<Place>(Place{p->arg, p->offset + field, *size, false}) : std::nullopt;
        }
        auto p = place(kids[0]);
        return p ? std::optional<Place>(Place{p->arg, p->offset + field, *size, p->partial}) : std::nullopt;
      }
      case CXCursor_UnexposedExpr: {
        UnexposedRole role = classify_unexposed(lv);
        if ((role != UnexposedRole::VectorElement && role != UnexposedRole::MaybeVectorElement) || kids.size() != 1)
          return std::nullopt;
        auto p = place(kids[0]);  // the whole vector: the components are somewhere inside
        if (p) p->partial = true;
        return p;
      }
      default:
        return std::nullopt;
    }
  }

  // vloadn(offset, p), vstoren(data, offset, p), vload_half(n), vstore_half(n)[_rte...].
  std::optional<Place> vector_place(CXCursor call, CXCursor pointer_arg) {
    std::string name = cursor_spelling(clang_getCursorReferenced(call));
    bool store = name.rfind("vstore", 0) == 0;
    if (!store && name.rfind("vload", 0) != 0) return std::nullopt;
    size_t at = store ? 6 : 5;
    if (name.compare(at, 5, "_half") == 0) at += 5;
    uint64_t width = 0;
    while (at < name.size() && std::isdigit(static_cast<unsigned char>(name[at]))) width = width * 10 + uint64_t(name[at++] - '0');
    if (width == 0) width = 1;
    if (at < name.size() && name[at] != '_') return std::nullopt;  // vloada_half and the like
    int n = clang_Cursor_getNumArguments(call);
    if (n < 2) return std::nullopt;
    auto offset = integer(clang_Cursor_getArgument(call, unsigned(store ? 1 : 0)));
    auto p = pointer(pointer_arg);
    auto element = type_size(pointee_or_element(clang_getCursorType(pointer_arg)));
    if (!offset || !p || !element) return std::nullopt;
    int64_t bytes = int64_t(width * *element);
    return Place{p->arg, p->offset + offset->scaled(Poly::constant(bytes)), uint64_t(bytes), false};
  }

  void unmodelled(const MemoryAccess& a) {
    for (int r : a.roots) {
      if (r < 0 || size_t(r) >= d_.is_buffer.size()) continue;
      if (a.mode != AccessMode::Write) d_.reads_unmodelled[size_t(r)] = true;
      if (a.mode != AccessMode::Read) d_.writes_unmodelled[size_t(r)] = true;
    }
  }

  void translate(const MemoryAccess& a, bool conditional) {
    if (a.roots.size() != 1 || *a.roots.begin() < 0) return unmodelled(a);
    std::optional<Place> p = clang_Cursor_isNull(a.call) ? place(a.lvalue) : vector_place(a.call, a.lvalue);
    if (!p || p->arg != *a.roots.begin()) return unmodelled(a);
    FootprintModel::Access out;
    out.arg = p->arg;
    out.byte_offset = p->offset;
    out.size = p->size;
    out.read = a.mode != AccessMode::Write;
    out.write = a.mode != AccessMode::Read;
    out.unconditional = !conditional && !p->partial;
    for (const auto& l : loops_) out.loops.push_back(l.index);
    d_.accesses.push_back(out);
  }

  void walk(CXCursor c, bool conditional) {
    auto range = access_index_.equal_range(clang_hashCursor(c));
    for (auto it = range.first; it != range.second; ++it)
      if (!handled_[it->second] && same_node(facts_.accesses[it->second].lvalue, c)) {
        handled_[it->second] = true;
        translate(facts_.accesses[it->second], conditional);
      }
    std::vector<CXCursor> kids = children_of(c);
    switch (clang_getCursorKind(c)) {
      case CXCursor_IfStmt:
      case CXCursor_ConditionalOperator:
        for (size_t i = 0; i < kids.size(); ++i) walk(kids[i], conditional || i > 0);
        return;
      case CXCursor_WhileStmt:
      case CXCursor_DoStmt:
      case CXCursor_SwitchStmt:
        for (CXCursor k : kids) walk(k, true);
        return;
      case CXCursor_ForStmt:
        walk_for(kids, conditional);
        return;
      case CXCursor_BinaryOperator: {
        std::string op = binary_operator(c, tokens_);
        bool short_circuit = op.empty() || op == "&&" || op == "||";
        for (size_t i = 0; i < kids.size(); ++i) walk(kids[i], conditional || (short_circuit && i > 0));
        return;
      }
      case CXCursor_CompoundStmt: {
        bool after_exit = false;
        for (CXCursor k : kids) {
          walk(k, conditional || after_exit);
          after_exit = after_exit || contains_exit(k);
        }
        return;
      }
      default:
        for (CXCursor k : kids) walk(k, conditional);
    }
  }

  // for (k = a; k < b; k++) and its variants: k runs over [a, b - 1] (or down over [b + 1, a]).
  void walk_for(const std::vector<CXCursor>& kids, bool conditional) {
    FootprintModel::Loop model;
    std::string counter;
    if (!canonical_loop(kids, model, counter)) {
      for (CXCursor k : kids) walk(k, true);
      return;
    }
    walk(kids[0], conditional);
    d_.loops.push_back(model);
    loops_.push_back({counter, int(d_.loops.size() - 1)});
    walk(kids[1], true);
    walk(kids[2], true);
    walk(kids[3], conditional || contains_exit(kids[3]));
    loops_.pop_back();
  }

  bool canonical_loop(const std::vector<CXCursor>& kids, FootprintModel::Loop& model, std::string& counter) {
    if (kids.size() != 4) return false;
    CXCursor init = kids[0], cond = kids[1], inc = kids[2], body = kids[3];
    // The counter and its first value.
    std::optional<Affine> start;
    if (clang_getCursorKind(init) == CXCursor_DeclStmt) {
      std::vector<CXCursor> decls = children_of(init);
      if (decls.size() != 1 || clang_getCursorKind(decls[0]) != CXCursor_VarDecl) return false;
      std::vector<CXCursor> value = expression_kids(decls[0]);
      if (value.size() != 1 || !is_integer_type(clang_getCursorType(decls[0]))) return false;
      counter = declaration_key(decls[0]);
      start = integer(value[0]);
    } else if (clang_getCursorKind(init) == CXCursor_BinaryOperator && is_plain_assignment(init, tokens_)) {
      std::vector<CXCursor> sides = expression_kids(init);
      CXCursor target = strip_implicit(sides[0]);
      if (clang_getCursorKind(target) != CXCursor_DeclRefExpr || !is_integer_type(clang_getCursorType(target))) return false;
      counter = declaration_key(clang_getCursorReferenced(target));
      start = integer(sides[1]);
    } else {
      return false;
    }
    // The step.
    int64_t step = 0;
    std::vector<CXCursor> inc_kids = expression_kids(inc);
    if (inc_kids.empty() || !refers_to(inc_kids[0], counter)) return false;
    if (clang_getCursorKind(inc) == CXCursor_UnaryOperator) {
      UnaryOp op = unary_operator(inc, tokens_);
      step = op == UnaryOp::PreInc || op == UnaryOp::PostInc ? 1 : op == UnaryOp::PreDec || op == UnaryOp::PostDec ? -1 : 0;
    } else if (clang_getCursorKind(inc) == CXCursor_CompoundAssignOperator && inc_kids.size() == 2) {
      std::string op = binary_operator(inc, tokens_);
      auto amount = integer(inc_kids[1]);
      if (!amount || amount->has_variables() || (op != "+=" && op != "-=")) return false;
      auto constant = amount->constant().as_constant();
      int64_t sign = op == "+=" ? 1 : -1;
      // A step that is a launch value (a grid-stride loop) is taken as positive: sizes are.
      step = constant ? sign * *constant : sign * 2;
    }
    if (step == 0) return false;
    // The bound.
    std::vector<CXCursor> sides = expression_kids(cond);
    std::string op = clang_getCursorKind(cond) == CXCursor_BinaryOperator ? binary_operator(cond, tokens_) : "";
    if (sides.size() != 2 || op.empty()) return false;
    if (refers_to(sides[1], counter)) {  // b > k is k < b
      std::swap(sides[0], sides[1]);
      op = op == "<" ? ">" : op == ">" ? "<" : op == "<=" ? ">=" : op == ">=" ? "<=" : "";
    }
    if (!refers_to(sides[0], counter)) return false;
    auto bound = integer(sides[1]);
    if (!start || !bound) return false;
    Affine one(Poly::constant(1));
    if (step > 0 && (op == "<" || op == "<=")) {
      model.first = *start;
      model.last = op == "<" ? *bound - one : *bound;
    } else if (step < 0 && (op == ">" || op == ">=")) {
      model.first = op == ">" ? *bound + one : *bound;
      model.last = *start;
    } else {
      return false;
    }
    // The body must leave the counter alone.
    std::set<std::string> changed;
    collect_modified(body, changed);
    collect_modified(cond, changed);
    if (changed.count(counter)) return false;
    model.exact = (step == 1 || step == -1) && !model.first.has_variables() && !model.last.has_variables();
    return true;
  }

  bool refers_to(CXCursor e, const std::string& key) {
    CXCursor s = strip_implicit(e);
    return clang_getCursorKind(s) == CXCursor_DeclRefExpr && declaration_key(clang_getCursorReferenced(s)) == key;
  }
};

}  // namespace

std::shared_ptr<const FootprintModel> build_footprint_model(ProgramFacts& program, const FunctionFacts& kernel_facts,
                                                            const KernelInfo& kernel) {
  return Builder(program, kernel_facts, kernel).build();
}

}  // namespace coex::kernel
