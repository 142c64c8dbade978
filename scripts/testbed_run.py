#!/usr/bin/env python3
"""The equal-devices testbed (scripts/bench-testbed calls this; docs/benchmarks.md, "Testbed"). For
each benchmark of benchmarks.json that has a 'testbed' size, and each N of --devices:
  - bare on one single-threaded PoCL device (POCL_DEVICES=<driver>), the reference;
  - bare on PoCL's own threaded device limited to N threads (POCL_DEVICES=<threaded>,
    POCL_CPU_MAX_CU_COUNT / POCL_MAX_PTHREAD_COUNT = N): the limit for the same cores;
  - under `coex run --policy P` over N single-threaded devices, for each policy, each run with an empty
    history (a fresh COEX_CACHE): a first run, as users meet it. A policy may carry settings for an
    A/B in one run: `static+serial_compiles=true` runs static with COEX_SERIAL_COMPILES=true;
with --second-runs, each coex run again right after it with the History it left (a program's second run);
with --set-reference, bare on the first of the N single-threaded devices with all N listed (POCL_DEVICES):
the drivers' set-up of N devices, which every program that lists them pays, apart from coex's own costs;
and, with --mixed, the mixed set: the threaded device with --mixed threads as home (passed to the program
with --device) plus --mixed single-threaded devices, against that threaded device alone. Every run is timed whole (start to exit,
the wall time a user sees) and by its own time_kernels line; its checksums must equal the reference's.
Runs go one at a time: each has the machine's cores to itself. With --repeat K each setup runs K times
(the reference K times; then, for each N, rounds of the threaded device and every policy, the
policies' order turned by one each round, so that none always runs first after the priming), and the
tables take each setup's median: single runs of one command minutes apart differed by 20 to 40% on the device machine. PoCL's kernel cache (POCL_CACHE_DIR)
is set for every run, so that no run finds what an earlier one compiled unless all do:
  --pocl-cache warm (the default): one cache for the whole testbed, and an untimed run of each setup
    (under coex: once for each policy, which builds and runs the kernels on every device as that
    policy splits them) fills it first; what a
    program's later runs on a machine meet, however new coex's history;
  --pocl-cache cold: every run starts with an empty cache: a program's very first run on a machine,
    where PoCL compiles each kernel on each device, one compile at a time.
  --pocl-cache bare: the bare runs share one cache, filled by an untimed run of each as under warm;
    each coex run starts from a copy of it and no kept binaries: a user's first run of a program
    under coex after running it bare, where what the app compiled is cached and what coex compiles
    (its builds for the other devices, the rewrite, PoCL's work-group functions for the devices'
    chunks at their offsets) is not.

  testbed_run.py --build-dir DIR --programs-dir DIR --out DIR [--devices 2,4,8,15]
                 [--policies auto,static,hguided] [--driver cpu-minimal] [--threaded cpu]
                 [--mixed 4] [--only a,b] [--timeout 300] [--pocl-cache warm|cold|bare] [--repeat 1]
                 [--set-reference] [--second-runs] [--traces] [--command TEXT]
  testbed_run.py --out DIR --tables-from A/testbed.json,B/testbed.json   (one table of several runs)

Writes OUT/testbed.json (every run) and OUT/testbed.md (the tables). Exit status 1 when a run failed
or gave other bytes than the reference.
"""
import argparse
import json
import math
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time

from program_set import ROOT, benchmark_program, checksums, vendors_without_nvidia
from trace_timeline import timeline

# The launches a run's timeline in testbed.json lists (--traces): the first ones, where one-time costs
# fall; the rest are counted (benchmarks/stencil1d makes 20,000).
TIMELINE_LAUNCHES = 50

COMPUTE_CLASSES = ("compute-regular", "irregular")


def testbed_programs(programs_dir, only):
    with open(os.path.join(ROOT, "benchmarks", "benchmarks.json")) as f:
        data = json.load(f)
    out = []
    for bench in data["benchmarks"]:
        scale = bench["scales"].get("testbed")
        if not scale or (only and bench["name"] not in only):
            continue
        program = benchmark_program(programs_dir, bench)
        # The mixed set's size, where the program has one: the same time per launch on its 4-thread
        # home as the testbed size on one single-threaded device (docs/testbed.md).
        mixed = bench["scales"].get("testbed-mixed", scale)
        out.append({"name": bench["name"], "class": bench["class"],
                    "cmd": [program] + scale["args"] + ["--reps", str(scale["reps"])],
                    "mixed_cmd": [program] + mixed["args"] + ["--reps", str(mixed["reps"])]})
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


