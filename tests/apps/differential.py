#!/usr/bin/env python3
"""Differential test of one OpenCL app: bare, and under coex (layer or preload).

  differential.py --mode bare    --expectations E --name APP -- ./app [args]
  differential.py --mode layer   --layer /abs/libcoex.so --expectations E --name APP -- ./app
  differential.py --mode preload --layer /abs/libcoex.so --expectations E --name APP -- ./app

bare:    runs the app twice; both runs must exit 0, end with PASS and print the same bytes (the
         differential modes rely on the output being deterministic).
layer:   runs the app bare, then with OPENCL_LAYERS=<layer>; preload: with LD_PRELOAD=<layer>.
         Both runs must exit 0 and print the same bytes, and the report coex writes
         (COEX_REPORT) must be valid and agree with the expectations file (docs/testing.md).
--no-split-checks drops only the checks that kernels were (or were not) split, so that the
pass-through foundation can be tested before splitting exists. --no-split-true-checks drops only the
checks that kernels marked split were split, and still checks every not_split reason (policies that
may rightly leave a launch on one device must still say why a launch that is unsafe to split was not).

Standard library only. Exit status 0 when the test passes, 1 when it fails.
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile

DEVICE_TYPES = {"CPU", "GPU", "ACCELERATOR", "CUSTOM"}
# The reasons for which auto runs a launch on the app's device while it learns (docs/schedulers.md):
# under the policies other than static they may stand beside the reason an app's expectations give.
AUTO_HOME_REASONS = ("preparing", "split_being_measured", "one_device_pays")
OUTPUT_LINE = re.compile(rb"^checksum [A-Za-z0-9_]+ [0-9a-f]{16}$")
# Variables the harness owns in the runs under coex; a value inherited from the caller's shell
# would change what is being tested.
COEX_VARS_SET_BY_HARNESS = ("COEX_REPORT", "COEX_LOG", "COEX_DISABLE", "COEX_TRACE")


class Failure(Exception):
    pass


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mode", choices=("bare", "layer", "preload", "both"), required=True,
                   help="both: loaded as a layer and by preload at once (it must intercept once)")
    p.add_argument("--expect-policy", help="the policy the report must name (with COEX_POLICY set)")
    p.add_argument("--layer", help="absolute path of libcoex.so (layer and preload modes)")
    p.add_argument("--expectations", required=True, help="tests/apps/expectations.json")
    p.add_argument("--name", required=True, help="the app's entry in the expectations file")
    p.add_argument("--no-split-checks", action="store_true",
                   help="skip only the checks of which kernels were split")
    p.add_argument("--no-split-true-checks", action="store_true",
                   help="skip only the checks that kernels marked split were split; not_split reasons "
                        "are still checked")
    # COEX_TEST_RUN_TIMEOUT: the sanitizer stages of scripts/test run everything several times slower.
    p.add_argument("--timeout", type=float, default=float(os.environ.get("COEX_TEST_RUN_TIMEOUT", 50.0)),
                   help="seconds allowed for one run (default: $COEX_TEST_RUN_TIMEOUT, else 50)")
    p.add_argument("--keep-report", metavar="FILE", help="also copy the report to FILE")
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- the app and its arguments")
    args = p.parse_args(argv)
    if args.command and args.command[0] == "--":
        args.command = args.command[1:]
    if not args.command:
        p.error("give the app after --")
    if args.mode != "bare" and not args.layer:
        p.error("--layer is required in layer and preload modes")
    return args


def bare_environment():
    env = dict(os.environ)
    env.pop("OPENCL_LAYERS", None)
    for var in [v for v in env if v.startswith("COEX_")]:
        del env[var]
    return env


def coex_environment(mode, layer, report_path):
    env = dict(os.environ)
    env.pop("OPENCL_LAYERS", None)
    for var in COEX_VARS_SET_BY_HARNESS:
        env.pop(var, None)
    if mode in ("layer", "both"):
        env["OPENCL_LAYERS"] = layer
    if mode in ("preload", "both"):
        previous = env.get("LD_PRELOAD")
        env["LD_PRELOAD"] = layer + (":" + previous if previous else "")
    env["COEX_REPORT"] = report_path
    env["COEX_LOG"] = "warn"
    return env


def describe_env(env):
    keys = ["POCL_DEVICES", "OPENCL_LAYERS", "LD_PRELOAD"] + sorted(k for k in env if k.startswith("COEX_"))
    return " ".join("%s=%s" % (k, shell_quote(env[k])) for k in keys if k in env)


def shell_quote(s):
    return s if re.fullmatch(r"[A-Za-z0-9_./:=,+-]*", s) else "'" + s.replace("'", "'\\''") + "'"


def run(label, command, env, timeout):
    print("[%s] %s %s" % (label, describe_env(env), " ".join(shell_quote(c) for c in command)))
    sys.stdout.flush()
    try:
        proc = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=timeout)
    except subprocess.TimeoutExpired as e:
        show_streams(label, e.stdout or b"", e.stderr or b"")
        raise Failure("%s run did not finish within %.0f s (a hang?)" % (label, timeout))
    return proc


def show_streams(label, stdout, stderr):
    print("---- %s stdout ----" % label)
    print(stdout.decode(errors="replace"), end="" if stdout.endswith(b"\n") or not stdout else "\n")
    if stderr:
        print("---- %s stderr ----" % label)
        print(stderr.decode(errors="replace"), end="" if stderr.endswith(b"\n") else "\n")


def signal_name(number):
    try:
        return signal.Signals(number).name
    except ValueError:
        return "unknown signal"


def check_app_run(label, proc):
    """The app's own verdict: exit status 0, checksum lines, PASS last."""
    lines = proc.stdout.splitlines()
    problems = []
    if proc.returncode < 0:
        problems.append("%s run was killed by signal %d (%s)" % (label, -proc.returncode, signal_name(-proc.returncode)))
    elif proc.returncode != 0:
        problems.append("%s run exited with status %d" % (label, proc.returncode))
    if not lines or lines[-1] != b"PASS":
        problems.append("%s run did not end with PASS" % label)
    if not any(OUTPUT_LINE.match(line) for line in lines):
        problems.append("%s run printed no checksum line" % label)
    odd = [line for line in lines[:-1] if not OUTPUT_LINE.match(line)]
    if odd and proc.returncode == 0:
        problems.append("%s run printed a line that is neither a checksum nor PASS: %r" % (label, odd[0]))
    if problems:
        show_streams(label, proc.stdout, proc.stderr)
        raise Failure("; ".join(problems))


