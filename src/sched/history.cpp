#include "sched/history.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

namespace coex::sched {
namespace {

constexpr const char* kFormat = "coex-history";
// The version changes only when a reader of the old version would misread a file. Keys added since
// version 1, optional on reading (a file without them loads as before) and ignored by older readers:
// "split_launches" per kernel entry; "other_device_sets" (the histories of other device sets).
constexpr int kVersion = 1;

uint64_t fnv1a(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::vector<int> device_set(std::vector<int> devices) {
  std::sort(devices.begin(), devices.end());
  devices.erase(std::unique(devices.begin(), devices.end()), devices.end());
  return devices;
}

// Keeps the last History::kRecentSplits values of `window`, `value` the newest.
void keep_recent(std::vector<double>& window, double value) {
  window.push_back(value);
  if (window.size() > History::kRecentSplits) window.erase(window.begin(), window.end() - History::kRecentSplits);
}

// The lower median: of an even count, the smaller of the middle two (of two, the smaller).
double lower_median(std::vector<double> values) {
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>((values.size() - 1) / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

}  // namespace

double History::SplitRecord::estimate() const { return lower_median(!recent_steady.empty() ? recent_steady : recent); }

History::History(std::string device_signature) : signature_(std::move(device_signature)) {}

History::Entry& History::touch(const std::string& kernel_key, uint64_t global_size) {
  auto it = entries_.find(KeyRef{kernel_key, global_size});
  if (it == entries_.end()) it = entries_.emplace(Key{kernel_key, global_size}, Entry{}).first;
  Entry& e = it->second;
  e.last_use = ++clock_;
  return e;
}

bool History::holds_evidence(const Entry& e) {
  return !e.devices.empty() || !e.shares.empty() || !e.splits.empty() || e.auto_track.wp_launches ||
         e.auto_track.remeasure || !e.auto_track.shares_choice.empty() || e.plbhec_track.reprofile ||
         !e.plbhec_track.models.empty();
}

// The least recently used entry goes, one with launch counts only before any with evidence: a program
// of thousands of sizes (benchmarks/lu: 4,094 launches, each of a size of its own) would otherwise
// drop the split times measured at its first, largest sizes, that keep the smaller ones on home
// (split_above), and change the evidence version at every launch. Never the entry just used (the
// caller's): among entries that all hold evidence, a new one would go at once, its launches never
// counted.
void History::evict_over_capacity() {
  while (entries_.size() > kMaxEntries) {
    auto oldest = entries_.end();
    auto oldest_counts_only = entries_.end();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->second.last_use == clock_) continue;
      if (oldest == entries_.end() || it->second.last_use < oldest->second.last_use) oldest = it;
      if (!holds_evidence(it->second) &&
          (oldest_counts_only == entries_.end() || it->second.last_use < oldest_counts_only->second.last_use))
        oldest_counts_only = it;
    }
    auto victim = oldest_counts_only != entries_.end() ? oldest_counts_only : oldest;
    if (holds_evidence(victim->second)) ++evidence_;
    entries_.erase(victim);
  }
}

void History::record_chunk(const std::string& kernel_key, uint64_t global_size, const ChunkTiming& timing) {
  const double groups = static_cast<double>(timing.chunk.groups());
  const double seconds = timing.seconds();
  if (!(groups > 0) || !(seconds >= 0) || !std::isfinite(seconds)) return;
  std::lock_guard<std::mutex> lock(mutex_);
  DeviceRecord& d = touch(kernel_key, global_size).devices[timing.chunk.device];
  d.groups += groups;
  d.seconds += seconds;
  ++d.chunks;
  d.recent.push_back({groups, seconds, std::max(0.0, timing.transfer_seconds)});
  if (d.recent.size() > kMaxSamples) d.recent.erase(d.recent.begin());
  ++evidence_;
  evict_over_capacity();
}

void History::note_launch(const std::string& kernel_key, uint64_t global_size) {
  std::lock_guard<std::mutex> lock(mutex_);
  count_launch(touch(kernel_key, global_size));
  evict_over_capacity();
}

std::optional<uint64_t> History::count_unsplit_launch(const std::string& kernel_key, uint64_t global_size,
                                                      const std::function<bool(uint64_t)>& declines) {
  std::lock_guard<std::mutex> lock(mutex_);
  Entry& e = touch(kernel_key, global_size);
  const uint64_t number = std::max(e.planned, e.launches);
  if (declines(number - std::min(number, e.probe_origin))) return std::nullopt;
  e.planned = number + 1;
  count_launch(e);
  evict_over_capacity();
  return number;
}

void History::count_launch(Entry& e) {
  ++e.launches;
  for (auto& [device, d] : e.devices) {
    if (d.groups < 1e-100) continue;  // a device long absent: its (negligible) weight stays finite
    d.groups *= kLaunchDecay;
    d.seconds *= kLaunchDecay;
  }
  for (auto& [devices, split] : e.splits) {
    if (split.weight < 1e-100) continue;  // as above: the mean stays finite
    split.seconds *= kLaunchDecay;
    split.weight *= kLaunchDecay;
    if (split.steady_weight >= 1e-100) {
      split.steady *= kLaunchDecay;
      split.steady_weight *= kLaunchDecay;
    }
    if (split.alone_weight < 1e-100) continue;
    split.alone *= kLaunchDecay;
    split.alone_weight *= kLaunchDecay;
  }
}

uint64_t History::plan_launch(const std::string& kernel_key, uint64_t global_size) {
  std::lock_guard<std::mutex> lock(mutex_);
  Entry& e = touch(kernel_key, global_size);
  const uint64_t number = std::max(e.planned, e.launches);
  e.planned = number + 1;
  evict_over_capacity();
  return number;
}

bool History::plan_split(const std::string& kernel_key, uint64_t global_size, uint64_t number, std::vector<int> devices,
                         bool probe, uint64_t buffer_writes) {
  std::vector<int> set = device_set(std::move(devices));
  std::lock_guard<std::mutex> lock(mutex_);
  Entry& e = touch(kernel_key, global_size);
  const bool follows =
      number > 0 && e.last_split == number - 1 && e.last_split_devices == set && e.last_split_writes == buffer_writes;
  if (!e.last_split || *e.last_split < number) {
    e.last_split = number;
    e.last_split_devices = std::move(set);
    e.last_split_probe = probe;
    e.last_split_writes = buffer_writes;
  }
  return follows;
}

void History::restart_probes(const std::string& kernel_key, uint64_t global_size, uint64_t number) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto e = entries_.find(KeyRef{kernel_key, global_size});
  if (e == entries_.end() || number == 0 || e->second.last_split != number - 1 || e->second.last_split_probe) return;
  e->second.probe_origin = number;
}

uint64_t History::probe_origin(const std::string& kernel_key, uint64_t global_size) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto e = entries_.find(KeyRef{kernel_key, global_size});
  return e == entries_.end() ? 0 : e->second.probe_origin;
}

