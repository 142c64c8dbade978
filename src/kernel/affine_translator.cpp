#include "kernel/affine_translator.h"

#include <algorithm>
#include <cctype>

namespace coex::kernel {

AffineTranslator::AffineTranslator(ProgramFacts& program, const FunctionFacts& kernel, std::vector<LaunchParam>& params,
                                   std::vector<FootprintModel::Loop>& variables)
    : tokens_(program.tokens()), kernel_(kernel), params_(params), variables_(variables) {}

int AffineTranslator::param_id(const LaunchParam& p) {
  for (size_t i = 0; i < params_.size(); ++i)
    if (params_[i] == p) return int(i);
  params_.push_back(p);
  return int(params_.size() - 1);
}

Affine AffineTranslator::launch_value(LaunchParam::Kind kind, uint32_t dim) {
  LaunchParam p;
  p.kind = kind;
  p.index = dim;
  return Affine(Poly::param(param_id(p)));
}

std::optional<int64_t> AffineTranslator::constant_of(CXCursor e) {
  CXEvalResult r = clang_Cursor_Evaluate(e);
  if (!r) return std::nullopt;
  std::optional<int64_t> out;
  if (clang_EvalResult_getKind(r) == CXEval_Int) out = clang_EvalResult_getAsLongLong(r);
  clang_EvalResult_dispose(r);
  return out;
}

std::optional<Affine> AffineTranslator::constant_affine(CXCursor e) {
  auto c = constant_of(e);
  return c ? std::optional<Affine>(Affine(Poly::constant(*c))) : std::nullopt;
}

std::optional<size_t> AffineTranslator::kernel_param(const std::string& key) const {
  for (size_t i = 0; i < kernel_.params.size(); ++i)
    if (declaration_key(kernel_.params[i]) == key) return i;
  return std::nullopt;
}

// The integer of `type` at byte_offset in by-value argument `index`, as a launch parameter.
std::optional<Affine> AffineTranslator::argument_integer(size_t index, uint32_t byte_offset, CXType type) {
  auto size = type_size(type);
  if (!is_integer_type(type) || !size || *size > 8) return std::nullopt;
  LaunchParam p;
  p.index = uint32_t(index);
  p.byte_offset = byte_offset;
  p.byte_size = uint32_t(*size);
  p.is_signed = is_signed_type(type);
  return Affine(Poly::param(param_id(p)));
}

void AffineTranslator::add_body(CXCursor definition) {
  if (!bodies_.insert(declaration_key(definition)).second) return;
  for (CXCursor child : children_of(definition))
    if (clang_getCursorKind(child) == CXCursor_CompoundStmt) collect_modified(child, modified_);
}

std::optional<Affine> AffineTranslator::variable_value(CXCursor ref) {
  CXCursor decl = clang_getCursorReferenced(ref);
  std::string key = declaration_key(decl);
  for (auto it = loops_.rbegin(); it != loops_.rend(); ++it)
    if (it->counter == key) return Affine::variable(kFirstLoopVariable + it->index);
  CXCursorKind kind = clang_getCursorKind(decl);
  if (kind == CXCursor_EnumConstantDecl) return constant_affine(ref);
  if (modified_.count(key) || !is_integer_type(clang_getCursorType(decl))) return std::nullopt;
  if (kind == CXCursor_ParmDecl) {
    for (auto it = bindings_.rbegin(); it != bindings_.rend(); ++it) {
      auto bound = it->integers.find(key);
      if (bound == it->integers.end()) continue;
      // The argument was translated at the call: its sub-expressions must fit their types too.
      auto fits = it->integer_fits.find(key);
      if (fits_ && fits != it->integer_fits.end())
        fits_->insert(fits_->end(), fits->second.begin(), fits->second.end());
      return bound->second;
    }
    auto index = kernel_param(key);
    return index ? argument_integer(*index, 0, clang_getCursorType(decl)) : std::nullopt;
  }
  if (kind != CXCursor_VarDecl) return std::nullopt;
  std::vector<CXCursor> init = expression_kids(decl);
  if (init.size() != 1) return constant_affine(ref);
  return integer(init[0]);  // unmodified: its value is its initializer, wherever it is read
}

AffineTranslator::Binding AffineTranslator::bind(CXCursor call, CXCursor definition) {
  Binding b;
  int n = std::min(clang_Cursor_getNumArguments(call), clang_Cursor_getNumArguments(definition));
  for (int i = 0; i < n; ++i) {
    CXCursor param = clang_Cursor_getArgument(definition, unsigned(i));
    CXCursor arg = clang_Cursor_getArgument(call, unsigned(i));
    std::string key = declaration_key(param);
    if (is_pointer_type(clang_getCursorType(param))) {
      std::vector<FootprintModel::Fit>* outer = fits_;
      fits_ = &b.pointer_fits[key];
      b.pointers[key] = pointer(arg);
      fits_ = outer;
    } else if (is_integer_type(clang_getCursorType(param))) {
      b.integers[key] = integer_recording(arg, b.integer_fits[key]);
    }
  }
  return b;
}

std::optional<ArgPointer> AffineTranslator::bound_pointer(const std::string& param_key) const {
  if (bindings_.empty()) return std::nullopt;
  auto it = bindings_.back().pointers.find(param_key);
  return it == bindings_.back().pointers.end() ? std::nullopt : it->second;
}

// A helper whose body is local declarations and one return of an integer expression: that
// expression, its parameters bound to the call's arguments.
std::optional<Affine> AffineTranslator::helper_result(CXCursor call, CXCursor definition) {
  CXCursor body = clang_getNullCursor();
  for (CXCursor child : children_of(definition))
    if (clang_getCursorKind(child) == CXCursor_CompoundStmt) body = child;
  std::vector<CXCursor> statements = clang_Cursor_isNull(body) ? std::vector<CXCursor>{} : children_of(body);
  if (statements.empty() || clang_getCursorKind(statements.back()) != CXCursor_ReturnStmt) return std::nullopt;
  for (size_t i = 0; i + 1 < statements.size(); ++i)
    if (clang_getCursorKind(statements[i]) != CXCursor_DeclStmt) return std::nullopt;
  std::vector<CXCursor> value = expression_kids(statements.back());
  if (value.size() != 1 || !is_integer_type(clang_getCursorType(call))) return std::nullopt;
  add_body(definition);
  push_binding(bind(call, definition));
  auto result = integer(value[0]);
  pop_binding();
  return result;
}

// The width of an integer type in bits (bool: 1), or 0.
static uint32_t integer_bits(CXType type) {
  auto size = type_size(type);
  if (!is_integer_type(type) || !size || *size > 8) return 0;
  return clang_getCanonicalType(type).kind == CXType_Bool ? 1 : uint32_t(*size * 8);
}

// The value of an integer expression as an affine form, or nullopt. The forms ignore conversions
// and wrap-around; where fits_ is set the values that must lie in their types are recorded
// (FootprintModel::Fit). +, -, * and << agree with C modulo 2^bits, so a value is congruent to its
// form modulo 2^(its width) where each operand narrower than it equals its form: those operands are
// recorded (widened: (int)(uchar)i, an int index of a 64-bit address), and the outermost value.
std::optional<Affine> AffineTranslator::integer(CXCursor e) {
  CXType type = clang_getCursorType(e);
  uint32_t bits = integer_bits(type), parent = parent_bits_;
  parent_bits_ = bits;
  auto value = integer_node(e);
  parent_bits_ = parent;
  if (value && fits_ && (parent == 0 || bits == 0 || bits < parent)) record(*value, type, false);
  return value;
}

std::optional<Affine> AffineTranslator::integer_recording(CXCursor e, std::vector<FootprintModel::Fit>& fits) {
  std::vector<FootprintModel::Fit>* outer = fits_;
  fits_ = &fits;
  auto value = outermost_integer(e);
  if (value) record(*value, clang_getCursorType(e), true);
  fits_ = outer;
  return value;
}

std::optional<Affine> AffineTranslator::outermost_integer(CXCursor e) {
  uint32_t parent = parent_bits_;
  parent_bits_ = 0;
  auto value = integer(e);
  parent_bits_ = parent;
  return value;
}

// A value and its type, in fits_: not where it cannot leave the type (a constant inside it), nor
// twice (a conversion to the same type), nor 64 bits wide unless wide.
void AffineTranslator::record(const Affine& value, CXType type, bool wide) {
  // bits 0 (no integer type to check it in) fails the check; (bool)2 is 1: one bit, unsigned.
  FootprintModel::Fit fit{value, integer_bits(type), false};
  fit.is_signed = fit.bits > 1 && is_signed_type(type);
  if (fit.bits == 64 && !wide) return;
  for (const auto& f : *fits_)
    if (f.bits == fit.bits && f.is_signed == fit.is_signed && f.value == fit.value) return;
  auto constant = value.has_variables() ? std::nullopt : value.constant().as_constant();
  if (constant && fit.contains(*constant, *constant)) return;
  fits_->push_back(std::move(fit));
}

std::optional<Affine> AffineTranslator::integer_node(CXCursor e) {
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
      CXCursor definition = clang_getCursorDefinition(callee);
      if (!clang_Cursor_isNull(definition)) return helper_result(e, definition);
      std::vector<CXCursor> args;
      for (int i = 0; i < clang_Cursor_getNumArguments(e); ++i) args.push_back(clang_Cursor_getArgument(e, unsigned(i)));
      if (bounded_ && is_integer_type(clang_getCursorType(e))) {
        auto value = bounded_value(cursor_spelling(callee), args);
        if (value) return value;
      }
      return builtin(cursor_spelling(callee), args);
    }
    default:
      return std::nullopt;
  }
}

