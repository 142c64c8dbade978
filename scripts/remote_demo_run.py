#!/usr/bin/env python3
"""The runs of scripts/remote-demo (docs/remote.md), once PoCL-R, coex and the benchmarks are built:
pocld servers on 127.0.0.1 serving this machine's PoCL CPU device (each on its own cores when there
are enough), then
  1. benchmarks/transfer_costs bare on one remote device and on the local device: per-command
     latency and bandwidth (what config/scenarios/remote-* model);
  2. each program bare on one remote device, under coex over all remote devices, and over them and
     the local device, for each policy; the checksums must equal the bare run's;
  3. benchmarks/split_cost bare on one remote device and under coex static over all remote devices:
     coex's per-launch overhead.
Writes OUT/remote-demo.{json,md}. Exit status 1 when a run failed or gave other bytes than bare."""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pocl_remote  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(command, env, timeout, cores=None):
    """Runs `command` in its own session (killed whole on timeout); returns (rc, stdout, seconds)."""
    if cores:
        command = ["taskset", "-c", cores] + command
    started = time.monotonic()
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate(timeout=30)
        return 124, out + "\n(timed out after %d s)" % timeout, time.monotonic() - started
    return proc.returncode, out, time.monotonic() - started


def value(out, key):
    m = re.search(r"^%s (\S+)$" % re.escape(key), out, re.M)
    return float(m.group(1)) if m else None


def checksums(out):
    return [line for line in out.splitlines() if line.startswith("checksum ")]


