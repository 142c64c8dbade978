// PoCL's cache of compiled work-group functions, read and filled by coex (exec/pocl_kernel_cache.h): a
// binary's build hash, a folder's variants, and the copy of what one device compiled into another's
// folder. On folders made here, laid out as PoCL 3.1 lays its cache out.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "exec/pocl_kernel_cache.h"

namespace cache = coex::exec::pocl_kernel_cache;
namespace fs = std::filesystem;

namespace {

const std::string kHash = "NJ/IFHOIODHEJIJNIIEFGMFNGHKKNBLLPCCPIHAM";
const std::string kOther = "NJ/IFHOIODHEJIJNIIEFGMFNGHKKNBLLPCCPIHAO";

class PoclKernelCache : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = (fs::temp_directory_path() / ("coex-kcache-test-" + std::to_string(::getpid()))).string();
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  // A compiled work-group function: <root>/<hash>/<kernel>/<variant>/<kernel>.so holding `bytes`.
  void compiled(const std::string& hash, const std::string& kernel, const std::string& variant,
                const std::string& bytes) {
    const fs::path dir = fs::path(root_) / hash / kernel / variant;
    fs::create_directories(dir);
    std::ofstream(dir / (kernel + ".so")) << bytes;
  }
  // A program folder whose `last_accessed` PoCL touched at `when`.
  void touch(const std::string& hash, fs::file_time_type when) {
    fs::create_directories(fs::path(root_) / hash);
    const fs::path file = fs::path(root_) / hash / "last_accessed";
    std::ofstream(file) << "";
    fs::last_write_time(file, when);
  }
  std::string read(const std::string& hash, const std::string& kernel, const std::string& variant) {
    std::ifstream in(fs::path(root_) / hash / kernel / variant / (kernel + ".so"));
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  std::string root_;
};

}  // namespace

TEST(PoclKernelCacheHash, IsReadFromTheBinarysStart) {
  // "poclbin\0", 24 bytes of fields, the 40-letter hash and its zero (PoCL 3.1 and 5.0).
  const std::string bytes = std::string("poclbin", 8) + std::string(24, '\x11') + kHash + std::string(1, '\0');
  std::vector<unsigned char> b(bytes.begin(), bytes.end());
  EXPECT_EQ(cache::binary_hash(b), kHash);
  EXPECT_EQ(cache::binary_hash_at(b), 32u);
  b[32 + 2] = 'x';  // no '/' after the first two letters: no hash
  EXPECT_EQ(cache::binary_hash(b), "");
  EXPECT_EQ(cache::binary_hash({'E', 'L', 'F'}), "");
}

TEST(PoclKernelCacheRoot, FollowsPoclsOwnChoice) {
  // The variables as they were, put back at the end: other tests of this program read them.
  std::vector<std::pair<std::string, std::optional<std::string>>> saved;
  for (const char* name : {"POCL_CACHE_DIR", "POCL_KERNEL_CACHE", "XDG_CACHE_HOME"}) {
    const char* value = std::getenv(name);
    saved.emplace_back(name, value ? std::optional<std::string>(value) : std::nullopt);
  }
  ::setenv("POCL_CACHE_DIR", "/somewhere/pc", 1);
  EXPECT_EQ(cache::root(), "/somewhere/pc");
  ::setenv("POCL_KERNEL_CACHE", "0", 1);
  EXPECT_EQ(cache::root(), "");  // PoCL keeps nothing on disk
  ::unsetenv("POCL_KERNEL_CACHE");
  ::unsetenv("POCL_CACHE_DIR");
  ::setenv("XDG_CACHE_HOME", "/x", 1);
  EXPECT_EQ(cache::root(), "/x/pocl/kcache");
  ::unsetenv("XDG_CACHE_HOME");
  if (const char* home = std::getenv("HOME")) {
    EXPECT_EQ(cache::root(), std::string(home) + "/.cache/pocl/kcache");
  }
  for (const auto& [name, value] : saved)
    if (value)
      ::setenv(name.c_str(), value->c_str(), 1);
    else
      ::unsetenv(name.c_str());
}

