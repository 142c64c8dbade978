// The size rules a launch meets before auto splits it (docs/design.md, "Size by time"): how many
// work-items home needs to be worth a split, and what a first split must move before it can gain.
// Devices held back by their specification: exec/held_back_devices.h.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace coex::exec {

class Services;

// sched::min_split_items_on for the device numbered `home`.
uint64_t min_split_items(Services& services, int home);

// Under auto, the seconds a first split of `bytes` over `sharing` would spend moving the other
// devices' share to them (sched::others_transfer_seconds), where that is at least min_split_seconds
// and the History has no split of the launch over `sharing` at its size (`split_seconds`): such a
// launch is timed on home first. nullopt otherwise. `into_fresh_memory`: a kernel without loops,
// whose launch may take no longer than its moves into a CPU device's new buffers take
// (devices/host_memory.h).
std::optional<double> first_split_moves(
    Services& services, int home, std::vector<int> sharing, uint64_t bytes,
    const std::function<std::optional<double>(const std::vector<int>&)>& split_seconds, bool into_fresh_memory);

}  // namespace coex::exec
