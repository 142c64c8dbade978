#!/usr/bin/env python3
"""Turns results.json (scripts/bench_run.py) into tables, plots and the docs.

  bench_report.py RESULTS --md docs/benchmarks.md --plots docs/benchmarks   (the benchmarks page)
  bench_report.py RESULTS_A RESULTS_B ... --md ...     (several runs, e.g. with --reuse-bare, merged)
  bench_report.py RESULTS --local-baseline docs/performance.md              (the local baseline)
  bench_report.py RESULTS --summary                                         (short table on stdout)

Definitions (docs/benchmarks.md): T_i is the median time of the program alone on device i, T_best = min T_i,
S_max = sum_i T_best / T_i (the ideal speed-up), speed-up = T_best / T_coex, efficiency =
speed-up / S_max. Each figure is computed twice: from time_total (the whole app: first write to
last read) and from time_kernels (the launches coex splits, with the transfers they need).
Load balance is first finish / last finish, estimated from the report's per-device busy seconds
(min / max over the devices that got work; the report sums them over the launches). Python 3
standard library; the plots need matplotlib and are skipped without it.
"""

import argparse
import json
import math
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SLOWDOWN_LIMIT = 1.03   # the target: never more than 3% slower than T_best
SLOWDOWN_ALLOWANCE_S = 0.05  # ... plus 50 ms (never slower: T_coex <= 1.03 x T_best + 50 ms)
EFFICIENCY_TARGET = 0.9  # the target: geomean on the compute-bound regular set
JACOBI_TARGET = 1.7      # the target: iterative stencil on 2 GPUs
MIN_LAUNCH_S = 0.1       # the target: one launch >= 100 ms on one H200


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def geomean(values):
    values = [v for v in values if v]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def ratio(a, b):
    return a / b if a is not None and b else None


def run_load_balance(report):
    """Mean over split kernels of min/max busy seconds among the devices that got work."""
    if not report:
        return None
    values = []
    for k in report.get("kernels", []):
        if not k.get("split_launches"):
            continue
        busy = [p.get("seconds", 0) for p in k.get("per_device", []) if p.get("work_items", 0) > 0]
        if len(busy) >= 2 and max(busy) > 0:
            values.append(min(busy) / max(busy))
        elif len(busy) == 1:
            values.append(1.0)
    return sum(values) / len(values) if values else None


def run_shares(report):
    """Each device's share of the work-items over all kernels."""
    if not report:
        return {}
    items = {}
    for k in report.get("kernels", []):
        for p in k.get("per_device", []):
            items[p["index"]] = items.get(p["index"], 0) + p.get("work_items", 0)
    total = sum(items.values())
    return {d: n / total for d, n in sorted(items.items())} if total else {}


