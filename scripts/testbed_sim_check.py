#!/usr/bin/env python3
"""The testbed predicted by the simulator, against the testbed measured (docs/schedulers.md, "The
testbed, predicted and measured"). Reads what scripts/bench-testbed-sim measured on the device machine
(default docs/benchmarks/testbed-sim.json) and prints, per program, N and policy, the measured makespan
of the warm split launches (median; from coex's trace: the start of the host-copy refresh that opens a
launch to the end of its merge) against two predictions of `coex simulate`, each the mean over the
scenario's launches:

  - from the copies: config/scenarios/testbed-<program>-n<N>.json, whose N devices run at the paces
    that N bare copies of the program, run at once before, measured (one device per copy);
  - at the run's own paces: the same scenario with each device at the pace its sub-launches showed in
    that run (kernel time over work-groups, over its warm launches).

Both use, per chunk, the median time between a device's sub-launches at that N (hand-out, footprint,
upload) as the latency.

  python3 scripts/testbed_sim_check.py [--measured FILE] [--coex build/coex] [--write-scenarios]
                                       [--details]

--write-scenarios (re)writes config/scenarios/testbed-*.json from the measurements first (without it, a
shipped scenario that does not match them is left alone and a copy made from them is used). --details
prints what lies in the measured launches. Exit status 1 when a prediction at the runs' own paces
misses by more than 15%."""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = 0.15


def warm_launches(run):
    """The split launches after the first (which waits for builds and compiles), none of them cold."""
    return [l for l in run["launches"][1:] if l.get("split") and not l.get("cold")]


def runs_at(prog, n):
    return [r for r in prog["runs"] if r["n"] == n and r["status"] == "ok" and warm_launches(r)]


def latency(prog, n):
    """The median time between a device's sub-launches (hand-out, footprint, upload), in seconds, over
    the warm launches of every run at N."""
    gaps = [g for r in runs_at(prog, n) for l in warm_launches(r) for d in l["devices"].values() for g in d["gaps_us"]]
    return statistics.median(gaps) / 1e6 if gaps else 0.0


def run_paces(prog, run):
    """Seconds per launch on each device in the run's warm launches, from its sub-launches."""
    seconds, groups = {}, {}
    for launch in warm_launches(run):
        for d, dev in launch["devices"].items():
            seconds[d] = seconds.get(d, 0) + dev["kernel_seconds"]
            groups[d] = groups.get(d, 0) + dev["groups"]
    return [seconds[d] / groups[d] * prog["groups"] for d in sorted(seconds, key=int) if groups[d]]


def scenario(data, prog, n, paces, source):
    """N CPU devices, home the first; each device's speed from its seconds per launch (`paces`)."""
    # hguided's smallest chunk on a CPU is its compute units over the work-groups beside each group of the
    # split dimension (docs/schedulers.md); a scenario's kernel has none beside, so the units say it.
    floor = math.ceil(max(data["compute_units"].values() or [1]) / prog["groups_beside"])
    lat = latency(prog, n)
    return {
        "name": "testbed-%s-n%d" % (prog["name"], n),
        "description": "benchmarks/%s %s (%d work-groups along the split dimension) over %d single-threaded PoCL "
                       "devices (%s) of the device machine, as scripts/bench-testbed-sim measured them: seconds per "
                       "launch on each device %s (%s), %.3g s between a device's sub-launches. compute_units gives "
                       "hguided the executor's smallest chunk (%d work-group%s). docs/schedulers.md, \"The testbed, "
                       "predicted and measured\"." % (
                           prog["name"], " ".join(prog["cmd"][1:-2]), prog["groups"], n, data["driver"],
                           " ".join("%.3f" % v for v in paces), source, lat, floor, "" if floor == 1 else "s"),
        "seed": 1,
        "devices": [{"name": "d%d" % i, "type": "cpu", "compute_units": floor,
                     "speed": round(prog["groups"] / pace, 4), "latency": round(lat, 7)}
                    for i, pace in enumerate(paces)],
        "kernel": {"key": prog["name"], "groups": prog["groups"], "items_per_group": prog["items_per_group"]},
        "launches": 3,
        "policy": list(data["policies"]),
        "home": "d0",
    }


def load(path):
    with open(path) as f:
        return json.load(f)


