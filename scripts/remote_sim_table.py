#!/usr/bin/env python3
"""The table of docs/remote.md, "Planning past what we can run": runs `coex simulate` on every
config/scenarios/remote-*.json and prints, per scenario and policy, the speed-up of its launches over
the app's node (node0) alone, which runs a launch in groups / speed seconds.

  python3 scripts/remote_sim_table.py [--coex build/coex]"""

import argparse
import glob
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--coex", default=os.path.join(ROOT, "build", "coex"))
    args = p.parse_args()
    rows = []
    for path in sorted(glob.glob(os.path.join(ROOT, "config", "scenarios", "remote-*.json"))):
        with open(path) as f:
            scenario = json.load(f)
        _, nodes, network, kind = scenario["name"].split("-")
        alone = scenario["launches"] * scenario["kernel"]["groups"] / scenario["devices"][0]["speed"]
        out = subprocess.run([args.coex, "simulate", path], capture_output=True, text=True, timeout=300, check=True)
        speedups = {}
        for line in out.stdout.splitlines():
            entry = json.loads(line)
            if entry.get("summary"):
                speedups[entry["policy"]] = alone / entry["total_makespan"]
        rows.append((int(nodes.rstrip("node")), network, kind, speedups, scenario["policy"]))
    rows.sort(key=lambda r: (r[2], r[1], r[0]))
    policies = rows[0][4] if rows else []
    print("| kernel | network | nodes | " + " | ".join(policies) + " |")
    print("|---|---|---:|" + "---:|" * len(policies))
    for nodes, network, kind, speedups, _ in rows:
        print("| %s | %s | %d | %s |" % (kind, network, nodes,
                                         " | ".join("%.2f" % speedups.get(pol, 0) for pol in policies)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
