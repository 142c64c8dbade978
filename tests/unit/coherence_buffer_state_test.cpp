// BufferState's lazy-home bookkeeping (coherence/buffer_state.h): what home lacks stays in the host
// copy until it is written home, and an app write never lets older bytes be written over it later.
#include <gtest/gtest.h>

#include <utility>

#include "coherence/buffer_state.h"

namespace coex::coherence {
namespace {

// A state whose host copy holds [0, 100) and whose home lacks [40, 60), as a lazy merge leaves it.
void left_lacking(BufferState& state) {
  state.host_valid().add({0, 100});
  state.home_lacks().add({40, 60});
  state.update_care();
}

TEST(BufferStateLazyHome, AnAppWriteWithNoSplitInFlightTakesItsRangeOutOfWhatHomeLacks) {
  BufferState state(100);
  left_lacking(state);
  state.app_wrote(50, 70);
  EXPECT_EQ(state.home_lacks(), (IntervalSet{{40, 50}}));
  EXPECT_EQ(state.host_valid(), (IntervalSet{{0, 50}, {70, 100}}));
}

TEST(BufferStateLazyHome, AnAppWriteDuringASplitForgetsItsRangeEverywhereAndAsksForHome) {
  BufferState state(100);
  left_lacking(state);
  uint64_t split = state.split_captured(nullptr);
  state.app_wrote(50, 70);
  // The handler brought [50, 60) home before the write: nothing older may be written over it.
  EXPECT_EQ(state.home_lacks(), (IntervalSet{{40, 50}}));
  EXPECT_EQ(state.host_valid(), (IntervalSet{{0, 50}, {70, 100}}));
  EXPECT_TRUE(state.home_wanted_by(split));  // the split ahead of the write ends with home complete
}

// Two splits on one in-order queue, then a read on it: only the second runs right before the read.
TEST(BufferStateLazyHome, OnOneInOrderQueueOnlyTheLastSplitBeforeTheReadWritesHome) {
  BufferState state(100);
  auto* queue = reinterpret_cast<cl_command_queue>(0x10);
  uint64_t first = state.split_captured(queue);
  uint64_t second = state.split_captured(queue);
  state.want_home(queue, true);
  EXPECT_FALSE(state.home_wanted_by(first));
  EXPECT_TRUE(state.home_wanted_by(second));
  state.split_released(first);
  state.split_released(second);
  EXPECT_FALSE(state.home_wanted_by(second));  // none in flight: nothing is wanted any more
}

TEST(BufferStateLazyHome, OnAnotherQueueOrOutOfOrderEverySplitInFlightWritesHome) {
  auto* queue = reinterpret_cast<cl_command_queue>(0x10);
  auto* other = reinterpret_cast<cl_command_queue>(0x20);
  for (auto [reader, in_order] : {std::pair{other, true}, std::pair{queue, false}}) {
    BufferState state(100);
    uint64_t first = state.split_captured(queue);
    state.split_captured(queue);
    state.want_home(reader, in_order);
    EXPECT_TRUE(state.home_wanted_by(first));
  }
  BufferState mixed(100);  // splits from two queues, then a read on one of them
  uint64_t first = mixed.split_captured(queue);
  mixed.split_captured(other);
  mixed.want_home(other, true);
  EXPECT_TRUE(mixed.home_wanted_by(first));
}

TEST(BufferStateLazyHome, StatesNeedCareWhileTheyLackBytesOrHaveSplitsInFlight) {
  ASSERT_FALSE(BufferState::any_needs_care());
  {
    BufferState state(100);
    uint64_t split = state.split_captured(nullptr);
    EXPECT_TRUE(BufferState::any_needs_care());
    state.split_released(split);
    EXPECT_FALSE(BufferState::any_needs_care());
    left_lacking(state);
    EXPECT_TRUE(BufferState::any_needs_care());
  }
  EXPECT_FALSE(BufferState::any_needs_care());  // gone with the state
}

TEST(BufferStateLazyHome, ASplitThatSawAnAppWriteForgetsWhatHomeLacked) {
  BufferState state(100);
  left_lacking(state);
  uint64_t start = state.generation();
  state.split_captured(nullptr);
  state.app_wrote(0, 10);
  // The merge wrote everything home (merge_lazily is false after an app write); then:
  state.home_lacks().clear();
  state.split_ended(start, 0, {});
  EXPECT_TRUE(state.home_lacks().empty());
  EXPECT_TRUE(state.host_valid().empty());
}

// The merge of a split that saw app writes of [0, 10) and [80, 90) failed to write home (a driver
// error): its results, device 1's [40, 60) (it holds [55, 60) alone) and device 2's [85, 95), stay
// where they are, less what the app wrote (data_moves.cpp, merge_changes); nothing else counts current
// outside home.
TEST(BufferStateLazyHome, ASplitWhoseMergeFailedAfterAnAppWriteKeepsItsResultsTheAppDidNotWrite) {
  BufferState state(100);
  state.app_wrote(20, 30);  // before the split: not among its app writes
  uint64_t start = state.generation();
  uint64_t split = state.split_captured(nullptr);
  state.app_wrote(0, 10);
  state.app_wrote(80, 90);
  EXPECT_EQ(state.app_written_since(start), (IntervalSet{{0, 10}, {80, 90}}));
  IntervalSet results{{40, 60}, {85, 95}};
  results.subtract(state.app_written_since(start));
  state.home_lacks() = results;
  state.host_valid().add({0, 55});
  state.host_valid().add({85, 95});
  state.shadow(1).valid.add({0, 100});
  state.shadow(1).sole.add({55, 60});
  state.shadow(2).valid.add({0, 100});  // before the launch: device 1 changed [40, 60) since
  state.split_ended(start, 0, {{1, {{40, 60}}}, {2, {{85, 95}}}});
  EXPECT_EQ(state.home_lacks(), (IntervalSet{{40, 60}, {90, 95}}));
  EXPECT_EQ(state.host_valid(), (IntervalSet{{40, 55}, {90, 95}}));
  EXPECT_EQ(state.shadow(1).valid, (IntervalSet{{40, 60}}));
  EXPECT_EQ(state.shadow(1).sole, (IntervalSet{{55, 60}}));
  EXPECT_EQ(state.shadow(2).valid, (IntervalSet{{90, 95}}));
  state.split_released(split);
  EXPECT_TRUE(state.app_written_since(0).empty()) << "forgotten once no split is in flight";
}

// An app that writes and launches without ever draining its queue: splits overlap, one always in
// flight. Each split still sees the writes since its own capture; older ones are let go as the
// splits before them end, so the writes kept stay as many as the splits in flight.
TEST(BufferStateLazyHome, AppWritesAreKeptOnlyAsLongAsASplitInFlightMayAskForThem) {
  BufferState state(1000);
  uint64_t previous = state.split_captured(nullptr);
  uint64_t previous_start = state.generation();
  for (uint64_t i = 0; i < 100; ++i) {
    state.app_wrote(i * 10, i * 10 + 5);
    const uint64_t start = state.generation();
    const uint64_t split = state.split_captured(nullptr);
    state.app_wrote(i * 10 + 5, i * 10 + 10);
    // The split before saw its own write after its capture, and the two of this round.
    EXPECT_EQ(state.app_written_since(previous_start), (IntervalSet{{i == 0 ? 0 : i * 10 - 5, i * 10 + 10}}));
    EXPECT_EQ(state.app_written_since(start), (IntervalSet{{i * 10 + 5, i * 10 + 10}}));
    state.split_released(previous);
    EXPECT_EQ(state.app_written_since(0), (IntervalSet{{i * 10 + 5, i * 10 + 10}}))
        << "only the write after the split still in flight is kept";
    previous = split;
    previous_start = start;
  }
  state.split_released(previous);
  EXPECT_TRUE(state.app_written_since(0).empty());
}

// Resident results: device 1 alone holds [40, 60) (exec/resident_results.h).
void left_on_device(BufferState& state) {
  state.host_valid().add({0, 40});
  state.host_valid().add({60, 100});
  state.home_lacks().add({40, 60});
  ShadowCopy& shadow = state.shadow(1);
  shadow.valid.add({0, 100});
  shadow.sole.add({40, 60});
  state.update_care();
}

// A split that read the buffer for its devices, then failed, with an app write of [50, 70) queued
// behind it: the bytes it copied there are the ones before the write. What home lacks (a lazy merge's
// [40, 50) and a device's resident [45, 50)) stays where it is; nothing else counts current outside home.
TEST(BufferStateLazyHome, ASplitEndedWithoutItsMergeAfterAnAppWriteKeepsOnlyWhatHomeLacks) {
  BufferState state(100);
  left_lacking(state);
  ShadowCopy& shadow = state.shadow(1);
  shadow.sole.add({45, 50});
  shadow.valid.add({45, 50});
  state.app_wrote(50, 70);
  state.host_valid().add({50, 100});  // the split's preparation read the old bytes from home
  state.shadow(1).valid.add({0, 40});
  state.shadow(1).valid.add({50, 70});
  state.keep_only_what_home_lacks();
  EXPECT_EQ(state.home_lacks(), (IntervalSet{{40, 50}}));
  EXPECT_EQ(state.host_valid(), (IntervalSet{{40, 50}}));
  EXPECT_EQ(state.shadow(1).valid, (IntervalSet{{45, 50}}));
  EXPECT_EQ(state.shadow(1).sole, (IntervalSet{{45, 50}}));
}

TEST(BufferStateResident, AnAppWriteTakesItsRangeOutOfWhatOnlyADeviceHolds) {
  BufferState state(100);
  left_on_device(state);
  EXPECT_TRUE(state.any_sole({{50, 51}}));
  EXPECT_FALSE(state.any_sole({{60, 100}}));
  state.app_wrote(50, 70);
  EXPECT_EQ(state.shadow(1).sole, (IntervalSet{{40, 50}}));
  EXPECT_EQ(state.shadow(1).valid, (IntervalSet{{0, 50}, {70, 100}}));
  EXPECT_EQ(state.home_lacks(), (IntervalSet{{40, 50}}));
}

TEST(BufferStateResident, AnotherWriterAtTheMergeEndsTheDevicesSoleCopyThereItsOwnWritesKeepIt) {
  BufferState state(100);
  left_on_device(state);
  const uint64_t generation = state.generation();
  // Home (device 0) wrote [45, 50) in place, device 1 itself wrote [55, 60) again, device 2 [58, 59).
  state.split_ended(generation, 0,
                    {{0, IntervalSet{{45, 50}}}, {1, IntervalSet{{55, 60}}}, {2, IntervalSet{{58, 59}}}});
  EXPECT_EQ(state.shadow(1).sole, (IntervalSet{{40, 45}, {50, 58}, {59, 60}}));
  EXPECT_EQ(state.shadow(1).valid, (IntervalSet{{0, 45}, {50, 58}, {59, 100}}));
}

}  // namespace
}  // namespace coex::coherence
