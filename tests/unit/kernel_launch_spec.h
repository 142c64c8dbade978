// Launches of corpus kernels (the "launch" of a kernel in its sidecar, kernel_corpus.h), as the
// footprint test and the Oclgrind oracle (tests/oracle) both need them:
//   "launch": {"global": [64, 8], "local": [8, 4], "offset": [0, 0],   (offset optional)
//              "buffer_bytes": 1024,                                  (optional: every buffer's size)
//              "args": {"n": 60, "alpha": 2.5, "shape": [["i32", 10], ["i32", 3]],
//                       "idx": {"bytes": 256, "fill": "i32_mod:64"}, "scratch": {"local": 32}}}
// Scalars are numbers in the argument's own type (float, double, or an integer of its size) or, for
// structs, lists of typed fields ([["f32", 0.5], ["i32", 60]]); buffers are buffer_bytes (default 1024) of the "f32" fill unless
// said otherwise. Fills: "f32" (1.0 + (i % 13) / 2 per float), "i32_mod:K" ((7 i + 3) % K per int,
// for index arrays), "zero". A launch splits its last dimension, as coex does.
#pragma once

#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernel/footprint.h"
#include "kernel/kernel_analysis.h"

namespace coex::kernel::testing {

struct CorpusLaunch {
  LaunchGeometry geometry;
  ArgValues values;                                  // scalars' bytes, buffers' sizes
  std::vector<std::vector<unsigned char>> contents;  // buffers' initial bytes, by argument
  std::vector<size_t> local_bytes;                   // __local pointer arguments' sizes
  uint64_t groups_along_split() const {
    uint32_t d = geometry.split_dim;
    return geometry.global_size[d] / geometry.local_size[d];
  }
};

inline std::vector<unsigned char> fill_bytes(const std::string& fill, size_t bytes, std::string& error) {
  std::vector<unsigned char> out(bytes, 0);
  if (fill == "zero") return out;
  for (size_t i = 0; i + 4 <= bytes; i += 4) {
    uint32_t word = 0;
    if (fill == "f32") {
      float f = 1.0f + float((i / 4) % 13) * 0.5f;
      std::memcpy(&word, &f, 4);
    } else if (fill.rfind("i32_mod:", 0) == 0) {
      word = uint32_t((7 * (i / 4) + 3) % std::stoul(fill.substr(8)));
    } else {
      error = "unknown fill " + fill;
      return out;
    }
    std::memcpy(out.data() + i, &word, 4);
  }
  return out;
}

inline std::vector<unsigned char> scalar_bytes(const nlohmann::json& value, const ArgInfo& arg, std::string& error) {
  std::vector<unsigned char> out;
  auto append = [&out](const void* p, size_t n) {
    out.insert(out.end(), static_cast<const unsigned char*>(p), static_cast<const unsigned char*>(p) + n);
  };
  if (value.is_array()) {  // a struct, field by field: [["f32", 0.5], ["i32", 60]]
    for (const auto& field : value) {
      std::string type = field.at(0).get<std::string>();
      if (type == "f32") {
        float v = field.at(1).get<float>();
        append(&v, 4);
      } else if (type == "i32") {
        int32_t v = field.at(1).get<int32_t>();
        append(&v, 4);
      } else {
        error = arg.name + ": unknown field type " + type;
      }
    }
  } else if (arg.type_name.find("double") != std::string::npos) {
    double v = value.get<double>();
    append(&v, 8);
  } else if (arg.type_name.find("float") != std::string::npos) {
    float v = value.get<float>();
    append(&v, 4);
  } else {
    int64_t v = value.get<int64_t>();  // little endian: the low value_size bytes
    append(&v, arg.value_size <= 8 ? arg.value_size : 8);
  }
  if (out.size() != arg.value_size) error = arg.name + ": " + std::to_string(out.size()) + " bytes given, " +
                                            std::to_string(arg.value_size) + " expected";
  return out;
}

// The launch of `kernel` that `spec` describes; error says what is wrong with the spec.
inline CorpusLaunch make_launch(const nlohmann::json& spec, const KernelInfo& kernel, std::string& error) {
  CorpusLaunch l;
  auto global = spec.at("global").get<std::vector<uint64_t>>();
  auto local = spec.at("local").get<std::vector<uint64_t>>();
  auto offset = spec.value("offset", std::vector<uint64_t>(global.size(), 0));
  if (global.empty() || global.size() > 3 || local.size() != global.size() || offset.size() != global.size()) {
    error = "global, local and offset need 1 to 3 equal dimensions";
    return l;
  }
  l.geometry.work_dim = uint32_t(global.size());
  for (size_t d = 0; d < global.size(); ++d) {
    l.geometry.global_size[d] = global[d];
    l.geometry.local_size[d] = local[d];
    l.geometry.global_offset[d] = offset[d];
    if (!local[d] || global[d] % local[d]) error = "local sizes must divide global sizes";
  }
  l.geometry.split_dim = l.geometry.work_dim - 1;
  const nlohmann::json& args = spec.value("args", nlohmann::json::object());
  size_t n = kernel.args.size();
  l.values.bytes.resize(n);
  l.values.buffer_sizes.resize(n, 0);
  l.contents.resize(n);
  l.local_bytes.resize(n, 0);
  for (size_t i = 0; i < n && error.empty(); ++i) {
    const ArgInfo& arg = kernel.args[i];
    nlohmann::json value = args.contains(arg.name) ? args.at(arg.name) : nlohmann::json();
    if (arg.kind == ArgKind::GlobalPointer || arg.kind == ArgKind::ConstantPointer) {
      size_t bytes = value.is_object() ? value.value("bytes", spec.value("buffer_bytes", size_t(1024)))
                                       : spec.value("buffer_bytes", size_t(1024));
      std::string fill = value.is_object() ? value.value("fill", std::string("f32")) : "f32";
      l.values.buffer_sizes[i] = bytes;
      l.contents[i] = fill_bytes(fill, bytes, error);
    } else if (arg.kind == ArgKind::LocalPointer) {
      if (!value.is_object() || !value.contains("local")) error = arg.name + ": a __local argument needs {\"local\": bytes}";
      else l.local_bytes[i] = value.at("local").get<size_t>();
    } else if (arg.kind == ArgKind::Scalar) {
      if (value.is_null()) error = arg.name + ": no value";
      else l.values.bytes[i] = scalar_bytes(value, arg, error);
    } else {
      error = arg.name + ": no launch for this kind of argument";
    }
  }
  for (const auto& [name, value] : args.items()) {
    bool known = false;
    for (const ArgInfo& arg : kernel.args) known = known || arg.name == name;
    if (!known) error = "no argument named " + name;
  }
  return l;
}

}  // namespace coex::kernel::testing
