// What coex needs to know about an OpenCL C program before it splits a launch of one of its
// kernels: per kernel, the argument kinds and access modes, the splittability verdict, and whether
// the work-item builtins need the rewrite (docs/design.md, "What is split" and "A launch"). Parsed
// with libclang.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace coex::kernel {

enum class ArgKind {
  Scalar,           // by-value argument (int, float4, struct, ...)
  GlobalPointer,    // __global T*
  ConstantPointer,  // __constant T*
  LocalPointer,     // __local T*  (set with clSetKernelArg(size, NULL))
  Image,            // image2d_t, image3d_t, ...
  Sampler,          // sampler_t
  Pipe,             // pipe T
  Other             // anything the analysis cannot classify (queue_t, clk_event_t, ...)
};

// An argument set with a cl_mem: __global or __constant.
inline bool is_buffer_kind(ArgKind kind) { return kind == ArgKind::GlobalPointer || kind == ArgKind::ConstantPointer; }

struct ArgInfo {
  std::string name;
  std::string type_name;  // as spelled by clang, e.g. "const __global float *__private"
  ArgKind kind = ArgKind::Other;
  bool read = true;       // for pointers: the kernel may load through it
  bool written = true;    // for pointers: the kernel may store through it (false only when proven)
  size_t pointee_size = 0;  // bytes of the pointee type, 0 when unknown or not a pointer
  size_t value_size = 0;    // by-value arguments: bytes of the type as clang lays it out, 0 otherwise
};

// One replacement in the program source: [offset, offset + length) becomes text.
struct SourceEdit {
  size_t offset = 0;
  size_t length = 0;
  std::string text;
};

class FootprintModel;  // kernel/footprint.h

struct KernelInfo {
  std::string name;
  std::vector<ArgInfo> args;
  // Empty when a launch of this kernel may be split. Otherwise one short snake_case reason that the
  // report counts under not_split, e.g. "global_atomics", "image_args", "sampler_args", "pipe_args",
  // "svm", "device_enqueue", "group_builtins_in_helper", "unanalysable", "program_scope_variables",
  // "kernel_called_as_function" (docs/kernel-analysis.md has the list and the order they are tried in).
  std::string not_split_reason;
  // The kernel (or what it calls) reads get_group_id, get_num_groups, get_global_size or
  // get_global_offset: a split launch must use the rewritten source (rewrite_for_split).
  bool uses_launch_builtins = false;
  // The kernel (or what it calls) has a loop: a work-item may do much work, so that a launch of few
  // may be long (exec/compile_ahead.h). Without one a work-item's work is bounded by its code.
  bool loops = false;
  // The edits rewrite_for_split applies for this kernel (extra parameters in every declaration of
  // it, the #define/#undef pair in its body, its calls of rewritten helpers passing the values on);
  // empty unless uses_launch_builtins and splittable.
  std::vector<SourceEdit> split_edits;
  // A kernel that is not split but calls rewritten helpers: the values of an unsplit launch declared
  // in its body and passed to them, so that the rewritten program builds.
  std::vector<SourceEdit> unsplit_edits;
  // Per pointer argument, the bytes a range of work-groups reads and writes (kernel/footprint.h);
  // null when the kernel is not splittable.
  std::shared_ptr<const FootprintModel> footprint;
};

struct ProgramInfo {
  std::vector<KernelInfo> kernels;  // every __kernel function of the program, in source order
  std::string parse_error;          // non-empty when the source could not be analysed at all
  // "clang" (clang's opencl-c-base.h) or "fallback" (coex's own declarations: no resource dir).
  std::string builtins_mode;
  // Helpers that read launch builtins, rewritten like kernels (kernel/split_rewrite.h); applied with
  // the kernels' edits.
  std::vector<SourceEdit> helper_edits;
  size_t source_size = 0;         // of the source analysed: rewrite_for_split checks it gets the same
  uint64_t source_fingerprint = 0;
  const KernelInfo* find(const std::string& kernel_name) const;
};

// Analyses an OpenCL C program as clang parses it (OpenCL builtins declared; the -D, -I and
// -cl-std options of build_options apply). Never throws for bad source: a kernel the parser cannot
// handle gets not_split_reason "unanalysable"; a source that does not parse gets parse_error.
ProgramInfo analyze_program(const std::string& source, const std::string& build_options);

// Names of the trailing parameters the rewrite appends to every kernel with uses_launch_builtins,
// in this order. Each is a by-value argument that coex sets for every sub-launch.
//   uint  coex_split_dim     the dimension that was split
//   ulong coex_group_base    first work-group of this sub-launch along coex_split_dim
//   ulong coex_num_groups    get_num_groups(coex_split_dim) of the original launch
//   ulong coex_global_size   get_global_size(coex_split_dim) of the original launch
//   ulong coex_global_offset get_global_offset(coex_split_dim) of the original launch
inline constexpr int kRewriteExtraArgs = 5;

// The source of a program whose kernels, launched with a global offset on a range of work-groups,
// see the values of the original launch in get_group_id, get_num_groups, get_global_size and
// get_global_offset. Kernels without uses_launch_builtins are left as they are. Returns "" when
// info was not analysed from this very source (an empty program then fails to build: no split).
std::string rewrite_for_split(const std::string& source, const ProgramInfo& info);

}  // namespace coex::kernel