def threaded_index(coex, env, args):
    """The index `coex devices` gives the threaded device among env's POCL_DEVICES: PoCL names a device
    after its driver ("cpu-skylake-...", "cpu-minimal-skylake-...")."""
    out = subprocess.run([coex, "devices"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout
    lines = out.splitlines()
    header = next((l for l in lines if l.startswith("index")), None)
    if header is None:
        raise SystemExit("testbed: `coex devices` listed no devices:\n" + out)
    at = header.index("name")
    for line in lines:
        if line[:1].isdigit():
            name = line[at:].strip()
            if name.startswith(args.threaded + "-") and not name.startswith(args.driver + "-"):
                return int(line.split()[0])
    raise SystemExit("testbed: no %s device in `coex devices`:\n%s" % (args.threaded, out))


def run_once(cmd, env, timeout, copy_cache_from=None):
    """One timed run. Without POCL_CACHE_DIR in env, in an empty PoCL cache of its own (--pocl-cache cold);
    with `copy_cache_from`, in a copy of that cache of its own (--pocl-cache bare)."""
    fresh_cache = "POCL_CACHE_DIR" not in env or copy_cache_from
    if fresh_cache:
        dir_ = tempfile.mkdtemp(prefix="coex-testbed-pocl-")
        if copy_cache_from and os.path.isdir(copy_cache_from):
            shutil.copytree(copy_cache_from, dir_, symlinks=True, dirs_exist_ok=True)
        env = dict(env, POCL_CACHE_DIR=dir_)
    started = time.monotonic()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
        wall = time.monotonic() - started
        # The CPU time of the run and what it waited for (the app under `coex run`): beside the wall
        # time, it tells work done from cores left idle or spent spinning.
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "wall": timeout}
    finally:
        if fresh_cache:
            shutil.rmtree(env["POCL_CACHE_DIR"], ignore_errors=True)
    kernels = None
    for line in p.stdout.splitlines():
        if line.startswith("time_kernels "):
            kernels = float(line.split()[1])
    return {"status": "ok" if p.returncode == 0 else "exit %d" % p.returncode, "wall": wall, "kernels": kernels,
            "cpu": cpu, "checksums": checksums(p.stdout), "stderr_tail": p.stderr[-600:] if p.returncode else ""}


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


def policy_and_settings(spec):
    """'static+serial_compiles=true' -> ('static', {'COEX_SERIAL_COMPILES': 'true'}); a trailing '@REV'
    (--against: the same policy under the other build's coex) is not part of either."""
    name, *settings = spec.split("@", 1)[0].split("+")
    env = {}
    for item in settings:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SystemExit("testbed: '%s' in --policies: expected POLICY+SETTING=VALUE" % spec)
        env["COEX_" + key.upper()] = value
    return name, env


def geomean(values):
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def median(values):
    values = sorted(values)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def fmt(v, digits=2):
    return "-" if v is None else ("%.*f" % (digits, v))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build-dir")
    p.add_argument("--programs-dir")
    p.add_argument("--out", required=True)
    p.add_argument("--tables-from", default="", help="testbed.json files, comma-separated: their tables as one, "
                   "into OUT/testbed.md; nothing runs")
    p.add_argument("--devices", default="2,4,8,15")
    p.add_argument("--policies", default="auto,static,hguided")
    p.add_argument("--driver", default="cpu-minimal", help="the single-threaded PoCL driver (PoCL 3: basic)")
    p.add_argument("--threaded", default="cpu", help="PoCL's threaded driver (PoCL 3: pthread)")
    p.add_argument("--mixed", type=int, default=4, help="the mixed set's thread count and device count (0: none)")
    p.add_argument("--only", default="")
    p.add_argument("--timeout", type=int, default=300)
    p.add_argument("--pocl-cache", choices=("warm", "cold", "bare"), default="warm")
    p.add_argument("--repeat", type=int, default=1, help="runs of each setup; the tables take medians")
    p.add_argument("--second-runs", action="store_true",
                   help="run each coex run again right after it, with the History it left: a program's second "
                   "run (--pocl-cache warm only)")
    p.add_argument("--set-reference", action="store_true",
                   help="also run each program bare on the N-device set (its first device) in every round: the "
                   "time the drivers' set-up of N devices adds outside the kernels, without coex")
    p.add_argument("--traces", action="store_true",
                   help="each coex run traced (OUT/traces/<run>.trace.json), its timeline in testbed.json "
                        "(scripts/trace_timeline.py): what a first run spent where")
    p.add_argument("--against-coex", default="", help="the launcher of another build: every policy also runs "
                   "under it, as POLICY@LABEL (scripts/bench-testbed --against)")
    p.add_argument("--against-label", default="against")
    p.add_argument("--command", default="scripts/bench-testbed")
    args = p.parse_args()
    if args.tables_from:
        os.makedirs(args.out, exist_ok=True)
        tables_from(args.tables_from.split(","), args.out)
        return 0
    if not args.build_dir or not args.programs_dir:
        p.error("--build-dir and --programs-dir are needed to run the testbed")
    if args.repeat < 1:
        p.error("--repeat: at least 1")
    if args.second_runs and args.pocl_cache != "warm":
        p.error("--second-runs: with --pocl-cache warm only (a second run finds what the first compiled)")
    coex = os.path.join(os.path.abspath(args.build_dir), "coex")
    os.makedirs(args.out, exist_ok=True)
    if args.traces:
        shutil.rmtree(os.path.join(args.out, "traces"), ignore_errors=True)
        os.makedirs(os.path.join(args.out, "traces"))
    work = tempfile.mkdtemp(prefix="coex-testbed-")
    env0 = base_env()
    warm = args.pocl_cache == "warm"
    after_bare = args.pocl_cache == "bare"  # the bare runs' cache, copied for each coex run
    if warm or after_bare:
        env0["POCL_CACHE_DIR"] = os.path.join(work, "pocl-cache")
    counts = [int(n) for n in args.devices.split(",") if n]
    policies = [x for x in args.policies.split(",") if x]
    if args.against_coex:  # each policy beside itself under the other build, in the same rounds
        policies = [q for x in policies for q in (x, "%s@%s" % (x, args.against_label))]
    progs = testbed_programs(os.path.abspath(args.programs_dir), set(filter(None, args.only.split(","))))
    runs = []
    failures = []

    def record(prog, setup, n, policy, result, reference=None, round_=0):
        entry = dict(result, program=prog["name"], setup=setup, n=n, policy=policy, round=round_)
        if reference is not None and entry["status"] == "ok" and entry["checksums"] != reference:
            entry["status"] = "mismatch"
        if entry["status"] != "ok":
            failures.append(entry)
        runs.append(entry)
        print("%-15s %-9s N=%-2s %-8s %s wall %.3f s kernels %s cpu %s %s" % (
            prog["name"], setup, n, policy or "-", entry["status"], entry["wall"], fmt(entry.get("kernels"), 3),
            fmt(entry.get("cpu"), 2),
            json.dumps(entry.get("report", {}))), flush=True)
        return entry

    def coex_cmd(prog, spec, report):
        launcher = os.path.abspath(args.against_coex) if "@" in spec else coex
        name, _ = policy_and_settings(spec)
        return [launcher, "run", "--policy", name, "--report", report, "--"] + prog["cmd"]

    def bare(prog, env):
        if warm or after_bare:
            run_once(prog["cmd"], env, args.timeout)  # fills PoCL's cache, untimed
        return run_once(prog["cmd"], env, args.timeout)

    # One priming run per policy (its settings included), each from an empty history: PoCL compiles a
    # work-group function per kernel, local size and whether the global offset is zero, per build, and
    # which of them a run needs depends on the policy (under static home only runs at offset zero; a
    # dynamic policy hands it later ranges too: matmul's first launch at N = 2 then compiled for 0.44 s
    # in whichever policy's run came first after a priming under static alone).
    def prime_coex(prog, env):
        if warm:
            history = os.path.join(work, "prime.history.json")
            for policy in policies:
                _, settings = policy_and_settings(policy)
                run_once(coex_cmd(prog, policy, os.path.join(work, "prime.report.json")),
                         dict(env, COEX_CACHE=history, **settings), args.timeout)
                if os.path.exists(history):
                    os.remove(history)

    def coex_run(prog, env, setup, n, policy, reference, round_):
        tag = "%s-%s-%d-%s-%d" % (prog["name"], setup, n, policy, round_)
        report = os.path.join(work, tag + ".report.json")
        _, settings = policy_and_settings(policy)
        run_env = dict(env, COEX_CACHE=os.path.join(work, tag + ".history.json"), **settings)
        if not warm:
            # A very first run: no binary kept by an earlier one either, but the run keeps its own, as a
            # user's first run does (exec/kept_binaries.h), into a folder of this run's own (its second
            # run, with --second-runs, builds from them).
            run_env.setdefault("COEX_BINARY_CACHE", os.path.join(work, tag + ".binaries"))
        def traced(run_tag):
            if not args.traces:
                return run_env
            return dict(run_env, COEX_TRACE=os.path.join(args.out, "traces", run_tag + ".trace.json"))

        def timed(result, run_env_traced):
            result["report"] = report_summary(report)
            if "COEX_TRACE" in run_env_traced:
                result["timeline"] = timeline(run_env_traced["COEX_TRACE"], TIMELINE_LAUNCHES)
            return result

        first_env = traced(tag)
        result = run_once(coex_cmd(prog, policy, report), first_env, args.timeout,
                          env0["POCL_CACHE_DIR"] if after_bare else None)
        record(prog, setup, n, policy, timed(result, first_env), reference, round_)
        if args.second_runs:  # the same program again, with the History the first run left
            second_env = traced(tag + "-second")
            result = run_once(coex_cmd(prog, policy, report), second_env, args.timeout)
            record(prog, setup + "-second", n, policy, timed(result, second_env), reference, round_)

    def turned(r):
        return policies[r % len(policies):] + policies[:r % len(policies)] if policies else []

    def first_ok_sums(entries):
        """The checksums of the first of `entries` that passed: what the others must give."""
        return next((e["checksums"] for e in entries if e["status"] == "ok"), None)

    rounds = range(args.repeat)
    for prog in progs:
        ones = [record(prog, "one", 1, None, bare(prog, dict(env0, POCL_DEVICES=args.driver)), None, r) for r in rounds]
        reference = first_ok_sums(ones)
        for one in ones:
            if reference is not None and one["status"] == "ok" and one["checksums"] != reference:
                one["status"] = "mismatch"
                failures.append(one)
        for n in counts:
            env = dict(env0, POCL_DEVICES=" ".join([args.driver] * n))
            prime_coex(prog, env)
            for r in rounds:
                record(prog, "threads", n, None, bare(prog, threads_env(dict(env0, POCL_DEVICES=args.threaded), n)),
                       reference, r)
                if args.set_reference:
                    record(prog, "set", n, None, bare(prog, env), reference, r)
                for policy in turned(r):
                    coex_run(prog, env, "equal", n, policy, reference, r)
        if args.mixed:
            m = args.mixed
            env = threads_env(dict(env0, POCL_DEVICES=" ".join([args.threaded] + [args.driver] * m)), m)
            sized = dict(prog, cmd=prog["mixed_cmd"])
            # The threaded device is home: PoCL lists its devices by driver, not in POCL_DEVICES' order
            # (the single-threaded ones first), so the program is told which it is.
            home = dict(sized, cmd=sized["cmd"] + ["--device", str(threaded_index(coex, env, args))])
            prime_coex(home, env)
            same_size = sized["cmd"] == prog["cmd"]
            alones = []
            for r in rounds:
                alones.append(record(sized, "mixed-home", m, None,
                                     bare(sized, threads_env(dict(env0, POCL_DEVICES=args.threaded), m)),
                                     reference if same_size else first_ok_sums(alones), r))
                alone_sums = reference if same_size else first_ok_sums(alones)
                # The same cores as one threaded device: the limit of the mixed set's speed-up.
                record(sized, "mixed-limit", m, None,
                       bare(sized, threads_env(dict(env0, POCL_DEVICES=args.threaded), 2 * m)), alone_sums, r)
                for policy in turned(r):
                    coex_run(home, env, "mixed", m, policy, alone_sums, r)

    meta = {"command": args.command, "machine": platform.node(), "cpus": os.cpu_count(), "pocl_cache": args.pocl_cache,
            "repeat": args.repeat,
            "driver": args.driver, "threaded": args.threaded, "mixed": args.mixed, "devices": counts,
            "policies": policies}
    with open(os.path.join(args.out, "testbed.json"), "w") as f:
        json.dump(dict(meta, runs=runs), f, indent=1)
    write_tables(meta, [{"name": p["name"], "class": p["class"]} for p in progs], runs, args.out)
    if failures:
        print("testbed: %d run(s) failed or gave other bytes than the reference" % len(failures), file=sys.stderr)
        return 1
    return 0


def tables_from(paths, out):
    """The tables of several testbed.json files as one: the same setups, the programs split by --only
    over several runs of the script (each within the device machine's time limit per command)."""
    with open(os.path.join(ROOT, "benchmarks", "benchmarks.json")) as f:
        classes = {b["name"]: b["class"] for b in json.load(f)["benchmarks"]}
    metas, runs = [], []
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        metas.append(data)
        runs += data["runs"]
    progs = []
    for r in runs:
        if r["setup"] == "one" and r["program"] not in [p["name"] for p in progs]:
            progs.append({"name": r["program"], "class": classes.get(r["program"], "")})
    policies = []
    for r in runs:
        if r["setup"] == "equal" and r["policy"] not in policies:
            policies.append(r["policy"])
    meta = dict(metas[0], command="` and `".join(m["command"] for m in metas),
                devices=sorted({r["n"] for r in runs if r["setup"] == "equal"}), policies=policies,
                mixed=next((r["n"] for r in runs if r["setup"] == "mixed-home"), 0))
    write_tables(meta, progs, runs, out)


def outside_kernels_table(meta, progs, find):
    """With --set-reference: each setup's time outside its kernels (wall less time_kernels, medians), the
    bare run on the N-device set beside coex's: what the drivers' set-up of N devices costs any program
    that lists them, coex or not."""
    counts, policies = meta["devices"], meta["policies"]
    if not any(find(p["name"], "set", n, None) for p in progs for n in counts):
        return []
    lines = ["", "Time outside the kernels (s): wall time less time_kernels, medians; `set`: bare on the first "
             "device of the N-device set (the others listed but idle):", "",
             "| program | N | one device | `set` | " + " | ".join(policies) + " | `%s` N threads |" % meta["threaded"],
             "|---|---|---|---|" + "---|" * (len(policies) + 1)]
    def outside(r):
        return r["wall"] - r["kernels"] if r and r.get("kernels") is not None else None
    for prog in progs:
        one = find(prog["name"], "one", 1, None)
        for n in counts:
            cells = [fmt(outside(find(prog["name"], "set", n, None)), 3)]
            cells += [fmt(outside(find(prog["name"], "equal", n, policy)), 3) for policy in policies]
            cells.append(fmt(outside(find(prog["name"], "threads", n, None)), 3))
            lines.append("| %s | %d | %s | %s |" % (prog["name"], n, fmt(outside(one), 3), " | ".join(cells)))
    return lines


def second_runs_table(meta, progs, find):
    """With --second-runs: each policy's first and second runs (the History of the first), wall (kernels)
    in seconds, and the second's time over the first's."""
    setups = [("equal", n) for n in meta["devices"]] + ([("mixed", meta["mixed"])] if meta["mixed"] else [])
    rows = []
    for prog in progs:
        for setup, n in setups:
            for policy in meta["policies"]:
                first, second = find(prog["name"], setup, n, policy), find(prog["name"], setup + "-second", n, policy)
                if not first or not second:
                    continue
                ratio = second["wall"] / first["wall"]
                kern = (second["kernels"] / first["kernels"]
                        if second.get("kernels") and first.get("kernels") else None)
                rows.append("| %s | %s | %s | %s (%s) | %s (%s) | %s (%s) |" % (
                    prog["name"], setup if setup == "mixed" else "N = %d" % n, policy, fmt(first["wall"], 3),
                    fmt(first["kernels"], 3), fmt(second["wall"], 3), fmt(second["kernels"], 3), fmt(ratio),
                    fmt(kern)))
    if not rows:
        return []
    return ["", "Second runs: each coex run again with the History the first left; seconds, wall (kernels), and "
            "the second's over the first's:", "",
            "| program | set | policy | first run | second run | second / first |", "|---|---|---|---|---|---|"] + rows


def write_tables(meta, progs, runs, out):
    counts, policies = meta["devices"], meta["policies"]
    def find(prog, setup, n, policy):
        """The setup's runs as one: the median wall and kernel times of those that passed."""
        ok = [r for r in runs if r["program"] == prog and r["setup"] == setup and r["n"] == n
              and r["policy"] == policy and r["status"] == "ok"]
        if not ok:
            return None
        kernels = [r["kernels"] for r in ok if r.get("kernels")]
        return {"wall": median([r["wall"] for r in ok]), "kernels": median(kernels) if kernels else None}

    repeat = meta.get("repeat", 1)
    lines = ["Command: `%s` on %s (%d CPUs); single-threaded devices: PoCL `%s`, threaded: `%s`. Every coex run "
             "starts from an empty history; PoCL's kernel cache: %s. Speed-up: the one-device run's wall time (start "
             "to exit) over the setup's; in brackets the same by time_kernels.%s" % (
                 meta["command"], meta["machine"], meta["cpus"], meta["driver"], meta["threaded"], meta["pocl_cache"],
                 " Each setup ran %d times: medians of its times." % repeat if repeat > 1 else ""),
             ""]
    header = "| program | class | one device (s) | N | " + " | ".join(policies) + " | `%s` N threads |" % meta["threaded"]
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
    lines += ["| N | " + " | ".join(policies) + " | `%s` N threads |" % meta["threaded"],
              "|---|" + "---|" * (len(policies) + 1)]
    for n in counts:
        cells = []
        for policy in policies + [None]:
            vals = geo.get((n, policy), [])
            cells.append("%s (%s)" % (fmt(geomean([v[0] for v in vals])), fmt(geomean([v[1] for v in vals]))))
        lines.append("| %d | %s |" % (n, " | ".join(cells)))
    if meta["mixed"]:
        lines += ["", "Mixed set: `%s` with %d threads (home) + %d single-threaded devices, at the programs' "
                  "`testbed-mixed` size where they have one; speed-up over that threaded device alone, whole run "
                  "(by time_kernels in brackets); last, the threaded device with as many threads as the set "
                  "has (%d): the limit for those cores:" % (meta["threaded"], meta["mixed"], meta["mixed"],
                                                            2 * meta["mixed"]), "",
                  "| program | class | threaded alone (s) | " + " | ".join(policies) + " | `%s` %d threads |" % (
                      meta["threaded"], 2 * meta["mixed"]),
                  "|---|---|---|" + "---|" * (len(policies) + 1)]
        mixed_geo = {}
        for prog in progs:
            alone = find(prog["name"], "mixed-home", meta["mixed"], None)
            if not alone:
                continue
            cells = []
            for policy in policies + [None]:
                r = find(prog["name"], "mixed" if policy else "mixed-limit", meta["mixed"], policy)
                wall = alone["wall"] / r["wall"] if r else None
                kern = alone["kernels"] / r["kernels"] if r and r.get("kernels") and alone.get("kernels") else None
                cells.append("%s (%s)" % (fmt(wall), fmt(kern)))
                if prog["class"] in COMPUTE_CLASSES:
                    mixed_geo.setdefault(policy, []).append((wall, kern))
            lines.append("| %s | %s | %s | %s |" % (prog["name"], prog["class"], fmt(alone["wall"], 3),
                                                     " | ".join(cells)))
        lines.append("| **geomean, compute-bound** | | | %s |" % " | ".join(
            "%s (%s)" % (fmt(geomean([v[0] for v in mixed_geo.get(p, [])])),
                         fmt(geomean([v[1] for v in mixed_geo.get(p, [])]))) for p in policies + [None]))
    lines += outside_kernels_table(meta, progs, find)
    lines += second_runs_table(meta, progs, find)
    lines += ["", "Splits per coex run (split / launches, reasons): testbed.json, `report`."]
    with open(os.path.join(out, "testbed.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
