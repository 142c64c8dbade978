#include "exec/kept_analyses.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "exec/kept_binaries.h"
#include "kernel/analysis_codec.h"
#include "kernel/build_id.h"

namespace coex::exec {
namespace {

// The key's platform field: no driver's platform is named so, so an analysis never reads as a binary.
constexpr char kAnalysisPlatform[] = "coex kernel analysis";

std::mutex& folder_mutex() {
  static auto* m = new std::mutex;  // never destroyed: an analysis may end while the process exits
  return *m;
}
std::string& folder_setting() {
  static auto* folder = new std::string;
  return *folder;
}
std::string& key_build() {  // the build IDs an analysis is kept under: the library's, and the analyser's
  static auto* build = new std::string;
  return *build;
}
std::string& analyser_setting() {
  static auto* build = new std::string;
  return *build;
}

// Never destroyed: an analysis on a worker may read it while the process exits.
const std::string& this_build() {
  static const auto* build = new std::string(kernel::own_build_id());
  return *build;
}

std::atomic<bool> g_read{false};  // some analysis was read from the folder in this process

std::string kept_folder(std::string* build = nullptr) {
  std::lock_guard lock(folder_mutex());
  if (build) *build = key_build();
  return folder_setting();
}

// The key of an analysis; none where this build has no identity.
std::optional<KeptBinaryKey> analysis_key(const std::string& build, const std::string& source,
                                          const std::string& options) {
  if (build.empty()) return std::nullopt;
  KeptBinaryKey key{kAnalysisPlatform, build, "", options, source};
  if (!keepable(key)) return std::nullopt;
  return key;
}

}  // namespace

void keep_analyses_in(const std::string& binaries_folder, bool analyser, const std::string& analyser_build) {
  const std::string& library = this_build();
  const bool known = !library.empty() && (!analyser || !analyser_build.empty());
  std::lock_guard lock(folder_mutex());
  // A folder of their own inside the binaries' one, trimmed apart (analyses and binaries do not push
  // each other out), and in it one per build of coex: whether this build kept any is one look.
  key_build() = analyser ? library + "-" + analyser_build : library;
  analyser_setting() = analyser ? analyser_build : "";
  folder_setting() = binaries_folder.empty() || !known
                         ? ""
                         : (std::filesystem::path(binaries_folder) / "analyses" / key_build()).string();
}

bool keyed_analyser_made(bool made_here, const std::string& served_build) {
  std::lock_guard lock(folder_mutex());
  return analyser_setting().empty() ? made_here : !made_here && served_build == analyser_setting();
}

bool analyses_read() { return g_read.load(std::memory_order_relaxed); }

bool analyses_kept() {
  const std::string folder = kept_folder();
  if (folder.empty()) return false;
  std::error_code error;
  for (auto it = std::filesystem::directory_iterator(folder, error);
       !error && it != std::filesystem::directory_iterator(); it.increment(error))
    if (it->path().extension() == ".bin") return true;
  return false;
}

void trim_build_folders(const std::string& analyses_folder, size_t at_most) {
  using Entry = std::pair<std::filesystem::file_time_type, std::filesystem::path>;
  std::vector<Entry> builds;
  std::error_code error;
  for (auto it = std::filesystem::directory_iterator(analyses_folder, error);
       !error && it != std::filesystem::directory_iterator(); it.increment(error)) {
    std::error_code ignored;
    if (!it->is_directory(ignored)) continue;
    const auto written = std::filesystem::last_write_time(it->path(), ignored);
    if (!ignored) builds.emplace_back(written, it->path());
  }
  if (builds.size() <= at_most) return;
  std::sort(builds.begin(), builds.end(), [](const Entry& a, const Entry& b) { return a.first > b.first; });
  for (size_t i = at_most; i < builds.size(); ++i) {
    std::error_code ignored;
    std::filesystem::remove_all(builds[i].second, ignored);
  }
}

std::optional<kernel::ProgramInfo> read_kept_analysis(const std::string& source, const std::string& options) {
  std::string build;
  const std::string folder = kept_folder(&build);
  if (folder.empty()) return std::nullopt;
  const std::optional<KeptBinaryKey> key = analysis_key(build, source, options);
  if (!key) return std::nullopt;
  const std::vector<unsigned char> bytes = read_kept_binary(folder, *key);
  if (bytes.empty()) return std::nullopt;
  const nlohmann::json j = nlohmann::json::parse(bytes.begin(), bytes.end(), nullptr, /*allow_exceptions=*/false);
  kernel::ProgramInfo info;
  try {
    if (j.is_discarded() || !kernel::program_info_from_json(j, info, nullptr) || !info.parse_error.empty())
      return std::nullopt;
  } catch (const std::exception&) {  // a field of another type than this build's: not its analysis
    return std::nullopt;
  }
  g_read.store(true, std::memory_order_relaxed);
  return info;
}

bool keep_analysis(const std::string& source, const std::string& options, const kernel::ProgramInfo& info) {
  // Not one made with coex's own declarations of the builtins (no clang headers found, or the probe
  // parse failed once): a later run with the headers may analyse more of it.
  if (!info.parse_error.empty() || info.builtins_mode != "clang") return false;
  std::string build;
  const std::string folder = kept_folder(&build);
  if (folder.empty()) return false;
  const std::optional<KeptBinaryKey> key = analysis_key(build, source, options);
  if (!key) return false;
  std::string text;
  try {
    text = kernel::program_info_to_json(info).dump();
  } catch (const std::exception&) {  // dump() refuses strings that are not UTF-8: not kept
    return false;
  }
  if (!write_kept_binary(folder, *key, std::vector<unsigned char>(text.begin(), text.end()))) return false;
  // The folder's time is its last file's: earlier builds' folders go, beyond the latest few.
  std::error_code ignored;
  std::filesystem::last_write_time(folder, std::filesystem::file_time_type::clock::now(), ignored);
  trim_build_folders(std::filesystem::path(folder).parent_path().string());
  return true;
}

}  // namespace coex::exec