def cpu_lists(count, per):
    return ["%d-%d" % (i * per, i * per + per - 1) if per > 1 else str(i * per) for i in range(count)]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--prefix", required=True)
    p.add_argument("--build-dir", required=True, help="holds coex and libcoex.so")
    p.add_argument("--programs-dir", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--command", default="scripts/remote-demo")
    p.add_argument("--servers", type=int, default=2)
    p.add_argument("--programs", default="nbody,matmul")
    p.add_argument("--scale", default="testbed", help="the benchmarks.json scale of each program")
    p.add_argument("--policies", default="auto,static")
    p.add_argument("--launches", type=int, default=300, help="split_cost's launches")
    p.add_argument("--timeout", type=int, default=300, help="seconds per run")
    args = p.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so that the servers are stopped
    os.makedirs(args.out, exist_ok=True)
    coex = os.path.join(args.build_dir, "coex")
    with open(os.path.join(ROOT, "benchmarks", "benchmarks.json")) as f:
        bench = {b["name"]: b for b in json.load(f)["benchmarks"]}

    cores = len(os.sched_getaffinity(0))
    per = max(1, cores // (args.servers + 1))
    spread = cores >= args.servers + 1
    app_cores = "%d-%d" % (args.servers * per, cores - 1) if spread else None
    local_threads = cores - args.servers * per if spread else 1
    driver = pocl_remote.local_cpu_driver()
    results = {"command": args.command, "cores": cores, "servers": args.servers, "threads_per_server": per,
               "driver": driver, "app_cores": app_cores, "local_threads": local_threads, "runs": []}
    print("remote-demo: %d cores; %d pocld servers on 127.0.0.1, %s device with %d thread(s) each%s"
          % (cores, args.servers, driver, per,
             ", on cores %s; the app on cores %s" % (", ".join(cpu_lists(args.servers, per)), app_cores)
             if spread else " (sharing the cores)"))
    failed = False
    work = tempfile.mkdtemp(prefix="coex-remote-demo-")
    with pocl_remote.Servers(args.prefix, args.servers, os.path.join(args.out, "servers"), driver=driver,
                             cores=cpu_lists(args.servers, per) if spread else None, threads=per) as servers:
        remote_env = dict(os.environ, COEX_LOG="warn", **servers.client_env())
        both_env = dict(os.environ, COEX_LOG="warn",
                        **servers.client_env(local_driver=driver, local_threads=local_threads))
        local_env = dict(os.environ, POCL_DEVICES=driver, **pocl_remote.threads_env(local_threads))
        if os.path.exists(pocl_remote.SYSTEM_ICD):
            local_env["OCL_ICD_VENDORS"] = pocl_remote.SYSTEM_ICD
        rc, listing, _ = run([coex, "devices"], both_env, 60)
        print(listing)
        rows = [line.split() for line in listing.splitlines() if line[:1].isdigit()]
        remote = [r[0] for r in rows if r[4] == "remote"]
        if rc != 0 or len(remote) != args.servers:
            print("remote-demo: expected %d remote devices" % args.servers)
            return 1
        home = remote[0]

        # 1. What a command and a byte cost.
        costs = {}
        for name, env, device in (("remote", remote_env, home), ("local", local_env, "0")):
            rc, out, _ = run([os.path.join(args.programs_dir, "transfer_costs"), "--device", device, "--size", "64",
                              "--reps", "3", "--iters", "200"], env, args.timeout, app_cores)
            failed |= rc != 0
            costs[name] = {k: value(out, k) for k in ("command_latency_s", "launch_latency_s", "write_gbs", "read_gbs")}
            print("%s device: command %.1f us, launch %.1f us, write %.2f GB/s, read %.2f GB/s"
                  % ((name,) + tuple((costs[name][k] or 0) * (1e6 if "latency" in k else 1) for k in costs[name])))
        results["transfer_costs"] = costs

        # 2. The programs.
        for program in args.programs.split(","):
            scale = bench[program]["scales"][args.scale]
            app = [os.path.join(args.programs_dir, program)] + scale["args"] + ["--reps", str(scale["reps"]),
                                                                                "--device", home]
            rc, out, seconds = run(app, remote_env, args.timeout, app_cores)
            bare = {"program": program, "setup": "bare, one remote device", "rc": rc, "wall_s": seconds,
                    "kernels_s": value(out, "time_kernels"), "checksums": checksums(out)}
            results["runs"].append(bare)
            failed |= rc != 0 or not bare["checksums"]
            print("%-10s %-34s %7.3f s (kernels %s s)" % (program, bare["setup"], seconds, bare["kernels_s"]))
            for policy in args.policies.split(","):
                for setup, env in (("coex, %d remote devices" % args.servers, remote_env),
                                   ("coex, %d remote + local" % args.servers, both_env)):
                    report = os.path.join(work, "%s-%s-%d.json" % (program, policy, len(results["runs"])))
                    env = dict(env, COEX_CACHE=os.path.join(work, "history-%d.json" % len(results["runs"])))
                    rc, out, seconds = run([coex, "run", "--policy", policy, "--report", report] + app, env,
                                           args.timeout, app_cores)
                    same = rc == 0 and checksums(out) == bare["checksums"]
                    split = None
                    if os.path.exists(report):
                        with open(report) as f:
                            split = sum(k.get("split_launches", 0) for k in json.load(f).get("kernels", []))
                    entry = {"program": program, "setup": setup, "policy": policy, "rc": rc, "wall_s": seconds,
                             "kernels_s": value(out, "time_kernels"), "same_bytes": same, "split_launches": split,
                             "speedup": bare["wall_s"] / seconds if seconds else None}
                    results["runs"].append(entry)
                    failed |= not same
                    print("%-10s %-34s %7.3f s (kernels %s s) %.2fx %s, %s launches split"
                          % (program, setup + " " + policy, seconds, entry["kernels_s"], entry["speedup"],
                             "same bytes" if same else "OTHER BYTES (or failed): " + out[-2000:], split))

        # 3. coex's cost per launch.
        cost = [os.path.join(args.programs_dir, "split_cost"), "--iters", str(args.launches), "--device", home]
        per_launch = {}
        for name, env in (("bare", remote_env),
                          ("coex unsplit", dict(remote_env, COEX_DEVICES=home, COEX_POLICY="static")),
                          ("coex static", dict(remote_env, COEX_POLICY="static"))):
            command = cost if name == "bare" else [coex, "run"] + cost
            env = dict(env, COEX_CACHE=os.path.join(work, "history-cost-%s.json" % name.replace(" ", "-")))
            rc, out, _ = run(command, env, args.timeout, app_cores)
            per_launch[name] = value(out, "ms_per_launch")
            failed |= rc != 0
        results["ms_per_launch"] = per_launch
        if all(per_launch.values()):
            print("split_cost, %d launches: %.3f ms per launch bare on one remote device, %.3f under coex unsplit, "
                  "%.3f under coex static over %d remote devices: coex adds %.3f ms per split launch"
                  % (args.launches, per_launch["bare"], per_launch["coex unsplit"], per_launch["coex static"],
                     args.servers, per_launch["coex static"] - per_launch["bare"]))
    with open(os.path.join(args.out, "remote-demo.json"), "w") as f:
        json.dump(results, f, indent=1)
    with open(os.path.join(args.out, "remote-demo.md"), "w") as f:
        f.write("Command: `%s`; %d cores, %d servers (%s, %d thread(s) each).\n\n"
                % (args.command, cores, args.servers, driver, per))
        f.write("| program | setup | policy | wall (s) | kernels (s) | speed-up | launches split | same bytes |\n")
        f.write("|---|---|---|---:|---:|---:|---:|---|\n")
        for r in results["runs"]:
            f.write("| %s | %s | %s | %.3f | %s | %s | %s | %s |\n"
                    % (r["program"], r["setup"], r.get("policy", ""), r["wall_s"], r["kernels_s"],
                       "%.2f" % r["speedup"] if r.get("speedup") else "", r.get("split_launches", ""),
                       {True: "yes", False: "NO"}.get(r.get("same_bytes"), "")))
    print("remote-demo: results in %s/remote-demo.{json,md}" % args.out)
    print("remote-demo: %s" % ("FAILED (see above)" if failed else "every run gave the bare run's bytes"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
