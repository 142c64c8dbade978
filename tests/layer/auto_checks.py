#!/usr/bin/env python3
"""How auto treats a program's first launches (docs/design.md, "Size by time" and "One-time costs"):
a device still building joins late, the first launch waits for the analysis and for home's build, a
device much slower than home gets no build (a launch with much data: moves_checks.py). The same runner as
layer_checks.py: each check runs a test app bare and under coex on real PoCL devices.
Usage: auto_checks.py --build DIR --source DIR CHECK
"""
import json
import os
import re
import subprocess
import sys
import time

import layer_checks
from first_launches import FirstLaunches, expect_first_launch
from layer_checks import expect, expect_timed, run


class AutoChecks(FirstLaunches, layer_checks.Checks):
    def check_late_joiner(self):
        # Device 1's build begins a second late (COEX_FAULT=slow_build:1). Under auto the app's
        # launches do not wait for it (docs/design.md, "One-time costs"): they are split from the
        # start, home taking the work device 1 would join for; the output is the bare one. They wait
        # for the analysis as long as it takes, which a loaded machine may make longer than a second.
        app = os.path.join(self.build, "tests", "apps", "matmul")
        rc, bare, _ = run([app])
        expect(rc == 0, "matmul fails bare")
        trace = os.path.join(self.tmp, "late-joiner-trace.json")
        env = {"COEX_POLICY": "auto", "COEX_FAULT": "slow_build:1", "COEX_TRACE": trace,
               "COEX_AUTO_ANALYSIS_WAIT": "30", "COEX_CACHE": os.path.join(self.tmp, "late-joiner-history.json")}
        rc, out, err = run([app], env, self.layer)
        expect(rc == 0 and out == bare, "exit %d, output:\n%s\nstderr:\n%s" % (rc, out, err))
        with open(trace) as f:
            events = json.load(f)["traceEvents"]
        launches = [e["args"] for e in events if e.get("ph") == "X" and e.get("cat") == "launch"]
        split = [a for a in launches if a.get("split")]
        expect(split, "no launch was split: %s" % launches)
        expect("1" not in split[0]["work_items"] and split[0].get("cold"),
               "the first split launch waited for device 1's build: %s" % split[0])

    def check_short_launches_while_building(self):
        # With home the only device built (device 1's build begins a second late, COEX_FAULT=slow_build:1)
        # a split gains only from a device that joins while it runs (docs/design.md, "One-time costs"):
        # jacobi2d's twenty sweeps of a few milliseconds run on home whole (`preparing`) once one was
        # measured there, in its split with no other device taking part (or, measured shorter than a
        # split costs, as `too_small`: auto_split_floor_seconds). Before, every sweep was split
        # on home alone (a cold split is no verdict): twenty of twenty. On `basic` devices, whose split
        # launches run in the app's thread (devices/device_set.h, user events), each sweep is planned
        # after the one before ended; on `pthread` ones the sweeps enqueued while the first split runs
        # stay on home as `split_being_measured` either way.
        app = os.path.join(self.build, "tests", "apps", "jacobi2d")
        pocl = {"POCL_DEVICES": "basic basic"}
        rc, bare, _ = run([app], pocl)
        expect(rc == 0, "jacobi2d fails bare")
        trace = os.path.join(self.tmp, "short-while-building-trace.json")
        env = {"POCL_DEVICES": "basic basic", "COEX_POLICY": "auto", "COEX_FAULT": "slow_build:1", "COEX_TRACE": trace,
               "COEX_AUTO_ANALYSIS_WAIT": "30",
               "COEX_CACHE": os.path.join(self.tmp, "short-while-building-history.json")}
        rc, out, err = run([app], env, self.layer)
        expect(rc == 0 and out == bare, "exit %d, output:\n%s\nstderr:\n%s" % (rc, out, err))
        with open(trace) as f:
            events = json.load(f)["traceEvents"]
        launches = [e["args"] for e in sorted(events, key=lambda e: e.get("ts", 0))
                    if e.get("ph") == "X" and e.get("cat") == "launch"]
        expect(len(launches) == 20, "%d launches in the trace, not 20" % len(launches))
        home_only = [a for a in launches if a.get("split") and "1" not in a["work_items"]]
        # Measured shorter than a split costs, a sweep is too small as well (auto_split_floor_seconds).
        on_home = [a for a in launches if a.get("not_split") in ("preparing", "split_being_measured", "too_small")]
        # The sweeps enqueued before the first split's time is in may split too.
        expect(len(home_only) <= 3 and len(home_only) + len(on_home) == 20,
               "%d sweeps split on home alone, %d run whole there: %s" % (len(home_only), len(on_home), launches))
        # On `pthread` devices the app enqueues all twenty sweeps while the first split has not run: the
        # sweeps planned before home's time is known run whole on home (`preparing`), auto's probes among
        # them too (launches 10, 11 and 12), which split on home alone before; a second split may follow
        # where the first one's time (the kernel's first run on home) says nothing short.
        pthread = {"POCL_DEVICES": "pthread pthread"}
        rc, bare, _ = run([app], pthread)
        expect(rc == 0, "jacobi2d fails bare on pthread devices")
        report = os.path.join(self.tmp, "short-while-building-pthread.json")
        env = dict(env, POCL_DEVICES="pthread pthread", COEX_REPORT=report, COEX_TRACE="",
                   COEX_CACHE=os.path.join(self.tmp, "short-while-building-pthread-history.json"))
        rc, out, err = run([app], env, self.layer)
        expect(rc == 0 and out == bare, "pthread: exit %d, output:\n%s\nstderr:\n%s" % (rc, out, err))
        with open(report) as f:
            kernel = json.load(f)["kernels"][0]
        expect(kernel["split_launches"] <= 2 and kernel["launches"] == 20 and
               set(kernel["not_split"]) <= {"preparing", "split_being_measured", "too_small"},
               "pthread: %d of 20 sweeps split, the others %s" % (kernel["split_launches"], kernel["not_split"]))
        # Beside a device of another kind, which builds from source in the app's process (PoCL compiles
        # one thing at a time there), not even the first sweep, nothing timed, is split on home alone: a
        # basic home and a pthread device 1 whose build begins a second late.
        mixed = {"POCL_DEVICES": "basic pthread"}
        rc, bare, _ = run([app], mixed)
        expect(rc == 0, "jacobi2d fails bare on basic and pthread devices")
        env = dict(env, POCL_DEVICES="basic pthread", COEX_REPORT="", COEX_TRACE=trace,
                   COEX_CACHE=os.path.join(self.tmp, "short-while-building-mixed-history.json"))
        rc, out, err = run([app], env, self.layer)
        expect(rc == 0 and out == bare, "basic pthread: exit %d, output:\n%s\nstderr:\n%s" % (rc, out, err))
        with open(trace) as f:
            launches = [e["args"] for e in sorted(json.load(f)["traceEvents"], key=lambda e: e.get("ts", 0))
                        if e.get("ph") == "X" and e.get("cat") == "launch"]
        home_only = [a for a in launches if a.get("split") and "1" not in a["work_items"]]
        expect(len(launches) == 20 and not home_only,
               "basic pthread: %d launches, %d split on home alone, the first %s" %
               (len(launches), len(home_only), launches[:1]))

    def check_analysis_wait(self):
        # Under auto the program's first launch that could be split waits up to auto_analysis_wait for
        # coex's analysis of the program (docs/design.md, "One-time costs"). With the analysis beginning
        # a second after that launch asks for it (COEX_FAULT=slow_analysis: counted from the launch, so
        # that a loaded machine's slow start cannot end the analysis first), vector_add's first launch
        # runs on home unsplit (`not_split: preparing`) under a wait of 0.2 s, and is split under one of
        # 30 s.
        for wait, splits in (("0.2", False), ("30", True)):
            first = self.vector_add_first_launch("analysis-wait-" + wait, dict(
                layer_checks.FAST_FRESH_MEMORY, COEX_POLICY="auto", COEX_AUTO_ANALYSIS_WAIT=wait,
                COEX_FAULT="slow_analysis"))
            expect_first_launch(first, None if splits else "preparing", "with a wait of %s s" % wait)

    def check_first_launch_not_held(self):
        # The first launch's notice says so where libclang cannot be loaded, but does not wait to learn
        # it (docs/design.md, "One-time costs"): asked of the analysis process before it had said, the
        # question waited for the whole analysis, and every launch behind it. With the analysis process
        # loading libclang three seconds late (COEX_FAULT=slow_libclang), vector_add's launches run on
        # home (`preparing`; the first waits auto_analysis_wait for the analysis) and all of them end
        # well before the analysis could have. Nor does the exit wait for the analysis: it ends it
        # (it waited 2.5 s).
        for attempt in range(2):  # a second run only where the first met a stalled machine
            tag = "first-launch-not-held-%d" % attempt
            first = self.vector_add_first_launch(tag, {
                "COEX_POLICY": "auto", "COEX_AUTO_ANALYSIS_WAIT": "0.2", "COEX_FAULT": "slow_libclang"})
            expect_first_launch(first, "preparing", "with libclang loaded late")
            with open(os.path.join(self.tmp, "%s-trace.json" % tag)) as f:
                slices = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
            launches = [e for e in slices if e.get("cat") == "launch"]
            start = min(e["ts"] for e in launches)
            span = (max(e["ts"] + e.get("dur", 0) for e in launches) - start) / 1e6
            exits = [e for e in slices if e.get("name") == "exit waits"]
            expect(exits, "no exit waits slice in the trace")
            exit_waits = sum(e.get("dur", 0) for e in exits) / 1e6
            if span < 1.5 and exit_waits < 1.5:
                break
        expect_timed(span < 1.5 and all(e["args"].get("not_split") == "preparing" for e in launches),
                     "the launches took %.2f s from the first one's start (libclang loaded 3 s late): %s" %
                     (span, [e["args"] for e in launches]))
        expect_timed(exit_waits < 1.5, "the exit waited %.2f s (libclang loaded 3 s late)" % exit_waits)

    def check_kept_analysis(self):
        # A program's analysis is kept beside the kept binaries and read by its later runs
        # (docs/kernel-analysis.md, "Kept analyses"): their first launch does not wait for libclang.
        # A first run makes vector_add's analysis and keeps it; a second run, with a History of its
        # own and libclang loaded three seconds late by any analysis process (COEX_FAULT=slow_libclang),
        # splits its first launch all the same, from the kept analysis; with binary_cache off the same
        # run finds none, and its first launch runs on home (`preparing`) after auto_analysis_wait.
        def analysis_slices(tag):
            with open(os.path.join(self.tmp, "%s-trace.json" % tag)) as f:
                return [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X" and e.get("name") == "analysis"]

        kept = os.path.join(self.tmp, "kept")  # the checks keep nothing unless they name a folder
        first = self.vector_add_first_launch("kept-analysis-made", dict(
            layer_checks.FAST_FRESH_MEMORY, COEX_POLICY="auto", COEX_AUTO_ANALYSIS_WAIT="30", COEX_BINARY_CACHE=kept))
        expect_first_launch(first, None, "in the run that makes the analysis")
        made = analysis_slices("kept-analysis-made")
        expect(made and not made[0].get("args", {}).get("kept"), "the first run's analysis: %s" % made)
        folder = os.path.join(kept, "analyses")
        expect([f for _, _, files in os.walk(folder) for f in files if f.endswith(".bin")],
               "nothing kept in %s" % folder)
        # A wait of 2 s, well under libclang's 3 s delay, and long enough for a loaded machine's
        # read of the kept file.
        late = dict(layer_checks.FAST_FRESH_MEMORY, COEX_POLICY="auto", COEX_AUTO_ANALYSIS_WAIT="2",
                    COEX_FAULT="slow_libclang", COEX_BINARY_CACHE=kept)
        first = self.vector_add_first_launch("kept-analysis-read", late)
        expect_first_launch(first, None, "with the analysis kept and libclang loaded late")
        read = analysis_slices("kept-analysis-read")
        expect(read and read[0].get("args", {}).get("kept"),
               "the second run's analysis was not the kept one: %s" % read)
        expect_timed(read[0].get("dur", 0) < 1000000,
                     "the second run's read of the kept analysis took 1 s or more: %s" % read)
        first = self.vector_add_first_launch("kept-analysis-off", dict(late, COEX_BINARY_CACHE="off"))
        expect_first_launch(first, "preparing", "with binary_cache off and libclang loaded late")
        # Where this build kept analyses, no analysis process starts at clCreateContext: a run whose
        # analysis is kept loads libclang in no process (the dynamic linker's list, LD_DEBUG=files).
        app = os.path.join(self.build, "tests", "apps", "vector_add")
        rc, out, err = run([app], dict(late, LD_DEBUG="files", COEX_CACHE=os.path.join(self.tmp, "kept-analysis-ld.json")),
                           self.layer)
        expect(rc == 0 and out.strip().endswith("PASS"), "exit %d, output:\n%s" % (rc, out))
        clang = sorted(set(m.group(1) for m in re.finditer(r"^\s*(\d+):\s+file=\S*libclang(-\d+)?\.so", err, re.M)))
        expect(not clang, "processes %s loaded libclang in a run whose analysis was kept" % clang)

    def check_analysis_process(self):
        # The kernel analysis runs in a process of its own (docs/kernel-analysis.md, "The analysis
        # process"): the app's process never loads libclang (the dynamic linker's list of the files
        # each process loads, LD_DEBUG=files), another process does, and vector_add's first launch is
        # split all the same. With analysis_process false, the app's process loads it. Nothing is
        # kept (binary_cache off): the second run would read the first one's analysis.
        for in_process in (False, True):
            tag = "analysis-in-app" if in_process else "analysis-process"
            env = dict(layer_checks.FAST_FRESH_MEMORY, COEX_POLICY="auto", COEX_AUTO_ANALYSIS_WAIT="30",
                       LD_DEBUG="files", COEX_ANALYSIS_PROCESS="false" if in_process else "true",
                       COEX_BINARY_CACHE="off")
            app = os.path.join(self.build, "tests", "apps", "vector_add")
            rc, bare, _ = run([app])
            trace = os.path.join(self.tmp, "%s-trace.json" % tag)
            rc, out, err = run([app], dict(env, COEX_TRACE=trace, COEX_CACHE=os.path.join(self.tmp, tag + ".json")),
                               self.layer)
            expect(rc == 0 and out == bare, "%s: exit %d, output:\n%s" % (tag, rc, out))
            loaded = {}  # pid -> files its dynamic linker loaded
            for m in re.finditer(r"^\s*(\d+):\s+file=(\S+)", err, re.M):
                loaded.setdefault(m.group(1), set()).add(os.path.basename(m.group(2)))
            apps = [pid for pid, files in loaded.items() if "libcoex.so" in files]
            clang = [pid for pid, files in loaded.items() if any(re.match(r"libclang(-\d+)?\.so", f) for f in files)]
            expect(len(apps) == 1, "%s: processes that loaded libcoex.so: %s" % (tag, apps))
            expect(clang == apps if in_process else clang and apps[0] not in clang,
                   "%s: libclang loaded by %s, the app is %s" % (tag, clang, apps))
            with open(trace) as f:
                launches = sorted((e for e in json.load(f)["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "launch"),
                                  key=lambda e: e["ts"])
            expect(launches and launches[0]["args"].get("split"), "%s: first launch %s" % (tag, launches[:1]))

    def check_analysis_process_from_run(self):
        # `coex run` starts the analysis process before it execs the app (docs/kernel-analysis.md,
        # "Started by coex run"): libclang loads while the app starts. Here any analysis process loads
        # it three seconds late (COEX_FAULT=slow_libclang), and the app starts five seconds after the
        # launcher, from a shell that sleeps and then execs it (the same process): its first launch
        # is split, from the analysis made by the process `coex run` started; one started at the
        # app's clCreateContext would still be loading libclang when auto_analysis_wait (1 s) ends.
        # Run as a child of that shell (another process), the app does not take that process: its
        # own is three seconds late, and the first launch runs on home (`preparing`). Both outputs
        # are the bare one. On a machine of one core `coex run` starts none: both run on home.
        app = os.path.join(self.build, "tests", "apps", "vector_add")
        rc, bare, _ = run([app])
        expect(rc == 0, "vector_add fails bare")
        env = dict(layer_checks.FAST_FRESH_MEMORY, COEX_POLICY="auto", COEX_AUTO_ANALYSIS_WAIT="1",
                   COEX_FAULT="slow_libclang")
        early = len(os.sched_getaffinity(0)) >= 2
        for tag, script, not_split in (("from-run", 'sleep 5; exec "$0"', None if early else "preparing"),
                                       ("from-run-child", 'sleep 5; "$0"; exit $?', "preparing")):
            trace = os.path.join(self.tmp, "%s-trace.json" % tag)
            rc, out, err = run([self.coex, "run", "--trace", trace, "sh", "-c", script, app],
                               dict(env, COEX_CACHE=os.path.join(self.tmp, tag + ".json")))
            expect(rc == 0 and out == bare, "%s: exit %d, output:\n%s\nstderr:\n%s" % (tag, rc, out, err))
            with open(trace) as f:
                events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
            launches = sorted((e for e in events if e.get("cat") == "launch"), key=lambda e: e["ts"])
            expect(launches, "%s: no launch in the trace" % tag)
            expect_first_launch(launches[0]["args"], not_split, "%s:" % tag)
            analyses = [e for e in events if e.get("name") == "analysis"]
            from_run = [e for e in analyses if e.get("args", {}).get("process_from") == "coex run"]
            expect(bool(from_run) == (not_split is None), "%s: analysis slices %s" % (tag, analyses))
        if not early:
            return
        # An app that never calls OpenCL (`true`: coex never takes the socket, nor shuts it down at
        # its exit) leaves it to its children (`sleep 30 &`): the analysis process `coex run` started
        # ends with the app all the same (it watches the app's process, COEX_ANALYSIS_FOR_PROCESS),
        # not with the child.
        env = layer_checks.coex_env({"COEX_POLICY": "auto", "COEX_CACHE": os.path.join(self.tmp, "from-run-held.json")})
        # Its standard error not read here: the analysis process holds the app's.
        p = subprocess.Popen([self.coex, "run", "sh", "-c", 'sleep 30 >/dev/null 2>&1 & echo "$!"; exec true'],
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        out, _ = p.communicate(timeout=60)
        child = int(out.split()[0])
        try:
            expect(p.returncode == 0, "held: exit %d" % p.returncode)
            marker = "COEX_ANALYSIS_FOR_PROCESS=%d" % p.pid
            serving = []
            for _ in range(50):  # up to 5 s
                serving = []
                for pid in filter(str.isdigit, os.listdir("/proc")):
                    try:
                        with open("/proc/%s/environ" % pid, "rb") as f:
                            if marker.encode() in f.read().split(b"\0"):
                                serving.append(pid)
                    except OSError:
                        pass
                if not serving:
                    break
                time.sleep(0.1)
            expect(not serving, "analysis processes %s outlived the app (its child %d holds the socket)" % (serving, child))
        finally:
            os.kill(child, 9)

    def check_home_build_wait(self):
        # group_reduce's kernels read get_group_id: a split needs coex's rewritten program, whose
        # build on home starts as the app's clBuildProgram returns. Its first launch waits for that
        # build up to twice the app's own build (docs/design.md, "One-time costs"), here with
        # auto_home_build_wait at 0 so that only that rule can make it wait. Builds' times vary on
        # a loaded machine: one of three runs must split its first launch (of reduce_sum), and each output must be
        # the bare one. With the setting alone (no wait), every first launch would run on home.
        # The two devices are of two kinds (PoCL's pthread and basic): beside one of its own kind, home's
        # build ends only once its binary was read for the other to build from (exec/shared_binaries.h),
        # a second compile on PoCL where its cache is cold, which the app's build does not include: 0.33 to
        # 1.1 s under AddressSanitizer (idle to loaded), where the app's build took 0.13 to 0.44 s.
        app = os.path.join(self.build, "tests", "apps", "group_reduce")
        devices = {"POCL_DEVICES": "pthread basic"}
        rc, bare, _ = run([app], devices)
        expect(rc == 0, "group_reduce fails bare")
        firsts = []
        for attempt in range(3):
            tag = "home-build-wait-%d" % attempt
            trace = os.path.join(self.tmp, tag + "-trace.json")
            env = {**devices, "COEX_POLICY": "auto", "COEX_AUTO_HOME_BUILD_WAIT": "0", "COEX_AUTO_ANALYSIS_WAIT": "30",
                   "COEX_TRACE": trace, "COEX_CACHE": os.path.join(self.tmp, tag + ".json")}
            rc, out, err = run([app], env, self.layer)
            expect(rc == 0 and out == bare, "%s: exit %d, output:\n%s\nstderr:\n%s" % (tag, rc, out, err))
            with open(trace) as f:
                launches = [e for e in json.load(f)["traceEvents"]
                            if e.get("ph") == "X" and e.get("cat") == "launch" and e.get("name") == "reduce_sum"]
            expect(launches, "%s: no launch of reduce_sum in the trace" % tag)
            first = min(launches, key=lambda e: e["ts"])["args"]
            firsts.append(first)
            if first.get("split"):
                return
        expect_timed(False, "no first launch waited for home's build: %s" % firsts)

    def check_home_build_overrun(self):
        # A launch timed on home waits for home's build of the rewritten program, but the launches
        # that wait for it wait no longer in all than a split could save of one (docs/design.md,
        # "One-time costs"); then they run on home whole (`preparing`). long_items' kernel reads
        # get_group_id ("group"): a split needs the rewrite, whose build on home (device 0) begins a
        # second late (COEX_FAULT=slow_build:0). Its forty launches of tens of milliseconds each,
        # measured long (auto_wait_seconds 1 ms) or short (10 s) beside auto_home_build_wait at 0.5 s,
        # must neither wait for that build in their plan or split set-up (the code before waited up
        # to its end, most of a second, for launches measured long, and home_build_wait at each of
        # those measured short), nor stop splitting: launches after the build are split. The first
        # launch's wait (nothing has timed it: home_build_wait) is not this rule's, and left out. The
        # output is the bare one.
        app = [os.path.join(self.build, "tests", "layer", "long_items"), "40", "group"]
        devices = {"POCL_DEVICES": "basic basic"}
        rc, bare, _ = run(app, devices)
        expect(rc == 0, "long_items group fails bare")
        for measured, wait_seconds in (("long", "0.001"), ("short", "10")):
            tag = "home-build-overrun-" + measured
            trace = os.path.join(self.tmp, tag + "-trace.json")
            env = {**devices, "COEX_POLICY": "auto", "COEX_FAULT": "slow_build:0", "COEX_AUTO_WAIT_SECONDS": wait_seconds,
                   "COEX_AUTO_HOME_BUILD_WAIT": "0.5", "COEX_AUTO_ANALYSIS_WAIT": "30", "COEX_TRACE": trace,
                   "COEX_CACHE": os.path.join(self.tmp, tag + ".json")}
            rc, out, err = run(app, env, self.layer)
            expect(rc == 0 and out == bare, "%s: exit %d, output:\n%s\nstderr:\n%s" % (tag, rc, out, err))
            with open(trace) as f:
                events = sorted((e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"), key=lambda e: e["ts"])
            launches = [e for e in events if e.get("cat") == "launch" and e["name"] == "row_products"]
            expect(len(launches) == 40, "%s: %d launches of row_products in the trace, not 40" % (tag, len(launches)))
            home_build = [e for e in events if e["name"] == "build" and e["tid"] == 0]
            summary = [(round(e["dur"] / 1e6, 3), e["args"].get("not_split")) for e in launches]
            expect(home_build, "%s: no build on home in the trace (is the kernel rewritten?); launches %s" %
                   (tag, summary))
            built = home_build[0]["ts"] + home_build[0]["dur"]
            first_end = launches[0]["ts"] + launches[0]["dur"]
            # Only a plan or set-up that begins while home's build runs can wait for it: those after
            # the build are the splits' own work (under AddressSanitizer on a loaded machine, 1 to 20 ms
            # each and some 60 of them, which the bound is not about).
            while_building = [e for e in events
                              if e["name"] in ("plan", "split setup") and first_end <= e["ts"] < built]
            # What a split could save of one launch over the two devices: half of one on home, the
            # first (too few work-items to wait for anything; a loaded machine's launches are longer,
            # and so is the bound). The code before waited 0.5 s at each launch measured short, up to
            # the build's end at each measured long.
            on_home = launches[0]["dur"] / 1e6
            bound = on_home / 2 + 0.1
            waits = [(e["name"], round(e["dur"] / 1e6, 3)) for e in while_building if e["dur"] / 1e6 > bound]
            waited = sum(e["dur"] for e in while_building) / 1e6
            expect_timed(not waits and waited < bound,
                         "%s: launches waited for home's build: %s, %.3f s in all (bound %.3f s); launches %s" %
                         (tag, waits, waited, bound, summary))
            expect_timed(launches[1]["args"].get("not_split") == "preparing" and launches[1]["ts"] < built,
                         "%s: the second launch, before home's build ended, did not run on home as preparing: %s" %
                         (tag, summary))
            expect_timed(any(e["args"].get("split") for e in launches if e["ts"] >= built),
                         "%s: no launch split after home's build ended: %s" % (tag, summary))

    def check_deferred_builds(self):
        # A device much slower than home by its specification (a CPU beside a GPU; here PoCL's basic
        # device beside its pthread devices with 8 compute units, the app's among them) sits auto's
        # launches out, unbuilt, until two launches measured on home are long enough for the share
        # it promises (1/9 beside one such device) to be worth min_split_seconds (docs/design.md,
        # "Size by time"): vector_add's short launches leave no build nor sub-launch on its track;
        # long_items' launches lead to one build, begun after the first launch ended, once
        # min_split_seconds is a twentieth of that share of them (taken from a run that splits nothing:
        # a third was too little on CI, where a sanitizer build's launches beside other tests ran 58 ms
        # in one run and long enough in the other for the share of 58 ms to fall below the setting).
        # With a second pthread device, vector_add's launches are split over the two, and the basic
        # device still gets no build nor sub-launch. PoCL 5 names the drivers cpu and cpu-minimal.
        # The first launch waits for the analysis as long as it takes: a slow one (a loaded machine,
        # a sanitizer build) would leave all four of vector_add's launches `preparing` on home.
        for devices in ("pthread basic", "pthread pthread basic"):
            env = dict(layer_checks.FAST_FRESH_MEMORY, POCL_DEVICES=devices, POCL_MAX_PTHREAD_COUNT="8",
                       POCL_CPU_MAX_CU_COUNT="8", COEX_POLICY="auto", COEX_MIN_SPLIT_SECONDS="0.004",
                       COEX_AUTO_ANALYSIS_WAIT="30")
            rc, out, err = run([self.coex, "devices"], env)
            rows = [l for l in out.splitlines() if l[:1].isdigit()]
            slow = [int(l.split()[0]) for l in rows if " basic-" in l or " cpu-minimal-" in l]
            fast = [int(l.split()[0]) for l in rows if " pthread-" in l or re.search(r" cpu-(?!minimal)", l)]
            expect(rc == 0 and len(slow) == 1 and len(fast) == devices.count("pthread"),
                   "coex devices:\n%s%s" % (out, err))
            home, other = fast[0], slow[0]
            env["APP_DEVICE"] = str(home)
            apps = [(("apps", "vector_add"), False, [])]
            if len(fast) == 1:
                # Sixteen launches: the two first are timed on home (too_small), the third lets the
                # basic device in and asks for the analysis, and its build must end before the app
                # exits (the trace records a build at its end): with four launches, and once on CI
                # with eight (about 0.3 s after the third), a loaded machine exited first.
                apps.append((("layer", "long_items"), True, ["16"]))
            for app, built, args in apps:
                what = "%s on %s" % (app[1], devices)
                path = os.path.join(self.build, "tests", *app)
                rc, bare, _ = run([path] + args, env)
                expect(rc == 0, "%s fails bare" % what)
                trace = os.path.join(self.tmp, "deferred-builds-trace.json")
                history = os.path.join(self.tmp, "deferred-builds-%s-%d.json" % (app[1], len(fast)))

                def traced(extra):
                    rc, out, err = run([path] + args, dict(env, COEX_TRACE=trace, COEX_CACHE=history, **extra),
                                       self.layer)
                    expect(rc == 0 and out == bare, "%s: exit %d, output:\n%s\nstderr:\n%s" % (what, rc, out, err))
                    with open(trace) as f:
                        return [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]

                if built:
                    events = traced({"COEX_MIN_SPLIT_SECONDS": "1000"})
                    home_launches = sorted((e for e in events if e.get("cat") == "kernel" and e["tid"] == home),
                                           key=lambda e: e["ts"])
                    expect(len(home_launches) >= 2, "%s: home's launches %s" % (what, home_launches))
                    seconds = min(e["dur"] for e in home_launches[:2]) / 1e6
                    # Exit does not wait for a build nobody needs: one of three runs must show the
                    # build; a run without one is the only one run again.
                    for attempt in range(3):
                        if os.path.exists(history):
                            os.remove(history)
                        events = traced({"COEX_MIN_SPLIT_SECONDS": "%.6f" % (seconds / 9 / 20)})
                        if any(e.get("name") == "build" and e["tid"] == other for e in events):
                            break
                else:
                    # The second pthread device takes part once its build of the app's program is
                    # done; on a loaded machine (a sanitizer build beside other tests) that build has
                    # outlasted all four launches, which then ran their packages on home alone. One
                    # of three runs must reach it; a run on home alone is the only one run again.
                    for attempt in range(3 if len(fast) > 1 else 1):
                        if os.path.exists(history):
                            os.remove(history)
                        events = traced({})
                        kernels = {e["tid"] for e in events if e.get("cat") == "kernel"}
                        if kernels != {home}:
                            break
                builds = [e for e in events if e.get("name") == "build" and e["tid"] == other]
                kernels = {e["tid"] for e in events if e.get("cat") == "kernel"}
                if len(fast) > 1:
                    expect_timed(kernels == set(fast), "%s: sub-launches on %s, expected %s" % (what, kernels, fast))
                # With every device but home held back, coex neither loads libclang nor analyses the
                # program: the load would stall the driver's compile on the app's thread.
                analyses = [e for e in events if e.get("name") in ("analysis", "load libclang")]
                if not built:
                    expect(not builds and other not in kernels,
                           "%s: device %d was built for (%s) or ran sub-launches" % (what, other, builds))
                    expect(bool(analyses) == (len(fast) > 1), "%s: analyses %s" % (what, analyses))
                    continue
                first_launch = min((e for e in events if e.get("cat") == "kernel" and e["tid"] == home),
                                   key=lambda e: e["ts"])
                expect_timed(len(builds) == 1 and builds[0]["ts"] >= first_launch["ts"] + first_launch["dur"],
                             "%s: device %d's builds %s, home's first launch %s, min_split_seconds from launches of "
                             "%.4f s, home's launches %s, analyses %s" % (
                                 what, other, builds, first_launch, seconds,
                                 [(round(e["dur"] / 1e6, 4), e.get("args", {}).get("not_split"))
                                  for e in events if e.get("cat") == "launch"], analyses))

    def check_late_devices(self):
        # A device auto_late_devices names gets no context nor build until the program has run launches
        # that could take it for auto_late_after (docs/design.md, "One-time costs"), and beside none but
        # late devices coex prepares nothing before a launch may let one in: no analysis (nor libclang's
        # load), no build on home. On two basic devices, device 1 named: vector_add (milliseconds) ends
        # with nothing prepared and no sub-launch on device 1 (without the setting it is built, and the
        # program analysed); long_items' twelve launches of tens of milliseconds each let it in
        # (auto_late_after 0.02 s, auto_late_cost 0.05 s: at a launch that long, or once the launches so
        # far have run that long), after which it is built and runs sub-launches; with auto_late_cost
        # 60 s, which neither a launch nor the program reaches, never (its preparation would outlast the
        # program, and the exit wait for it). The report names device 1 among its late devices, never
        # let in, then let in 0.02 s or more after the first launch that could take it. The outputs are
        # the bare ones. vector_add's auto_late_after is 5 s: a loaded machine (a sanitizer build) may
        # take the default's 0.5 s over its launches. Not compiled ahead (compile_ahead_checks.py, compile_ahead): in
        # a PoCL cache cold for it, vector_add's launch would wait for that, and device 1 build after it.
        # New memory as fast as the nominal rate: on this machine vector_add's moves into new memory keep
        # its launches on home before anything is built for device 1 (docs/design.md, "Size by time").
        env = dict(layer_checks.FAST_FRESH_MEMORY, POCL_DEVICES="basic basic", COEX_POLICY="auto",
                   COEX_AUTO_ANALYSIS_WAIT="30", COEX_COMPILE_AHEAD="false")
        trace = os.path.join(self.tmp, "late-devices-trace.json")

        def traced(app, args, late, tag, after, cost="0.05", extra_env=None):
            path = os.path.join(self.build, "tests", *app)
            rc, bare, _ = run([path] + args, env)
            expect(rc == 0, "%s fails bare" % app[1])
            report = os.path.join(self.tmp, "late-devices-%s-report.json" % tag)
            extra = {"COEX_AUTO_LATE_DEVICES": late, "COEX_AUTO_LATE_AFTER": after, "COEX_AUTO_LATE_COST": cost,
                     "COEX_TRACE": trace, **(extra_env or {}),
                     "COEX_REPORT": report, "COEX_CACHE": os.path.join(self.tmp, "late-devices-%s.json" % tag)}
            rc, out, err = run([path] + args, dict(env, **extra), self.layer)
            expect(rc == 0 and out == bare,
                   "%s, late %s: exit %d, output:\n%s\nstderr:\n%s" % (app[1], late, rc, out, err))
            with open(trace) as f:
                every = json.load(f)["traceEvents"]
            events = [e for e in every if e.get("tid") == 1]
            with open(report) as f:
                written = json.load(f)
            late_devices = written.get("late_devices")
            not_split = layer_checks.not_split_reasons(written)
            split = sum(kernel["split_launches"] for kernel in written["kernels"])
            return {"builds": [e for e in events if e.get("name") == "build"],
                    "let_in": [e for e in events if e.get("name") == "let in (auto_late_after)"],
                    "contexts": [e for e in events if e.get("name") == "context"],
                    "kernels": [e for e in events if e.get("cat") == "kernel"],
                    "prepared": [e for e in every if e.get("name") in ("analysis", "load libclang") or
                                 (e.get("name") == "build" and e.get("tid") == 0)],
                    "home_launches": sorted((e for e in every if e.get("cat") == "kernel" and e.get("tid") == 0),
                                            key=lambda e: e["ts"]),
                    "late": late_devices, "not_split": not_split, "split": split}

        never = [{"device": 1, "let_in_after": None}]
        r = traced(("apps", "vector_add"), [], "!all", "short-control", "5")
        expect(r["builds"] and any(e["name"] == "analysis" for e in r["prepared"]) and not r["let_in"]
               and r["late"] is None,
               "vector_add, no late device: device 1's builds %s, analyses %s, the report's late devices %s"
               % (r["builds"], r["prepared"], r["late"]))
        for app, args, tag, after, cost, extra in ((("apps", "vector_add"), [], "short", "5", "0.05", None),
                                                   (("layer", "long_items"), ["12"], "long-costly", "0.02", "60", None),
                                                   # One launch, nothing timed before it, none but device 1
                                                   # (late) to take it: it runs on home whole (`preparing`)
                                                   # rather than split for device 1 to join, and, as long as
                                                   # auto_late_after and auto_late_cost together (0.02 s),
                                                   # has the next run let device 1 in at clBuildProgram.
                                                   # min_split_work_items 1: long_items' 1,024 items count
                                                   # as a launch that could be split.
                                                   (("layer", "long_items"), ["1"], "single", "0.01", "0.01",
                                                    {"COEX_MIN_SPLIT_WORK_ITEMS": "1"})):
            r = traced(app, args, "1", tag, after, cost, extra)
            expect(not r["builds"] and not r["prepared"] and not r["let_in"] and not r["kernels"]
                   and r["late"] == never,
                   "%s %s, device 1 late, auto_late_cost %s s: built %s, prepared %s, let in %s, sub-launches %s, "
                   "the report's late devices %s" % (app[1], args, cost, r["builds"], r["prepared"], r["let_in"],
                                                     r["kernels"], r["late"]))
        r = traced(("layer", "long_items"), ["1"], "1", "single", "0.01", "0.01", {"COEX_MIN_SPLIT_WORK_ITEMS": "1"})
        # Its one launch waits for the analysis posted at clBuildProgram, lets device 1 in and is split
        # with it joining: split, not run on home whole. Device 1 runs sub-launches where its build
        # ends before home has taken every chunk; under a sanitizer build with the tests two at a
        # time its build from source took 138 ms, longer than the launch.
        expect(len(r["let_in"]) == 1 and r["builds"] and r["split"] == 1
               and r["late"] == [{"device": 1, "let_in_after": 0}],
               "long_items, one launch, run 2: let in %s, builds %s, %d split launches, %d sub-launches on "
               "device 1, the report's late devices %s"
               % (r["let_in"], r["builds"], r["split"], len(r["kernels"]), r["late"]))
        # Twelve launches: device 1 is built once let in, and nothing is prepared before home's first
        # launch has ended (the second one, timed long, may prepare home while the clock runs).
        r = traced(("layer", "long_items"), ["12"], "1", "long", "0.02")
        first = r["home_launches"][0]
        expect(len(r["let_in"]) == 1 and r["builds"] and r["kernels"]
               and min(b["ts"] for b in r["builds"]) >= r["let_in"][0]["ts"]
               and min(p["ts"] for p in r["prepared"]) >= first["ts"] + first["dur"],
               "long_items, device 1 late: let in %s, builds %s, prepared %s, home's first launch %s, "
               "%d sub-launches" % (r["let_in"], r["builds"], r["prepared"], first, len(r["kernels"])))
        expect(r["late"] and r["late"][0]["device"] == 1 and (r["late"][0]["let_in_after"] or 0) >= 0.02,
               "long_items: the report's late devices %s (let in after 0.02 s or more)" % r["late"])
        # A kernel coex never splits (its store a global atomic): device 1 gets no context. Against
        # auto_late_cost 0.5 s the launches, shorter, would let it in once the program has run that
        # long: they ask for the analysis first, which says so. Against 0.05 s the first, untimed
        # launch has the History remember the program, and the second run asks the analysis first too.
        for tag, cost in (("atomic-short", "0.5"), ("atomic", "0.05"), ("atomic", "0.05")):
            r = traced(("layer", "long_items"), ["12", "atomic"], "1", tag, "0.02", cost,
                       {"COEX_MIN_SPLIT_WORK_ITEMS": "1"})
            expect(not r["let_in"] and not r["contexts"] and not r["builds"] and not r["kernels"]
                   and any(e["name"] == "analysis" for e in r["prepared"]),
                   "long_items with a global atomic, %s: let in %s, contexts %s, builds %s, %d sub-launches, "
                   "prepared %s" % (tag, r["let_in"], r["contexts"], r["builds"], len(r["kernels"]),
                                    r["prepared"]))
        # A second run with that History lets device 1 in at the app's clBuildProgram, before any launch
        # (0 s), as the program ran long enough before (sched::History::note_late_let_in); it runs long
        # enough again, so the third run does too. Device 1 then takes part in a split, unless the
        # History's measurements of splits (the first run's, on a loaded machine) keep the launches on
        # home: with every core busy (a sanitizer build's tests two at a time) the first run's splits
        # did not pay, and the second run's only split, its first launch, ended before device 1's
        # build from source did.
        for run_number in (2, 3):
            r = traced(("layer", "long_items"), ["12"], "1", "long", "0.02")
            expect(len(r["let_in"]) == 1 and r["builds"] and (r["kernels"] or r["not_split"].get("one_device_pays"))
                   and r["late"] == [{"device": 1, "let_in_after": 0}],
                   "long_items, run %d: let in %s, builds %s, %d sub-launches, not split %s, the report's late "
                   "devices %s" % (run_number, r["let_in"], r["builds"], len(r["kernels"]), r["not_split"],
                                   r["late"]))


if __name__ == "__main__":
    sys.exit(layer_checks.main(AutoChecks, "coex-auto-check-"))
