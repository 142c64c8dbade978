// coex compile-ahead REQUEST: started by libcoex.so, not by users (exec/compile_ahead.h). Builds the
// app's program from its source for the app's device, in a process of its own, and asks PoCL for its
// binary: PoCL then compiles the generic work-group function of every kernel, and the variants that
// POCL_BINARY_SPECIALIZE_WG names, into its kernel cache on disk, under the same build hash as the
// app's own build of that source. The app's process then finds them there instead of compiling them
// itself, which stalls what the app runs on PoCL meanwhile
// (docs/design.md, "Compiled ahead, in a process of its own"). Where the request names devices of
// other kinds too (`kind`, each with its build options: coex's build from source for the first device
// of that kind), each is built and asked for its binary the same way, in a process of its own.
//
// REQUEST is a file (its keys: request_keys, exec/compile_ahead_request.h): lines "key=value"
// (platform, device, device_name, pocl_devices, variants, variants_from_input, variant_processes,
// options; then kind and kind_options, one pair per other kind), then a line "source:" and the source
// to the end of the file. With
// variants_from_input=1 (a process started at the app's clBuildProgram) the binary is asked for twice:
// at once, which compiles the generic functions, then with the variants of the line its standard input
// brings once the app's first split names them (PoCL makes the binary anew at each ask, compiling what
// its cache lacks). With variant_processes=2 each target is compiled by two processes, each asking for
// one half of the variants (the first, third... and the second, fourth...): PoCL compiles one variant
// after another in a process, each for hundreds of milliseconds (benchmarks/slices' two on the device
// machine: 300 and 154 ms, after 160 ms of its generic function), so that where cores are spare the
// second comes no later than the first. PoCL's binary holds the generic functions: a process asking
// for its variants compiles those its cache lacks too (PoCL writes each file whole, then renames it into
// place). Exit status 0 when every binary was made, 3 when the input ended without a line.
//
// `coex compile-ahead -` (a process spawned at the app's clCreateContext: exec/compile_ahead_warm.h)
// takes its request on its standard input instead: first, at once, a block (a line with its length in
// bytes, then that many bytes of the request's format) of what sets PoCL up (platform, device,
// pocl_devices, variant_processes; no source); then, at the app's clBuildProgram, a line with the
// request file's path; then the variants' line. It sets PoCL up and makes the device's context
// between the two, while the app builds: on the device machine PoCL's start and the build took 160 ms
// of benchmarks/slices' 469 ms in a process started at the build. Each of its processes
// (variant_processes) does so, and takes the request from it as a block.
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "api/libopencl_table.h"
#include "commands.h"
#include "exec/compile_ahead_request.h"