TEST_F(PoclKernelCache, AVariantIsFoundByLocalSizeOffsetAndGrid) {
  compiled(kHash, "matmul", "16-16-1-goffs0-smallgrid", "zero offset");
  const size_t local[3] = {16, 16, 1}, other[3] = {8, 16, 1};
  EXPECT_TRUE(cache::has_variant(root_, kHash, "matmul", local, true, true));
  EXPECT_FALSE(cache::has_variant(root_, kHash, "matmul", local, false, true));  // only the zero-offset one
  EXPECT_FALSE(cache::has_variant(root_, kHash, "matmul", local, true, false));  // only the small grid's
  EXPECT_FALSE(cache::has_variant(root_, kHash, "matmul", other, true, true));
  EXPECT_FALSE(cache::has_variant(root_, kHash, "other", local, true, true));
  EXPECT_FALSE(cache::has_variant(root_, kOther, "matmul", local, true, true));
  compiled(kHash, "matmul", "16-16-1-smallgrid", "any offset");
  EXPECT_TRUE(cache::has_variant(root_, kHash, "matmul", local, false, true));
  EXPECT_FALSE(cache::has_variant(root_, kHash, "matmul", local, false, false));
  compiled(kHash, "scan", "128-1-1", "plain");  // no flags at all: a wide grid at a nonzero offset
  const size_t scan[3] = {128, 0, 0};           // sizes beyond the launch's dimensions count as 1
  EXPECT_TRUE(cache::has_variant(root_, kHash, "scan", scan, false, false));
  EXPECT_FALSE(cache::has_variant(root_, kHash, "scan", scan, true, false));
  EXPECT_FALSE(cache::has_variant(root_, kHash, "scan", scan, false, true));
  compiled(kHash, "scan", "128-1-1-goffs0", "wide, zero offset");
  EXPECT_TRUE(cache::has_variant(root_, kHash, "scan", scan, true, false));
  compiled(kHash, "generic", "0-0-0", "any local size");  // the generic one a binary read compiles
  EXPECT_FALSE(cache::has_variant(root_, kHash, "generic", local, false, false));
  fs::create_directories(fs::path(root_) / kHash / "empty" / "16-16-1-smallgrid");  // made, not compiled yet
  EXPECT_FALSE(cache::has_variant(root_, kHash, "empty", local, false, true));
}

TEST(PoclSmallGrid, EveryDimensionNarrowerThanTheLimit) {
  const size_t narrow[3] = {65534, 4, 1}, wide[3] = {16, 65535, 1};
  EXPECT_TRUE(cache::small_grid(2, narrow));
  EXPECT_FALSE(cache::small_grid(2, wide));
  EXPECT_TRUE(cache::small_grid(1, wide));  // dimensions beyond the launch's do not count
}

TEST_F(PoclKernelCache, WhatAnotherDeviceCompiledIsCopiedWhereMissing) {
  compiled(kHash, "matmul", "16-16-1-smallgrid", "compiled by device 1");
  compiled(kHash, "matmul", "16-16-1-goffs0-smallgrid", "zero offset, device 1");
  compiled(kOther, "matmul", "16-16-1-goffs0-smallgrid", "device 2's own");
  EXPECT_EQ(cache::copy_missing(root_, kHash, kOther, "matmul"), 1);
  EXPECT_EQ(read(kOther, "matmul", "16-16-1-smallgrid"), "compiled by device 1");
  EXPECT_EQ(read(kOther, "matmul", "16-16-1-goffs0-smallgrid"), "device 2's own");  // not replaced
  EXPECT_EQ(cache::copy_missing(root_, kHash, kOther, "matmul"), 0);                // nothing left to copy
  // No temporary folder is left behind.
  for (const auto& entry : fs::directory_iterator(fs::path(root_) / kOther / "matmul"))
    EXPECT_NE(entry.path().filename().string().rfind(".coex-", 0), 0u) << entry.path();
  EXPECT_EQ(cache::copy_missing(root_, kHash, kHash, "matmul"), 0);
  EXPECT_EQ(cache::copy_missing(root_, "AB/NOTTHERE", kOther, "matmul"), 0);
  EXPECT_EQ(cache::copy_missing("", kHash, kOther, "matmul"), 0);
}

TEST_F(PoclKernelCache, AnotherCopysTemporaryFolderIsNotCopied) {
  compiled(kHash, "scan", ".coex-123-64-1-1", "half copied");
  EXPECT_EQ(cache::copy_missing(root_, kHash, kOther, "scan"), 0);
  EXPECT_FALSE(fs::exists(fs::path(root_) / kOther / "scan" / ".coex-123-64-1-1"));
}

TEST_F(PoclKernelCache, AFolderNotYetMadeIsMade) {
  compiled(kHash, "scan", "64-1-1", "compiled");
  EXPECT_EQ(cache::copy_missing(root_, kHash, kOther, "scan"), 1);
  EXPECT_EQ(read(kOther, "scan", "64-1-1"), "compiled");
}

