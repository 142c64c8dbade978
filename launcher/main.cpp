// coex: the launcher. `coex run ./app` runs an unmodified OpenCL program with coex loaded.
#include <cstdio>
#include <string>

#include "commands.h"

namespace {

struct Command {
  const char* name;
  int (*run)(const coex::launcher::Args&);
  // run, devices and report parse their own options, --help among them; the others take operands
  // only, so a --help anywhere before "--" asks for help.
  bool parses_help;
};

constexpr Command kCommands[] = {
    {"run", coex::launcher::run_app, true},
    {"devices", coex::launcher::list_devices, true},
    {"report", coex::launcher::print_report, true},
    {"simulate", coex::launcher::simulate, false},
    {"settings-doc", coex::launcher::print_settings_doc, false},
    {"analysis-process", coex::launcher::serve_analyses, false},  // libcoex.so's, not in the help
    {"compile-ahead", coex::launcher::compile_ahead, false},      // libcoex.so's, not in the help
};

int print_command_help(const std::string& command) {
  std::string text;
  if (!coex::launcher::command_help(command, text)) {
    std::fprintf(stderr, "coex: unknown command \"%s\" (see coex --help)\n", command.c_str());
    return 2;
  }
  std::fputs(text.c_str(), stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(coex::launcher::general_help().c_str(), stderr);
    return 2;
  }
  const std::string first = argv[1];
  if (first == "--help" || first == "-h" || first == "help") {
    if (argc > 2) return print_command_help(argv[2]);
    std::fputs(coex::launcher::general_help().c_str(), stdout);
    return 0;
  }
  if (first == "--version" || first == "version") {
    std::printf("coex %s\n", COEX_VERSION);
    return 0;
  }
  coex::launcher::Args args(argv + 2, argv + argc);
  for (const Command& command : kCommands) {
    if (first != command.name) continue;
    if (!command.parses_help) {
      for (const std::string& arg : args) {
        if (arg == "--") break;
        if (arg == "--help" || arg == "-h") return print_command_help(first);
      }
    }
    return command.run(args);
  }
  std::fprintf(stderr, "coex: unknown command \"%s\" (run, devices, report, simulate, settings-doc; see coex --help)\n",
               first.c_str());
  return 2;
}