namespace coex::launcher {
namespace {

// Until how long after its start a process started at the app's clBuildProgram waits for its variants:
// it is the app's child, and an app that waits for all its children would wait for it this long at
// most. The app's process sends them only within 4.5 s of the start; a first split later than that
// starts a process of its own for what the generic functions lack (exec/compile_ahead.h).
constexpr std::chrono::milliseconds kVariantsWait{5000};
// A process spawned at clCreateContext waits as long for its request, and then kVariantsWait for its
// variants: the app's process hands it a request only within 4.5 s of its start.

// A device to build for, by its name (with pocl_devices set: the process lists one device of each
// driver, numbered by PoCL in an order of its own), else by its place in the platform.
struct Target {
  std::string device_name, options;
  int device = -1;
};

struct Request {
  std::string platform, pocl_devices, variants, source;
  Target home;                // the app's device and build options
  std::vector<Target> kinds;  // the first device of each other kind, with coex's options for it
  bool variants_from_input = false;
  int variant_processes = 1;  // processes per target, each with its share of the variants
};

// A process's share of `variants` (PoCL's names, comma-separated): the entries part, part + parts, ...
std::string share_of(const std::string& variants, int part, int parts) {
  std::string share, entry;
  std::istringstream entries(variants);
  for (int i = 0; std::getline(entries, entry, ','); ++i)
    if (i % parts == part) share += (share.empty() ? "" : ",") + entry;
  return share;
}

// The request's lines from `in`, to its source; `with_source` false: a block that sets PoCL up, whose
// source is empty.
bool parse_request(std::istream& in, Request& request, bool with_source) {
  using namespace exec::compile_ahead::request_keys;
  std::string line;
  while (std::getline(in, line)) {
    if (line == kSourceLine) {
      std::ostringstream rest;
      rest << in.rdbuf();
      request.source = rest.str();
      return (!with_source || !request.source.empty()) && (request.home.device >= 0 || !request.pocl_devices.empty());
    }
    const size_t eq = line.find('=');
    if (eq == std::string::npos) return false;
    const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    if (key == kPlatform)
      request.platform = value;
    else if (key == kDevice)
      request.home.device = std::atoi(value.c_str());
    else if (key == kDeviceName)
      request.home.device_name = value;
    else if (key == kKind)
      request.kinds.push_back({value, "", -1});
    else if (key == kKindOptions && !request.kinds.empty())
      request.kinds.back().options = value;
    else if (key == kPoclDevices)
      request.pocl_devices = value;
    else if (key == kVariants)
      request.variants = value;
    else if (key == kVariantsFromInput)
      request.variants_from_input = value == "1";
    else if (key == kVariantProcesses)
      request.variant_processes = std::clamp(std::atoi(value.c_str()), 1, 2);
    else if (key == kOptions)
      request.home.options = value;
  }
  return false;
}

bool read_request(const std::string& path, Request& request) {
  std::ifstream in(path, std::ios::binary);
  return in && parse_request(in, request, true);
}

std::string info_string(const cl_icd_dispatch& cl, cl_platform_id platform, cl_device_id device) {
  size_t size = 0;
  if (device)
    cl.clGetDeviceInfo(device, CL_DEVICE_NAME, 0, nullptr, &size);
  else
    cl.clGetPlatformInfo(platform, CL_PLATFORM_NAME, 0, nullptr, &size);
  std::string text(size, '\0');
  if (device)
    cl.clGetDeviceInfo(device, CL_DEVICE_NAME, size, text.data(), nullptr);
  else
    cl.clGetPlatformInfo(platform, CL_PLATFORM_NAME, size, text.data(), nullptr);
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

// POCL_BINARY_SPECIALIZE_WG for `variants`: the user's own specializations first, which stay.
void specialize(const char* own, const std::string& variants) {
  std::string all = own ? own : "";
  if (!variants.empty()) all += (all.empty() ? "" : ",") + variants;
  if (!all.empty()) setenv("POCL_BINARY_SPECIALIZE_WG", all.c_str(), 1);
}

// Asks for the program's binary: PoCL compiles what its cache lacks of it.
bool binary_made(const cl_icd_dispatch& cl, cl_program program) {
  size_t size = 0;
  return cl.clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr) == CL_SUCCESS && size > 0;
}

// The device `target` names, on the first platform named `platform`: the n-th, of that name; or the
// first of that name where it gives no place.
cl_device_id find_device(const cl_icd_dispatch& cl, const std::string& platform_name, const Target& target) {
  cl_uint count = 0;
  if (cl.clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || !count) return nullptr;
  std::vector<cl_platform_id> platforms(count);
  cl.clGetPlatformIDs(count, platforms.data(), nullptr);
  for (cl_platform_id platform : platforms) {
    if (info_string(cl, platform, nullptr) != platform_name) continue;
    cl_uint devices = 0;
    if (cl.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &devices) != CL_SUCCESS ||
        target.device >= int(devices))
      return nullptr;
    std::vector<cl_device_id> ids(devices);
    cl.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, devices, ids.data(), nullptr);
    if (target.device >= 0) {
      cl_device_id device = ids[size_t(target.device)];
      return info_string(cl, nullptr, device) == target.device_name ? device : nullptr;
    }
    for (cl_device_id device : ids)
      if (info_string(cl, nullptr, device) == target.device_name) return device;
    return nullptr;
  }
  return nullptr;
}

// The driver of `pocl_devices` (a list of drivers) a device of that name belongs to: PoCL names a
// CPU device by its driver, then '-' ("cpu-minimal-haswell", "cpu-haswell"); the longest that fits.
std::string driver_of(const std::string& pocl_devices, const std::string& device_name) {
  std::istringstream drivers(pocl_devices);
  std::string driver, found;
  while (drivers >> driver)
    if (device_name.rfind(driver + "-", 0) == 0 && driver.size() > found.size()) found = driver;
  return found;
}

// Up to `size` bytes from `input` into `into`, once some come before `until`: how many, 0 where none
// came in time or the input ended (the app's process has ended, or sent none).
size_t read_within(int input, std::chrono::steady_clock::time_point until, char* into, size_t size) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
  pollfd ready{input, POLLIN, 0};
  if (::poll(&ready, 1, int(std::max<int64_t>(0, left.count()))) != 1) return 0;
  const ssize_t n = ::read(input, into, size);
  return n > 0 ? size_t(n) : 0;
}

// Where the variants come from (`input`, a descriptor: the process's standard input, or a pipe from
// the process that forked this one), until `until`: the line, or nothing where none came.
std::optional<std::string> variants_line(int input, std::chrono::steady_clock::time_point until) {
  std::string line;
  for (char c = 0; read_within(input, until, &c, 1) == 1; line += c)
    if (c == '\n') return line;
  return std::nullopt;
}

