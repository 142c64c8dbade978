#include <gtest/gtest.h>

#include <numeric>

#include "exec/launch_geometry.h"

using coex::exec::LaunchGeometry;
using coex::exec::make_geometry;
using coex::exec::small_grid_groups;
using coex::exec::sub_launch;

TEST(LaunchGeometry, ExplicitLocalSizeIsKept) {
  size_t global[2] = {64, 48}, local[2] = {8, 4};
  LaunchGeometry g;
  ASSERT_TRUE(make_geometry(2, nullptr, global, local, 1024, g));
  EXPECT_EQ(g.split_dim(), 1u);
  EXPECT_EQ(g.groups_along_split(), 12u);
  EXPECT_EQ(g.items_per_group(), 32u);
  EXPECT_TRUE(g.local_given);
}

TEST(LaunchGeometry, NullLocalSizeDividesGlobalInEveryDimension) {
  for (unsigned dims = 1; dims <= 3; ++dims) {
    for (size_t n : {1u, 7u, 96u, 1000u, 4096u, 1u << 20}) {
      size_t global[3] = {n, n + 2, 5};
      LaunchGeometry g;
      ASSERT_TRUE(make_geometry(dims, nullptr, global, nullptr, 256, g));
      EXPECT_FALSE(g.local_given);
      for (unsigned d = 0; d < dims; ++d) EXPECT_EQ(global[d] % g.local[d], 0u) << "dim " << d << " n " << n;
      EXPECT_LE(g.items_per_group(), 256u);
    }
  }
}

TEST(LaunchGeometry, NullLocalSizeLeavesEnoughGroupsToSplit) {
  size_t global[1] = {65536};
  LaunchGeometry g;
  ASSERT_TRUE(make_geometry(1, nullptr, global, nullptr, 1024, g));
  EXPECT_GE(g.groups_along_split(), 64u);
}

TEST(LaunchGeometry, SplitsTheOutermostDimensionWithSeveralGroups) {
  // A helper that launches every kernel as {work_items, 1}: dimension 1 holds one group.
  size_t wide[2] = {9600, 1}, wide_local[2] = {64, 1};
  LaunchGeometry g;
  ASSERT_TRUE(make_geometry(2, nullptr, wide, wide_local, 1024, g));
  EXPECT_EQ(g.split_dim(), 0u);
  EXPECT_EQ(g.groups_along_split(), 150u);
  EXPECT_EQ(g.groups_per_slice(), 1u);
  LaunchGeometry s = sub_launch(g, 10, 20);
  EXPECT_EQ(s.offset[0], 640u);
  EXPECT_EQ(s.global[0], 640u);
  EXPECT_EQ(s.global[1], 1u);

  // {250624, 1, 1} with no local size: coex picks one that leaves dimension 0 many groups.
  size_t flat[3] = {250624, 1, 1};
  ASSERT_TRUE(make_geometry(3, nullptr, flat, nullptr, 1024, g));
  EXPECT_EQ(g.split_dim(), 0u);
  EXPECT_GE(g.groups_along_split(), 64u);

  // Rows of one group each along dimension 1, several along dimension 2: dimension 2.
  size_t cube[3] = {32, 4, 6}, cube_local[3] = {8, 4, 2};
  ASSERT_TRUE(make_geometry(3, nullptr, cube, cube_local, 1024, g));
  EXPECT_EQ(g.split_dim(), 2u);
  EXPECT_EQ(g.groups_along_split(), 3u);
  EXPECT_EQ(g.groups_per_slice(), 4u);

  // {n, 1} with one group of dimension 0 too: nothing to split, the last dimension is named.
  size_t tiny[2] = {64, 1}, tiny_local[2] = {64, 1};
  ASSERT_TRUE(make_geometry(2, nullptr, tiny, tiny_local, 1024, g));
  EXPECT_EQ(g.split_dim(), 1u);
  EXPECT_EQ(g.groups_along_split(), 1u);
}

