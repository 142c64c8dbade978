#!/usr/bin/env python3
"""What coex compiles ahead of a program's first split (docs/design.md, "Compiled ahead, in a
process of its own", "Size by time"): the `coex compile-ahead` process, its limit and when it
starts, the first-launch probe, and home's first runs and short launches that start no compile. The
same runner as layer_checks.py: each check runs a test app bare and under coex on real PoCL devices.
Usage: compile_ahead_checks.py --build DIR --source DIR CHECK
"""
import json
import os
import sys
import time

import layer_checks
from first_runs_after_bare import FirstRunsAfterBare
from layer_checks import expect, expect_timed, run


class CompileAheadChecks(FirstRunsAfterBare, layer_checks.Checks):
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
    sys.exit(layer_checks.main(CompileAheadChecks, "coex-compile-ahead-check-"))
