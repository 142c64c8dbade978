// PoCL's cache of compiled work-group functions on disk (docs/design.md, "One-time costs"). PoCL
// compiles a kernel's work-group function for each build hash, local size and zero or other global
// offset at the kernel's first run with them, and keeps it in a folder of the cache named by those:
// <root>/<build hash "AB/CDE...">/<kernel>/<local sizes and flags, "16-16-1-goffs0-smallgrid">/. coex
// gives each device of a kind a build hash of its own (exec/shared_binaries.h), so that each compiled
// the same functions again, one at a time (PoCL's cache of loaded work-group functions is locked while
// it compiles: no kernel runs on any PoCL device of the process meanwhile). The devices' programs are
// one binary, so the files one device compiled serve the others: copied into their folders before
// their first run, PoCL loads them instead of compiling. What is here reads and writes those folders;
// exec/shared_first_runs.h decides when.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace coex::exec::pocl_kernel_cache {

// The cache's root folder as PoCL picks it: POCL_CACHE_DIR, else $XDG_CACHE_HOME/pocl/kcache, else
// $HOME/.cache/pocl/kcache; empty where PoCL keeps none (POCL_KERNEL_CACHE=0) or no home is known.
std::string root();

// The build hash a PoCL binary names its cache folder by ("NJ/IFHO...", kHashLetters letters A to P
// with a '/' after the second), found near its start: where it begins in the binary, or npos when the
// binary carries none; binary_hash: the hash itself, or empty.
inline constexpr size_t kHashLetters = 40;
size_t binary_hash_at(const std::vector<unsigned char>& binary);
std::string binary_hash(const std::vector<unsigned char>& binary);

// Whether PoCL names <kernel>'s folder by the kernel's name as it is: it clips a name longer than
// kMaxKernelFolderName characters and appends a SHA-1 of it (pocl_hash_clipped_name, PoCL 3.1 and
// 5.0), which coex does not compute, so that such a kernel's folders are not found here.
inline constexpr size_t kMaxKernelFolderName = 64;
bool folder_named_as_kernel(const std::string& kernel);

// PoCL's CPU devices compile a "smallgrid" variant for a grid narrower than a limit in every dimension
// (grid_width_specialization_limit, 65,535 on them: on PoCL 3.1 a launch 65,530 wide ran `5-1-1-goffs0-
// smallgrid`, one 65,535 wide `5-1-1-goffs0`): 8,192-wide launches of benchmarks/nbody ran one,
// 1,048,576-wide ones of benchmarks/binomial not. The two are functions of their own: a device that
// ran chunks of 8,192 work-items of benchmarks/slices compiled again at its first chunk of 65,536.
inline constexpr size_t kSmallGridWidth = 65535;
inline bool small_grid(unsigned work_dim, const size_t global[3]) {
  for (unsigned d = 0; d < work_dim && d < 3; ++d)
    if (global[d] >= kSmallGridWidth) return false;
  return true;
}

// Whether <root>/<hash>/<kernel>/ holds a work-group function for this local size (three sizes, 1
// beyond the launch's dimensions), a zero global offset or not, and a small grid or not.
bool has_variant(const std::string& root, const std::string& hash, const std::string& kernel, const size_t local[3],
                 bool offset_zero, bool small_grid);

// Whether <root>/<hash>/<kernel>/0-0-0/ holds a compiled generic work-group function: the one PoCL
// compiles into a binary of the program (for a kernel without a reqd_work_group_size).
bool has_generic(const std::string& root, const std::string& hash, const std::string& kernel);

// The build hash of the one program folder of the cache whose `last_accessed` file PoCL touched
// within [from, to] (it does at each build of the program), the folders `except` names left aside;
// empty where none or several were.
std::string program_touched_within(const std::string& root, std::filesystem::file_time_type from,
                                   std::filesystem::file_time_type to, const std::set<std::string>& except = {});

// The time PoCL last touched each program folder's `last_accessed`, by build hash; and the hash of
// the one folder touched (or made) since `before` was taken, "" where none or several were: a build
// of the program between the two, where no other build of PoCL's ran, touched its folder.
using ProgramTimes = std::map<std::string, std::filesystem::file_time_type>;
ProgramTimes programs_touched(const std::string& root);
std::string program_touched_since(const std::string& root, const ProgramTimes& before);

// Copies each folder of <root>/<from>/<kernel>/ that <root>/<to>/<kernel>/ lacks, each into a
// temporary folder first and renamed into place whole, so that PoCL never sees part of one. Returns
// how many it copied.
int copy_missing(const std::string& root, const std::string& from, const std::string& to, const std::string& kernel);

}  // namespace coex::exec::pocl_kernel_cache
