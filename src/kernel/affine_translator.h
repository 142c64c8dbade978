// Translates the expressions of a kernel, and of the helper functions it calls, into the affine
// forms of a FootprintModel: integers (work-item functions, loop counters, scalar arguments and
// their struct fields, literals, sizeof, enum constants, unmodified locals, calls to helpers that
// return an integer expression), pointers into a buffer argument (p + off, &p[i], casts, helper
// parameters bound to one) and the lvalues loads and stores go through. What does not translate is
// nullopt: the footprint builder then falls back to Whole or Diff.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kernel/affine.h"
#include "kernel/expr_shape.h"
#include "kernel/footprint.h"
#include "kernel/function_facts.h"

namespace coex::kernel {

// A pointer into the buffer of kernel argument arg, byte offset from its start.
struct ArgPointer {
  int arg;
  Affine offset;
};

// An lvalue in the buffer of kernel argument arg.
struct ArgPlace {
  int arg;
  Affine offset;
  uint64_t size;
  bool partial;  // the access touches only part of [offset, offset + size) (a swizzle)
};

class AffineTranslator {
 public:
  // params: the model's table of launch values, and variables: its loops, which translation extends.
  AffineTranslator(ProgramFacts& program, const FunctionFacts& kernel, std::vector<LaunchParam>& params,
                   std::vector<FootprintModel::Loop>& variables);

  std::optional<Affine> integer(CXCursor e);
  // integer(e), the sub-expressions that must lie in their types recorded in fits, e itself whatever
  // its width (it is compared, or an operand of min/max/clamp: FootprintModel::Fit).
  std::optional<Affine> integer_recording(CXCursor e, std::vector<FootprintModel::Fit>& fits);
  // While set, integer() records there the sub-expressions of an index that must lie in their types
  // (those narrower than 64 bits: a byte address that wraps around modulo 2^64 is the same address).
  void set_fits(std::vector<FootprintModel::Fit>* into) { fits_ = into; }
  std::optional<ArgPointer> pointer(CXCursor e);
  std::optional<ArgPlace> place(CXCursor lvalue);
  // vloadn(offset, p), vstoren(data, offset, p), vload_half(n), vstore_half(n)[_rte...].
  std::optional<ArgPlace> vector_place(CXCursor call, CXCursor pointer_arg);
  std::optional<int64_t> constant_of(CXCursor e);

  // Variables stored to, stepped or whose address is taken in body: their value is not their
  // initializer. Every body translated from (the kernel's, each helper's) is added once.
  void add_body(CXCursor body);
  void collect_modified(CXCursor c, std::set<std::string>& into);

  // While set (to where their indices go), integer min/max/clamp calls translate to fresh variables
  // bounded by the hull of their operands (FootprintModel::Loop): only in the index of a load, where
  // a superset is fine. Never for a store: no write may be claimed to cover or be injective on them.
  void set_bounded_values(std::vector<int>* created) { bounded_ = created; }

  // The canonical loops around the point of translation: counter (declaration key) -> variable.
  void push_loop(const std::string& counter, int index) { loops_.push_back({counter, index}); }
  void pop_loop() { loops_.pop_back(); }

  // A helper's parameters bound to the values of one call, evaluated where the call is.
  struct Binding {
    std::map<std::string, std::optional<Affine>> integers;
    std::map<std::string, std::vector<FootprintModel::Fit>> integer_fits;  // of each argument's sub-expressions
    std::map<std::string, std::optional<ArgPointer>> pointers;
    std::map<std::string, std::vector<FootprintModel::Fit>> pointer_fits;  // of each offset's sub-expressions
  };
  Binding bind(CXCursor call, CXCursor callee_definition);
  void push_binding(Binding b) { bindings_.push_back(std::move(b)); }
  void pop_binding() { bindings_.pop_back(); }
  // The kernel argument a bound pointer parameter points into (of the innermost binding), or nullopt.
  std::optional<ArgPointer> bound_pointer(const std::string& param_key) const;
  size_t binding_depth() const { return bindings_.size(); }

 private:
  SourceTokens& tokens_;
  const FunctionFacts& kernel_;
  std::vector<LaunchParam>& params_;
  std::vector<FootprintModel::Loop>& variables_;
  std::vector<int>* bounded_ = nullptr;
  std::vector<FootprintModel::Fit>* fits_ = nullptr;  // where integer() records values and their types
  uint32_t parent_bits_ = 0;  // the width of the expression being translated (0: none, or not an integer)
  std::set<std::string> modified_;
  std::set<std::string> bodies_;  // keys of the functions whose bodies are in modified_
  struct ActiveLoop {
    std::string counter;
    int index;
  };
  std::vector<ActiveLoop> loops_;
  std::vector<Binding> bindings_;
  int depth_ = 0;  // of the recursion through nested expressions and helper calls

  // Bounds that recursion: a source may nest expressions thousands deep.
  class Nesting {
   public:
    explicit Nesting(int& depth) : depth_(++depth) {}
    ~Nesting() { --depth_; }
    bool too_deep() const { return depth_ > 64; }

   private:
    int& depth_;
  };

  int param_id(const LaunchParam& p);
  Affine launch_value(LaunchParam::Kind kind, uint32_t dim);
  std::optional<Affine> constant_affine(CXCursor e);
  std::optional<size_t> kernel_param(const std::string& key) const;
  std::optional<Affine> argument_integer(size_t index, uint32_t byte_offset, CXType type);
  std::optional<uint32_t> dimension(const std::vector<CXCursor>& args);
  std::optional<Affine> integer_node(CXCursor e);
  std::optional<Affine> builtin(const std::string& name, const std::vector<CXCursor>& args);
  std::optional<Affine> bounded_value(const std::string& name, const std::vector<CXCursor>& args);
  void record(const Affine& value, CXType type, bool wide);
  std::optional<Affine> outermost_integer(CXCursor e);  // integer(e), e not an operand of the one translated
  std::optional<Affine> variable_value(CXCursor ref);
  std::optional<Affine> argument_field(CXCursor member);
  std::optional<Affine> helper_result(CXCursor call, CXCursor definition);
};

}  // namespace coex::kernel
