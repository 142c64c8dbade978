// How many `coex compile-ahead` processes may run at once where the setting leaves it to coex
// (exec/compile_ahead.h): the cores the PoCL CPU devices in use leave free, at least one, at most four.
#include <gtest/gtest.h>

#include "exec/compile_ahead.h"

namespace {

using coex::exec::compile_ahead::default_process_limit;

TEST(CompileAheadProcesses, TheCoresTheDevicesLeave) {
  EXPECT_EQ(default_process_limit(16, 8), 4u);   // eight single-threaded devices on 16 cores: capped
  EXPECT_EQ(default_process_limit(16, 14), 2u);  // a 4-thread device and ten single-threaded ones
  EXPECT_EQ(default_process_limit(4, 3), 1u);
}

TEST(CompileAheadProcesses, AtLeastOne) {
  EXPECT_EQ(default_process_limit(2, 2), 1u);   // two `basic` devices on two cores
  EXPECT_EQ(default_process_limit(2, 16), 1u);  // a threaded device wider than the machine's cores
  EXPECT_EQ(default_process_limit(0, 0), 1u);   // cores unknown
}

}  // namespace
