#!/usr/bin/env python3
"""How coex compiles ahead for a set of devices of several kinds (docs/design.md, "Compiled ahead, in a
process of its own", "Every kind of the set"): the process started at the app's clBuildProgram builds
for the first device of each other kind too, whose build waits for it. The same runner as
layer_checks.py: each check runs a test app bare and under coex on real PoCL devices.
Usage: mixed_checks.py --build DIR --source DIR CHECK
"""
import json
import os
import sys
import time

import layer_checks
from layer_checks import FAST_FRESH_MEMORY, expect, expect_timed, run


def expect_compiled_by(pocl, ended_steady_us, count, what):
    # PoCL's cache `pocl` holds `count` folders of long_items' row_products kernel (one a build hash),
    # and no file of theirs is newer than `ended_steady_us` (a trace's time, the origin's added): what
    # the builds and chunks in the app then used, a process had compiled.
    # File times are the wall clock's, the trace's the steady clock's (CLOCK_MONOTONIC).
    ended_wall = ended_steady_us / 1e6 + (time.time() - time.monotonic())
    folders = {}
    for root, dirs, files in os.walk(pocl):
        if os.path.basename(root) == "row_products":
            newest = max((os.path.getmtime(os.path.join(r, n)) for r, _, ns in os.walk(root) for n in ns), default=0)
            folders[os.path.basename(os.path.dirname(root))] = newest
    late = {k: v - ended_wall for k, v in folders.items() if v > ended_wall}
    expect(len(folders) == count and not late,
           "%s: PoCL's folders %s, newer than its end by %s s" % (what, sorted(folders), late))


