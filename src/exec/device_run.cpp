#include "exec/device_run.h"

namespace coex::exec {

void record_device_runs(const LaunchJob& job, const std::map<int, DeviceRun>& runs, report::LaunchRecord& record) {
  std::vector<ArgTier> tiers;
  for (const auto& [device, run] : runs) {
    record.bytes_minimal += run.lacked;
    record.bytes_by_step.home_to_host += run.bytes.home_to_host;
    record.bytes_by_step.host_to_devices += run.bytes.host_to_devices;
    record.bytes_by_step.devices_to_host += run.bytes.devices_to_host;
    record.bytes_by_step.host_to_home += run.bytes.host_to_home;
    merge_arg_tiers(tiers, run.tiers);
  }
  for (size_t i = 0; i < job.bindings.size() && i < tiers.size(); ++i) {
    if (job.bindings[i].kind != ArgBinding::Kind::Buffer) continue;
    // An argument the kernel never touches moves nothing: exactly what it needs.
    ArgTier tier = tiers[i] == ArgTier::None ? ArgTier::Exact : tiers[i];
    record.args.push_back({int(i), arg_tier_name(tier)});
  }
}

}  // namespace coex::exec
