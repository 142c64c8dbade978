#!/usr/bin/env python3
"""A program created from a binary coex saw built from source is split like its source.

  binary_cache_check.py --layer /abs/libcoex.so --mode layer|preload -- ./binary_cache

Runs the app (which keeps its own binary cache file) in a fresh folder:
  1. under coex, cache empty: builds from source, writes its binary; the kernel is split;
  2. under coex again: creates the program from that binary; the kernel is still split;
  3. bare, from the binary: the same output;
  4. under coex with another, empty history folder: a binary coex never saw stays unsplit
     (binary_program), with the same output.
Exit status 0 when all hold.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def run(command, env, label):
    proc = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    if proc.returncode != 0 or not proc.stdout.endswith(b"PASS\n"):
        sys.stderr.write(proc.stdout.decode(errors="replace") + proc.stderr.decode(errors="replace"))
        raise SystemExit("FAIL: %s run exited %d" % (label, proc.returncode))
    return proc.stdout


def kernel_entry(report_path):
    with open(report_path) as f:
        report = json.load(f)
    kernels = report.get("kernels", {})
    if isinstance(kernels, list):
        kernels = {k.get("name"): k for k in kernels}
    return kernels.get("poly", {})


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--layer", required=True)
    p.add_argument("--mode", choices=("layer", "preload"), default="layer")
    p.add_argument("command", nargs=argparse.REMAINDER)
    args = p.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    with tempfile.TemporaryDirectory() as tmp:
        binary = os.path.join(tmp, "poly.bin")
        base = {k: v for k, v in os.environ.items() if not k.startswith("COEX_") and k != "OPENCL_LAYERS"}
        base.setdefault("POCL_DEVICES", "basic basic")

        def coex_env(history_dir, report):
            env = dict(base, COEX_POLICY="static", COEX_LOG="warn", COEX_REPORT=report,
                       COEX_CACHE=os.path.join(history_dir, "history.json"))
            if args.mode == "layer":
                env["OPENCL_LAYERS"] = args.layer
            else:
                env["LD_PRELOAD"] = args.layer
            return env

        history = os.path.join(tmp, "history")
        os.makedirs(history)
        problems = []
        outputs = {}
        for label in ("source", "binary"):
            report = os.path.join(tmp, label + ".json")
            outputs[label] = run(command + [binary], coex_env(history, report), label)
            entry = kernel_entry(report)
            print("%s run: poly %s" % (label, json.dumps(entry, sort_keys=True)))
            if entry.get("split_launches", 0) < 1:
                problems.append("%s run: poly was not split (%s)" % (label, entry.get("not_split")))
        if not os.path.exists(os.path.join(history, "binaries.json")):
            problems.append("no binaries.json beside the history")
        outputs["bare"] = run(command + [binary], base, "bare")
        other = os.path.join(tmp, "other")
        os.makedirs(other)
        report = os.path.join(tmp, "unseen.json")
        outputs["unseen"] = run(command + [binary], coex_env(other, report), "unseen")
        entry = kernel_entry(report)
        print("unseen binary: poly %s" % json.dumps(entry, sort_keys=True))
        if entry.get("split_launches", 0) != 0 or "binary_program" not in entry.get("not_split", {}):
            problems.append("a binary coex never saw: expected not_split binary_program, got %s" % entry)
        if len(set(outputs.values())) != 1:
            problems.append("outputs differ: %s" % {k: v.decode() for k, v in outputs.items()})
        if problems:
            raise SystemExit("FAIL: " + "; ".join(problems))
    print("PASS")


if __name__ == "__main__":
    main()
