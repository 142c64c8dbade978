#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "commands.h"
#include "devices/loader_probe.h"

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

// libcoex.so beside the launcher (build tree), in ../lib (an install prefix),
// or where CMake installed it.
std::string find_layer() {
  std::string dir = directory_of_executable();
  for (const std::string& candidate :
       {dir + "/libcoex.so", dir + "/../lib/libcoex.so", dir + "/../lib/x86_64-linux-gnu/libcoex.so",
        std::string(COEX_INSTALLED_LAYER)}) {
    char resolved[PATH_MAX];
    if (access(candidate.c_str(), R_OK) == 0 && realpath(candidate.c_str(), resolved)) return resolved;
  }
  return {};
}

std::string absolute(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  char cwd[PATH_MAX];
  return getcwd(cwd, sizeof(cwd)) ? std::string(cwd) + "/" + path : path;
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

}  // namespace

int run_app(const Args& args) {
  enum class Mode { Auto, Layer, Preload } mode = Mode::Auto;
  size_t i = 0;
  for (; i < args.size() && args[i] != "--"; ++i) {
    const std::string& option = args[i];
    auto value = [&](const char* var, bool path) -> bool {
      if (i + 1 >= args.size() || args[i + 1] == "--") {
        std::fprintf(stderr, "coex run: %s needs a value\n", option.c_str());
        return false;
      }
      std::string v = args[++i];
      setenv(var, (path ? absolute(v) : v).c_str(), 1);
      return true;
    };
    bool ok = true;
    if (option == "--config")
      ok = value("COEX_CONFIG", true);
    else if (option == "--policy")
      ok = value("COEX_POLICY", false);
    else if (option == "--report")
      ok = value("COEX_REPORT", true);
    else if (option == "--trace")
      ok = value("COEX_TRACE", true);
    else if (option == "--preload")
      mode = Mode::Preload;
    else if (option == "--layer")
      mode = Mode::Layer;
    else {
      std::fprintf(stderr, "coex run: unknown option \"%s\" (see coex --help)\n", option.c_str());
      return 2;
    }
    if (!ok) return 2;
  }
  if (i + 1 >= args.size()) {
    std::fprintf(stderr, "coex run: no program given: coex run [options] -- APP [ARGS...]\n");
    return 2;
  }
  std::string layer = find_layer();
  if (layer.empty()) {
    std::fprintf(stderr, "coex run: cannot find libcoex.so beside %s or in %s\n", directory_of_executable().c_str(),
                 COEX_INSTALLED_LAYER);
    return 2;
  }
  bool preload = mode == Mode::Preload || (mode == Mode::Auto && loader_ignores_layers(args[i + 1]));
  const char* var = preload ? "LD_PRELOAD" : "OPENCL_LAYERS";
  const char* existing = getenv(var);
  std::string value = existing && *existing ? layer + ":" + existing : layer;
  setenv(var, value.c_str(), 1);
  std::vector<char*> argv;
  for (size_t k = i + 1; k < args.size(); ++k) argv.push_back(const_cast<char*>(args[k].c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  std::perror(("coex run: cannot start " + args[i + 1]).c_str());
  return 127;
}

}  // namespace coex::launcher
