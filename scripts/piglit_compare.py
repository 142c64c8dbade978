#!/usr/bin/env python3
"""Compares two piglit result folders test by test (scripts/conformance): the counts per result,
then every test whose result differs, with its subtests that differ and the first lines of the
second run's output. Exits 1 when any result differs.

    piglit_compare.py BARE_DIR COEX_DIR
"""
import bz2
import collections
import json
import os
import sys


def load(folder):
    for name, opener in (("results.json.bz2", bz2.open), ("results.json", open)):
        path = os.path.join(folder, name)
        if os.path.exists(path):
            with opener(path, "rt") as f:
                return json.load(f)["tests"]
    sys.exit(f"piglit_compare: no results.json(.bz2) in {folder}")


def subtests(test):
    return {k: v for k, v in test.get("subtests", {}).items() if k != "__type__"}


def excerpt(test, lines=6):
    text = (test.get("out", "") + test.get("err", "")).strip().splitlines()
    failing = [l for l in text if "fail" in l.lower() or "error" in l.lower() or "crash" in l.lower()]
    return (failing or text)[:lines]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    bare, coex = load(sys.argv[1]), load(sys.argv[2])
    names = sorted(set(bare) | set(coex))
    for label, tests in (("bare", bare), ("coex", coex)):
        counts = collections.Counter(t["result"] for t in tests.values())
        print(f"{label}: {len(tests)} tests: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    differences = 0
    for name in names:
        a, b = bare.get(name), coex.get(name)
        ra = a["result"] if a else "missing"
        rb = b["result"] if b else "missing"
        sub_a, sub_b = subtests(a or {}), subtests(b or {})
        changed_subtests = sorted(k for k in set(sub_a) | set(sub_b) if sub_a.get(k) != sub_b.get(k))
        if ra == rb and not changed_subtests:
            continue
        differences += 1
        print(f"DIFF {name}: bare {ra}, coex {rb}")
        for k in changed_subtests:
            print(f"    subtest {k}: bare {sub_a.get(k, 'missing')}, coex {sub_b.get(k, 'missing')}")
        if b:
            print(f"    command: {b.get('command', '?')}")
            for line in excerpt(b):
                print(f"    | {line}")
    print(f"{differences} tests differ" if differences else "every test has the same result bare and under coex")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
