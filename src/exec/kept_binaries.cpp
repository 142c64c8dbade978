#include "exec/kept_binaries.h"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

namespace coex::exec {
namespace {

constexpr char kMagic[] = "coex kept binary 1\n";

void append_field(std::string& out, const std::string& field) {
  out += std::to_string(field.size());
  out += ':';
  out += field;
}

uint64_t fnv1a(const std::string& text) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace

std::string KeptBinaryKey::text() const {
  std::string out;
  for (const std::string* field : {&platform, &device, &driver_version, &options, &source}) append_field(out, *field);
  return out;
}

std::string kept_binaries_folder(const std::string& binary_cache, const std::string& history_file) {
  if (binary_cache == "off") return "";
  if (!binary_cache.empty()) return binary_cache;
  if (history_file.empty()) return "";
  const std::filesystem::path parent = std::filesystem::path(history_file).parent_path();
  return (parent.empty() ? std::filesystem::path("binaries") : parent / "binaries").string();
}

std::string kept_binary_file(const std::string& folder, const KeptBinaryKey& key) {
  char name[32];
  std::snprintf(name, sizeof name, "%016llx.bin", static_cast<unsigned long long>(fnv1a(key.text())));
  return (std::filesystem::path(folder) / name).string();
}

std::vector<unsigned char> read_kept_binary(const std::string& folder, const KeptBinaryKey& key) {
  if (folder.empty()) return {};
  std::ifstream in(kept_binary_file(folder, key), std::ios::binary);
  if (!in) return {};
  const std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string header = std::string(kMagic) + key.text();
  if (bytes.size() <= header.size() ||
      !std::equal(header.begin(), header.end(), bytes.begin(),
                  [](char a, unsigned char b) { return static_cast<unsigned char>(a) == b; }))
    return {};
  return std::vector<unsigned char>(bytes.begin() + static_cast<std::ptrdiff_t>(header.size()), bytes.end());
}

bool write_kept_binary(const std::string& folder, const KeptBinaryKey& key, const std::vector<unsigned char>& binary) {
  if (folder.empty() || binary.empty()) return false;
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (error) return false;
  const std::string file = kept_binary_file(folder, key);
  // Unique among the processes and threads that may write this file at once.
  const std::string temporary = file + ".tmp." + std::to_string(::getpid()) + "." +
                                std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()));
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    const std::string header = std::string(kMagic) + key.text();
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    out.write(reinterpret_cast<const char*>(binary.data()), static_cast<std::streamsize>(binary.size()));
    if (!out.flush()) {
      out.close();
      std::filesystem::remove(temporary, error);
      return false;
    }
  }
  std::filesystem::rename(temporary, file, error);
  if (!error) return true;
  std::filesystem::remove(temporary, error);
  return false;
}

}  // namespace coex::exec