def bench_metrics(bench):
    """Every figure of one benchmark, from its runs."""
    runs = bench["runs"]
    m = {"name": bench["name"], "class": bench["class"], "devices": {}, "policies": {}}
    bare = [r for r in runs if r["kind"] == "bare" and r["ok"]]
    for r in bare:
        d = m["devices"].setdefault(r["device"], {"totals": [], "kernels": [], "estimated": False})
        d["totals"].append(r["time_total"])
        d["kernels"].append(r["time_kernels"])
    for dev, est in (bench.get("extrapolated") or {}).items():
        dev = int(dev)
        if dev not in m["devices"]:
            m["devices"][dev] = {"totals": [est["time_total"]], "kernels": [est["time_kernels"]], "estimated": True}
    for d in m["devices"].values():
        d["total"], d["kernel"] = median(d["totals"]), median(d["kernels"])
    launches = [r.get("launches") for r in bare if r.get("launches")]
    m["launches"] = launches[0] if launches else None
    measured = {k: v for k, v in m["devices"].items() if v["total"]}
    if not measured:
        return m
    best = min(measured, key=lambda k: measured[k]["total"])
    m["best"] = best
    m["t_best"] = measured[best]["total"]
    m["t_best_wall"] = median([r["wall"] for r in bare if r["device"] == best and r.get("wall")])
    m["t_best_k"] = min(v["kernel"] for v in measured.values() if v["kernel"])
    m["s_max"] = sum(m["t_best"] / v["total"] for v in measured.values())
    m["s_max_k"] = sum(m["t_best_k"] / v["kernel"] for v in measured.values() if v["kernel"])
    m["launch_s"] = m["t_best_k"] / (m["launches"] or 1) if m["launches"] else None
    reference = next((r["checksums"] for r in bare if r["device"] == best), None)
    m["checksums_bare_equal"] = all(r["checksums"] == reference for r in bare)
    for kind in ("coex", "coex_one"):
        for policy in sorted({r.get("policy") for r in runs if r["kind"] == kind}):
            mine = [r for r in runs if r["kind"] == kind and r.get("policy") == policy]
            good = [r for r in mine if r["ok"]]
            p = {"runs": len(mine), "ok": len(good), "timeouts": sum(r["timed_out"] for r in mine)}
            p["checksums_equal"] = all(r["checksums"] == reference for r in good) if good else None
            p["failed"] = [r for r in mine if not r["ok"]]
            if good:
                p["total"] = median([r["time_total"] for r in good])
                p["kernel"] = median([r["time_kernels"] for r in good])
                cold = [r for r in good if r.get("cold")]
                p["cold_total"] = cold[0]["time_total"] if cold else None
                p["wall"] = median([r["wall"] for r in good if r.get("wall")])
                p["cold_wall"] = cold[0].get("wall") if cold else None
                p["speedup"] = ratio(m["t_best"], p["total"])
                p["speedup_k"] = ratio(m["t_best_k"], p["kernel"])
                p["efficiency"] = ratio(p["speedup"], m["s_max"])
                p["efficiency_k"] = ratio(p["speedup_k"], m["s_max_k"])
                reports = [r.get("report") for r in good if r.get("report")]
                p["load_balance"] = median([run_load_balance(rep) for rep in reports])
                totals = [rep.get("totals", {}) for rep in reports]
                p["bytes_moved"] = median([t.get("bytes_moved") for t in totals])
                p["bytes_minimal"] = median([t.get("bytes_minimal") for t in totals])
                p["split"] = median([t.get("split_launches") for t in totals])
                p["launches"] = median([t.get("launches") for t in totals])
                p["shares"] = run_shares(reports[-1]) if reports else {}
                p["traced_run"] = next((r for r in reversed(good) if r.get("trace_summary")), None)
                p["not_split"] = {}
                for rep in reports[-1:]:
                    for k in rep.get("kernels", []):
                        for reason, n in (k.get("not_split") or {}).items():
                            p["not_split"][reason] = p["not_split"].get(reason, 0) + n
            (m["policies"] if kind == "coex" else m.setdefault("one_device", {}))[policy] = p
    one = (m.get("one_device") or {}).get("default")
    if one and one.get("kernel") is not None and m["launches"]:
        best_k = measured[best]["kernel"]
        one["overhead_per_launch"] = (one["kernel"] - best_k) / m["launches"]
        one["overhead_total_ratio"] = ratio(one["total"], m["t_best"])
    return m


def merge_results(all_results):
    """One results object from several runs on the same machine (e.g. later ones run with
    --reuse-bare and other policies): their coex runs are added to the first run's benchmarks."""
    merged = all_results[0]
    if len(all_results) == 1:
        return merged
    merged["command"] = " ; ".join(r.get("command", "") for r in all_results)
    merged["date"] = "%s to %s" % (all_results[0].get("date"), all_results[-1].get("date"))
    merged["elapsed_s"] = round(sum(r.get("elapsed_s", 0) for r in all_results), 1)
    policies = merged["settings"].get("policies", "").split(",")
    for later in all_results[1:]:
        if [d.get("name") for d in later.get("devices", [])] != [d.get("name") for d in merged.get("devices", [])]:
            sys.exit("bench_report: the results were measured on different devices; not merging")
        policies += [p for p in later["settings"].get("policies", "").split(",") if p not in policies]
        for bench in later["benchmarks"]:
            mine = next((b for b in merged["benchmarks"] if b["name"] == bench["name"]), None)
            if mine is None:
                merged["benchmarks"].append(bench)
                continue
            mine["runs"] += [r for r in bench["runs"] if not r.get("reused")]
        merged["skipped"] += later.get("skipped", [])
    merged["settings"]["policies"] = ",".join(p for p in policies if p)
    ran = {(b["name"], "%s/%s" % (r["kind"], r.get("policy"))) for b in merged["benchmarks"] for r in b["runs"]}
    merged["skipped"] = [s for s in merged["skipped"] if (s["benchmark"], s["what"]) not in ran]
    return merged


