#include "exec/compile_ahead_request.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "devices/device_set.h"
#include "kernel/child_process.h"

namespace coex::exec::compile_ahead {

// In PoCL's names (its cache folders; POCL_BINARY_SPECIALIZE_WG takes the same): "16-16-1-smallgrid"
// for the chunks at a nonzero offset, "16-16-1-goffs0-smallgrid" for the one at zero. No wide variant:
// PoCL 3.1 and 5.0 compile the smallgrid variants alone of a list naming both kinds (their folders
// after a build with four named, on both machines), and a wide chunk runs in small-grid pieces
// (small_grid_groups). The one at offset zero is asked for even where the app's launches ran it with
// that local size: the first launch may be split before home ran it whole (docs/design.md, "Compiled
// ahead, in a process of its own").
std::string variants_for(cl_uint work_dim, const size_t* local) {
  if (!local || work_dim == 0 || work_dim > 3) return "";
  std::string sizes;
  for (cl_uint d = 0; d < 3; ++d) sizes += (d ? "-" : "") + std::to_string(d < work_dim ? local[d] : 1);
  return sizes + "-smallgrid," + sizes + "-goffs0-smallgrid";
}

int index_in_platform(const cl_icd_dispatch& cl, const devices::Device& device, size_t& count) {
  cl_uint n = 0;
  if (cl.clGetDeviceIDs(device.platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &n) != CL_SUCCESS || !n) return -1;
  std::vector<cl_device_id> ids(n);
  if (cl.clGetDeviceIDs(device.platform, CL_DEVICE_TYPE_ALL, n, ids.data(), nullptr) != CL_SUCCESS) return -1;
  count = n;
  for (cl_uint i = 0; i < n; ++i)
    if (ids[i] == device.id) return int(i);
  return -1;
}

std::string request_text(const devices::Device& device, int index, const std::string& pocl_devices,
                         const std::string& variants, bool variants_from_input, int processes,
                         const std::string& options, const std::vector<Target>& kinds, const std::string& source) {
  using namespace request_keys;
  std::ostringstream out;
  auto line = [&out](const char* key, const auto& value) { out << key << '=' << value << '\n'; };
  line(kPlatform, device.platform_name);
  line(kDevice, pocl_devices.empty() ? index : -1);
  line(kDeviceName, device.name);
  line(kPoclDevices, pocl_devices);
  line(kVariants, variants);
  line(kVariantsFromInput, variants_from_input ? 1 : 0);
  line(kVariantProcesses, processes);
  line(kOptions, options);
  for (const Target& kind : kinds) {
    line(kKind, kind.device_name);
    line(kKindOptions, kind.options);
  }
  out << kSourceLine << '\n' << source;
  return out.str();
}

bool write_request(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  return bool(out.flush());
}

bool input_pair(int ends[2]) {
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0) ends[0] = ends[1] = -1;
  for (int i = 0; i < 2; ++i)
    if (ends[i] >= 0 && ends[i] <= 2) {
      const int moved = ::fcntl(ends[i], F_DUPFD_CLOEXEC, 3);
      ::close(ends[i]);
      ends[i] = moved;
    }
  if (ends[0] >= 0 && ends[1] >= 0) return true;
  for (int i = 0; i < 2; ++i)
    if (ends[i] >= 0) ::close(ends[i]);
  ends[0] = ends[1] = -1;
  return false;
}

pid_t spawn(const std::string& executable, const std::string& request, int input) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (input >= 0)
    posix_spawn_file_actions_adddup2(&actions, input, 0);
  else
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  for (int fd : {1, 2}) posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_WRONLY, 0);
  const pid_t pid = kernel::child_process::spawn(executable, {"compile-ahead", request}, actions, 2);
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

}  // namespace coex::exec::compile_ahead
