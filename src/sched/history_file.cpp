// The History's cache file (docs/schedulers.md, "History"): its format, load and save, and the
// signature of a device set.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sched/history.h"

namespace coex::sched {
namespace {

constexpr const char* kFormat = "coex-history";
// The version changes only when a reader of the old version would misread a file. Keys added since
// version 1, optional on reading (a file without them loads as before) and ignored by older readers:
// "split_launches" per kernel entry (in them "steady", "recent", "recent_steady"); "other_device_sets" (the histories
// of other device sets).
constexpr int kVersion = 1;

uint64_t fnv1a(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// One device set's history as the file holds it: {"devices": signature, "kernels": [...], "regular": {...},
// "late_devices_let_in": [program source hashes]}.
// The top level of the file is the set saved last; "other_device_sets" holds the others (a key added in
// version 1: a reader that ignores it reads the top level as before).
const nlohmann::json* find_set(const nlohmann::json& doc, const std::string& signature, size_t& other_sets) {
  const nlohmann::json* found = nullptr;
  other_sets = 0;
  if (doc.value("devices", "") == signature)
    found = &doc;
  else if (doc.contains("kernels"))
    ++other_sets;
  if (doc.contains("other_device_sets"))
    for (const auto& set : doc.at("other_device_sets")) {
      if (!found && set.value("devices", "") == signature)
        found = &set;
      else
        ++other_sets;
    }
  return found;
}

void check_header(const nlohmann::json& doc) {
  if (!doc.is_object() || doc.value("format", "") != kFormat) throw std::runtime_error("not a coex history file");
  if (doc.value("version", 0) != kVersion)
    throw std::runtime_error("history format version " + std::to_string(doc.value("version", 0)) + ", expected " +
                             std::to_string(kVersion));
}

}  // namespace

bool History::load(const std::string& path, std::string* error, std::string* note) {
  LoadOutcome outcome;
  outcome.file = path;
  std::ifstream in(path);
  if (!in) {  // no cache yet
    outcome.state = "no_file";
    std::lock_guard<std::mutex> lock(mutex_);
    last_load_ = outcome;
    return true;
  }
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(in);
    check_header(doc);
    const nlohmann::json* set = find_set(doc, signature_, outcome.other_sets);
    if (!set) {
      outcome.state = "new_device_set";
      if (note)
        *note = "history in " + path + " has no entry for this device set yet (" + std::to_string(outcome.other_sets) +
                " other device set(s) kept there); starting empty";
      std::lock_guard<std::mutex> lock(mutex_);
      last_load_ = outcome;
      return true;
    }
    Entries entries;
    std::map<std::string, bool> regular;
    uint64_t clock = 0;
    for (const auto& k : set->at("kernels")) {
      Entry e;
      e.launches = k.at("launches").get<uint64_t>();
      // auto's probes count from this run's first launch (History::probe_origin): counted from the
      // kernel's first launch in the file, the gaps that double went on from run to run, and a
      // program of 300 launches probed once in its second run (at 320), never from its fourth, so
      // that a verdict for home one run made held for the runs after it.
      e.probe_origin = e.launches;
      e.decayed_launches = e.launches;
      e.last_use = k.value("last_use", uint64_t{0});
      clock = std::max(clock, e.last_use);
      for (const auto& [dev, share] : k.at("shares").items()) e.shares[std::stoi(dev)] = share.get<double>();
      for (const auto& [dev, rec] : k.at("devices").items()) {
        DeviceRecord d;
        d.groups = rec.at("groups").get<double>();
        d.seconds = rec.at("seconds").get<double>();
        d.chunks = rec.at("chunks").get<uint64_t>();
        for (const auto& s : rec.at("samples"))
          d.recent.push_back({s.at(0).get<double>(), s.at(1).get<double>(), s.at(2).get<double>()});
        if (d.recent.size() > kMaxSamples) d.recent.erase(d.recent.begin(), d.recent.end() - kMaxSamples);
        e.devices[std::stoi(dev)] = std::move(d);
      }
      if (k.contains("split_launches"))
        for (const auto& split : k.at("split_launches")) {
          SplitRecord r;
          r.seconds = split.at("seconds").get<double>();
          r.weight = split.at("weight").get<double>();
          r.count = split.at("count").get<uint64_t>();
          if (!(r.seconds >= 0) || !(r.weight > 0) || !std::isfinite(r.seconds) || !std::isfinite(r.weight))
            throw std::runtime_error("a split launch time must be >= 0 with a weight > 0");
          r.alone = split.value("alone", 0.0);
          r.alone_weight = split.value("alone_weight", 0.0);
          if (!(r.alone >= 0) || !(r.alone_weight >= 0) || !std::isfinite(r.alone) || !std::isfinite(r.alone_weight))
            throw std::runtime_error("home alone's estimate of a split launch must be >= 0");
          r.steady = split.value("steady", 0.0);
          r.steady_weight = split.value("steady_weight", 0.0);
          if (!(r.steady >= 0) || !(r.steady_weight >= 0) || !std::isfinite(r.steady) ||
              !std::isfinite(r.steady_weight))
            throw std::runtime_error("the time of split launches after a split must be >= 0");
          for (auto [name, window] : {std::pair{"recent", &r.recent}, std::pair{"recent_steady", &r.recent_steady}}) {
            for (double t : split.value(name, std::vector<double>{})) {
              if (!(t >= 0) || !std::isfinite(t)) throw std::runtime_error("a split launch time must be >= 0");
              keep_recent(*window, t);
            }
          }
          // A file written before the last times were kept: its aged means stand for them, one each.
          if (r.recent.empty()) r.recent.push_back(r.seconds / r.weight);
          if (r.recent_steady.empty() && r.steady_weight > 0) r.recent_steady.push_back(r.steady / r.steady_weight);
          e.splits[device_set(split.at("devices").get<std::vector<int>>())] = r;
        }
      entries[{k.at("kernel").get<std::string>(), k.at("global_size").get<uint64_t>()}] = std::move(e);
    }
    if (set->contains("regular"))
      for (const auto& [kernel, value] : set->at("regular").items()) regular[kernel] = value.get<bool>();
    auto late_let_in = set->value("late_devices_let_in", std::vector<uint64_t>{});
    if (late_let_in.size() > kLateLetInKept) late_let_in.erase(late_let_in.begin(), late_let_in.end() - kLateLetInKept);
    std::lock_guard<std::mutex> lock(mutex_);
    entries_ = std::move(entries);
    regular_ = std::move(regular);
    late_let_in_ = late_let_in;
    regular_once_.clear();
    clock_ = clock;
    ++evidence_;
    evict_over_capacity();
    outcome.state = "loaded";
    outcome.entries = entries_.size();
    last_load_ = outcome;
  } catch (const std::exception& ex) {
    if (error) *error = "cannot read history " + path + ": " + ex.what();
    outcome.state = "unreadable";
    outcome.detail = ex.what();
    std::lock_guard<std::mutex> lock(mutex_);
    last_load_ = outcome;
    return false;
  }
  return true;
}

History::LoadOutcome History::last_load() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return last_load_;
}

