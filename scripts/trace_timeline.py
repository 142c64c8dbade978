#!/usr/bin/env python3
"""A first run's timeline, from a coex trace (`coex run --trace FILE`, docs/reporting.md): each app
launch (whole, split or not and why, and its plan where that waited), and the one-time work beside it
(the app's build, the analysis, each device's build, the reads of binaries, compile-ahead processes,
first-launch probes, each device's first run of a kernel, the exit's waits), in the order they began,
in milliseconds from the trace's first slice.
What sat on the app's path and what ran beside it reads off the start and duration columns.

  python3 scripts/trace_timeline.py [--launches N] TRACE [TRACE ...]

--launches N lists the first N launches (and their plans) and counts the others in a last row.
scripts/bench-testbed --traces keeps one trace per coex run and puts each run's timeline
(`timeline`, the rows below as lists, the first 50 launches) in testbed.json.
"""
import json
import sys

# Slices of one-time work, by name (a prefix): every one of them is a row.
ONE_TIME = ("analysis", "build", "read binary", "compile ahead", "first-launch probe", "wait for compile ahead",
            "share first run", "exit waits")
# The app's own builds (its thread's calls), and a launch's plan where it waited (a millisecond or more:
# for the analysis, home's build, a probe).
APP_BUILDS = ("clBuildProgram", "clCompileProgram", "clLinkProgram")
PLAN_WAIT_US = 1000
# Arguments that say how a slice went, kept in its row (the others, e.g. work-items, are left out).
ARGS = ("split", "not_split", "cold", "from_binary", "kept_binary", "kept", "made", "ended_at_exit", "served_none",
        "rewrite", "kinds", "first_run", "groups", "estimate_seconds")


def rows(events, launches_at_most=None):
    """[start_ms, duration_ms, track, name, {arg: value}] for each launch and one-time slice of
    `events` (a trace's traceEvents), in the order they began; past `launches_at_most` launches, their
    slices and plans are counted in a last row ["...", launches, "", "launches not listed", {}]."""
    slices = sorted((e for e in events if e.get("ph") == "X"), key=lambda e: e["ts"])
    if not slices:
        return []
    origin = slices[0]["ts"]
    out = []
    launches = left_out = 0
    for e in slices:
        args = e.get("args") or {}
        launch = e.get("cat") == "launch"
        plan = e["name"] == "plan" and e["dur"] >= PLAN_WAIT_US
        if not (launch or plan or args.get("first_run") or e["name"] in ONE_TIME or e["name"] in APP_BUILDS):
            continue
        launches += launch
        if launches_at_most is not None and launches > launches_at_most and (launch or plan):
            left_out += launch
            continue
        kept = {k: args[k] for k in ARGS if k in args}
        out.append([round((e["ts"] - origin) / 1e3, 1), round(e["dur"] / 1e3, 1), e["tid"], e["name"], kept])
    if left_out:
        out.append(["...", left_out, "", "launches not listed", {}])
    return out


def timeline(path, launches_at_most=None):
    """The rows of the trace file at `path` (rows); [] where it cannot be read or holds no events."""
    try:
        with open(path) as f:
            trace = json.load(f)
    except (OSError, ValueError):
        return []
    events = trace.get("traceEvents", []) if isinstance(trace, dict) else trace
    return rows(events if isinstance(events, list) else [], launches_at_most)


def main(argv):
    launches_at_most = None
    if argv[:1] == ["--launches"] and len(argv) > 1 and argv[1].isdigit():
        launches_at_most, argv = int(argv[1]), argv[2:]
    if not argv or argv[0].startswith("-"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    status = 0
    for path in argv:
        found = timeline(path, launches_at_most)
        if not found:
            print("trace_timeline: %s: no trace slices (not a coex trace, or not readable)" % path, file=sys.stderr)
            status = 1
            continue
        print("%s\n%9s %8s %6s  %-28s %s" % (path, "start ms", "dur ms", "track", "slice", "how"))
        for start, duration, track, name, kept in found:
            print("%9s %8s %6s  %-28s %s" % (start, duration, track, name[:28], json.dumps(kept)))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