std::optional<ArgPointer> AffineTranslator::pointer(CXCursor e) {
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
        return p ? std::optional<ArgPointer>(ArgPointer{p->arg, p->offset}) : std::nullopt;
      }
      return is_pointer_type(from) ? pointer(kids.back()) : std::nullopt;
    }
    case CXCursor_DeclRefExpr: {
      CXCursor decl = clang_getCursorReferenced(e);
      std::string key = declaration_key(decl);
      if (modified_.count(key)) return std::nullopt;
      if (clang_getCursorKind(decl) == CXCursor_ParmDecl) {
        for (auto it = bindings_.rbegin(); it != bindings_.rend(); ++it) {
          auto bound = it->pointers.find(key);
          if (bound == it->pointers.end()) continue;
          auto fits = it->pointer_fits.find(key);  // the offset was translated at the call
          if (fits_ && fits != it->pointer_fits.end())
            fits_->insert(fits_->end(), fits->second.begin(), fits->second.end());
          return bound->second;
        }
        auto index = kernel_param(key);
        return index ? std::optional<ArgPointer>(ArgPointer{int(*index), Affine()}) : std::nullopt;
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
      auto i = outermost_integer(index);
      auto element = type_size(pointee_or_element(clang_getCursorType(ptr)));
      if (!p || !i || !element) return std::nullopt;
      Affine step = i->scaled(Poly::constant(int64_t(*element)));
      return ArgPointer{p->arg, op == "+" ? p->offset + step : p->offset - step};
    }
    case CXCursor_UnaryOperator: {
      if (kids.size() != 1 || !unary_takes_address(e, tokens_)) return std::nullopt;
      auto p = place(kids[0]);
      return p ? std::optional<ArgPointer>(ArgPointer{p->arg, p->offset}) : std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

std::optional<ArgPlace> AffineTranslator::place(CXCursor lv) {
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
      auto i = outermost_integer(first_is_base ? kids[1] : kids[0]);
      auto element = type_size(pointee_or_element(clang_getCursorType(base)));
      if (!p || !i || !element) return std::nullopt;
      return ArgPlace{p->arg, p->offset + i->scaled(Poly::constant(int64_t(*element))), *size, false};
    }
    case CXCursor_UnaryOperator: {
      if (kids.size() != 1 || !size || !unary_dereferences(lv, tokens_)) return std::nullopt;
      auto p = pointer(kids[0]);
      return p ? std::optional<ArgPlace>(ArgPlace{p->arg, p->offset, *size, false}) : std::nullopt;
    }
    case CXCursor_MemberRefExpr: {
      long long bits = clang_Cursor_getOffsetOfField(clang_getCursorReferenced(lv));
      if (kids.size() != 1 || !size || bits < 0 || bits % 8) return std::nullopt;
      Affine field(Poly::constant(bits / 8));
      if (is_pointer_type(clang_getCursorType(kids[0]))) {
        auto p = pointer(kids[0]);
        return p ? std::optional<ArgPlace>(ArgPlace{p->arg, p->offset + field, *size, false}) : std::nullopt;
      }
      auto p = place(kids[0]);
      return p ? std::optional<ArgPlace>(ArgPlace{p->arg, p->offset + field, *size, p->partial}) : std::nullopt;
    }
    case CXCursor_UnexposedExpr: {
      UnexposedRole role = classify_unexposed(lv);
      if ((role != UnexposedRole::VectorElement && role != UnexposedRole::MaybeVectorElement) || kids.size() != 1)
        return std::nullopt;
      // The whole vector: the components are somewhere inside, and the code a compiler makes of v.x
      // loads all of v (clang at -O0, as the oracle saw), and stores it back whole.
      auto p = place(kids[0]);
      if (p) p->partial = true;
      return p;
    }
    default:
      return std::nullopt;
  }
}

