#!/usr/bin/env python3
"""coex-specific checks that the differential harness does not cover: bad configuration, the
kill switch, injected faults, device selection, the trace, and the launcher's commands.

Each check runs a test app (tests/apps) bare and under coex on real PoCL devices and requires the
same output, plus what the check is about. Usage: layer_checks.py --build DIR --source DIR CHECK
"""
import argparse
import json
import os
import re
import shutil
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

    def traced_after_bare(self, app, devices, trace, settings):
        # A user's first coex run of `app` (a path, or a command line): bare with `devices` (filling the PoCL cache of their
        # POCL_CACHE_DIR, as the runs before coex did), then under coex with `settings` and the trace
        # on, its output the bare one. The trace's slices.
        cmd = app if isinstance(app, list) else [app]
        rc, bare, _ = run(cmd, devices)
        expect(rc == 0, "%s fails bare" % " ".join(os.path.basename(a) for a in cmd))
        rc, out, err = run(cmd, dict(devices, COEX_TRACE=trace, **settings), self.layer)
        expect(rc == 0 and out == bare, "%s: exit %d, output:\n%s\nstderr:\n%s" % (settings, rc, out, err))
        with open(trace) as f:
            return [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]

    def first_runs_by_setting(self, app, setting, values, tag=""):
        # A user's first coex run of `app` over two `basic` devices under auto with the report on, once
        # for each value of COEX_<setting> (None: unset, the default), each in a PoCL cache of its own
        # that its bare run filled:
        # the value, the trace's slices and the report's compile_ahead. What these settings decide
        # (compile ahead, probe, split at once) comes after the analysis, which the first launch waits
        # for up to auto_analysis_wait: 30 s here, for a machine busy with other tests (at 0.1 s CI's
        # run of matmul's tiled product found none and ran it on home as `preparing`), and, for a kernel
        # without loops, after the rule of moves into new memory, which takes it as fast as the nominal
        # rate here (FAST_FRESH_MEMORY: on a 2-core machine two_programs' launches would stay on home
        # before any of them). `tag` keeps one call's files apart from another's of the same setting.
        label = setting.lower().replace("_", "-") + tag
        trace = os.path.join(self.tmp, label + "-trace.json")
        for value in values:
            devices = {"POCL_DEVICES": "basic basic",
                       "POCL_CACHE_DIR": os.path.join(self.tmp, "%s-pocl-%s" % (label, value))}
            settings = dict(FAST_FRESH_MEMORY, COEX_POLICY="auto", COEX_AUTO_ANALYSIS_WAIT="30", COEX_REPORT=self.report,
                            COEX_CACHE=os.path.join(self.tmp, "%s-%s.json" % (label, value)))
            if value is not None:
                settings["COEX_" + setting] = value
            slices = self.traced_after_bare(app, devices, trace, settings)
            yield value, slices, self.load_report().get("compile_ahead", {})

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

    def check_prebuild(self):
        # coex builds the program for each device at the app's clBuildProgram, on the devices'
        # threads (docs/design.md): one build slice per device, all begun before the first
        # sub-launch (built at the first launch, they held it up). The builds on one PoCL platform
        # take turns, home's (track 0) first: no split can start without it. Home builds a
        # rewritten program only (grid_stride's kernel reads get_global_size): vector_add's own
        # program serves home as it is, and only device 1 builds. Run twice: the second time with
        # serial_compiles, whose lock on first runs must not change the builds' order.
        trace = os.path.join(self.tmp, "trace.json")
        self.under_coex({"COEX_TRACE": trace})
        with open(trace) as f:
            tracks = sorted({e["tid"] for e in json.load(f)["traceEvents"] if e.get("name") == "build"})
        expect(tracks == [1], "vector_add: build slices on tracks %s, expected 1 only" % tracks)
        app = os.path.join(self.build, "tests", "apps", "grid_stride")
        rc, bare, _ = run([app])
        expect(rc == 0, "grid_stride fails bare")
        for serial in ("false", "true"):
            rc, out, err = run([app], {"COEX_TRACE": trace, "COEX_SERIAL_COMPILES": serial}, self.layer)
            expect(rc == 0 and out == bare, "grid_stride: exit %d, output:\n%s\nstderr:\n%s" % (rc, out, err))
            with open(trace) as f:
                events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
            builds = {e["tid"]: e for e in events if e.get("name") == "build"}
            expect(set(builds) == {0, 1}, "serial %s: build slices on tracks %s, expected 0 and 1" % (serial, sorted(builds)))
            first_kernel = min(e["ts"] for e in events if e.get("cat") == "kernel")
            expect(all(b["ts"] < first_kernel for b in builds.values()),
                   "serial %s: a build began after the first sub-launch" % serial)
            home, other = builds[0], builds[1]
            expect(home["ts"] + home["dur"] <= other["ts"], "serial %s: home's build did not come first: %s" % (serial, builds))

    def check_shared_binaries(self):
        # On four devices of one kind, coex builds each program from source once and from that
        # binary on the others (exec/shared_binaries.h): vector_add's is the app's own build (home
        # needs none of coex's), grid_stride's is home's build of the rewrite (its kernel reads
        # get_global_size). Under static the four run the kernel at once, home at offset zero and
        # the others not: with one build hash among them PoCL aborts (pocl_release_dlhandle_cache),
        # so each device's binary must carry a hash of its own. With share_device_binaries off,
        # every build is from source. The binary is read while no launch can run its program (a
        # launch of it running meanwhile made PoCL 5 abort): the app's own inside the app's
        # clBuildProgram, home's build of the rewrite before any chunk runs it.
        devices = {"POCL_DEVICES": "basic basic basic basic"}
        trace = os.path.join(self.tmp, "shared-binaries-trace.json")
        for app, source_builds in (("vector_add", []), ("grid_stride", [0])):
            path = os.path.join(self.build, "tests", "apps", app)
            rc, bare, _ = run([path], devices)
            expect(rc == 0, "%s fails bare" % app)
            for share in ("true", "false"):
                env = dict(devices, COEX_TRACE=trace, COEX_SHARE_DEVICE_BINARIES=share)
                rc, out, err = run([path], env, self.layer)
                expect(rc == 0 and out == bare, "%s, share %s: exit %d, output:\n%s\nstderr:\n%s"
                       % (app, share, rc, out, err))
                with open(trace) as f:
                    builds = {e["tid"]: e["args"].get("from_binary") for e in json.load(f)["traceEvents"]
                              if e.get("ph") == "X" and e.get("name") == "build"}
                others = [1, 2, 3] if share == "true" else []
                expected = {d: d in others for d in source_builds + [1, 2, 3]}
                expect(builds == expected, "%s, share %s: builds (track: from a binary) %s, expected %s"
                       % (app, share, builds, expected))
                with open(trace) as f:
                    slices = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
                reads = [e for e in slices if e["name"] == "read binary"]
                if share == "false":
                    expect(not reads, "%s, share false: binaries read: %s" % (app, reads))
                    continue
                # The app's program is read while the analysis may still run (then also for
                # grid_stride, whose rewrite is read as well): inside its clBuildProgram, on home.
                app_build = [e for e in slices if e["name"] == "clBuildProgram"]
                app_reads = [e for e in reads if e["args"].get("app_program")]
                rewrite_reads = [e for e in reads if not e["args"].get("app_program")]
                expect(all(e["tid"] == 0 for e in reads), "%s: a read off home: %s" % (app, reads))
                expect(len(app_build) == 1 and all(
                    app_build[0]["ts"] <= e["ts"] and e["ts"] + e["dur"] <= app_build[0]["ts"] + app_build[0]["dur"]
                    for e in app_reads), "%s: the app's program read outside its clBuildProgram: %s, %s"
                       % (app, app_reads, app_build))
                expect(len(rewrite_reads) == (1 if source_builds else 0) and (app_reads or source_builds),
                       "%s: reads %s" % (app, reads))
                chunks = [e["ts"] for e in slices if e["tid"] == 0 and e.get("cat") == "kernel"
                          and "groups" in e.get("args", {})]
                expect(all(chunks and e["ts"] + e["dur"] <= min(chunks) for e in rewrite_reads),
                       "%s: home's rewrite read after a chunk began: %s, chunks %s" % (app, rewrite_reads, chunks))

    def check_unsplittable_read(self):
        # The app's program binary is read for the other devices of home's kind to build from
        # (exec/shared_binaries.h; under auto at the first launch that may be split), a compile of
        # every kernel's generic work-group function where PoCL's cache is cold for coex, unless the
        # analysis, done by then, says no kernel of the program may be split: nothing is built from
        # it then. An analysis kept by an
        # earlier run (docs/kernel-analysis.md, "Kept analyses") is ready before the driver's build
        # ends: long_items with its store a global atomic (never split) has no read, long_items as it
        # is (split) has one; both give the bare output. Not compiled ahead (check_compile_ahead): in a
        # PoCL cache cold for it the read would wait for that, past the program's two launches.
        app = os.path.join(self.build, "tests", "layer", "long_items")
        devices = {"POCL_DEVICES": "basic basic"}
        trace = os.path.join(self.tmp, "unsplittable-read-trace.json")
        kept = os.path.join(self.tmp, "unsplittable-read-kept")
        for args, reads in ((["2", "atomic"], 0), (["2"], 1)):
            rc, bare, _ = run([app] + args, devices)
            expect(rc == 0, "long_items %s fails bare" % args)
            for which in ("first", "second"):
                env = dict(devices, COEX_TRACE=trace, COEX_POLICY="auto", COEX_BINARY_CACHE=kept,
                           COEX_COMPILE_AHEAD="false",
                           COEX_CACHE=os.path.join(self.tmp, "unsplittable-read-%s.json" % "-".join(args)))
                rc, out, err = run([app] + args, env, self.layer)
                expect(rc == 0 and out == bare, "long_items %s, %s run: exit %d, output:\n%s\nstderr:\n%s"
                       % (args, which, rc, out, err))
            with open(trace) as f:
                slices = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
            got = [e for e in slices if e.get("name") == "read binary" and e.get("args", {}).get("app_program")]
            kept_analysis = [e for e in slices if e.get("name") == "analysis" and e.get("args", {}).get("kept")]
            expect(kept_analysis, "long_items %s: the second run read no kept analysis" % args)
            expect(len(got) == reads, "long_items %s: %d reads of the app's binary, expected %d: %s"
                   % (args, len(got), reads, got))

    def check_deferred_read(self):
        # Under auto the app's program binary, which the other devices of home's kind build from, is
        # read at the first launch that may be split, not at clBuildProgram (exec/deferred_app_binary.h):
        # long_items' one launch of 1,024 items is too small (no read, no build on device 1); with
        # three, the second, timed long on home, reads it and is split, device 1 built from it. For a
        # kernel with a reqd_work_group_size the read first waits for the app's queues of home to be
        # quiet (a running launch of it made PoCL abort): with a launch held by a user event on a
        # second queue ("held", pthread devices: basic ones deadlock on user events) it gives up after
        # kQuietWait, reads nothing, and device 1 builds from source (if the run lasts until it ends;
        # no split need come after it). Every run gives the bare output.
        app = os.path.join(self.build, "tests", "layer", "long_items")
        trace = os.path.join(self.tmp, "deferred-read-trace.json")
        cases = (("basic basic", ["1"], None), ("basic basic", ["3"], None),
                 ("basic basic", ["3", "reqd"], True), ("pthread pthread", ["3", "held"], False))
        for pocl_devices, args, quiet in cases:
            devices = {"POCL_DEVICES": pocl_devices}
            rc, bare, _ = run([app] + args, devices)
            expect(rc == 0, "long_items %s fails bare" % args)
            env = dict(devices, COEX_TRACE=trace, COEX_POLICY="auto",
                       COEX_CACHE=os.path.join(self.tmp, "deferred-read-%s.json" % "-".join(args)))
            rc, out, err = run([app] + args, env, self.layer)
            expect(rc == 0 and out == bare, "long_items %s: exit %d, output:\n%s\nstderr:\n%s" % (args, rc, out, err))
            with open(trace) as f:
                slices = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
            what = "long_items %s: %s" % (args, [(e["name"], e["tid"], e.get("args")) for e in slices
                                                  if e.get("cat") in ("build", "launch")])
            reads = [e for e in slices if e["name"] == "read binary" and e.get("args", {}).get("app_program")]
            builds = [e for e in slices if e["name"] == "build" and e["tid"] == 1]
            waits = [e for e in slices if e["name"] == "wait for quiet"]
            splits = [e for e in slices if e.get("cat") == "launch" and e.get("args", {}).get("split")]
            app_build = [e for e in slices if e["name"] == "clBuildProgram"]
            if args == ["1"]:
                expect(not reads and not builds and not waits, "%s: a read or a build" % what)
                continue
            expect(len(app_build) == 1, "%s: clBuildProgram %s" % (what, app_build))
            built_at = app_build[0]["ts"] + app_build[0]["dur"]
            if quiet is False:
                expect(len(builds) <= 1 and all(not e["args"].get("from_binary") for e in builds),
                       "%s: device 1 built from a binary" % what)
            else:
                expect(len(builds) == 1 and builds[0]["args"].get("from_binary") and splits,
                       "%s: device 1 built %d times (from a binary), %d splits" % (what, len(builds), len(splits)))
            expect(len(waits) == (0 if quiet is None else 1) and all(e["args"].get("quiet") == quiet for e in waits),
                   "%s: waits for quiet" % what)
            expect(len(reads) == (0 if quiet is False else 1) and all(e["ts"] >= built_at for e in reads + waits),
                   "%s: the app's binary read at its clBuildProgram, or not as often as expected" % what)

    def check_compile_ahead(self):
        # On a user's first coex run of a program (PoCL's cache filled by its bare run), what the first
        # split would compile in the app's process (the read of the app's binary compiles every kernel's
        # generic work-group function) is compiled by `coex compile-ahead` in a process of its own
        # (exec/compile_ahead.h), while the program's launches run on home whole: the read comes after
        # that process ended, and no launch is split before. A second run in the same cache finds them
        # there: no such process (unless the first run's ended at its exit before it made them: a slow,
        # loaded machine, a sanitizer build, where the second run is a first run again). With
        # compile_ahead off the first run reads in the app's process, at once. Every run gives the bare
        # output.
        app = os.path.join(self.build, "tests", "layer", "long_items")
        trace = os.path.join(self.tmp, "compile-ahead-trace.json")
        for ahead_on in ("true", "false"):
            first_made = True
            devices = {"POCL_DEVICES": "basic basic",
                       "POCL_CACHE_DIR": os.path.join(self.tmp, "compile-ahead-pocl-" + ahead_on)}
            rc, bare, _ = run([app, "12"], devices)
            expect(rc == 0, "long_items 12 fails bare")
            for which in ("first", "second"):
                env = dict(devices, COEX_TRACE=trace, COEX_POLICY="auto", COEX_COMPILE_AHEAD=ahead_on,
                           COEX_CACHE=os.path.join(self.tmp, "compile-ahead-%s-%s.json" % (ahead_on, which)))
                rc, out, err = run([app, "12"], env, self.layer)
                what = "compile_ahead %s, %s run" % (ahead_on, which)
                expect(rc == 0 and out == bare, "%s: exit %d, output:\n%s\nstderr:\n%s" % (what, rc, out, err))
                with open(trace) as f:
                    slices = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
                ahead = [e for e in slices if e["name"] == "compile ahead"]
                reads = [e for e in slices if e["name"] == "read binary" and e.get("args", {}).get("app_program")]
                splits = [e for e in slices if e.get("cat") == "launch" and e.get("args", {}).get("split")]
                what += ": %s" % [(e["name"], e["tid"], e["ts"], e.get("args")) for e in ahead + reads + splits[:1]]
                if ahead_on == "true" and which == "first":
                    expect(len(ahead) == 1, "%s: %d compile-ahead processes, expected 1" % (what, len(ahead)))
                    ended = ahead[0]["ts"] + ahead[0]["dur"]
                    expect(all(e["ts"] >= ended for e in reads + splits), "%s: a read or a split before its end" % what)
                    # Ended before the exit, it is followed by the read (made or not: a binary it did
                    # not make is compiled by the read).
                    expect(ahead[0]["args"].get("ended_at_exit") or len(reads) == 1,
                           "%s: it ended, the read not made after it" % what)
                    # Cut short by the exit before it made them, it leaves the second run a first run.
                    first_made = bool(ahead[0]["args"].get("made")) or not ahead[0]["args"].get("ended_at_exit")
                elif ahead_on == "true" and not first_made:
                    expect(len(ahead) <= 1, "%s: %d compile-ahead processes, expected 1 at most" % (what, len(ahead)))
                else:
                    expect(not ahead, "%s: a compile-ahead process" % what)
                    expect(len(reads) == 1, "%s: %d reads of the app's binary, expected 1" % (what, len(reads)))

    def check_compile_ahead_limit(self):
        # `compile_ahead_processes` bounds how many compile-ahead processes run at once: two_programs
        # builds and launches two programs one after the other in a PoCL cache the bare run filled,
        # each kernel four times (timed on home before a process may start, two or three of them: their
        # kernels have no loop, docs/design.md, "Size by time"), and the first's process still runs at
        # the second's launches (PoCL's start and a compile, against launches of milliseconds). With 1
        # the second program compiles in the app's process (its read there, at its first launch: no
        # process could start to be timed for), never beside the first's process; with 2 both may run
        # at once. With 1 and a pause of 3 s between the programs (the first's process ends in it: PoCL's
        # start and a compile of a few lines), the first's ended process no longer counts at the
        # second's launches: each program gets a process of its own, one after the other; where the
        # first's process had not ended in the pause (a machine busy with other sanitized tests: 5.9 s
        # under AddressSanitizer beside a third load on two cores), once more with a pause of 10 s.
        # Every run gives the bare output.
        app = [os.path.join(self.build, "tests", "layer", "two_programs"), "3", "both", "4"]
        for pause in ("3000", "10000"):
            for limit, slices, counted in self.first_runs_by_setting(app + [pause], "COMPILE_AHEAD_PROCESSES", ("1",),
                                                                     "-pause-" + pause):
                ahead = sorted((e for e in slices if e["name"] == "compile ahead"), key=lambda e: e["ts"])
                reads = [e for e in slices if e["name"] == "read binary" and e.get("args", {}).get("app_program")]
                what = "limit 1, a pause of %s ms: %s, report %s" % (
                    pause, [(e["name"], e["ts"], e["dur"], e.get("args")) for e in ahead + reads], counted)
            first_ended = ahead and ahead[0]["args"].get("made") and not ahead[0]["args"].get("ended_at_exit")
            if first_ended:
                break
        expect(len(ahead) == 2 and ahead[1]["ts"] >= ahead[0]["ts"] + ahead[0]["dur"],
               "%s: not two processes one after the other" % what)
        expect_timed(first_ended, "%s: the first process did not end well before the exit" % what)
        expect(counted.get("processes") == 2 and not counted.get("beyond_limit"), "%s: the report's compile_ahead" % what)
        for limit, slices, counted in self.first_runs_by_setting(app, "COMPILE_AHEAD_PROCESSES", ("1", "2")):
            # The report counts them (counted): processes, and the program beyond the limit.
            ahead = sorted((e for e in slices if e["name"] == "compile ahead"), key=lambda e: e["ts"])
            reads = [e for e in slices if e["name"] == "read binary" and e.get("args", {}).get("app_program")]
            what = "limit %s: %s" % (limit, [(e["name"], e["ts"], e["dur"], e.get("args")) for e in ahead + reads])
            expect(ahead, "%s: no compile-ahead process" % what)
            overlapping = [b for a, b in zip(ahead, ahead[1:]) if b["ts"] < a["ts"] + a["dur"]]
            if limit == "1":
                expect(len(ahead) == 1 and not overlapping, "%s: more than one process, or two at once" % what)
                expect(len(reads) == 1 and reads[0]["ts"] < ahead[0]["ts"] + ahead[0]["dur"],
                       "%s: the second program did not read in the app's process beside the first's" % what)
            else:
                expect_timed(len(ahead) == 2 and overlapping, "%s: not two processes at once" % what)
            expect(counted.get("processes") == len(ahead) and counted.get("beyond_limit") == (limit == "1"),
                   "%s: the report's compile_ahead %s" % (what, counted))

    def check_first_launch_probe(self):
        # A first launch nothing has timed, of a kernel that loops, on a user's first coex run (PoCL's
        # cache filled by the bare run) is probed (exec/first_launch_probe.h): a block of it runs on
        # home, timed, and the launch is split at once only where that time says the split saves more
        # than first_split_compile_seconds; otherwise it runs on home whole while a compile-ahead
        # process compiles. matmul's tiled product first (16 x 16 groups, its output written only):
        # by default (a launch of milliseconds) probed, not split, compiled ahead; with the setting at
        # a microsecond probed and split at once, the read in the app's process; at 0 not probed and
        # split at once. The report counts the probes. Every run gives the bare output.
        app = [os.path.join(self.build, "tests", "apps", "matmul"), "tiled_first"]
        for seconds, slices, counted in self.first_runs_by_setting(
                app, "FIRST_SPLIT_COMPILE_SECONDS", ("0.3", "0.000001", "0")):
            probes = [e for e in slices if e["name"] == "first-launch probe"]
            ahead = [e for e in slices if e["name"] == "compile ahead"]
            tiled = [e for e in slices if e.get("cat") == "launch" and "matmul_tiled" in e["name"]]
            what = "first_split_compile_seconds %s: %s, report %s" % (
                seconds, [(e["name"], e["ts"], e.get("args")) for e in probes + ahead + tiled], counted)
            probed = seconds != "0"
            split_at_once = seconds != "0.3"
            expect(len(probes) == probed and all(e["args"]["estimate_seconds"] > 0 for e in probes),
                   "%s: %d probes, expected %d" % (what, len(probes), probed))
            expect(counted.get("probes", 0) == probed and counted.get("split_after_probe", 0) == (seconds == "0.000001"),
                   "%s: the report's counts" % what)
            expect(len(ahead) == (not split_at_once), "%s: compile-ahead processes" % what)
            expect(len(tiled) == 1 and bool(tiled[0].get("args", {}).get("split")) == split_at_once,
                   "%s: the tiled product split or not as expected" % what)
            expect(all(p["ts"] + p["dur"] <= tiled[0]["ts"] + tiled[0]["dur"] for p in probes),
                   "%s: the probe after the launch" % what)

    def check_shared_first_runs(self):
        # Three devices of one kind built from one binary need the same work-group function at their
        # first runs of a kernel at a nonzero offset (exec/shared_first_runs.h): one compiles it, and
        # the others copy its files into their folders of PoCL's cache instead of compiling it again.
        # In a fresh PoCL cache that the app's bare run filled first (a user's first run under coex),
        # under static (matmul split over the three): with share_first_runs a "share first run" slice
        # copies at least one function, and the output is the bare one; without it, none.
        app = os.path.join(self.build, "tests", "apps", "matmul")
        trace = os.path.join(self.tmp, "shared-first-runs-trace.json")
        for share in ("true", "false"):
            devices = {"POCL_DEVICES": "basic basic basic",
                       "POCL_CACHE_DIR": os.path.join(self.tmp, "pocl-cache-" + share)}
            slices = self.traced_after_bare(app, devices, trace, {
                "COEX_SHARE_FIRST_RUNS": share, "COEX_BINARY_CACHE": "off",
                "COEX_CACHE": os.path.join(self.tmp, "shared-first-runs-%s.json" % share)})
            shared = [e["args"] for e in slices if e.get("name") == "share first run"]
            copied = sum(a.get("copied", 0) for a in shared)
            expect(copied >= 1 if share == "true" else not shared,
                   "share %s: %d work-group functions copied: %s" % (share, copied, shared))
        # Home's first run at a nonzero offset is the family's too: the app's program, whose binary
        # device 1 builds from, is a member from the read of that binary on (note_donor_hash), not
        # from device 1's build. tiny_steps' first launch under auto over two devices: home runs a
        # chunk at offset zero (the bare run compiled it), then one at a nonzero offset while device 1
        # still builds; device 1's chunk then waits for home's compile and copies it (or home copies
        # device 1's): one compile of the function, not two.
        # Device 1 may join no first run (the first launch ended before its build did, the others
        # stayed on home): up to three tries, each from a copy of the cache the bare run filled and
        # an empty history, until both devices had one. Not compiled ahead (check_compile_ahead): that
        # leaves no first run to compile here.
        app = os.path.join(self.build, "tests", "layer", "tiny_steps")
        filled = os.path.join(self.tmp, "pocl-cache-home")
        rc, bare, _ = run([app], {"POCL_DEVICES": "basic basic", "POCL_CACHE_DIR": filled})
        expect(rc == 0, "tiny_steps fails bare")
        for attempt in range(3):
            cache = os.path.join(self.tmp, "pocl-cache-home-%d" % attempt)
            shutil.copytree(filled, cache)
            env = {"POCL_DEVICES": "basic basic", "POCL_CACHE_DIR": cache, "COEX_TRACE": trace,
                   "COEX_POLICY": "auto", "COEX_COMPILE_AHEAD": "false",
                   "COEX_CACHE": os.path.join(self.tmp, "shared-first-runs-home-%d.json" % attempt)}
            rc, out, err = run([app], env, self.layer)
            expect(rc == 0 and out == bare, "tiny_steps: exit %d, output:\n%s\nstderr:\n%s" % (rc, out, err))
            with open(trace) as f:
                slices = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
            first_runs = [(e["tid"], e["args"]["groups"]) for e in slices
                          if e.get("args", {}).get("first_run") and "groups" in e["args"]]
            nonzero = {tid for tid, groups in first_runs if groups[0] > 0}
            if len(nonzero) == 2:
                break
        copied = sum(e["args"].get("copied", 0) for e in slices
                     if e.get("name") == "share first run" and e["tid"] in nonzero)
        expect(len(nonzero) == 2 and copied >= 1,
               "tiny_steps: first runs at nonzero offsets on %s, %d copied; first runs %s"
               % (sorted(nonzero), copied, first_runs))

    def check_kept_binaries(self):
        # A later run builds from the binaries an earlier run kept (exec/kept_binaries.h), with the
        # same output: grid_stride's kernel reads get_global_size, so both devices build coex's
        # rewritten program. The first run builds it from source on home (track 0) and from home's
        # binary on device 1, and keeps that binary; the second builds both from it. With
        # binary_cache off home builds from source again. Without shared binaries home builds from
        # source and keeps its binary (the case of a device alone of its kind). A kept file
        # that is not a binary of coex's is built past and replaced.
        devices = {"POCL_DEVICES": "basic basic"}
        app = os.path.join(self.build, "tests", "apps", "grid_stride")
        rc, bare, _ = run([app], devices)
        expect(rc == 0, "grid_stride fails bare")
        trace = os.path.join(self.tmp, "kept-binaries-trace.json")

        def builds(folder, what, share="true", pocl_devices=devices):
            env = dict(pocl_devices, COEX_TRACE=trace, COEX_BINARY_CACHE=folder, COEX_SHARE_DEVICE_BINARIES=share)
            rc, out, err = run([app], env, self.layer)
            expect(rc == 0 and out == bare, "%s: exit %d, output:\n%s\nstderr:\n%s" % (what, rc, out, err))
            with open(trace) as f:
                slices = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X" and e.get("name") == "build"]
            return {e["tid"]: (e["args"].get("from_binary"), e["args"].get("kept_binary")) for e in slices}

        def files(folder):  # the binaries (the kept analyses have a folder of their own there)
            if not os.path.isdir(folder):
                return []
            return sorted(f for f in os.listdir(folder) if os.path.isfile(os.path.join(folder, f)))

        shared = os.path.join(self.tmp, "kept-shared")
        for what, folder, share, expected in (
                ("first run", shared, "true", {0: (False, False), 1: (True, False)}),
                ("second run", shared, "true", {0: (True, True), 1: (True, True)}),
                ("binary_cache off", "off", "true", {0: (False, False), 1: (True, False)})):
            got = builds(folder, what, share)
            expect(got == expected, "%s: builds (track: from a binary, from a kept one) %s, expected %s"
                   % (what, got, expected))
            expect(len(files(shared)) == 1 and not any(".tmp." in f for f in files(shared)),
                   "%s: kept files %s, expected one" % (what, files(shared)))
        # Device 1 builds from source, or from the binary home kept if home's build ended first.
        alone = os.path.join(self.tmp, "kept-alone")
        for what, expected in (("unshared, first run", ({0: (False, False), 1: (False, False)},
                                                        {0: (False, False), 1: (True, True)})),
                               ("unshared, second run", ({0: (True, True), 1: (True, True)},))):
            got = builds(alone, what, "false")
            expect(got in expected, "%s: builds %s, expected one of %s" % (what, got, expected))
        kept = os.path.join(shared, files(shared)[0])
        with open(kept, "wb") as f:
            f.write(b"not a binary of coex's")
        for what, expected in (("a foreign file", {0: (False, False), 1: (True, False)}),
                               ("after the foreign file", {0: (True, True), 1: (True, True)})):
            got = builds(shared, what)
            expect(got == expected, "%s: builds %s, expected %s" % (what, got, expected))
        # A binary is kept for the index of the device that keeps it: PoCL hashes basic and pthread
        # builds alike, so pthread device 0's binary, read by pthread device 1 beside a basic device 0
        # built from source with the same define, would load two builds of one hash (PoCL aborts).
        # Device 1 is the lowest pthread device there: it builds from source, and keeps its own.
        moved = os.path.join(self.tmp, "kept-moved")
        for what, pocl, expected in (("pthread pthread", "pthread pthread", {0: (False, False), 1: (True, False)}),
                                     ("basic pthread", "basic pthread", {0: (False, False), 1: (False, False)}),
                                     ("basic pthread again", "basic pthread", {0: (True, True), 1: (True, True)})):
            got = builds(moved, what, pocl_devices={"POCL_DEVICES": pocl})
            expect(got == expected, "%s: builds %s, expected %s" % (what, got, expected))
        # An app on device 1: home builds the rewrite from source and device 0 from its binary, so home
        # keeps it (the kind's lowest device, which builds from no source, kept none before); the
        # second run builds both from the kept binary.
        on_one = os.path.join(self.tmp, "kept-home-1")
        for what, expected in (("home 1, first run", {1: (False, False), 0: (True, False)}),
                               ("home 1, second run", {0: (True, True), 1: (True, True)})):
            got = builds(on_one, what, pocl_devices=dict(devices, APP_DEVICE="1"))
            expect(got == expected, "%s: builds %s, expected %s" % (what, got, expected))
            expect(len(files(on_one)) == 1, "%s: kept files %s, expected one" % (what, files(on_one)))

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

    def check_launcher_run(self):
        self.under_coex({}, [self.coex, "run", "--policy", "boyer", "--report", self.report, "--", self.app],
                        via_layer=False)
        r = self.load_report()
        expect(r["mode"] == "layer" and r["policy"] == "boyer", "mode %s policy %s" % (r["mode"], r["policy"]))
        os.remove(self.report)
        self.under_coex({}, [self.coex, "run", "--preload", "--report", self.report, "--", self.app],
                        via_layer=False)
        expect(self.load_report()["mode"] == "preload", "coex run --preload did not preload")
        rc, out, err = run([self.coex, "report", self.report])
        expect(rc == 0 and "vadd" in out and "Kernels" in out, "coex report:\n" + out + err)

    def check_launcher_no_layer_loader(self):
        # A loader without layer support: ocl-icd's own library with its OPENCL_LAYERS variable
        # renamed, so it never reads it (as CUDA's libOpenCL.so.1 does not). A bare OPENCL_LAYERS
        # then runs the app without coex; `coex run` sees it and preloads coex instead.
        rc, out, _ = run(["ldd", self.app])
        loader = next((l.split("=> ")[1].split(" (")[0] for l in out.splitlines()
                       if "libOpenCL.so" in l and "=> /" in l), None)
        expect(loader is not None, "the app links no libOpenCL:\n" + out)
        with open(loader, "rb") as f:
            image = f.read()
        expect(b"OPENCL_LAYERS" in image, "this machine's loader %s has no layer support" % loader)
        folder = os.path.join(self.tmp, "loader")
        os.makedirs(folder)
        with open(os.path.join(folder, "libOpenCL.so.1"), "wb") as f:
            f.write(image.replace(b"OPENCL_LAYERS", b"OPENCL_LAYERZ"))
        env = {"LD_LIBRARY_PATH": folder, "COEX_REPORT": self.report}
        self.under_coex(env)
        expect(not os.path.exists(self.report), "the renamed loader still loaded the layer")
        err = self.under_coex(env, [self.coex, "run", "--", self.app], via_layer=False)
        expect("does not support layers" in err, "coex run gave no notice of the fallback:\n" + err)
        r = self.load_report()
        expect(r["mode"] == "preload" and r["totals"]["split_launches"] > 0,
               "mode %s, split launches %s" % (r["mode"], r["totals"]["split_launches"]))

    def check_launcher_info(self):
        rc, out, err = run([self.coex, "devices"])
        expect(rc == 0 and sum(1 for l in out.splitlines() if l[:1].isdigit()) >= 2, "coex devices:\n" + out + err)
        rc, out, _ = run([self.coex, "--help"])
        expect(rc == 0 and "coex run" in out and "coex devices" in out, "coex --help:\n" + out)
        rc, out, err = run([self.coex, "bogus"])
        expect(rc == 2 and "unknown command" in err, "coex bogus: %d %s" % (rc, err))
        scenario = os.path.join(self.source, "config", "scenarios", "boyer-lambda.json")
        rc, out, err = run([self.coex, "simulate", scenario])
        lines = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
        expect(rc == 0 and lines and "makespan" in json.dumps(lines[0]), "coex simulate:\n" + out + err)

    # The launcher is strict where the layer is forgiving: a bad configuration stops `coex run` with
    # status 2 before the app starts (the app here would leave a file behind), while the same
    # configuration under a bare OPENCL_LAYERS still runs the app, without coex.
    def check_launcher_bad_config(self):
        bad = os.path.join(self.tmp, "bad.json")
        with open(bad, "w") as f:
            json.dump({"polcy": "static"}, f)
        marker = os.path.join(self.tmp, "app-ran")
        app = ["sh", "-c", "echo ran > " + marker]
        cases = [(["--config", bad], {}, '"polcy"'), (["--config=" + bad], {}, '"polcy"'),
                 (["--policy", "fastest"], {}, "fastest"), ([], {"COEX_MIN_SPLIT_WORK_ITEMS": "lots"}, "lots"),
                 ([], {"COEX_CONFIG": bad}, '"polcy"'), ([], {"COEX_DEVICES": "type:tpu"}, "COEX_DEVICES")]
        for options, env, needle in cases:
            for rest in (["--"] + app, app):
                rc, out, err = run([self.coex, "run"] + options + rest, env)
                expect(rc == 2, "coex run %s with %s: exit %d, expected 2\n%s" % (options, env, rc, err))
                expect(needle in err and "not started" in err, "coex run %s with %s: stderr lacks %r:\n%s"
                       % (options, env, needle, err))
                expect(not os.path.exists(marker), "coex run %s with %s started the app" % (options, env))
        rc, out, err = run([self.coex, "run", "--config", bad, "--report", self.report, self.app])
        expect(rc == 2 and out == "" and not os.path.exists(self.report), "the app ran: exit %d\n%s" % (rc, out))
        self.under_coex({"COEX_CONFIG": bad, "COEX_REPORT": self.report})
        expect(not os.path.exists(self.report), "a bare OPENCL_LAYERS run with a bad config ran coex")

    def check_launcher_help(self):
        with open(os.path.join(self.source, "CMakeLists.txt")) as f:
            version = re.search(r"project\(coex VERSION ([0-9.]+)", f.read()).group(1)
        rc, out, err = run([self.coex, "--version"])
        expect(rc == 0 and out.strip() == "coex " + version, "coex --version: %d %r %s" % (rc, out, err))
        rc, general, err = run([self.coex, "--help"])
        expect(rc == 0 and "--version" in general, "coex --help: %d\n%s%s" % (rc, general, err))
        rc, out, err = run([self.coex])
        expect(rc == 2 and "Usage:" in err, "coex alone: %d\n%s" % (rc, err))
        for command in ("run", "devices", "report", "simulate", "settings-doc"):
            expect("coex " + command in general, "coex --help does not list %s:\n%s" % (command, general))
            for words in ([command, "--help"], [command, "-h"], ["help", command]):
                rc, out, err = run([self.coex] + words)
                expect(rc == 0 and out.startswith("Usage: coex " + command) and "--help" in out,
                       "coex %s: exit %d\n%s%s" % (" ".join(words), rc, out, err))
        rc, out, err = run([self.coex, "run", "--policy", "static", "--help"])
        expect(rc == 0 and out.startswith("Usage: coex run"), "coex run OPTIONS --help: %d\n%s%s" % (rc, out, err))
        # After the app's name, --help is the app's.
        rc, out, err = run([self.coex, "run", "sh", "-c", 'echo "$1"', "sh", "--help"])
        expect(rc == 0 and out == "--help\n", "coex run sh ... --help: %d %r %s" % (rc, out, err))

    def check_launcher_options(self):
        # --opt=value as well as --opt value, and no "--" before an app whose name is not an option.
        self.under_coex({}, [self.coex, "run", "--policy=boyer", "--report=" + self.report, self.app], via_layer=False)
        r = self.load_report()
        expect(r["mode"] == "layer" and r["policy"] == "boyer", "mode %s policy %s" % (r["mode"], r["policy"]))
        os.remove(self.report)
        self.under_coex({}, [self.coex, "run", "--preload", "--report", self.report, self.app], via_layer=False)
        expect(self.load_report()["mode"] == "preload", "coex run --preload APP did not preload")
        for bad, needle in ((["--report"], "needs a value"), (["--preload=yes"], "takes no value"),
                            (["--polcy=static"], "unknown option"), ([], "no program given")):
            rc, out, err = run([self.coex, "run"] + bad)
            expect(rc == 2 and needle in err, "coex run %s: exit %d, stderr:\n%s" % (bad, rc, err))

    def devices_table(self, args, env=None):
        rc, out, err = run([self.coex, "devices"] + args, env)
        expect(rc == 0, "coex devices %s: exit %d\n%s%s" % (args, rc, out, err))
        lines = out.splitlines()
        rows = {int(l.split()[0]): l.split()[1:3] for l in lines if l[:1].isdigit()}
        return rows, out

    def check_launcher_devices(self):
        # The test runs on two devices (POCL_DEVICES): device 0 is home; both are used by default.
        rows, out = self.devices_table([])
        expect(rows.get(0) == ["yes", "yes"] and rows.get(1) == ["no", "yes"], "coex devices:\n" + out)
        expect("across devices 0 and 1" in out and "first device of the first platform" in out, out)
        config = os.path.join(self.tmp, "one.json")
        with open(config, "w") as f:
            json.dump({"devices": "1"}, f)
        # Home left out, one other device selected: nothing is split, home runs every launch.
        for args in (["--config", config], ["--config=" + config]):
            rows, out = self.devices_table(args)
            expect(rows.get(0) == ["yes", "yes"] and rows.get(1) == ["no", "no"], "coex devices %s:\n%s" % (args, out))
            expect("splits nothing (devices_unavailable)" in out and config in out, out)
        rows, out = self.devices_table([], {"COEX_DEVICES": "0"})
        expect(rows.get(1) == ["no", "no"] and "splits nothing (single_device)" in out, "COEX_DEVICES=0:\n" + out)
        rows, out = self.devices_table([], {"COEX_DISABLE": "1"})
        expect(rows.get(1) == ["no", "no"] and "splits nothing (disabled)" in out, "COEX_DISABLE=1:\n" + out)
        # What `coex devices` says is what a run does.
        self.under_coex({"COEX_CONFIG": config, "COEX_REPORT": self.report})
        expect(set(self.not_split_reasons()) == {"devices_unavailable"}, "not_split: %s" % self.not_split_reasons())
        bad = os.path.join(self.tmp, "bad.json")
        with open(bad, "w") as f:
            f.write("{")
        for args, env in ((["--config", bad], {}), ([], {"COEX_DEVICES": "type:tpu"})):
            rc, out, err = run([self.coex, "devices"] + args, env)
            expect(rc == 2 and "stopped" in err and not any(l[:1].isdigit() for l in out.splitlines()),
                   "coex devices %s %s: exit %d\n%s%s" % (args, env, rc, out, err))
        rc, out, err = run([self.coex, "devices", "extra"])
        expect(rc == 2 and "takes no arguments" in err, "coex devices extra: %d %s" % (rc, err))


    def check_launcher_install(self):
        # The README's install (stripped), then the tree moved elsewhere: the launcher must load the
        # moved library, and a CMake project must find the targets coex::layer and coex::coex there.
        cmake = os.environ.get("COEX_TEST_CMAKE", "cmake")
        first, moved = os.path.join(self.tmp, "first"), os.path.join(self.tmp, "moved")
        rc, out, err = run([cmake, "--install", self.build, "--strip", "--prefix", first], timeout=110)
        expect(rc == 0, "cmake --install: %d\n%s%s" % (rc, out, err))
        os.rename(first, moved)
        libdir = next(os.path.dirname(os.path.join(d, f)) for d, _, files in os.walk(moved) for f in files
                      if f == "libcoex.so")
        with open(os.path.join(self.build, "CMakeCache.txt")) as f:
            sanitized = re.search(r"^COEX_SANITIZE:\w+=\S", f.read(), re.M)
        size = os.path.getsize(os.path.join(libdir, "libcoex.so"))
        expect(sanitized or size < 16 << 20, "the installed, stripped libcoex.so has %d bytes" % size)
        for name in ("LICENSE", "README.md"):
            expect(any(name in files for _, _, files in os.walk(os.path.join(moved, "share", "doc"))), "no " + name)
        launcher = os.path.join(moved, "bin", "coex")
        rc, out, err = run([launcher, "run", "--layer", "sh", "-c", 'echo "$OPENCL_LAYERS"'])
        expect(rc == 0 and out.strip() == os.path.join(os.path.realpath(libdir), "libcoex.so"),
               "the moved launcher loads %r, not the moved library in %s\n%s" % (out, libdir, err))
        self.under_coex({}, [launcher, "run", "--report", self.report, self.app], via_layer=False)
        expect(self.load_report()["totals"]["split_launches"] > 0, "the moved install split nothing")
        project = os.path.join(self.tmp, "consumer")
        os.makedirs(project)
        with open(os.path.join(project, "CMakeLists.txt"), "w") as f:
            f.write("cmake_minimum_required(VERSION 3.16)\nproject(consumer NONE)\nfind_package(coex 0.1 REQUIRED)\n"
                    "file(GENERATE OUTPUT targets.txt CONTENT \"$<TARGET_FILE:coex::layer>\\n$<TARGET_FILE:coex::coex>\\n\")\n")
        rc, out, err = run([cmake, "-S", project, "-B", os.path.join(project, "build"), "-DCMAKE_PREFIX_PATH=" + moved])
        expect(rc == 0, "find_package(coex) failed:\n%s%s" % (out, err))
        with open(os.path.join(project, "build", "targets.txt")) as f:
            targets = f.read().split()
        expect([os.path.realpath(t) for t in targets] ==
               [os.path.realpath(os.path.join(libdir, "libcoex.so")), os.path.realpath(launcher)],
               "coex::layer and coex::coex are %s" % targets)


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
