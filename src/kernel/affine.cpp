#include "kernel/affine.h"

#include <algorithm>
#include <tuple>

namespace coex::kernel {

bool LaunchParam::operator<(const LaunchParam& o) const {
  return std::tie(kind, index, byte_offset, byte_size, is_signed) <
         std::tie(o.kind, o.index, o.byte_offset, o.byte_size, o.is_signed);
}

Poly Poly::constant(int64_t c) {
  Poly p;
  p.add({}, c);
  return p;
}

Poly Poly::param(int id) {
  Poly p;
  p.add({id}, 1);
  return p;
}

void Poly::add(const Monomial& m, int64_t c) {
  if (c == 0) return;
  int64_t& slot = terms_[m];
  slot += c;
  if (slot == 0) terms_.erase(m);
}

std::optional<int64_t> Poly::as_constant() const {
  if (terms_.empty()) return 0;
  if (terms_.size() == 1 && terms_.begin()->first.empty()) return terms_.begin()->second;
  return std::nullopt;
}

Poly Poly::operator+(const Poly& o) const {
  Poly r = *this;
  for (const auto& [m, c] : o.terms_) r.add(m, c);
  return r;
}

Poly Poly::operator-(const Poly& o) const { return *this + o.scaled(-1); }

Poly Poly::operator*(const Poly& o) const {
  Poly r;
  for (const auto& [ma, ca] : terms_)
    for (const auto& [mb, cb] : o.terms_) {
      Monomial m = ma;
      m.insert(m.end(), mb.begin(), mb.end());
      std::sort(m.begin(), m.end());
      r.add(m, ca * cb);
    }
  return r;
}

Poly Poly::scaled(int64_t k) const {
  Poly r;
  for (const auto& [m, c] : terms_) r.add(m, c * k);
  return r;
}

std::optional<int64_t> Poly::evaluate(const std::vector<std::optional<int64_t>>& params) const {
  int64_t sum = 0;
  for (const auto& [m, c] : terms_) {
    int64_t product = c;
    for (int id : m) {
      if (id < 0 || static_cast<size_t>(id) >= params.size() || !params[static_cast<size_t>(id)]) return std::nullopt;
      if (__builtin_mul_overflow(product, *params[static_cast<size_t>(id)], &product)) return std::nullopt;
    }
    if (__builtin_add_overflow(sum, product, &sum)) return std::nullopt;
  }
  return sum;
}

Affine Affine::variable(int v) {
  Affine a;
  a.terms_[v] = Poly::constant(1);
  return a;
}

Affine Affine::operator+(const Affine& o) const {
  Affine r = *this;
  r.constant_ = r.constant_ + o.constant_;
  for (const auto& [v, k] : o.terms_) {
    Poly sum = r.terms_[v] + k;
    if (sum.is_zero()) {
      r.terms_.erase(v);
    } else {
      r.terms_[v] = sum;
    }
  }
  return r;
}

Affine Affine::operator-(const Affine& o) const { return *this + o.scaled(Poly::constant(-1)); }

Affine Affine::scaled(const Poly& k) const {
  Affine r;
  r.constant_ = constant_ * k;
  for (const auto& [v, c] : terms_) {
    Poly p = c * k;
    if (!p.is_zero()) r.terms_[v] = p;
  }
  return r;
}

std::optional<Affine> Affine::multiply(const Affine& a, const Affine& b) {
  if (!a.has_variables()) return b.scaled(a.constant_);
  if (!b.has_variables()) return a.scaled(b.constant_);
  return std::nullopt;
}

}  // namespace coex::kernel
