#!/usr/bin/env python3
"""Runs the benchmark set bare and under coex and writes every measurement to results.json.

  bench_run.py --scale gpu   --out DIR [--policies auto,boyer,...] [--deadline EPOCH]   (scripts/bench)
  bench_run.py --scale local --out DIR --bare-devices 0 --policies default          (scripts/bench-local)

The set and its sizes are in benchmarks/benchmarks.json. Per benchmark, in this order (so that
what matters most is measured first when the time budget runs short):
  1. bare on each device alone (--device i); a device that is not a GPU first runs the 'probe'
     size, and its full-size time is extrapolated by the work ratio when it would exceed --cpu-cap;
     the best device then gets its remaining --runs;
  2. under coex on all devices, home = the best device, for the first policy, each run right after
     one more bare run on the best device (--paired-bare): the app's own transfers of memory-bound
     programs drift by 20% over minutes (1 GiB through pageable memory), and T_best, the median of
     every bare run on the best device, then holds runs taken beside coex's;
  3. under coex restricted to the best device alone (COEX_DEVICES), for coex's own overhead;
  4. the other policies, one policy at a time over all benchmarks, until the deadline.
A run that would not finish before the deadline is skipped and listed; a policy that times out
--max-policy-timeouts times is dropped. results.json is rewritten after every run, so a run cut
short still leaves its data. scripts/bench_report.py turns it into tables and plots.
Standard library only.
"""

import argparse
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time

from program_set import benchmark_program

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINE_PATTERNS = {
    "device": re.compile(r"^device (\d+) (.*)$"),
    "work": re.compile(r"^work (\S+)$"),
    "launches": re.compile(r"^launches (\d+)$"),
    "checksum": re.compile(r"^checksum (\S+) ([0-9a-f]{16})$"),
    "time_total": re.compile(r"^time_total (\S+)$"),
    "time_kernels": re.compile(r"^time_kernels (\S+)$"),
}
DEVICE_ROW = re.compile(r"^(\d+)\s+(yes|no)\s+(yes|no)\s+(\S+)\s+(.*?)\s{2,}(.*?)\s*$")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scale", choices=("gpu", "local"), required=True)
    p.add_argument("--out", required=True, help="folder for results.json and raw/ (reports, traces)")
    p.add_argument("--build-dir", default=os.path.join(ROOT, "build-bench"),
                   help="coex's build folder (coex, libcoex.so)")
    p.add_argument("--programs", help="folder of the benchmark programs (default BUILD/programs)")
    p.add_argument("--set", default=os.path.join(ROOT, "benchmarks", "benchmarks.json"))
    p.add_argument("--only", help="comma-separated benchmark names")
    p.add_argument("--policies", default="auto,boyer,sigmoid,predict,hguided,adaptive,plbhec,wp,jitp,ess,static",
                   help="comma-separated, in priority order; 'default' runs coex without --policy")
    p.add_argument("--runs", type=int, default=3, help="process runs of the best device and of each coex policy")
    p.add_argument("--other-runs", type=int, default=1, help="process runs on each other device")
    p.add_argument("--paired-bare", type=int, default=1, choices=(0, 1),
                   help="1: each run of the first policy comes right after a bare run on the best device")
    p.add_argument("--overhead-runs", type=int, default=2, help="runs under coex on the best device alone (0: none)")
    p.add_argument("--bare-devices", help="comma-separated device indices to run bare (default: all)")
    p.add_argument("--cpu-cap", type=float, default=20.0,
                   help="seconds: a non-GPU device whose extrapolated full-size run is longer is not run full size")
    p.add_argument("--deadline", type=float, help="wall-clock time (seconds since the epoch) to finish by")
    p.add_argument("--budget", type=float, help="seconds from now to finish by (instead of --deadline)")
    p.add_argument("--min-timeout", type=float, default=30.0, help="smallest per-run timeout under coex")
    p.add_argument("--timeout-factor", type=float, default=8.0,
                   help="a coex run may take this many times the best bare run's wall time")
    p.add_argument("--max-policy-timeouts", type=int, default=2)
    p.add_argument("--coex-mode", choices=("auto", "layer", "preload"), default="auto",
                   help="how coex is loaded: `coex run` (layer) or `coex run --preload`; auto: layer, unless a "
                        "first check shows that the loader does not load the layer (then preload)")
    p.add_argument("--trace", action="store_true", help="keep a Perfetto trace of the last run of each coex setup")
    p.add_argument("--reuse-bare", metavar="RESULTS_JSON",
                   help="take the bare runs from an earlier results.json of the same machine and set "
                        "(spends the budget on policies; merge the pages with bench_report.py A B)")
    p.add_argument("--command", default="", help="the command line to record in the results")
    args = p.parse_args(argv)
    args.programs = args.programs or os.path.join(args.build_dir, "programs")
    if args.budget is not None and args.deadline is None:
        args.deadline = time.time() + args.budget
    return args


