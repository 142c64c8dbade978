// How many `coex compile-ahead` processes may run at once where the setting leaves it to coex
// (exec/compile_ahead.h): the cores the PoCL CPU devices in use leave free, at least one, at most four.
// And which work-group function variants a process asks PoCL for, and which devices it lists.
#include <gtest/gtest.h>

#include "exec/compile_ahead.h"
#include "exec/compile_ahead_kinds.h"
#include "exec/compile_ahead_request.h"

namespace {

using coex::exec::compile_ahead::default_process_limit;
using coex::exec::compile_ahead::pocl_devices_entry;
using coex::exec::compile_ahead::variants_for;

TEST(CompileAheadProcesses, TheCoresTheDevicesLeave) {
  EXPECT_EQ(default_process_limit(16, 8), 4u);   // eight single-threaded devices on 16 cores: capped
  EXPECT_EQ(default_process_limit(16, 14), 2u);  // a 4-thread device and ten single-threaded ones
  EXPECT_EQ(default_process_limit(4, 3), 1u);
}

TEST(CompileAheadProcesses, AtLeastOne) {
  EXPECT_EQ(default_process_limit(2, 2), 1u);   // two `basic` devices on two cores
  EXPECT_EQ(default_process_limit(2, 16), 1u);  // a threaded device wider than the machine's cores
  EXPECT_EQ(default_process_limit(0, 0), 1u);   // cores unknown
}

TEST(CompileAheadVariants, SmallGridsAtBothOffsets) {
  const size_t local[2] = {16, 16};
  EXPECT_EQ(variants_for(2, local), "16-16-1-smallgrid,16-16-1-goffs0-smallgrid");
  EXPECT_EQ(variants_for(2, nullptr), "");  // no local size: none to name
  EXPECT_EQ(variants_for(0, local), "");
}

TEST(CompileAheadVariants, OneDimension) {
  // A wide launch's chunks run in small-grid pieces (split_device_thread.cpp): no wide variant is asked for.
  const size_t local[1] = {256};
  EXPECT_EQ(variants_for(1, local), "256-1-1-smallgrid,256-1-1-goffs0-smallgrid");
  EXPECT_EQ(variants_for(4, local), "");
}

TEST(CompileAheadDevices, OneDriverOfTheAppsListAlone) {
  EXPECT_EQ(pocl_devices_entry("cpu-minimal cpu-minimal cpu-minimal", 3), "cpu-minimal");
  EXPECT_EQ(pocl_devices_entry("  basic  basic ", 2), "basic");  // spaces around and between
  EXPECT_EQ(pocl_devices_entry("pthread", 1), "pthread");
}

TEST(CompileAheadDevices, EachDriverOnceInTheListsOrder) {
  // The mixed set: one device of each driver, found by name in the process (PoCL numbers the devices
  // driver by driver, not in the list's order).
  EXPECT_EQ(pocl_devices_entry("cpu cpu-minimal cpu-minimal", 3), "cpu cpu-minimal");
  EXPECT_EQ(pocl_devices_entry("basic pthread basic", 3), "basic pthread");
}

TEST(CompileAheadDevices, AsTheAppListsWhereTheListDoesNotNameOneDeviceAnEntryOfOneDriver) {
  EXPECT_EQ(pocl_devices_entry(nullptr, 1), "");  // PoCL's default devices
  EXPECT_EQ(pocl_devices_entry("", 1), "");
  EXPECT_EQ(pocl_devices_entry("cpu remote", 3), "");    // a driver of several devices
  EXPECT_EQ(pocl_devices_entry("basic basic", 3), "");   // more devices than entries
  EXPECT_EQ(pocl_devices_entry("basic\tbasic", 2), "");  // PoCL splits on spaces alone
}

}  // namespace

TEST(CompileAheadVariantProcesses, TwoATargetWhereSpareCoresGiveEachOneACore) {
  using coex::exec::compile_ahead::variant_processes;
  EXPECT_EQ(variant_processes(16, 8, 1, 0), 2);  // eight single-threaded devices on 16 cores
  EXPECT_EQ(variant_processes(16, 8, 2, 0), 2);  // the mixed set: home's kind and one other, four processes
  EXPECT_EQ(variant_processes(16, 8, 2, 1), 2);  // beside one running: eight cores for eight
  EXPECT_EQ(variant_processes(16, 8, 2, 2), 1);
  EXPECT_EQ(variant_processes(16, 15, 1, 0), 1);  // fifteen devices: one core spare
  EXPECT_EQ(variant_processes(2, 2, 1, 0), 1);    // two `basic` devices on two cores
  EXPECT_EQ(variant_processes(4, 2, 1, 0), 2);
  EXPECT_EQ(variant_processes(2, 16, 1, 0), 1);  // a threaded device wider than the machine's cores
}
