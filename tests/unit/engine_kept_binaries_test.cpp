// Binaries of coex's builds kept on disk across runs (exec/kept_binaries.h): a binary is read back
// only for exactly what it was built from.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "exec/kept_binaries.h"

using coex::exec::keepable;
using coex::exec::kept_binaries_folder;
using coex::exec::kept_binary_file;
using coex::exec::KeptBinaryKey;
using coex::exec::read_kept_binary;
using coex::exec::trim_kept_binaries;
using coex::exec::write_kept_binary;

namespace {

class KeptBinaries : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ =
        (std::filesystem::temp_directory_path() / ("coex-kept-binaries-" + std::to_string(::getpid()) + "-" +
                                                   ::testing::UnitTest::GetInstance()->current_test_info()->name()))
            .string();
    std::filesystem::remove_all(folder_);
  }
  void TearDown() override { std::filesystem::remove_all(folder_); }

  static KeptBinaryKey key() {
    return {"Portable Computing Language", "cpu-minimal-skylake", "5.0+debian", "-DSTEPS=1024u",
            "__kernel void k(__global int* a) { a[get_global_id(0)] = 1; }"};
  }
  std::string folder_;
};

TEST_F(KeptBinaries, WhatWasWrittenIsReadBack) {
  const std::vector<unsigned char> binary = {'p', 'o', 'c', 'l', 0, 1, 2, 255};
  EXPECT_TRUE(read_kept_binary(folder_, key()).empty());  // nothing kept yet, no folder
  ASSERT_TRUE(write_kept_binary(folder_, key(), binary));
  EXPECT_EQ(read_kept_binary(folder_, key()), binary);
  // Written again (a driver refused the old one): the new bytes replace it, and no temporary stays.
  const std::vector<unsigned char> other = {9, 8, 7};
  ASSERT_TRUE(write_kept_binary(folder_, key(), other));
  EXPECT_EQ(read_kept_binary(folder_, key()), other);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(folder_), std::filesystem::directory_iterator()), 1);
}

TEST_F(KeptBinaries, EveryFieldOfTheKeyMustMatch) {
  ASSERT_TRUE(write_kept_binary(folder_, key(), {1, 2, 3}));
  auto changed = [](void (*change)(KeptBinaryKey&)) {
    KeptBinaryKey k = key();
    change(k);
    return k;
  };
  const KeptBinaryKey others[] = {
      changed([](KeptBinaryKey& k) { k.platform = "NVIDIA CUDA"; }),
      changed([](KeptBinaryKey& k) { k.device = "cpu-skylake"; }),
      changed([](KeptBinaryKey& k) { k.driver_version = "5.1"; }),
      changed([](KeptBinaryKey& k) { k.options = "-DSTEPS=512u"; }),
      changed([](KeptBinaryKey& k) { k.source += " "; }),
  };
  for (const KeptBinaryKey& other : others) {
    EXPECT_TRUE(read_kept_binary(folder_, other).empty()) << other.text();
    // Another key's file, copied over this key's name (a hash collision): its header says whose it is.
    std::filesystem::copy_file(kept_binary_file(folder_, key()), kept_binary_file(folder_, other),
                               std::filesystem::copy_options::overwrite_existing);
    EXPECT_TRUE(read_kept_binary(folder_, other).empty()) << other.text();
  }
  // Fields that run into one another are told apart by their lengths.
  KeptBinaryKey shifted = key();
  shifted.options = key().options + key().source.substr(0, 3);
  shifted.source = key().source.substr(3);
  EXPECT_NE(shifted.text(), key().text());
}

TEST_F(KeptBinaries, ATruncatedOrForeignFileIsNotUsed) {
  ASSERT_TRUE(write_kept_binary(folder_, key(), {1, 2, 3}));
  const std::string file = kept_binary_file(folder_, key());
  const auto size = std::filesystem::file_size(file);
  std::filesystem::resize_file(file, size - 3);  // the header whole, no binary
  EXPECT_TRUE(read_kept_binary(folder_, key()).empty());
  std::filesystem::resize_file(file, 10);
  EXPECT_TRUE(read_kept_binary(folder_, key()).empty());
  std::ofstream(file, std::ios::trunc) << "some other file";
  EXPECT_TRUE(read_kept_binary(folder_, key()).empty());
}

TEST_F(KeptBinaries, AChangedOrLengthenedBinaryIsNotUsed) {
  ASSERT_TRUE(write_kept_binary(folder_, key(), {1, 2, 3, 4}));
  const std::string file = kept_binary_file(folder_, key());
  const auto size = std::filesystem::file_size(file);
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size - 1));
    f.put(9);  // the last byte of the binary
  }
  EXPECT_TRUE(read_kept_binary(folder_, key()).empty());
  ASSERT_TRUE(write_kept_binary(folder_, key(), {1, 2, 3, 4}));
  std::ofstream(file, std::ios::app | std::ios::binary) << 'x';
  EXPECT_TRUE(read_kept_binary(folder_, key()).empty());
  ASSERT_TRUE(write_kept_binary(folder_, key(), {1, 2, 3, 4}));
  EXPECT_EQ(read_kept_binary(folder_, key()), (std::vector<unsigned char>{1, 2, 3, 4}));
}

