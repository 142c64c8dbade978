#!/usr/bin/env python3
"""The launcher's commands (docs/design.md, "The way in"): `coex run` with and without a loader
that loads layers, `coex info`, `coex devices`, its help and options, a bad configuration, and the
installed package found by CMake. The same runner as layer_checks.py: each check runs a test app
bare and under coex on real PoCL devices.
Usage: launcher_checks.py --build DIR --source DIR CHECK
"""
import json
import os
import re
import subprocess
import sys

import layer_checks
from layer_checks import expect, run


class LauncherChecks(layer_checks.Checks):
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

    def check_launcher_compile_ahead(self):
        # `coex compile-ahead REQUEST` (started by libcoex.so, launcher/compile_ahead_command.cpp) fills
        # PoCL's cache with the generic function and the variants named, the variants later on its input
        # for a process started at the app's build: in one process, and in two with variant_processes=2,
        # each asking for its half (where cores are spare: exec/compile_ahead.h, variant_processes).
        # Every variant named lands in the one program folder, whichever process made it; a process
        # never sent its line ends with status 3. `coex compile-ahead -` (spawned at the app's
        # clCreateContext: exec/compile_ahead_warm.h) takes what sets PoCL up as a block on its input,
        # then a line with the request file's path (read and removed; a source of 300 KB, which goes on
        # to the forks through pipes), then the line: the same folders; with no request it builds
        # nothing (3).
        rc, out, _ = run([self.coex, "devices"], {"POCL_DEVICES": "basic"})
        name = next((m.group(1).strip() for m in (re.match(r"0\s.*Portable Computing Language\s+(\S.*)$", l)
                                                   for l in out.splitlines()) if m), None)
        expect(rc == 0 and name, "coex devices names no PoCL device 0:\n" + out)
        source = "__kernel void twice(__global float* a) { a[get_global_id(0)] *= 2.0f; }\n"
        both = "4-1-1-smallgrid,4-1-1-goffs0-smallgrid"

        def request_text(processes, variants, from_input, text):
            return ("platform=Portable Computing Language\ndevice=-1\ndevice_name=%s\npocl_devices=basic\n"
                    "variants=%s\nvariants_from_input=%d\nvariant_processes=%d\noptions=\nsource:\n%s"
                    % (name, variants, from_input, processes, text))

        def block(text):
            return b"%d\n%s" % (len(text.encode()), text.encode())

        def compile_ahead(tag, processes, line, variants="", from_input=True, stdin_form=False, asked=True):
            cache, request = os.path.join(self.tmp, "pocl-" + tag), os.path.join(self.tmp, "request-" + tag)
            os.makedirs(cache)
            given = (line + "\n").encode() if line is not None else b""
            with open(request, "w") as f:  # in the `-` form a source padded past a pipe's buffer
                f.write(request_text(processes, variants, 1 if stdin_form else from_input,
                                     source + ("/* %s */\n" % ("x" * 300000) if stdin_form else "")))
            if stdin_form:
                given = block(request_text(processes, "", 1, "")) + (
                    (request + "\n").encode() + given if asked else b"")
            p = subprocess.run([self.coex, "compile-ahead", "-" if stdin_form else request],
                               env=layer_checks.coex_env({"POCL_DEVICES": "basic", "POCL_CACHE_DIR": cache}),
                               input=given, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
            expect(not os.path.exists(request) or (stdin_form and not asked), "%s: the request was left behind" % tag)
            folders = {d for _, dirs, _ in os.walk(cache) for d in dirs}
            programs = [d for d in folders if os.path.isfile(os.path.join(cache, d[:2], d, "program.bc"))]
            expect(len(programs) <= 1, "%s: %d program folders" % (tag, len(programs)))
            return p.returncode, sorted(f for f in folders if f[:1].isdigit())

        for processes in (1, 2):
            for line, variants in ((both, ""), (None, both), ("4-1-1-smallgrid", "")):
                tag = "%d-%s-%s" % (processes, "none" if line is None else len(line.split(",")), len(variants))
                got = compile_ahead(tag, processes, line, variants, line is not None)
                named = (line or variants).split(",")
                expect(got == (0, sorted(["0-0-0"] + named)), "%d processes, line %r, variants %r: exit %d, folders %s"
                       % (processes, line, variants, got[0], got[1]))
            got = compile_ahead("%d-closed" % processes, processes, None)
            expect(got[0] == 3 and got[1] == ["0-0-0"], "%d processes, input closed: exit %d, folders %s"
                   % (processes, got[0], got[1]))
            got = compile_ahead("%d-stdin" % processes, processes, both, stdin_form=True)
            expect(got == (0, sorted(["0-0-0"] + both.split(","))), "%d processes, `-`: exit %d, folders %s"
                   % (processes, got[0], got[1]))
            got = compile_ahead("%d-stdin-unasked" % processes, processes, None, stdin_form=True, asked=False)
            expect(got == (3, []), "%d processes, `-` with no request: exit %d, folders %s"
                   % (processes, got[0], got[1]))

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


if __name__ == "__main__":
    sys.exit(layer_checks.main(LauncherChecks, "coex-launcher-check-"))
