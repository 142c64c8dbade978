// What the launcher's commands share: their options (`--name VALUE`, `--name=VALUE`, flags,
// `--help`, `--` ending the options) and the strict check of the configuration the library will read.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "config/settings.h"

namespace coex::launcher {

struct OptionSpec {
  std::string name;  // without the leading "--"
  bool takes_value;
};

struct ParsedOptions {
  std::vector<std::pair<std::string, std::string>> options;  // in the order given; flags have ""
  Args operands;                                             // what is not an option, in order
  bool help = false;                                         // --help or -h among the options
  std::string error;                                         // non-empty: the one line to print
};

// `stop_at_operand`: the first word that is not an option ends the options, and it and every word
// after it are operands (`coex run APP --flag`: --flag belongs to APP). Otherwise options and operands
// may mix. "--" always ends the options.
ParsedOptions parse_options(const Args& args, const std::vector<OptionSpec>& specs, bool stop_at_operand);

// `path` made absolute against the current directory, so that it names the same file for an app that
// changes directory.
std::string absolute_path(const std::string& path);

// The settings the library will read in a process started with this environment (COEX_CONFIG and
// COEX_<NAME>), read by the library's own code. On any error: prints the errors and the line
// "<stopped>: fix the configuration above ...", and returns nothing.
std::optional<config::LoadResult> checked_settings(const std::string& stopped);

}  // namespace coex::launcher
