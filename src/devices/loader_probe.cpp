#include "devices/loader_probe.h"

#include <elf.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <vector>

extern char** environ;

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

// PT_INTERP of an ELF file whose identification was read: the dynamic linker it names.
template <typename Header, typename ProgramHeader>
std::string interpreter_of(std::ifstream& in) {
  Header header;
  in.seekg(0);
  if (!in.read(reinterpret_cast<char*>(&header), sizeof header) || header.e_phentsize != sizeof(ProgramHeader))
    return {};
  for (unsigned i = 0; i < header.e_phnum; ++i) {
    ProgramHeader ph;
    in.seekg(std::streamoff(header.e_phoff + i * sizeof ph));
    if (!in.read(reinterpret_cast<char*>(&ph), sizeof ph)) return {};
    if (ph.p_type != PT_INTERP || ph.p_filesz == 0 || ph.p_filesz > 4096) continue;
    std::string name(size_t(ph.p_filesz), '\0');
    in.seekg(std::streamoff(ph.p_offset));
    if (!in.read(name.data(), std::streamsize(name.size()))) return {};
    return std::string(name.c_str());  // up to its terminating NUL
  }
  return {};
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

std::string elf_interpreter(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char ident[EI_NIDENT] = {};
  if (!in.read(reinterpret_cast<char*>(ident), EI_NIDENT) || std::memcmp(ident, ELFMAG, SELFMAG) != 0) return {};
  if (ident[EI_CLASS] == ELFCLASS64) return interpreter_of<Elf64_Ehdr, Elf64_Phdr>(in);
  if (ident[EI_CLASS] == ELFCLASS32) return interpreter_of<Elf32_Ehdr, Elf32_Phdr>(in);
  return {};
}

std::string opencl_loader_of(const std::string& app) {
  std::string path = resolve_in_path(app);
  if (path.empty() || !is_executable_file(path)) return {};
  // The app's own dynamic linker lists what the app would load (`ld.so --list`, what ldd runs
  // through two shells: 10 ms a run against 1 ms). Not an ELF program with one: unknown.
  const std::string interpreter = elf_interpreter(path);
  const std::string base = interpreter.substr(interpreter.rfind('/') + 1);
  if (base.compare(0, 2, "ld") != 0 || base.find(".so") == std::string::npos || !is_executable_file(interpreter))
    return {};  // only a dynamic linker is run (ldd keeps a list of them too)
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return {};
  // Both ends above the standard descriptors, which the child's file actions rewire.
  for (int& fd : out)
    if (fd <= STDERR_FILENO) {
      const int moved = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
      close(fd);
      fd = moved;
    }
  if (out[0] < 0 || out[1] < 0) {
    for (int fd : out)
      if (fd >= 0) close(fd);
    return {};
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  // coex must not be loaded into the listing.
  std::vector<char*> env;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "LD_PRELOAD=", 11) != 0 && std::strncmp(*e, "OPENCL_LAYERS=", 14) != 0) env.push_back(*e);
  env.push_back(nullptr);
  std::string list_flag = "--list";
  char* argv[] = {const_cast<char*>(interpreter.c_str()), list_flag.data(), path.data(), nullptr};
  pid_t pid = -1;
  const int spawned = posix_spawn(&pid, interpreter.c_str(), &actions, nullptr, argv, env.data());
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  std::string output;
  char buffer[4096];
  for (ssize_t n; spawned == 0 && ((n = read(out[0], buffer, sizeof buffer)) > 0 || (n < 0 && errno == EINTR));)
    if (n > 0) output.append(buffer, size_t(n));
  close(out[0]);
  if (spawned != 0) return {};
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return opencl_loader_in_ldd_output(output);
}

}  // namespace coex::devices
