#!/usr/bin/env python3
"""coex-specific checks that the differential harness does not cover: bad configuration, the
kill switch, injected faults, device selection, the trace, the write-behind of a failed split, lazy
home and results kept on the devices. The runner and helpers here serve the other check scripts too
(compile_checks.py, compile_ahead_checks.py, launcher_checks.py, auto_checks.py, moves_checks.py, report_checks.py).

Each check runs a test app (tests/apps) bare and under coex on real PoCL devices and requires the
same output, plus what the check is about. Usage: layer_checks.py --build DIR --source DIR CHECK
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time


class Failure(Exception):
    pass


class TimingFailure(Failure):
    """A bound on how long something took, or on what a time coex measured decided, was missed. The
    check runs once more before it fails (main): a loaded machine stretches every time, most of all
    under a sanitizer on two cores, where other tests run beside it. A wrong output, an exit code or a
    sanitizer's report is a plain Failure and never runs again."""


# What a sanitizer prints where it finds an error: a run that printed one fails its check at once.
SANITIZER_REPORTS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "WARNING: ThreadSanitizer",
                     "runtime error:")


# The history file of every run that names none: the check's own, never the user's ~/.cache/coex.
HISTORY = None

# Under auto a first split of a kernel without loops weighs what it moves into the other CPU devices'
# new buffers at the speed of fresh memory (docs/design.md, "Size by time"): vector_add's first launch
# (4 MiB to the other device) stays on home where new memory is slow (0.3 GB/s on a 2-core virtual
# machine). The checks that need its launches split take new memory to be as fast as the nominal rate.
FAST_FRESH_MEMORY = {"COEX_AUTO_FRESH_MEMORY_GBS": "1000"}


def coex_env(env_extra=None, layer=None):
    """The environment of a check's run: none of the caller's COEX_ settings, the check's history."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("COEX_") and k != "OPENCL_LAYERS"}
    # static: every device gets work in every launch, so injected faults and per-device traces show
    # deterministically (auto may rightly leave a device out, from the history of earlier runs).
    env["COEX_POLICY"] = "static"
    # No binaries kept from run to run (exec/kept_binaries.h) unless a check asks: builds from source
    # take the time the checks of one-time costs are about. check_kept_binaries names its own folders.
    env["COEX_BINARY_CACHE"] = "off"
    if HISTORY:
        env["COEX_CACHE"] = HISTORY
    if layer:
        env["OPENCL_LAYERS"] = layer
    env.update(env_extra or {})
    return env


def run(cmd, env_extra=None, layer=None, timeout=60):
    env = coex_env(env_extra, layer)
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    err = p.stderr.decode(errors="replace")
    found = [r for r in SANITIZER_REPORTS if r in err]
    if found:
        raise Failure("%s: %s in its output:\n%s" % (" ".join(cmd), found[0], err))
    return p.returncode, p.stdout.decode(errors="replace"), err


def expect(cond, what):
    if not cond:
        raise Failure(what)


def expect_timed(cond, what):
    """expect for what depends on times: a miss runs the check once more (TimingFailure)."""
    if not cond:
        raise TimingFailure(what)


def not_split_reasons(report):
    """The report's reasons for launches not split, summed over its kernels."""
    reasons = {}
    for k in report["kernels"]:
        for r, n in k["not_split"].items():
            reasons[r] = reasons.get(r, 0) + n
    return reasons


