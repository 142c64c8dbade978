// The sources of program binaries coex saw built from source (docs/design.md, "Programs loaded from
// binaries"). An app with a binary cache (pyopencl, most game engines, many HPC codes) builds from
// source once, reads CL_PROGRAM_BINARIES and from then on creates its programs from those bytes; coex
// keeps, per binary, the source and build options it was built from, in a file beside the history, so
// that a later run's program made from that binary is analysed and rebuilt for the other devices from
// its source. A binary never seen stays unsplit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace coex::model {

struct ProgramSource {
  std::string source;
  std::string options;
  bool operator==(const ProgramSource& o) const { return source == o.source && options == o.options; }
};

class BinarySources {
 public:
  // `path`: the JSON file (empty: nothing is kept across runs, only within this process).
  explicit BinarySources(std::string path) : path_(std::move(path)) {}

  // What `binary` was built from, when coex saw it read from a program built from source.
  std::optional<ProgramSource> find(std::string_view binary);
  // Records it and writes the file (to a temporary, renamed: a run reading it meanwhile sees the old
  // or the new file, whole). At most kMaxEntries binaries are kept, the most recently recorded.
  void remember(std::string_view binary, ProgramSource source);

  static constexpr size_t kMaxEntries = 512;

 private:
  struct Entry {
    ProgramSource program;
    uint64_t recorded = 0;  // order of recording: the oldest go first past kMaxEntries
  };
  void load_locked();
  bool save_locked(std::string* error) const;

  std::string path_;
  std::mutex mutex_;
  bool loaded_ = false;
  uint64_t next_ = 0;
  std::map<std::string, Entry> entries_;  // by binary_key
};

// "<fnv1a64 hex>-<size>": names a binary across runs (not a security hash: the file is the user's).
std::string binary_key(std::string_view binary);

// The file beside the history cache `history_path` ("" when there is none).
std::string binary_sources_path(const std::string& history_path);

}  // namespace coex::model
