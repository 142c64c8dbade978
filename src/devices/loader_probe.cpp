#include "devices/loader_probe.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <iterator>
#include <sstream>

namespace coex::devices {
namespace {

bool is_executable_file(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111);
}

std::string resolve_in_path(const std::string& app) {
  if (app.find('/') != std::string::npos) return app;
  const char* path = getenv("PATH");
  std::stringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':'))
    if (!dir.empty() && is_executable_file(dir + "/" + app)) return dir + "/" + app;
  return {};
}

// Single quotes around a path for the shell.
std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string opencl_loader_in_ldd_output(const std::string& ldd_output) {
  std::stringstream lines(ldd_output);
  std::string line;
  while (std::getline(lines, line)) {
    // "\tlibOpenCL.so.1 => /usr/lib/x86_64-linux-gnu/libOpenCL.so.1
    // (0x00007f...)"
    size_t name = line.find("libOpenCL.so");
    size_t arrow = line.find("=> ");
    if (name == std::string::npos || arrow == std::string::npos || arrow < name) continue;
    size_t begin = arrow + 3;
    size_t end = line.find(" (", begin);
    std::string path = line.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    if (!path.empty() && path[0] == '/') return path;
  }
  return {};
}

std::optional<bool> file_contains(const std::string& path, const std::string& text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return bytes.find(text) != std::string::npos;
}

std::string opencl_loader_of(const std::string& app) {
  std::string path = resolve_in_path(app);
  if (path.empty() || !is_executable_file(path)) return {};
  // ldd runs the dynamic linker in tracing mode; coex must not be loaded into
  // it.
  std::string command = "env -u LD_PRELOAD -u OPENCL_LAYERS ldd " + quoted(path) + " 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return {};
  std::string output;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
  pclose(pipe);
  return opencl_loader_in_ldd_output(output);
}

}  // namespace coex::devices