class Session:
    """The state of one benchmark session: settings, results, the deadline."""

    def __init__(self, args):
        self.args = args
        self.coex = os.path.join(args.build_dir, "coex")
        self.raw = os.path.join(args.out, "raw")
        os.makedirs(self.raw, exist_ok=True)
        self.results_path = os.path.join(args.out, "results.json")
        self.started = time.time()
        self.policy_timeouts = {}
        self.results = {
            "schema": 1,
            "scale": args.scale,
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
            "command": args.command or " ".join(sys.argv),
            "settings": {k: v for k, v in vars(args).items() if k not in ("command",)},
            "machine": describe_machine(),
            "benchmarks": [],
            "skipped": [],
        }

    def time_left(self):
        return float("inf") if self.args.deadline is None else self.args.deadline - time.time()

    def save(self):
        self.results["elapsed_s"] = round(time.time() - self.started, 1)
        tmp = self.results_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.results, f, indent=1, sort_keys=True)
        os.replace(tmp, self.results_path)

    def skip(self, bench, what, reason):
        self.results["skipped"].append({"benchmark": bench["name"], "what": what, "reason": reason})
        print("  skip %-14s %-24s %s" % (bench["name"], what, reason), flush=True)


def run_text(cmd, timeout=30):
    try:
        return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout,
                              universal_newlines=True).stdout
    except (OSError, subprocess.SubprocessError) as e:
        return "(%s: %s)" % (cmd[0], e)


def describe_machine():
    m = {"nproc": os.cpu_count(), "kernel": platform.release(), "python": platform.python_version()}
    try:
        with open("/proc/cpuinfo") as f:
            models = [l.split(":", 1)[1].strip() for l in f if l.startswith("model name")]
        m["cpu_model"] = models[0] if models else platform.processor()
    except OSError:
        m["cpu_model"] = platform.processor()
    try:
        with open("/proc/meminfo") as f:
            m["mem_total"] = next(l.split(":", 1)[1].strip() for l in f if l.startswith("MemTotal"))
    except (OSError, StopIteration):
        pass
    try:
        with open("/etc/os-release") as f:
            m["os"] = next(l.split("=", 1)[1].strip().strip('"') for l in f if l.startswith("PRETTY_NAME"))
    except (OSError, StopIteration):
        pass
    if shutil.which("nvidia-smi"):
        m["nvidia_smi"] = run_text(["nvidia-smi", "--query-gpu=index,name,memory.total,driver_version,"
                                    "pcie.link.gen.max,pcie.link.width.max", "--format=csv,noheader"]).strip()
        m["nvidia_topology"] = run_text(["nvidia-smi", "topo", "-m"]).strip()
    vendors = "/etc/OpenCL/vendors"
    if os.path.isdir(vendors):
        m["icd_files"] = sorted(os.listdir(vendors))
    m["env"] = {k: v for k, v in os.environ.items() if k.startswith(("POCL_", "COEX_", "OCL_ICD"))}
    return m


def list_devices(session):
    text = run_text([session.coex, "devices"])
    session.results["coex_devices"] = text
    devices = []
    for line in text.splitlines():
        m = DEVICE_ROW.match(line.strip())
        if m:
            # Columns: index, home, use, type, platform, name.
            devices.append({"index": int(m.group(1)), "used": m.group(3) == "yes", "type": m.group(4),
                            "platform": m.group(5), "name": m.group(6)})
    return devices


