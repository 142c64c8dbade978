// How fast this machine hands a program memory it has not touched yet. A CPU device's buffers are
// host memory, and a split's first moves to such a device write its new buffers: each page's first
// write is a fault the kernel serves (it zeroes the page) before the copy goes on. On the 2-core
// development machine a new 64 MB array filled at 0.74 GB/s and the same array again at 22.7 GB/s;
// benchmarks/saxpy's first split moved 17.8 MB to a second PoCL `basic` device in 164 ms
// (docs/testbed.md, "Latest runs"; docs/design.md, "Size by time").
#pragma once

namespace coex::devices {

// Bytes written into a new anonymous mapping of this size when the speed is measured: 256 pages
// of 4 KiB, each a fault.
inline constexpr unsigned long kFreshMemoryProbeBytes = 1ul << 20;

// GB/s of writes into fresh pages, measured once, at the first call (3 to 7 ms on the 2-core
// development machine, 0.14 to 0.37 GB/s from one mapping to the next, on the app's thread); 0
// where the mapping failed.
double fresh_memory_gbs();

// The speed of fresh memory a first split's moves are weighed at: `given` where positive (the
// setting auto_fresh_memory_gbs), else fresh_memory_gbs(), measured only where it could matter, where
// the moves into new memory at a hundredth of the nominal speed (`slowest_seconds`) would take
// `threshold_seconds` or more (a program of small launches measures nothing); 0 otherwise (the
// nominal speed).
double fresh_memory_gbs_where_it_matters(double given, double slowest_seconds, double threshold_seconds);

}  // namespace coex::devices
