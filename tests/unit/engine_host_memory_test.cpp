#include <gtest/gtest.h>

#include "devices/host_memory.h"

using coex::devices::fresh_memory_gbs;
using coex::devices::fresh_memory_gbs_where_it_matters;

TEST(HostMemory, FreshMemoryIsMeasuredOnceAtSomePositiveSpeed) {
  const double gbs = fresh_memory_gbs();
  EXPECT_GT(gbs, 0.0);
  EXPECT_EQ(fresh_memory_gbs(), gbs);  // once: the same figure at every call
}

TEST(HostMemory, TheSettingStandsForTheMeasurementAndSmallMovesNeedNone) {
  // The setting, where given, whatever the moves.
  EXPECT_EQ(fresh_memory_gbs_where_it_matters(0.5, 1e-9, 0.01), 0.5);
  // Moves that stay under 10 ms even at a hundredth of the nominal speed: no measurement.
  EXPECT_EQ(fresh_memory_gbs_where_it_matters(0, 0.009, 0.01), 0.0);
  // Moves that could take 10 ms into slow fresh memory: measured.
  EXPECT_EQ(fresh_memory_gbs_where_it_matters(0, 0.01, 0.01), fresh_memory_gbs());
}