def clean_env():
    """The caller's environment without anything that would put coex into a bare run."""
    env = dict(os.environ)
    for var in [v for v in env if v.startswith("COEX_")] + ["OPENCL_LAYERS", "LD_PRELOAD"]:
        env.pop(var, None)
    return env


def parse_output(text):
    parsed = {"checksums": {}, "passed": False, "problems": []}
    for line in text.splitlines():
        line = line.rstrip()
        if line == "PASS":
            parsed["passed"] = True
            continue
        if line.startswith(("error", "mismatch", "check failed", "FAIL", "build log")):
            parsed["problems"].append(line[:300])
        for key, pattern in LINE_PATTERNS.items():
            m = pattern.match(line)
            if not m:
                continue
            if key == "checksum":
                parsed["checksums"][m.group(1)] = m.group(2)
            elif key == "device":
                parsed["device"] = int(m.group(1))
                parsed["device_name"] = m.group(2)
            elif key == "launches":
                parsed["launches"] = int(m.group(1))
            else:
                parsed[key] = float(m.group(1))
    return parsed


def execute(cmd, env, timeout):
    """Runs one program in its own process group; on timeout the whole group is killed."""
    began = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    timed_out = False
    try:
        out, err = proc.communicate(timeout=None if timeout == float("inf") else max(1.0, timeout))
    except subprocess.TimeoutExpired:
        timed_out = True
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = proc.communicate()
    record = parse_output(out.decode(errors="replace"))
    record.update({"cmd": cmd, "rc": proc.returncode, "timed_out": timed_out,
                   "wall": round(time.monotonic() - began, 4),
                   "stderr_tail": err.decode(errors="replace")[-1500:]})
    record["ok"] = (not timed_out and proc.returncode == 0 and record["passed"]
                    and "time_total" in record and "time_kernels" in record)
    return record


def work_of(session, program, scale):
    out = run_text([program] + scale["args"] + ["--work-only"])
    m = LINE_PATTERNS["work"].match(out.strip().splitlines()[0] if out.strip() else "")
    return float(m.group(1)) if m else None


def program_args(scale, device):
    return scale["args"] + ["--reps", str(scale["reps"]), "--device", str(device)]


def ok_runs(bench, kind, **match):
    return [r for r in bench["runs"] if r["kind"] == kind and r["ok"]
            and all(r.get(k) == v for k, v in match.items())]


def best_device(bench):
    """The device with the lowest median whole-app time among full-size bare runs."""
    times = {}
    for r in ok_runs(bench, "bare"):
        times.setdefault(r["device"], []).append(r["time_total"])
    if not times:
        return None
    return min(times, key=lambda d: statistics.median(times[d]))


def record_run(session, bench, record, kind, **fields):
    record.update(fields)
    record["kind"] = kind
    bench["runs"].append(record)
    session.save()
    state = "ok" if record["ok"] else ("TIMEOUT" if record["timed_out"] else "FAILED rc=%s" % record["rc"])
    label = kind + ("/" + fields["policy"] if fields.get("policy") else "") + (
        " d%s" % fields["device"] if "device" in fields else "")
    print("  %-14s %-22s total %8s  kernels %8s  wall %6.1fs  %s" % (
        bench["name"], label, fmt(record.get("time_total")), fmt(record.get("time_kernels")),
        record["wall"], state), flush=True)
    if not record["ok"]:
        for line in record["problems"][:3] + record["stderr_tail"].strip().splitlines()[-3:]:
            print("      " + line, flush=True)
    return record


def fmt(v):
    return "-" if v is None else "%.4f" % v


