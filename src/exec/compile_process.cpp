#include "exec/compile_process.h"

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "config/settings.h"
#include "devices/device_set.h"
#include "exec/exit_guard.h"
#include "exec/pocl_kernel_cache.h"
#include "exec/shared_binaries.h"
#include "exec/shared_first_runs.h"
#include "kernel/analysis_process.h"
#include "kernel/helper_process.h"
#include "report/trace.h"

namespace coex::exec::compile_process {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kMostFamilies = 64;  // binaries kept: a program rebuilt over and over keeps no more

struct Families {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<const std::vector<unsigned char>>> binaries;
};
Families& families() {
  static auto* f = new Families;  // reachable to the end: devices' threads may outlive statics
  return *f;
}

std::shared_ptr<const std::vector<unsigned char>> family_binary(const std::string& family) {
  Families& f = families();
  std::lock_guard lock(f.mutex);
  auto it = f.binaries.find(family);
  return it == f.binaries.end() ? nullptr : it->second;
}

// The driver of PoCL's that compiles a command's function at its submission, where `d` is one of its
// devices (named by it, as device_set.cpp tells it): "basic", named "cpu-minimal" from PoCL 4 on. The
// "pthread" ("cpu") driver compiles as the command runs, which the process never lets happen. "" for
// another device.
std::string submit_compiling_driver(const devices::Device& d) {
  if (!d.is_pocl() || d.remote) return "";
  for (const char* driver : {"cpu-minimal", "basic"})
    if (d.name.rfind(driver, 0) == 0) return driver;
  return "";
}

// Whether the setting has the functions compiled apart: `auto` where the machine has a core beyond
// the threads of the selected PoCL CPU devices (one for a "basic" device, its compute units for
// another), so that the compile runs beside them instead of in their time.
bool wanted(Services& services) {
  const std::string& setting = services.settings().compile_apart;
  if (setting != "auto") return setting == "always";
  static const bool spare_core = [&services] {
    unsigned busy = 0;
    for (int index : services.devices().selected()) {
      const devices::Device& d = services.devices().at(index);
      if (d.is_pocl() && !d.remote && (d.type & CL_DEVICE_TYPE_CPU))
        busy += submit_compiling_driver(d).empty() ? d.compute_units : 1;
    }
    return std::thread::hardware_concurrency() > busy;
  }();
  return spare_core;
}

// The executable once found (analysis_process::find_executable: beside libcoex.so, or installed).
const std::string& executable() {
  static const std::string path = kernel::analysis_process::find_executable();
  return path;
}

// Writes the binary where the process reads it (and removes it); "" on failure.
std::string write_binary(const std::vector<unsigned char>& binary) {
  std::string path = (std::filesystem::temp_directory_path() / "coex-pocl-compile-XXXXXX").string();
  const int fd = ::mkstemp(path.data());
  if (fd < 0) return "";
  size_t done = 0;
  while (done < binary.size()) {
    const ssize_t n = ::write(fd, binary.data() + done, binary.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += size_t(n);
  }
  ::close(fd);
  if (done == binary.size()) return path;
  ::unlink(path.c_str());
  return "";
}

// Once the process has ended (its end of `pipe_end` closed, or kMostSeconds and a margin passed): the
// devices waiting for its function copy it, or compile it where it did not.
void await_end(int pipe_end, std::string root, std::string hash, std::string key, Function f) {
  const auto deadline = Clock::now() + std::chrono::seconds(kMostSeconds + 5);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) break;
    pollfd p{pipe_end, POLLIN, 0};
    const int ready = ::poll(&p, 1, int(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) break;
    char byte;
    const ssize_t n = ::read(pipe_end, &byte, 1);
    if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) break;  // ended: nothing is ever written
  }
  ::close(pipe_end);
  end_compile(key, pocl_kernel_cache::has_variant(root, hash, f.kernel, f.local, false));
}

// One process for `f`, announced under `key` already (ended here where it does not start).
bool start_one(Services& services, int device, const std::string& driver, const std::string& root,
               const std::string& hash, const std::vector<unsigned char>& binary, const std::string& key,
               const Function& f) {
  const auto started = Clock::now();
  const std::string file = write_binary(binary);  // the process removes it once read
  int ends[2] = {-1, -1};
  if (file.empty() || ::pipe2(ends, O_CLOEXEC) != 0) {
    if (!file.empty()) ::unlink(file.c_str());
    end_compile(key, false);
    return false;
  }
  std::vector<std::string> arguments{file, f.kernel, std::to_string(f.work_dim)};
  for (size_t size : f.local) arguments.push_back(std::to_string(size));
  const bool ok = kernel::helper_process::start(executable(), kCommand, arguments, ends[1], {"POCL_DEVICES=" + driver},
                                                /*keep_stderr=*/false);
  ::close(ends[1]);
  if (!ok) {
    ::close(ends[0]);
    ::unlink(file.c_str());
    end_compile(key, false);
    return false;
  }
  if (auto* t = services.trace())
    t->record(
        "start compile process", "build", device, started, Clock::now(),
        {{"kernel", f.kernel},
         {"local", std::to_string(f.local[0]) + "," + std::to_string(f.local[1]) + "," + std::to_string(f.local[2])}});
  std::thread(await_end, ends[0], root, hash, key, f).detach();
  return true;
}

}  // namespace

std::string process_hash(const std::string& family) { return pocl_kernel_cache::shifted_hash(family, kHashIndex); }

void remember_family_binary(const std::string& family, const std::vector<unsigned char>& binary) {
  if (family.empty() || binary.empty()) return;
  Families& f = families();
  std::lock_guard lock(f.mutex);
  if (f.binaries.size() < kMostFamilies && !f.binaries.count(family))
    f.binaries.emplace(family, std::make_shared<const std::vector<unsigned char>>(binary));
}

bool start(Services& services, int device, const std::string& family, const std::vector<Function>& functions) {
  if (!wanted(services) || exit_begun() || executable().empty()) return false;
  const std::string driver = submit_compiling_driver(services.devices().at(device));
  const std::string root = pocl_kernel_cache::root();
  auto binary = family_binary(family);
  if (driver.empty() || root.empty() || !binary) return false;
  std::vector<unsigned char> own = *binary;
  if (!give_pocl_binary_its_own_hash(own, kHashIndex)) return false;
  const std::string hash = pocl_kernel_cache::binary_hash(own);
  bool any = false;
  // A process each: their compiles go side by side (a process's would go one after another).
  for (const Function& f : functions) {
    if (!pocl_kernel_cache::folder_named_as_kernel(f.kernel) ||
        pocl_kernel_cache::has_variant(root, hash, f.kernel, f.local, false) ||
        pocl_kernel_cache::has_variant(root, family, f.kernel, f.local, false))
      continue;
    const std::string key = first_run_key(family, f.kernel, f.local, false);
    if (announce_compile(key, hash)) any = start_one(services, device, driver, root, hash, own, key, f) || any;
  }
  return any;
}

void start_from_earlier_runs(Services& services, int home, const std::string& family) {
  if (!wanted(services) || !services.settings().share_first_runs) return;
  std::vector<Function> functions;
  for (const pocl_kernel_cache::Variant& v :
       pocl_kernel_cache::offset_zero_variants(pocl_kernel_cache::root(), family)) {
    Function f{v.kernel, 3, {v.local[0], v.local[1], v.local[2]}};
    functions.push_back(f);
  }
  if (!functions.empty()) start(services, home, family, functions);
}

}  // namespace coex::exec::compile_process
