#!/usr/bin/env python3
"""How auto weighs what a first split would move (docs/design.md, "Size by time"): by the footprint of
the launch, not the whole buffers it is given. The same runner as layer_checks.py: each check runs a
test app bare and under coex on real PoCL devices.
Usage: moves_checks.py --build DIR --source DIR CHECK
"""
import json
import os
import sys

import layer_checks
from layer_checks import expect, expect_timed, run


class MovesChecks(layer_checks.Checks):
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