TEST(LaunchGeometry, RespectsTheDeviceLimit) {
  size_t global[1] = {1 << 16};
  LaunchGeometry g;
  ASSERT_TRUE(make_geometry(1, nullptr, global, nullptr, 16, g));
  EXPECT_LE(g.local[0], 16u);
}

TEST(LaunchGeometry, RejectsInvalidLaunches) {
  size_t global[3] = {16, 16, 16}, zero[3] = {0, 16, 16}, local0[3] = {0, 1, 1};
  LaunchGeometry g;
  EXPECT_FALSE(make_geometry(0, nullptr, global, nullptr, 64, g));
  EXPECT_FALSE(make_geometry(4, nullptr, global, nullptr, 64, g));
  EXPECT_FALSE(make_geometry(1, nullptr, nullptr, nullptr, 64, g));
  EXPECT_FALSE(make_geometry(3, nullptr, zero, nullptr, 64, g));
  EXPECT_FALSE(make_geometry(1, nullptr, global, local0, 64, g));
}

TEST(LaunchGeometry, SubLaunchesTileTheSplitDimensionWithOffsets) {
  size_t offset[2] = {3, 10}, global[2] = {32, 100}, local[2] = {8, 4};  // 25 groups along dim 1
  LaunchGeometry g;
  ASSERT_TRUE(make_geometry(2, offset, global, local, 1024, g));
  uint64_t cuts[] = {0, 7, 8, 25};
  size_t covered = 0;
  for (int i = 0; i < 3; ++i) {
    LaunchGeometry s = sub_launch(g, cuts[i], cuts[i + 1]);
    EXPECT_EQ(s.offset[1], 10 + covered);
    EXPECT_EQ(s.global[0], 32u);
    EXPECT_EQ(s.offset[0], 3u);
    covered += s.global[1];
  }
  EXPECT_EQ(covered, 100u);
}

TEST(LaunchGeometry, NonUniformLastGroupIsPartial) {
  size_t global[1] = {100}, local[1] = {16};  // 7 groups, the last of 4 items
  LaunchGeometry g;
  ASSERT_TRUE(make_geometry(1, nullptr, global, local, 1024, g));
  EXPECT_EQ(g.groups_along_split(), 7u);
  EXPECT_EQ(sub_launch(g, 6, 7).global[0], 4u);
  EXPECT_EQ(sub_launch(g, 6, 7).offset[0], 96u);
}

// Pieces of a chunk narrower than PoCL's small grid (exec/split_device_thread.cpp runs a wide chunk as
// such pieces, for the work-group functions compiled ahead, unless it is at offset zero with the app's
// local size).
TEST(LaunchGeometry, SmallGridPiecesStayUnderTheWidth) {
  size_t global = 1 << 20, local = 256;
  LaunchGeometry g;
  ASSERT_TRUE(make_geometry(1, nullptr, &global, &local, 1024, g));
  const LaunchGeometry wide = sub_launch(g, 256, 768);               // 131,072 work-items at offset 65,536
  EXPECT_EQ(small_grid_groups(wide, 65535), 255u);                   // 65,280 work-items a piece
  EXPECT_EQ(small_grid_groups(sub_launch(g, 0, 64), 65535), 64u);    // narrow already: whole
  EXPECT_EQ(small_grid_groups(sub_launch(g, 1, 257), 65535), 255u);  // 65,536: wide
}

TEST(LaunchGeometry, SmallGridPiecesAtOffsetZeroWhereCoexPickedTheLocalSize) {
  size_t global = 1 << 20, local = 256;
  LaunchGeometry given, picked;
  ASSERT_TRUE(make_geometry(1, nullptr, &global, &local, 1024, given));
  ASSERT_TRUE(make_geometry(1, nullptr, &global, nullptr, 256, picked));
  ASSERT_FALSE(picked.local_given);
  ASSERT_EQ(picked.local[0], 256u);
  // The app's local size: the launch run whole on home compiles the wide function at offset zero, so
  // that chunk stays whole.
  EXPECT_EQ(small_grid_groups(sub_launch(given, 0, 512), 65535), 512u);
  EXPECT_EQ(small_grid_groups(sub_launch(picked, 0, 512), 65535), 255u);
  // At a nonzero offset pieces either way (PoCL compiled no wide function there).
  EXPECT_EQ(small_grid_groups(sub_launch(given, 512, 1024), 65535), 255u);
}

