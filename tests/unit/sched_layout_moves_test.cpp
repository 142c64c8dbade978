// Moves that pay: wp's layout between devices of one kind moves for the gain its moves have shown on
// the kernel and size (layout_may_move, StrackPolicy).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "launch_shapes.h"
#include "sched/history.h"
#include "sched/policy_factory.h"
#include "sched/strack_policy.h"

namespace coex::sched {
namespace {

// Four steady launches of 1 s, a move, the launch that pays it, then four launches of `after` s.
History::LayoutTrack judged_move(History::LayoutTrack track, double moving, double after) {
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(layout_may_move(track, 1.0));
  layout_moves(track);
  EXPECT_FALSE(layout_may_move(track, moving)) << "none while a move is judged";
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(layout_may_move(track, after));
  EXPECT_TRUE(layout_may_move(track, after)) << "judged";
  return track;
}

TEST(LayoutMoves, AMoveThatDoesNotPayDoublesTheGainTheNextMustPromise) {
  History::LayoutTrack track;
  EXPECT_DOUBLE_EQ(least_layout_gain(track), 0.05);
  track = judged_move(track, 1.5, 1.0);  // 0.5 s paid for nothing
  EXPECT_DOUBLE_EQ(least_layout_gain(track), 0.1);
  track = judged_move(track, 1.5, 0.99);  // 0.08 s over 8 launches, against 0.51 s
  EXPECT_DOUBLE_EQ(least_layout_gain(track), 0.2);
  for (int i = 0; i < 3; ++i) track = judged_move(track, 1.5, 1.0);
  EXPECT_DOUBLE_EQ(least_layout_gain(track), kMostLayoutGain);
}

TEST(LayoutMoves, AMoveThatPaysHalvesIt) {
  History::LayoutTrack track;
  track.least_gain = 0.4;
  track = judged_move(track, 1.3, 0.9);  // 0.8 s over 8 launches, against 0.4 s
  EXPECT_DOUBLE_EQ(least_layout_gain(track), 0.2);
  for (int i = 0; i < 4; ++i) track = judged_move(track, 1.3, 0.9);
  EXPECT_DOUBLE_EQ(least_layout_gain(track), 0.05);
}

TEST(LayoutMoves, LaunchesOfOneTimeTellNothing) {
  History::LayoutTrack track;
  track = judged_move(track, 1.0, 1.0);
  EXPECT_DOUBLE_EQ(least_layout_gain(track), 0.05);
}

// A launch where a device ran the kernel first (its compile in its time) neither judges a move nor
// starts one: a move judged by it would look dear.
TEST(LayoutMoves, ALaunchWithAFirstRunTellsNothing) {
  auto history = std::make_shared<History>();
  LaunchShape shape = launch_of_k(64);
  shape.device_kinds = {0, 0};
  History::LayoutTrack moved;
  moved.stage = History::LayoutTrack::Stage::kMoved;
  moved.before = 0.01;
  history->set_layout_track(shape.kernel_key, shape.global_size, moved);
  for (const bool first_run : {true, false}) {
    auto policy = make_policy("wp", PolicyParams{}, history, {});
    policy->begin_launch(shape, {0, 1}, 0);
    for (int d : {0, 1})
      while (auto c = policy->next_chunk(d, 0)) {
        ChunkTiming t{*c, 0, 1e-4 * static_cast<double>(c->groups())};
        t.first_run = first_run;
        policy->chunk_done(t);
      }
    policy->end_launch(first_run ? 0.5 : 0.02);
    const History::LayoutTrack track = history->layout_track(shape.kernel_key, shape.global_size);
    if (first_run) {
      EXPECT_EQ(track.stage, History::LayoutTrack::Stage::kMoved);
    } else {
      EXPECT_EQ(track.stage, History::LayoutTrack::Stage::kJudging);
      EXPECT_DOUBLE_EQ(track.moving, 0.02);
    }
  }
}

// Eight devices of one kind, three of them 1.8 times as slow at a time and which three changing every
// five launches (single-threaded PoCL devices whose threads share a core for a while, as on the device
// machine). Each launch takes its slowest device's time, and one that runs a new layout 0.4 ms more
// (the rows it moves, the footprints evaluated afresh). Not judged (layout_may_move always true), the
// layout moved at 44 of the 200 launches, 20 of them in the last 100, and the launches took 338 ms in
// all; judged, it moved at 4, none in the last 100, and they took 323 ms.
TEST(LayoutMoves, MovesThatChaseChangingPacesStop) {
  auto history = std::make_shared<History>();
  LaunchShape shape = launch_of_k(64);
  shape.device_kinds.assign(8, 0);
  const std::vector<int> devices{0, 1, 2, 3, 4, 5, 6, 7};
  auto pace = [](int launch, int d) {
    const int block = launch / 5;
    const bool slow = d == block % 8 || d == (block + 3) % 8 || d == (block + 5) % 8;
    return 1e-4 * (slow ? 1.8 : 1.0);
  };
  std::vector<uint64_t> last;
  int moves = 0, late_moves = 0;
  for (int launch = 0; launch < 200; ++launch) {
    auto policy = make_policy("wp", PolicyParams{}, history, {});
    policy->begin_launch(shape, devices, 0);
    std::vector<uint64_t> groups(devices.size(), 0);
    double end = 0;
    for (int d : devices) {
      double t = 0;
      while (auto c = policy->next_chunk(d, t)) {
        const double seconds = pace(launch, d) * static_cast<double>(c->groups());
        policy->chunk_done(ChunkTiming{*c, t, t + seconds});
        groups[size_t(d)] += c->groups();
        t += seconds;
      }
      end = std::max(end, t);
    }
    const bool moved = !last.empty() && groups != last;
    moves += moved;
    late_moves += moved && launch >= 100;
    policy->end_launch(moved ? end + 0.5 * 8e-4 : end);
    last = groups;
  }
  EXPECT_GT(least_layout_gain(history->layout_track(shape.kernel_key, shape.global_size)), kLeastLayoutGain);
  EXPECT_LE(late_moves, 2) << "of " << moves << " moves";
}

}  // namespace
}  // namespace coex::sched
