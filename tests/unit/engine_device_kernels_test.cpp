// How long a launch waits for home's build of the rewritten program (exec/device_kernels.h).
#include <gtest/gtest.h>

#include "exec/device_kernels.h"
#include "model/records.h"

using coex::exec::home_build_wait;
using coex::exec::kLongestBuildWait;

TEST(HomeBuildWait, TwiceTheAppsBuildOrTheSettingWhicheverIsLonger) {
  coex::model::ProgramRecord program;
  program.app_build_seconds = 0.03;
  EXPECT_DOUBLE_EQ(home_build_wait(0.1, program, false), 0.1);
  EXPECT_DOUBLE_EQ(home_build_wait(0.0, program, false), 0.06);
  program.app_build_seconds = 0.8;  // a longer wait is not known to pay before the launch ran
  EXPECT_DOUBLE_EQ(home_build_wait(0.0, program, false), kLongestBuildWait);
}

TEST(HomeBuildWait, ABuildThatReadsItsBinaryForItsKindIsWaitedForWithTheRead) {
  coex::model::ProgramRecord program;
  program.app_build_seconds = 0.089;
  // The read of the app's program's binary measured: twice the build and that read.
  program.app_binary_read_seconds = 0.132;
  EXPECT_DOUBLE_EQ(home_build_wait(0.0, program, true), 2 * (0.089 + 0.132));
  // Beside no device of home's kind nothing is read: the build alone.
  EXPECT_DOUBLE_EQ(home_build_wait(0.0, program, false), 2 * 0.089);
  // Not read (the analysis had rewritten the program by the app's build's end): a read as long as the build.
  program.app_binary_read_seconds = 0;
  EXPECT_DOUBLE_EQ(home_build_wait(0.0, program, true), 4 * 0.089);
  program.app_build_seconds = 0.3;
  EXPECT_DOUBLE_EQ(home_build_wait(0.0, program, true), kLongestBuildWait);
}
