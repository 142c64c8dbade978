#include "sched/sim_scenario.h"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

#include "config/settings.h"
#include "sched/policy_factory.h"

namespace coex::sched {
namespace {

using nlohmann::json;

// Errors carry the path of the key ("devices[1].speed"), so a typo is found at once.
struct ScenarioError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void only_keys(const json& obj, const std::string& where, const std::set<std::string>& allowed) {
  if (!obj.is_object()) throw ScenarioError(where + " must be an object");
  for (const auto& [key, value] : obj.items()) {
    (void)value;
    if (!allowed.count(key)) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      throw ScenarioError((where.empty() ? "" : where + ".") + key + ": unknown key (known: " + list + ")");
    }
  }
}

std::string path(const std::string& where, const std::string& key) { return where.empty() ? key : where + "." + key; }

double number(const json& obj, const std::string& where, const std::string& key, double fallback, double lo,
              double hi = INFINITY) {
  if (!obj.contains(key)) return fallback;
  const json& v = obj.at(key);
  if (!v.is_number()) throw ScenarioError(path(where, key) + " must be a number");
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < lo || d > hi) {
    std::ostringstream msg;
    msg << path(where, key) << " must be >= " << lo;
    if (std::isfinite(hi)) msg << " and <= " << hi;
    msg << ", not " << d;
    throw ScenarioError(msg.str());
  }
  return d;
}

uint64_t count(const json& obj, const std::string& where, const std::string& key, uint64_t fallback, uint64_t lo,
               uint64_t hi) {
  const double d =
      number(obj, where, key, static_cast<double>(fallback), static_cast<double>(lo), static_cast<double>(hi));
  if (d != std::floor(d)) throw ScenarioError(path(where, key) + " must be a whole number");
  return static_cast<uint64_t>(d);
}

std::string text(const json& obj, const std::string& where, const std::string& key, const std::string& fallback) {
  if (!obj.contains(key)) return fallback;
  if (!obj.at(key).is_string()) throw ScenarioError(path(where, key) + " must be a string");
  return obj.at(key).get<std::string>();
}

bool flag(const json& obj, const std::string& where, const std::string& key, bool fallback) {
  if (!obj.contains(key)) return fallback;
  if (!obj.at(key).is_boolean()) throw ScenarioError(path(where, key) + " must be true or false");
  return obj.at(key).get<bool>();
}

SpeedChange parse_change(const json& c, const std::string& where, bool stall) {
  only_keys(c, where, stall ? std::set<std::string>{"launch", "at"} : std::set<std::string>{"launch", "at", "factor"});
  SpeedChange s;
  s.launch = static_cast<int>(count(c, where, "launch", 0, 0, 1000000));
  s.at = number(c, where, "at", 0, 0);
  s.factor = stall ? 0.0 : number(c, where, "factor", 1, 0);
  return s;
}

SimDevice parse_device(const json& d, const std::string& where, int index) {
  only_keys(d, where,
            {"name", "type", "compute_units", "clock_mhz", "mem_bandwidth_gbs", "groups_per_cu", "speed", "latency",
             "bandwidth_in_gbs", "bandwidth_out_gbs", "noise", "first_run_seconds", "changes", "stall", "remote"});
  SimDevice dev;
  dev.profile.index = index;
  dev.profile.name = text(d, where, "name", "device" + std::to_string(index));
  const std::string type = text(d, where, "type", "gpu");
  if (type != "cpu" && type != "gpu" && type != "other")
    throw ScenarioError(path(where, "type") + " must be cpu, gpu or other");
  dev.profile.is_cpu = type == "cpu";
  dev.profile.is_gpu = type == "gpu";
  dev.profile.compute_units = static_cast<unsigned>(count(d, where, "compute_units", 1, 1, 1 << 20));
  dev.profile.clock_mhz = static_cast<unsigned>(count(d, where, "clock_mhz", 1000, 0, 1 << 20));
  dev.profile.mem_bandwidth_gbs = number(d, where, "mem_bandwidth_gbs", 0, 0);
  dev.profile.groups_per_cu_for_occupancy = static_cast<unsigned>(count(d, where, "groups_per_cu", 1, 1, 1 << 16));
  dev.profile.remote = flag(d, where, "remote", false);
  if (!d.contains("speed")) throw ScenarioError(path(where, "speed") + " is required (work-groups per second)");
  dev.speed = number(d, where, "speed", 1, 1e-300);
  dev.latency = number(d, where, "latency", 0, 0);
  dev.bandwidth_in_gbs = number(d, where, "bandwidth_in_gbs", 0, 0);
  dev.bandwidth_out_gbs = number(d, where, "bandwidth_out_gbs", 0, 0);
  dev.profile.h2d_gbs = dev.bandwidth_in_gbs;
  dev.profile.d2h_gbs = dev.bandwidth_out_gbs;
  dev.noise = number(d, where, "noise", 0, 0);
  dev.first_run_seconds = number(d, where, "first_run_seconds", 0, 0);
  if (d.contains("changes")) {
    if (!d.at("changes").is_array()) throw ScenarioError(path(where, "changes") + " must be an array");
    for (size_t i = 0; i < d.at("changes").size(); ++i)
      dev.changes.push_back(
          parse_change(d.at("changes")[i], path(where, "changes") + "[" + std::to_string(i) + "]", false));
  }
  if (d.contains("stall")) dev.changes.push_back(parse_change(d.at("stall"), path(where, "stall"), true));
  return dev;
}

