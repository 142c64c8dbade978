#!/usr/bin/env python3
"""Fault injection: an app's split launches fail on one device, and the app must not notice.

  fault_injection.py --fault fail:<device index> --mode layer|preload --layer /abs/libcoex.so \
      --expectations tests/apps/expectations.json --name APP -- ./app [args]

Runs tests/apps/differential.py with COEX_FAULT set for the run under coex (the bare run never
sees COEX_* variables). differential.py requires the app's output to be the same bytes as bare,
and the report to count every launch; its split checks are off, because no launch may split now.
This script then reads the report and requires, for every kernel the expectations file marks
`"split": true`:

  - split_launches == 0, and every launch counted under not_split "sub_launch_failed" (coex
    tried the split, the injected failure hit, and the launch was redone on the home device) or,
    once the failing device was dropped for the rest of the run, "device_failed";
  - all its work-items on the home device.

At least one kernel must be marked split, or the test would prove nothing. Standard library only;
exit status 0 when the test passes, 1 when it fails.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DIFFERENTIAL = os.path.join(HERE, "..", "apps", "differential.py")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fault", required=True, help="the COEX_FAULT value, e.g. fail:1")
    p.add_argument("--mode", choices=("layer", "preload"), required=True)
    p.add_argument("--layer", required=True)
    p.add_argument("--expectations", required=True)
    p.add_argument("--name", required=True)
    p.add_argument("command", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    if args.command and args.command[0] == "--":
        args.command = args.command[1:]
    if not args.command:
        p.error("give the app after --")
    if not args.fault.startswith("fail:"):
        p.error("only fail:<index> is tested: the executor does not implement stall yet")
    return args


def check_report(report, expected):
    problems = []
    devices = report.get("devices", [])
    home = [d["index"] for d in devices if d.get("home") is True]
    kernels = {k.get("name"): k for k in report.get("kernels", [])}
    split_kernels = [n for n, want in expected["kernels"].items() if want.get("split") is True]
    if not split_kernels:
        problems.append("the expectations mark no kernel of %r as split: the test would prove nothing" % expected)
    failed_launches = 0
    for name in sorted(split_kernels):
        want = expected["kernels"][name]
        k = kernels.get(name)
        if k is None:
            problems.append("kernel %r is missing from the report" % name)
            continue
        if k.get("split_launches") != 0:
            problems.append("kernel %r: split_launches is %r, expected 0 (every split must have failed)"
                            % (name, k.get("split_launches")))
        # The failing device is dropped after its first failure (unless it is home): the launches
        # after that are not split for "device_failed". Launches enqueued before the first failure
        # was seen may fail too.
        reasons = k.get("not_split") or {}
        allowed = {"sub_launch_failed", "device_failed"}
        failed_launches += reasons.get("sub_launch_failed", 0)
        if set(reasons) - allowed or sum(reasons.values()) != want["launches"]:
            problems.append("kernel %r: not_split is %r, expected %d launches under sub_launch_failed "
                            "and device_failed" % (name, reasons, want["launches"]))
        busy = {p["index"]: p["work_items"] for p in k.get("per_device", []) if p.get("work_items")}
        if set(busy) != set(home):
            problems.append("kernel %r: work on devices %r, expected the home device %r only" % (name, busy, home))
    if split_kernels and failed_launches == 0:
        problems.append("no launch counted under sub_launch_failed: the injected failure never hit")
    return problems


def main(argv):
    args = parse_args(argv)
    with open(args.expectations) as f:
        expected = json.load(f)[args.name]
    env = dict(os.environ)
    env["COEX_FAULT"] = args.fault
    with tempfile.TemporaryDirectory(prefix="coex-fault-") as tmp:
        report_path = os.path.join(tmp, "report.json")
        command = [sys.executable, DIFFERENTIAL, "--mode", args.mode, "--layer", args.layer,
                   "--expectations", args.expectations, "--name", args.name, "--no-split-checks",
                   "--keep-report", report_path, "--"] + args.command
        print("[fault] COEX_FAULT=%s %s" % (args.fault, " ".join(command)))
        sys.stdout.flush()
        status = subprocess.call(command, env=env)
        if status != 0:
            print("FAIL %s (%s, COEX_FAULT=%s): the differential run failed (above)" % (args.name, args.mode, args.fault))
            return 1
        with open(report_path) as f:
            report = json.load(f)
    problems = check_report(report, expected)
    if problems:
        print("---- report ----")
        print(json.dumps(report, indent=2, sort_keys=True))
        for p in problems:
            print("report: " + p)
        print("FAIL %s (%s, COEX_FAULT=%s): %d problem(s), listed above" % (args.name, args.mode, args.fault, len(problems)))
        return 1
    print("OK %s (%s, COEX_FAULT=%s): every split launch failed over to the home device" % (args.name, args.mode, args.fault))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
