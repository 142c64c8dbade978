#!/usr/bin/env python3
"""What share of real launches coex splits (the coverage benchmark). Runs every test app of
tests/apps, every benchmark of benchmarks/ at its 'local' scale, the long 1-D launch of
tests/layer/long_items and the pyopencl program of tests/layer twice (its second run loads the program
from pyopencl's binary cache) under `coex run --policy static`, each with an empty history, and
reads each run's report and trace:

  launches split / launches, and the time of the split launches / the time of all launches (the
  trace's launch events: a split launch from its start to its merge, one not split on the app's
  device), and every reason a launch was not split.

  coverage_run.py --build-dir DIR --out DIR [--markdown FILE] [--command TEXT]

scripts/coverage builds what it needs and calls this. Exit status 1 when a run fails or its output
differs from the same program run bare.
"""
import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile

from program_set import ROOT, checksums, local_benchmarks, test_apps

TIMEOUT = 600


def programs(build, programs_dir):
    return (test_apps(build) + local_benchmarks(programs_dir) +
            [("tests/layer/long_items", [os.path.join(build, "tests", "layer", "long_items")])])


def launch_times(trace_path):
    """(seconds of split launches, seconds of all launches) from the trace's launch events."""
    with open(trace_path) as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    split = total = 0.0
    for e in events:
        if e.get("cat") == "launch" and e.get("ph") == "X":
            seconds = e.get("dur", 0.0) / 1e6
            total += seconds
            if e.get("args", {}).get("split"):
                split += seconds
    return split, total


def summarize(report_path, trace_path):
    with open(report_path) as f:
        report = json.load(f)
    launches = split = 0
    reasons = collections.Counter()
    for k in report["kernels"]:
        launches += k["launches"]
        split += k["split_launches"]
        for reason, count in k.get("not_split", {}).items():
            reasons[reason] += count
    split_s, total_s = launch_times(trace_path)
    return {"launches": launches, "split": split, "split_seconds": split_s, "seconds": total_s,
            "not_split": dict(reasons)}


def run(cmd, env):
    return subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=TIMEOUT)


def measure(name, cmd, coex, env, workdir, bare_env=None):
    """Runs cmd bare (with bare_env when given), then under coex; returns the summary or raises with
    the reason."""
    bare = run(cmd, bare_env or env)
    if bare.returncode != 0:
        raise RuntimeError("bare run exited %d: %s" % (bare.returncode, bare.stderr.strip()[-300:]))
    tag = name.replace("/", "_")
    report, trace = os.path.join(workdir, tag + ".report.json"), os.path.join(workdir, tag + ".trace.json")
    run_env = dict(env, COEX_CACHE=os.path.join(workdir, tag + ".history.json"))
    under = run([coex, "run", "--policy", "static", "--report", report, "--trace", trace, "--"] + cmd, run_env)
    if under.returncode != 0:
        raise RuntimeError("run under coex exited %d: %s" % (under.returncode, under.stderr.strip()[-300:]))
    if checksums(under.stdout) != checksums(bare.stdout):
        raise RuntimeError("output differs from the bare run")
    return summarize(report, trace)


def measure_pyopencl(coex, env, workdir):
    """The pyopencl program of tests/layer, twice with one pyopencl cache: the second run creates its
    program from a binary. Returns the second run's summary (the first is built from source)."""
    python = "/usr/bin/python3"
    script = os.path.join(ROOT, "tests", "layer", "pyopencl_cache_check.py")
    if subprocess.run([python, "-c", "import pyopencl"], stderr=subprocess.DEVNULL).returncode != 0:
        raise RuntimeError("python3-pyopencl is not installed (scripts/install-deps installs it)")
    run_env = dict(env, XDG_CACHE_HOME=os.path.join(workdir, "xdg"), PYOPENCL_COMPILER_OUTPUT="0")
    run_env.pop("PYOPENCL_NO_CACHE", None)
    # The bare runs keep their own pyopencl cache: coex must see the first build from source.
    bare_env = dict(run_env, XDG_CACHE_HOME=os.path.join(workdir, "xdg-bare"))
    summaries = []
    for attempt in (1, 2):
        summaries.append(measure("pyopencl_run%d" % attempt, [python, script, "--app"], coex, run_env, workdir,
                                 bare_env))
    if not os.path.isdir(os.path.join(workdir, "xdg")):
        raise RuntimeError("pyopencl kept no binary cache")
    return summaries[1]


def pct(a, b):
    return "-" if b == 0 else "%.0f%%" % (100.0 * a / b)


def markdown(rows, command, devices):
    lines = ["Command: `%s`, POCL_DEVICES=\"%s\", policy static, an empty history per run." % (command, devices), "",
             "| program | launches | split | share of launches | share of launch time | not split (reason x count) |",
             "|---|---|---|---|---|---|"]
    all_launches = all_split = 0
    all_s = all_split_s = 0.0
    reasons = collections.Counter()
    for name, s in rows:
        if "error" in s:
            lines.append("| %s | - | - | - | - | run failed: %s |" % (name, s["error"]))
            continue
        all_launches += s["launches"]
        all_split += s["split"]
        all_s += s["seconds"]
        all_split_s += s["split_seconds"]
        reasons.update(s["not_split"])
        why = ", ".join("%s x%d" % kv for kv in sorted(s["not_split"].items()))
        lines.append("| %s | %d | %d | %s | %s | %s |" % (name, s["launches"], s["split"], pct(s["split"], s["launches"]),
                                                         pct(s["split_seconds"], s["seconds"]), why or "-"))
    why = ", ".join("%s x%d" % kv for kv in sorted(reasons.items()))
    lines.append("| **all** | %d | %d | %s | %s | %s |" % (all_launches, all_split, pct(all_split, all_launches),
                                                          pct(all_split_s, all_s), why or "-"))
    return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build-dir", required=True)
    p.add_argument("--programs-dir", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--markdown", help="write the table here")
    p.add_argument("--command", default="scripts/coverage")
    args = p.parse_args()
    build = os.path.abspath(args.build_dir)
    coex = os.path.join(build, "coex")
    os.makedirs(args.out, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("COEX_") and k != "OPENCL_LAYERS"}
    env.setdefault("POCL_DEVICES", "basic basic")
    env["COEX_LOG"] = "error"
    rows, failed = [], False
    workdir = tempfile.mkdtemp(prefix="coex-coverage-")
    try:
        for name, cmd in programs(build, os.path.abspath(args.programs_dir)):
            try:
                rows.append((name, measure(name, cmd, coex, env, workdir)))
            except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
                rows.append((name, {"error": str(e)}))
                failed = True
            print("%-32s %s" % (name, json.dumps(rows[-1][1])), flush=True)
        try:
            rows.append(("pyopencl (2nd run, from binary)", measure_pyopencl(coex, env, workdir)))
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
            rows.append(("pyopencl (2nd run, from binary)", {"error": str(e)}))
            failed = True
        print("%-32s %s" % (rows[-1][0], json.dumps(rows[-1][1])), flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    with open(os.path.join(args.out, "coverage.json"), "w") as f:
        json.dump(rows, f, indent=1)
    table = markdown(rows, args.command, env["POCL_DEVICES"])
    print(table)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
