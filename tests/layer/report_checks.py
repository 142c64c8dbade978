#!/usr/bin/env python3
"""What coex tells the user and leaves behind (docs/reporting.md): the notices on stderr, the report
and `coex report` (%p, the format version, the legend, the page), the trace's tracks, the history per
device set. The same runner as layer_checks.py: each check runs a test app bare and under coex on real
PoCL devices. Usage: report_checks.py --build DIR --source DIR CHECK
"""
import json
import os
import sys
import time

import layer_checks
from layer_checks import Failure, expect, run


# Every launch too small to split, however long it takes (min_split_seconds would split a launch that
# took 10 ms on home, which a loaded machine can make vector_add's take).
UNSPLIT = {"COEX_MIN_SPLIT_WORK_ITEMS": "100000000", "COEX_MIN_SPLIT_SECONDS": "1000000"}


class ReportChecks(layer_checks.Checks):
    # What coex says on stderr at the default log level (api/notices.h): one line when the first launch
    # shows what it will do, or that it will split nothing and why; silent with COEX_LOG=error.
    def notice_lines(self, env):
        err = self.under_coex(env)
        return [l for l in err.splitlines() if l.startswith("coex: ")], err

    def check_notice_one_device(self):
        lines, err = self.notice_lines({"POCL_DEVICES": "basic"})
        expect(len(lines) == 1 and "one OpenCL device only" in lines[0] and "POCL_DEVICES" in lines[0],
               "one device: expected one notice naming POCL_DEVICES, stderr:\n" + err)
        lines, err = self.notice_lines({"POCL_DEVICES": "basic", "COEX_LOG": "error"})
        expect(not lines, "COEX_LOG=error did not silence the notice:\n" + err)

    def check_notices(self):
        lines, err = self.notice_lines({})
        expect(len(lines) == 1 and "splitting launches across 2 devices (policy static)" in lines[0]
               and "d0 " in lines[0] and "(home)" in lines[0], "two devices: stderr:\n" + err)
        for selector, needle in (("type:gpu", "selects no device"), ("0", "selects only the app's device"),
                                 ("1", "leaves out the app's device")):
            lines, err = self.notice_lines({"COEX_DEVICES": selector})
            expect(len(lines) == 1 and needle in lines[0] and "COEX_DEVICES" in lines[0],
                   "COEX_DEVICES=%s: expected %r, stderr:\n%s" % (selector, needle, err))
        # At exit, a summary at info level; a split of nothing at all says why at warn.
        lines, err = self.notice_lines({"COEX_LOG": "info", "COEX_REPORT": self.report})
        expect(any(l.startswith("coex: 4 launches, 4 split across 2 devices; report ") for l in lines),
               "no exit summary at info:\n" + err)
        lines, err = self.notice_lines({**UNSPLIT})
        expect(len(lines) == 2 and "none of the 4 launches was split (too_small x4)" in lines[1],
               "nothing split: stderr:\n" + err)
        lines, err = self.notice_lines({**UNSPLIT, "COEX_LOG": "off"})
        expect(not lines, "COEX_LOG=off did not silence the notices:\n" + err)

    def check_no_libclang(self):
        # Where libclang cannot be loaded (COEX_FAULT=no_libclang: every load fails, in the analysis
        # process and in the app's) no program can be analysed: one line says so and why, each launch
        # runs whole on home (`unanalysable`) and the output is the bare one, whether the analysis runs
        # in a process of its own or in the app's (analysis_process false). Where an earlier run kept
        # one of the two programs' analyses (docs/kernel-analysis.md, "Kept analyses": the second
        # program's build options differ), the line says that only programs an earlier run analysed
        # are split, and that program's launch is split; so does the line of a run of the second
        # program alone, which reads no kept analysis (this build of coex kept some).
        app = os.path.join(self.build, "tests", "layer", "two_programs")
        bare_outputs = {}  # the bare run's output, by the app's arguments

        def under_coex(tag, env):
            args = env.pop("args", ["3"])
            if tuple(args) not in bare_outputs:
                rc, bare_outputs[tuple(args)], _ = run([app] + args)
                expect(rc == 0, "two_programs fails bare")
            bare = bare_outputs[tuple(args)]
            report = os.path.join(self.tmp, "%s.report.json" % tag)
            rc, out, err = run([app] + args,
                               dict(env, COEX_REPORT=report, COEX_CACHE=os.path.join(self.tmp, tag + ".json")),
                               self.layer)
            expect(rc == 0 and out == bare, "%s: exit %d, output:\n%s\nstderr:\n%s" % (tag, rc, out, err))
            lines = [l for l in err.splitlines() if "no kernel can be analysed" in l]
            with open(report) as f:
                kernels = {k["name"]: k for k in json.load(f)["kernels"]}
            return lines, kernels, err

        for in_process in ("false", "true"):
            tag = "no-libclang-%s" % ("in-app" if in_process == "false" else "process")
            lines, kernels, err = under_coex(tag, {"COEX_FAULT": "no_libclang", "COEX_ANALYSIS_PROCESS": in_process})
            expect(len(lines) == 1 and "so nothing is split (" in lines[0] and "COEX_FAULT=no_libclang" in lines[0],
                   "%s: expected one line saying nothing is split, and why; stderr:\n%s" % (tag, err))
            for name in ("offset_by_index", "times_factor"):
                expect(kernels.get(name, {}).get("not_split") == {"unanalysable": 1},
                       "%s: %s: %s" % (tag, name, kernels.get(name)))
        kept = os.path.join(self.tmp, "no-libclang-kept")
        under_coex("no-libclang-keeps", {"COEX_BINARY_CACHE": kept, "args": ["2"]})
        lines, kernels, err = under_coex("no-libclang-kept", {"COEX_FAULT": "no_libclang", "COEX_BINARY_CACHE": kept})
        expect(len(lines) == 1 and "so only programs an earlier run analysed are split (" in lines[0],
               "with one program's analysis kept: stderr:\n%s" % err)
        expect(kernels.get("offset_by_index", {}).get("split_launches") == 1, "the kept program: %s" % kernels.get("offset_by_index"))
        expect(kernels.get("times_factor", {}).get("not_split") == {"unanalysable": 1},
               "the program not kept: %s" % kernels.get("times_factor"))
        lines, kernels, err = under_coex("no-libclang-none-read", {"COEX_FAULT": "no_libclang",
                                                                   "COEX_BINARY_CACHE": kept, "args": ["3", "second"]})
        expect(len(lines) == 1 and "so only programs an earlier run analysed are split (" in lines[0],
               "with analyses kept, none read: stderr:\n%s" % err)
        expect(set(kernels) == {"times_factor"} and kernels["times_factor"].get("not_split") == {"unanalysable": 1},
               "the second program alone: %s" % kernels)

    def check_report_per_process(self):
        # %p in the report and trace paths is the process id: two processes of one command line keep two
        # reports (without it, the second replaced the first).
        pattern = os.path.join(self.tmp, "r.%p.json")
        trace = os.path.join(self.tmp, "t.%p.json")
        script = "%s && %s" % (self.app, self.app)
        rc, out, err = run([self.coex, "run", "--report", pattern, "--trace", trace, "--", "sh", "-c", script])
        expect(rc == 0 and out == self.bare_out * 2, "exit %d, output:\n%s\nstderr:\n%s" % (rc, out, err))
        reports = sorted(f for f in os.listdir(self.tmp) if f.startswith("r.") and f.endswith(".json"))
        expect(len(reports) == 2, "reports written: %s" % reports)
        pids = set()
        for name in reports:
            with open(os.path.join(self.tmp, name)) as f:
                r = json.load(f)
            expect(name == "r.%d.json" % r["pid"], "%s holds the report of process %s" % (name, r["pid"]))
            expect(r["trace"] == trace.replace("%p", str(r["pid"])) and os.path.exists(r["trace"]),
                   "%s names the trace %s" % (name, r["trace"]))
            expect(r["totals"]["launches"] == 4, "%s: %s launches" % (name, r["totals"]["launches"]))
            pids.add(r["pid"])
        expect(len(pids) == 2, "pids %s" % pids)

    def check_report_refuses_other_json(self):
        trace = os.path.join(self.tmp, "trace.json")
        self.under_coex({"COEX_TRACE": trace, "COEX_REPORT": self.report})
        rc, out, err = run([self.coex, "report", self.report])
        expect(rc == 0 and "Kernels" in out, "coex report REPORT: %d\n%s%s" % (rc, out, err))
        broken = os.path.join(self.tmp, "broken.json")
        with open(broken, "w") as f:
            f.write("{")
        config = os.path.join(self.source, "config", "default.json")
        for path, needle in ((trace, "is a trace"), (config, "not a coex report"), (broken, "not valid JSON"),
                             (os.path.join(self.tmp, "none.json"), "cannot read")):
            rc, out, err = run([self.coex, "report", path])
            expect(rc == 2 and needle in err and out == "", "coex report %s: exit %d, expected 2 and %r:\n%s%s"
                   % (path, rc, needle, out, err))
        with open(self.report) as f:
            r = json.load(f)
        expect(r["format"] == "coex-report" and r["version"] == 1, "format %r version %r"
               % (r.get("format"), r.get("version")))
        r["version"] = 99
        newer = os.path.join(self.tmp, "newer.json")
        with open(newer, "w") as f:
            json.dump(r, f)
        rc, out, err = run([self.coex, "report", newer])
        expect(rc == 2 and "newer coex" in err, "a newer report: %d %s" % (rc, err))

    def check_report_legend(self):
        # Every reason that appears gets one line of what it means; footprints name the arguments.
        app = os.path.join(self.build, "tests", "apps", "histogram")
        rc, bare, _ = run([app])
        rc, out, err = run([app], {"COEX_REPORT": self.report}, self.layer)
        expect(rc == 0 and out == bare, "histogram under coex: %d\n%s" % (rc, err))
        rc, out, err = run([self.coex, "report", self.report])
        legend = out.split("Why launches were not split")
        expect(rc == 0 and len(legend) == 2, "coex report has no legend:\n" + out + err)
        expect("global_atomics" in legend[1] and "atomics on global memory" in legend[1], "legend:\n" + legend[1])
        expect("footprints: " in out and "(arg " in out, "footprints without names:\n" + out)

    def check_report_html(self):
        # The page: well-formed XML (XHTML), an SVG timeline drawn from the trace the report names, and
        # each kernel's shares and reasons.
        import html.parser
        import xml.etree.ElementTree as ET
        trace = os.path.join(self.tmp, "trace.json")
        app = os.path.join(self.build, "tests", "apps", "histogram")
        rc, bare, _ = run([app])
        rc, out, err = run([app], {"COEX_REPORT": self.report, "COEX_TRACE": trace}, self.layer)
        expect(rc == 0 and out == bare, "histogram under coex: %d\n%s" % (rc, err))
        page = os.path.join(self.tmp, "report.html")
        rc, out, err = run([self.coex, "report", "--html", page, self.report])
        expect(rc == 0 and os.path.exists(page) and trace in out, "coex report --html: %d\n%s%s" % (rc, out, err))
        root = ET.parse(page).getroot()
        ns = {"h": "http://www.w3.org/1999/xhtml", "s": "http://www.w3.org/2000/svg"}
        expect(root.tag == "{%s}html" % ns["h"], "root element %s" % root.tag)
        headings = [h.text for h in root.iter("{%s}h2" % ns["h"])]
        expect("Timeline" in headings and "Kernels" in headings, "headings %s" % headings)
        svgs = list(root.iter("{%s}svg" % ns["s"]))
        timeline = next((s for s in svgs if s.get("aria-label") == "timeline of the devices"), None)
        expect(timeline is not None, "no timeline SVG among %d" % len(svgs))
        labels = [t.text for t in timeline.iter("{%s}text" % ns["s"]) if t.text]
        expect(any(l.startswith("d0 ") for l in labels) and any(l.startswith("d1 ") for l in labels),
               "track labels %s" % labels)
        expect(len(list(timeline.iter("{%s}rect" % ns["s"]))) > 4, "too few slices in the timeline")
        text = open(page, encoding="utf-8").read()
        expect("global_atomics" in text and "quantize" in text, "kernels or reasons missing from the page")
        html.parser.HTMLParser().feed(text)  # and as HTML
        # Without a trace: bars of busy time instead, still a page.
        os.remove(trace)
        rc, out, err = run([self.coex, "report", "--html=" + page, self.report])
        expect(rc == 0 and "no timeline" in out, "coex report --html without the trace: %d\n%s%s" % (rc, out, err))
        ET.parse(page)

    def check_trace_tracks(self):
        # Device tracks named with index and name (two PoCL devices share a name), launches not split on
        # the home track with their span, launch slices with durations, the app's calls on its own track.
        trace = os.path.join(self.tmp, "trace.json")
        started = time.monotonic()
        self.under_coex({"COEX_TRACE": trace, **UNSPLIT})
        ended = time.monotonic()
        with open(trace) as f:
            whole = json.load(f)
        events = whole["traceEvents"]
        names = {e["tid"]: e["args"]["name"] for e in events if e.get("name") == "thread_name"}
        # The origin on the steady clock that Python's monotonic clock reads too (CLOCK_MONOTONIC), and
        # coex's exit waits on a track of their own, within the app's run.
        origin = whole["otherData"].get("origin_steady_us", 0) / 1e6
        expect(started <= origin <= ended, "origin %.6f outside the run [%.6f, %.6f]" % (origin, started, ended))
        exits = [e for e in events if e.get("cat") == "exit"]
        expect(len(exits) == 1 and names.get(exits[0]["tid"]) == "exit"
               and origin + (exits[0]["ts"] + exits[0]["dur"]) / 1e6 <= ended, "exit slices: %s" % exits)
        expect(names.get(0, "").startswith("d0 ") and names[0].endswith("(home)")
               and names.get(1, "").startswith("d1 "), "track names %s" % names)
        slices = [e for e in events if e.get("ph") == "X"]
        on_home = [e for e in slices if e["tid"] == 0 and e["cat"] == "kernel"]
        expect(len(on_home) == 4 and all(e["args"]["not_split"] == "too_small" for e in on_home),
               "unsplit launches on the home track: %s" % on_home)
        launches = [e for e in slices if e["cat"] == "launch"]
        expect(len(launches) == 4 and all(e["dur"] > 0 for e in launches), "launch slices: %s" % launches)
        calls = [e for e in slices if e["tid"] >= 2000]
        enqueues = [e for e in calls if e["name"] == "clEnqueueNDRangeKernel"]
        expect(len(enqueues) == 4 and all(e["args"].get("kernel") for e in enqueues), "enqueue calls: %s" % enqueues)
        expect(any(e["name"] == "clBuildProgram" for e in calls) and names.get(calls[0]["tid"], "").startswith("app"),
               "the app's calls: %s" % sorted({e["name"] for e in calls}))
        # Split launches too: the launch slices span the split; on the planning track each has the
        # planner's span and its setup's.
        self.under_coex({"COEX_TRACE": trace})
        with open(trace) as f:
            events = json.load(f)["traceEvents"]
        launches = [e for e in events if e.get("cat") == "launch"]
        expect(len(launches) == 4 and all(e["dur"] > 0 and e["args"]["split"] for e in launches),
               "split launch slices: %s" % launches)
        names = {e["tid"]: e["args"]["name"] for e in events if e.get("name") == "thread_name"}
        plans = [e for e in events if e.get("cat") == "plan"]
        expect(sorted(e["name"] for e in plans) == ["first chunks"] * 4 + ["plan"] * 4 + ["policy start"] * 4 +
               ["split setup"] * 4 and all(names.get(e["tid"]) == "planning" and e["dur"] >= 0 for e in plans),
               "planning spans: %s" % plans)
        # The setup's two parts lie within it.
        setups = sorted((e["ts"], e["ts"] + e["dur"]) for e in plans if e["name"] == "split setup")
        for part in (e for e in plans if e["name"] in ("policy start", "first chunks")):
            expect(any(b <= part["ts"] and part["ts"] + part["dur"] <= end + 0.01 for b, end in setups),
                   "%s outside every split setup: %s" % (part["name"], plans))

    def check_history_per_device_set(self):
        # One history file keeps each device set's history; the report names the file and what it held.
        cache = os.path.join(self.tmp, "sets.json")
        env = dict(layer_checks.FAST_FRESH_MEMORY, COEX_POLICY="auto", COEX_CACHE=cache, COEX_REPORT=self.report)
        states = []
        for devices in ("pthread pthread", "pthread pthread pthread", "pthread pthread"):
            self.under_coex(dict(env, POCL_DEVICES=devices))
            h = self.load_report()["history"]
            expect(h["file"] == cache, "the report names %s, not %s" % (h["file"], cache))
            states.append((h["state"], h["entries"], h["other_device_sets"]))
        expect(states[0] == ("no_file", 0, 0) and states[1] == ("new_device_set", 0, 1)
               and states[2][0] == "loaded" and states[2][1] > 0 and states[2][2] == 1,
               "history states over the three runs: %s" % states)
        with open(cache) as f:
            history = json.load(f)
        expect(len(history.get("other_device_sets", [])) == 1, "the file keeps %d other sets"
               % len(history.get("other_device_sets", [])))
        rc, out, err = run([self.coex, "report", self.report])
        expect("history: " + cache in out, "coex report does not name the history:\n" + out)


