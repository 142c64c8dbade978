// The request a `coex compile-ahead` process reads (launcher/compile_ahead_command.cpp reads it), and
// the process's start: what exec/compile_ahead.h decides to run, written down and spawned
// (docs/design.md, "Compiled ahead, in a process of its own").
#pragma once

#include <CL/cl_icd.h>
#include <sys/types.h>

#include <cstddef>
#include <string>
#include <vector>

namespace coex::devices {
struct Device;
}  // namespace coex::devices

namespace coex::exec::compile_ahead {

// The request's keys, one "key=value" line each (kKind and kKindOptions once per other kind, in
// pairs), then the line kSourceLine and the source to the end: request_text writes them and
// `coex compile-ahead` reads them (launcher/compile_ahead_command.cpp, parse_request), both by these
// names, so that neither side can rename one alone.
namespace request_keys {
inline constexpr char kPlatform[] = "platform";
inline constexpr char kDevice[] = "device";
inline constexpr char kDeviceName[] = "device_name";
inline constexpr char kPoclDevices[] = "pocl_devices";
inline constexpr char kVariants[] = "variants";
inline constexpr char kVariantsFromInput[] = "variants_from_input";
inline constexpr char kVariantProcesses[] = "variant_processes";
inline constexpr char kOptions[] = "options";
inline constexpr char kKind[] = "kind";
inline constexpr char kKindOptions[] = "kind_options";
inline constexpr char kSourceLine[] = "source:";
}  // namespace request_keys

// The variants of the kernel's work-group function `coex compile-ahead` asks PoCL for
// (POCL_BINARY_SPECIALIZE_WG, in PoCL's names of its cache folders): the small grids the split's chunks
// run with `local`, at a zero and a nonzero offset (a wide chunk runs in small-grid pieces, but for one
// at offset zero with the app's local size, small_grid_groups; and PoCL 3.1 and 5.0 build a wide entry
// as a small grid too); "" without a local size.
std::string variants_for(cl_uint work_dim, const size_t* local);

// A device a process builds for, by name, with its build options.
struct Target {
  std::string device_name, options;
};

// The device's place among its platform's devices, as `coex compile-ahead` finds it again, and how
// many the platform has (`count`); -1 where it is not found.
int index_in_platform(const cl_icd_dispatch& cl, const devices::Device& device, size_t& count);

// The request's text (the file write_request writes). `pocl_devices`, where not empty, is the process's POCL_DEVICES
// (one device of each driver), the devices then found by name. `variants_from_input`: the variants come later, a line
// on the process's standard input. `processes`: processes a target (variant_processes). `kinds`: other kinds to build
// for.
std::string request_text(const devices::Device& device, int index, const std::string& pocl_devices,
                         const std::string& variants, bool variants_from_input, int processes,
                         const std::string& options, const std::vector<Target>& kinds, const std::string& source);
// Writes a request's text to `path`.
bool write_request(const std::string& path, const std::string& text);

// The two ends of a process's standard input (a socket: a send to a process that has ended raises no
// SIGPIPE here), this one's first, neither at 0 to 2 (an app that closed its own: the process's goes
// to its descriptor 0, which the spawn's dup2 would leave marked close-on-exec, and the app may open its
// own there). False, none open, where they could not be made.
bool input_pair(int ends[2]);

// Starts `executable compile-ahead REQUEST` with the app's environment less what loads coex, `input`
// as its standard input (else none), no output, none of the app's descriptors, default signal
// handling. The process ID, or -1.
pid_t spawn(const std::string& executable, const std::string& request, int input);

}  // namespace coex::exec::compile_ahead