// A block on `input` (a line with its length, then that many bytes: launcher's `-` form), until
// `until`: its bytes, or nothing where none came whole.
std::optional<std::string> block(int input, std::chrono::steady_clock::time_point until) {
  constexpr size_t kAtMost = size_t(1) << 28;  // a request's lines and source, far more than any
  const std::optional<std::string> length = variants_line(input, until);
  if (!length || length->empty() || length->size() > 9 ||
      length->find_first_not_of("0123456789") != std::string::npos || std::stoul(*length) > kAtMost)
    return std::nullopt;
  std::string bytes(std::stoul(*length), '\0');
  for (size_t got = 0, n = 0; got < bytes.size(); got += n)
    if ((n = read_within(input, until, bytes.data() + got, bytes.size() - got)) == 0) return std::nullopt;
  return bytes;
}

// A request in `text` (a block, or a request file's contents; `with_source` as parse_request's), where
// one came.
bool parse_text(const std::optional<std::string>& text, Request& request, bool with_source) {
  std::istringstream in(text ? *text : "");
  return text && parse_request(in, request, with_source);
}

// A block holding `text` (block's form).
std::string as_block(const std::string& text) { return std::to_string(text.size()) + "\n" + text; }

// Writes all of `bytes` to `out` (a pipe to a fork, which reads it once PoCL is set up there).
void write_all(int out, const std::string& bytes) {
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(out, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the fork has ended
    done += size_t(n);
  }
}

// PoCL set up in this process, and the device's context made: what a build needs before its source.
struct Session {
  cl_icd_dispatch cl{};
  cl_device_id device = nullptr;
  cl_context context = nullptr;
};

bool set_up(Session& session, const std::string& platform, const Target& target) {
  if (!api::load_libopencl_table(session.cl, nullptr)) return false;
  session.device = find_device(session.cl, platform, target);
  if (!session.device) return false;
  cl_int err = CL_SUCCESS;
  session.context = session.cl.clCreateContext(nullptr, 1, &session.device, nullptr, nullptr, &err);
  return err == CL_SUCCESS && session.context;
}

// One target's build and binary in this process, with its share of the variants (share_of): PoCL
// compiles what its cache lacks; then, where the variants come later, the binary again with them. The
// exit status of compile_ahead.
int compile_in(Session& session, const Request& request, const Target& target, int part, const std::string& own,
               int input, std::chrono::steady_clock::time_point until) {
  specialize(own.c_str(),
             share_of(request.variants, part, request.variant_processes));  // PoCL reads it as it makes the binary
  const cl_icd_dispatch& cl = session.cl;
  cl_device_id device = session.device;
  cl_context context = session.context;
  cl_int err = CL_SUCCESS;
  const char* text = request.source.c_str();
  const size_t length = request.source.size();
  cl_program program = cl.clCreateProgramWithSource(context, 1, &text, &length, &err);
  // Where the variants come later, the generic functions are asked for at once by the first part
  // alone: the others ask only with their variants, which compiles the generic functions too where the
  // first has not yet, so that a program whose line never comes (rewritten) costs them no compile.
  const bool ask_now = !request.variants_from_input || part == 0;
  int status = err == CL_SUCCESS &&
                       cl.clBuildProgram(program, 1, &device, target.options.c_str(), nullptr, nullptr) == CL_SUCCESS &&
                       (!ask_now || binary_made(cl, program))
                   ? 0
                   : 1;
  if (status == 0 && request.variants_from_input) {
    const std::optional<std::string> variants = variants_line(input, until);
    if (!variants)
      status = 3;  // none within the wait, none to ask for, or the app's process has ended
    else if (const std::string share = share_of(*variants, part, request.variant_processes); !share.empty()) {
      specialize(own.c_str(), share);
      status = binary_made(cl, program) ? 0 : 1;
    }
  }
  if (program) cl.clReleaseProgram(program);
  cl.clReleaseContext(context);
  return status;
}

int compile_target(const Request& request, const Target& target, int part, const std::string& own, int input,
                   std::chrono::steady_clock::time_point until) {
  Session session;
  return set_up(session, request.platform, target) ? compile_in(session, request, target, part, own, input, until) : 1;
}

