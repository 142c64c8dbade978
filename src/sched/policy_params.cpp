#include "sched/policy_params.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <sstream>

namespace coex::sched {
namespace {

// One row per field: how to read it, how to write it, and what it accepts. The defaults shown in
// policy_param_info() are read from a default-constructed PolicyParams, so they cannot drift.
struct Field {
  std::string name;
  std::string doc;
  std::function<std::string(const PolicyParams&)> get;
  // Returns "" on success, else what the field accepts.
  std::function<std::string(PolicyParams&, const std::string&)> set;
};

std::string format_double(double v) {
  std::ostringstream out;
  out.precision(10);
  out << v;
  return out.str();
}

bool parse_double(const std::string& text, double* value) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || end == text.c_str() || *end != '\0' || !std::isfinite(v)) return false;
  *value = v;
  return true;
}

Field real(std::string name, double PolicyParams::*member, double lo, double hi, bool lo_open, std::string doc) {
  std::ostringstream accepts;
  accepts << "a number " << (lo_open ? "> " : ">= ") << lo;
  if (hi < std::numeric_limits<double>::infinity()) accepts << " and <= " << hi;
  const std::string what = accepts.str();
  return {std::move(name), std::move(doc), [member](const PolicyParams& p) { return format_double(p.*member); },
          [=](PolicyParams& p, const std::string& text) -> std::string {
            double v = 0;
            if (!parse_double(text, &v) || v > hi || (lo_open ? v <= lo : v < lo)) return what;
            p.*member = v;
            return "";
          }};
}

template <typename Int>
Field integer(std::string name, Int PolicyParams::*member, long long lo, long long hi, std::string doc) {
  const std::string what = "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
  return {
      std::move(name), std::move(doc), [member](const PolicyParams& p) { return std::to_string(p.*member); },
      [=](PolicyParams& p, const std::string& text) -> std::string {
        double v = 0;
        if (!parse_double(text, &v) || v != std::floor(v) || v < static_cast<double>(lo) || v > static_cast<double>(hi))
          return what;
        p.*member = static_cast<Int>(v);
        return "";
      }};
}

Field boolean(std::string name, bool PolicyParams::*member, std::string doc) {
  return {std::move(name), std::move(doc),
          [member](const PolicyParams& p) { return std::string(p.*member ? "true" : "false"); },
          [member](PolicyParams& p, const std::string& text) -> std::string {
            if (text == "true" || text == "1")
              p.*member = true;
            else if (text == "false" || text == "0")
              p.*member = false;
            else
              return "true or false";
            return "";
          }};
}

