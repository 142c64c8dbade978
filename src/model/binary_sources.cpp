#include "model/binary_sources.h"

#include <spdlog/spdlog.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "model/source_hash.h"

namespace coex::model {
namespace {

constexpr int kFormatVersion = 1;

}  // namespace

std::string binary_key(std::string_view binary) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fnv1a64(binary)));
  return std::string(hex) + "-" + std::to_string(binary.size());
}

std::string binary_sources_path(const std::string& history_path) {
  if (history_path.empty()) return "";
  std::filesystem::path p(history_path);
  return (p.parent_path() / "binaries.json").string();
}

void BinarySources::load_locked() {
  if (loaded_) return;
  loaded_ = true;
  if (path_.empty()) return;
  std::ifstream in(path_);
  if (!in) return;  // none yet
  try {
    nlohmann::json j = nlohmann::json::parse(in);
    if (j.value("version", 0) != kFormatVersion) {
      spdlog::info("program binaries file {} has another format: not used", path_);
      return;
    }
    for (const auto& item : j.at("binaries")) {
      Entry e{{item.at("source").get<std::string>(), item.at("options").get<std::string>()}, next_++};
      entries_[item.at("key").get<std::string>()] = std::move(e);
    }
  } catch (const std::exception& e) {
    spdlog::info("program binaries file {} not used: {}", path_, e.what());
    entries_.clear();
  }
}

bool BinarySources::save_locked(std::string* error) const {
  if (path_.empty()) return true;
  std::vector<std::pair<uint64_t, const std::string*>> order;
  for (const auto& [key, e] : entries_) order.push_back({e.recorded, &key});
  std::sort(order.begin(), order.end());
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [recorded, key] : order) {
    const Entry& e = entries_.at(*key);
    list.push_back({{"key", *key}, {"source", e.program.source}, {"options", e.program.options}});
  }
  nlohmann::json j = {{"version", kFormatVersion}, {"binaries", std::move(list)}};
  try {
    std::filesystem::path p(path_);
    if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
    std::string tmp = path_ + ".tmp." + std::to_string(::getpid());
    {
      std::ofstream out(tmp, std::ios::trunc);
      out << j.dump();
      if (!out) {
        *error = "cannot write " + tmp;
        return false;
      }
    }
    std::filesystem::rename(tmp, p);
  } catch (const std::exception& e) {
    *error = e.what();
    return false;
  }
  return true;
}

std::optional<ProgramSource> BinarySources::find(std::string_view binary) {
  std::lock_guard lock(mutex_);
  load_locked();
  auto it = entries_.find(binary_key(binary));
  if (it == entries_.end()) return std::nullopt;
  return it->second.program;
}

void BinarySources::remember(std::string_view binary, ProgramSource source) {
  std::lock_guard lock(mutex_);
  load_locked();
  std::string key = binary_key(binary);
  auto it = entries_.find(key);
  if (it != entries_.end() && it->second.program == source) return;  // nothing new to write
  entries_[key] = Entry{std::move(source), next_++};
  while (entries_.size() > kMaxEntries) {
    auto oldest = entries_.begin();
    for (auto e = entries_.begin(); e != entries_.end(); ++e)
      if (e->second.recorded < oldest->second.recorded) oldest = e;
    entries_.erase(oldest);
  }
  std::string error;
  if (!save_locked(&error)) spdlog::warn("cannot save the program binaries file {}: {}", path_, error);
}

}  // namespace coex::model