class Checks:
    def __init__(self, build, source, tmp):
        self.build, self.source, self.tmp = build, source, tmp
        self.layer = os.path.join(build, "libcoex.so")
        self.coex = os.path.join(build, "coex")
        self.app = os.path.join(build, "tests", "apps", "vector_add")
        rc, self.bare_out, _ = run([self.app])
        expect(rc == 0 and self.bare_out.strip().endswith("PASS"), "the app fails bare")
        self.report = os.path.join(tmp, "report.json")

    def under_coex(self, env, cmd=None, via_layer=True):
        rc, out, err = run(cmd or [self.app], env, self.layer if via_layer else None)
        expect(rc == 0, "exit status %d under coex; stderr:\n%s" % (rc, err))
        expect(out == self.bare_out, "output differs from the bare run:\n%s\nstderr:\n%s" % (out, err))
        return err

    def load_report(self):
        expect(os.path.exists(self.report), "no report was written")
        with open(self.report) as f:
            return json.load(f)

    def not_split_reasons(self):
        return not_split_reasons(self.load_report())

    def config_error_line(self, env, *needles):
        err = self.under_coex(dict(env, COEX_REPORT=self.report))
        lines = [l for l in err.splitlines() if l.startswith("coex: ")]
        expect(len(lines) == 1, "expected one error line, got:\n%s" % err)
        for n in needles:
            expect(n in lines[0], "the error line lacks %r: %s" % (n, lines[0]))
        expect(not os.path.exists(self.report), "coex ran (wrote a report) despite a bad configuration")

    def check_bad_config_value(self):
        path = os.path.join(self.tmp, "bad.json")
        with open(path, "w") as f:
            json.dump({"policy": "fastest"}, f)
        self.config_error_line({"COEX_CONFIG": path}, path, '"policy"', "fastest", "static")

    def check_bad_config_json(self):
        path = os.path.join(self.tmp, "broken.json")
        with open(path, "w") as f:
            f.write('{"policy": "static",\n')
        self.config_error_line({"COEX_CONFIG": path}, path)

    def check_unknown_config_key(self):
        path = os.path.join(self.tmp, "unknown.json")
        with open(path, "w") as f:
            json.dump({"polcy": "static"}, f)
        self.config_error_line({"COEX_CONFIG": path}, path, '"polcy"')

    def check_bad_env_value(self):
        self.config_error_line({"COEX_MIN_SPLIT_WORK_ITEMS": "lots"}, "COEX_MIN_SPLIT_WORK_ITEMS", "lots")

    def check_disable(self):
        self.under_coex({"COEX_DISABLE": "1", "COEX_REPORT": self.report})
        expect(not os.path.exists(self.report), "COEX_DISABLE=1 still wrote a report")

    def check_single_device(self):
        self.under_coex({"COEX_DEVICES": "0", "COEX_REPORT": self.report})
        r = self.load_report()
        expect(r["totals"]["split_launches"] == 0, "a launch was split on one device")
        expect(self.not_split_reasons().get("single_device", 0) == r["totals"]["launches"],
               "not_split: %s" % self.not_split_reasons())

    def check_build_failure(self):
        err = self.under_coex({"COEX_FAULT": "build:1", "COEX_REPORT": self.report, "COEX_LOG": "warn"})
        expect("cannot build" in err, "the failed build was not logged:\n" + err)
        reasons = self.not_split_reasons()
        expect(reasons.get("devices_unavailable", 0) > 0, "not_split: %s" % reasons)

    def check_sub_launch_failure(self):
        err = self.under_coex({"COEX_FAULT": "fail:1", "COEX_REPORT": self.report, "COEX_LOG": "warn"})
        expect("failed" in err, "the failed sub-launch was not logged:\n" + err)
        reasons = self.not_split_reasons()
        expect(reasons.get("sub_launch_failed", 0) > 0, "not_split: %s" % reasons)

    def run_with_fault(self, app, fault):
        # tests/apps/APP bare, then under coex with COEX_FAULT=FAULT and a History of its own: it must
        # exit 0 with the bare output. Returns its stderr, its report, the work-items the report
        # counts on device 1 and device 1's samples in the History it left.
        path = os.path.join(self.build, "tests", "apps", app)
        rc, bare, _ = run([path])
        expect(rc == 0, "%s fails bare" % app)
        cache = os.path.join(self.tmp, "history-%s-%s.json" % (app, fault.replace(":", "-")))
        env = {"COEX_FAULT": fault, "COEX_REPORT": self.report, "COEX_LOG": "info", "COEX_CACHE": cache}
        rc, out, err = run([path], env, self.layer, timeout=60)
        expect(rc == 0 and out == bare, "%s under COEX_FAULT=%s: exit %d, output:\n%s\nstderr:\n%s"
               % (app, fault, rc, out, err))
        r = self.load_report()
        os.remove(self.report)
        on_1 = sum(p["work_items"] for k in r["kernels"] for p in k["per_device"] if p["index"] == 1)
        with open(cache) as f:
            history = json.load(f)
        samples = [s for k in history["kernels"] for s in k["devices"].get("1", {}).get("samples", [])]
        return err, r, on_1, samples

    def check_stalled_device(self):
        # Device 1's sub-launches wait for an event that never completes (home is device 0). The
        # first split must end anyway, its work redone on home, and device 1 sit out the launches
        # after it; the app's output stays the bare one, and it exits in bounded time.
        for app in ("vector_add", "matmul"):
            err, r, on_1, samples = self.run_with_fault(app, "stall:1")
            expect("redid" in err, "%s: no redo was logged:\n%s" % (app, err))
            split = sum(k["split_launches"] for k in r["kernels"])
            busy = sum(k.get("not_split", {}).get("devices_busy", 0) for k in r["kernels"])
            expect(split >= 1 and on_1 == 0, "%s: %d split launches, %d work-items counted on the stalled device"
                   % (app, split, on_1))
            expect(busy == r["totals"]["launches"] - split - sum(
                n for k in r["kernels"] for reason, n in k.get("not_split", {}).items() if reason != "devices_busy"),
                "%s: launches after the stall did not leave device 1 out: %s" % (app, r["kernels"]))
            # The History holds the stalled sub-launch once, with its whole time (it returned when
            # coex stopped and completed the stall): at least the 5 s after which a stall is taken over.
            expect(len(samples) == 1 and samples[0][1] >= 5.0,
                   "%s: device 1's samples in the History: %s (expected one of at least 5 s)" % (app, samples))

    def check_upload_stalled_device(self):
        # Device 1's chunk preparations never end (COEX_FAULT=stall_upload:1): home, out of work, takes
        # the chunk over while device 1 is still uploading (after 5 s: their specifications are
        # equal, so only the stall rule applies), device 1 stops without starting its sub-launch, and
        # the launch ends once it has. The app's output stays the bare one; device 1 is not busy after
        # (no devices_busy), and the History holds the bound its preparation gave: at least 5 s.
        err, r, on_1, samples = self.run_with_fault("vector_add", "stall_upload:1")
        expect("still uploading" in err and "redid" in err, "no take-over of the upload was logged:\n" + err)
        split = sum(k["split_launches"] for k in r["kernels"])
        busy = sum(k.get("not_split", {}).get("devices_busy", 0) for k in r["kernels"])
        expect(split >= 1 and on_1 == 0 and busy == 0,
               "%d split launches, %d work-items on device 1, %d launches with it busy" % (split, on_1, busy))
        expect(samples and min(s[1] for s in samples) >= 5.0,
               "device 1's samples in the History: %s (expected each of at least 5 s)" % samples)

    def check_hung_upload_device(self):
        # Device 1's chunk preparation lasts 20 s and never looks at the take-over
        # (COEX_FAULT=hung_upload:1, a transfer to a server that went away): home takes the chunk
        # over once the preparation has lasted as long as a stall (5 s), device 1 is cancelled but
        # does not leave, and after SplitProgress::kLeaveBehindSeconds more the launch ends without
        # it: device 1 is left behind like an abandoned device (busy: the later launches leave it
        # out) instead of the launch waiting the 20 s. The app's output stays the bare one.
        started = time.monotonic()
        err, r, on_1, _ = self.run_with_fault("vector_add", "hung_upload:1")
        elapsed = time.monotonic() - started
        busy = sum(k.get("not_split", {}).get("devices_busy", 0) for k in r["kernels"])
        expect("upload has not returned" in err and "redid" in err,
               "no take-over of the upload, or no device left behind, was logged:\n" + err)
        expect(on_1 == 0 and busy >= 1,
               "%d work-items on device 1, %d launches with it busy (expected it left behind):\n%s"
               % (on_1, busy, err))
        expect(elapsed < 45, "the run took %.0f s" % elapsed)

    def check_late_started_device(self):
        # Device 1's sub-launch reaches the driver only after home took it over and the process began
        # to exit (COEX_FAULT=late_start:1), when vector_add has released its buffers, kernels,
        # program and context: the abandoned sub-launch must still find the objects it was bound to
        # (it crashed there, ~1 run in 13 of the test apps under boyer on two pthread devices). The
        # app exits 0 with the bare output, and the History holds device 1's late time once.
        err, r, on_1, samples = self.run_with_fault("vector_add", "late_start:1")
        expect("redid" in err and "waiting up to" in err,
               "no take-over, or no wait at exit for the device taken over, was logged:\n" + err)
        expect(sum(k["split_launches"] for k in r["kernels"]) >= 1 and on_1 == 0,
               "work-items counted on device 1: %d (its only sub-launch was redone on home)" % on_1)
        expect(len(samples) == 1 and samples[0][1] >= 5.0,
               "device 1's samples in the History: %s (expected one of at least 5 s)" % samples)

    def check_thrown_device(self):
        # Device 1's thread throws in its third and fourth sub-launches once home has taken them over
        # (COEX_FAULT=throw_late:1@3: vector_add's last two launches, one sub-launch each under
        # static). The launch may be over then: the thread touches nothing of it, and tells its return
        # as an abandoned device's would, so that device 1 is not left out of later launches as a
        # device still busy, and the History holds each late time. The output is the bare one. The
        # fourth launch follows the third at once: under load it may be planned before device 1's
        # thread has seen the take-over and thrown (one launch `devices_busy`, one take-over, one
        # sample). A return never told leaves device 1 busy from the third launch on and its sample
        # out of the History (its thread is idle at exit, not left behind): no sample at all.
        err, r, on_1, samples = self.run_with_fault("vector_add", "throw_late:1@3")
        busy = sum(k.get("not_split", {}).get("devices_busy", 0) for k in r["kernels"])
        expect(busy <= 1, "%d launches left device 1 out as busy after its thread threw: %s" % (busy, r["kernels"]))
        expect(err.count("redid") == 2 - busy, "expected %d take-overs logged:\n%s" % (2 - busy, err))
        expect(len(samples) == 2 - busy and min(s[1] for s in samples) >= 5.0,
               "device 1's samples in the History: %s (expected %d of at least 5 s)" % (samples, 2 - busy))

    def check_trace(self):
        trace = os.path.join(self.tmp, "trace.json")
        self.under_coex({"COEX_TRACE": trace})
        with open(trace) as f:
            events = json.load(f)["traceEvents"]
        kernels = {e["tid"] for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"}
        expect(kernels >= {0, 1}, "kernel slices on tracks %s, expected 0 and 1" % sorted(kernels))
        names = {e["tid"] for e in events if e.get("ph") == "M"}
        expect(names >= {0, 1}, "track names for %s" % sorted(names))

    def check_lazy_home(self):
        # What the other device wrote reaches the app's buffer when the app reads it (lazy home,
        # exec/home_sync.h): tests/layer/lazy_home reads after clFinish, so those bytes are written
        # on demand, and the splits themselves write home less than with lazy_home off, which writes
        # everything home at the end of each launch.
        app = os.path.join(self.build, "tests", "layer", "lazy_home")
        rc, bare, _ = run([app])
        expect(rc == 0 and bare.strip().endswith("PASS"), "lazy_home fails bare")
        written = {}
        for lazy in ("true", "false"):
            rc, out, err = run([app], {"COEX_LAZY_HOME": lazy, "COEX_REPORT": self.report}, self.layer)
            expect(rc == 0 and out == bare, "lazy_home=%s: output differs from the bare run:\n%s\n%s" % (lazy, out, err))
            r = self.load_report()
            step = next(k for k in r["kernels"] if k["name"] == "advance")
            expect(step["split_launches"] == 11, "lazy_home=%s: %d split launches, expected 11" % (lazy, step["split_launches"]))
            written[lazy] = (r["totals"]["bytes_home_on_demand"], step["bytes_by_step"]["host_to_home"])
            os.remove(self.report)
        expect(written["true"][0] > 0, "nothing was written home on demand: %s" % written)
        expect(written["false"][0] == 0, "lazy_home=false still wrote home on demand: %s" % written)
        expect(written["true"][1] < written["false"][1],
               "the splits wrote as much home with lazy_home on as off: %s" % written)

    def check_write_behind_failed_split(self):
        # A launch whose input the app writes in a command queued behind it, over three devices, with
        # device 1's first sub-launch failing (COEX_FAULT=fail:1@1): the launch runs again on home, and
        # the copies its preparation made (the input before the write, in the host copy and device 2's
        # shadow) must not count current after the write. The next launch, over home and device 2,
        # reads the written input (tests/layer/write_behind_launch.c). Without the fault too.
        app = os.path.join(self.build, "tests", "layer", "write_behind_launch")
        rc, bare, _ = run([app])
        expect(rc == 0 and bare.strip().endswith("PASS"), "write_behind_launch fails bare")
        three = " ".join([os.environ.get("POCL_DEVICES", "pthread").split()[0]] * 3)
        for fault in ("fail:1@1", ""):
            rc, out, err = run([app], {"POCL_DEVICES": three, "COEX_FAULT": fault, "COEX_REPORT": self.report},
                               self.layer)
            expect(rc == 0 and out == bare, "COEX_FAULT=%s: output differs from the bare run:\n%s\n%s"
                   % (fault, out, err))
            r = self.load_report()
            os.remove(self.report)
            split = sum(k["split_launches"] for k in r["kernels"])
            failed = sum(k.get("not_split", {}).get("sub_launch_failed", 0) for k in r["kernels"])
            expect(split == (1 if fault else 2) and failed == (1 if fault else 0),
                   "COEX_FAULT=%s: %d split launches, %d failed sub-launches: %s" % (fault, split, failed, r["kernels"]))

    def check_merge_write_failed(self):
        # The app writes the last quarter of a split launch's output in a command queued behind it, so
        # the merge writes home at once, and that write of device 1's results fails
        # (COEX_FAULT=merge_write:1): the launch's results stay where they are, but for the quarter the
        # app wrote, and the app's read of the output gets them (written home before it runs) with the
        # app's quarter (tests/layer/write_behind_launch.c, "output"). Before, the failed merge forgot
        # every copy (the app had written the buffer), and the read got home's bytes from before the
        # launch.
        app = os.path.join(self.build, "tests", "layer", "write_behind_launch")
        rc, bare, _ = run([app, "output"])
        expect(rc == 0 and bare.strip().endswith("PASS"), "write_behind_launch output fails bare")
        for fault in ("merge_write:1", ""):
            rc, out, err = run([app, "output"], {"COEX_FAULT": fault, "COEX_REPORT": self.report}, self.layer)
            expect(rc == 0 and out == bare, "COEX_FAULT=%s: output differs from the bare run:\n%s\n%s"
                   % (fault, out, err))
            r = self.load_report()
            os.remove(self.report)
            split = sum(k["split_launches"] for k in r["kernels"])
            failed = sum(k.get("not_split", {}).get("merge_failed", 0) for k in r["kernels"])
            # The first launch's merge writes home at once (the app's write is queued behind it) and
            # fails. The second's does too where the app's read is enqueued before that launch ends
            # (then the read gets its results from what home lacks, written home before it runs), and
            # merges lazily where the read comes after: one or two failed merges, by timing.
            expect(split + failed == 2 and (failed >= 1 if fault else failed == 0),
                   "COEX_FAULT=%s: %d split launches, %d failed merges: %s" % (fault, split, failed, r["kernels"]))

    def check_resident_results(self):
        # What device 1 writes stays there (exec/resident_results.h): the stencil's later launches
        # fetch only halos from it, and the app's reads get the rest. Faults injected from a later
        # sub-launch of device 1 on hit while it alone holds results: the reruns on home fetch them.
        app = os.path.join(self.build, "tests", "layer", "resident_results")
        rc, bare, _ = run([app])
        expect(rc == 0 and bare.strip().endswith("PASS"), "resident_results fails bare")
        fetched = {}
        for resident in ("true", "false"):
            rc, out, err = run([app], {"COEX_RESIDENT_RESULTS": resident, "COEX_REPORT": self.report}, self.layer)
            expect(rc == 0 and out == bare, "resident_results=%s: output differs from the bare run:\n%s\n%s"
                   % (resident, out, err))
            r = self.load_report()
            smooth = next(k for k in r["kernels"] if k["name"] == "smooth")
            expect(smooth["split_launches"] == 18, "resident_results=%s: %d split launches of smooth, expected 18"
                   % (resident, smooth["split_launches"]))
            fetched[resident] = (smooth["bytes_by_step"]["devices_to_host"], r["totals"]["bytes_fetched_on_demand"])
            os.remove(self.report)
        # Off: device 1's half (131072 bytes) comes back after each of the 18 launches. On: a halo
        # of 4 bytes per launch, but for the last launch before the app's final reads, which were
        # enqueued while it ran and so has it fetch that half; the app's other reads fetch the rest.
        expect(fetched["true"][0] * 10 < fetched["false"][0],
               "devices_to_host of smooth, resident on / off: %s" % fetched)
        expect(fetched["true"][1] > 0 and fetched["false"][1] == 0, "fetched on demand, on / off: %s" % fetched)
        # Over three devices each of the two others holds alone a halo the other's chunk needs: the
        # launch fetches those before any device runs (exec/chunk_preparation.cpp, fetch_first_chunks_halos);
        # and again where device 2 fails mid-run and its ranges run again on home.
        three = " ".join([os.environ.get("POCL_DEVICES", "pthread").split()[0]] * 3)
        for fault in (None, "fail:2@8"):
            env = {"POCL_DEVICES": three, "COEX_REPORT": self.report}
            if fault:
                env["COEX_FAULT"] = fault
            rc, out, err = run([app], env, self.layer, timeout=90)
            expect(rc == 0 and out == bare, "three devices, fault %s: exit %d, output differs from the bare run:\n%s\n%s"
                   % (fault, rc, out, err))
            smooth = next(k for k in self.load_report()["kernels"] if k["name"] == "smooth")
            expect(fault or smooth["split_launches"] == 18,
                   "three devices: %d split launches of smooth, expected 18" % smooth["split_launches"])
            os.remove(self.report)
        # Device 1's sub-launches: 12 smooth, 6 bump, 6 smooth, one each under static. @8: a smooth
        # launch; @14: the second in-place bump; the stall, with the device's queue blocked, leaves
        # the fetch queue to serve the rerun.
        for fault in ("fail:1@8", "fail:1@14", "stall:1@14"):
            env = {"COEX_FAULT": fault, "COEX_REPORT": self.report, "COEX_LOG": "info"}
            rc, out, err = run([app], env, self.layer, timeout=90)
            expect(rc == 0 and out == bare, "%s: exit %d, output differs from the bare run:\n%s\n%s"
                   % (fault, rc, out, err))
            r = self.load_report()
            split = r["totals"]["split_launches"]
            first = int(fault.split("@")[1])
            expect(split >= first - 1, "%s: %d split launches before the fault, expected %d" % (fault, split, first - 1))
            if fault.startswith("fail"):
                expect(self.not_split_reasons().get("sub_launch_failed", 0) >= 1,
                       "%s: not_split %s" % (fault, self.not_split_reasons()))
            else:
                expect("redid" in err, "%s: no redo was logged:\n%s" % (fault, err))
            os.remove(self.report)


def main(checks_class=None, prefix="coex-layer-check-"):
    """Runs one check of checks_class (default Checks): usage CHECKS.py --build DIR --source DIR CHECK."""
    p = argparse.ArgumentParser()
    p.add_argument("--build", required=True)
    p.add_argument("--source", required=True)
    p.add_argument("check")
    args = p.parse_args()
    for attempt in (1, 2):
        with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
            global HISTORY
            HISTORY = os.path.join(tmp, "history.json")
            try:
                checks = (checks_class or Checks)(os.path.abspath(args.build), os.path.abspath(args.source), tmp)
                getattr(checks, "check_" + args.check)()
            except TimingFailure as e:
                if attempt == 2:
                    print("FAIL %s (twice, by times): %s" % (args.check, e))
                    return 1
                print("once more, a time missed its bound: %s" % e)
                continue
            except Failure as e:
                print("FAIL %s: %s" % (args.check, e))
                return 1
        print("OK %s" % args.check)
        return 0


if __name__ == "__main__":
    sys.exit(main())
