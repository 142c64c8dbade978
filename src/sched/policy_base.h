// The bookkeeping every policy shares: per-device state of the current launch, the front of the
// unassigned range (or the devices' regions), ranges reserved for a device, the history, and the
// executor contract of policy.h (each device asks when idle, every group handed out once, nullopt when
// a device is done). A policy derives from PolicyBase and decides only sizes and reservations.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sched/history.h"
#include "sched/policy.h"
#include "sched/policy_params.h"

namespace coex::sched {

class PolicyBase : public Policy {
 public:
  PolicyBase(std::string name, const PolicyParams& params, std::shared_ptr<History> history,
             const std::vector<DeviceProfile>& profiles);

  std::string name() const override { return name_; }
  void begin_launch(const LaunchShape& shape, const std::vector<int>& devices, double now) override;
  std::optional<Chunk> next_chunk(int device, double now) override;
  void chunk_done(const ChunkTiming& timing) override;
  void end_launch(double now) override;
  std::vector<Chunk> take_abandoned() override;
  std::vector<int> eliminated() const override;
  // Only when hands_out_on_demand(): a DeviceState like begin_launch's.
  bool add_device(int device, double now) override;
  bool takes_late_devices() const override { return hands_out_on_demand(); }
  // The device gets nothing more; its reserved ranges go to whoever asks next (orphaned_).
  void device_taken_over(int device, double now) override;

 protected:
  struct DeviceState {
    int index = 0;
    bool finished = false;    // returned nullopt in this launch
    bool eliminated = false;  // gets nothing in this launch: does not pay
    bool taken_over = false;  // another device redoes its ranges (device_taken_over)
    std::optional<Chunk> running;
    double running_start = 0;
    std::vector<Chunk> reserved;  // ranges set aside for this device, handed out in order (a few)
    int completed = 0;
    uint64_t completed_groups = 0;
    double busy_seconds = 0;
    uint64_t last_size = 0;         // groups of the last chunk handed out
    std::vector<ChunkTiming> done;  // completed chunks of this launch, in order
  };

  enum class SpeedSource { kMeasured, kHistory, kSpec };

  // Hooks. choose_size: the device is idle and has nothing reserved; return how many groups to take
  // from the front (0: none; the device then is done unless reclaim() finds it work).
  virtual void on_begin(double now) { (void)now; }
  virtual uint64_t choose_size(DeviceState& device, double now) = 0;
  virtual std::optional<Chunk> reclaim(DeviceState& asker, double now) {
    (void)asker;
    (void)now;
    return std::nullopt;
  }
  virtual void on_chunk_done(DeviceState& device, const ChunkTiming& timing) {
    (void)device;
    (void)timing;
  }
  virtual void on_end(double now) { (void)now; }
  // Whether every chunk is sized when a device asks, from the front of what remains, and nothing is
  // reserved for a device ahead of its asking: then a device may join after begin_launch (add_device).
  virtual bool hands_out_on_demand() const { return false; }

  const PolicyParams& params() const { return params_; }
  const LaunchShape& shape() const { return shape_; }
  History& history() { return *history_; }
  const std::shared_ptr<History>& history_ptr() const { return history_; }
  const std::vector<DeviceProfile>& profiles() const { return profiles_; }
  const DeviceProfile& profile(int device) const;

  // Groups neither handed out nor reserved: [cursor, total), or what the regions hold.
  uint64_t remaining() const;
  // Sets aside the next `groups` groups for `device` (clamped to what it may take): from the front, or
  // from the front of its region.
  void reserve(int device, uint64_t groups);
  // Regions: what is not yet handed out becomes one range per device, `sizes[i]` groups for states()[i]
  // (the last takes what the sizes leave), so that a device's chunks lie together, where the next
  // launch's layout will want them, rather than interleaved with the others' (docs/schedulers.md,
  // "Regions"). A device takes its chunks, reserved or on demand, from the front of its own region;
  // once that is spent (or it has none: a device that joined late), from the back of the largest left.
  void set_regions(const std::vector<uint64_t>& sizes);
  // Whether the launch's devices are all of one kind by LaunchShape::device_kinds (as auto sets them
  // from the profiles; without kinds, as under a plain policy, they are not).
  bool devices_of_one_kind() const;
  void eliminate(int device);

  DeviceState* state(int device);
  std::vector<DeviceState>& states() { return states_; }  // in device-index order
  // Devices still taking part: neither finished nor eliminated.
  std::vector<DeviceState*> live();
  // Takes back the running chunk of `victim` (stuck-device rule): it is reported by take_abandoned()
  // and the victim gets no more work in this launch.
  std::optional<Chunk> abandon_running(DeviceState& victim);
  // Hands `chunk` to `asker` as its next chunk (used by reclaim()).
  Chunk hand_out(DeviceState& asker, const Chunk& chunk, double now);

  // Throughput of this launch, groups per second, over the device's last `window` chunks (0 = all).
  static double measured_throughput(const DeviceState& device, size_t window = 0);
  // One speed per device in `devices`, all in one unit: measured in this launch when every one has
  // completed a chunk, else the history's when it knows every one, else device info (relative only).
  std::vector<double> current_speeds(const std::vector<DeviceState*>& devices, size_t window,
                                     SpeedSource* source = nullptr);

 private:
  void add_state(int index);  // in device-index order, with a profile

  std::string name_;
  PolicyParams params_;
  std::shared_ptr<History> history_;
  std::vector<DeviceProfile> profiles_;
  LaunchShape shape_;
  std::vector<DeviceState> states_;
  // The chunk vectors of the states of launches before, emptied, for the next states to take over: a
  // launch then allocates none for its chunks (grown afresh at every launch they were a tenth of
  // auto's chunk calls over 15 devices: docs/performance.md, "The scheduler's work").
  struct SpareVectors {
    std::vector<ChunkTiming> done;
    std::vector<Chunk> reserved;
  };
  std::vector<SpareVectors> spare_vectors_;
  struct Region {
    int device = 0;
    uint64_t begin = 0, end = 0;  // the groups of it not yet handed out or reserved
  };
  // The region `device` draws from now: its own while it lasts, else the largest; nullptr when none
  // holds a group.
  Region* region_for(int device);
  // What `device` may take at once: the groups of its region_for, or all that remain without regions.
  uint64_t available(int device);
  // `size` groups (at most available(device)) for `device`, from where it draws.
  Chunk take(int device, uint64_t size);

  uint64_t cursor_ = 0;
  std::vector<Region> regions_;       // empty: one front for every device (cursor_)
  std::vector<Chunk> abandoned_;      // not yet collected
  std::vector<Chunk> abandoned_all_;  // this launch: chunk_done for these is ignored
  std::vector<Chunk> orphaned_;       // reserved for a device taken over: handed to any device that asks
};

}  // namespace coex::sched
