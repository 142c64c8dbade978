// Devices held back by their specification (docs/design.md, "Size by time"): beside a home much
// faster (a CPU beside a GPU), auto gives a device no build, context or share until a launch is long
// enough on home for the share it promises.
#pragma once

#include <functional>
#include <optional>
#include <vector>

namespace coex::exec {

class Services;

// The devices of `devices` that sit a launch out, with no build posted for them nor context made, until
// a launch of its kernel and size is measured longer on home (`home_seconds`; none yet: nullopt). Under
// a policy that does not wait for preparation (auto), a device that promises, by its specification,
// more than TakeOverRules::slow_by_specification times less than home (a CPU beside a GPU) could save
// at most the share of the launch its specification promises, so a split may pay there only where
// that share of home's time is at least min_split_seconds (beside an H100 the CPU promises 1.5%:
// launches of 0.66 s and more). A build begun before would cost CPU time beside the app's device and
// hold the app's exit, for nothing when no launch is that long (docs/design.md, "Size by time"). With
// no device left but home, the launch is `too_small`; with others left, it is split over them and not
// timed on home: then `split_seconds` (the measured time of such a split over the devices it is
// given) scaled to home alone by the specifications stands in for home's time.
std::vector<int> devices_held_back(
    Services& services, int home, const std::vector<int>& devices, std::optional<double> home_seconds,
    const std::function<std::optional<double>(const std::vector<int>&)>& split_seconds = nullptr);

// `devices` without those of `held_back`.
std::vector<int> devices_without(std::vector<int> devices, const std::vector<int>& held_back);

}  // namespace coex::exec
