#!/usr/bin/env python3
"""How coex builds and compiles for the devices (docs/design.md, "Programs loaded from binaries",
"One-time costs", "Size by time"): builds at the app's clBuildProgram, one binary for devices of a
kind, the read of the app's binary deferred to a launch that may split, compiles made ahead in a
process of their own, first runs shared, binaries kept from run to run, and home's first runs and
short launches that start no compile. The same runner as layer_checks.py: each check runs a test app
bare and under coex on real PoCL devices.
Usage: compile_checks.py --build DIR --source DIR CHECK
"""
import json
import os
import shutil
import sys
import time

import layer_checks
from layer_checks import FAST_FRESH_MEMORY, expect, expect_timed, run


class CompileChecks(layer_checks.Checks):
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

    def first_runs_by_setting(self, app, setting, values, tag="", extra=None):
        # A user's first coex run of `app` over two `basic` devices under auto with the report on, once
        # for each value of COEX_<setting> (None: unset, the default), each in a PoCL cache of its own
        # that its bare run filled:
        # the value, the trace's slices and the report's compile_ahead. What these settings decide
        # (compile ahead, probe, split at once) comes after the analysis, which the first launch waits
        # for up to auto_analysis_wait: 30 s here, for a machine busy with other tests (at 0.1 s CI's
        # run of matmul's tiled product found none and ran it on home as `preparing`), and, for a kernel
        # without loops, after the rule of moves into new memory, which takes it as fast as the nominal
        # rate here (FAST_FRESH_MEMORY: on a 2-core machine two_programs' launches would stay on home
        # before any of them). A process starts at the first launch that wants it (compile_ahead_start
        # `launch`; under `auto`, on a machine with no core beside the devices', only once the kernel's
        # launches show it pays: check_process_pays). `tag` keeps one call's files apart from another's
        # of the same setting; `extra`, more settings.
        label = setting.lower().replace("_", "-") + tag
        trace = os.path.join(self.tmp, label + "-trace.json")
        for value in values:
            devices = {"POCL_DEVICES": "basic basic",
                       "POCL_CACHE_DIR": os.path.join(self.tmp, "%s-pocl-%s" % (label, value))}
            settings = dict(FAST_FRESH_MEMORY, COEX_POLICY="auto", COEX_AUTO_ANALYSIS_WAIT="30", COEX_REPORT=self.report,
                            COEX_COMPILE_AHEAD_START="launch", COEX_CACHE=os.path.join(self.tmp, "%s-%s.json" % (label, value)))
            settings.update(extra or {})
            if value is not None:
                settings["COEX_" + setting] = value
            slices = self.traced_after_bare(app, devices, trace, settings)
            yield value, slices, self.load_report().get("compile_ahead", {})

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
            env = dict(devices, COEX_TRACE=trace, COEX_POLICY="auto", COEX_COMPILE_AHEAD_START="launch",
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
        # source and keeps its binary (the case of a device alone of its kind) where PoCL's cache holds
        # what reading it compiles. A kept file
        # that is not a binary of coex's is built past and replaced. PoCL's cache is the check's own:
        # a keeper alone of its kind finds its build's folder as the one folder touched during its
        # build, and another test's build in a shared cache then leaves it none (nothing kept).
        devices = {"POCL_DEVICES": "basic basic", "POCL_CACHE_DIR": os.path.join(self.tmp, "kept-pocl")}
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
        # A keeper alone of its kind reads its binary to keep it only where that compiles nothing: PoCL's
        # cache holds each kernel's generic function in its build's folder (above, the earlier runs'
        # reads filled it). In an empty PoCL cache the unshared runs keep nothing, home (the keeper of
        # the rewrite) says why on its track, and the second run builds from source again.
        fresh = os.path.join(self.tmp, "kept-fresh")
        fresh_cache = dict(devices, POCL_CACHE_DIR=os.path.join(self.tmp, "kept-fresh-pocl"))
        for what in ("empty PoCL cache, first run", "empty PoCL cache, second run"):
            got = builds(fresh, what, "false", pocl_devices=fresh_cache)
            with open(trace) as f:
                not_kept = [e["tid"] for e in json.load(f)["traceEvents"]
                            if e.get("name", "").startswith("binary not kept")]
            expect(got == {0: (False, False), 1: (False, False)} and not_kept == [0] and not files(fresh),
                   "%s: builds %s, not kept on tracks %s, kept files %s" % (what, got, not_kept, files(fresh)))
        # A binary is kept for the index of the device that keeps it: PoCL hashes basic and pthread
        # builds alike, so pthread device 0's binary, read by pthread device 1 beside a basic device 0
        # built from source with the same define, would load two builds of one hash (PoCL aborts).
        # Device 1 is the lowest pthread device there: it builds from source, alone of its kind, and
        # keeps nothing (this check's PoCL cache lacks its build's generic functions: nothing read a
        # binary of that build), so it builds from source again; home keeps the rewrite, whose
        # generic functions the runs above compiled.
        moved = os.path.join(self.tmp, "kept-moved")
        for what, pocl, expected in (("pthread pthread", "pthread pthread", {0: (False, False), 1: (True, False)}),
                                     ("basic pthread", "basic pthread", {0: (False, False), 1: (False, False)}),
                                     ("basic pthread again", "basic pthread", {0: (True, True), 1: (False, False)})):
            got = builds(moved, what, pocl_devices=dict(devices, POCL_DEVICES=pocl))
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

    def check_first_run_untimed(self):
        # Home's first run of a kernel pays the driver's one-time work, which is not the launch's time
        # (docs/design.md, "Size by time"): that launch is not timed. tiny_steps' 400 launches of a
        # few microseconds stay on home under auto (one_device_pays); run again with the History of
        # the first run and PoCL's cache cold, its first launch compiles the work-group function on
        # home for a tenth of a second. Timed, that was home's time of the launch: every split
        # looked worth it, and 399 of the 400 launches split.
        app = os.path.join(self.build, "tests", "layer", "tiny_steps")
        rc, bare, _ = run([app], {"POCL_DEVICES": "basic basic"})
        expect(rc == 0, "tiny_steps fails bare")
        history = os.path.join(self.tmp, "first-run-untimed-history.json")
        for run_number in (1, 2):
            report = os.path.join(self.tmp, "first-run-untimed-report-%d.json" % run_number)
            env = {"POCL_DEVICES": "basic basic", "COEX_POLICY": "auto", "COEX_CACHE": history,
                   "COEX_REPORT": report,
                   "POCL_CACHE_DIR": os.path.join(self.tmp, "first-run-untimed-pocl-%d" % run_number)}
            rc, out, err = run([app], env, self.layer)
            expect(rc == 0 and out == bare, "run %d: exit %d, output:\n%s\nstderr:\n%s" % (run_number, rc, out, err))
            with open(report) as f:
                kernel = json.load(f)["kernels"][0]
            expect(kernel["launches"] == 400 and kernel["split_launches"] <= 40,
                   "run %d: %d of %d launches split (%s)" % (run_number, kernel["split_launches"],
                                                             kernel["launches"], kernel["not_split"]))

    def check_split_floor(self):
        # Under auto a launch measured shorter on home than any split costs stays there, whatever its
        # work-items (auto_split_floor_seconds; docs/design.md, "Size by time"): tiny_steps' 2,000
        # launches of 4,096 items, a few microseconds each over two basic devices, run on home as
        # `too_small` once home has timed them, and none splits after the first such. Its kernel has no
        # loop: on a user's first run (PoCL's cache filled by the bare run) no process compiles ahead
        # for launches home's times keep there. At 0 no launch is too_small (the size rule alone would
        # split them: auto measures and probes them), and the first starts that process. The output is
        # the bare one either way (first_runs_by_setting).
        app = [os.path.join(self.build, "tests", "layer", "tiny_steps"), "2000"]
        for floor, slices, counted in self.first_runs_by_setting(app, "AUTO_SPLIT_FLOOR_SECONDS", (None, "0")):
            launches = [e["args"] for e in sorted(slices, key=lambda e: e["ts"]) if e.get("cat") == "launch"]
            ahead = [e for e in slices if e["name"] == "compile ahead"]
            what = "floor %s: %d compile-ahead processes (report %s)" % (floor, len(ahead), counted)
            expect(len(launches) == 2000, "%s: %d launches in the trace, not 2000" % (what, len(launches)))
            small = [i for i, a in enumerate(launches) if a.get("not_split") == "too_small"]
            if floor == "0":
                expect(not small, "%s: %d launches too_small, the first %s" % (what, len(small), launches[small[0]] if small else None))
                expect(len(ahead) == 1 and counted.get("processes") == 1, "%s, expected 1" % what)
            else:
                split_after = [a for a in launches[small[0]:] if a.get("split")] if small else []
                expect_timed(small and not split_after, "%s: %d launches too_small, %d split after the first: %s"
                             % (what, len(small), len(split_after), split_after[:3]))
                expect_timed(not ahead and not counted.get("processes"), "%s, expected none" % what)

    def check_compile_ahead_start(self):
        # compile_ahead_start=build starts the compile-ahead process at the app's clBuildProgram (PoCL's
        # cache, filled by the bare run, lacks the kernel's generic function): before any launch. It
        # compiles the generic functions, then the variants the first launch that would read the
        # binary sends it (exec/compile_ahead.h, begin_at_build); the read and every split come after
        # its end, and its second ask of the binary made the small-grid variant at a nonzero offset
        # (which the bare run's launches, all at offset zero, never ran): its files are no newer than
        # the process's end, before which no chunk ran. With =launch it starts at that launch, as
        # before. With =context the process was spawned at the app's clCreateContext, PoCL set up there
        # before the build handed it the request (compile_ahead_warm.h: the slice says how long it had
        # set up); otherwise as with =build. On a loaded machine the first launch may come more than
        # 4.5 s after the build (it waits for the analysis): the process is then never sent its
        # variants, and one of the launch's own follows it. Under =context tiny_steps' first launch,
        # nothing timed yet, sends its process, started at the build, the variants at once (it waits on
        # cores of its own: compile_ahead::waits_for_variants; unless that launch came 4.5 s after it,
        # as above); under =build (which says nothing of spare cores) its launches, below the split
        # floor, never ask. They stay on home either way; the process ends on its own or at the exit.
        # The report counts those started at the build. Every run gives the bare output.
        app = [os.path.join(self.build, "tests", "layer", "long_items"), "12"]
        starts = ("context", "build", "launch")
        for start, slices, counted in self.first_runs_by_setting(app, "COMPILE_AHEAD_START", starts):
            ahead = sorted((e for e in slices if e["name"] == "compile ahead"), key=lambda e: e["ts"])
            launches = sorted((e for e in slices if e.get("cat") == "launch"), key=lambda e: e["ts"])
            reads = [e for e in slices if e["name"] == "read binary" and e.get("args", {}).get("app_program")]
            splits = [e for e in launches if e.get("args", {}).get("split")]
            what = "start %s: %s, report %s" % (start, [(e["ts"], e["dur"], e.get("args")) for e in ahead], counted)
            expect(ahead and launches, "%s: expected a process and launches" % what)
            last = ahead[-1]
            ended = last["ts"] + last["dur"]
            expect(all(e["ts"] >= ended for e in reads + splits), "%s: a read or a split before its end" % what)
            expect(splits or last["args"].get("ended_at_exit"), "%s: no launch split after it ended" % what)
            if start == "launch":
                expect(len(ahead) == 1 and not last["args"].get("at_build") and last["ts"] >= launches[0]["ts"] and
                       not counted.get("at_build"), "%s: not one process started at a launch" % what)
                continue
            first = ahead[0]
            expect(first["args"].get("at_build") and first["ts"] < launches[0]["ts"] and counted.get("at_build") == 1,
                   "%s: not started before the first launch" % what)
            late = (len(ahead) == 2 and "variants_after_ms" not in first["args"] and
                    not ahead[1]["args"].get("at_build"))
            expect(len(ahead) == 1 or late, "%s: more processes than one started at the build" % what)
            expect(("set_up_at_context_ms" in first["args"]) == (start == "context"),
                   "%s: set up at clCreateContext under =context alone" % what)
            if late or last["args"].get("ended_at_exit"):
                continue
            expect("variants_after_ms" in first["args"] and first["args"].get("made"),
                   "%s: not sent the variants, or not made" % what)
            with open(os.path.join(self.tmp, "compile-ahead-start-trace.json")) as f:
                origin_us = json.load(f)["otherData"]["origin_steady_us"]
            # The trace's times are the steady clock's (CLOCK_MONOTONIC, as time.monotonic), file times
            # the wall clock's.
            ended_wall = (origin_us + ended) / 1e6 + (time.time() - time.monotonic())
            made = {}
            for root, dirs, files in os.walk(os.path.join(self.tmp, "compile-ahead-start-pocl-" + start)):
                if os.path.basename(os.path.dirname(root)) == "row_products" and files:
                    made[os.path.basename(root)] = max(os.path.getmtime(os.path.join(root, n)) for n in files)
            offset_variants = {k: v for k, v in made.items() if k.endswith("-smallgrid") and "goffs0" not in k}
            expect(offset_variants and all(t <= ended_wall for t in offset_variants.values()),
                   "%s: the variant at a nonzero offset not made by the process (%s, its end %.3f)" %
                   (what, made, ended_wall))
        # long_items "padded" (a source of 300 KB, past the socket's buffer: handed in parts as the
        # process reads it, once its PoCL is set up) under =context: handed all the same.
        app = [os.path.join(self.build, "tests", "layer", "long_items"), "12", "padded"]
        for _, slices, counted in self.first_runs_by_setting(app, "COMPILE_AHEAD_START", ("context",), "-padded"):
            ahead = sorted((e for e in slices if e["name"] == "compile ahead"), key=lambda e: e["ts"])
            expect(ahead and "set_up_at_context_ms" in ahead[0]["args"] and counted.get("at_build") == 1,
                   "padded: %s, report %s: not handed to the process set up at clCreateContext" %
                   ([e.get("args") for e in ahead], counted))
        app = [os.path.join(self.build, "tests", "layer", "tiny_steps"), "2000"]
        for start, slices, counted in self.first_runs_by_setting(app, "COMPILE_AHEAD_START", ("context", "build"),
                                                                 "-tiny"):
            ahead = [e for e in slices if e["name"] == "compile ahead"]
            what = "tiny_steps, %s: %s, report %s" % (start, [e.get("args") for e in ahead], counted)
            launches = [e for e in slices if e.get("cat") == "launch"]
            splits = [e for e in launches if e.get("args", {}).get("split")]
            late = ahead and launches and min(e["ts"] for e in launches) - ahead[0]["ts"] > 4.5e6
            sent = ahead and "variants_after_ms" in ahead[0]["args"]
            expect(len(ahead) == 1 and ahead[0]["args"].get("at_build") and
                   ((sent or late) if start == "context" else not sent),
                   "%s: expected one process, started at the build, sent the variants under context alone" % what)
            expect(counted.get("at_build") == 1 and not splits, "%s: not counted, or %d launches split" % (what, len(splits)))

    def check_compile_ahead_timed(self):
        # A kernel without loops starts a compile-ahead process only once home's times put its launch
        # past the floor (docs/design.md, "Size by time"): three launches of its size (two well past
        # it), or one of first_split_compile_seconds or more. two_programs' kernels, launched twice each with a read
        # between (2 ms a launch over two basic devices, the first more), on a user's first run: with
        # first_split_compile_seconds at 0.5 ms the first launch's time starts a process at the
        # second; at 2 s (far above the first's time, however busy the machine) each second launch is
        # planned with one time, runs on home as `preparing`, and no process starts.
        app = [os.path.join(self.build, "tests", "layer", "two_programs"), "3", "both", "2"]
        for seconds, slices, counted in self.first_runs_by_setting(app, "FIRST_SPLIT_COMPILE_SECONDS", ("0.0005", "2")):
            ahead = [e for e in slices if e["name"] == "compile ahead"]
            launches = [e for e in sorted(slices, key=lambda e: e["ts"]) if e.get("cat") == "launch"]
            what = "first_split_compile_seconds %s: %d compile-ahead processes (report %s), launches %s" % (
                seconds, len(ahead), counted, [(e["name"], e.get("args", {}).get("not_split")) for e in launches])
            expect(len(launches) == 4, "%s: expected 4" % what)
            if seconds == "2":
                expect(not ahead and not counted.get("processes"), "%s: expected no process" % what)
                expect(all(e.get("args", {}).get("not_split") == "preparing" for e in launches),
                       "%s: every launch held on home to be timed" % what)
            else:
                expect(ahead and counted.get("processes") == len(ahead), "%s: expected one or more" % what)

    def check_process_pays(self):
        # Under compile_ahead_start `auto` with no core beside the devices' (the app held to one core
        # here, beside two `basic` devices), a program's process starts at a launch only once the
        # kernel's launches so far, each as long as this one, would have saved by splits (half of each,
        # over two devices) what the first split compiles (first_launch_probe::process_pays): half of
        # first_split_compile_seconds for two_programs' kernels (no barrier). Their launches take a few
        # milliseconds, far more on a loaded machine, so the check weighs the trace's times: four
        # launches a kernel at 0.2 (0.1 s to win back) start no process where they would have saved
        # less than half of that; 200 at 0.02 (10 ms) start the first program's once its launches
        # before would have saved half of it or more, after launches held on home where the first
        # would not have saved it alone. Every run gives the bare output.
        cpu = str(min(os.sched_getaffinity(0)))
        two_programs = os.path.join(self.build, "tests", "layer", "two_programs")
        for launches, seconds in (("4", "0.2"), ("200", "0.02")):
            compiles = float(seconds) / 2
            app = ["taskset", "-c", cpu, two_programs, "3", "both", launches]
            for _, slices, counted in self.first_runs_by_setting(app, "FIRST_SPLIT_COMPILE_SECONDS", (seconds,),
                                                                 "-pays-" + launches, {"COEX_COMPILE_AHEAD_START": "auto"}):
                ahead = sorted((e for e in slices if e["name"] == "compile ahead"), key=lambda e: e["ts"])
                first = sorted((e for e in slices if e.get("cat") == "launch" and e["name"] == "offset_by_index"),
                               key=lambda e: e["ts"])
                before = [e for e in first if ahead and e["ts"] < ahead[0]["ts"]]
                saved = sum(e["dur"] for e in before) / 2e6  # over two devices, in seconds
                longest = max([e["dur"] / 2e6 for e in before] or [0])
                what = "%s launches, first_split_compile_seconds %s: processes %s (report %s), %d launches before" % (
                    launches, seconds, [(e["ts"], e.get("args")) for e in ahead], counted, len(before))
                expect(len(first) == int(launches), "%s: %d launches of the first program" % (what, len(first)))
                if launches == "4":
                    if sum(e["dur"] for e in first) / 2e6 < compiles / 2:
                        expect(not ahead and not counted.get("processes"), "%s: expected none" % what)
                    continue
                expect(ahead and counted.get("processes") == len(ahead) and saved + longest >= compiles / 2,
                       "%s: expected one, once the launches before would have saved %.4f s (%.4f)" %
                       (what, compiles, saved))
                expect(counted.get("held_until_paid", 0) >= 1 or longest >= compiles / 2,
                       "%s: no launch held on home until it paid" % what)

if __name__ == "__main__":
    sys.exit(layer_checks.main(CompileChecks, "coex-compile-check-"))