def compare_outputs(label_a, out_a, label_b, out_b):
    if out_a == out_b:
        return
    a, b = out_a.splitlines(), out_b.splitlines()
    for i in range(max(len(a), len(b))):
        la = a[i] if i < len(a) else b"<no line>"
        lb = b[i] if i < len(b) else b"<no line>"
        if la != lb:
            print("first difference at line %d:" % (i + 1))
            print("  %-6s %s" % (label_a, la.decode(errors="replace")))
            print("  %-6s %s" % (label_b, lb.decode(errors="replace")))
            break
    else:
        print("outputs differ only in line endings or trailing bytes")
    raise Failure("stdout differs between the %s and the %s run" % (label_a, label_b))


def load_expectations(path, name):
    with open(path) as f:
        all_apps = json.load(f)
    if name not in all_apps:
        raise Failure("%s has no entry for %r: add one (docs/testing.md)" % (path, name))
    entry = all_apps[name]
    declared = sum(k["launches"] for k in entry["kernels"].values())
    if declared != entry["launches"]:
        raise Failure("%s: %s declares %d launches but its kernels add up to %d"
                      % (path, name, entry["launches"], declared))
    return entry


def is_count(v):
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def is_seconds(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0


def check_report_shape(report, mode):
    """Keys and types of the report (docs/reporting.md); returns a list of problems."""
    errors = []
    if not isinstance(report, dict):
        return ["the report is not a JSON object"]
    if report.get("mode") != mode:
        errors.append("mode is %r, expected %r" % (report.get("mode"), mode))
    if not isinstance(report.get("policy"), str) or not report.get("policy"):
        errors.append("policy is missing or not a non-empty string")

    devices = report.get("devices")
    if not isinstance(devices, list) or not devices:
        errors.append("devices is missing or empty")
        devices = []
    indices = []
    for d in devices:
        if not isinstance(d, dict):
            errors.append("a device entry is not an object: %r" % (d,))
            continue
        if not is_count(d.get("index")):
            errors.append("device index %r is not a non-negative integer" % (d.get("index"),))
        indices.append(d.get("index"))
        for key in ("name", "platform"):
            if not isinstance(d.get(key), str) or not d.get(key):
                errors.append("device %r: %s missing or empty" % (d.get("index"), key))
        if d.get("type") not in DEVICE_TYPES:
            errors.append("device %r: type %r is not one of %s" % (d.get("index"), d.get("type"),
                                                                    sorted(DEVICE_TYPES)))
        if not isinstance(d.get("home"), bool):
            errors.append("device %r: home is not a boolean" % (d.get("index"),))
    if len(set(map(repr, indices))) != len(indices):
        errors.append("device indices are not unique: %r" % (indices,))
    homes = [d for d in devices if isinstance(d, dict) and d.get("home") is True]
    launched = isinstance(report.get("totals"), dict) and report["totals"].get("launches")
    # The home device is the one the app launched on: a program that launches nothing has none.
    if len(homes) != (1 if launched else 0):
        errors.append("%d devices are marked home, expected %d" % (len(homes), 1 if launched else 0))
    elif homes and any(isinstance(d, dict) and d.get("type") == "GPU" for d in devices) and homes[0].get("type") != "GPU":
        errors.append("the apps pick the first GPU, but the home device is a %s" % homes[0].get("type"))

    kernels = report.get("kernels")
    if not isinstance(kernels, list):
        errors.append("kernels is missing or not a list")
        kernels = []
    names = []
    for k in kernels:
        if not isinstance(k, dict):
            errors.append("a kernel entry is not an object: %r" % (k,))
            continue
        name = k.get("name")
        names.append(name)
        where = "kernel %r" % (name,)
        if not isinstance(name, str) or not name:
            errors.append("a kernel entry has no name")
        for key in ("launches", "split_launches", "bytes_moved"):
            if not is_count(k.get(key)):
                errors.append("%s: %s %r is not a non-negative integer" % (where, key, k.get(key)))
        not_split = k.get("not_split")
        if not isinstance(not_split, dict) or not all(
                isinstance(r, str) and r and is_count(c) for r, c in not_split.items()):
            errors.append("%s: not_split %r is not an object of reason: count" % (where, not_split))
        elif is_count(k.get("launches")) and is_count(k.get("split_launches")):
            if k["split_launches"] + sum(not_split.values()) != k["launches"]:
                errors.append("%s: split_launches %d + not_split %r do not add up to launches %d"
                              % (where, k["split_launches"], not_split, k["launches"]))
        per_device = k.get("per_device")
        if not isinstance(per_device, list):
            errors.append("%s: per_device is missing or not a list" % where)
            continue
        for p in per_device:
            if not isinstance(p, dict) or p.get("index") not in indices:
                errors.append("%s: per_device entry %r does not name a listed device" % (where, p))
            elif not is_count(p.get("work_items")) or not is_seconds(p.get("seconds")):
                errors.append("%s: per_device entry %r needs work_items (integer) and seconds "
                              "(number), both >= 0" % (where, p))
    if len(set(map(repr, names))) != len(names):
        errors.append("kernel names are not unique: %r" % (names,))

    totals = report.get("totals")
    if not isinstance(totals, dict):
        errors.append("totals is missing")
    else:
        good = [k for k in kernels if isinstance(k, dict)]
        for key in ("launches", "split_launches", "bytes_moved"):
            if not is_count(totals.get(key)):
                errors.append("totals.%s %r is not a non-negative integer" % (key, totals.get(key)))
            elif all(is_count(k.get(key)) for k in good) and totals[key] != sum(k[key] for k in good):
                errors.append("totals.%s is %d but the kernels add up to %d"
                              % (key, totals[key], sum(k[key] for k in good)))
    return errors


def work_items_by_device(kernel):
    return {p["index"]: p["work_items"] for p in kernel.get("per_device", [])
            if isinstance(p, dict) and "index" in p and is_count(p.get("work_items"))}


def check_report_expectations(report, expected, split_checks, split_true_checks=True):
    """Launch counts always; split verdicts unless split_checks is off (those of kernels marked
    split: true unless split_true_checks is off). Returns problems."""
    errors = []
    totals = report.get("totals") or {}
    if totals.get("launches") != expected["launches"]:
        errors.append("totals.launches is %r, but the app made %d clEnqueueNDRangeKernel calls"
                      % (totals.get("launches"), expected["launches"]))
    reported = {k.get("name"): k for k in report.get("kernels", []) if isinstance(k, dict)}
    for name, k in reported.items():
        if name not in expected["kernels"] and k.get("launches"):
            errors.append("kernel %r is in the report with %r launches but the app never launches it"
                          % (name, k.get("launches")))
    home = [d.get("index") for d in report.get("devices", []) if isinstance(d, dict) and d.get("home") is True]
    for name, want in sorted(expected["kernels"].items()):
        k = reported.get(name)
        if k is None:
            errors.append("kernel %r is missing from the report" % name)
            continue
        if k.get("launches") != want["launches"]:
            errors.append("kernel %r: launches is %r, expected %d" % (name, k.get("launches"), want["launches"]))
        items = work_items_by_device(k)
        busy = {i: n for i, n in items.items() if n > 0}
        # Where per_device accounts for a kernel's work at all, it must account for all of it.
        if busy and sum(busy.values()) != want["work_items"]:
            errors.append("kernel %r: per_device work_items add up to %d, but its launches had %d work-items"
                          % (name, sum(busy.values()), want["work_items"]))
        if not split_checks:
            continue
        if "split_at_least" in want:
            # Some launches split, the others for the reasons listed (a launch timed before coex splits).
            got = k.get("not_split") or {}
            allowed = want.get("not_split", []) + ([] if split_true_checks else list(AUTO_HOME_REASONS))
            if (k.get("split_launches") or 0) < want["split_at_least"] or any(r not in allowed for r in got):
                errors.append("kernel %r: expected at least %d split launch(es), the rest %r; split_launches is %r, "
                              "not_split %r" % (name, want["split_at_least"], allowed, k.get("split_launches"), got))
            continue
        if want.get("split") is True:
            if not split_true_checks:
                continue
            if k.get("split_launches") != want["launches"]:
                errors.append("kernel %r must be split: split_launches is %r of %d launches (not_split: %r)"
                              % (name, k.get("split_launches"), want["launches"], k.get("not_split")))
            if len(busy) < 2:
                errors.append("kernel %r must be split: work-items on %d device(s) %r, expected work on at "
                              "least 2" % (name, len(busy), busy))
        elif "not_split" in want:
            reasons = want["not_split"] if isinstance(want["not_split"], list) else [want["not_split"]]
            if not split_true_checks:
                # auto runs launches on home while it prepares or measures (docs/schedulers.md).
                reasons = reasons + list(AUTO_HOME_REASONS)
            got = k.get("not_split") or {}
            if k.get("split_launches") != 0:
                errors.append("kernel %r must not be split, but split_launches is %r"
                              % (name, k.get("split_launches")))
            if sum(got.values()) != want["launches"] or any(r not in reasons for r in got):
                errors.append("kernel %r must not be split for reason %s: not_split is %r"
                              % (name, " or ".join(reasons), got))
            if busy and set(busy) != set(home):
                errors.append("kernel %r must run on the home device only, per_device shows %r" % (name, busy))
    return errors


def run_bare(label, command, env, timeout):
    """A run without coex: the reference. Killed by a signal, it is run once more: that crash is the
    driver's own (seen: PoCL 3.1 aborting at exit, "still have references to IRs - can't release LLVM
    context", in reliability.bad_input.bare on a loaded machine), and says nothing of coex."""
    proc = run(label, command, env, timeout)
    if proc.returncode < 0:
        show_streams(label, proc.stdout, proc.stderr)
        print("[%s] killed by signal %d (%s) without coex: the driver's own crash; running it once more"
              % (label, -proc.returncode, signal_name(-proc.returncode)))
        proc = run(label, command, env, timeout)
    return proc


def run_bare_mode(args, expected):
    env = bare_environment()
    first = run_bare("bare", args.command, env, args.timeout)
    check_app_run("bare", first)
    second = run_bare("bare again", args.command, env, args.timeout)
    check_app_run("bare again", second)
    compare_outputs("bare", first.stdout, "again", second.stdout)
    print(first.stdout.decode(errors="replace"), end="")


def run_coex_mode(args, expected):
    layer = os.path.abspath(args.layer)
    if not os.path.exists(layer):
        raise Failure("the layer %s does not exist" % layer)
    bare = run_bare("bare", args.command, bare_environment(), args.timeout)
    check_app_run("bare", bare)
    with tempfile.TemporaryDirectory(prefix="coex-differential-") as tmp:
        report_path = os.path.join(tmp, "report.json")
        coex = run(args.mode, args.command, coex_environment(args.mode, layer, report_path), args.timeout)
        report_text = None
        if os.path.exists(report_path):
            with open(report_path) as f:
                report_text = f.read()
            if args.keep_report:
                with open(args.keep_report, "w") as f:
                    f.write(report_text)
    check_app_run(args.mode, coex)
    if coex.stderr:
        show_streams(args.mode, b"", coex.stderr)
    compare_outputs("bare", bare.stdout, args.mode, coex.stdout)
    if report_text is None:
        raise Failure("coex wrote no report to COEX_REPORT")
    try:
        report = json.loads(report_text)
    except ValueError as e:
        print("---- report ----\n" + report_text)
        raise Failure("the report is not valid JSON: %s" % e)
    # Loaded both ways, the loader makes coex a layer and the preload exports pass calls through.
    errors = check_report_shape(report, "layer" if args.mode == "both" else args.mode)
    if args.expect_policy and report.get("policy") != args.expect_policy:
        errors.append("policy is %r, expected %r" % (report.get("policy"), args.expect_policy))
    if not errors:
        errors = check_report_expectations(report, expected, not args.no_split_checks,
                                           not args.no_split_true_checks)
    if errors:
        print("---- report ----")
        print(json.dumps(report, indent=2, sort_keys=True))
        for e in errors:
            print("report: " + e)
        raise Failure("the report does not match (%d problem(s), listed above)" % len(errors))
    print(bare.stdout.decode(errors="replace"), end="")
    summary = ", ".join("%s %d/%d split" % (k["name"], k["split_launches"], k["launches"])
                        for k in report["kernels"] if k.get("launches"))
    print("report: %d launches, %d split; %s" % (report["totals"]["launches"],
                                                report["totals"]["split_launches"], summary))


def main(argv):
    args = parse_args(argv)
    try:
        expected = load_expectations(args.expectations, args.name)
        if args.mode == "bare":
            run_bare_mode(args, expected)
        else:
            run_coex_mode(args, expected)
    except Failure as e:
        print("FAIL %s (%s): %s" % (args.name, args.mode, e))
        return 1
    checks = (", no split checks" if args.no_split_checks
              else ", no split: true checks" if args.no_split_true_checks else "")
    print("OK %s (%s%s)" % (args.name, args.mode, checks))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
