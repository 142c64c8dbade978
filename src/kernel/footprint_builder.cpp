#include "kernel/footprint_builder.h"

#include <map>
#include <set>

#include "kernel/affine_translator.h"

namespace coex::kernel {
namespace {

using Guard = FootprintModel::Guard;

Guard::Op negated(Guard::Op op) {
  switch (op) {
    case Guard::Op::Less: return Guard::Op::GreaterEqual;
    case Guard::Op::LessEqual: return Guard::Op::Greater;
    case Guard::Op::Greater: return Guard::Op::LessEqual;
    case Guard::Op::GreaterEqual: return Guard::Op::Less;
    case Guard::Op::Equal: return Guard::Op::NotEqual;
    case Guard::Op::NotEqual: return Guard::Op::Equal;
  }
  return op;
}

std::optional<Guard::Op> comparison(const std::string& op) {
  if (op == "<") return Guard::Op::Less;
  if (op == "<=") return Guard::Op::LessEqual;
  if (op == ">") return Guard::Op::Greater;
  if (op == ">=") return Guard::Op::GreaterEqual;
  if (op == "==") return Guard::Op::Equal;
  if (op == "!=") return Guard::Op::NotEqual;
  return std::nullopt;
}

// A statement after which the statements that follow it in its block never run: return, break,
// continue, or a block that ends in one.
bool always_exits(CXCursor s) {
  CXCursorKind kind = clang_getCursorKind(s);
  if (kind == CXCursor_ReturnStmt || kind == CXCursor_BreakStmt || kind == CXCursor_ContinueStmt) return true;
  if (kind != CXCursor_CompoundStmt) return false;
  std::vector<CXCursor> kids = children_of(s);
  return !kids.empty() && always_exits(kids.back());
}

class Builder {
 public:
  Builder(ProgramFacts& program, const FunctionFacts& facts, const KernelInfo& kernel)
      : program_(program), tokens_(program.tokens()), kernel_(facts), t_(program, facts, d_.params, d_.loops) {
    size_t n = facts.params.size();
    d_.reads_unmodelled.resize(n);
    d_.writes_unmodelled.resize(n);
    d_.is_buffer.resize(n);
    for (size_t i = 0; i < n && i < kernel.args.size(); ++i) {
      d_.is_buffer[i] = is_buffer_kind(kernel.args[i].kind);
      d_.reads_unmodelled[i] = facts.param_uses[i].unmodelled_read;
      d_.writes_unmodelled[i] = facts.param_uses[i].unmodelled_write;
    }
  }

  std::shared_ptr<const FootprintModel> build() {
    std::vector<std::set<int>> roots;
    for (size_t i = 0; i < kernel_.params.size(); ++i) roots.push_back({int(i)});
    t_.add_body(kernel_.definition);
    walk_function(kernel_, std::move(roots), false);
    return std::make_shared<const FootprintModel>(std::move(d_));
  }

 private:
  ProgramFacts& program_;
  SourceTokens& tokens_;
  const FunctionFacts& kernel_;
  FootprintModel::Definition d_;
  AffineTranslator t_;
  // The kernel's body, or a helper's for one call of it.
  struct Frame {
    const FunctionFacts* facts;
    std::multimap<unsigned, size_t> index;  // its accesses by the hash of their lvalue
    std::vector<bool> handled;
    std::vector<std::set<int>> param_roots;  // per parameter: the kernel arguments it may point into
  };
  std::vector<Frame> frames_;
  std::vector<Guard> guards_;  // the conditions around the walk, outermost first
  static constexpr size_t kMaxInlining = 8;

  // Walks a function's body: every access it holds is translated, or its arguments fall back.
  void walk_function(const FunctionFacts& f, std::vector<std::set<int>> param_roots, bool conditional) {
    Frame frame{&f, {}, std::vector<bool>(f.accesses.size()), std::move(param_roots)};
    for (size_t i = 0; i < f.accesses.size(); ++i) frame.index.emplace(clang_hashCursor(f.accesses[i].lvalue), i);
    frames_.push_back(std::move(frame));
    for (CXCursor child : children_of(f.definition))
      if (clang_getCursorKind(child) == CXCursor_CompoundStmt) walk(child, conditional);
    for (size_t i = 0; i < f.accesses.size(); ++i)
      if (!frames_.back().handled[i]) unmodelled(f.accesses[i].roots, f.accesses[i].mode != AccessMode::Write,
                                                 f.accesses[i].mode != AccessMode::Read);
    frames_.pop_back();
  }