def all_metrics(results):
    return [bench_metrics(b) for b in results["benchmarks"]]


def policy_order(results, metrics):
    listed = results.get("settings", {}).get("policies", "").split(",")
    seen = {p for m in metrics for p in m["policies"]}
    return [p for p in listed if p in seen] + sorted(seen - set(listed))


def moved_text(p):
    """Bytes moved, and in brackets the report's bytes_minimal (what the footprints make necessary)."""
    if p.get("bytes_minimal") is None:
        return f_bytes(p.get("bytes_moved"))
    return "%s (%s)" % (f_bytes(p.get("bytes_moved")), f_bytes(p["bytes_minimal"]))


def not_split_text(p):
    return ", ".join("%s %d" % (reason, n) for reason, n in sorted(p.get("not_split", {}).items())) or "–"


def f(v, digits=3, suffix=""):
    if v is None:
        return "–"
    return ("%." + str(digits) + "f%s") % (v, suffix)


def f_bytes(n):
    if n is None:
        return "–"
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return "%.1f %s" % (n / size, unit)
    return "%d B" % n


def device_label(results, index):
    for d in results.get("devices", []):
        if d["index"] == index:
            return "d%d %s" % (index, d["type"])
    return "d%d" % index


def coex_mode_text(results):
    mode = results.get("coex_mode") or {}
    used = mode.get("used", "layer")
    text = {"layer": "a loader layer (`coex run`)", "preload": "LD_PRELOAD (`coex run --preload`)"}[used]
    if mode.get("requested") == "auto" and used == "preload":
        if mode.get("check_run_mode") == "preload":
            text += ", because `coex run` found that the programs' libOpenCL cannot load layers"
        else:
            text += ", because the loader here did not load coex as a layer (a check run wrote no report)"
    return text


def trace_table(metrics, policies):
    rows = []
    for m in metrics:
        for policy in policies:
            run = (m["policies"].get(policy) or {}).get("traced_run")
            t = run and run.get("trace_summary")
            if not t:
                continue
            sums = {}
            for cats in t["per_device"].values():
                for cat, sec in cats.items():
                    sums[cat] = sums.get(cat, 0.0) + sec
            kernels = " ".join("d%s %.3f" % (d, cats.get("kernel", 0.0)) for d, cats in sorted(t["per_device"].items()))
            rows.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                m["name"], policy, f(run["time_kernels"]), f(t["span_s"]), f(run["time_kernels"] - t["span_s"]),
                f(t["kernels_any_s"]), f(t["kernels_two_or_more_s"]), f(sums.get("transfer")),
                f(sums.get("merge")), kernels))
    return rows


def target_rows(results, metrics, policies):
    rows = []
    for policy in policies:
        regular = [m["policies"].get(policy, {}) for m in metrics if m["class"] == "compute-regular"]
        eff = geomean([p.get("efficiency") for p in regular])
        eff_k = geomean([p.get("efficiency_k") for p in regular])
        slow = [(1 / m["policies"][policy]["speedup"], m["name"]) for m in metrics
                if m["policies"].get(policy, {}).get("speedup")]
        worst = max(slow) if slow else None
        jac = next((m["policies"].get(policy, {}) for m in metrics if m["class"] == "iterative"), {})
        covered = sum(1 for m in metrics if m["policies"].get(policy, {}).get("ok"))
        rows.append("| %s | %s | %s | %s | %s | %s | %s | %s / %s | %d of %d |" % (
            policy, f(eff, 2), f(eff_k, 2),
            "–" if not worst else "%.2f× (%s)%s" % (worst[0], worst[1], " **over 3%**" if worst[0] > SLOWDOWN_LIMIT else ""),
            never_slower(metrics, policy, "t_best", "total"), never_slower(metrics, policy, "t_best_wall", "wall"),
            never_slower(metrics, policy, "t_best_wall", "cold_wall"),
            f(jac.get("speedup"), 2, "×"), f(jac.get("speedup_k"), 2, "×"), covered, len(metrics)))
    return rows