def simulate(coex, path):
    """Mean makespan per policy over the scenario's launches."""
    out = subprocess.run([coex, "simulate", path], capture_output=True, text=True, timeout=120, check=True).stdout
    spans = {}
    for line in out.splitlines():
        entry = json.loads(line)
        if "makespan" in entry:
            spans.setdefault(entry["policy"], []).append(entry["makespan"])
    return {policy: statistics.mean(v) for policy, v in spans.items()}


def details(data):
    print("| program | N | policy | one copy (s) | N copies (s) | devices in the run (s) | latency (ms) | "
          "chunks | outside the chunks (ms) | app's launch (s) |")
    print("|---|---:|---|---:|---|---|---:|---:|---:|---:|")
    for prog in data["programs"]:
        for n in data["devices"]:
            for run in runs_at(prog, n):
                warm = warm_launches(run)
                chunks = statistics.mean(sum(d["chunks"] for d in l["devices"].values()) for l in warm)
                outside = statistics.median(l["makespan"] - l["chunks_end"] + l["host_copy"] for l in warm)
                app = [l["app_launch"] for l in warm if "app_launch" in l]
                copies, own = prog["pace"][str(n)], run_paces(prog, run)
                print("| %s | %d | %s | %.3f | %.2f-%.2f | %.2f-%.2f | %.3f | %.1f | %.2f | %s |" % (
                    prog["name"], n, run["policy"], statistics.mean(prog["pace"]["1"]), min(copies), max(copies),
                    min(own), max(own), latency(prog, n) * 1e3, chunks, outside * 1e3,
                    "%.4f" % statistics.median(app) if app else "-"))
    print()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--measured", default=os.path.join(ROOT, "docs", "benchmarks", "testbed-sim.json"))
    p.add_argument("--coex", default=os.path.join(ROOT, "build", "coex"))
    p.add_argument("--write-scenarios", action="store_true")
    p.add_argument("--details", action="store_true")
    args = p.parse_args()
    data = load(args.measured)
    if args.details:
        details(data)
    print("| program | N | policy | measured (s) | from the copies (s) | error | at the run's own paces (s) | error |")
    print("|---|---:|---|---:|---:|---:|---:|---:|")
    worst = {"copies": 0.0, "own": 0.0}
    tmp = tempfile.mkdtemp(prefix="coex-testbed-sim-")
    for prog in data["programs"]:
        for n in data["devices"]:
            runs = runs_at(prog, n)
            if not runs:
                continue
            path = os.path.join(ROOT, "config", "scenarios", "testbed-%s-n%d.json" % (prog["name"], n))
            wanted = scenario(data, prog, n, sorted(prog["pace"][str(n)]), "%d bare copies at once" % n)
            if args.write_scenarios:
                with open(path, "w") as f:
                    json.dump(wanted, f, indent=2)
                    f.write("\n")
            elif not os.path.exists(path) or load(path) != wanted:
                print("%s is not from %s (--write-scenarios writes it): predicting from a copy" % (
                    os.path.relpath(path, ROOT), args.measured), file=sys.stderr)
                path = os.path.join(tmp, os.path.basename(path))
                with open(path, "w") as f:
                    json.dump(wanted, f)
            predicted = simulate(args.coex, path)
            for run in runs:
                policy = run["policy"]
                own = os.path.join(tmp, "%s-%d-%s.json" % (prog["name"], n, policy))
                with open(own, "w") as f:
                    json.dump(scenario(data, prog, n, run_paces(prog, run), "the run's own"), f)
                at_own = simulate(args.coex, own)[policy]
                spans = [l["makespan"] for l in warm_launches(run)]
                measured = statistics.median(spans)
                errors = {"copies": predicted[policy] / measured - 1, "own": at_own / measured - 1}
                for key, error in errors.items():
                    worst[key] = max(worst[key], abs(error))
                print("| %s | %d | %s | %.4f (%.4f-%.4f) | %.4f | %+.1f%% | %.4f | %+.1f%% |" % (
                    prog["name"], n, policy, measured, min(spans), max(spans), predicted[policy],
                    100 * errors["copies"], at_own, 100 * errors["own"]))
    print("\nLargest error: %.1f%% from the copies' paces, %.1f%% at the runs' own paces (target: %.0f%%)" % (
        100 * worst["copies"], 100 * worst["own"], 100 * TARGET))
    return 0 if worst["own"] <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