  // The kernel arguments that roots (parameters of the current function) may point into.
  std::set<int> kernel_roots(const PointerRoots& roots) const {
    std::set<int> out;
    const Frame& f = frames_.back();
    for (int r : roots)
      if (r >= 0 && size_t(r) < f.param_roots.size()) out.insert(f.param_roots[size_t(r)].begin(), f.param_roots[size_t(r)].end());
    return out;
  }

  void unmodelled(const PointerRoots& roots, bool read, bool write) {
    for (int r : kernel_roots(roots)) {
      if (r < 0 || size_t(r) >= d_.is_buffer.size()) continue;
      if (read) d_.reads_unmodelled[size_t(r)] = true;
      if (write) d_.writes_unmodelled[size_t(r)] = true;
    }
  }

  void translate(const MemoryAccess& a, bool conditional) {
    bool read = a.mode != AccessMode::Write, write = a.mode != AccessMode::Read;
    std::set<int> args = kernel_roots(a.roots);
    if (a.roots.size() != 1 || *a.roots.begin() < 0 || args.size() != 1) return unmodelled(a.roots, read, write);
    // min/max/clamp in an index: loads only (a superset of what a store writes would be unsound).
    std::vector<int> bounded;
    std::vector<FootprintModel::Fit> fits;
    if (!write) t_.set_bounded_values(&bounded);
    t_.set_fits(&fits);
    std::optional<ArgPlace> p = clang_Cursor_isNull(a.call) ? t_.place(a.lvalue) : t_.vector_place(a.call, a.lvalue);
    t_.set_fits(nullptr);
    t_.set_bounded_values(nullptr);
    if (!p || p->arg != *args.begin()) return unmodelled(a.roots, read, write);
    FootprintModel::Access out;
    out.arg = p->arg;
    out.byte_offset = p->offset;
    out.size = p->size;
    out.read = read;
    out.write = write;
    out.unconditional = !conditional && !p->partial;
    out.loops = loops_;
    out.loops.insert(out.loops.end(), bounded.begin(), bounded.end());
    out.guards = guards_;
    out.fits = std::move(fits);
    d_.accesses.push_back(std::move(out));
  }
  std::vector<int> loops_;  // the canonical loops around the walk, outermost first

  // The conjunction of comparisons that cond is (or, negated, that its negation is), or nullopt.
  std::optional<std::vector<Guard>> conditions(CXCursor cond, bool negate) {
    CXCursor e = strip_implicit(cond);
    std::vector<CXCursor> kids = expression_kids(e);
    CXCursorKind kind = clang_getCursorKind(e);
    if (kind == CXCursor_UnaryOperator && kids.size() == 1 && unary_operator(e, tokens_) == UnaryOp::LogicalNot)
      return conditions(kids[0], !negate);
    if (kind != CXCursor_BinaryOperator || kids.size() != 2) return std::nullopt;
    std::string op = binary_operator(e, tokens_);
    if ((op == "&&" && !negate) || (op == "||" && negate)) {
      auto left = conditions(kids[0], negate), right = conditions(kids[1], negate);
      if (!left || !right) return std::nullopt;
      left->insert(left->end(), right->begin(), right->end());
      return left;
    }
    auto cmp = comparison(op);
    CXType type = clang_getCursorType(kids[0]);  // both operands, converted to the type compared in
    auto size = type_size(type);
    if (!cmp || !is_integer_type(type) || !size) return std::nullopt;
    std::vector<FootprintModel::Fit> fits;
    auto lhs = t_.integer_recording(kids[0], fits), rhs = t_.integer_recording(kids[1], fits);
    if (!lhs || !rhs) return std::nullopt;
    Guard g{*lhs,        *rhs,           negate ? negated(*cmp) : *cmp, !is_signed_type(type), uint32_t(*size * 8),
            *lhs - *rhs, std::move(fits)};
    return std::vector<Guard>{std::move(g)};
  }