void History::note_cold_split(const std::string& kernel_key, uint64_t global_size, uint64_t number) {
  std::lock_guard<std::mutex> lock(mutex_);
  touch(kernel_key, global_size).last_cold_split = number;
}

bool History::cold_split(const std::string& kernel_key, uint64_t global_size, uint64_t number) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto e = entries_.find(KeyRef{kernel_key, global_size});
  return e != entries_.end() && e->second.last_cold_split == number;
}

void History::record_split_launch(const std::string& kernel_key, uint64_t global_size, std::vector<int> devices,
                                  double seconds, std::optional<double> home_alone, bool follows_split) {
  if (!(seconds >= 0) || !std::isfinite(seconds) || devices.empty()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  SplitRecord& r = touch(kernel_key, global_size).splits[device_set(std::move(devices))];
  r.seconds += seconds;
  r.weight += 1;
  ++r.count;
  keep_recent(r.recent, seconds);
  if (follows_split) {
    r.steady += seconds;
    r.steady_weight += 1;
    keep_recent(r.recent_steady, seconds);
  }
  if (home_alone && *home_alone >= 0 && std::isfinite(*home_alone)) {
    r.alone += *home_alone;
    r.alone_weight += 1;
  }
  ++evidence_;
  evict_over_capacity();
}

std::optional<std::pair<double, double>> History::split_above(const std::string& kernel_key, uint64_t global_size,
                                                              std::vector<int> devices) const {
  const std::vector<int> set = device_set(std::move(devices));
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto e = entries_.upper_bound(KeyRef{kernel_key, global_size});
       e != entries_.end() && e->first.first == kernel_key; ++e) {
    // That set, else the smallest superset measured at that size.
    const SplitRecord* best = nullptr;
    size_t best_size = 0;
    for (const auto& [measured, r] : e->second.splits) {
      if (!(r.weight > 0) || !(r.alone_weight > 0)) continue;
      if (!std::includes(measured.begin(), measured.end(), set.begin(), set.end())) continue;
      if (!best || measured.size() < best_size) {
        best = &r;
        best_size = measured.size();
      }
    }
    if (best) return std::make_pair(best->estimate(), best->alone / best->alone_weight);
  }
  return std::nullopt;
}