TEST(KeptBinariesKeepable, NotWhenTheSourceIncludesFiles) {
  KeptBinaryKey key{"p", "d", "v", "-DN=4 -cl-fast-relaxed-math", "__kernel void k() {}"};
  EXPECT_TRUE(keepable(key));
  for (const char* source :
       {"#include \"common.h\"\n__kernel void k() {}", "  #  include <x.h>\n", "#\tinclude \"y\"\n",
        // Other spellings of the same directives (digraph, trigraph, comments, line splices).
        "#/**/include \"h.h\"\n", "# /* a */ /* b */ include <x.h>\n", "%:include \"h.h\"\n", "?\?=include \"h.h\"\n",
        "#import \"h.h\"\n", "#include_next <x.h>\n", "#inc\\\nlude \"h.h\"\n", "#\\\r\ninclude \"h.h\"\n"}) {
    KeptBinaryKey with = key;
    with.source = source;
    EXPECT_FALSE(keepable(with)) << source;
  }
  for (const char* options : {"-I/home/u/kernels", "-DN=4 -I include", "-w\t-Idir"}) {
    KeptBinaryKey with = key;
    with.options = options;
    EXPECT_FALSE(keepable(with)) << options;
  }
  KeptBinaryKey defined = key;
  defined.source = "#define INCLUDED 1\n#pragma unroll\n__kernel void k() {}";
  defined.options = "-DUSE-Ifs=1";  // an -I inside another option
  EXPECT_TRUE(keepable(defined));
  KeptBinaryKey empty = key;
  empty.source.clear();
  EXPECT_FALSE(keepable(empty));
}

TEST_F(KeptBinaries, TheFolderKeepsTheMostRecentlyUsedAndNoOldTemporaries) {
  std::vector<std::string> files;
  for (int i = 0; i < 4; ++i) {
    KeptBinaryKey k = key();
    k.options = "-DI=" + std::to_string(i);
    ASSERT_TRUE(write_kept_binary(folder_, k, {static_cast<unsigned char>(i)}));
    files.push_back(kept_binary_file(folder_, k));
    // Written a minute apart, the first oldest.
    std::filesystem::last_write_time(files.back(),
                                     std::filesystem::file_time_type::clock::now() - std::chrono::minutes(10 - i));
  }
  KeptBinaryKey first = key();
  first.options = "-DI=0";
  EXPECT_FALSE(read_kept_binary(folder_, first).empty());  // used now: the most recent
  const std::string old_temporary = files[0] + ".tmp.1.2", new_temporary = files[0] + ".tmp.3.4";
  std::ofstream(old_temporary) << "left by a write cut short";
  std::ofstream(new_temporary) << "a write under way";
  std::filesystem::last_write_time(old_temporary,
                                   std::filesystem::file_time_type::clock::now() - std::chrono::minutes(5));
  trim_kept_binaries(folder_, 2);
  EXPECT_TRUE(std::filesystem::exists(files[0]));
  EXPECT_FALSE(std::filesystem::exists(files[1]));
  EXPECT_FALSE(std::filesystem::exists(files[2]));
  EXPECT_TRUE(std::filesystem::exists(files[3]));
  EXPECT_FALSE(std::filesystem::exists(old_temporary));
  EXPECT_TRUE(std::filesystem::exists(new_temporary));
}

TEST_F(KeptBinaries, NothingIsKeptWhereTheFolderCannotBeMade) {
  std::ofstream(folder_) << "a file where the folder would be";
  EXPECT_FALSE(write_kept_binary(folder_ + "/binaries", key(), {1}));
  EXPECT_FALSE(write_kept_binary("", key(), {1}));
  EXPECT_TRUE(read_kept_binary("", key()).empty());
  std::filesystem::remove(folder_);
}

TEST(KeptBinariesFolder, BesideTheHistoryUnlessNamedOrOff) {
  EXPECT_EQ(kept_binaries_folder("", "/home/u/.cache/coex/history.json"), "/home/u/.cache/coex/binaries");
  EXPECT_EQ(kept_binaries_folder("", "history.json"), "binaries");
  EXPECT_EQ(kept_binaries_folder("/tmp/b", "/home/u/.cache/coex/history.json"), "/tmp/b");
  EXPECT_EQ(kept_binaries_folder("off", "/home/u/.cache/coex/history.json"), "");
  EXPECT_EQ(kept_binaries_folder("", ""), "");
}

}  // namespace
