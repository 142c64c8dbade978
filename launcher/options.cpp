#include "options.h"

#include <limits.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace coex::launcher {

ParsedOptions parse_options(const Args& args, const std::vector<OptionSpec>& specs, bool stop_at_operand) {
  ParsedOptions parsed;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "--") {
      parsed.operands.insert(parsed.operands.end(), args.begin() + long(i) + 1, args.end());
      break;
    }
    if (word == "--help" || word == "-h") {
      parsed.help = true;
      continue;
    }
    // "-" alone names standard input by convention: an operand, as is anything not starting with '-'.
    if (word.size() < 2 || word[0] != '-') {
      if (stop_at_operand) {
        parsed.operands.insert(parsed.operands.end(), args.begin() + long(i), args.end());
        break;
      }
      parsed.operands.push_back(word);
      continue;
    }
    // Long options only: "--name" or "--name=value" (-h aside).
    const size_t equals = word.find('=');
    const std::string name =
        word.rfind("--", 0) == 0 ? word.substr(2, equals == std::string::npos ? equals : equals - 2) : "";
    const OptionSpec* spec = nullptr;
    for (const OptionSpec& s : specs)
      if (!name.empty() && s.name == name) spec = &s;
    if (!spec) {
      parsed.error = "unknown option \"" + word + "\"";
      return parsed;
    }
    if (!spec->takes_value) {
      if (equals != std::string::npos) {
        parsed.error = "--" + spec->name + " takes no value";
        return parsed;
      }
      parsed.options.emplace_back(spec->name, "");
      continue;
    }
    if (equals != std::string::npos) {
      parsed.options.emplace_back(spec->name, word.substr(equals + 1));
    } else if (i + 1 < args.size() && args[i + 1] != "--") {
      parsed.options.emplace_back(spec->name, args[++i]);
    } else {
      parsed.error = "--" + spec->name + " needs a value";
      return parsed;
    }
    if (parsed.options.back().second.empty()) {
      parsed.error = "--" + spec->name + " needs a value, not an empty one";
      return parsed;
    }
  }
  return parsed;
}

std::string absolute_path(const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  char cwd[PATH_MAX];
  return getcwd(cwd, sizeof(cwd)) ? std::string(cwd) + "/" + path : path;
}

std::optional<config::LoadResult> checked_settings(const std::string& stopped) {
  // Loaded into an app, the library can only turn itself off on a bad configuration and let the app run
  // unchanged (nothing else is possible under a bare OPENCL_LAYERS). The launcher runs before the app,
  // so it refuses instead: the same code reads the same variables the library will read.
  config::LoadResult loaded =
      config::load_settings([](const char* name) { return static_cast<const char*>(std::getenv(name)); });
  if (loaded.errors.empty()) return loaded;
  for (const std::string& error : loaded.errors) std::fprintf(stderr, "%s\n", error.c_str());
  std::fprintf(stderr, "%s: fix the configuration above (docs/settings.md lists every setting)\n", stopped.c_str());
  return std::nullopt;
}

}  // namespace coex::launcher