def check_report_on_signal(self):
    # SIGTERM during a run: the report and the trace are written as they stand, then the signal ends
    # the process as it would have (not swallowed: the status says SIGTERM).
    import signal
    import subprocess
    import time
    app = os.path.join(self.build, "tests", "reliability", "rss_flat")
    trace = os.path.join(self.tmp, "signal-trace.json")
    env = layer_checks.coex_env({"COEX_REPORT": self.report, "COEX_TRACE": trace}, self.layer)
    proc = subprocess.Popen([app, "launches", "--count", "100000000"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    deadline = time.time() + 60
    time.sleep(3)
    proc.send_signal(signal.SIGTERM)
    try:
        _, err = proc.communicate(timeout=max(1, deadline - time.time()))
    except subprocess.TimeoutExpired:
        proc.kill()
        raise Failure("the app did not end within a minute of SIGTERM")
    expect(proc.returncode == -signal.SIGTERM, "exit status %d, not SIGTERM's; stderr:\n%s"
           % (proc.returncode, err.decode(errors="replace")))
    report = self.load_report()
    expect(report.get("format") == "coex-report" and report["totals"]["launches"] > 0,
           "the report written on SIGTERM holds no launch: %s" % report.get("totals"))
    with open(trace) as f:
        expect(json.load(f), "the trace written on SIGTERM is empty")
    leftovers = [n for n in os.listdir(self.tmp) if ".tmp." in n]
    expect(not leftovers, "half-written files left behind: %s" % leftovers)


ReportChecks.check_report_on_signal = check_report_on_signal


if __name__ == "__main__":
    sys.exit(layer_checks.main(ReportChecks, "coex-report-check-"))
