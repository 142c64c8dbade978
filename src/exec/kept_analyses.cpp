#include "exec/kept_analyses.h"

#include <elf.h>
#include <link.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "exec/kept_binaries.h"
#include "kernel/analysis_codec.h"

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

std::string kept_folder() {
  std::lock_guard lock(folder_mutex());
  return folder_setting();
}

// The key of an analysis; none where this build has no identity.
std::optional<KeptBinaryKey> analysis_key(const std::string& source, const std::string& options) {
  static const std::string build = own_build_id();
  if (build.empty()) return std::nullopt;
  KeptBinaryKey key{kAnalysisPlatform, build, "", options, source};
  if (!keepable(key)) return std::nullopt;
  return key;
}

struct BuildIdSearch {
  const void* address;  // an address inside the file sought
  std::string hex;
};

// The GNU build ID note of one PT_NOTE segment, or "" (notes are 4-aligned: ELF gABI, "Note Section").
std::string build_id_in_notes(const unsigned char* at, size_t size) {
  const unsigned char* end = at + size;
  auto aligned = [](size_t n) { return (n + 3) & ~size_t{3}; };
  while (static_cast<size_t>(end - at) >= sizeof(ElfW(Nhdr))) {
    ElfW(Nhdr) note;
    std::memcpy(&note, at, sizeof note);
    const unsigned char* name = at + sizeof note;
    const unsigned char* desc = name + aligned(note.n_namesz);
    if (desc > end || static_cast<size_t>(end - desc) < note.n_descsz) return "";
    if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
      static const char digits[] = "0123456789abcdef";
      std::string hex;
      for (size_t i = 0; i < note.n_descsz; ++i) {
        hex += digits[desc[i] >> 4];
        hex += digits[desc[i] & 15];
      }
      return hex;
    }
    at = desc + aligned(note.n_descsz);
  }
  return "";
}

int search_object(dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<BuildIdSearch*>(data);
  const auto address = reinterpret_cast<uintptr_t>(search->address);
  bool holds = false;
  for (int i = 0; i < info->dlpi_phnum && !holds; ++i) {
    const ElfW(Phdr)& p = info->dlpi_phdr[i];
    const uintptr_t start = info->dlpi_addr + p.p_vaddr;
    holds = p.p_type == PT_LOAD && address >= start && address < start + p.p_memsz;
  }
  if (!holds) return 0;
  for (int i = 0; i < info->dlpi_phnum && search->hex.empty(); ++i) {
    const ElfW(Phdr)& p = info->dlpi_phdr[i];
    if (p.p_type == PT_NOTE)
      search->hex = build_id_in_notes(reinterpret_cast<const unsigned char*>(info->dlpi_addr + p.p_vaddr), p.p_memsz);
  }
  return 1;
}

}  // namespace

void keep_analyses_in(const std::string& binaries_folder) {
  static const std::string build = own_build_id();
  std::lock_guard lock(folder_mutex());
  // A folder of their own inside the binaries' one, trimmed apart (analyses and binaries do not push
  // each other out), and in it one per build of coex: whether this build kept any is one look.
  folder_setting() = binaries_folder.empty() || build.empty()
                         ? ""
                         : (std::filesystem::path(binaries_folder) / "analyses" / build).string();
}

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

std::string own_build_id() {
  BuildIdSearch search{reinterpret_cast<const void*>(&own_build_id), ""};
  dl_iterate_phdr(search_object, &search);
  return search.hex;
}

std::optional<kernel::ProgramInfo> read_kept_analysis(const std::string& source, const std::string& options) {
  const std::string folder = kept_folder();
  if (folder.empty()) return std::nullopt;
  const std::optional<KeptBinaryKey> key = analysis_key(source, options);
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
  return info;
}

bool keep_analysis(const std::string& source, const std::string& options, const kernel::ProgramInfo& info) {
  if (!info.parse_error.empty()) return false;
  const std::string folder = kept_folder();
  if (folder.empty()) return false;
  const std::optional<KeptBinaryKey> key = analysis_key(source, options);
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