def bare_phase(session, bench, devices):
    args = session.args
    program = bench["program"]
    for dev in devices:
        if args.bare_devices is not None and dev["index"] not in args.bare_devices:
            continue
        budget_cap = session.time_left()
        if budget_cap < 5:
            session.skip(bench, "bare d%d" % dev["index"], "deadline")
            continue
        scale = bench["scale"]
        if dev["type"] != "GPU" and "probe" in bench:
            probe = bench["probe"]
            rec = execute([program] + program_args(probe, dev["index"]), clean_env(), min(budget_cap, 120))
            record_run(session, bench, rec, "probe", device=dev["index"])
            if not rec["ok"] or not bench.get("work") or not bench.get("probe_work"):
                continue
            factor = bench["work"] / bench["probe_work"] * scale["reps"] / probe["reps"]
            estimate = rec["wall"] - rec["time_total"] + rec["time_total"] * factor
            bench.setdefault("extrapolated", {})[str(dev["index"])] = {
                "time_total": rec["time_total"] * factor, "time_kernels": rec["time_kernels"] * factor,
                "factor": factor}
            if estimate > args.cpu_cap or estimate > session.time_left() - 5:
                continue
        rec = execute([program] + program_args(scale, dev["index"]), clean_env(), min(session.time_left(), 300))
        record_run(session, bench, rec, "bare", device=dev["index"])
    best = best_device(bench)
    if best is None:
        return None
    for _ in range(args.runs - len(ok_runs(bench, "bare", device=best))):
        if not fits(session, bench, ok_runs(bench, "bare", device=best), "bare d%d" % best):
            break
        rec = execute([program] + program_args(bench["scale"], best), clean_env(), session.time_left())
        record_run(session, bench, rec, "bare", device=best)
    return best_device(bench)


def fits(session, bench, similar_runs, what, factor=1.0):
    """Whether a run like `similar_runs` would end before the deadline (with a margin)."""
    walls = [r["wall"] for r in similar_runs]
    best_walls = [r["wall"] for r in ok_runs(bench, "bare", device=bench.get("best"))]
    estimate = max(walls) if walls else factor * (max(best_walls) if best_walls else 10.0)
    if estimate + 3 > session.time_left():
        session.skip(bench, what, "deadline (needs about %.0f s, %.0f s left)" % (estimate, session.time_left()))
        return False
    return True


def coex_runs(session, bench, policy, runs, one_device=False, paired=False):
    """`runs` runs under coex; one_device: on the best device alone (the overhead runs); paired: each
    after a bare run on the best device."""
    args = session.args
    best = bench["best"]
    kind = "coex_one" if one_device else "coex"
    label = "%s/%s" % (kind, policy)
    if not one_device and session.policy_timeouts.get(policy, 0) >= args.max_policy_timeouts:
        session.skip(bench, label, "policy dropped after %d timeouts" % args.max_policy_timeouts)
        return
    best_wall = max(r["wall"] for r in ok_runs(bench, "bare", device=best))
    for i in range(runs):
        if not fits(session, bench, [r for r in bench["runs"] if r["kind"] == kind and r.get("policy") == policy],
                    label, factor=2.0):
            return
        if paired and fits(session, bench, ok_runs(bench, "bare", device=best), "bare d%d" % best):
            rec = execute([bench["program"]] + program_args(bench["scale"], best), clean_env(), session.time_left())
            record_run(session, bench, rec, "bare", device=best, paired=True)
        tag = "%s-%s-%s-%d" % (bench["name"], kind, policy, i)
        report = os.path.join(session.raw, tag + ".report.json")
        env = clean_env()
        env["COEX_LOG"] = env_default("COEX_BENCH_LOG", "warn")
        # Each policy learns in its own history file, so that one policy's history does not
        # steer another (auto reads the History); runs after the first of a setup start warm.
        env["COEX_CACHE"] = os.path.join(session.raw, "history-%s%s.json" % (policy, "-one" if one_device else ""))
        cmd = [session.coex, "run"] + (["--preload"] if session.coex_mode == "preload" else [])
        if policy != "default":
            cmd += ["--policy", policy]
        cmd += ["--report", report]
        trace = None
        if args.trace and i == runs - 1:
            trace = os.path.join(session.raw, tag + ".trace.json")
            cmd += ["--trace", trace]
        if one_device:
            env["COEX_DEVICES"] = str(best)
        cmd += ["--", bench["program"]] + program_args(bench["scale"], best)
        timeout = min(session.time_left(), max(args.min_timeout, args.timeout_factor * best_wall))
        rec = execute(cmd, env, timeout)
        rec["report"] = load_json(report)
        if rec["ok"] and rec["report"] is None:
            rec["problems"].append("coex wrote no report: was coex loaded at all?")
            rec["ok"] = False
        rec["trace"] = os.path.basename(trace) if trace and os.path.exists(trace) else None
        rec["trace_summary"] = summarize_trace(trace) if rec["trace"] else None
        rec["env"] = {k: env[k] for k in env if k.startswith(("COEX_", "POCL_"))}
        record_run(session, bench, rec, kind, policy=policy, cold=(i == 0), device=best)
        if rec["timed_out"] and not one_device:
            session.policy_timeouts[policy] = session.policy_timeouts.get(policy, 0) + 1
            return
        if not rec["ok"]:
            return