def never_slower(metrics, policy, best_key, coex_key):
    """How many benchmarks meet T_coex <= 1.03 x T_best + 50 ms, with those over and by how much beyond it."""
    timed = [(m["name"], m[best_key], m["policies"][policy][coex_key]) for m in metrics
             if m.get(best_key) and m["policies"].get(policy, {}).get(coex_key)]
    over = ["%s (+%.0f ms)" % (name, 1000 * (t - SLOWDOWN_LIMIT * best - SLOWDOWN_ALLOWANCE_S))
            for name, best, t in timed if t > SLOWDOWN_LIMIT * best + SLOWDOWN_ALLOWANCE_S]
    return "%d of %d%s" % (len(timed) - len(over), len(timed), "; over: " + ", ".join(over) if over else "")


def markdown(results, metrics, plot_links):
    policies = policy_order(results, metrics)
    mach = results.get("machine", {})
    gpus = [d for d in results.get("devices", []) if d["type"] == "GPU"]
    out = ["# Benchmarks", ""]
    out.append("<!-- Generated by scripts/bench_report.py from the results.json of the command below; "
               "do not edit by hand. -->")
    out.append("")
    if not gpus:
        out += ["> **Placeholder, CPU only.** These figures come from PoCL CPU devices, not from GPUs: they",
                "> show that the scripts and programs work, nothing about speed. The real figures come from",
                "> `scripts/bench` on the device machine (see *Reproduce* below). S_max counts the PoCL",
                "> devices as independent, but they share one thread pool on the same cores.", ""]
    out += ["## Setup", "",
            "- Command: `%s`" % results.get("command", ""),
            "- Date: %s; the measurement took %s s." % (results.get("date", "?"), results.get("elapsed_s", "?")),
            "- Host: %s, %s cores, %s; %s; kernel %s." % (mach.get("cpu_model", "?"), mach.get("nproc", "?"),
                                                         mach.get("mem_total", "?"), mach.get("os", "?"),
                                                         mach.get("kernel", "?")),
            "- coex loaded as: %s." % coex_mode_text(results),
            "- Scale `%s` of benchmarks/benchmarks.json; %s process runs per setup (medians); %s run(s) on "
            "each other device." % (results.get("scale"), results["settings"].get("runs"),
                                    results["settings"].get("other_runs"))]
    if mach.get("nvidia_smi"):
        out += ["- GPUs (nvidia-smi: index, name, memory, driver, PCIe gen, width):", "", "```",
                mach["nvidia_smi"], "```"]
    if mach.get("env"):
        out.append("- Environment: " + ", ".join("`%s=%s`" % kv for kv in sorted(mach["env"].items())))
    out += ["", "Devices (`coex devices`):", "", "```", results.get("coex_devices", "").rstrip(), "```", ""]

    out += ["## Targets", "",
            "Efficiency is the geometric mean over the compute-bound regular set (target ≥ %.1f); the worst "
            "slowdown is max T_coex / T_best over all benchmarks (target ≤ %.2f); never slower counts the "
            "benchmarks with T_coex ≤ %.2f × T_best + %.0f ms (the target for the short programs, whose "
            "whole run is a few hundredths of a second): by time_total (medians), by wall time from start to "
            "exit (medians), and by the wall time of the first run, from an empty History; the iterative "
            "stencil's speed-up target is ≥ %.1f× on 2 GPUs. Whole app / kernels only." % (
                EFFICIENCY_TARGET, SLOWDOWN_LIMIT, SLOWDOWN_LIMIT, 1000 * SLOWDOWN_ALLOWANCE_S, JACOBI_TARGET), "",
            "| policy | efficiency (app) | efficiency (kernels) | worst slowdown (app) | never slower (app) | "
            "never slower (wall) | never slower (wall, first run) | jacobi speed-up (app / kernels) | benchmarks run |",
            "|---|---|---|---|---|---|---|---|---|"]
    out += target_rows(results, metrics, policies)
    out.append("")

    devs = sorted({d for m in metrics for d in m["devices"]})
    out += ["## Each device alone", "",
            "T_i in seconds, whole app / kernels (median; on the best device, of every bare run there, "
            "including one right before each run of the first policy, `--paired-bare`). `~`: extrapolated from the probe size by the "
            "work ratio (the device would have taken too long at full size). ms/launch: kernel time per "
            "launch on the best device (the set asks ≥ 100 ms on one H200 for the compute-bound programs; "
            "memory-bound kernels cannot reach it and are dominated by their transfers).", "",
            "| benchmark | class | launches | " + " | ".join(device_label(results, d) for d in devs)
            + " | best | S_max (app / kernels) | ms/launch |",
            "|---|---|---|" + "---|" * len(devs) + "---|---|---|"]
    for m in metrics:
        cells = []
        for d in devs:
            dv = m["devices"].get(d)
            cells.append("–" if not dv else "%s%s / %s" % ("~" if dv["estimated"] else "", f(dv["total"]), f(dv["kernel"])))
        flag = ""
        if m.get("launch_s") is not None and m["launch_s"] < MIN_LAUNCH_S and m["class"] != "memory" and gpus:
            flag = " (short)"
        out.append("| %s | %s | %s | %s | %s | %s / %s | %s%s |" % (
            m["name"], m["class"], m.get("launches") or "–", " | ".join(cells),
            "d%s" % m["best"] if "best" in m else "–", f(m.get("s_max"), 2), f(m.get("s_max_k"), 2),
            f(None if m.get("launch_s") is None else m["launch_s"] * 1e3, 1), flag))
    out.append("")

    out += ["## Under coex, all devices", "",
            "Home device = the best device. Speed-up = T_best / T_coex; efficiency = speed-up / S_max. "
            "LB: load balance (first / last finish, from the report's busy seconds). Moved: bytes coex "
            "moved in one run (all its launches); in brackets the report's `bytes_minimal`, where it has one. Shares: each device's part of the work-items. Cold: "
            "the first run of a policy, before its history file has anything.", "",
            "| benchmark | policy | T_coex app / kernels (s) | speed-up app / kernels | efficiency app / kernels | LB | moved | split | not split | shares | cold (s) | checksums |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for m in metrics:
        for policy in policies:
            p = m["policies"].get(policy)
            if not p:
                continue
            if not p["ok"]:
                out.append("| %s | %s | %s |  |  |  |  |  |  |  |  |  |" % (
                    m["name"], policy, "timed out" if p["timeouts"] else "failed"))
                continue
            shares = " ".join("d%d %s%%" % (d, ("%.1f" if 0 < s < 0.01 else "%.0f") % (100 * s))
                              for d, s in p["shares"].items())
            out.append("| %s | %s | %s / %s | %s / %s | %s / %s | %s | %s | %s/%s | %s | %s | %s | %s |" % (
                m["name"], policy, f(p["total"]), f(p["kernel"]), f(p["speedup"], 2, "×"),
                f(p["speedup_k"], 2, "×"), f(p["efficiency"], 2), f(p["efficiency_k"], 2),
                f(p["load_balance"], 2), moved_text(p),
                "–" if p["split"] is None else int(p["split"]), "–" if p["launches"] is None else int(p["launches"]),
                not_split_text(p), shares, f(p["cold_total"]), "equal" if p["checksums_equal"] else "**DIFFER**"))
    out.append("")

    trace_rows = trace_table(metrics, policies)
    if trace_rows:
        out += ["## Where the time goes", "",
                "From the Perfetto trace of the last run of each setup (`--trace`; the traces are in "
                "raw.tar.gz). App kernels: that run's `time_kernels`. Span: first to last event coex "
                "traced. Untraced: app kernels minus span, time in coex that no trace event covers "
                "(planning, waiting, host work between events); negative when the span also holds "
                "moves made for the app's reads after the kernel phase. Kernels ≥1 / ≥2: time in which at least "
                "one / two devices ran kernels. Transfers and merges: summed over the devices.", "",
                "| benchmark | policy | app kernels (s) | span (s) | untraced (s) | kernels ≥1 (s) | kernels ≥2 (s) | transfers (s) | merges (s) | kernel s per device |",
                "|---|---|---|---|---|---|---|---|---|---|"] + trace_rows + [""]

    out += ["## coex's own overhead", "",
            "The program under coex restricted to its best device (`COEX_DEVICES=<index>`), against the same "
            "device bare: what interception and bookkeeping cost when there is nothing to split.", "",
            "| benchmark | device | bare kernels (s) | coex, 1 device, kernels (s) | overhead per launch (ms) | app time ratio |",
            "|---|---|---|---|---|---|"]
    for m in metrics:
        one = (m.get("one_device") or {}).get("default")
        if not one or not one.get("ok"):
            continue
        out.append("| %s | d%s | %s | %s | %s | %s |" % (
            m["name"], m["best"], f(m["devices"][m["best"]]["kernel"]), f(one["kernel"]),
            f(None if one.get("overhead_per_launch") is None else one["overhead_per_launch"] * 1e3, 2),
            f(one.get("overhead_total_ratio"), 3, "×")))
    out.append("")

    if plot_links:
        out += ["## Plots", ""] + ["![%s](%s)" % (title, link) for title, link in plot_links] + [""]

    problems = []
    for m in metrics:
        if m.get("checksums_bare_equal") is False:
            problems.append("- %s: bare runs on different devices printed different checksums." % m["name"])
        for kind in ("policies", "one_device"):
            for policy, p in (m.get(kind) or {}).items():
                for r in p["failed"][:2]:
                    why = "timed out" if r["timed_out"] else "exit %s" % r["rc"]
                    detail = (r["problems"] or r["stderr_tail"].strip().splitlines()[-1:] or [""])[0]
                    problems.append("- %s, %s: %s %s" % (m["name"], policy, why, detail.replace("|", "/")[:200]))
    for s in results.get("skipped", []):
        problems.append("- %s, %s: skipped (%s)" % (s["benchmark"], s["what"], s["reason"]))
    if problems:
        out += ["## Failures and skipped runs", ""] + problems + [""]

    out += ["## The programs", "",
            "Unmodified OpenCL programs in benchmarks/ (C99, linked only against libOpenCL). Each checks "
            "sampled results against a host reference and prints checksums; only correctly rounded "
            "operations are used, so every device gives the same bits and a split launch must too.", "",
            "| benchmark | class | what | arguments |", "|---|---|---|---|"]
    for b in results["benchmarks"]:
        args = " ".join(b["scale"]["args"]) + " --reps %d" % b["scale"]["reps"]
        out.append("| %s | %s | %s | `%s` |" % (b["name"], b["class"], b["what"], args))
    out += ["", "Times: `time_total` runs from the first write to the last read over all repetitions in "
            "the process (setup and program builds excluded); `time_kernels` sums the kernel phases (first "
            "enqueue to clFinish), which under coex include the transfers the split launches need. Under "
            "coex the results come home at the read, so those moves count in the app time only.", "",
            "## Reproduce", "",
            "On the device machine (one command of about 9 minutes, carrying `.device-carry` for the "
            "clang-c headers; it builds coex and the programs, registers NVIDIA's ICD, runs everything "
            "and writes results.json, this page, the plots, raw.tar.gz and log.txt to the output "
            "folder):", "", "```sh", "scripts/bench --out \"$OUT\" --trace", "```", "",
            "The policies that do not fit in one command's budget are listed as skipped. More of them "
            "in a second command that reuses the bare runs of the first (copy its results.json into "
            "an ignored folder that travels, e.g. `.device-carry/bench/`):", "", "```sh",
            "scripts/bench --out \"$OUT\" --trace --reuse-bare .device-carry/bench/results.json "
            "--policies predict,hguided,adaptive,plbhec --overhead-runs 0", "```", "",
            "Then here, from the results.json files that came back (several are merged): "
            "`scripts/bench_report.py results.json [more.json] --md docs/benchmarks.md --plots "
            "docs/benchmarks`.", ""]
    return "\n".join(out)


def make_plots(results, metrics, folder):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("bench_report: matplotlib not found; no plots", file=sys.stderr)
        return []
    os.makedirs(folder, exist_ok=True)
    policies = policy_order(results, metrics)
    names = [m["name"] for m in metrics]
    made = []
    for key, title, ylabel, line, fname in (
            ("speedup", "Speed-up over the best single device (whole app)", "T_best / T_coex", 1.0, "speedup.png"),
            ("efficiency", "Efficiency: speed-up / S_max (whole app)", "efficiency", EFFICIENCY_TARGET, "efficiency.png"),
            ("load_balance", "Load balance: first finish / last finish", "load balance", 1.0, "load_balance.png")):
        if not policies:
            break
        fig, ax = plt.subplots(figsize=(max(8, 1.1 * len(names) + 2), 4.5))
        width = 0.8 / len(policies)
        for i, policy in enumerate(policies):
            values = [m["policies"].get(policy, {}).get(key) or 0 for m in metrics]
            ax.bar([x + i * width - 0.4 + width / 2 for x in range(len(names))], values, width, label=policy)
        if key == "speedup":
            for x, m in enumerate(metrics):
                if m.get("s_max"):
                    ax.plot([x - 0.45, x + 0.45], [m["s_max"]] * 2, color="black", linewidth=1.5)
            ax.plot([], [], color="black", label="S_max")
        ax.axhline(line, color="grey", linestyle="--", linewidth=1)
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels(names, rotation=20)
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.legend(fontsize=8, ncol=min(len(policies) + 1, 6))
        fig.tight_layout()
        path = os.path.join(folder, fname)
        fig.savefig(path, dpi=90)
        plt.close(fig)
        made.append((title, path))
    return made


def summary(results, metrics):
    policies = policy_order(results, metrics)
    lines = ["%-15s %-9s %8s %6s  " % ("benchmark", "best", "T_best", "S_max")
             + "  ".join("%-17s" % p[:17] for p in policies)]
    for m in metrics:
        cells = []
        for p in policies:
            pm = m["policies"].get(p)
            if not pm:
                cells.append("%-17s" % "-")
            elif not pm["ok"]:
                cells.append("%-17s" % ("timeout" if pm["timeouts"] else "failed"))
            else:
                cells.append("%-17s" % ("%.2fx e%.2f%s" % (pm["speedup"], pm["efficiency"] or 0,
                                                          "" if pm["checksums_equal"] else " BAD")))
        lines.append("%-15s %-9s %8s %6s  " % (m["name"], "d%s" % m.get("best", "-"), f(m.get("t_best")),
                                              f(m.get("s_max"), 2)) + "  ".join(cells))
    lines.append("(speed-up over the best device, whole app, and efficiency = speed-up / S_max)")
    return "\n".join(lines)


def local_baseline(results, metrics):
    """The "Local baseline" section of docs/performance.md."""
    mach = results.get("machine", {})
    env = mach.get("env", {})
    out = ["## Local baseline", "",
           "<!-- Written by scripts/bench-local (scripts/bench_report.py --local-baseline); do not edit by hand. -->", "",
           "Each benchmark at its small `local` size, bare on one PoCL device and under coex on both, "
           "%s process runs each (medians). There is no speed-up to expect here: the two PoCL devices "
           "share one thread pool on the same cores, so this is the baseline the footprints improve "
           "(fewer bytes moved, less time lost), not a measure of speed. Where the cores are shared with "
           "other work, single runs vary by tens of percent; the medians damp that." % results["settings"].get("runs"), "",
           "- Command: `%s`" % results.get("command", ""),
           "- Machine: %s, %s cores, %s; %s; %s." % (mach.get("cpu_model", "?"), mach.get("nproc", "?"),
                                                    mach.get("mem_total", "?"), mach.get("os", "?"),
                                                    ", ".join("%s=%s" % kv for kv in sorted(env.items())) or "-"),
           "- Date: %s; coex loaded as %s." % (results.get("date", "?"), coex_mode_text(results)), "",
           "| benchmark | policy | launches (split) | bare app (s) | coex app (s) | app ratio | bare kernels (s) | coex kernels (s) | kernels ratio | bytes moved per run | per launch | LB | not split | checksums |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for m in metrics:
        if "best" not in m:
            out.append("| %s | – | bare run failed |  |  |  |  |  |  |  |  |  |  |  |" % m["name"])
            continue
        dev = m["devices"][m["best"]]
        for policy, p in m["policies"].items():
            if not p["ok"]:
                out.append("| %s | %s | %s |  |  |  |  |  |  |  |  |  |  |  |" % (
                    m["name"], policy, "timed out" if p["timeouts"] else "failed"))
                continue
            per_launch = p["bytes_moved"] / p["launches"] if p["bytes_moved"] is not None and p["launches"] else None
            out.append("| %s | %s | %s (%s) | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                m["name"], policy, "–" if p["launches"] is None else int(p["launches"]),
                "–" if p["split"] is None else int(p["split"]), f(dev["total"]), f(p["total"]),
                f(ratio(p["total"], dev["total"]), 2, "×"), f(dev["kernel"]), f(p["kernel"]),
                f(ratio(p["kernel"], dev["kernel"]), 2, "×"), moved_text(p),
                f_bytes(per_launch), f(p["load_balance"], 2), not_split_text(p),
                "equal" if p["checksums_equal"] else "**DIFFER**"))
    out += ["", "Ratio: coex / bare (above 1: coex slower). Bytes moved: from coex's report, per process run "
            "(all its repetitions); in brackets the report's `bytes_minimal`, where it has one. LB: load balance from the report's busy seconds.", ""]
    return "\n".join(out)


def replace_section(path, section, heading="## Local baseline"):
    text = open(path).read() if os.path.exists(path) else (
        "# Performance\n\nMeasured figures, each with the command that produced it.\n\n")
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines) if l.strip() == heading), None)
    if start is None:
        new = text.rstrip("\n") + "\n\n" + section.rstrip("\n") + "\n"
    else:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        new = "\n".join(lines[:start] + section.rstrip("\n").splitlines() + ([""] + lines[end:] if end < len(lines) else [])) + "\n"
    with open(path, "w") as fh:
        fh.write(new)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", nargs="+",
                   help="results.json from scripts/bench_run.py; several (same machine) are merged")
    p.add_argument("--md", help="write the benchmark page here (e.g. docs/benchmarks.md)")
    p.add_argument("--plots", help="folder for the PNG plots (linked from --md)")
    p.add_argument("--local-baseline", metavar="PERFORMANCE_MD",
                   help="replace the 'Local baseline' section of this file")
    p.add_argument("--summary", action="store_true", help="print a short table")
    args = p.parse_args(argv)
    loaded = []
    for path in args.results:
        with open(path) as fh:
            loaded.append(json.load(fh))
    results = merge_results(loaded)
    metrics = all_metrics(results)
    if args.md:
        links = []
        if args.plots:
            md_dir = os.path.dirname(os.path.abspath(args.md))
            links = [(t, os.path.relpath(path, md_dir)) for t, path in make_plots(results, metrics, args.plots)]
        with open(args.md, "w") as fh:
            fh.write(markdown(results, metrics, links))
    if args.local_baseline:
        replace_section(args.local_baseline, local_baseline(results, metrics))
    if args.summary:
        print(summary(results, metrics))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
