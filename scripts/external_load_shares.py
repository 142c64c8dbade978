#!/usr/bin/env python3
"""Each device's share of the split launches before and after a CPU hog started
(scripts/bench-external-load), from a coex trace: every launch is a slice of category "launch"
whose args hold the work-items per device index. Times are seconds since coex started (the trace's
origin, within milliseconds of the app's start).

    external_load_shares.py --policy P --hog-at SECONDS --hog-device D [--settle S] TRACE
"""
import argparse
import json
import sys


def shares(launches):
    totals = {}
    for launch in launches:
        for device, items in launch["args"]["work_items"].items():
            totals[device] = totals.get(device, 0) + items
    whole = sum(totals.values())
    return {d: totals[d] / whole for d in sorted(totals)} if whole else {}


def describe(label, launches):
    if not launches:
        return f"  {label}: no split launch"
    parts = ", ".join(f"device {d} {100 * s:.1f} %" for d, s in shares(launches).items())
    return f"  {label}: {len(launches)} launches, {parts}"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--policy", required=True)
    parser.add_argument("--hog-at", type=float, required=True, help="seconds after the app started")
    parser.add_argument("--hog-device", required=True)
    parser.add_argument("--settle", type=float, default=1.0, help="seconds after the hog left out of 'after'")
    parser.add_argument("--window", type=float, default=2.0, help="seconds per line of the timeline")
    parser.add_argument("trace")
    args = parser.parse_args()
    with open(args.trace) as f:
        events = json.load(f)["traceEvents"]
    launches = [e for e in events if e.get("cat") == "launch" and e.get("args", {}).get("split")]
    if not launches:
        sys.exit(f"external_load_shares: no split launch in {args.trace}")
    at = lambda e: e["ts"] / 1e6  # noqa: E731
    before = [e for e in launches if at(e) < args.hog_at]
    after = [e for e in launches if at(e) >= args.hog_at + args.settle]
    print(f"policy {args.policy}: hog on the core of device {args.hog_device} from {args.hog_at:.1f} s")
    print(describe("before the hog", before))
    print(describe(f"after the hog (from {args.settle:g} s after it started)", after))
    end = max(at(e) for e in launches)
    t = 0.0
    while t <= end:
        window = [e for e in launches if t <= at(e) < t + args.window]
        if window:
            mark = "  <- hog starts" if t <= args.hog_at < t + args.window else ""
            parts = " ".join(f"dev{d} {100 * s:5.1f}%" for d, s in shares(window).items())
            print(f"    {t:6.1f}-{t + args.window:<6.1f} s  {len(window):4d} launches  {parts}{mark}")
        t += args.window
    return 0


if __name__ == "__main__":
    sys.exit(main())