def summarize_trace(path):
    """Where a run's time went, from its trace (report/trace.h: one track per device, complete
    events with a category): seconds per device and category, the span from the first event to
    the last, and how long at least one and at least two devices were running kernels."""
    trace = load_json(path)
    events = [e for e in (trace or {}).get("traceEvents", []) if e.get("ph") == "X" and "dur" in e]
    if not events:
        return None
    per_device = {}
    for e in events:
        cats = per_device.setdefault(str(e.get("tid")), {})
        cats[e.get("cat", "?")] = cats.get(e.get("cat", "?"), 0.0) + e["dur"] / 1e6
    begin = min(e["ts"] for e in events)
    end = max(e["ts"] + e["dur"] for e in events)
    points = []
    for e in events:
        if e.get("cat") == "kernel":
            points += [(e["ts"], 1, e.get("tid")), (e["ts"] + e["dur"], -1, e.get("tid"))]
    points.sort(key=lambda p: (p[0], p[1]))
    active, any_s, two_s, last = {}, 0.0, 0.0, None
    for ts, step, tid in points:
        busy = sum(1 for n in active.values() if n > 0)
        if last is not None:
            any_s += (ts - last) / 1e6 if busy >= 1 else 0.0
            two_s += (ts - last) / 1e6 if busy >= 2 else 0.0
        active[tid] = active.get(tid, 0) + step
        last = ts
    return {"per_device": per_device, "span_s": (end - begin) / 1e6, "kernels_any_s": any_s,
            "kernels_two_or_more_s": two_s, "events": len(events)}


def reuse_bare_runs(session, benches, path):
    """Copies the bare and probe runs of an earlier session on the same devices."""
    old = load_json(path)
    if not old:
        sys.exit("bench_run: cannot read %s" % path)
    key = [(d["index"], d["name"]) for d in old.get("devices", [])]
    if key != [(d["index"], d["name"]) for d in session.results["devices"]]:
        sys.exit("bench_run: %s was measured on other devices; not reusing it" % path)
    for bench in benches:
        earlier = next((b for b in old["benchmarks"] if b["name"] == bench["name"]
                        and b["scale"] == bench["scale"]), None)
        if not earlier:
            continue
        for r in earlier["runs"]:
            if r["kind"] in ("bare", "probe"):
                bench["runs"].append(dict(r, reused=True))
        if earlier.get("extrapolated"):
            bench["extrapolated"] = earlier["extrapolated"]
    session.results["reused_bare_from"] = {"path": path, "date": old.get("date"), "command": old.get("command")}


