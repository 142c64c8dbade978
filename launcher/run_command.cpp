#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "devices/loader_probe.h"
#include "exec/kept_analyses.h"
#include "exec/kept_binaries.h"
#include "exec/policy_binding.h"
#include "kernel/analysis_process.h"
#include "kernel/build_id.h"
#include "options.h"

namespace coex::launcher {
namespace {

std::string own_executable() {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) return {};
  path[n] = '\0';
  return path;
}

std::string directory_of_executable() {
  const std::string self = own_executable();
  return self.empty() ? "." : self.substr(0, self.rfind('/'));
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

// Layer mode needs a loader that reads OPENCL_LAYERS; without one the app would
// run bare, silently.
bool loader_ignores_layers(const std::string& app) {
  std::string loader = devices::opencl_loader_of(app);
  if (loader.empty()) return false;  // unknown: layer mode, as asked
  auto has_layers = devices::file_contains(loader, "OPENCL_LAYERS");
  if (!has_layers || *has_layers) return false;
  std::fprintf(stderr,
               "coex run: %s loads the OpenCL loader %s, which does not support layers (OPENCL_LAYERS); loading coex "
               "with LD_PRELOAD instead\n",
               app.c_str(), loader.c_str());
  return true;
}

// The analysis process, started now for the app (kernel/analysis_process.h, start_for_exec): libclang
// loads while the app starts, and the app's first launch that could be split waits less for the
// analysis or not at all. Not where the library would start none (settings analysis_process,
// disable), nor where this build of coex kept analyses: the run is then likely a later one, which
// reads its programs' analyses and asks libclang nothing (exec/kept_analyses.h, analyses_kept).
// Not where the process may run on one core either: the load (15 ms from cached files, 170 ms from the
// disk, on the development machine: docs/kernel-analysis.md) would hold up the app's start there, and
// the app may use one device (nothing to analyse), which the launcher cannot know.
void start_analysis_process(const config::Settings& settings, const std::string& layer) {
  cpu_set_t cores;
  CPU_ZERO(&cores);
  const bool one_core = sched_getaffinity(0, sizeof cores, &cores) == 0 && CPU_COUNT(&cores) < 2;
  if (settings.disable || !settings.analysis_process || one_core) return;
  const std::string self = own_executable();
  if (self.empty()) return;
  const std::string kept = exec::kept_binaries_folder(settings.binary_cache, exec::history_path(settings));
  if (exec::analyses_kept_in(exec::analyses_folder(kept, kernel::file_build_id(layer), true, kernel::own_build_id())))
    return;
  const std::string socket = kernel::analysis_process::start_for_exec(self);
  if (!socket.empty())
    setenv(kernel::analysis_process::kInheritedVar, socket.c_str(), 1);
  else
    unsetenv(kernel::analysis_process::kInheritedVar);  // one this launcher inherited is closed
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
  const std::optional<config::LoadResult> loaded = checked_settings("coex run: " + app + " not started");
  if (!loaded) return 2;
  std::string layer = find_layer();
  if (layer.empty()) {
    std::fprintf(stderr, "coex run: cannot find libcoex.so beside %s or in %s/%s\n", directory_of_executable().c_str(),
                 directory_of_executable().c_str(), COEX_LAYER_DIR_FROM_LAUNCHER);
    return 2;
  }
  bool preload = mode == Mode::Preload || (mode == Mode::Auto && loader_ignores_layers(app));
  const char* var = preload ? "LD_PRELOAD" : "OPENCL_LAYERS";
  const char* existing = getenv(var);
  std::string value = existing && *existing ? layer + ":" + existing : layer;
  setenv(var, value.c_str(), 1);
  start_analysis_process(loaded->settings, layer);
  std::vector<char*> argv;
  for (const std::string& word : parsed.operands) argv.push_back(const_cast<char*>(word.c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  std::perror(("coex run: cannot start " + app).c_str());
  return 127;
}

}  // namespace coex::launcher
