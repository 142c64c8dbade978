#include "exec/kept_analyses.h"

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

// Where and under which builds analyses are kept (keep_analyses_in), under `mutex`.
struct Keeping {
  std::mutex mutex;
  std::string folder;    // "" for none
  std::string build;     // the key's build IDs: the library's, then the analyser's
  std::string analyser;  // the analyser's build ID; "" where analyses are made in this process
};
Keeping& keeping() {
  static auto* k = new Keeping;  // never destroyed: an analysis may end while the process exits
  return *k;
}

// Never destroyed: an analysis on a worker may read it while the process exits.
const std::string& this_build() {
  static const auto* build = new std::string(kernel::own_build_id());
  return *build;
}

std::atomic<bool> g_read{false};  // some analysis was read from the folder in this process

std::string kept_folder(std::string* build = nullptr) {
  Keeping& k = keeping();
  std::lock_guard lock(k.mutex);
  if (build) *build = k.build;
  return k.folder;
}

// The key of an analysis; none where this build has no identity.
std::optional<KeptBinaryKey> analysis_key(const std::string& build, const std::string& source,
                                          const std::string& options) {
  if (build.empty()) return std::nullopt;
  KeptBinaryKey key{kAnalysisPlatform, build, "", options, source};
  if (!keepable(key)) return std::nullopt;
  return key;
}

// The key's build IDs: the library's, then the analyser's where one is named.
std::string builds_key(const std::string& library, bool analyser, const std::string& analyser_build) {
  return analyser ? library + "-" + analyser_build : library;
}

}  // namespace

std::string analyses_folder(const std::string& binaries_folder, const std::string& library_build, bool analyser,
                            const std::string& analyser_build) {
  const bool known = !library_build.empty() && (!analyser || !analyser_build.empty());
  if (binaries_folder.empty() || !known) return "";
  // A folder of their own inside the binaries' one, trimmed apart (analyses and binaries do not push
  // each other out), and in it one per build of coex: whether this build kept any is one look.
  const std::string build = builds_key(library_build, analyser, analyser_build);
  return (std::filesystem::path(binaries_folder) / "analyses" / build).string();
}

void keep_analyses_in(const std::string& binaries_folder, bool analyser, const std::string& analyser_build) {
  const std::string& library = this_build();
  Keeping& k = keeping();
  std::lock_guard lock(k.mutex);
  k.build = builds_key(library, analyser, analyser_build);
  k.analyser = analyser ? analyser_build : "";
  k.folder = analyses_folder(binaries_folder, library, analyser, analyser_build);
}

bool keyed_analyser_made(bool made_here, const std::string& served_build) {
  Keeping& k = keeping();
  std::lock_guard lock(k.mutex);
  return k.analyser.empty() ? made_here : !made_here && served_build == k.analyser;
}

bool analyses_read() { return g_read.load(std::memory_order_relaxed); }

bool analyses_kept() { return analyses_kept_in(kept_folder()); }

bool analyses_kept_in(const std::string& folder) {
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
  remove_all_but_latest(std::move(builds), at_most);
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
