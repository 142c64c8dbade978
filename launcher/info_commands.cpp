#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "commands.h"
#include "config/settings.h"
#include "sched/simulator.h"

namespace coex::launcher {

// print_report: report_command.cpp.

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