TEST_F(PoclKernelCache, TheGenericFunctionIsTheZeroFolders) {
  compiled(kHash, "k", "16-1-1-goffs0-smallgrid", "specialized");
  EXPECT_FALSE(cache::has_generic(root_, kHash, "k"));
  fs::create_directories(fs::path(root_) / kHash / "k" / "0-0-0");  // made, not compiled yet
  EXPECT_FALSE(cache::has_generic(root_, kHash, "k"));
  compiled(kHash, "k", "0-0-0", "generic");
  EXPECT_TRUE(cache::has_generic(root_, kHash, "k"));
  EXPECT_FALSE(cache::has_generic(root_, kHash, "other"));
}

// The program folder PoCL touched within a build: found where it is the only one.
TEST_F(PoclKernelCache, TheProgramTouchedWithinABuildIsFoundWhereItIsTheOnlyOne) {
  const auto now = fs::file_time_type::clock::now();
  touch(kHash, now - std::chrono::seconds(5));
  touch(kOther, now - std::chrono::hours(1));
  EXPECT_EQ(cache::program_touched_within(root_, now - std::chrono::seconds(6), now - std::chrono::seconds(4)), kHash);
  EXPECT_EQ(cache::program_touched_within(root_, now - std::chrono::seconds(3), now), "");  // none
  touch(kOther, now - std::chrono::seconds(5));
  EXPECT_EQ(cache::program_touched_within(root_, now - std::chrono::seconds(6), now - std::chrono::seconds(4)),
            "");  // two: not told apart
  // Two touched, one of them known to be another program's: the other.
  EXPECT_EQ(
      cache::program_touched_within(root_, now - std::chrono::seconds(6), now - std::chrono::seconds(4), {kOther}),
      kHash);
  EXPECT_EQ(cache::program_touched_within(root_ + "/missing", now - std::chrono::hours(2), now), "");
  // What else the root holds is no program folder: PoCL's temporary files (left by builds cut short),
  // a folder not named by two hash letters, a file that is.
  for (const char* name : {"tempfile_AbCdEf", "tempfile_QwErTy.preproc.cl", "AQ"})
    std::ofstream(fs::path(root_) / name) << "";
  touch("zz/CDEFGHIJKLMNOPABCDEFGHIJKLMNOPABCDEFGH", now - std::chrono::seconds(5));
  touch("ABC/DEFGHIJKLMNOPABCDEFGHIJKLMNOPABCDEFGH", now - std::chrono::seconds(5));
  EXPECT_EQ(
      cache::program_touched_within(root_, now - std::chrono::seconds(6), now - std::chrono::seconds(4), {kOther}),
      kHash);
}

// The program folder a build touched, against a listing taken before it: one made or touched again
// since, where it is the only one.
TEST_F(PoclKernelCache, TheProgramTouchedSinceAListingIsFoundWhereItIsTheOnlyOne) {
  const auto now = fs::file_time_type::clock::now();
  touch(kOther, now - std::chrono::hours(1));
  const cache::ProgramTimes empty_but_other = cache::programs_touched(root_);
  ASSERT_EQ(empty_but_other.size(), 1u);
  EXPECT_EQ(empty_but_other.at(kOther), now - std::chrono::hours(1));
  EXPECT_EQ(cache::program_touched_since(root_, empty_but_other), "");  // nothing since
  touch(kHash, now - std::chrono::seconds(5));                          // a new folder
  EXPECT_EQ(cache::program_touched_since(root_, empty_but_other), kHash);
  const cache::ProgramTimes both = cache::programs_touched(root_);
  touch(kOther, now);  // touched again
  EXPECT_EQ(cache::program_touched_since(root_, both), kOther);
  touch(kHash, now);
  EXPECT_EQ(cache::program_touched_since(root_, both), "");  // two: not told apart
  EXPECT_EQ(cache::program_touched_since(root_ + "/missing", both), "");
  EXPECT_TRUE(cache::programs_touched(root_ + "/missing").empty());
}

TEST(PoclKernelCacheNames, ALongNameIsNotItsFolder) {
  EXPECT_TRUE(cache::folder_named_as_kernel("matmul"));
  EXPECT_TRUE(cache::folder_named_as_kernel(std::string(cache::kMaxKernelFolderName, 'k')));
  EXPECT_FALSE(cache::folder_named_as_kernel(std::string(cache::kMaxKernelFolderName + 1, 'k')));
  EXPECT_FALSE(cache::folder_named_as_kernel(""));
}
