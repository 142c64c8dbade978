// What each not-split reason of the report means, for the legend of `coex report` and its page. The
// reasons are those the planner (exec/launch_planner.cpp), the split runner, the kernel analysis
// (kernel/kernel_analysis.cpp), the launch validation and the conflict checks give; a reason missing
// here is still counted and printed, without a meaning.
#include <utility>

#include "report/report.h"

namespace coex::report {

namespace {

const std::pair<const char*, const char*> kMeanings[] = {
    // The device set
    {"single_device",
     "only one device in the set, so there is nothing to split across (PoCL: POCL_DEVICES=\"pthread "
     "pthread\" makes two CPU devices; COEX_DEVICES selects devices)"},
    {"devices_unavailable",
     "no device besides the app's could run its part (no build or no context there; a "
     "COEX_DEVICES selection that leaves out the app's device ends here too)"},
    {"device_failed", "the other devices were dropped after a sub-launch failed on them earlier in the run"},
    {"devices_busy", "the other devices were still running work abandoned by an earlier split (a stall)"},
    {"unknown_device", "the app's queue is on a device coex does not list"},
    {"pending_wait_list",
     "the launch waits on events not complete yet, and on the app's device (PoCL's basic or "
     "cpu-minimal driver) coex could hold its split behind them only by blocking the app"},
    // The scheduler
    {"too_small",
     "fewer work-items than min_split_work_items (on a GPU, per CPU core it counts for), or under "
     "auto every other device much slower than the app's device by its specification (coex builds "
     "nothing for them meanwhile), only devices not prepared yet (auto_late_devices; a launch shorter than "
     "auto_late_cost in a program that has not run that long does not let them in), or more data "
     "for them to receive than min_split_seconds moves (into a CPU device's new buffers, for a kernel "
     "without loops, at auto_fresh_memory_gbs), "
     "and, once timed on the app's device, shorter than min_split_seconds (and than those moves); "
     "or, under auto, timed there shorter than any split costs (auto_split_floor_seconds), whatever its size; "
     "or a single work-group along the split dimension: moving the data would cost more than a "
     "second device saves"},
    {"one_device_pays",
     "auto: the measured or modelled times say the app's device alone is faster (the "
     "history file keeps these measurements across runs)"},
    {"preparing",
     "auto: coex was still analysing the program or building it for the devices, off the app's "
     "path, or the launch was not timed yet and only devices not prepared yet (auto_late_devices) could "
     "have taken part, or, of a kernel without loops, not timed yet while what a split needs was still "
     "to be compiled (compile_ahead, auto_split_floor_seconds), or, where no core is left beside the "
     "devices', before the kernel's launches had shown that a compile-ahead process would pay "
     "(compile_ahead_start); launches meanwhile ran on the app's device, timed"},
    {"split_being_measured",
     "auto: the first split of this kernel and size was still running and being "
     "measured; launches meanwhile ran on the app's device"},
    // Failures, which fall back to the app's device with the same bytes
    {"sub_launch_failed", "a sub-launch failed; the launch ran again whole on the app's device"},
    {"merge_failed",
     "a driver call failed while the devices' results were merged; the launch's event carries the driver's "
     "error, and the bytes not merged stay recorded where they are"},
    {"coex_error", "coex could not plan the launch (logged); it ran unsplit"},
    {"exiting", "enqueued after coex shut down at the app's exit (an atexit handler's launch)"},
    // The launch
    {"invalid_launch",
     "the driver would reject the launch or treat it its own way (local sizes that do not "
     "divide, unset arguments, odd wait lists): it gets the driver's own answer"},
    {"task", "clEnqueueTask: a single work-item"},
    {"untracked_kernel", "the kernel was made before coex was loaded, or by a path coex does not follow"},
    {"untracked_buffer", "a buffer argument was made before coex was loaded"},
    {"svm",
     "pointer arguments (clSetKernelArgSVMPointer, clSetKernelArgMemPointerINTEL, clSetKernelArgDevicePointerEXT, "
     "clSetKernelExecInfo) or integers cast to pointers"},
    // The program
    {"binary_program",
     "built from a binary coex never saw built from source (an app's binary cache is "
     "followed once coex has seen the source: run the app once with its cache empty or off, "
     "e.g. PYOPENCL_NO_CACHE=1 for pyopencl)"},
    {"il_program", "built from SPIR-V or another IL: coex analyses OpenCL C source only"},
    {"builtin_kernels", "a built-in kernel of the driver"},
    {"linked_program", "made by clLinkProgram: coex analyses programs built from one source"},
    {"unknown_program", "a program coex knows nothing about"},
    // The kernel's code
    {"unanalysable",
     "the kernel analysis could not read the kernel (no usable libclang, a parse error, "
     "recursion, or a construct it does not model)"},
    {"global_atomics",
     "the kernel uses atomics on global memory: parts on different devices would not see "
     "each other's updates"},
    {"image_args", "an image argument: images are not split"},
    {"sampler_args", "a sampler argument"},
    {"pipe_args", "a pipe argument"},
    {"device_enqueue", "the kernel enqueues kernels itself (queue_t, enqueue_kernel)"},
    {"program_scope_variables", "the program has global variables at program scope"},
    {"group_builtins_in_helper",
     "a function the kernel calls reads get_group_id, get_num_groups, "
     "get_global_size or get_global_offset, and it is a kernel itself or some "
     "call of it is inside a macro, so the rewrite cannot pass it the values"},
    {"kernel_called_as_function", "another function calls this kernel, so its parameters cannot be extended"},
    // The launch's data
    {"cross_chunk_dependency",
     "a part of the launch reads what another part writes (work-item 0 reading a "
     "buffer the others update, a stencil updated in place): the work-groups "
     "depend on each other"},
    {"overlapping_writes",
     "two parts of the launch write the same bytes (a scatter whose indices may "
     "collide, a group overwriting another's elements)"},
    {"unspecified", "no reason was given (a report written by hand, or a bug)"},
};

}  // namespace

std::string not_split_reason_meaning(const std::string& reason) {
  for (const auto& [name, meaning] : kMeanings)
    if (reason == name) return meaning;
  return "";
}

}  // namespace coex::report