  // Walks c with the guards g (when known) added, or as conditional (when not).
  void walk_guarded(CXCursor c, const std::optional<std::vector<Guard>>& g, bool conditional) {
    size_t before = guards_.size();
    if (g) guards_.insert(guards_.end(), g->begin(), g->end());
    walk(c, conditional || !g);
    guards_.resize(before);
  }

  void walk(CXCursor c, bool conditional) {
    Frame& frame = frames_.back();
    auto range = frame.index.equal_range(clang_hashCursor(c));
    for (auto it = range.first; it != range.second; ++it)
      if (!frame.handled[it->second] && same_node(frame.facts->accesses[it->second].lvalue, c)) {
        frame.handled[it->second] = true;
        translate(frame.facts->accesses[it->second], conditional);
      }
    std::vector<CXCursor> kids = children_of(c);
    switch (clang_getCursorKind(c)) {
      case CXCursor_IfStmt:
      case CXCursor_ConditionalOperator:
        if (kids.size() < 2) break;
        walk(kids[0], conditional);
        walk_guarded(kids[1], conditions(kids[0], false), conditional);
        if (kids.size() > 2) walk_guarded(kids[2], conditions(kids[0], true), conditional);
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
        if (kids.size() != 2 || (!op.empty() && op != "&&" && op != "||")) break;
        walk(kids[0], conditional);
        // The right operand of && runs where the left holds, of || where it does not.
        if (op.empty()) walk(kids[1], true);
        else walk_guarded(kids[1], conditions(kids[0], op == "||"), conditional);
        return;
      }
      case CXCursor_CompoundStmt:
        walk_block(kids, conditional);
        return;
      case CXCursor_CallExpr:
        for (CXCursor k : kids) walk(k, conditional);
        walk_call(c, conditional);
        return;
      default:
        break;
    }
    for (CXCursor k : kids) walk(k, conditional);
  }

  // Statements after `if (cond) return;` (or break, continue) run where cond does not hold.
  void walk_block(const std::vector<CXCursor>& statements, bool conditional) {
    size_t before = guards_.size();
    bool after_exit = false;
    for (CXCursor s : statements) {
      walk(s, conditional || after_exit);
      if (after_exit || !contains_exit(s)) continue;
      std::vector<CXCursor> parts = children_of(s);
      bool early_exit = clang_getCursorKind(s) == CXCursor_IfStmt && parts.size() == 2 && always_exits(parts[1]);
      auto rest = early_exit ? conditions(parts[0], true) : std::nullopt;
      if (rest) guards_.insert(guards_.end(), rest->begin(), rest->end());
      else after_exit = true;
    }
    guards_.resize(before);
  }

  // A call of a helper that loads or stores through a pointer parameter: its body, walked with the
  // parameters bound to this call's arguments (helpers cannot recurse: the analysis refuses that).
  void walk_call(CXCursor call, bool conditional) {
    CXCursor definition = clang_getCursorDefinition(clang_getCursorReferenced(call));
    if (clang_Cursor_isNull(definition) || clang_getCursorKind(definition) != CXCursor_FunctionDecl) return;
    const FunctionFacts& f = program_.of(definition);
    const FunctionFacts& caller = *frames_.back().facts;
    const FunctionFacts::CallSite* site = nullptr;
    for (const auto& s : caller.call_sites)
      if (same_node(s.call, call)) site = &s;
    bool touches = false;
    for (const ParamUse& use : f.param_uses) touches = touches || use.read || use.written;
    if (!touches || !site) return;
    t_.add_body(definition);
    AffineTranslator::Binding binding = t_.bind(call, definition);
    std::vector<std::set<int>> roots(f.params.size());
    for (size_t i = 0; i < f.params.size() && i < site->arg_roots.size(); ++i) {
      if (!f.param_uses[i].read && !f.param_uses[i].written) continue;
      auto bound = binding.pointers.find(declaration_key(f.params[i]));
      if (bound != binding.pointers.end() && bound->second && frames_.size() < kMaxInlining) {
        roots[i] = {bound->second->arg};
        continue;
      }
      // Where this argument points is not known: nothing the helper does through it is modelled.
      unmodelled(site->arg_roots[i], f.param_uses[i].read, f.param_uses[i].written);
    }
    if (frames_.size() >= kMaxInlining) return;
    t_.push_binding(std::move(binding));
    walk_function(f, std::move(roots), conditional);
    t_.pop_binding();
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
    loops_.push_back(int(d_.loops.size() - 1));
    t_.push_loop(counter, loops_.back());
    walk(kids[1], true);
    walk(kids[2], true);
    walk(kids[3], conditional || contains_exit(kids[3]));
    t_.pop_loop();
    loops_.pop_back();
  }