const std::vector<Field>& fields() {
  static const std::vector<Field> table = [] {
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<Field> f;
    f.push_back({"static_mode", "static: equal shares, ratio (static_weights) or spec (device info)",
                 [](const PolicyParams& p) { return p.static_mode; },
                 [](PolicyParams& p, const std::string& text) -> std::string {
                   if (text != "equal" && text != "ratio" && text != "spec") return "equal, ratio or spec";
                   p.static_mode = text;
                   return "";
                 }});
    f.push_back({"static_weights", "static ratio mode: weights in device-index order, comma-separated",
                 [](const PolicyParams& p) {
                   std::string s;
                   for (size_t i = 0; i < p.static_weights.size(); ++i)
                     s += (i ? "," : "") + format_double(p.static_weights[i]);
                   return s;
                 },
                 [](PolicyParams& p, const std::string& text) -> std::string {
                   std::vector<double> weights;
                   std::stringstream in(text);
                   std::string item;
                   while (std::getline(in, item, ',')) {
                     double v = 0;
                     if (!parse_double(item, &v) || v < 0) return "comma-separated numbers >= 0";
                     weights.push_back(v);
                   }
                   p.static_weights = weights;
                   return "";
                 }});
    f.push_back(boolean("memory_bound", &PolicyParams::memory_bound,
                        "static spec mode: weigh devices by memory bandwidth, not compute units x clock"));
    f.push_back(real("boyer_beta", &PolicyParams::boyer_beta, 0, 1, true,
                     "boyer: first chunk on each device, fraction of the launch"));
    f.push_back(real("boyer_delta", &PolicyParams::boyer_delta, 1, inf, false,
                     "boyer: each later chunk is this times the device's last one"));
    f.push_back(integer("boyer_gamma", &PolicyParams::boyer_gamma, 1, 1000,
                        "boyer: chunks every device completes before the final split"));
    f.push_back(boolean("boyer_count_running", &PolicyParams::boyer_count_running,
                        "boyer: count the time left on running chunks (lambda) in the final split"));
    f.push_back(real("plbhec_initial_fraction", &PolicyParams::plbhec_initial_fraction, 0, 0.5, true,
                     "plbhec: first profiling block of the fastest device, fraction of the launch"));
    f.push_back(integer("plbhec_profile_rounds", &PolicyParams::plbhec_profile_rounds, 1, 30,
                        "plbhec: profiling blocks per device before the model split"));
    f.push_back(real("plbhec_threshold", &PolicyParams::plbhec_threshold, 0, inf, true,
                     "plbhec: relative spread of finish times that forces re-profiling"));
    f.push_back(real("wp_omega", &PolicyParams::wp_omega, 0, 1, false,
                     "wp: weight of the previous share in p <- w*p + (1-w)*measured"));
    f.push_back(integer("ess_launches", &PolicyParams::ess_launches, 1, 1000000,
                        "ess: launches over which shares are estimated before they freeze"));
    f.push_back(integer(
        "probe_interval", &PolicyParams::probe_interval, 1, 1000000,
        "jitp/wp/ess: launches between probes of a device left without work; auto: the first gap (then 2x, 4x, ...)"));
    f.push_back(
        real("probe_share", &PolicyParams::probe_share, 0, 0.5, true, "jitp/wp/ess: share a probed device gets"));
    f.push_back(
        real("hguided_k", &PolicyParams::hguided_k, 0, inf, true, "hguided: k in floor(R * P_i / (k * sum P))"));
    f.push_back(integer("hguided_min_chunk", &PolicyParams::hguided_min_chunk, 0, 1LL << 40,
                        "hguided: smallest chunk in work-groups; 0 = the device's occupancy floor"));
    f.push_back(real("adaptive_initial_fraction", &PolicyParams::adaptive_initial_fraction, 0, 0.5, true,
                     "adaptive: first probe on each device, fraction of the launch"));
    f.push_back(real("adaptive_growth", &PolicyParams::adaptive_growth, 1, inf, false,
                     "adaptive: each probe is this times the device's last one"));
    f.push_back(integer("adaptive_probes", &PolicyParams::adaptive_probes, 1, 30,
                        "adaptive: probes per device before the split of the rest"));
    f.push_back(real("sigmoid_k_regular", &PolicyParams::sigmoid_k_regular, 0, inf, true,
                     "sigmoid: k while the kernel looks regular"));
    f.push_back(real("sigmoid_k_irregular", &PolicyParams::sigmoid_k_irregular, 0, inf, true,
                     "sigmoid: k once a device's package speeds vary"));
    f.push_back(real("sigmoid_cv_threshold", &PolicyParams::sigmoid_cv_threshold, 0, inf, true,
                     "sigmoid: sigma/mean of package speeds above which k switches"));
    f.push_back(
        integer("sigmoid_window", &PolicyParams::sigmoid_window, 2, 100, "sigmoid: packages in the speed window"));
    f.push_back(real("sigmoid_time_fraction", &PolicyParams::sigmoid_time_fraction, 0, 1, false,
                     "sigmoid: p of the floor p * t_elapsed * S_i"));
    f.push_back(integer("predict_max_steps", &PolicyParams::predict_max_steps, 1, 1000,
                        "predict: refinement steps of the split"));
    f.push_back(real("predict_elimination", &PolicyParams::predict_elimination, 0, 1, false,
                     "predict: a share under this fraction of the largest is eliminated"));
    f.push_back(real("predict_calibration_fraction", &PolicyParams::predict_calibration_fraction, 0, 0.5, true,
                     "predict: work spent on calibration probes when no model exists"));
    f.push_back(real("predict_tolerance", &PolicyParams::predict_tolerance, 0, 1, true,
                     "predict: relative spread of predicted times that ends the refinement"));
    f.push_back(integer("auto_repeat_launches", &PolicyParams::auto_repeat_launches, 1, 1000000,
                        "auto: earlier launches of one kernel and size from which on it picks wp"));
    f.push_back(real("auto_overhead_fraction", &PolicyParams::auto_overhead_fraction, 0, 1, false,
                     "auto: per-chunk overhead / predicted launch time above which a new size goes to boyer"));
    f.push_back(real("auto_rebalance_below", &PolicyParams::auto_rebalance_below, 0, 1, false,
                     "auto: load balance of a wp launch, after a balanced one, that makes it re-measure"));
    f.push_back(real("auto_min_share", &PolicyParams::auto_min_share, 0, 1, false,
                     "auto: a device whose equal-finish share would be under this fraction of the launch gets nothing"));
    f.push_back(real("auto_min_gain", &PolicyParams::auto_min_gain, 0, 1, false,
                     "auto: a split measured less than this fraction faster than home alone is not made"));
    f.push_back(real("auto_probe_cost", &PolicyParams::auto_probe_cost, 0, 1000, false,
                     "auto: most a probe may cost beyond home alone, as a fraction of home's time since the last"));
    return f;
  }();
  return table;
}

const Field* find_field(const std::string& name) {
  for (const auto& f : fields())
    if (f.name == name) return &f;
  return nullptr;
}

}  // namespace

const std::vector<PolicyParamInfo>& policy_param_info() {
  static const std::vector<PolicyParamInfo> info = [] {
    const PolicyParams defaults;
    std::vector<PolicyParamInfo> out;
    for (const auto& f : fields()) out.push_back({f.name, f.get(defaults), f.doc});
    return out;
  }();
  return info;
}

bool set_policy_param(PolicyParams& params, const std::string& name, const std::string& value, std::string* error) {
  const Field* f = find_field(name);
  if (!f) {
    if (error) *error = "unknown policy parameter '" + name + "'";
    return false;
  }
  PolicyParams changed = params;
  const std::string accepts = f->set(changed, value);
  if (!accepts.empty()) {
    if (error) *error = "policy parameter '" + name + "' accepts " + accepts + ", not '" + value + "'";
    return false;
  }
  params = changed;
  return true;
}

std::string get_policy_param(const PolicyParams& params, const std::string& name) {
  const Field* f = find_field(name);
  return f ? f->get(params) : std::string();
}

}  // namespace coex::sched