// The request file a line on `input` names, until `until` (read, then removed): its text.
std::optional<std::string> request_named(int input, std::chrono::steady_clock::time_point until) {
  const std::optional<std::string> path = variants_line(input, until);
  if (!path || path->empty()) return std::nullopt;
  std::ifstream in(*path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  ::unlink(path->c_str());
  return in ? std::optional<std::string>(text.str()) : std::nullopt;
}

// A process spawned at clCreateContext (or one of its forks): PoCL set up for `set_up_for`'s home, then
// the request from `input`, named by a line (`named`) or a block (from the process that forked this
// one); the target its home, of the same name.
int compile_when_asked(const Request& set_up_for, bool named, int part, const std::string& own, int input,
                       std::chrono::steady_clock::time_point until) {
  Session session;
  if (!set_up(session, set_up_for.platform, set_up_for.home)) return 1;
  Request asked;  // none within the wait, or the app's process ended: 3
  if (!parse_text(named ? request_named(input, until) : block(input, until), asked, true)) return 3;
  if (asked.home.device_name != set_up_for.home.device_name) return 2;
  return compile_in(session, asked, asked.home, part, own, input, std::chrono::steady_clock::now() + kVariantsWait);
}

}  // namespace

int compile_ahead(const Args& args) {
  auto until = std::chrono::steady_clock::now() + kVariantsWait;
  Request request;
  if (args.size() != 1) return 2;
  // `-`: spawned at clCreateContext, what sets PoCL up comes first on the standard input, the request later.
  const bool when_asked = args[0] == "-";
  if (when_asked) {
    if (!parse_text(block(0, until), request, false) || !request.kinds.empty()) return 2;
  } else {
    if (!read_request(args[0], request)) return 2;
    // Read: gone at once, so that none is left behind by an app that ends without removing it.
    ::unlink(args[0].c_str());
  }
  // The user's own specializations, which stay (specialize).
  const char* set = std::getenv("POCL_BINARY_SPECIALIZE_WG");
  const std::string own = set ? set : "";
  // The devices to compile for, where the app's list allows (exec/compile_ahead_kinds.h,
  // pocl_devices_entry), each by variant_processes processes with a part of the variants each.
  std::vector<Target> targets{request.home};
  targets.insert(targets.end(), request.kinds.begin(), request.kinds.end());
  std::vector<std::pair<Target, int>> jobs;
  for (const Target& target : targets)
    for (int part = 0; part < request.variant_processes; ++part) jobs.emplace_back(target, part);
  // One: built here.
  if (jobs.size() == 1) {
    if (!request.pocl_devices.empty()) setenv("POCL_DEVICES", request.pocl_devices.c_str(), 1);
    return when_asked ? compile_when_asked(request, true, 0, own, 0, until)
                      : compile_target(request, request.home, 0, own, 0, until);
  }
  // Several: each in a process of its own, forked before any driver is loaded, with its driver alone
  // listed, so that they compile at once (two targets' threads in one process failed on PoCL 3.1);
  // the variants' line goes to each through a pipe (and, spawned at clCreateContext, the request first).
  std::vector<pid_t> children;
  std::vector<int> pipes;
  for (const auto& [target, part] : jobs) {
    int ends[2] = {-1, -1};
    if ((request.variants_from_input || when_asked) && ::pipe(ends) != 0) break;
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid == 0) {
      // Ended with this process: the app's exit kills it (exec/compile_ahead.h, stop_all), not them.
      if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) ::_exit(1);
      for (int other : pipes) ::close(other);
      if (ends[1] >= 0) ::close(ends[1]);
      const std::string driver = driver_of(request.pocl_devices, target.device_name);
      if (!driver.empty()) setenv("POCL_DEVICES", driver.c_str(), 1);
      ::_exit(when_asked ? compile_when_asked(request, false, part, own, ends[0], until)
                         : compile_target(request, target, part, own, ends[0], until));
    }
    if (ends[0] >= 0) ::close(ends[0]);
    if (pid < 0) {
      if (ends[1] >= 0) ::close(ends[1]);
      break;
    }
    children.push_back(pid);
    if (ends[1] >= 0) pipes.push_back(ends[1]);
  }
  signal(SIGPIPE, SIG_IGN);  // a child that has ended
  bool asked = !when_asked;
  if (when_asked)
    if (const std::optional<std::string> text = request_named(0, until)) {
      asked = true;
      for (int out : pipes) write_all(out, as_block(*text));
      until = std::chrono::steady_clock::now() + kVariantsWait;
    }
  if (asked && (request.variants_from_input || when_asked)) {
    if (const std::optional<std::string> variants = variants_line(0, until))
      for (int out : pipes) write_all(out, *variants + "\n");
  }
  for (int out : pipes) ::close(out);
  int status = children.size() == jobs.size() ? 0 : 1;
  for (pid_t child : children) {
    int child_status = 0;
    if (::waitpid(child, &child_status, 0) != child || !WIFEXITED(child_status))
      status = 1;
    else if (WEXITSTATUS(child_status) != 0 && status == 0)
      status = WEXITSTATUS(child_status);
  }
  return status;
}

}  // namespace coex::launcher
