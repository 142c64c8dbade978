#pragma once

#include <string>
#include <vector>

namespace coex::launcher {

using Args = std::vector<std::string>;

int run_app(const Args& args);             // coex run [options] [--] app args...
int list_devices(const Args& args);        // coex devices [--config FILE]
int print_report(const Args& args);        // coex report FILE
int print_settings_doc(const Args& args);  // coex settings-doc [--policy-params]
int simulate(const Args& args);            // coex simulate SCENARIO.json
int serve_analyses(const Args& args);      // coex analysis-process: started by libcoex.so, not by users
int compile_ahead(const Args& args);       // coex compile-ahead REQUEST: started by libcoex.so, not by users

// help.cpp: `coex --help`, and `coex COMMAND --help` (false: no such command).
std::string general_help();
bool command_help(const std::string& command, std::string& text);

}  // namespace coex::launcher
