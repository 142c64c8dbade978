// The devices coex can use: every device of every platform the loader sees, in platform order
// (the indices `coex devices` and the report show), and per device the shadow context and queue
// coex drives it through, created once and lazily.
#pragma once

#include <CL/cl_icd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "report/report.h"
#include "sched/policy.h"

namespace coex::devices {

struct Device {
  int index = 0;
  cl_platform_id platform = nullptr;
  cl_device_id id = nullptr;
  std::string name;
  std::string platform_name;
  std::string driver_version;
  cl_device_type type = 0;
  cl_uint compute_units = 1;
  cl_uint clock_mhz = 0;
  size_t max_work_group_size = 1;
  size_t max_work_item_sizes[3] = {0, 0, 0};  // 0: the driver did not say
  cl_uint base_address_align_bits = 8;        // sub-buffer origins must be multiples of this
  cl_ulong global_memory = 0;
  bool selected = true;
  // PoCL's "basic" driver ("cpu-minimal" in PoCL 5) deadlocks when a command waits on a user event (pocl/pocl#1177,
  // seen here): a split whose home is such a device runs synchronously, with no user event.
  bool user_events_deadlock = false;
  // Whether the driver notifies each command's event as it completes, so that a marker's completion bounds
  // the start of the command behind it (exec/home_launch_times.h): PoCL's local drivers but "basic", which
  // runs a flushed queue's commands in one go and notifies their events after (a marker before a launch of
  // 0.12 s was notified 3 us before the launch). Others are not known to: NVIDIA's callbacks came 5 ms late.
  bool notifies_as_commands_complete() const { return is_pocl() && !remote && !user_events_deadlock; }
  // Served by PoCL's remote driver (PoCL-R) from another machine, or another process (docs/remote.md):
  // every command crosses the network, and the device is gone when its server goes.
  bool remote = false;
  std::string type_name() const;  // "CPU", "GPU", "ACCELERATOR"
  // Whether a program binary built for this device serves `other` as well: the same platform, device
  // name and driver version, neither served by PoCL's remote driver (whose servers may differ).
  bool same_kind(const Device& other) const {
    return platform == other.platform && name == other.name && driver_version == other.driver_version && !remote &&
           !other.remote;
  }
  bool is_pocl() const { return platform_name == "Portable Computing Language"; }
};

// Whether a device of a PoCL platform (pocl_platform) with this CL_DEVICE_VERSION is served by
// PoCL's remote driver.
bool is_pocl_remote(bool pocl_platform, const std::string& device_version);

class DeviceSet {
 public:
  DeviceSet(const cl_icd_dispatch& cl, const std::string& selector);
  ~DeviceSet();

  const std::vector<Device>& all() const { return devices_; }
  const Device& at(int index) const { return devices_.at(size_t(index)); }
  std::vector<int> selected() const;
  // The selected devices that `selector` (config/device_selector.h, checked already) names; a selector
  // of only "!" terms names every device it does not exclude, "!all" none.
  std::set<int> named(const std::string& selector) const;
  int index_of(cl_device_id id) const;  // -1 when unknown
  // The devices of the report: the selected ones and every device that was some launch's home.
  std::vector<report::ReportDevice> report_entries() const;
  // Records that `index` is the home device of a launch; true the first time for that device.
  bool note_home(int index);
  // What the policies know of each device (made once: the planner reads it at every launch it plans).
  const std::vector<sched::DeviceProfile>& profiles() const { return profiles_; }
  const std::string& selector_error() const { return selector_error_; }

  // coex's own context and in-order queue on a device, for devices other than a launch's home.
  // Null on failure (logged once).
  cl_context shadow_context(int index);
  cl_command_queue shadow_queue(int index);
  // Whether the device's shadow context was made already (or failed): shadow_queue returns at once.
  bool has_shadow(int index);
  // A second in-order queue there, for reading results that only this device holds (resident results,
  // exec/resident_results.h) from any thread without waiting behind the device's own chunks.
  cl_command_queue fetch_queue(int index);
  // Held around each use of fetch_queue(index): PoCL's basic device deadlocks when two threads wait
  // on one queue.
  std::mutex& fetch_mutex(int index) { return ensure_shadow(index).fetch_mutex; }
  // coex's own in-order queue in the app's context, on the app's (home) device. Split launches use
  // the first; the app's own calls that bring bytes home (lazy home) the second, so that they never
  // wait behind another launch's chunks there; other devices' reads of bytes that no chunk of the
  // launch writes the third, so that they run while home computes (exec/home_backup.h).
  enum class HomeQueue { Splits, AppCalls, SideReads };
  cl_command_queue home_queue(cl_context app_context, cl_device_id device, HomeQueue use = HomeQueue::Splits);
  // Finishes and releases coex's queues in the app's context: the app has released the context and
  // every object of it (model::ContextRecord).
  void release_home_queues(cl_context app_context);

 private:
  struct Shadow {
    std::mutex mutex;  // held while it is made: devices make theirs side by side
    cl_context context = nullptr;
    cl_command_queue queue = nullptr;
    cl_command_queue fetch_queue = nullptr;  // made on first use
    std::mutex fetch_mutex;
    bool failed = false;
  };
  Shadow& ensure_shadow(int index);
  std::vector<sched::DeviceProfile> make_profiles() const;

  const cl_icd_dispatch& cl_;
  std::vector<Device> devices_;
  std::vector<sched::DeviceProfile> profiles_;
  std::string selector_error_;
  mutable std::mutex mutex_;
  std::map<int, Shadow> shadows_;
  std::map<std::tuple<cl_context, cl_device_id, HomeQueue>, cl_command_queue> home_queues_;
  std::vector<int> homes_;
  // homes_' indices under 64 as bits, read without the lock: note_home runs at every launch left on home.
  std::atomic<uint64_t> home_bits_{0};
};

}  // namespace coex::devices
