#!/usr/bin/env python3
"""The testbed's split launches, measured for the simulator (docs/schedulers.md, "The testbed,
predicted and measured"; scripts/bench-testbed-sim builds coex and calls this on the device machine).
For each program of benchmarks.json with a 'testbed' size (or those of --only):

  - its pace on single-threaded PoCL devices: K bare copies of it at once, each on a device of its own
    (POCL_DEVICES=<driver>), for K = 1 and every N of --devices; seconds per launch (time_kernels over
    --reps) of each copy: a device's pace while K cores are busy, as in a split over K devices;
  - under `coex run --policy P --trace` over N such devices, for each policy, from an empty history:
    from the trace, every launch but the first (which waits for coex's builds and PoCL's compiles):
    its makespan, from the start of the host-copy refresh that opens a split launch to the end of
    its merge, and what lies in it (per device its work-groups, chunks, kernel time and the gap in
    microseconds before each sub-launch; the host-copy refresh, the read-backs and the merge).

PoCL's kernel cache is one for all runs; an untimed static run over the most devices fills it first.
NVIDIA's OpenCL is kept out. Writes OUT/testbed-sim.json; scripts/testbed_sim_check.py reads it.

  testbed_sim_run.py --build-dir DIR --programs-dir DIR --out DIR [--devices 2,4,8,15]
                     [--policies static,hguided] [--only a,b] [--reps 5] [--driver cpu-minimal]
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

from testbed_run import base_env, run_once, testbed_programs

def round_up(n, m):
    return (n + m - 1) // m * m


# Each benchmark's launch geometry (benchmarks/*.c), from its --size: the work-groups along the split
# dimension (the outermost one with more than one group), the work-items of one such group, and the
# work-groups beside each along the other dimensions.
GEOMETRY = {
    "nbody": lambda s: (round_up(s, 256) // 256, 256, 1),
    "binomial": lambda s: (s, 128, 1),
    "mandel_uniform": lambda s: (round_up(s, 16) // 16, 16 * round_up(s, 16), round_up(s, 16) // 16),
    "matmul": lambda s: (round_up(s, 16) // 16, 16 * round_up(s, 16), round_up(s, 16) // 16),
}


def compute_units(env):
    """CL_DEVICE_MAX_COMPUTE_UNITS of each device the loader shows under env (hguided's smallest chunk
    on a CPU: docs/schedulers.md), by name."""
    script = (
        "import ctypes\n"
        "cl = ctypes.CDLL('libOpenCL.so.1'); n = ctypes.c_uint(); p = (ctypes.c_void_p * 8)()\n"
        "cl.clGetPlatformIDs(8, p, ctypes.byref(n))\n"
        "for plat in p[:n.value]:\n"
        "    d = (ctypes.c_void_p * 64)(); m = ctypes.c_uint()\n"
        "    cl.clGetDeviceIDs(ctypes.c_void_p(plat), ctypes.c_ulong(0xFFFFFFFF), 64, d, ctypes.byref(m))\n"
        "    for dev in d[:m.value]:\n"
        "        cu = ctypes.c_uint(); name = ctypes.create_string_buffer(256)\n"
        "        cl.clGetDeviceInfo(ctypes.c_void_p(dev), 0x1002, 4, ctypes.byref(cu), None)\n"
        "        cl.clGetDeviceInfo(ctypes.c_void_p(dev), 0x102B, 256, name, None)\n"
        "        print(cu.value, name.value.decode())\n")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True).stdout
    return {line.split(" ", 1)[1]: int(line.split(" ", 1)[0]) for line in out.splitlines() if " " in line}


def with_reps(cmd, reps):
    cmd = list(cmd)
    cmd[cmd.index("--reps") + 1] = str(reps)
    return cmd


def arg_value(cmd, flag):
    return int(cmd[cmd.index(flag) + 1])


def concurrent_pace(cmd, env, copies, reps, timeout):
    """Seconds per launch of each of `copies` bare runs started together."""
    procs = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
             for _ in range(copies)]
    paces = []
    for p in procs:
        out, _ = p.communicate(timeout=timeout)
        for line in out.splitlines():
            if line.startswith("time_kernels "):
                paces.append(float(line.split()[1]) / reps)
    return paces


def seconds(us):
    return round(us / 1e6, 7)


def launches_from_trace(path, items_per_group):
    """Every split launch of the trace: its makespan and what lies in it (seconds)."""
    with open(path) as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    for e in events:
        e["end"] = e["ts"] + e["dur"]
    slices = sorted((e for e in events if e.get("cat") == "launch"), key=lambda e: e["end"])
    device_events = sorted((e for e in events if e["tid"] < 1000), key=lambda e: e["ts"])
    enqueues = sorted((e for e in events if e["tid"] >= 2000 and e["name"] == "clEnqueueNDRangeKernel"),
                      key=lambda e: e["ts"])
    finishes = sorted((e for e in events if e["tid"] >= 2000 and e["name"] == "clFinish"), key=lambda e: e["ts"])
    out, previous_end = [], -1.0
    for i, s in enumerate(slices):
        mine = [e for e in device_events if previous_end < e["ts"] and e["end"] <= s["end"] + 1]
        previous_end = s["end"]
        host_copy = [e for e in mine if e["name"] == "host copy"]
        merge = [e for e in mine if e.get("cat") == "merge"]
        if not s["args"].get("split") or not host_copy or not merge:
            out.append({"split": False})
            continue
        t0, t_copied = host_copy[-1]["ts"], host_copy[-1]["end"]
        devices, ends, read_back = {}, [], 0.0
        for d, items in s["args"]["work_items"].items():
            spans = [e for e in mine if e["tid"] == int(d) and e["ts"] >= t_copied]
            kernels = [e for e in spans if e.get("cat") == "kernel"]
            reads = [e for e in spans if e["name"] == "read back"]
            gaps, last = [], t_copied
            for k in kernels:  # from the previous sub-launch's end: hand-out, footprint, upload (microseconds)
                gaps.append(round(k["ts"] - last))
                last = k["end"]
            devices[d] = {"groups": items / items_per_group, "chunks": len(kernels),
                          "kernel_seconds": seconds(sum(k["dur"] for k in kernels)), "gaps_us": gaps}
            ends.append(max(k["end"] for k in kernels) if kernels else t0)
            read_back = max(read_back, sum(r["dur"] for r in reads))
        entry = {"split": True, "cold": bool(s["args"].get("cold")),
                 "makespan": seconds(merge[-1]["end"] - t0),
                 "host_copy": seconds(t_copied - t0),
                 "chunks_end": seconds(max(ends) - t0),  # the last sub-launch's end
                 "read_back": seconds(read_back),  # the longest of a device's read-backs
                 "merge": seconds(merge[-1]["dur"]),
                 "devices": devices}
        if i < len(enqueues):
            ends = [f["end"] for f in finishes if f["ts"] >= enqueues[i]["ts"]]
            if ends:
                entry["app_launch"] = seconds(ends[0] - enqueues[i]["ts"])
        out.append(entry)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build-dir", required=True)
    p.add_argument("--programs-dir", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--devices", default="2,4,8,15")
    p.add_argument("--policies", default="static,hguided")
    p.add_argument("--only", default="nbody,mandel_uniform,matmul")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--driver", default="cpu-minimal", help="the single-threaded PoCL driver (PoCL 3: basic)")
    p.add_argument("--timeout", type=int, default=120)
    p.add_argument("--command", default="scripts/bench-testbed-sim")
    args = p.parse_args()
    coex = os.path.join(os.path.abspath(args.build_dir), "coex")
    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="coex-testbed-sim-")
    env0 = dict(base_env(), POCL_CACHE_DIR=os.path.join(work, "pocl-cache"))
    counts = [int(n) for n in args.devices.split(",") if n]
    policies = [x for x in args.policies.split(",") if x]
    only = [x for x in args.only.split(",") if x]
    unknown = [name for name in only if name not in GEOMETRY]
    if unknown:
        p.error("no launch geometry known for %s (GEOMETRY)" % ", ".join(unknown))
    progs = testbed_programs(os.path.abspath(args.programs_dir), set(only))
    progs.sort(key=lambda prog: only.index(prog["name"]))
    lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    devices = subprocess.run([coex, "devices"], capture_output=True, text=True,
                             env=dict(env0, POCL_DEVICES=" ".join([args.driver] * 2))).stdout
    result = {"command": args.command, "machine": platform.node(), "cpus": os.cpu_count(), "lscpu": lscpu,
              "coex_devices": devices, "compute_units": compute_units(dict(env0, POCL_DEVICES=args.driver)),
              "driver": args.driver, "reps": args.reps, "devices": counts,
              "policies": policies, "programs": []}
    for prog in progs:
        started = time.monotonic()
        cmd = with_reps(prog["cmd"], args.reps)
        groups, items_per_group, beside = GEOMETRY[prog["name"]](arg_value(cmd, "--size"))
        entry = {"name": prog["name"], "cmd": [os.path.basename(cmd[0])] + cmd[1:], "groups": groups,
                 "items_per_group": items_per_group, "groups_beside": beside, "pace": {}, "runs": []}
        one = dict(env0, POCL_DEVICES=args.driver)
        reference = run_once(cmd, one, args.timeout).get("checksums")  # also fills PoCL's cache, untimed
        for k in sorted(set([1] + counts)):
            entry["pace"][str(k)] = [round(v, 5) for v in concurrent_pace(cmd, one, k, args.reps, args.timeout)]
            print("%-15s pace with %2d at once: %s" % (prog["name"], k, " ".join(
                "%.4f" % v for v in entry["pace"][str(k)])), flush=True)
        prime_env = dict(env0, POCL_DEVICES=" ".join([args.driver] * max(counts)),
                         COEX_CACHE=os.path.join(work, "prime.history.json"))
        run_once([coex, "run", "--policy", "static", "--"] + with_reps(cmd, 1), prime_env, args.timeout)
        for n in counts:
            for policy in policies:
                tag = "%s-%d-%s" % (prog["name"], n, policy)
                trace = os.path.join(work, tag + ".trace.json")
                env = dict(env0, POCL_DEVICES=" ".join([args.driver] * n),
                           COEX_CACHE=os.path.join(work, tag + ".history.json"))
                run = run_once([coex, "run", "--policy", policy, "--trace", trace, "--"] + cmd, env, args.timeout)
                if run["status"] == "ok" and run["checksums"] != reference:
                    run["status"] = "mismatch"  # other bytes than one device gives: not a measurement
                launches = launches_from_trace(trace, items_per_group) if os.path.exists(trace) else []
                entry["runs"].append({"n": n, "policy": policy, "status": run["status"], "wall": round(run["wall"], 4),
                                      "kernels": run.get("kernels"), "launches": launches})
                warm = [l["makespan"] for l in launches[1:] if l.get("split")]
                print("%-15s N=%-2d %-8s %s wall %.3f s, warm makespans %s" % (
                    prog["name"], n, policy, run["status"], run["wall"], " ".join("%.4f" % m for m in warm)),
                    flush=True)
        entry["seconds"] = round(time.monotonic() - started, 1)
        result["programs"].append(entry)
        with open(os.path.join(args.out, "testbed-sim.json"), "w") as f:
            json.dump(result, f, separators=(",", ":"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