def env_default(name, default):
    return os.environ.get(name) or default


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def choose_coex_mode(session, benches):
    """Whether coex is active as a loader layer here. Some ocl-icd builds ignore OPENCL_LAYERS
    without a word (seen: Ubuntu 24.04, ocl-icd 2.3.2): the program then runs bare and writes no
    report, and every figure 'under coex' would be a bare figure. Checked once with a tiny run."""
    wanted = session.args.coex_mode
    check = {"requested": wanted}
    if wanted == "auto":
        program = next((b["program"] for b in benches if b["name"] == "saxpy"), benches[0]["program"])
        report = os.path.join(session.raw, "mode-check.report.json")
        rec = execute([session.coex, "run", "--report", report, "--", program, "--size", "65536", "--reps", "1"],
                      clean_env(), 120)
        written = load_json(report)
        check["layer_report_written"] = written is not None
        check["layer_run_ok"] = rec["ok"]
        # `coex run` itself preloads coex when the program's loader cannot load layers: the report's
        # mode says which way coex was in.
        wanted = written.get("mode", "layer") if written else "preload"
        check["check_run_mode"] = written.get("mode") if written else None
        if wanted == "preload":
            print("bench_run: coex is preloaded here (`coex run` found no layer support in the program's "
                  "loader, or the check run wrote no report); using coex run --preload", flush=True)
    check["used"] = wanted
    session.coex_mode = wanted
    session.results["coex_mode"] = check


def load_set(session):
    with open(session.args.set) as f:
        spec = json.load(f)
    only = set(session.args.only.split(",")) if session.args.only else None
    benches = []
    for b in spec["benchmarks"]:
        if (only and b["name"] not in only) or session.args.scale not in b["scales"]:
            continue
        program = benchmark_program(session.args.programs, b)
        if not os.access(program, os.X_OK):
            sys.exit("bench_run: %s is missing; build the benchmarks first" % program)
        scale = b["scales"][session.args.scale]
        entry = {"name": b["name"], "class": b["class"], "what": b["what"], "program": program,
                 "scale": scale, "runs": []}
        if session.args.scale == "gpu" and "probe" in b["scales"]:
            entry["probe"] = b["scales"]["probe"]
            entry["probe_work"] = work_of(session, program, entry["probe"])
        entry["work"] = work_of(session, program, scale)
        benches.append(entry)
    session.results["classes"] = spec.get("classes", {})
    return benches


def main(argv):
    args = parse_args(argv)
    if args.bare_devices is not None:
        args.bare_devices = [int(x) for x in args.bare_devices.split(",") if x != ""]
    session = Session(args)
    if not os.access(session.coex, os.X_OK):
        sys.exit("bench_run: %s is missing; build coex first (scripts/build)" % session.coex)
    devices = list_devices(session)
    session.results["devices"] = devices
    used = [d for d in devices if d["used"]]
    if not used:
        sys.exit("bench_run: `coex devices` lists no device:\n" + session.results["coex_devices"])
    # GPUs first: the best device is most likely a GPU, and its runs matter most.
    used.sort(key=lambda d: (d["type"] != "GPU", d["index"]))
    benches = load_set(session)
    session.results["benchmarks"] = benches
    choose_coex_mode(session, benches)
    policies = [p for p in args.policies.split(",") if p]
    print("bench_run: %d benchmarks, devices %s, policies %s, %s" % (
        len(benches), ", ".join("%d:%s" % (d["index"], d["type"]) for d in used), ",".join(policies),
        "no deadline" if args.deadline is None else "%.0f s left" % session.time_left()), flush=True)

    if args.reuse_bare:
        reuse_bare_runs(session, benches, args.reuse_bare)
    for bench in benches:
        bench["best"] = best_device(bench) if args.reuse_bare else None
        if bench["best"] is None:
            bench["best"] = bare_phase(session, bench, used)
        if bench["best"] is None:
            session.skip(bench, "coex", "no successful bare run")
    runnable = [b for b in benches if b["best"] is not None]
    if policies:
        for bench in runnable:
            coex_runs(session, bench, policies[0], args.runs, paired=bool(args.paired_bare))
    if args.overhead_runs > 0:
        for bench in runnable:
            coex_runs(session, bench, "default", args.overhead_runs, one_device=True)
    for policy in policies[1:]:
        for bench in runnable:
            coex_runs(session, bench, policy, args.runs)
    session.save()
    failed = [r for b in benches for r in b["runs"] if not r["ok"]]
    print("bench_run: %d runs, %d failed or timed out, %d skipped, %.0f s; results in %s" % (
        sum(len(b["runs"]) for b in benches), len(failed), len(session.results["skipped"]),
        time.time() - session.started, session.results_path), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
