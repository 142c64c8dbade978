// Affine forms for footprints: a byte offset as c + sum(a_v * v) over the variables of a launch
// (local ids, group ids, loop counters), whose coefficients are polynomials in the values known when
// the launch is enqueued (scalar arguments, local and global sizes, offsets). Built once from the
// kernel source, evaluated per launch with plain integer arithmetic.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace coex::kernel {

// A value fixed for the whole launch.
struct LaunchParam {
  enum class Kind { Argument, LocalSize, GlobalSize, GlobalOffset, NumGroups, WorkDim };
  Kind kind = Kind::Argument;
  uint32_t index = 0;        // argument index, or dimension
  uint32_t byte_offset = 0;  // Argument: where the integer sits in the argument's bytes (struct fields)
  uint32_t byte_size = 0;    // Argument: 1, 2, 4 or 8
  bool is_signed = false;    // Argument
  bool operator<(const LaunchParam& o) const;
  bool operator==(const LaunchParam& o) const { return !(*this < o) && !(o < *this); }
};

// A product of launch parameters (ids into the model's parameter table); empty is 1.
using Monomial = std::vector<int>;

// An integer polynomial in launch parameters.
class Poly {
 public:
  Poly() = default;
  static Poly constant(int64_t c);
  static Poly param(int id);
  bool is_zero() const { return terms_.empty(); }
  std::optional<int64_t> as_constant() const;
  Poly operator+(const Poly& o) const;
  Poly operator-(const Poly& o) const;
  Poly operator*(const Poly& o) const;
  Poly scaled(int64_t k) const;
  // nullopt on overflow or a missing parameter value.
  std::optional<int64_t> evaluate(const std::vector<std::optional<int64_t>>& params) const;
  const std::map<Monomial, int64_t>& terms() const { return terms_; }
  bool operator==(const Poly& o) const { return terms_ == o.terms_; }

 private:
  std::map<Monomial, int64_t> terms_;  // no zero coefficients
  void add(const Monomial& m, int64_t c);
};

// Variables of a launch: local and group id per dimension, then the loop counters.
enum : int { kLocalId0 = 0, kGroupId0 = 3, kFirstLoopVariable = 6 };

class Affine {
 public:
  Affine() = default;
  explicit Affine(Poly constant) : constant_(std::move(constant)) {}
  static Affine variable(int v);
  const Poly& constant() const { return constant_; }
  const std::map<int, Poly>& terms() const { return terms_; }
  bool has_variables() const { return !terms_.empty(); }
  Affine operator+(const Affine& o) const;
  Affine operator-(const Affine& o) const;
  Affine scaled(const Poly& k) const;
  // The product when one side has no variables; nullopt otherwise (not affine).
  static std::optional<Affine> multiply(const Affine& a, const Affine& b);
  bool operator==(const Affine& o) const { return constant_ == o.constant_ && terms_ == o.terms_; }

 private:
  Poly constant_;
  std::map<int, Poly> terms_;  // no zero coefficients
};

}  // namespace coex::kernel
