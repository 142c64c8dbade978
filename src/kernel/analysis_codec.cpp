#include "kernel/analysis_codec.h"

#include <memory>
#include <utility>

#include "kernel/footprint.h"

namespace coex::kernel {
namespace {

using nlohmann::json;
using Model = FootprintModel;

// Poly: [[monomial, coefficient], ...]; a monomial lists parameter ids with repeats.
json encode(const Poly& p) {
  json terms = json::array();
  for (const auto& [monomial, coefficient] : p.terms()) terms.push_back({monomial, coefficient});
  return terms;
}
Poly decode_poly(const json& j) {
  Poly sum;
  for (const json& term : j) {
    Poly product = Poly::constant(term.at(1).get<int64_t>());
    for (int id : term.at(0).get<std::vector<int>>()) product = product * Poly::param(id);
    sum = sum + product;
  }
  return sum;
}

json encode(const Affine& a) {
  json terms = json::array();
  for (const auto& [variable, coefficient] : a.terms()) terms.push_back({variable, encode(coefficient)});
  return {{"c", encode(a.constant())}, {"t", terms}};
}
Affine decode_affine(const json& j) {
  Affine a(decode_poly(j.at("c")));
  for (const json& term : j.at("t")) a = a + Affine::variable(term.at(0).get<int>()).scaled(decode_poly(term.at(1)));
  return a;
}

template <typename T, typename F>
json encode_all(const std::vector<T>& items, F encode_one) {
  json out = json::array();
  for (const T& item : items) out.push_back(encode_one(item));
  return out;
}
template <typename T, typename F>
std::vector<T> decode_all(const json& j, F decode_one) {
  std::vector<T> out;
  out.reserve(j.size());
  for (const json& item : j) out.push_back(decode_one(item));
  return out;
}

json encode(const Model::Fit& f) { return {{"v", encode(f.value)}, {"bits", f.bits}, {"signed", f.is_signed}}; }
Model::Fit decode_fit(const json& j) {
  Model::Fit f;
  f.value = decode_affine(j.at("v"));
  f.bits = j.at("bits").get<uint32_t>();
  f.is_signed = j.at("signed").get<bool>();
  return f;
}
json encode_fits(const std::vector<Model::Fit>& fits) {
  return encode_all(fits, [](const Model::Fit& f) { return encode(f); });
}
std::vector<Model::Fit> decode_fits(const json& j) { return decode_all<Model::Fit>(j, decode_fit); }
std::vector<Affine> decode_affines(const json& j) { return decode_all<Affine>(j, decode_affine); }

json encode(const Model::Guard& g) {
  return {{"lhs", encode(g.lhs)},       {"rhs", encode(g.rhs)}, {"op", int(g.op)},
          {"unsigned", g.is_unsigned},  {"bits", g.bits},       {"difference", encode(g.difference)},
          {"fits", encode_fits(g.fits)}};
}
Model::Guard decode_guard(const json& j) {
  Model::Guard g;
  g.lhs = decode_affine(j.at("lhs"));
  g.rhs = decode_affine(j.at("rhs"));
  g.op = Model::Guard::Op(j.at("op").get<int>());
  g.is_unsigned = j.at("unsigned").get<bool>();
  g.bits = j.at("bits").get<uint32_t>();
  g.difference = decode_affine(j.at("difference"));
  g.fits = decode_fits(j.at("fits"));
  return g;
}

json encode(const Model::Access& a) {
  return {{"arg", a.arg},
          {"offset", encode(a.byte_offset)},
          {"size", a.size},
          {"write", a.write},
          {"read", a.read},
          {"unconditional", a.unconditional},
          {"loops", a.loops},
          {"guards", encode_all(a.guards, [](const Model::Guard& g) { return encode(g); })},
          {"fits", encode_fits(a.fits)}};
}
Model::Access decode_access(const json& j) {
  Model::Access a;
  a.arg = j.at("arg").get<int>();
  a.byte_offset = decode_affine(j.at("offset"));
  a.size = j.at("size").get<uint64_t>();
  a.write = j.at("write").get<bool>();
  a.read = j.at("read").get<bool>();
  a.unconditional = j.at("unconditional").get<bool>();
  a.loops = j.at("loops").get<std::vector<int>>();
  a.guards = decode_all<Model::Guard>(j.at("guards"), decode_guard);
  a.fits = decode_fits(j.at("fits"));
  return a;
}

json encode(const Model::Loop& l) {
  return {{"kind", int(l.kind)},
          {"first", encode(l.first)},
          {"last", encode(l.last)},
          {"step", encode(l.step)},
          {"down", l.down},
          {"exact", l.exact},
          {"operands", encode_all(l.operands, [](const Affine& a) { return encode(a); })},
          {"fits", encode_fits(l.fits)}};
}
Model::Loop decode_loop(const json& j) {
  Model::Loop l;
  l.kind = Model::Loop::Kind(j.at("kind").get<int>());
  l.first = decode_affine(j.at("first"));
  l.last = decode_affine(j.at("last"));
  l.step = decode_affine(j.at("step"));
  l.down = j.at("down").get<bool>();
  l.exact = j.at("exact").get<bool>();
  l.operands = decode_affines(j.at("operands"));
  l.fits = decode_fits(j.at("fits"));
  return l;
}

json encode(const LaunchParam& p) { return {int(p.kind), p.index, p.byte_offset, p.byte_size, p.is_signed}; }
LaunchParam decode_param(const json& j) {
  LaunchParam p;
  p.kind = LaunchParam::Kind(j.at(0).get<int>());
  p.index = j.at(1).get<uint32_t>();
  p.byte_offset = j.at(2).get<uint32_t>();
  p.byte_size = j.at(3).get<uint32_t>();
  p.is_signed = j.at(4).get<bool>();
  return p;
}

json encode(const Model::Definition& d) {
  return {{"params", encode_all(d.params, [](const LaunchParam& p) { return encode(p); })},
          {"loops", encode_all(d.loops, [](const Model::Loop& l) { return encode(l); })},
          {"accesses", encode_all(d.accesses, [](const Model::Access& a) { return encode(a); })},
          {"reads_unmodelled", d.reads_unmodelled},
          {"writes_unmodelled", d.writes_unmodelled},
          {"is_buffer", d.is_buffer}};
}
Model::Definition decode_definition(const json& j) {
  Model::Definition d;
  d.params = decode_all<LaunchParam>(j.at("params"), decode_param);
  d.loops = decode_all<Model::Loop>(j.at("loops"), decode_loop);
  d.accesses = decode_all<Model::Access>(j.at("accesses"), decode_access);
  d.reads_unmodelled = j.at("reads_unmodelled").get<std::vector<bool>>();
  d.writes_unmodelled = j.at("writes_unmodelled").get<std::vector<bool>>();
  d.is_buffer = j.at("is_buffer").get<std::vector<bool>>();
  return d;
}

json encode(const SourceEdit& e) { return {e.offset, e.length, e.text}; }
SourceEdit decode_edit(const json& j) {
  SourceEdit e;
  e.offset = j.at(0).get<size_t>();
  e.length = j.at(1).get<size_t>();
  e.text = j.at(2).get<std::string>();
  return e;
}
json encode_edits(const std::vector<SourceEdit>& edits) {
  return encode_all(edits, [](const SourceEdit& e) { return encode(e); });
}
std::vector<SourceEdit> decode_edits(const json& j) { return decode_all<SourceEdit>(j, decode_edit); }

json encode(const ArgInfo& a) {
  return {{"name", a.name},       {"type", a.type_name},       {"kind", int(a.kind)},       {"read", a.read},
          {"written", a.written}, {"pointee", a.pointee_size}, {"value_size", a.value_size}};
}
ArgInfo decode_arg(const json& j) {
  ArgInfo a;
  a.name = j.at("name").get<std::string>();
  a.type_name = j.at("type").get<std::string>();
  a.kind = ArgKind(j.at("kind").get<int>());
  a.read = j.at("read").get<bool>();
  a.written = j.at("written").get<bool>();
  a.pointee_size = j.at("pointee").get<size_t>();
  a.value_size = j.at("value_size").get<size_t>();
  return a;
}

json encode(const KernelInfo& k) {
  json j = {{"name", k.name},
            {"args", encode_all(k.args, [](const ArgInfo& a) { return encode(a); })},
            {"not_split", k.not_split_reason},
            {"launch_builtins", k.uses_launch_builtins},
            {"loops", k.loops},
            {"split_edits", encode_edits(k.split_edits)},
            {"unsplit_edits", encode_edits(k.unsplit_edits)},
            {"footprint", nullptr}};
  if (k.footprint) j["footprint"] = encode(k.footprint->definition());
  return j;
}
KernelInfo decode_kernel(const json& j) {
  KernelInfo k;
  k.name = j.at("name").get<std::string>();
  k.args = decode_all<ArgInfo>(j.at("args"), decode_arg);
  k.not_split_reason = j.at("not_split").get<std::string>();
  k.uses_launch_builtins = j.at("launch_builtins").get<bool>();
  k.loops = j.at("loops").get<bool>();
  k.split_edits = decode_edits(j.at("split_edits"));
  k.unsplit_edits = decode_edits(j.at("unsplit_edits"));
  if (!j.at("footprint").is_null())
    k.footprint = std::make_shared<const FootprintModel>(decode_definition(j.at("footprint")));
  return k;
}

}  // namespace

json program_info_to_json(const ProgramInfo& info) {
  return {{"kernels", encode_all(info.kernels, [](const KernelInfo& k) { return encode(k); })},
          {"parse_error", info.parse_error},
          {"builtins_mode", info.builtins_mode},
          {"helper_edits", encode_edits(info.helper_edits)},
          {"source_size", info.source_size},
          {"source_fingerprint", info.source_fingerprint}};
}

bool program_info_from_json(const json& j, ProgramInfo& info, std::string* why) {
  try {
    ProgramInfo decoded;
    decoded.kernels = decode_all<KernelInfo>(j.at("kernels"), decode_kernel);
    decoded.parse_error = j.at("parse_error").get<std::string>();
    decoded.builtins_mode = j.at("builtins_mode").get<std::string>();
    decoded.helper_edits = decode_edits(j.at("helper_edits"));
    decoded.source_size = j.at("source_size").get<size_t>();
    decoded.source_fingerprint = j.at("source_fingerprint").get<uint64_t>();
    info = std::move(decoded);
    return true;
  } catch (const std::exception& e) {
    if (why) *why = std::string("malformed analysis: ") + e.what();
    return false;
  }
}

}  // namespace coex::kernel
