#!/usr/bin/env python3
"""How coex builds for the devices (docs/design.md, "Programs loaded from binaries", "One-time
costs"): builds at the app's clBuildProgram, one binary for devices of a kind, the read of the app's
binary deferred to a launch that may split, first runs shared, binaries kept from run to run (what is
compiled ahead in a process of its own: compile_ahead_checks.py). The same runner as layer_checks.py:
each check runs a test app bare and under coex on real PoCL devices.
Usage: compile_checks.py --build DIR --source DIR CHECK
"""
import json
import os
import shutil
import sys

import layer_checks
from first_runs_after_bare import FirstRunsAfterBare
from layer_checks import expect, run


class CompileChecks(FirstRunsAfterBare, layer_checks.Checks):
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


if __name__ == "__main__":
    sys.exit(layer_checks.main(CompileChecks, "coex-compile-check-"))
