// The build hash a PoCL binary carries, made a device's own (exec/shared_binaries.h).
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "exec/shared_binaries.h"

using coex::exec::give_pocl_binary_its_own_hash;

namespace {

// A PoCL 3.1 / 5.0 binary's start: "poclbin\0", 24 bytes of fields, the 40-letter hash and its zero.
const std::string kHash = "NJ/IFHOIODHEJIJNIIEFGMFNGHKKNBLLPCCPIHAM";

std::vector<unsigned char> pocl_binary(const std::string& hash, size_t fields = 24) {
  std::vector<unsigned char> b(8 + fields, 0x11);
  std::memcpy(b.data(), "poclbin", 8);
  b.insert(b.end(), hash.begin(), hash.end());
  b.push_back(0);
  const std::string rest = "\x0b/program.bc BC\xc0\xde";
  b.insert(b.end(), rest.begin(), rest.end());
  return b;
}

std::string hash_in(const std::vector<unsigned char>& b) { return std::string(b.begin() + 32, b.begin() + 72); }

}  // namespace

TEST(SharedBinaries, EachDeviceGetsAHashOfItsOwnAndNothingElseChanges) {
  const auto donor = pocl_binary(kHash);
  std::set<std::string> hashes{kHash};
  for (int device = 0; device < 255; ++device) {
    auto b = donor;
    ASSERT_TRUE(give_pocl_binary_its_own_hash(b, device));
    ASSERT_EQ(b.size(), donor.size());
    const std::string h = hash_in(b);
    EXPECT_EQ(h.substr(0, 38), kHash.substr(0, 38));
    for (char c : h.substr(38)) EXPECT_TRUE(c >= 'A' && c <= 'P') << h;
    EXPECT_TRUE(std::equal(b.begin() + 72, b.end(), donor.begin() + 72));
    EXPECT_TRUE(hashes.insert(h).second) << "device " << device << " got a hash already given: " << h;
  }
}

TEST(SharedBinaries, WrapsAroundInTheLastTwoLetters) {
  auto b = pocl_binary(kHash.substr(0, 38) + "PP");
  ASSERT_TRUE(give_pocl_binary_its_own_hash(b, 0));
  EXPECT_EQ(hash_in(b).substr(38), "AA");
}

TEST(SharedBinaries, NoHashNoSharing) {
  auto not_pocl = pocl_binary(kHash);
  not_pocl[0] = 'x';
  EXPECT_FALSE(give_pocl_binary_its_own_hash(not_pocl, 1));
  auto lower = pocl_binary("nj/ifhoiodhejijniiefgmfnghkknbllpccpiham");
  EXPECT_FALSE(give_pocl_binary_its_own_hash(lower, 1));
  auto no_slash = pocl_binary("NJAIFHOIODHEJIJNIIEFGMFNGHKKNBLLPCCPIHAM");
  EXPECT_FALSE(give_pocl_binary_its_own_hash(no_slash, 1));
  auto short_one = pocl_binary(kHash);
  short_one.resize(8 + 24 + 40);  // ends before the hash's zero
  EXPECT_FALSE(give_pocl_binary_its_own_hash(short_one, 1));
  auto too_far = pocl_binary(kHash, 300);  // beyond where a header's hash lies
  EXPECT_FALSE(give_pocl_binary_its_own_hash(too_far, 1));
}
