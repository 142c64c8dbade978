#include "exec/kept_binaries.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string_view>
#include <thread>
#include <utility>

#include "model/binary_sources.h"

namespace coex::exec {
namespace {

constexpr char kMagic[] = "coex kept binary 2\n";
constexpr char kTemporary[] = ".tmp.";

void append_field(std::string& out, const std::string& field) {
  out += std::to_string(field.size());
  out += ':';
  out += field;
}

std::string_view bytes_of(const std::vector<unsigned char>& binary) {
  return {reinterpret_cast<const char*>(binary.data()), binary.size()};
}

// What precedes the binary in its file: the format, the key, then a line with the binary's hash and
// size (model::binary_key).
std::string header_of(const KeptBinaryKey& key, const std::vector<unsigned char>& binary) {
  return std::string(kMagic) + key.text() + model::binary_key(bytes_of(binary)) + "\n";
}

// A preprocessor directive that reads another file (#include, #include_next, #import), spelt any way
// the preprocessor reads one: its '#' as the digraph "%:" or the trigraph "??=" too, blanks, comments and
// line splices before the name, splices inside it (C99 5.1.1.2, 6.4.6). A '#' in a comment or a
// string counts too: that source is then not kept, which costs only time.
bool has_include_directive(const std::string& source) {
  std::string text;  // the source with its line splices joined, as translation phase 2 does
  text.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\\') {
      size_t next = i + 1;
      if (next < source.size() && source[next] == '\r') ++next;
      if (next < source.size() && source[next] == '\n') {
        i = next;
        continue;
      }
    }
    text += source[i];
  }
  for (size_t at = 0; at < text.size(); ++at) {
    size_t name = std::string::npos;
    if (text[at] == '#')
      name = at + 1;
    else if (text.compare(at, 2, "%:") == 0)
      name = at + 2;
    else if (text.compare(at, 3, "?\?=") == 0)
      name = at + 3;
    if (name == std::string::npos) continue;
    for (;;) {  // blanks and comments between the '#' and the name
      name = text.find_first_not_of(" \t\v\f", name);
      if (name == std::string::npos || text.compare(name, 2, "/*") != 0) break;
      const size_t end = text.find("*/", name + 2);
      if (end == std::string::npos) return true;  // an unterminated comment: not kept
      name = end + 2;
    }
    if (name != std::string::npos && (text.compare(name, 7, "include") == 0 || text.compare(name, 6, "import") == 0))
      return true;
  }
  return false;
}

bool has_include_path_option(const std::string& options) {
  for (size_t at = options.find("-I"); at != std::string::npos; at = options.find("-I", at + 1))
    if (at == 0 || options[at - 1] == ' ' || options[at - 1] == '\t') return true;
  return false;
}

}  // namespace

std::string KeptBinaryKey::text() const {
  std::string out;
  for (const std::string* field : {&platform, &device, &driver_version, &options, &source}) append_field(out, *field);
  return out;
}

bool keepable(const KeptBinaryKey& key) {
  return !key.source.empty() && !has_include_directive(key.source) && !has_include_path_option(key.options);
}

std::string kept_binaries_folder(const std::string& binary_cache, const std::string& history_file) {
  if (binary_cache == "off") return "";
  if (!binary_cache.empty()) return binary_cache;
  if (history_file.empty()) return "";
  const std::filesystem::path parent = std::filesystem::path(history_file).parent_path();
  return (parent.empty() ? std::filesystem::path("binaries") : parent / "binaries").string();
}

std::string kept_binary_file(const std::string& folder, const KeptBinaryKey& key) {
  return (std::filesystem::path(folder) / (model::binary_key(key.text()) + ".bin")).string();
}

std::vector<unsigned char> read_kept_binary(const std::string& folder, const KeptBinaryKey& key) {
  if (folder.empty()) return {};
  const std::string file = kept_binary_file(folder, key);
  std::vector<unsigned char> bytes;
  {
    std::ifstream in(file, std::ios::binary);
    if (!in) return {};
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const std::string start = std::string(kMagic) + key.text();
  if (bytes.size() <= start.size() ||
      !std::equal(start.begin(), start.end(), bytes.begin(),
                  [](char a, unsigned char b) { return static_cast<unsigned char>(a) == b; }))
    return {};
  // The line of the binary's hash and size (at most 37 letters), then the binary.
  const auto line_start = bytes.begin() + static_cast<std::ptrdiff_t>(start.size());
  const auto search_end = line_start + std::min<std::ptrdiff_t>(bytes.end() - line_start, 40);
  const auto line_end = std::find(line_start, search_end, '\n');
  if (line_end == search_end) return {};
  std::vector<unsigned char> binary(line_end + 1, bytes.end());
  if (std::string(line_start, line_end) != model::binary_key(bytes_of(binary))) return {};
  std::error_code ignored;  // marks the file used, for trim_kept_binaries
  std::filesystem::last_write_time(file, std::filesystem::file_time_type::clock::now(), ignored);
  return binary;
}

bool write_kept_binary(const std::string& folder, const KeptBinaryKey& key, const std::vector<unsigned char>& binary) {
  if (folder.empty() || binary.empty()) return false;
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (error) return false;
  const std::string file = kept_binary_file(folder, key);
  // Unique among the processes and threads that may write this file at once.
  const std::string temporary = file + kTemporary + std::to_string(::getpid()) + "." +
                                std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()));
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    const std::string header = header_of(key, binary);
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    out.write(reinterpret_cast<const char*>(binary.data()), static_cast<std::streamsize>(binary.size()));
    if (!out.flush()) {
      out.close();
      std::filesystem::remove(temporary, error);
      return false;
    }
  }
  std::filesystem::rename(temporary, file, error);
  if (error) {
    std::filesystem::remove(temporary, error);
    return false;
  }
  trim_kept_binaries(folder);
  return true;
}

void trim_kept_binaries(const std::string& folder, size_t at_most) {
  using Clock = std::filesystem::file_time_type::clock;
  std::error_code error;
  std::vector<std::pair<std::filesystem::file_time_type, std::filesystem::path>> binaries;
  const auto now = Clock::now();
  for (auto it = std::filesystem::directory_iterator(folder, error);
       !error && it != std::filesystem::directory_iterator(); it.increment(error)) {
    const std::filesystem::path path = it->path();
    const auto written = std::filesystem::last_write_time(path, error);
    if (error) {
      error.clear();
      continue;
    }
    std::error_code ignored;
    if (path.filename().string().find(kTemporary) != std::string::npos) {
      if (now - written > std::chrono::minutes(1)) std::filesystem::remove(path, ignored);
    } else if (path.extension() == ".bin") {
      binaries.emplace_back(written, path);
    }
  }
  remove_all_but_latest(std::move(binaries), at_most);
}

void remove_all_but_latest(std::vector<std::pair<std::filesystem::file_time_type, std::filesystem::path>> entries,
                           size_t at_most) {
  if (entries.size() <= at_most) return;
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t i = at_most; i < entries.size(); ++i) {
    std::error_code ignored;
    std::filesystem::remove_all(entries[i].second, ignored);
  }
}

}  // namespace coex::exec
