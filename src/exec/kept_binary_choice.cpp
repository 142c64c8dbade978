#include "exec/kept_binary_choice.h"

#include <algorithm>

#include "config/settings.h"
#include "exec/pocl_compiles.h"
#include "exec/policy_binding.h"
#include "exec/shared_binaries.h"

namespace coex::exec {
namespace {

// The folder of kept binaries (setting binary_cache), or "" for none.
std::string kept_folder_of(Services& services) {
  const config::Settings& settings = services.settings();
  return kept_binaries_folder(settings.binary_cache, history_path(settings));
}

// The lowest index among the selected devices of `device`'s kind, and whether it is the only one.
int lowest_of_kind(Services& services, int device, bool& alone) {
  const devices::DeviceSet& set = services.devices();
  int lowest = device;
  alone = true;
  for (int other : set.selected()) {
    if (other == device || !set.at(other).same_kind(set.at(device))) continue;
    alone = false;
    lowest = std::min(lowest, other);
  }
  return lowest;
}

}  // namespace

std::string own_build_options(const devices::Device& d, const std::string& options, int device) {
  return d.is_pocl() ? options + " -DCOEX_BUILD_FOR_DEVICE=" + std::to_string(device) : options;
}

int home_of(Services& services, const model::ProgramRecord& program) {
  if (!program.context_record || program.context_record->devices.size() != 1) return -1;
  return services.devices().index_of(program.context_record->devices.front());
}

KeptBinary kept_binary_for(Services& services, const devices::Device& d, int device, int home,
                           const std::string& source, const std::string& options) {
  bool alone = true;
  int keeper = lowest_of_kind(services, device, alone);
  if (home >= 0 && services.devices().at(home).same_kind(d)) keeper = home;
  KeptBinary kept{"",
                  {d.platform_name, d.name, d.driver_version, own_build_options(d, options, keeper), source},
                  keeper,
                  alone || !services.settings().share_device_binaries};
  if (!d.remote && keepable(kept.key)) kept.folder = kept_folder_of(services);
  return kept;
}

pocl_kernel_cache::ProgramTimes before_keepers_build(const devices::Device& d, const KeptBinary& kept, int device) {
  if (kept.keeper != device || !kept.keeper_writes || kept.folder.empty() || !compiles_in_this_process(d)) return {};
  const std::string root = pocl_kernel_cache::root();
  return root.empty() ? pocl_kernel_cache::ProgramTimes{} : pocl_kernel_cache::programs_touched(root);
}

bool keeper_reads_binary(const cl_icd_dispatch& cl, const devices::Device& d, cl_program program,
                         const pocl_kernel_cache::ProgramTimes& before) {
  if (!compiles_in_this_process(d)) return true;  // no compile in the read here
  const std::string root = pocl_kernel_cache::root();
  const std::string hash = root.empty() ? "" : pocl_kernel_cache::program_touched_since(root, before);
  if (hash.empty()) return false;  // no cache, or no folder found: the read may compile
  const std::vector<std::string> kernels = program_kernel_names(cl, program);
  if (kernels.empty()) return false;
  return std::all_of(kernels.begin(), kernels.end(), [&](const std::string& kernel) {
    return pocl_kernel_cache::folder_named_as_kernel(kernel) && pocl_kernel_cache::has_generic(root, hash, kernel);
  });
}

}  // namespace coex::exec
