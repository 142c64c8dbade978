#include "exec/home_launch_times.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <iterator>
#include <mutex>
#include <vector>

#include "exec/executor.h"

namespace coex::exec {
namespace {

using Clock = std::chrono::steady_clock;

// Events whose callback came after the executor stopped (at exit): kept, not released, since a
// release from inside a callback may wait on the driver's notifier thread that runs it.
void keep_until_exit(cl_event event) {
  static std::mutex* mutex = new std::mutex();
  static std::vector<cl_event>* kept = new std::vector<cl_event>();  // reachable to the end
  std::lock_guard lock(*mutex);
  kept->push_back(event);
}

}  // namespace

struct HomeLaunchTimes::Timing {
  HomeLaunchTimes* owner;
  std::string key;
  Clock::time_point enqueued;
  std::shared_ptr<const std::atomic<bool>> alive;
  std::shared_ptr<std::atomic<bool>> recorded;
  uint64_t round;
  StartBound start;
};

struct HomeLaunchTimes::StartTiming {
  HomeLaunchTimes* owner;
  std::shared_ptr<const std::atomic<bool>> alive;
  StartBound start;
};

std::string home_launch_key(const std::string& kernel_key, uint64_t global_size) {
  return kernel_key + "@" + std::to_string(global_size);
}

// After the size, so that record_time still reads the work-items there.
std::string drained_home_key(const std::string& home_key) { return home_key + "/drained"; }

std::optional<double> HomeLaunchTimes::seconds(const std::string& key, int at_least) const {
  std::lock_guard lock(mutex_);
  auto it = measured_.find(key);
  if (it == measured_.end() || it->second.count == 0 || it->second.count < at_least) return std::nullopt;
  return it->second.shortest;
}

bool HomeLaunchTimes::wants_timing(const std::string& key) const {
  std::lock_guard lock(mutex_);
  auto it = measured_.find(key);
  return it == measured_.end() || it->second.timed < kTimedLaunches;
}

void HomeLaunchTimes::time(const std::string& key, cl_event event, std::chrono::steady_clock::time_point enqueued,
                           cl_event started) {
  uint64_t round = 0;
  {
    std::lock_guard lock(mutex_);
    Measured& m = measured_[key];
    ++m.timed;
    round = m.round;
  }
  StartBound start;
  if (started) {
    start = std::make_shared<std::atomic<Clock::rep>>(0);
    auto* start_timing = new StartTiming{this, alive_, start};
    if (cl_.clSetEventCallback(started, CL_COMPLETE, on_started, start_timing) != CL_SUCCESS) {
      delete start_timing;
      start.reset();
      std::lock_guard lock(mutex_);
      done_.push_back(started);
    }
  }
  auto recorded = std::make_shared<std::atomic<bool>>(false);
  if (cl_.clRetainEvent(event) == CL_SUCCESS) {
    std::lock_guard lock(pending_mutex_);
    pending_[key].push_back({event, enqueued, recorded, round, start});
  }
  auto* timing = new Timing{this, key, enqueued, alive_, recorded, round, start};
  if (cl_.clSetEventCallback(event, CL_COMPLETE, on_complete, timing) != CL_SUCCESS) {
    recorded->store(true);  // not timed: settle() must not time it late
    delete timing;
    std::lock_guard lock(mutex_);
    done_.push_back(event);
  }
}

void HomeLaunchTimes::not_timed(const std::string& key) {
  std::lock_guard lock(mutex_);
  ++measured_[key].timed;
}

void HomeLaunchTimes::renew(const std::string& key) {
  std::lock_guard lock(mutex_);
  auto it = measured_.find(key);
  if (it == measured_.end() || it->second.timed < kTimedLaunches) return;  // still being timed
  Measured& m = it->second;
  m.timed = 0;
  ++m.round;
  m.renewing = m.count > 0;
  m.fresh_count = 0;
}

// The marker's completion as its callback sees it: late by the callback's delay, which can only shorten
// the time measured from it (the launch then looks shorter: kept on home rather than split).
void CL_CALLBACK HomeLaunchTimes::on_started(cl_event event, cl_int status, void* user_data) {
  auto* timing = static_cast<StartTiming*>(user_data);
  if (*timing->alive) {
    if (status == CL_COMPLETE) timing->start->store(Clock::now().time_since_epoch().count(), std::memory_order_release);
    std::lock_guard lock(timing->owner->mutex_);
    timing->owner->done_.push_back(event);
  } else {
    keep_until_exit(event);
  }
  delete timing;
}

double HomeLaunchTimes::seconds_since_start(Clock::time_point enqueued, const StartBound& start,
                                            Clock::time_point end) {
  Clock::time_point from = enqueued;
  if (start)
    if (const Clock::rep ticks = start->load(std::memory_order_acquire))
      from = std::max(from, Clock::time_point(Clock::duration(ticks)));
  return std::chrono::duration<double>(end - std::min(from, end)).count();
}

void CL_CALLBACK HomeLaunchTimes::on_complete(cl_event event, cl_int status, void* user_data) {
  auto* timing = static_cast<Timing*>(user_data);
  if (*timing->alive) {
    double seconds = seconds_since_start(timing->enqueued, timing->start, Clock::now());
    const bool first = !timing->recorded->exchange(true);  // settle() may have recorded it
    timing->owner->record(timing->key, status == CL_COMPLETE && first ? std::optional<double>(seconds) : std::nullopt,
                          event, timing->round);
  } else {
    keep_until_exit(event);
  }
  delete timing;
}

void HomeLaunchTimes::record(const std::string& key, std::optional<double> seconds, cl_event event, uint64_t round) {
  if (seconds) record_time(key, *seconds, round);
  std::lock_guard lock(mutex_);
  done_.push_back(event);
}

void HomeLaunchTimes::record_time(const std::string& key, double seconds, uint64_t round) {
  std::lock_guard lock(mutex_);
  Measured& m = measured_[key];
  if (round != m.round) return;  // timed before a renew()
  if (m.renewing) {
    m.fresh_shortest = m.fresh_count ? std::min(m.fresh_shortest, seconds) : seconds;
    if (++m.fresh_count >= 2) {
      m.shortest = m.fresh_shortest;
      m.count = m.fresh_count;
      m.renewing = false;
    } else {
      m.shortest = std::min(m.shortest, seconds);
    }
  } else {
    m.shortest = m.count ? std::min(m.shortest, seconds) : seconds;
    ++m.count;
  }
  // The key is home_launch_key's: the kernel's key, '@', the work-items (a kernel's name, an
  // identifier, has no '@').
  const size_t at = key.rfind('@');
  const uint64_t items = at == std::string::npos ? 0 : std::strtoull(key.c_str() + at + 1, nullptr, 10);
  if (items) pace_[key.substr(0, at)] = seconds / double(items);
  version_.fetch_add(1, std::memory_order_acq_rel);
}

std::optional<double> HomeLaunchTimes::pace(const std::string& kernel_key) const {
  std::lock_guard lock(mutex_);
  auto it = pace_.find(kernel_key);
  if (it == pace_.end()) return std::nullopt;
  return it->second;
}

void HomeLaunchTimes::record_alone(const std::string& key, double seconds) {
  uint64_t round = 0;
  {
    std::lock_guard lock(mutex_);
    round = measured_[key].round;
  }
  record_time(key, seconds, round);
}

void HomeLaunchTimes::settle(const std::string& key) {
  std::lock_guard lock(pending_mutex_);
  auto of_key = pending_.find(key);
  if (of_key == pending_.end()) return;
  for (Pending& p : of_key->second) {
    if (p.recorded->load()) continue;
    cl_int status = CL_QUEUED;
    if (cl_.clGetEventInfo(p.event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr) != CL_SUCCESS)
      continue;
    if (status < 0) p.recorded->store(true);  // failed: no time
    if (status != CL_COMPLETE) continue;
    if (!p.recorded->exchange(true)) record_time(key, seconds_since_start(p.enqueued, p.start, Clock::now()), p.round);
  }
  drop_recorded_pending(of_key);
}

// In place: a program whose launches each have a size of their own (benchmarks/lu) times nearly every
// launch, and a new vector at each made this a tenth of coex's instructions in such a launch.
HomeLaunchTimes::PendingByKey::iterator HomeLaunchTimes::drop_recorded_pending(PendingByKey::iterator of_key) {
  std::vector<Pending>& pending = of_key->second;
  auto recorded = [](const Pending& p) { return p.recorded->load(); };
  auto kept = std::find_if(pending.begin(), pending.end(), recorded);
  if (kept == pending.end()) return std::next(of_key);
  for (auto it = kept; it != pending.end(); ++it) {
    if (recorded(*it))
      cl_.clReleaseEvent(it->event);
    else
      *kept++ = std::move(*it);
  }
  pending.erase(kept, pending.end());
  return pending.empty() ? pending_.erase(of_key) : std::next(of_key);
}

std::optional<double> HomeLaunchTimes::settled_seconds(const std::string& key, int at_least) {
  if (auto known = seconds(key, at_least)) return known;
  settle(key);
  return seconds(key, at_least);
}

bool HomeLaunchTimes::time_to_come(const std::string& key) {
  settle(key);
  std::lock_guard lock(pending_mutex_);
  auto of_key = pending_.find(key);
  return of_key != pending_.end() && std::any_of(of_key->second.begin(), of_key->second.end(),
                                                 [](const Pending& p) { return !p.recorded->load(); });
}

void HomeLaunchTimes::release_done() {
  {
    std::lock_guard lock(pending_mutex_);
    for (auto it = pending_.begin(); it != pending_.end();) it = drop_recorded_pending(it);
  }
  std::vector<cl_event> done;
  {
    std::lock_guard lock(mutex_);
    if (done_.empty()) return;
    done.swap(done_);
  }
  for (cl_event e : done) cl_.clReleaseEvent(e);
}

}  // namespace coex::exec