TEST(LaunchGeometry, SmallGridPiecesAtTheWidthOfOneGroup) {
  size_t global = 1 << 20, local = 65535, offset = 65535;
  LaunchGeometry g;
  ASSERT_TRUE(make_geometry(1, &offset, &global, &local, 1 << 20, g));
  EXPECT_EQ(small_grid_groups(g, 65535), g.groups_along_split());  // one group is wide: whole
  local = 65534;
  ASSERT_TRUE(make_geometry(1, &offset, &global, &local, 1 << 20, g));
  EXPECT_EQ(small_grid_groups(g, 65535), 1u);
  // The second piece of a chunk at offset zero is at a nonzero offset, and a small grid.
  ASSERT_TRUE(make_geometry(1, nullptr, &global, nullptr, 256, g));
  const uint64_t per = small_grid_groups(g, 65535);
  const LaunchGeometry second = sub_launch(g, per, 2 * per);
  EXPECT_FALSE(second.at_offset_zero());
  EXPECT_LT(second.global[0], 65535u);
}

TEST(LaunchGeometry, SmallGridPiecesWhereAnyDimensionsOffsetIsNonzero) {
  // Split along dimension 1 at offset zero there, the app's offset nonzero along dimension 0: not the
  // app's function at offset zero.
  size_t offset[2] = {8, 0}, global[2] = {16, 1 << 20}, local[2] = {16, 16};
  LaunchGeometry g;
  ASSERT_TRUE(make_geometry(2, offset, global, local, 1024, g));
  ASSERT_EQ(g.split_dim(), 1u);
  EXPECT_FALSE(sub_launch(g, 0, 8192).at_offset_zero());
  EXPECT_EQ(small_grid_groups(sub_launch(g, 0, 8192), 65535), 4095u);
  offset[0] = 0;
  ASSERT_TRUE(make_geometry(2, offset, global, local, 1024, g));
  EXPECT_TRUE(sub_launch(g, 0, 8192).at_offset_zero());
  EXPECT_EQ(small_grid_groups(sub_launch(g, 0, 8192), 65535), 8192u);
}

TEST(LaunchGeometry, SmallGridPiecesOfOneItemGroupsStayUnderTheLimit) {
  size_t global = 1 << 20, local = 1;  // PoCL's limit is 65,535: a piece of 65,535 items is wide
  LaunchGeometry g;
  ASSERT_TRUE(make_geometry(1, nullptr, &global, &local, 1024, g));
  EXPECT_EQ(small_grid_groups(sub_launch(g, 1, 200001), 65535), 65534u);
}

TEST(LaunchGeometry, SmallGridPiecesWholeWhereAnotherDimensionOrOneGroupIsWide) {
  size_t global[2] = {1 << 17, 64}, local[2] = {256, 1};
  LaunchGeometry g;
  ASSERT_TRUE(make_geometry(2, nullptr, global, local, 1024, g));
  const LaunchGeometry rows = sub_launch(g, 8, 40);  // dimension 0 is 131,072 wide in every piece
  EXPECT_EQ(small_grid_groups(rows, 65535), 32u);
  size_t big_local = 100000, big_global = 300000;  // one group wider than the width: whole
  ASSERT_TRUE(make_geometry(1, nullptr, &big_global, &big_local, 1 << 20, g));
  EXPECT_EQ(small_grid_groups(sub_launch(g, 1, 3), 65535), 2u);
}
