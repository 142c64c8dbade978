#!/usr/bin/env python3
"""scripts/bench-cpu-home's runs: the short programs of benchmarks/benchmarks.json on the first CPU
device `coex devices` lists as the app's device, at their testbed sizes (or, with --home gpu, on the
first GPU at their gpu sizes), bare and under coex, in rounds; prints a Markdown table of medians
(docs/gpu.md, "The CPU as home")."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from program_set import ROOT, benchmark_program, checksums
from testbed_run import report_summary


def device_index(coex, kind):
    """The index `coex devices` gives the first device of `kind` (CPU, GPU): the programs' --device takes it."""
    out = subprocess.run([coex, "devices"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        fields = line.split()
        if len(fields) > 3 and fields[0].isdigit() and fields[3] == kind:
            return int(fields[0])
    sys.exit("scripts/bench-cpu-home: no %s device:\n" % kind + out)


def preparation(trace):
    """The one-time work in a coex run's trace: its build-track slices (contexts, analyses, builds, a late
    device let in) and the exit's wait, each as name@track start+duration in ms from the trace's start."""
    with open(trace) as f:
        events = json.load(f)["traceEvents"]
    start = min(e["ts"] for e in events if "ts" in e)
    slices = sorted((e for e in events if e.get("ph") == "X" and e.get("cat") in ("build", "exit")),
                    key=lambda e: e["ts"])
    return "; ".join("%s@%s %.0f+%.0f" % (e["name"], e["tid"], (e["ts"] - start) / 1e3, e.get("dur", 0) / 1e3)
                     for e in slices)


def run(cmd, env, report=None, trace=None):
    start = time.monotonic()
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:  # a hang: a failed run, as a crash is
        return {"wall": time.monotonic() - start, "time_total": None, "rc": "hung", "checksums": None}
    wall = time.monotonic() - start
    total = [float(l.split()[1]) for l in p.stdout.splitlines() if l.startswith("time_total")]
    result = {"wall": wall, "time_total": total[0] if total else None, "rc": p.returncode,
              "checksums": checksums(p.stdout)}
    if report:
        summary = report_summary(report)
        result["splits"], result["cold"] = summary.get("split") or 0, summary.get("cold_splits") or 0
    if trace and os.path.exists(trace):
        result["preparation"] = preparation(trace)
    return result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", default="")
    ap.add_argument("--ways-in", default="preload",
                    help="preload, layer or preload,layer: how `coex run` loads coex (each a setup of its own)")
    ap.add_argument("--home", choices=("cpu", "gpu"), default="cpu",
                    help="the app's device; with gpu the programs run at their gpu sizes")
    ap.add_argument("--against-coex", default="")
    ap.add_argument("--against-label", default="")
    ap.add_argument("--also", default="", help="NAME:SCALE,...: programs of other classes, at that scale")
    ap.add_argument("--setting", action="append", default=[],
                    help="NAME=VALUE[+NAME=VALUE...]: one more coex setup, with those settings (COEX_NAME)")
    ap.add_argument("--preparation", action="store_true", help="print each coex run's one-time work from its trace")
    ap.add_argument("--history-runs", type=int, default=1,
                    help="coex runs in a row with one History; the last one counts (1: first runs)")
    ap.add_argument("--command", default="scripts/bench-cpu-home")
    a = ap.parse_args()
    coex = os.path.join(a.build_dir, "coex")
    device = device_index(coex, a.home.upper())
    default_scale = "gpu" if a.home == "gpu" else "testbed"
    with open(os.path.join(ROOT, "benchmarks", "benchmarks.json")) as f:
        spec = json.load(f)
    benches = spec["benchmarks"] if isinstance(spec, dict) else spec
    wanted = [dict(b, scale=default_scale, label=b["name"]) for b in benches
              if b.get("class") == "short" and (not a.only or b["name"] in a.only.split(","))]
    for item in filter(None, a.also.split(",")):
        name, _, scale = item.partition(":")
        found = [b for b in benches if b["name"] == name and (scale or default_scale) in b["scales"]]
        if not found:
            sys.exit("scripts/bench-cpu-home: --also %s: no such program or scale in benchmarks/benchmarks.json" % item)
        wanted.append(dict(found[0], label=item, scale=scale or default_scale))
    setups = [("bare", None, {}), ("coex", coex, {})]
    for setting in a.setting:
        pairs = [s.partition("=") for s in setting.split("+")]
        setups.append(("coex " + setting, coex, {"COEX_" + name.upper(): value for name, _, value in pairs}))
    if a.against_coex:
        setups.append(("coex@" + a.against_label, a.against_coex, {}))
    # Each coex setup once per way in: preloaded (what `coex run` does where the program's loader
    # cannot load layers, CUDA's) or as a layer (the program then needs a loader that can: ocl-icd first
    # in LD_LIBRARY_PATH, as scripts/device-build-env puts it).
    ways = [w for w in a.ways_in.split(",") if w]
    if not ways or any(w not in ("preload", "layer") for w in ways):
        sys.exit("scripts/bench-cpu-home: --ways-in: preload, layer or both, comma-separated")
    setups = [setups[0] + (None,)] + [(name + ("" if len(ways) == 1 else " " + way), launcher, settings, way)
                                       for name, launcher, settings in setups[1:] for way in ways]
    results = {}
    failed = False
    for r in range(a.rounds):
        for b in wanted:
            scale = b["scales"][b["scale"]]
            program = benchmark_program(os.path.join(a.build_dir, "programs"), b)
            cmd = [program] + scale["args"] + ["--reps", str(scale.get("reps", 1)), "--device", str(device)]
            # bare first (the others' bytes are checked against its run), then coex's setups in an order
            # turned every round, so that what the order does (the run right after the bare one) does
            # not fall on one code alone.
            coex_setups = setups[1:]
            turn = r % len(coex_setups)
            for name, launcher, settings, way in setups[:1] + coex_setups[turn:] + coex_setups[:turn]:
                # Beside a CPU home, the GPU builds a program it never saw, as on a user's first run; as
                # home, the GPU's driver keeps what the bare runs compiled, as a user's own runs would.
                env = dict(os.environ, **settings)
                if a.home == "cpu":
                    env["CUDA_CACHE_DISABLE"] = "1"
                if launcher is None:
                    out = run(cmd, env)
                else:
                    tmp = tempfile.mkdtemp()
                    env["COEX_CACHE"] = os.path.join(tmp, "history.json")
                    report = os.path.join(tmp, "report.json")
                    trace = os.path.join(tmp, "trace.json") if a.preparation else None
                    if trace:
                        env["COEX_TRACE"] = trace
                    for _ in range(a.history_runs):  # the same COEX_CACHE: each run after the first reads it
                        preload = ["--preload"] if way == "preload" else []
                        out = run([launcher, "run"] + preload + ["--report", report, "--"] + cmd, env, report, trace)
                results.setdefault((b["label"], name), []).append(out)
                bare = results[(b["label"], "bare")][-1]
                if out["rc"] != 0 or out["checksums"] != bare["checksums"]:
                    failed = True
                    print("FAIL %s %s: exit %s, checksums %s against %s" % (b["label"], name, out["rc"], out["checksums"],
                                                                          bare["checksums"]), flush=True)
                print("round %d %-14s %-12s wall %.3f s time_total %s%s" % (
                    r + 1, b["label"], name, out["wall"], out["time_total"],
                    " splits %d (cold %d)" % (out["splits"], out["cold"]) if "splits" in out else ""), flush=True)
                if "preparation" in out:
                    print("    one-time work (ms): " + out["preparation"], flush=True)
    print("\nCommand: `%s`; the app's device: the %s, device %d; %d rounds, medians%s.\n" % (
        a.command, a.home.upper(), device, a.rounds, "" if a.history_runs == 1 else "; coex: run %d with one History" % a.history_runs))
    print("| program | setup | time_total (s) | limit 1.03 x bare + 0.05 | wall (s) | limit by wall | split launches (cold) |")
    print("|---|---|---|---|---|---|---|")
    med = lambda xs: statistics.median(xs) if xs else float("nan")
    for b in wanted:
        bare_total = med([x["time_total"] for x in results[(b["label"], "bare")] if x["time_total"] is not None])
        bare_wall = med([x["wall"] for x in results[(b["label"], "bare")]])

        def limit(value, bare):
            over = value - 1.03 * bare - 0.05
            return "met" if over <= 0 else "over by %.3f s" % over

        for name, _, _, _ in setups:
            runs = results[(b["label"], name)]
            total = med([x["time_total"] for x in runs if x["time_total"] is not None])
            wall = med([x["wall"] for x in runs])
            bare = name == "bare"
            splits = "" if bare else " ".join("%d (%d)" % (x.get("splits", 0), x.get("cold", 0)) for x in runs)
            print("| %s | %s | %.3f | %s | %.3f | %s | %s |" % (b["label"], name, total, "" if bare else limit(
                total, bare_total), wall, "" if bare else limit(wall, bare_wall), splits))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
