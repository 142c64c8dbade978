// How fast this machine hands a program memory it has not touched yet. A CPU device's buffers are
// host memory, and a split's first moves to such a device write its new buffers: each page's first
// write is a fault the kernel serves (it zeroes the page) before the copy goes on. On the 2-core
// development machine a new 64 MB array filled at 0.74 GB/s and the same array again at 22.7 GB/s;
// benchmarks/saxpy's first split moved 17.8 MB to a second PoCL `basic` device in 164 ms
// (docs/testbed.md, "Latest runs"; docs/design.md, "Size by time").
#pragma once

namespace coex::devices {

// Bytes written into a new anonymous mapping of this size when the speed is measured.
inline constexpr unsigned long kFreshMemoryProbeBytes = 4ul << 20;

// GB/s of writes into fresh pages, measured once, at the first call (a few milliseconds at most on
// the machines measured); 0 where the mapping failed.
double fresh_memory_gbs();

}  // namespace coex::devices