namespace {

// The histories of the other device sets in the file at `path` as it is now (another process may have
// saved its set since this one loaded), most recently saved first. An unreadable file keeps none.
std::vector<nlohmann::json> other_sets_in(const std::string& path, const std::string& signature) {
  std::vector<nlohmann::json> sets;
  std::ifstream in(path);
  if (!in) return sets;
  try {
    nlohmann::json doc = nlohmann::json::parse(in);
    check_header(doc);
    if (doc.value("devices", "") != signature && doc.contains("kernels")) {
      nlohmann::json top = nlohmann::json::object();
      for (const char* key : {"devices", "kernels", "regular", "late_devices_let_in"})
        if (doc.contains(key)) top[key] = doc.at(key);
      sets.push_back(std::move(top));
    }
    if (doc.contains("other_device_sets"))
      for (const auto& set : doc.at("other_device_sets"))
        if (set.is_object() && set.value("devices", "") != signature) sets.push_back(set);
  } catch (const std::exception&) {
    sets.clear();  // not ours to mend: it is replaced by this set alone
  }
  return sets;
}

}  // namespace

bool History::save(const std::string& path, std::string* error) const {
  nlohmann::json doc;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    doc["format"] = kFormat;
    doc["version"] = kVersion;
    doc["devices"] = signature_;
    nlohmann::json kernels = nlohmann::json::array();
    for (const auto& [key, kept] : entries_) {
      Entry e = kept;  // the sums as the launches counted so far decayed them
      settle_decay(e);
      nlohmann::json k;
      k["kernel"] = key.first;
      k["global_size"] = key.second;
      k["launches"] = e.launches;
      k["last_use"] = e.last_use;
      k["shares"] = nlohmann::json::object();
      for (const auto& [dev, share] : e.shares) k["shares"][std::to_string(dev)] = share;
      k["devices"] = nlohmann::json::object();
      for (const auto& [dev, d] : e.devices) {
        nlohmann::json samples = nlohmann::json::array();
        for (const auto& s : d.recent) samples.push_back({s.groups, s.seconds, s.transfer_seconds});
        k["devices"][std::to_string(dev)] = {
            {"groups", d.groups}, {"seconds", d.seconds}, {"chunks", d.chunks}, {"samples", samples}};
      }
      if (!e.splits.empty()) {
        nlohmann::json splits = nlohmann::json::array();
        for (const auto& [devices, r] : e.splits)
          splits.push_back({{"devices", devices},
                            {"seconds", r.seconds},
                            {"weight", r.weight},
                            {"count", r.count},
                            {"alone", r.alone},
                            {"alone_weight", r.alone_weight},
                            {"steady", r.steady},
                            {"steady_weight", r.steady_weight},
                            {"recent", r.recent},
                            {"recent_steady", r.recent_steady}});
        k["split_launches"] = std::move(splits);
      }
      kernels.push_back(std::move(k));
    }
    doc["kernels"] = std::move(kernels);
    doc["regular"] = regular_;
    if (!late_let_in_.empty()) doc["late_devices_let_in"] = late_let_in_;
  }
  std::vector<nlohmann::json> others = other_sets_in(path, signature_);
  if (others.size() > kMaxDeviceSets - 1) others.resize(kMaxDeviceSets - 1);
  if (!others.empty()) doc["other_device_sets"] = std::move(others);
  try {
    const std::filesystem::path target(path);
    if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path());
    // One temporary per process: two programs saving at once each rename a whole file.
    const std::string temp = path + ".tmp." + std::to_string(::getpid());
    {
      std::ofstream out(temp, std::ios::trunc);
      if (!out) throw std::runtime_error("cannot open " + temp + " for writing");
      out << doc.dump(1) << '\n';
      if (!out) throw std::runtime_error("write to " + temp + " failed");
    }
    std::filesystem::rename(temp, target);
  } catch (const std::exception& ex) {
    if (error) *error = "cannot write history " + path + ": " + ex.what();
    return false;
  }
  return true;
}

std::string device_set_signature(const std::vector<DeviceProfile>& devices) {
  std::ostringstream text;
  for (const auto& d : devices)
    text << d.index << '|' << d.name << '|'
         << (d.is_gpu   ? "gpu"
             : d.is_cpu ? "cpu"
                        : "other")
         << '|' << d.compute_units << '|' << d.clock_mhz << (d.remote ? "|remote" : "") << ';';
  std::ostringstream out;
  out << "v1-" << devices.size() << "-" << std::hex << fnv1a(text.str());
  return out.str();
}

std::string default_history_path() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg) return std::string(xdg) + "/coex/history.json";
  const char* home = std::getenv("HOME");
  if (home && *home) return std::string(home) + "/.cache/coex/history.json";
  return "";
}

}  // namespace coex::sched
