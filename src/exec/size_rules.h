// The size rules a launch meets before auto splits it (docs/design.md, "Size by time"): how many
// work-items home needs to be worth a split, and what a first split must move before it can gain.
// Devices held back by their specification: exec/held_back_devices.h.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kernel/kernel_analysis.h"
#include "model/records.h"

namespace coex::exec {

class Services;

// sched::min_split_items_on for the device numbered `home`.
uint64_t min_split_items(Services& services, int home);

// Under auto, the seconds a first split of `bytes` over `sharing` would spend moving the other
// devices' share to them (sched::others_transfer_seconds), where that is at least min_split_seconds
// and the History has no split of the launch over `sharing` at its size (`split_seconds`): such a
// launch is timed on home first. nullopt otherwise. `into_fresh_memory`: a kernel without loops,
// whose launch may take no longer than its moves into new memory take (the host copy's fill and a
// CPU device's new buffers, devices/host_memory.h).
std::optional<double> first_split_moves(
    Services& services, int home, std::vector<int> sharing, uint64_t bytes,
    const std::function<std::optional<double>(const std::vector<int>&)>& split_seconds, bool into_fresh_memory);

// Whether a launch that reads `bytes` stays on home, timed, by first_split_moves: until home took, at
// the launch's size (`home_key`, exec/home_launch_times.h), as long as those moves.
bool moves_keep_on_home(Services& services, int home, const std::vector<int>& sharing, uint64_t bytes,
                        const std::string& home_key,
                        const std::function<std::optional<double>(const std::vector<int>&)>& split_seconds,
                        bool into_fresh_memory);

// Whether home's times of a launch of a kernel without loops (`home_key`; the kernel's `kernel_key`)
// tell it from one below `floor` (auto_split_floor_seconds over the devices): until they do, it runs on
// home, timed, and starts no compile-ahead process (docs/design.md, "Size by time").
bool timed_to_compile_ahead(Services& services, const std::string& home_key, const std::string& kernel_key,
                            double floor);

// The bytes of the buffers among `args` whose place in `which` is true (every buffer where `which`
// is shorter than `args`, as written_buffers takes it), each root buffer's bytes once: what
// bytes_read (exec/kernel_arguments.h) counts of the launch's job, known before the job is made.
uint64_t buffers_bytes(Services& services, const std::vector<model::KernelArgValue>& args,
                       const std::vector<bool>& which);

// buffers_bytes of the buffers the analysis says the kernel reads (`args` as set): the bytes the
// check of the launch's job weighs (bytes_read), known before the job is made and before anything
// is read or built for the other devices.
uint64_t buffers_read_bytes(Services& services, const kernel::KernelInfo& info,
                            const std::vector<model::KernelArgValue>& args);

// The rule of moves_keep_on_home before the launch's job is made, for a kernel without loops (into new
// memory): whether it keeps the launch on home over `early_sharing` (the devices ready or to be built,
// less the late ones still waiting) and, where it differs, over `participants` (with them). More
// devices can mean fewer moves, each receiving less, so a launch stays only where both sets keep it:
// one the job's check would keep there too. It weighs the bytes that check weighs: those of the
// buffers the kernel reads (buffers_read_bytes), and where they keep it, those of the footprint of all
// its work-groups (footprint_bytes_read of a job bound and shaped here alone, with the app's local size
// or make_geometry's without the driver's limit: the footprint of all the work-groups hardly depends on
// it; a launch that could not be bound, whose job would not be split, by its buffers alone).
bool reads_keep_on_home_before_job(Services& services, int home, const std::vector<int>& early_sharing,
                                   const std::vector<int>& participants, const kernel::KernelInfo& info,
                                   const std::vector<model::KernelArgValue>& args, unsigned work_dim,
                                   const size_t* offset, const size_t* global, const size_t* local,
                                   const std::string& home_key,
                                   const std::function<std::optional<double>(const std::vector<int>&)>& split_seconds);

}  // namespace coex::exec
