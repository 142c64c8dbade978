// coex devices: the devices the loader sees, and what a run with the same configuration would do
// with them.
#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "api/libopencl_table.h"
#include "commands.h"
#include "devices/device_set.h"
#include "options.h"

namespace coex::launcher {
namespace {

// The device an app takes when it asks for the first platform and that platform's first device: what
// most programs (the test apps here among them) do. coex cannot know an app's choice before the app
// creates its queue, so this is the assumption `coex devices` states.
constexpr int kAssumedHome = 0;

struct RunOutlook {
  std::vector<int> split_across;  // empty: no launch is split
  const char* reason = nullptr;   // then the report's not_split reason
  const char* remedy = nullptr;   // and what would change it
};

// What the executor does with a launch on `home` (exec/launch_planner.cpp, exec/split_runner.cpp): the
// launch is split across the selected devices, which must be two at least; with home and the selection
// together a single device, that is single_device; with home left out and one other device selected,
// devices_unavailable. Launches that are not split run whole on home.
bool contains(const std::vector<int>& indices, int index) {
  return std::find(indices.begin(), indices.end(), index) != indices.end();
}

RunOutlook outlook(const std::vector<int>& selected, int home, size_t device_count) {
  RunOutlook o;
  o.remedy = "select at least two devices, the home device among them, with COEX_DEVICES or \"devices\"";
  if (selected.size() + (contains(selected, home) ? 0 : 1) < 2) {
    o.reason = "single_device";
    if (device_count < 2)
      o.remedy =
          "there is one device (PoCL can show the CPU as two: POCL_DEVICES=\"pthread pthread\", or \"cpu cpu\" on PoCL "
          "5)";
  } else if (selected.size() < 2) {
    o.reason = "devices_unavailable";
  } else {
    o.split_across = selected;
  }
  return o;
}

std::string index_list(const std::vector<int>& indices) {
  std::string text;
  for (size_t i = 0; i < indices.size(); ++i)
    text += (i == 0 ? "" : i + 1 == indices.size() ? " and " : ", ") + std::to_string(indices[i]);
  return text;
}

}  // namespace

int list_devices(const Args& args) {
  ParsedOptions parsed = parse_options(args, {{"config", true}}, false);
  if (parsed.error.empty() && !parsed.operands.empty())
    parsed.error = "takes no arguments, not \"" + parsed.operands.front() + "\"";
  if (!parsed.error.empty()) {
    std::fprintf(stderr, "coex devices: %s (see coex devices --help)\n", parsed.error.c_str());
    return 2;
  }
  if (parsed.help) {
    std::string text;
    command_help("devices", text);
    std::fputs(text.c_str(), stdout);
    return 0;
  }
  for (const auto& [name, value] : parsed.options)
    if (name == "config") setenv("COEX_CONFIG", absolute_path(value).c_str(), 1);
  auto loaded = checked_settings("coex devices: stopped");
  if (!loaded) return 2;

  cl_icd_dispatch table{};
  std::string error;
  if (!api::load_libopencl_table(table, &error)) {
    std::fprintf(stderr, "coex devices: %s\n", error.c_str());
    return 1;
  }
  devices::DeviceSet devices(table, loaded->settings.devices);
  if (devices.all().empty()) {
    std::printf("no OpenCL device found (is an ICD installed? e.g. Debian's pocl-opencl-icd)\n");
    return 1;
  }
  const int home = kAssumedHome;
  RunOutlook run = outlook(devices.selected(), home, devices.all().size());
  if (loaded->settings.disable)
    run = {{}, "disabled", "COEX_DISABLE (or \"disable\") is set: coex passes every call through"};
  // where: "remote" for a device served by PoCL's remote driver over the network (docs/remote.md).
  std::printf("%-5s %-4s %-4s %-11s %-6s %-28s %s\n", "index", "home", "use", "type", "where", "platform", "name");
  for (const auto& d : devices.all()) {
    // "use": the device runs part of a split launch, or, when nothing is split, home runs every launch.
    const bool used = run.split_across.empty() ? d.index == home : contains(run.split_across, d.index);
    std::printf("%-5d %-4s %-4s %-11s %-6s %-28s %s\n", d.index, d.index == home ? "yes" : "no", used ? "yes" : "no",
                d.type_name().c_str(), d.remote ? "remote" : "local", d.platform_name.c_str(), d.name.c_str());
  }
  std::printf(
      "home: device %d, the app's own device, assumed to be the first device of the first platform (the first "
      "entry of clGetPlatformIDs, then of clGetDeviceIDs); an app that picks another makes that one its home\n",
      home);
  std::printf("devices: \"%s\" (COEX_DEVICES, or \"devices\" in the config; settings from %s)\n",
              loaded->settings.devices.c_str(), loaded->source_description.c_str());
  if (!run.split_across.empty()) {
    std::printf(
        "a run splits each launch on device %d across devices %s%s\n", home, index_list(run.split_across).c_str(),
        !contains(run.split_across, home) ? " (home is not selected: it runs only the launches that are not split)"
                                          : "");
  } else {
    std::printf("a run splits nothing (%s): %s\n", run.reason, run.remedy);
  }
  return 0;
}

}  // namespace coex::launcher
