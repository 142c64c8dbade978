#include "devices/device_set.h"

#include <spdlog/spdlog.h>

#include "config/device_selector.h"

namespace coex::devices {
namespace {

template <typename T>
T device_info(const cl_icd_dispatch& cl, cl_device_id id, cl_device_info param, T fallback) {
  T value{};
  return cl.clGetDeviceInfo(id, param, sizeof(value), &value, nullptr) == CL_SUCCESS ? value : fallback;
}

template <typename Fn, typename Handle, typename Param>
std::string string_info(Fn fn, Handle handle, Param param) {
  size_t size = 0;
  if (fn(handle, param, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
  std::string text(size, '\0');
  fn(handle, param, size, text.data(), nullptr);
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

}  // namespace

bool is_pocl_remote(bool pocl_platform, const std::string& device_version) {
  // PoCL's remote driver keeps the server device's name and type and appends its own build hash to
  // CL_DEVICE_VERSION: "OpenCL 3.0 PoCL HSTR: <server's hash> HSTR: pocl-remote: <name>" (PoCL 6.0,
  // seen here; docs/remote.md).
  return pocl_platform && device_version.find("HSTR: pocl-remote:") != std::string::npos;
}

std::string Device::type_name() const {
  if (type & CL_DEVICE_TYPE_GPU) return "GPU";
  if (type & CL_DEVICE_TYPE_CPU) return "CPU";
  return "ACCELERATOR";
}

DeviceSet::DeviceSet(const cl_icd_dispatch& cl, const std::string& selector) : cl_(cl) {
  cl_uint num_platforms = 0;
  if (cl.clGetPlatformIDs(0, nullptr, &num_platforms) != CL_SUCCESS) num_platforms = 0;
  std::vector<cl_platform_id> platforms(num_platforms);
  if (num_platforms) cl.clGetPlatformIDs(num_platforms, platforms.data(), nullptr);
  for (cl_platform_id platform : platforms) {
    cl_uint count = 0;
    if (cl.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count) != CL_SUCCESS) continue;
    std::vector<cl_device_id> ids(count);
    cl.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, ids.data(), nullptr);
    std::string platform_name = string_info(cl.clGetPlatformInfo, platform, CL_PLATFORM_NAME);
    for (cl_device_id id : ids) {
      Device d;
      d.index = int(devices_.size());
      d.platform = platform;
      d.id = id;
      d.platform_name = platform_name;
      d.name = string_info(cl.clGetDeviceInfo, id, CL_DEVICE_NAME);
      d.driver_version = string_info(cl.clGetDeviceInfo, id, CL_DRIVER_VERSION);
      d.type = device_info<cl_device_type>(cl, id, CL_DEVICE_TYPE, CL_DEVICE_TYPE_DEFAULT);
      d.compute_units = device_info<cl_uint>(cl, id, CL_DEVICE_MAX_COMPUTE_UNITS, 1);
      d.clock_mhz = device_info<cl_uint>(cl, id, CL_DEVICE_MAX_CLOCK_FREQUENCY, 0);
      d.max_work_group_size = device_info<size_t>(cl, id, CL_DEVICE_MAX_WORK_GROUP_SIZE, 1);
      if (cl.clGetDeviceInfo(id, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof(d.max_work_item_sizes), d.max_work_item_sizes,
                             nullptr) != CL_SUCCESS)
        d.max_work_item_sizes[0] = d.max_work_item_sizes[1] = d.max_work_item_sizes[2] = 0;
      d.base_address_align_bits = device_info<cl_uint>(cl, id, CL_DEVICE_MEM_BASE_ADDR_ALIGN, 8);
      d.global_memory = device_info<cl_ulong>(cl, id, CL_DEVICE_GLOBAL_MEM_SIZE, 0);
      // PoCL 5 names that driver's devices "cpu-minimal-...".
      d.remote = is_pocl_remote(d.is_pocl(), string_info(cl.clGetDeviceInfo, id, CL_DEVICE_VERSION));
      // A remote device keeps its server device's name, but commands reach it through the remote
      // driver, which has its own event handling: the quirk is the local basic driver's.
      d.user_events_deadlock =
          d.is_pocl() && !d.remote && (d.name.rfind("basic", 0) == 0 || d.name.rfind("cpu-minimal", 0) == 0);
      devices_.push_back(std::move(d));
    }
  }
  auto terms = config::parse_device_selector(selector, &selector_error_);
  for (auto& d : devices_) {
    config::SelectableDevice candidate{d.index, d.type_name(), d.platform_name, d.name};
    d.selected = terms && config::device_selected(*terms, candidate);
  }
  if (!terms) spdlog::error("COEX_DEVICES \"{}\": {}; no device selected", selector, selector_error_);
  profiles_ = make_profiles();
}

DeviceSet::~DeviceSet() = default;  // shadows live until the process ends: see Runtime::shutdown

std::vector<int> DeviceSet::selected() const {
  std::vector<int> out;
  for (const auto& d : devices_)
    if (d.selected) out.push_back(d.index);
  return out;
}

std::set<int> DeviceSet::named(const std::string& selector) const {
  std::set<int> out;
  const auto terms = config::parse_device_selector(selector, nullptr);
  if (!terms) return out;
  for (const auto& d : devices_)
    if (d.selected && config::device_selected(*terms, {d.index, d.type_name(), d.platform_name, d.name}))
      out.insert(d.index);
  return out;
}

int DeviceSet::index_of(cl_device_id id) const {
  for (const auto& d : devices_)
    if (d.id == id) return d.index;
  return -1;
}

std::vector<report::ReportDevice> DeviceSet::report_entries() const {
  std::lock_guard lock(mutex_);
  std::vector<report::ReportDevice> out;
  for (const auto& d : devices_) {
    bool home = std::find(homes_.begin(), homes_.end(), d.index) != homes_.end();
    if (d.selected || home) out.push_back({d.index, d.name, d.platform_name, d.type_name(), home, d.remote});
  }
  return out;
}

bool DeviceSet::note_home(int index) {
  const uint64_t bit = index >= 0 && index < 64 ? uint64_t{1} << index : 0;
  if (bit && (home_bits_.load(std::memory_order_acquire) & bit)) return false;
  std::lock_guard lock(mutex_);
  if (index < 0 || std::find(homes_.begin(), homes_.end(), index) != homes_.end()) return false;
  homes_.push_back(index);
  home_bits_.fetch_or(bit, std::memory_order_release);
  return true;
}

std::vector<sched::DeviceProfile> DeviceSet::make_profiles() const {
  std::vector<sched::DeviceProfile> out;
  for (const auto& d : devices_) {
    sched::DeviceProfile p;
    p.index = d.index;
    p.name = d.name;
    p.is_gpu = d.type & CL_DEVICE_TYPE_GPU;
    p.is_cpu = d.type & CL_DEVICE_TYPE_CPU;
    p.compute_units = d.compute_units;
    p.clock_mhz = d.clock_mhz;
    // A GPU needs several resident work-groups per compute unit to hide latency; 4 is a common
    // floor across vendors when nothing is measured yet.
    p.groups_per_cu_for_occupancy = p.is_gpu ? 4 : 1;
    p.remote = d.remote;
    out.push_back(p);
  }
  return out;
}

DeviceSet::Shadow& DeviceSet::ensure_shadow(int index) {
  Shadow* slot = nullptr;
  {
    std::lock_guard lock(mutex_);
    slot = &shadows_[index];  // map nodes stay put
  }
  Shadow& shadow = *slot;
  std::lock_guard lock(shadow.mutex);
  if (shadow.context || shadow.failed) return shadow;
  const Device& d = at(index);
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(d.platform), 0};
  cl_int err = CL_SUCCESS;
  shadow.context = cl_.clCreateContext(props, 1, &d.id, nullptr, nullptr, &err);
  if (shadow.context) shadow.queue = cl_.clCreateCommandQueue(shadow.context, d.id, 0, &err);
  if (!shadow.context || !shadow.queue) {
    spdlog::warn("device {} ({}): cannot create a context and queue (error {}); it gets no work", index, d.name, err);
    shadow.failed = true;
  }
  return shadow;
}

bool DeviceSet::has_shadow(int index) {
  Shadow* slot = nullptr;
  {
    std::lock_guard lock(mutex_);
    auto it = shadows_.find(index);
    if (it == shadows_.end()) return false;
    slot = &it->second;
  }
  std::lock_guard lock(slot->mutex);
  return slot->context || slot->failed;
}

cl_context DeviceSet::shadow_context(int index) { return ensure_shadow(index).context; }
cl_command_queue DeviceSet::shadow_queue(int index) { return ensure_shadow(index).queue; }

cl_command_queue DeviceSet::fetch_queue(int index) {
  Shadow& shadow = ensure_shadow(index);
  std::lock_guard lock(shadow.mutex);
  if (shadow.fetch_queue || !shadow.context) return shadow.fetch_queue;
  cl_int err = CL_SUCCESS;
  shadow.fetch_queue = cl_.clCreateCommandQueue(shadow.context, at(index).id, 0, &err);
  if (!shadow.fetch_queue) spdlog::warn("device {}: cannot create a second queue (error {})", index, err);
  return shadow.fetch_queue;
}

cl_command_queue DeviceSet::home_queue(cl_context app_context, cl_device_id device, HomeQueue use) {
  std::lock_guard lock(mutex_);
  auto key = std::make_tuple(app_context, device, use);
  auto it = home_queues_.find(key);
  if (it != home_queues_.end()) return it->second;
  cl_int err = CL_SUCCESS;
  // The queue holds its context (OpenCL 3.0, 5.1: the context is deleted once it and every object
  // attached to it are released): no retain of coex's own.
  cl_command_queue queue = cl_.clCreateCommandQueue(app_context, device, 0, &err);
  if (!queue) spdlog::warn("cannot create a queue in the app's context (error {})", err);
  home_queues_[key] = queue;
  return queue;
}

void DeviceSet::release_home_queues(cl_context app_context) {
  std::vector<cl_command_queue> queues;
  {
    std::lock_guard lock(mutex_);
    for (auto it = home_queues_.begin(); it != home_queues_.end();) {
      if (std::get<0>(it->first) == app_context) {
        if (it->second) queues.push_back(it->second);
        it = home_queues_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (cl_command_queue queue : queues) {
    cl_.clFinish(queue);
    cl_.clReleaseCommandQueue(queue);
  }
}

}  // namespace coex::devices