std::optional<ArgPlace> AffineTranslator::vector_place(CXCursor call, CXCursor pointer_arg) {
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
  auto offset = outermost_integer(clang_Cursor_getArgument(call, unsigned(store ? 1 : 0)));
  auto p = pointer(pointer_arg);
  auto element = type_size(pointee_or_element(clang_getCursorType(pointer_arg)));
  if (!offset || !p || !element) return std::nullopt;
  int64_t bytes = int64_t(width * *element);
  return ArgPlace{p->arg, p->offset + offset->scaled(Poly::constant(bytes)), uint64_t(bytes), false};
}

std::optional<uint32_t> AffineTranslator::dimension(const std::vector<CXCursor>& args) {
  if (args.size() != 1) return std::nullopt;
  auto d = constant_of(args[0]);
  if (!d || *d < 0 || *d > 2) return std::nullopt;
  return uint32_t(*d);
}

std::optional<Affine> AffineTranslator::builtin(const std::string& name, const std::vector<CXCursor>& args) {
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

// min(a, b), max(a, b), clamp(x, lo, hi) of integers: a fresh variable over the hull of the values
// (FootprintModel::Loop). Its operands are affine in the ids, loop counters, launch values and the
// min/max/clamp variables made before it, inner calls first.
std::optional<Affine> AffineTranslator::bounded_value(const std::string& name, const std::vector<CXCursor>& args) {
  using Kind = FootprintModel::Loop::Kind;
  FootprintModel::Loop v;
  bool min_max = (name == "min" || name == "max") && args.size() == 2;
  if (!min_max && (name != "clamp" || args.size() != 3)) return std::nullopt;
  v.kind = name == "min" ? Kind::Min : name == "max" ? Kind::Max : Kind::Clamp;
  for (CXCursor arg : args) {
    auto operand = integer_recording(arg, v.fits);
    if (!operand) return std::nullopt;
    v.operands.push_back(*operand);
  }
  variables_.push_back(std::move(v));
  int index = int(variables_.size() - 1);
  bounded_->push_back(index);
  return Affine::variable(kFirstLoopVariable + index);
}

// A by-value struct argument's integer field, s.f or s.a.b.
std::optional<Affine> AffineTranslator::argument_field(CXCursor member) {
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
  auto index = kernel_param(declaration_key(decl));
  return index ? argument_integer(*index, offset, clang_getCursorType(member)) : std::nullopt;
}

void AffineTranslator::collect_modified(CXCursor c, std::set<std::string>& into) {
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

}  // namespace coex::kernel
