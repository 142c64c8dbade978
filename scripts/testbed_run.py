#!/usr/bin/env python3
"""The equal-devices testbed (scripts/bench-testbed calls this; docs/benchmarks.md, "Testbed"). For
each benchmark of benchmarks.json that has a 'testbed' size, and each N of --devices:
  - bare on one single-threaded PoCL device (POCL_DEVICES=<driver>), the reference;
  - bare on PoCL's own threaded device limited to N threads (POCL_DEVICES=<threaded>,
    POCL_CPU_MAX_CU_COUNT / POCL_MAX_PTHREAD_COUNT = N): the limit for the same cores;
  - under `coex run --policy P` over N single-threaded devices, for each policy, each run with an empty
    history (a fresh COEX_CACHE): a first run, as users meet it;
and, with --mixed, the mixed set: the threaded device with --mixed threads as home plus --mixed
single-threaded devices, against that threaded device alone. Every run is timed whole (start to exit,
the wall time a user sees) and by its own time_kernels line; its checksums must equal the reference's.
Runs go one at a time: each has the machine's cores to itself.

  testbed_run.py --build-dir DIR --programs-dir DIR --out DIR [--devices 2,4,8,15]
                 [--policies auto,static,hguided] [--driver cpu-minimal] [--threaded cpu]
                 [--mixed 4] [--only a,b] [--timeout 300] [--command TEXT]

Writes OUT/testbed.json (every run) and OUT/testbed.md (the tables). Exit status 1 when a run failed
or gave other bytes than the reference.
"""
import argparse
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time

from program_set import ROOT, checksums, vendors_without_nvidia

COMPUTE_CLASSES = ("compute-regular", "irregular")


def testbed_programs(programs_dir, only):
    with open(os.path.join(ROOT, "benchmarks", "benchmarks.json")) as f:
        data = json.load(f)
    out = []
    for bench in data["benchmarks"]:
        scale = bench["scales"].get("testbed")
        if not scale or (only and bench["name"] not in only):
            continue
        out.append({"name": bench["name"], "class": bench["class"],
                    "cmd": [os.path.join(programs_dir, bench["name"])] + scale["args"] + ["--reps", str(scale["reps"])]})
    return out


def base_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COEX_", "POCL_")) and k != "OPENCL_LAYERS"}
    env["COEX_LOG"] = "error"
    # NVIDIA's OpenCL stays out: the testbed is PoCL's CPU devices alone.
    only_pocl = vendors_without_nvidia(tempfile.mkdtemp(prefix="coex-testbed-vendors-"))
    if only_pocl:
        env["OCL_ICD_VENDORS"] = only_pocl
    return env


def threads_env(env, n):
    # PoCL 5's cpu driver reads POCL_CPU_MAX_CU_COUNT, PoCL 3's pthread driver POCL_MAX_PTHREAD_COUNT.
    return dict(env, POCL_CPU_MAX_CU_COUNT=str(n), POCL_MAX_PTHREAD_COUNT=str(n))


def run_once(cmd, env, timeout):
    started = time.monotonic()
    try:
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "wall": timeout}
    wall = time.monotonic() - started
    kernels = None
    for line in p.stdout.splitlines():
        if line.startswith("time_kernels "):
            kernels = float(line.split()[1])
    return {"status": "ok" if p.returncode == 0 else "exit %d" % p.returncode, "wall": wall, "kernels": kernels,
            "checksums": checksums(p.stdout), "stderr_tail": p.stderr[-600:] if p.returncode else ""}


def report_summary(path):
    try:
        with open(path) as f:
            report = json.load(f)
    except (OSError, ValueError):
        return {}
    reasons = {}
    for k in report.get("kernels", []):
        for reason, n in (k.get("not_split") or {}).items():
            reasons[reason] = reasons.get(reason, 0) + n
    totals = report.get("totals", {})
    return {"launches": totals.get("launches"), "split": totals.get("split_launches"), "not_split": reasons,
            "cold_splits": sum(k.get("cold_splits", 0) for k in report.get("kernels", []))}


