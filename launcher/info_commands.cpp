#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "commands.h"
#include "config/fault_spec.h"
#include "config/settings.h"
#include "kernel/analysis_process.h"
#include "kernel/libclang_api.h"
#include "sched/sim_doc_tables.h"
#include "sched/simulator.h"

namespace coex::launcher {

// print_report: report_command.cpp.

int print_settings_doc(const Args& args) {
  if (args.empty()) {
    std::cout << config::settings_markdown();
    return 0;
  }
  if (args.size() == 1 && args[0] == "--policy-params") {
    std::cout << config::policy_params_markdown();
    return 0;
  }
  std::fprintf(stderr, "coex settings-doc: usage: coex settings-doc [--policy-params]\n");
  return 2;
}

int simulate(const Args& args) {
  if ((args.size() == 2 || args.size() == 3) && args[0] == "--doc-table") {
    std::string error;
    const std::string table = sched::doc_table(args[1], args.size() == 3 ? args[2] : "config/scenarios", &error);
    if (table.empty()) {
      std::fprintf(stderr, "coex simulate: %s\n", error.c_str());
      return 2;
    }
    std::cout << table;
    return 0;
  }
  if (args.size() != 1) {
    std::fprintf(stderr,
                 "coex simulate: usage: coex simulate SCENARIO.json (see config/scenarios/), or coex simulate "
                 "--doc-table NAME [SCENARIO_DIR]\n");
    return 2;
  }
  return sched::run_simulation(args[0], std::cout, std::cerr);
}

// The kernel analysis for an app's process (kernel/analysis_process.h), on the socket it handed over.
// _exit: nothing of the launcher's is left to flush, and a sanitizer's leak check at exit would only
// print into the app's stderr.
int serve_analyses(const Args& args) {
  if (!args.empty()) {
    std::fprintf(stderr, "coex %s: started by libcoex.so and coex run only; it takes no arguments\n",
                 kernel::analysis_process::kCommand);
    return 2;
  }
  // COEX_FAULT=slow_libclang (a testing aid): a slow start, libclang loaded three seconds late;
  // no_libclang: none loaded. From the environment the app's process handed down (a config file's
  // fault is the app's alone).
  const char* fault = std::getenv("COEX_FAULT");
  const auto spec = config::parse_fault_spec(fault ? fault : "", nullptr);
  const bool slow = spec && spec->kind == config::FaultSpec::Kind::SlowLibclang;
  if (spec && spec->kind == config::FaultSpec::Kind::NoLibclang)
    kernel::libclang::refuse_loads(kernel::libclang::kRefusedByFault);
  _exit(kernel::analysis_process::detach_and_serve(std::chrono::milliseconds(slow ? 3000 : 0)));
}

}  // namespace coex::launcher