  bool canonical_loop(const std::vector<CXCursor>& kids, FootprintModel::Loop& model, std::string& counter) {
    if (kids.size() != 4) return false;
    CXCursor init = kids[0], cond = kids[1], inc = kids[2], body = kids[3];
    // The counter and its first value.
    std::optional<Affine> start;
    CXCursor counter_cursor = clang_getNullCursor();
    if (clang_getCursorKind(init) == CXCursor_DeclStmt) {
      std::vector<CXCursor> decls = children_of(init);
      if (decls.size() != 1 || clang_getCursorKind(decls[0]) != CXCursor_VarDecl) return false;
      std::vector<CXCursor> value = expression_kids(decls[0]);
      if (value.size() != 1 || !is_integer_type(clang_getCursorType(decls[0]))) return false;
      counter = declaration_key(decls[0]);
      counter_cursor = decls[0];
      start = t_.integer_recording(value[0], model.fits);
    } else if (clang_getCursorKind(init) == CXCursor_BinaryOperator && is_plain_assignment(init, tokens_)) {
      std::vector<CXCursor> sides = expression_kids(init);
      CXCursor target = strip_implicit(sides[0]);
      if (clang_getCursorKind(target) != CXCursor_DeclRefExpr || !is_integer_type(clang_getCursorType(target))) return false;
      counter = declaration_key(clang_getCursorReferenced(target));
      counter_cursor = target;
      start = t_.integer_recording(sides[1], model.fits);
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
      model.step = Affine(Poly::constant(step));
    } else if (clang_getCursorKind(inc) == CXCursor_CompoundAssignOperator && inc_kids.size() == 2) {
      std::string op = binary_operator(inc, tokens_);
      // Its C value must be its form (an int product of two arguments may wrap around).
      auto amount = t_.integer_recording(inc_kids[1], model.fits);
      if (!amount || amount->has_variables() || (op != "+=" && op != "-=")) return false;
      auto constant = amount->constant().as_constant();
      int64_t sign = op == "+=" ? 1 : -1;
      // A step that is a launch value (a grid-stride loop) is taken to go the way the bound says;
      // evaluate() checks its sign at the launch (variable_range).
      step = constant ? sign * *constant : sign * 2;
      model.step = op == "+=" ? *amount : amount->scaled(Poly::constant(-1));
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
    auto bound = t_.integer_recording(sides[1], model.fits);
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
    t_.collect_modified(body, changed);
    t_.collect_modified(cond, changed);
    if (changed.count(counter)) return false;
    model.down = step < 0;
    model.exact = (step == 1 || step == -1) && !model.first.has_variables() && !model.last.has_variables();
    // Past its last value the counter steps once more: where that leaves its type, it wraps around
    // to values outside [first, last] and the loop goes on. (A step of one wraps only past a bound
    // the type cannot exceed, `k <= UINT_MAX`: not checked, see the limits in docs/kernel-analysis.md.)
    if (step != 1 && step != -1) {
      CXType type = clang_getCursorType(counter_cursor);
      auto size = type_size(type);
      if (!size || *size > 8) return false;
      FootprintModel::Fit past{model.down ? model.first + model.step : model.last + model.step, uint32_t(*size * 8),
                               is_signed_type(type)};
      if (clang_getCanonicalType(type).kind == CXType_Bool) past = {past.value, 1, false};
      model.fits.push_back(std::move(past));
    }
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