const History::SplitRecord* History::split_record(const std::string& kernel_key, uint64_t global_size,
                                                  std::vector<int> devices) const {
  auto e = entries_.find(KeyRef{kernel_key, global_size});
  if (e == entries_.end()) return nullptr;
  auto r = e->second.splits.find(device_set(std::move(devices)));
  return r == e->second.splits.end() ? nullptr : &r->second;
}

std::optional<double> History::split_launch_seconds(const std::string& kernel_key, uint64_t global_size,
                                                    std::vector<int> devices) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const SplitRecord* r = split_record(kernel_key, global_size, std::move(devices));
  if (!r || !(r->weight > 0)) return std::nullopt;
  return r->estimate();
}

size_t History::steady_splits_measured(const std::string& kernel_key, uint64_t global_size,
                                       std::vector<int> devices) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const SplitRecord* r = split_record(kernel_key, global_size, std::move(devices));
  return r ? r->recent_steady.size() : 0;
}

void History::split_started(const std::string& kernel_key, uint64_t global_size) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++in_flight_[{kernel_key, global_size}];
}

void History::split_ended(const std::string& kernel_key, uint64_t global_size) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = in_flight_.find(KeyRef{kernel_key, global_size});
  if (it == in_flight_.end()) return;
  if (--it->second == 0) in_flight_.erase(it);
}

uint64_t History::splits_in_flight(const std::string& kernel_key, uint64_t global_size) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = in_flight_.find(KeyRef{kernel_key, global_size});
  return it == in_flight_.end() ? 0 : it->second;
}

std::optional<double> History::throughput(const std::string& kernel_key, uint64_t global_size, int device) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto e = entries_.find(KeyRef{kernel_key, global_size});
  if (e == entries_.end()) return std::nullopt;
  auto d = e->second.devices.find(device);
  if (d == e->second.devices.end() || d->second.groups <= 0) return std::nullopt;
  // Chunks measured at 0 s (timer resolution) say only "very fast": 1 ns, not a division by zero.
  return d->second.seconds > 0 ? d->second.groups / d->second.seconds : d->second.groups / 1e-9;
}

std::vector<ChunkSample> History::samples(const std::string& kernel_key, uint64_t global_size, int device) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto e = entries_.find(KeyRef{kernel_key, global_size});
  if (e == entries_.end()) return {};
  auto d = e->second.devices.find(device);
  return d == e->second.devices.end() ? std::vector<ChunkSample>{} : d->second.recent;
}

