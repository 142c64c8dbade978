#!/usr/bin/env python3
"""Crash, hang and wrong-result hunting over many device sets (scripts/stress calls this). Runs every
test app of tests/apps and every benchmark of benchmarks/ at its 'local' size bare and under
`coex run --policy P` with an empty history (a fresh COEX_CACHE per run), for each number N of
single-threaded PoCL devices (POCL_DEVICES=<driver> x N), with and without the GPU, and compares
each run's checksums with the bare run's on the same home device.

  stress_run.py --build-dir DIR [--programs-dir DIR] --out DIR [--devices 1,2,4,8,15]
                [--policies auto,static] [--gpu both|yes|no] [--driver cpu-minimal] [--jobs 4]
                [--timeout 180] [--only tests/apps/a,benchmarks/b] [--scale local|testbed|...]
                [--repeat K] [--command TEXT]

A crash is a run killed by a signal (or exit status >= 128); a hang, one past --timeout; a
mismatch, output that differs from bare. Writes OUT/stress.json and OUT/stress.md; exit status 1
when any run crashed, hung or mismatched.
"""
import argparse
import collections
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile

from program_set import checksums, local_benchmarks, test_apps, vendors_without_nvidia

NO_GPU_VENDORS = "/tmp/coex-stress-vendors-cpu"


def gpu_env(base, with_gpu, have_gpu):
    """Without the GPU (where there is one): an ICD folder that holds the other registrations only."""
    env = dict(base)
    if have_gpu and not with_gpu:
        env["OCL_ICD_VENDORS"] = NO_GPU_VENDORS
    return env


def execute(cmd, env, timeout):
    try:
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=timeout)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", "", ""


def classify(rc, stdout, expected):
    if rc == "timeout":
        return "hang"
    if rc < 0 or rc >= 128:
        return "crash"
    if rc != 0:
        return "failed"
    if checksums(stdout) != expected:
        return "mismatch"
    return "ok"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build-dir", required=True)
    p.add_argument("--programs-dir", default="", help="the benchmarks' build; none: the test apps only")
    p.add_argument("--out", required=True)
    p.add_argument("--devices", default="1,2,4,8,15")
    p.add_argument("--policies", default="auto,static")
    p.add_argument("--gpu", default="both", choices=["both", "yes", "no"])
    p.add_argument("--driver", default="cpu-minimal")
    p.add_argument("--jobs", type=int, default=4)
    p.add_argument("--timeout", type=int, default=180)
    p.add_argument("--only", default="", help="programs by name, comma-separated (benchmarks/lu, apps/...)")
    p.add_argument("--scale", default="local", help="the benchmarks' size in benchmarks.json")
    p.add_argument("--repeat", type=int, default=1, help="runs of each program, setting and N")
    p.add_argument("--command", default="scripts/stress")
    args = p.parse_args()
    build = os.path.abspath(args.build_dir)
    coex = os.path.join(build, "coex")
    os.makedirs(args.out, exist_ok=True)
    have_gpu = vendors_without_nvidia(NO_GPU_VENDORS) is not None
    gpu_settings = {"both": [True, False], "yes": [True], "no": [False]}[args.gpu]
    gpu_settings = [g for g in gpu_settings if have_gpu or not g]
    base = {k: v for k, v in os.environ.items() if not k.startswith("COEX_") and k != "OPENCL_LAYERS"}
    base["COEX_LOG"] = "error"
    work = tempfile.mkdtemp(prefix="coex-stress-")
    progs = test_apps(build) + (local_benchmarks(os.path.abspath(args.programs_dir), args.scale)
                                if args.programs_dir else [])
    if args.only:
        progs = [(name, cmd) for name, cmd in progs if name in args.only.split(",")]
    counts = [int(n) for n in args.devices.split(",")]

    # Bare, once per program and GPU setting: the home device is the same for every N (the first
    # device of the first platform), so is the bare output.
    expected = {}
    for with_gpu in gpu_settings:
        env = gpu_env(base, with_gpu, have_gpu)
        env["POCL_DEVICES"] = args.driver
        for name, cmd in progs:
            rc, out, err = execute(cmd, env, args.timeout)
            expected[(name, with_gpu)] = checksums(out) if rc == 0 else None
            if rc != 0:
                print("bare %s (gpu %s) failed: %s %s" % (name, with_gpu, rc, err.strip()[-200:]), flush=True)

    jobs = []
    for with_gpu in gpu_settings:
        for n in counts:
            for policy in args.policies.split(","):
                for name, cmd in progs:
                    if expected[(name, with_gpu)] is not None:
                        jobs += [(with_gpu, n, policy, name, cmd, k) for k in range(args.repeat)]

    def one(job):
        with_gpu, n, policy, name, cmd, k = job
        env = gpu_env(base, with_gpu, have_gpu)
        env["POCL_DEVICES"] = " ".join([args.driver] * n)
        tag = "%s-%s-%d-%s-%d" % (name.replace("/", "_"), "gpu" if with_gpu else "cpu", n, policy, k)
        env["COEX_CACHE"] = os.path.join(work, tag, "history.json")
        rc, out, err = execute([coex, "run", "--policy", policy, "--"] + cmd, env, args.timeout)
        verdict = classify(rc, out, expected[(name, with_gpu)])
        return {"program": name, "gpu": with_gpu, "devices": n, "policy": policy, "verdict": verdict,
                "rc": rc, "stderr": err.strip()[-400:] if verdict != "ok" else ""}

    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for r in pool.map(one, jobs):
            results.append(r)
            if r["verdict"] != "ok":
                print("%s: %s, gpu %s, N=%d, %s: rc %s %s" % (r["verdict"].upper(), r["program"], r["gpu"],
                                                             r["devices"], r["policy"], r["rc"], r["stderr"]),
                      flush=True)
    shutil.rmtree(work, ignore_errors=True)
    with open(os.path.join(args.out, "stress.json"), "w") as f:
        json.dump(results, f, indent=1)

    lines = ["Command: `%s`; POCL_DEVICES = %s x N; an empty history per run." % (args.command, args.driver), "",
             "| GPU | N | runs | ok | crash | hang | mismatch | failed |", "|---|---|---|---|---|---|---|---|"]
    table = collections.OrderedDict()
    for r in results:
        table.setdefault((r["gpu"], r["devices"]), collections.Counter())[r["verdict"]] += 1
    total = collections.Counter()
    for (with_gpu, n), c in table.items():
        total.update(c)
        lines.append("| %s | %d | %d | %d | %d | %d | %d | %d |" % ("yes" if with_gpu else "no", n, sum(c.values()),
                                                                 c["ok"], c["crash"], c["hang"], c["mismatch"],
                                                                 c["failed"]))
    lines.append("| **all** | | %d | %d | %d | %d | %d | %d |" % (sum(total.values()), total["ok"], total["crash"],
                                                               total["hang"], total["mismatch"], total["failed"]))
    text = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "stress.md"), "w") as f:
        f.write(text)
    print(text)
    return 0 if total["ok"] == sum(total.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
