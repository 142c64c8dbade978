#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "commands.h"
#include "devices/loader_probe.h"
#include "options.h"

namespace coex::launcher {
namespace {

std::string directory_of_executable() {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) return ".";
  path[n] = '\0';
  std::string s(path);
  return s.substr(0, s.rfind('/'));
}

// libcoex.so beside the launcher (the build tree), or where the install puts it relative to the
// launcher (../lib from bin/): never an absolute path fixed at build time, so that an install tree
// moved or copied elsewhere (a package's staging root, a container layer) uses its own library.
std::string find_layer() {
  std::string dir = directory_of_executable();
  for (const std::string& candidate : {dir + "/libcoex.so", dir + "/" COEX_LAYER_DIR_FROM_LAUNCHER "/libcoex.so"}) {
    char resolved[PATH_MAX];
    if (access(candidate.c_str(), R_OK) == 0 && realpath(candidate.c_str(), resolved)) return resolved;
  }
  return {};
}

// Puts `path` first in the list held by the environment variable `var`.
void prepend(const char* var, const std::string& path) {
  const char* existing = getenv(var);
  setenv(var, (existing && *existing ? path + ":" + existing : path).c_str(), 1);
}

// How coex goes into the app in auto mode. Layer mode needs a loader that reads OPENCL_LAYERS; without
// one the app would run bare, silently. Where the app's own loader cannot (CUDA's), a loader that can
// (setting `loader`, else the system's) is preloaded in its place, its soname standing for the app's
// libOpenCL.so.1, and coex is its layer: beside an H200, benchmarks/stencil1d's 20,000 launches took
// 0.153 s that way against 0.170 s with coex preloaded (bare 0.095 s; docs/gpu.md). Where no such
// loader serves, coex itself is preloaded. Returns the loader to preload ("" for none) and sets
// `preload_coex`.
std::string loader_for_layers(const std::string& app, const std::string& setting, bool& preload_coex) {
  preload_coex = false;
  std::string loader = devices::opencl_loader_of(app);
  if (loader.empty()) return {};  // unknown: layer mode, as asked
  auto has_layers = devices::file_contains(loader, "OPENCL_LAYERS");
  if (!has_layers || *has_layers) return {};
  std::string stand_in = setting == "none" ? "" : setting.empty() ? devices::system_loader_with_layers() : setting;
  char resolved[PATH_MAX];
  if (!stand_in.empty() && realpath(stand_in.c_str(), resolved) &&
      devices::file_contains(resolved, "OPENCL_LAYERS").value_or(false) &&
      devices::opencl_loader_of(app, resolved) == resolved) {
    std::fprintf(stderr,
                 "coex run: %s loads the OpenCL loader %s, which does not support layers (OPENCL_LAYERS); running it "
                 "with %s in its place (LD_PRELOAD), coex as its layer (setting loader)\n",
                 app.c_str(), loader.c_str(), resolved);
    return resolved;
  }
  std::fprintf(stderr,
               "coex run: %s loads the OpenCL loader %s, which does not support layers (OPENCL_LAYERS), and %s; "
               "loading coex with LD_PRELOAD instead\n",
               app.c_str(), loader.c_str(),
               setting == "none"  ? "the setting loader is none"
               : stand_in.empty() ? "no loader of the system's does"
                                  : ("neither can " + stand_in + " for it (setting loader)").c_str());
  preload_coex = true;
  return {};
}

}  // namespace

int run_app(const Args& args) {
  ParsedOptions parsed = parse_options(
      args,
      {{"config", true}, {"policy", true}, {"report", true}, {"trace", true}, {"layer", false}, {"preload", false}},
      true);
  if (!parsed.error.empty()) {
    std::fprintf(stderr, "coex run: %s (see coex run --help)\n", parsed.error.c_str());
    return 2;
  }
  if (parsed.help) {
    std::string text;
    command_help("run", text);
    std::fputs(text.c_str(), stdout);
    return 0;
  }
  if (parsed.operands.empty()) {
    std::fprintf(stderr, "coex run: no program given: coex run [OPTIONS] [--] APP [ARGS...] (see coex run --help)\n");
    return 2;
  }
  enum class Mode { Auto, Layer, Preload } mode = Mode::Auto;
  for (const auto& [name, value] : parsed.options) {
    if (name == "layer") mode = Mode::Layer;
    if (name == "preload") mode = Mode::Preload;
    // Paths absolute: the app may change directory before coex writes its files at exit.
    if (name == "config") setenv("COEX_CONFIG", absolute_path(value).c_str(), 1);
    if (name == "policy") setenv("COEX_POLICY", value.c_str(), 1);
    if (name == "report") setenv("COEX_REPORT", absolute_path(value).c_str(), 1);
    if (name == "trace") setenv("COEX_TRACE", absolute_path(value).c_str(), 1);
  }
  const std::string& app = parsed.operands.front();
  const auto loaded = checked_settings("coex run: " + app + " not started");
  if (!loaded) return 2;
  std::string layer = find_layer();
  if (layer.empty()) {
    std::fprintf(stderr, "coex run: cannot find libcoex.so beside %s or in %s/%s\n", directory_of_executable().c_str(),
                 directory_of_executable().c_str(), COEX_LAYER_DIR_FROM_LAUNCHER);
    return 2;
  }
  bool preload = mode == Mode::Preload;
  if (mode == Mode::Auto)
    if (const std::string stand_in = loader_for_layers(app, loaded->settings.loader, preload); !stand_in.empty())
      prepend("LD_PRELOAD", stand_in);
  prepend(preload ? "LD_PRELOAD" : "OPENCL_LAYERS", layer);
  std::vector<char*> argv;
  for (const std::string& word : parsed.operands) argv.push_back(const_cast<char*>(word.c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  std::perror(("coex run: cannot start " + app).c_str());
  return 127;
}

}  // namespace coex::launcher