std::vector<ChunkSample> History::samples_any_size(const std::string& kernel_key, int device) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<ChunkSample> out;
  // The kernel's entries only, which lie together in key order: every launch's gate reads them per
  // device, and a program of thousands of sizes (benchmarks/lu) keeps thousands of entries.
  for (auto e = entries_.lower_bound(KeyRef{kernel_key, 0}); e != entries_.end() && e->first.first == kernel_key; ++e) {
    auto d = e->second.devices.find(device);
    if (d != e->second.devices.end()) out.insert(out.end(), d->second.recent.begin(), d->second.recent.end());
  }
  return out;
}

uint64_t History::launches(const std::string& kernel_key, uint64_t global_size) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto e = entries_.find(KeyRef{kernel_key, global_size});
  return e == entries_.end() ? 0 : e->second.launches;
}

template <typename Field>
Field History::entry_field(const std::string& kernel_key, uint64_t global_size, Field Entry::*field) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto e = entries_.find(KeyRef{kernel_key, global_size});
  return e == entries_.end() ? Field{} : e->second.*field;
}

template <typename Field>
void History::set_entry_field(const std::string& kernel_key, uint64_t global_size, Field Entry::*field,
                              const Field& value) {
  std::lock_guard<std::mutex> lock(mutex_);
  touch(kernel_key, global_size).*field = value;
  evict_over_capacity();
}

std::map<int, double> History::shares(const std::string& kernel_key, uint64_t global_size) const {
  return entry_field(kernel_key, global_size, &Entry::shares);
}

void History::set_shares(const std::string& kernel_key, uint64_t global_size, const std::map<int, double>& shares) {
  set_entry_field(kernel_key, global_size, &Entry::shares, shares);
}

std::map<int, double> History::layout_shares(const std::string& kernel_key, uint64_t global_size) const {
  return entry_field(kernel_key, global_size, &Entry::layout_shares);
}

void History::set_layout_shares(const std::string& kernel_key, uint64_t global_size,
                                const std::map<int, double>& shares) {
  set_entry_field(kernel_key, global_size, &Entry::layout_shares, shares);
}

History::AutoTrack History::auto_track(const std::string& kernel_key, uint64_t global_size) const {
  return entry_field(kernel_key, global_size, &Entry::auto_track);
}

void History::set_auto_track(const std::string& kernel_key, uint64_t global_size, const AutoTrack& track) {
  set_entry_field(kernel_key, global_size, &Entry::auto_track, track);
}

History::PlbhecTrack History::plbhec_track(const std::string& kernel_key, uint64_t global_size) const {
  return entry_field(kernel_key, global_size, &Entry::plbhec_track);
}

void History::set_plbhec_track(const std::string& kernel_key, uint64_t global_size, const PlbhecTrack& track) {
  set_entry_field(kernel_key, global_size, &Entry::plbhec_track, track);
}

std::optional<bool> History::regular(const std::string& kernel_key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = regular_.find(kernel_key);
  if (it == regular_.end()) return std::nullopt;
  return it->second;
}

void History::set_regular(const std::string& kernel_key, bool regular) {
  std::lock_guard<std::mutex> lock(mutex_);
  regular_[kernel_key] = regular;
  ++evidence_;
}

uint64_t History::evidence_version() const { return evidence_.load(std::memory_order_acquire); }

void History::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.clear();
  regular_.clear();
  ++evidence_;
}

size_t History::entry_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

namespace {

// One device set's history as the file holds it: {"devices": signature, "kernels": [...], "regular": {...}}.
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
        *note = "history in " + path + " has no entry for this device set yet (" +
                std::to_string(outcome.other_sets) + " other device set(s) kept there); starting empty";
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
    std::lock_guard<std::mutex> lock(mutex_);
    entries_ = std::move(entries);
    regular_ = std::move(regular);
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
      for (const char* key : {"devices", "kernels", "regular"})
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
    for (const auto& [key, e] : entries_) {
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
    text << d.index << '|' << d.name << '|' << (d.is_gpu ? "gpu" : d.is_cpu ? "cpu" : "other") << '|'
         << d.compute_units << '|' << d.clock_mhz << (d.remote ? "|remote" : "") << ';';
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
