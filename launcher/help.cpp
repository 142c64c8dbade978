// The launcher's help: `coex --help` lists the commands, `coex COMMAND --help` describes one.
#include <algorithm>
#include <string>

#include "commands.h"

namespace coex::launcher {
namespace {

struct CommandHelp {
  const char* name;
  const char* usage;    // one line, after "coex "
  const char* summary;  // one line for the list of `coex --help`
  const char* details;  // the rest of `coex COMMAND --help`
};

const CommandHelp kCommands[] = {
    {"run", "run [OPTIONS] [--] APP [ARGS...]", "run APP with coex loaded",
     R"(Runs APP with coex loaded as an OpenCL loader layer (OPENCL_LAYERS), or by LD_PRELOAD when the
OpenCL loader APP links does not support layers (CUDA's libOpenCL, say: a line says so). Without
"--", the first word that is not an option starts APP's command line.

Before APP starts, the configuration is checked (the --config file and every COEX_<NAME> variable,
by the code the library uses): on an error coex run prints it and exits with status 2, and APP does
not run. (Loaded by a bare OPENCL_LAYERS or LD_PRELOAD, coex cannot stop the app: it turns itself
off and the app runs unchanged.)

Options (each also as --name=VALUE):
  --config FILE    the settings file (COEX_CONFIG); default: the embedded config/default.json
  --policy NAME    the scheduling policy (COEX_POLICY): auto, static, boyer, ...
  --report FILE    write the JSON report here at exit (COEX_REPORT); `coex report FILE` prints it
  --trace FILE     write a Chrome/Perfetto trace here at exit (COEX_TRACE)
  --layer          always load coex as a layer (OPENCL_LAYERS)
  --preload        always load coex by LD_PRELOAD
  -h, --help       this help
Any other setting is a COEX_<NAME> variable: `coex settings-doc` lists them.
The exit status is APP's; 2 for a usage or configuration error, 127 when APP cannot be started.
)"},
    {"devices", "devices [--config FILE]", "list the OpenCL devices and the ones a run would use",
     R"(Lists every OpenCL device the loader sees, with the index the report and COEX_DEVICES use, and
shows what a run with the same configuration would do: which device is the app's own (home) device,
and which devices a launch there would be split across. It reads the configuration a run reads
(--config, COEX_CONFIG, COEX_DEVICES and every other COEX_<NAME>) and, like `coex run`, exits with
status 2 on a configuration error.

The home device is the one the app creates its queue on, so it depends on the app. coex devices
assumes the usual choice: the first device of the first platform (the first entry of
clGetPlatformIDs, then of clGetDeviceIDs).

Options (each also as --name=VALUE):
  --config FILE    the settings file (COEX_CONFIG)
  -h, --help       this help
)"},
    {"report", "report [--html OUT.html [--trace TRACE]] REPORT",
     "print a report written through --report (COEX_REPORT)",
     R"(Prints a report written through `coex run --report FILE` (or COEX_REPORT) as tables: what was
split, across which devices, and why the rest was not, with a line on what each reason means. A file
that is not a coex report (a trace, a config, a report of a newer coex) is refused with exit status 2.

Options (each also as --name=VALUE):
  --html OUT.html  write one self-contained page instead: the devices, each kernel's shares and reasons,
                   and a timeline of the devices drawn from the trace
  --trace TRACE    the trace (COEX_TRACE) of the same run, for the timeline; default: the trace the
                   report names, when it is still there
  -h, --help       this help
)"},
    {"simulate", "simulate SCENARIO.json", "run a scheduling policy against modelled devices",
     R"(Runs a scheduling policy against modelled devices and a modelled kernel, and prints one JSON line
per run (config/scenarios/ holds examples; docs/schedulers.md describes the simulator).

Options:
  --doc-table NAME [SCENARIO_DIR]
                   print the table NAME of docs/schedulers.md, from the shipped scenarios in
                   SCENARIO_DIR (default: config/scenarios, run from the repository root)
  -h, --help       this help
)"},
    {"settings-doc", "settings-doc [--policy-params]", "print the reference of every setting",
     R"(Prints the reference of every setting, its COEX_<NAME> variable, type and default, as Markdown
(docs/settings.md is this output).

Options:
  --policy-params  print only the table of the policies' parameters instead (the settings that
                   tune the scheduling policies: the table in docs/schedulers.md, "Parameters")
  -h, --help       this help
)"},
};

}  // namespace

std::string general_help() {
  std::string text = "coex " COEX_VERSION
                     ": run an unmodified OpenCL program on every device of the machine at once.\n\n"
                     "Usage:\n";
  for (const CommandHelp& c : kCommands) {
    std::string line = std::string("  coex ") + c.usage;
    line.resize(std::max<size_t>(line.size() + 2, 44), ' ');
    text += line + c.summary + "\n";
  }
  text +=
      "  coex --version                            print the version\n"
      "  coex --help, coex COMMAND --help          this help, or a command's\n\n"
      "Examples:\n"
      "  coex run ./app args                       run ./app across every device\n"
      "  coex run --report r.json -- ./app && coex report r.json\n"
      "  COEX_DEVICES=0,1 coex devices             what a run with that selection would use\n";
  return text;
}

bool command_help(const std::string& command, std::string& text) {
  for (const CommandHelp& c : kCommands) {
    if (command != c.name) continue;
    text = std::string("Usage: coex ") + c.usage + "\n\n" + c.details;
    return true;
  }
  return false;
}

}  // namespace coex::launcher