CostProfile parse_cost(const json& c, const std::string& where) {
  only_keys(c, where, {"profile", "from", "to", "amplitude", "max_iterations", "values"});
  CostProfile p;
  p.kind = text(c, where, "profile", "uniform");
  if (p.kind != "uniform" && p.kind != "linear" && p.kind != "mandelbrot" && p.kind != "random" && p.kind != "steps")
    throw ScenarioError(path(where, "profile") + " must be uniform, linear, mandelbrot, random or steps, not '" +
                        p.kind + "'");
  p.from = number(c, where, "from", 1, 0);
  p.to = number(c, where, "to", 1, 0);
  if (p.kind == "linear" && p.from + p.to <= 0) throw ScenarioError(where + ": linear cost needs from + to > 0");
  p.amplitude = number(c, where, "amplitude", 0.5, 0, 1);
  p.max_iterations = static_cast<int>(count(c, where, "max_iterations", 256, 1, 100000));
  if (c.contains("values")) {
    if (!c.at("values").is_array() || c.at("values").empty())
      throw ScenarioError(path(where, "values") + " must be a non-empty array");
    for (const auto& v : c.at("values")) {
      if (!v.is_number() || v.get<double>() < 0) throw ScenarioError(path(where, "values") + " must hold numbers >= 0");
      p.values.push_back(v.get<double>());
    }
  }
  if (p.kind == "steps" && p.values.empty()) throw ScenarioError(path(where, "values") + " is required for steps");
  return p;
}

void parse(const json& doc, Scenario* s) {
  only_keys(doc, "",
            {"name", "description", "seed", "devices", "kernel", "launches", "runs", "policy", "params", "trace",
             "summary", "take_over", "home"});
  s->name = text(doc, "", "name", "scenario");
  s->seed = count(doc, "", "seed", 1, 0, UINT64_MAX >> 12);
  if (!doc.contains("devices") || !doc.at("devices").is_array() || doc.at("devices").empty())
    throw ScenarioError("devices must be a non-empty array");
  for (size_t i = 0; i < doc.at("devices").size(); ++i)
    s->devices.push_back(parse_device(doc.at("devices")[i], "devices[" + std::to_string(i) + "]", static_cast<int>(i)));
  if (!doc.contains("kernel")) throw ScenarioError("kernel is required");
  const json& k = doc.at("kernel");
  only_keys(k, "kernel", {"key", "groups", "items_per_group", "cost", "bytes_in_per_group", "bytes_out_per_group"});
  s->kernel.key = text(k, "kernel", "key", "kernel");
  if (!k.contains("groups")) throw ScenarioError("kernel.groups is required");
  s->kernel.groups = count(k, "kernel", "groups", 0, 1, uint64_t{1} << 26);
  s->kernel.items_per_group = count(k, "kernel", "items_per_group", 256, 1, uint64_t{1} << 20);
  if (k.contains("cost")) s->kernel.cost = parse_cost(k.at("cost"), "kernel.cost");
  s->kernel.bytes_in_per_group = number(k, "kernel", "bytes_in_per_group", 0, 0);
  s->kernel.bytes_out_per_group = number(k, "kernel", "bytes_out_per_group", 0, 0);
  s->launches = static_cast<int>(count(doc, "", "launches", 1, 1, 100000));
  s->runs = static_cast<int>(count(doc, "", "runs", 1, 1, 1000));
  if (!doc.contains("policy")) throw ScenarioError("policy is required (a name or a list of names)");
  const json& p = doc.at("policy");
  if (p.is_string())
    s->policies.push_back(p.get<std::string>());
  else if (p.is_array())
    for (const auto& name : p) {
      if (!name.is_string()) throw ScenarioError("policy must list names");
      s->policies.push_back(name.get<std::string>());
    }
  else
    throw ScenarioError("policy must be a name or a list of names");
  if (s->policies.empty()) throw ScenarioError("policy lists no names");
  for (const auto& name : s->policies) {
    bool known = false;
    std::string list;
    for (const auto& n : policy_names()) {
      known = known || n == name;
      list += (list.empty() ? "" : ", ") + n;
    }
    if (!known) throw ScenarioError("policy '" + name + "' is unknown (known: " + list + ")");
  }
  if (doc.contains("params")) {
    if (!doc.at("params").is_object()) throw ScenarioError("params must be an object");
    // The names, checks and error words of the settings (docs/settings.md): a scenario and a config
    // file accept the same values.
    for (const auto& [key, value] : doc.at("params").items()) {
      std::string error;
      if (!config::set_policy_param(s->params, key, value, error)) throw ScenarioError("params." + key + ": " + error);
    }
  }
  s->trace = flag(doc, "", "trace", false);
  s->summary = flag(doc, "", "summary", false);
  s->take_over = flag(doc, "", "take_over", true);
  if (doc.contains("home")) {
    const std::string home = text(doc, "", "home", "");
    for (size_t i = 0; i < s->devices.size(); ++i)
      if (s->devices[i].profile.name == home) s->home = static_cast<int>(i);
    if (s->home < 0) throw ScenarioError("home: no device is named \"" + home + "\"");
  }
}

}  // namespace

bool parse_scenario(const nlohmann::json& doc, Scenario* scenario, std::string* error) {
  Scenario s;
  try {
    parse(doc, &s);
  } catch (const std::exception& ex) {
    if (error) *error = ex.what();
    return false;
  }
  *scenario = std::move(s);
  return true;
}

bool load_scenario(const std::string& file, Scenario* scenario, std::string* error) {
  std::ifstream in(file);
  if (!in) {
    if (error) *error = "cannot open scenario " + file;
    return false;
  }
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(in);
  } catch (const std::exception& ex) {
    if (error) *error = file + ": not valid JSON: " + ex.what();
    return false;
  }
  if (!parse_scenario(doc, scenario, error)) {
    if (error) *error = file + ": " + *error;
    return false;
  }
  return true;
}

}  // namespace coex::sched
