// Binaries of coex's own builds kept on disk across runs (setting binary_cache; docs/design.md,
// "One-time costs"): PoCL preprocesses a program's source at every build, its kernel cache notwithstanding
// (about 25 ms on PoCL 3.1, 40 to 60 ms on PoCL 5 for benchmarks/binomial), where a build from a binary takes
// about 1 ms. The first launch of a split waits for home's build of the rewritten program and for each
// device's build as it joins, in turn: a program's later runs build from the binaries its earlier
// runs kept, as they find PoCL's own cache warm.
//
// A file holds one binary with what it was built from: the device's kind (platform, device name and
// driver version), the build options and the source, all compared in full when it is read, so that a
// binary never serves another program, options or driver; and the binary's size and hash, so that a
// file cut short or changed is not used. A source that includes files is never kept: what they hold
// may change between runs, unseen by the key.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace coex::exec {

// What a kept binary was built from: every field must match for it to be used.
struct KeptBinaryKey {
  std::string platform;
  std::string device;
  std::string driver_version;
  std::string options;
  std::string source;
  // The fields as one string, each preceded by its length.
  std::string text() const;
};

// Whether a build of `key` may be kept: not when its source has an #include or its options an -I
// (files the key does not see), nor an empty source.
bool keepable(const KeptBinaryKey& key);

// The folder of kept binaries for the settings' values: `binary_cache` itself; empty: `binaries`
// beside the History file (`history_file`, setting cache); "off", or empty with no History file: ""
// (nothing kept).
std::string kept_binaries_folder(const std::string& binary_cache, const std::string& history_file);

// The file of `key` in `folder`: named by the hash and size of the key's text (model::binary_key).
std::string kept_binary_file(const std::string& folder, const KeptBinaryKey& key);

// The binary kept for `key`; empty when there is none, or the file is truncated, of another format or
// of another key (a hash collision, a file written by hand).
std::vector<unsigned char> read_kept_binary(const std::string& folder, const KeptBinaryKey& key);

// Writes `binary` for `key` (creating the folder), through a temporary file renamed into place, so
// that a reader in another process sees the old file or the new one whole; then trims the folder
// (trim_kept_binaries). False when it could not (a read-only folder: nothing is kept, and nothing
// else changes).
bool write_kept_binary(const std::string& folder, const KeptBinaryKey& key, const std::vector<unsigned char>& binary);

// The most binaries a folder keeps: beyond it, the least recently used go.
constexpr size_t kKeptBinariesAtMost = 256;

// Removes from `folder` the kept binaries beyond the `at_most` most recently used (a read marks a file
// used), and temporary files an interrupted write left more than a minute ago.
void trim_kept_binaries(const std::string& folder, size_t at_most = kKeptBinariesAtMost);

// Removes the files or folders of `entries` (each with its last write time) beyond the `at_most` most
// recently written: the trim of kept binaries, and of kept analyses' folders (exec/kept_analyses.h).
void remove_all_but_latest(std::vector<std::pair<std::filesystem::file_time_type, std::filesystem::path>> entries,
                           size_t at_most);

}  // namespace coex::exec
