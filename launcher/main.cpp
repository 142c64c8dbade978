// coex: the launcher. `coex run -- ./app` runs an unmodified OpenCL program with coex loaded.
#include <cstdio>
#include <cstring>
#include <string>

#include "commands.h"

namespace {

constexpr const char* kHelp = R"(coex: run an unmodified OpenCL program on every device of the machine at once.

Usage:
  coex run [--config FILE] [--policy NAME] [--report FILE] [--trace FILE] [--layer|--preload] -- APP [ARGS...]
      Runs APP with coex loaded as an OpenCL loader layer (OPENCL_LAYERS), or by LD_PRELOAD when
      the loader APP links does not support layers (CUDA's libOpenCL, say: a line says so), or
      always with --preload, never with --layer. The options set COEX_CONFIG,
      COEX_POLICY, COEX_REPORT and COEX_TRACE; any other setting can be given as COEX_<NAME>
      (see `coex settings-doc`).
  coex devices
      Lists every OpenCL device the loader sees, with the index and name the report uses, and
      whether COEX_DEVICES (or the config's "devices") selects it.
  coex report FILE
      Prints a report written through COEX_REPORT as a table.
  coex simulate SCENARIO.json
      Runs a scheduling policy against modelled devices and a modelled kernel (config/scenarios/).
  coex settings-doc
      Prints the reference of every setting (docs/settings.md).
  coex --help
)";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    std::fputs(kHelp, stdout);
    return argc < 2 ? 2 : 0;
  }
  std::string command = argv[1];
  coex::launcher::Args args(argv + 2, argv + argc);
  if (command == "run") return coex::launcher::run_app(args);
  if (command == "devices") return coex::launcher::list_devices(args);
  if (command == "report") return coex::launcher::print_report(args);
  if (command == "simulate") return coex::launcher::simulate(args);
  if (command == "settings-doc") return coex::launcher::print_settings_doc(args);
  std::fprintf(stderr, "coex: unknown command \"%s\" (run, devices, report, simulate, settings-doc; see coex --help)\n",
               command.c_str());
  return 2;
}
