#!/usr/bin/env python3
"""How auto weighs what a first split would move (docs/design.md, "Size by time"): a launch with much
data for the other devices is timed on home first, into new memory at its speed, and by the footprint
of the launch, not the whole buffers it is given. The same runner as layer_checks.py: each check runs a
test app bare and under coex on real PoCL devices.
Usage: moves_checks.py --build DIR --source DIR CHECK
"""
import json
import os
import sys

import layer_checks
from first_launches import FirstLaunches, expect_first_launch
from layer_checks import expect, expect_timed, run


class MovesChecks(FirstLaunches, layer_checks.Checks):
    def check_data_first_timed(self):
        # Under auto a launch whose read data the other devices would take longer to receive (at
        # kNominalTransferGBs) than min_split_seconds runs on home first and is timed (docs/design.md,
        # "Size by time"): vector_add's first launch (8 MiB read) with min_split_seconds at 0.1 ms.
        # Under static, which does not time first, it is split. Under auto the rule keeps it on home
        # whether the analysis ended before it (`too_small`) or not (`preparing`: the launch then does
        # not wait for the analysis, and is timed all the same; with COEX_FAULT=slow_analysis every
        # time, on a loaded 2-core machine either way); without the rule it waits for the analysis and
        # is split.
        for policy, splits in (("auto", False), ("static", True)):
            first = self.vector_add_first_launch("data-first-" + policy, {
                "COEX_POLICY": policy, "COEX_MIN_SPLIT_SECONDS": "0.0001", "COEX_AUTO_ANALYSIS_WAIT": "30"})
            expect_first_launch(first, None if splits else ("too_small", "preparing"), "under " + policy)

    def check_fresh_memory_first_timed(self):
        # A kernel without loops whose first split would move the other CPU device's share of what it
        # reads into that device's new buffers at auto_fresh_memory_gbs (docs/design.md, "Size by
        # time"): vector_add's first launch (vadd, 8 MiB read, 4 MiB to the other device) with
        # min_split_seconds at 2 ms runs on home first under auto where new memory takes writes at
        # 0.5 GB/s (the host copy's fill of those 4 MiB, then the device's receipt of them: 16.8 ms),
        # and is split where it is faster than the nominal 8 GB/s (0.5 ms).
        for gbs, splits in (("0.5", False), ("1000", True)):
            first = self.vector_add_first_launch("fresh-memory-" + gbs, {
                "COEX_POLICY": "auto", "COEX_MIN_SPLIT_SECONDS": "0.002", "COEX_AUTO_ANALYSIS_WAIT": "30",
                "COEX_AUTO_FRESH_MEMORY_GBS": gbs})
            expect_first_launch(first, None if splits else ("too_small", "preparing"),
                                "with new memory at %s GB/s" % gbs)

    def check_part_of_buffers(self):
        # tests/layer/part_of_buffers: a kernel without loops over the first sixteenth of two 16 MiB
        # buffers, launches of about 16 ms on one basic device, a user's first coex run (PoCL's cache
        # filled by the bare run). With new memory at 0.5 GB/s, its whole buffers' share for device 1
        # (16 MiB, filled into the host copy and then received) would take 67 ms: every launch stayed
        # on home (`too_small`), the split never tried. Its footprint's share (1 MiB) takes 4 ms,
        # below min_split_seconds: once the program is read, its launches split (read in the app's
        # process: `compile_ahead` off, whose process under AddressSanitizer outlasted the run),
        # and whether the splits pay is auto's verdict (`one_device_pays` on a loaded machine, where
        # device 1's thread finds no free core): the check asks that splits were tried and that the
        # moves kept few launches on home.
        app = os.path.join(self.build, "tests", "layer", "part_of_buffers")
        launches = 200
        pocl = {"POCL_DEVICES": "basic basic", "POCL_CACHE_DIR": os.path.join(self.tmp, "part-of-buffers-pocl")}
        rc, bare, err = run([app, str(launches)], pocl)
        expect(rc == 0 and "PASS" in bare, "part_of_buffers fails bare: exit %d\n%s%s" % (rc, bare, err))
        report = os.path.join(self.tmp, "part-of-buffers-report.json")
        env = dict(pocl, COEX_POLICY="auto", COEX_AUTO_FRESH_MEMORY_GBS="0.5", COEX_COMPILE_AHEAD="false",
                   COEX_REPORT=report, COEX_CACHE=os.path.join(self.tmp, "part-of-buffers-history.json"))
        rc, out, err = run([app, str(launches)], env, self.layer)
        expect(rc == 0 and out == bare, "exit %d, output:\n%s\nstderr:\n%s" % (rc, out, err))
        with open(report) as f:
            kernel = json.load(f)["kernels"][0]
        expect(kernel["launches"] == launches, "%d launches in the report" % kernel["launches"])
        kept = kernel["not_split"].get("too_small", 0)
        expect_timed(kernel["split_launches"] >= 1 and kept <= launches // 10,
                     "%d of %d launches split, %d too_small (%s)" % (kernel["split_launches"], launches, kept,
                                                                    kernel["not_split"]))


if __name__ == "__main__":
    sys.exit(layer_checks.main(MovesChecks, "coex-moves-check-"))
