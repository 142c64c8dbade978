#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>

#include "api/libopencl_table.h"
#include "commands.h"
#include "config/settings.h"
#include "devices/device_set.h"
#include "report/report.h"
#include "sched/simulator.h"

namespace coex::launcher {

int list_devices(const Args&) {
  cl_icd_dispatch table{};
  std::string error;
  if (!api::load_libopencl_table(table, &error)) {
    std::fprintf(stderr, "coex devices: %s\n", error.c_str());
    return 1;
  }
  auto loaded = config::load_settings([](const char* name) { return static_cast<const char*>(std::getenv(name)); });
  for (const auto& e : loaded.errors) std::fprintf(stderr, "%s\n", e.c_str());
  devices::DeviceSet devices(table, loaded.settings.devices);
  if (devices.all().empty()) {
    std::printf("no OpenCL device found (is an ICD installed? e.g. Debian's pocl-opencl-icd)\n");
    return 1;
  }
  std::printf("%-5s %-4s %-11s %-28s %s\n", "index", "use", "type", "platform", "name");
  for (const auto& d : devices.all())
    std::printf("%-5d %-4s %-11s %-28s %s\n", d.index, d.selected ? "yes" : "no", d.type_name().c_str(),
                d.platform_name.c_str(), d.name.c_str());
  std::printf("devices selector: \"%s\" (COEX_DEVICES)\n", loaded.settings.devices.c_str());
  return 0;
}

int print_report(const Args& args) {
  if (args.size() != 1) {
    std::fprintf(stderr, "coex report: usage: coex report FILE\n");
    return 2;
  }
  std::ifstream in(args[0]);
  if (!in) {
    std::fprintf(stderr, "coex report: cannot read %s\n", args[0].c_str());
    return 1;
  }
  nlohmann::json report = nlohmann::json::parse(in, nullptr, false);
  if (report.is_discarded()) {
    std::fprintf(stderr, "coex report: %s is not valid JSON\n", args[0].c_str());
    return 1;
  }
  std::cout << report::format_report_table(report);
  return 0;
}

int print_settings_doc(const Args&) {
  std::cout << config::settings_markdown();
  return 0;
}

int simulate(const Args& args) {
  if (args.size() != 1) {
    std::fprintf(stderr, "coex simulate: usage: coex simulate SCENARIO.json (see config/scenarios/)\n");
    return 2;
  }
  return sched::run_simulation(args[0], std::cout, std::cerr);
}

}  // namespace coex::launcher
