#include "exec/pocl_kernel_cache.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <system_error>
#include <vector>

namespace coex::exec::pocl_kernel_cache {
namespace fs = std::filesystem;
namespace {

// PoCL writes a build hash in letters A to P (a hexadecimal digit each).
bool is_hash_letter(char c) { return c >= 'A' && c <= 'P'; }

// "16-16-1-goffs0-smallgrid": the three local sizes, then flags.
bool variant_matches(const std::string& name, const size_t local[3], bool offset_zero, bool small_grid) {
  size_t at = 0;
  for (int d = 0; d < 3; ++d) {
    const size_t dash = name.find('-', at);
    const std::string number = name.substr(at, dash == std::string::npos ? std::string::npos : dash - at);
    const size_t want = local[d] ? local[d] : 1;
    if (number.empty() || number.find_first_not_of("0123456789") != std::string::npos ||
        std::strtoull(number.c_str(), nullptr, 10) != want)
      return false;
    if (dash == std::string::npos) return d == 2 && !offset_zero && !small_grid;
    at = dash + 1;
  }
  const std::string flags = "-" + name.substr(at) + "-";
  return (flags.find("-goffs0-") != std::string::npos) == offset_zero &&
         (flags.find("-smallgrid-") != std::string::npos) == small_grid;
}

}  // namespace

std::string root() {
  const char* off = std::getenv("POCL_KERNEL_CACHE");
  if (off && std::string(off) == "0") return "";
  if (const char* dir = std::getenv("POCL_CACHE_DIR"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/pocl/kcache";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/pocl/kcache";
  return "";
}

size_t binary_hash_at(const std::vector<unsigned char>& binary) {
  static const char kMagic[] = "poclbin";  // with its terminating zero: the first 8 bytes
  constexpr size_t kLookWithin = 256;
  if (binary.size() < sizeof kMagic || std::memcmp(binary.data(), kMagic, sizeof kMagic) != 0) return std::string::npos;
  auto letter = [&](size_t i) { return is_hash_letter(char(binary[i])); };
  const size_t end = std::min(binary.size(), kLookWithin);
  for (size_t at = sizeof kMagic; at + kHashLetters + 1 <= end; ++at) {
    bool hash = binary[at + 2] == '/' && binary[at + kHashLetters] == '\0';
    for (size_t i = 0; hash && i < kHashLetters; ++i) hash = i == 2 || letter(at + i);
    if (hash) return at;
  }
  return std::string::npos;
}

std::string binary_hash(const std::vector<unsigned char>& binary) {
  const size_t at = binary_hash_at(binary);
  return at == std::string::npos ? "" : std::string(reinterpret_cast<const char*>(binary.data() + at), kHashLetters);
}

bool folder_named_as_kernel(const std::string& kernel) {
  return !kernel.empty() && kernel.size() <= kMaxKernelFolderName;
}

bool has_variant(const std::string& root, const std::string& hash, const std::string& kernel, const size_t local[3],
                 bool offset_zero, bool small_grid) {
  std::error_code ec;
  for (fs::directory_iterator it(fs::path(root) / hash / kernel, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code item;
    if (!it->is_directory(item) || !variant_matches(it->path().filename().string(), local, offset_zero, small_grid))
      continue;
    // PoCL makes the folder before it compiles: compiled once the library is in it.
    for (fs::directory_iterator file(it->path(), item), none; !item && file != none; file.increment(item))
      if (file->path().extension() == ".so") return true;
  }
  return false;
}

bool has_generic(const std::string& root, const std::string& hash, const std::string& kernel) {
  std::error_code ec;
  for (fs::directory_iterator file(fs::path(root) / hash / kernel / "0-0-0", ec), none; !ec && file != none;
       file.increment(ec))
    if (file->path().extension() == ".so") return true;
  return false;
}

namespace {

// Calls visit(hash, touched) for each program folder of the cache, with the time of its
// `last_accessed` file. The root's entries are read by name alone (readdir, no path made of each): a
// cache in use for long holds tens of thousands of files beside the folders (PoCL's temporary files
// of builds cut short: 35,000 on the development machine, where a walk that made a path of each took
// 129 million instructions of the first launch that looked; 4.6 million so).
template <typename Visit>
void for_each_program(const std::string& root, Visit visit) {
  // <root>/AB/CDE.../last_accessed: two letters, then the other 38.
  std::vector<std::string> firsts;
  if (DIR* dir = ::opendir(root.c_str())) {
    while (const dirent* entry = ::readdir(dir))
      if (is_hash_letter(entry->d_name[0]) && is_hash_letter(entry->d_name[1]) && entry->d_name[2] == '\0')
        firsts.emplace_back(entry->d_name, 2);
    ::closedir(dir);
  }
  const fs::directory_iterator end;
  for (const std::string& first : firsts) {
    std::error_code inner;
    for (fs::directory_iterator program(fs::path(root) / first, inner); !inner && program != end;
         program.increment(inner)) {
      std::error_code stat;
      const fs::file_time_type touched = fs::last_write_time(program->path() / "last_accessed", stat);
      if (!stat) visit(first + "/" + program->path().filename().string(), touched);
    }
  }
}

// The one hash of which `touched_now` holds, "" where none or several do.
template <typename Touched>
std::string the_one(const std::string& root, Touched touched_now) {
  std::string found;
  bool several = false;
  for_each_program(root, [&](std::string hash, fs::file_time_type touched) {
    if (several || !touched_now(hash, touched)) return;
    several = !found.empty();
    found = std::move(hash);
  });
  return several ? "" : found;
}

}  // namespace

std::string program_touched_within(const std::string& root, fs::file_time_type from, fs::file_time_type to,
                                   const std::set<std::string>& except) {
  return the_one(root, [&](const std::string& hash, fs::file_time_type touched) {
    return touched >= from && touched <= to && !except.count(hash);
  });
}

ProgramTimes programs_touched(const std::string& root) {
  ProgramTimes times;
  for_each_program(root,
                   [&](std::string hash, fs::file_time_type touched) { times.emplace(std::move(hash), touched); });
  return times;
}

std::string program_touched_since(const std::string& root, const ProgramTimes& before) {
  return the_one(root, [&](const std::string& hash, fs::file_time_type touched) {
    const auto it = before.find(hash);
    return it == before.end() || it->second != touched;
  });
}

int copy_missing(const std::string& root, const std::string& from, const std::string& to, const std::string& kernel) {
  if (root.empty() || from.empty() || to.empty() || from == to) return 0;
  const fs::path source = fs::path(root) / from / kernel, target = fs::path(root) / to / kernel;
  std::error_code ec;
  int copied = 0;
  for (fs::directory_iterator it(source, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code item;
    // Not a temporary folder of another copy (ours start with a dot) or one PoCL is still filling.
    if (it->path().filename().string().rfind('.', 0) == 0 || !it->is_directory(item) ||
        fs::exists(target / it->path().filename(), item))
      continue;
    fs::create_directories(target, item);
    const fs::path temporary = target / (".coex-" + std::to_string(::getpid()) + "-" + it->path().filename().string());
    fs::remove_all(temporary, item);
    fs::copy(it->path(), temporary, fs::copy_options::recursive, item);
    if (!item) fs::rename(temporary, target / it->path().filename(), item);
    if (item)
      fs::remove_all(temporary, item);  // PoCL filled it meanwhile, or the copy failed
    else
      ++copied;
  }
  return copied;
}

}  // namespace coex::exec::pocl_kernel_cache