def geomean(values):
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def fmt(v, digits=2):
    return "-" if v is None else ("%.*f" % (digits, v))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build-dir", required=True)
    p.add_argument("--programs-dir", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--devices", default="2,4,8,15")
    p.add_argument("--policies", default="auto,static,hguided")
    p.add_argument("--driver", default="cpu-minimal", help="the single-threaded PoCL driver (PoCL 3: basic)")
    p.add_argument("--threaded", default="cpu", help="PoCL's threaded driver (PoCL 3: pthread)")
    p.add_argument("--mixed", type=int, default=4, help="the mixed set's thread count and device count (0: none)")
    p.add_argument("--only", default="")
    p.add_argument("--timeout", type=int, default=300)
    p.add_argument("--command", default="scripts/bench-testbed")
    args = p.parse_args()
    coex = os.path.join(os.path.abspath(args.build_dir), "coex")
    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="coex-testbed-")
    env0 = base_env()
    counts = [int(n) for n in args.devices.split(",") if n]
    policies = [x for x in args.policies.split(",") if x]
    progs = testbed_programs(os.path.abspath(args.programs_dir), set(filter(None, args.only.split(","))))
    runs = []
    failures = []

    def record(prog, setup, n, policy, result, reference=None):
        entry = dict(result, program=prog["name"], setup=setup, n=n, policy=policy)
        if reference is not None and entry["status"] == "ok" and entry["checksums"] != reference:
            entry["status"] = "mismatch"
        if entry["status"] != "ok":
            failures.append(entry)
        runs.append(entry)
        print("%-15s %-9s N=%-2s %-8s %s wall %.3f s kernels %s %s" % (
            prog["name"], setup, n, policy or "-", entry["status"], entry["wall"], fmt(entry.get("kernels"), 3),
            json.dumps(entry.get("report", {}))), flush=True)
        return entry

    def coex_run(prog, env, setup, n, policy, reference):
        tag = "%s-%s-%d-%s" % (prog["name"], setup, n, policy)
        report = os.path.join(work, tag + ".report.json")
        run_env = dict(env, COEX_CACHE=os.path.join(work, tag + ".history.json"))
        result = run_once([coex, "run", "--policy", policy, "--report", report, "--"] + prog["cmd"], run_env,
                          args.timeout)
        result["report"] = report_summary(report)
        record(prog, setup, n, policy, result, reference)

    for prog in progs:
        one = record(prog, "one", 1, None, run_once(prog["cmd"], dict(env0, POCL_DEVICES=args.driver), args.timeout))
        reference = one.get("checksums")
        for n in counts:
            record(prog, "threads", n, None,
                   run_once(prog["cmd"], threads_env(dict(env0, POCL_DEVICES=args.threaded), n), args.timeout),
                   reference)
            env = dict(env0, POCL_DEVICES=" ".join([args.driver] * n))
            for policy in policies:
                coex_run(prog, env, "equal", n, policy, reference)
        if args.mixed:
            m = args.mixed
            env = threads_env(dict(env0, POCL_DEVICES=" ".join([args.threaded] + [args.driver] * m)), m)
            # The threaded device is the first: the benchmarks' home (their --device default).
            record(prog, "mixed-home", m, None,
                   run_once(prog["cmd"], threads_env(dict(env0, POCL_DEVICES=args.threaded), m), args.timeout),
                   reference)
            for policy in policies:
                coex_run(prog, env, "mixed", m, policy, reference)

    with open(os.path.join(args.out, "testbed.json"), "w") as f:
        json.dump({"command": args.command, "machine": platform.node(), "cpus": os.cpu_count(),
                   "driver": args.driver, "threaded": args.threaded, "runs": runs}, f, indent=1)
    write_tables(args, progs, counts, policies, runs)
    if failures:
        print("testbed: %d run(s) failed or gave other bytes than the reference" % len(failures), file=sys.stderr)
        return 1
    return 0


def write_tables(args, progs, counts, policies, runs):
    def find(prog, setup, n, policy):
        for r in runs:
            if r["program"] == prog and r["setup"] == setup and r["n"] == n and r["policy"] == policy \
                    and r["status"] == "ok":
                return r
        return None

    lines = ["Command: `%s` on %s (%d CPUs); single-threaded devices: PoCL `%s`, threaded: `%s`. Every coex run "
             "starts from an empty history. Speed-up: the one-device run's wall time (start to exit) over the "
             "setup's; in brackets the same by time_kernels." % (args.command, platform.node(), os.cpu_count(),
                                                                   args.driver, args.threaded), ""]
    header = "| program | class | one device (s) | N | " + " | ".join(policies) + " | `%s` N threads |" % args.threaded
    lines += [header, "|" + "---|" * (header.count("|") - 1)]
    geo = {}
    for prog in progs:
        one = find(prog["name"], "one", 1, None)
        if not one:
            continue
        for n in counts:
            cells = []
            for policy in policies + [None]:
                r = find(prog["name"], "equal" if policy else "threads", n, policy)
                wall = one["wall"] / r["wall"] if r else None
                kern = one["kernels"] / r["kernels"] if r and r.get("kernels") and one.get("kernels") else None
                cells.append("%s (%s)" % (fmt(wall), fmt(kern)))
                if prog["class"] in COMPUTE_CLASSES:
                    geo.setdefault((n, policy), []).append((wall, kern))
            lines.append("| %s | %s | %s | %d | %s |" % (prog["name"], prog["class"], fmt(one["wall"], 3), n,
                                                          " | ".join(cells)))
    lines += ["", "Geomean over the compute-bound programs (%s):" % ", ".join(COMPUTE_CLASSES), ""]
    lines += ["| N | " + " | ".join(policies) + " | `%s` N threads |" % args.threaded,
              "|---|" + "---|" * (len(policies) + 1)]
    for n in counts:
        cells = []
        for policy in policies + [None]:
            vals = geo.get((n, policy), [])
            cells.append("%s (%s)" % (fmt(geomean([v[0] for v in vals])), fmt(geomean([v[1] for v in vals]))))
        lines.append("| %d | %s |" % (n, " | ".join(cells)))
    if args.mixed:
        lines += ["", "Mixed set: `%s` with %d threads (home) + %d single-threaded devices; speed-up over that "
                  "threaded device alone:" % (args.threaded, args.mixed, args.mixed), "",
                  "| program | class | threaded alone (s) | " + " | ".join(policies) + " |",
                  "|---|---|---|" + "---|" * len(policies)]
        mixed_geo = {}
        for prog in progs:
            alone = find(prog["name"], "mixed-home", args.mixed, None)
            if not alone:
                continue
            cells = []
            for policy in policies:
                r = find(prog["name"], "mixed", args.mixed, policy)
                wall = alone["wall"] / r["wall"] if r else None
                cells.append(fmt(wall))
                if prog["class"] in COMPUTE_CLASSES:
                    mixed_geo.setdefault(policy, []).append(wall)
            lines.append("| %s | %s | %s | %s |" % (prog["name"], prog["class"], fmt(alone["wall"], 3),
                                                     " | ".join(cells)))
        lines.append("| **geomean, compute-bound** | | | %s |" % " | ".join(
            fmt(geomean(mixed_geo.get(p, []))) for p in policies))
    lines += ["", "Splits per coex run (split / launches, reasons): testbed.json, `report`."]
    with open(os.path.join(args.out, "testbed.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