class MixedChecks(layer_checks.Checks):
    def pthread_home_beside_basic(self):
        # A `pthread` device (one thread) as the app's device beside a `basic` one: the environment
        # (APP_DEVICE naming the pthread device) and the basic device's index.
        devices = {"POCL_DEVICES": "pthread basic", "POCL_MAX_PTHREAD_COUNT": "1", "POCL_CPU_MAX_CU_COUNT": "1"}
        rc, out, err = run([self.coex, "devices"], devices)
        rows = [l for l in out.splitlines() if l[:1].isdigit()]
        home = [int(l.split()[0]) for l in rows if " pthread-" in l]
        other = [int(l.split()[0]) for l in rows if " basic-" in l]
        expect(rc == 0 and len(home) == 1 and len(other) == 1, "coex devices:\n%s%s" % (out, err))
        devices["APP_DEVICE"] = str(home[0])
        return devices, other[0]

    def first_run_built_ahead(self, app, tag, extra=None, traced=None):
        # A user's first coex run of tests/apps `app` (its name, or its path below tests/ with a '/',
        # then its arguments) on a pthread home
        # beside a basic device under auto, compile_ahead_start=build, PoCL's cache (of its own, by
        # `tag`) filled by the bare run, with `extra` settings: its output must be the bare one. The
        # trace's slices, and the basic device's index.
        devices, other = self.pthread_home_beside_basic()
        devices.update(POCL_CACHE_DIR=os.path.join(self.tmp, tag + "-pocl"))
        cmd = [os.path.join(self.build, "tests", app[0] if "/" in app[0] else os.path.join("apps", app[0]))] + app[1:]
        rc, bare, _ = run(cmd, devices)
        expect(rc == 0, "%s fails bare" % app[0])
        trace = os.path.join(self.tmp, tag + "-trace.json")
        settings = dict(FAST_FRESH_MEMORY, COEX_POLICY="auto", COEX_TRACE=trace, COEX_COMPILE_AHEAD_START="build",
                        COEX_CACHE=os.path.join(self.tmp, tag + "-history.json"))
        settings.update(extra or {})
        rc, out, err = run(cmd, dict(devices, **settings), self.layer, timeout=100)
        expect(rc == 0 and out == bare, "exit %d, output:\n%s\nstderr:\n%s" % (rc, out, err))
        with open(trace) as f:
            events = json.load(f)
        if traced is not None:
            traced.update(events)
        return [e for e in events["traceEvents"] if e.get("ph") == "X"], other

    def check_compile_ahead_kinds(self):
        # A user's first coex run of long_items on a `pthread` home (one thread) beside a `basic`
        # device, PoCL's cache filled by the bare run, compile_ahead_start=build: one process, started
        # at the build, builds for the basic device too (trace arg `kinds`); the basic device's build
        # waits for it (`wait for compile ahead` on its track) and begins after its end; nothing is
        # split before. The process's build of the basic device's program lands in the folder of
        # PoCL's cache its build in the app then uses (two folders in all, home's and the basic
        # device's), and no file of the kernel's in either is newer than the process's end: the build
        # in the app and the first chunks there compiled nothing. Sixty launches of 0.1 to 0.2 s: on a
        # loaded machine the process may outlast them (it then ends at the exit), which runs the
        # check once more.
        traced = {}
        slices, other = self.first_run_built_ahead(["layer/long_items", "60"], "kinds",
                                                   {"COEX_AUTO_ANALYSIS_WAIT": "30"}, traced=traced)
        ahead = [e for e in slices if e["name"] == "compile ahead"]
        what = "processes %s" % [(e["ts"], e["dur"], e.get("args")) for e in ahead]
        expect(len(ahead) == 1 and ahead[0]["args"].get("at_build") and ahead[0]["args"].get("kinds") == [other],
               "%s: expected one, started at the build, for device %d too" % (what, other))
        process = ahead[0]
        expect_timed(process["args"].get("made") and not process["args"].get("ended_at_exit"),
                     "%s: not made before the exit" % what)
        ended = process["ts"] + process["dur"]
        waits = [e for e in slices if e["name"] == "wait for compile ahead" and e["tid"] == other]
        builds = [e for e in slices if e["name"] == "build" and e["tid"] == other]
        # (No wait is recorded by a build that begins once a launch on home saw the process ended.)
        expect(len(builds) == 1 and builds[0]["ts"] >= ended - 1000 and (waits or builds[0]["ts"] >= ended),
               "%s: device %d's waits %s, builds %s" % (what, other, waits, builds))
        splits = [e for e in slices if e.get("cat") == "launch" and e.get("args", {}).get("split")]
        expect(splits and all(e["ts"] >= ended for e in splits), "%s: no split, or one before its end" % what)
        expect_compiled_by(os.path.join(self.tmp, "kinds-pocl"), traced["otherData"]["origin_steady_us"] + ended, 2,
                           what)

    def check_no_probe_beside_other_kinds(self):
        # Beside devices of other kinds alone, a first launch is never split at once: they wait for the
        # process to build for them (first_launch_probe::splits_from). So a kernel that loops is not
        # probed there first (the probe only delayed the launch and the variants sent to the process),
        # however little first_split_compile_seconds asks of a split; it runs on home while the
        # process compiles, as after a probe that said no. A user's first coex run of matmul's tiled
        # product (probed over two `basic` devices: check_first_launch_probe) on a pthread home beside
        # a basic device, compile_ahead_start=build (on a machine with no core spare `auto` starts no
        # process at the build, and builds for no other kind ahead): no probe, one process, made
        # before the launch is split or at the exit, and the bare output.
        slices, other = self.first_run_built_ahead(
            ["matmul", "tiled_first"], "no-probe",
            {"COEX_AUTO_ANALYSIS_WAIT": "30", "COEX_REPORT": self.report, "COEX_FIRST_SPLIT_COMPILE_SECONDS": "0.000001"})
        probes = [e for e in slices if e["name"] == "first-launch probe"]
        ahead = [e for e in slices if e["name"] == "compile ahead"]
        tiled = [e for e in slices if e.get("cat") == "launch" and "matmul_tiled" in e["name"]]
        counted = self.load_report().get("compile_ahead", {})
        what = "%s, report %s" % ([(e["name"], e["ts"], e["dur"], e.get("args")) for e in probes + ahead + tiled],
                                  counted)
        expect(not probes and counted.get("probes", 0) == 0, "%s: probed" % what)
        expect(len(ahead) == 1 and ahead[0]["args"].get("kinds") == [other], "%s: expected one process" % what)
        expect(len(tiled) == 1 and (not tiled[0].get("args", {}).get("split") or
                                    tiled[0]["ts"] >= ahead[0]["ts"] + ahead[0]["dur"]),
               "%s: the tiled product split before the process's end" % what)

    def check_no_process_for_a_rewritten_program(self):
        # A rewritten program's splits run the rewrite, which every device builds from source: what a
        # process started at the build compiles (the app's program, for home and the other kind)
        # serves none of them. It is ended once the analysis says so (end_process_serving_none), or
        # not started where the analysis ended first; before, it compiled on to the exit (binomial's
        # 4.1 s on the device machine's mixed set). group_reduce reads get_group_id (rewritten) on a
        # pthread home beside a basic device, compile_ahead_start=build, PoCL's cache filled by the
        # bare run, compile_ahead_rewrite false (below: on, as `auto` has it beside another kind): one
        # process, its slice `served_none`, not ended at the exit, or none where the analysis ended
        # before the app's clBuildProgram returned (begin_at_build saw it); the bare output.
        slices, other = self.first_run_built_ahead(["group_reduce"], "rewritten", {"COEX_COMPILE_AHEAD_REWRITE": "false"})
        ahead = [e for e in slices if e["name"] == "compile ahead"]
        builds = [e for e in slices if e["name"] == "build" and e["tid"] == other]
        analysed = max((e["ts"] + e["dur"] for e in slices if e["name"] == "analysis"), default=None)
        built = max((e["ts"] + e["dur"] for e in slices if e["name"] == "clBuildProgram"), default=None)
        what = "processes %s, analysis ended at %s, clBuildProgram at %s" % (
            [(e["ts"], e["dur"], e.get("args")) for e in ahead], analysed, built)
        expect(len(ahead) == 1 or (not ahead and analysed is not None and built is not None and analysed <= built),
               "%s: expected one, or none where the analysis ended first" % what)
        expect(all(e["args"].get("served_none") and not e["args"].get("ended_at_exit") for e in ahead),
               "%s: one compiled for nothing" % what)
        expect(all(e["ts"] + e["dur"] <= b["ts"] + b["dur"] for e in ahead for b in builds),
               "processes %s end after device %d's build of the rewrite %s" % (ahead, other, builds))

    def check_rewrite_compiled_ahead(self):
        # With compile_ahead_rewrite at its default (`auto`: on beside a PoCL CPU device of another
        # kind), the process serves the rewrite instead (serve_rewrite): the app's program's process is
        # ended as the analysis finds long_items' "group" kernel rewritten, and one is started for the
        # rewrite with home's options and for the basic device (another kind) with its own, sent the
        # first launch's variants; home's build of the rewrite and the basic device's wait for it (home's
        # `wait for compile ahead` on its track; the basic device's build, on home's platform, comes after
        # home's, and records its wait only where it comes before a launch on home saw the process ended:
        # still_running then clears its kinds, and wait_before_build returns unrecorded); both builds
        # begin after its end, a millisecond allowed (the end is noted after the reap), and the splits
        # come after home's build. PoCL's cache then holds three folders of the kernel (the app's
        # program's, and the rewrite's for each kind), none with a file newer than the process's end:
        # the builds and first chunks in the app compiled nothing.
        # Under the code before, or with the setting off (above), the one process served none. Sixty
        # launches of 0.1 to 0.2 s: on a loaded machine the process may outlast them (it then ends at
        # the exit), which runs the timed part again.
        traced = {}
        slices, other = self.first_run_built_ahead(["layer/long_items", "60", "group"], "rewrite-ahead", traced=traced)
        home = 1 - other
        ahead = [e for e in slices if e["name"] == "compile ahead"]
        serving = [e for e in ahead if not e["args"].get("served_none")]
        home_builds = [e for e in slices if e["name"] == "build" and e["tid"] == home]
        other_builds = [e for e in slices if e["name"] == "build" and e["tid"] == other]
        waits = {e["tid"] for e in slices if e["name"] == "wait for compile ahead"}
        splits = [e for e in slices if e.get("cat") == "launch" and e.get("args", {}).get("split")]
        what = "processes %s, home's builds %s, the other's %s, waits on %s, first split %s" % (
            [(e["ts"], e["dur"], e.get("args")) for e in ahead], [(e["ts"], e["dur"]) for e in home_builds],
            [(e["ts"], e["dur"]) for e in other_builds], sorted(waits), min((e["ts"] for e in splits), default=None))
        expect(len(serving) == 1 and len(ahead) <= 2 and "variants_after_ms" in serving[0]["args"] and
               serving[0]["args"].get("rewrite") and serving[0]["args"].get("kinds") == [other],
               "%s: expected one for the rewrite and the other kind, sent its variants" % what)
        expect_timed(all(e["args"].get("made") and not e["args"].get("ended_at_exit") for e in serving) and
                     home in waits and len(home_builds) == 1 and len(other_builds) == 1 and splits and
                     all(b["ts"] >= e["ts"] + e["dur"] - 1000 for e in serving for b in home_builds + other_builds) and
                     all(x["ts"] >= b["ts"] + b["dur"] for x in splits for b in home_builds),
                     "%s: the process made its binary before the exit; home's build and the other's after its "
                     "end, then the splits" % what)
        process = serving[0]
        expect_compiled_by(os.path.join(self.tmp, "rewrite-ahead-pocl"),
                           traced["otherData"]["origin_steady_us"] + process["ts"] + process["dur"], 3, what)

if __name__ == "__main__":
    sys.exit(layer_checks.main(MixedChecks, "coex-mixed-check-"))
