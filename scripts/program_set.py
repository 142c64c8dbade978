"""The programs the measuring scripts run (scripts/coverage_run.py, scripts/stress_run.py): the test
apps as tests/apps/CMakeLists.txt lists them, the benchmarks at their 'local' size, and what a run
prints that must equal the bare run's."""
import json
import os
import shutil

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_apps(build):
    """(name, command) of every test app, built in build."""
    text = open(os.path.join(ROOT, "tests", "apps", "CMakeLists.txt")).read()
    names = text.split("set(COEX_TEST_APPS", 1)[1].split(")", 1)[0].split()
    return [("tests/apps/" + a, [os.path.join(build, "tests", "apps", a)]) for a in names]


def benchmark_program(programs_dir, bench):
    """The program file of an entry of benchmarks/benchmarks.json: its 'program', else its name."""
    return os.path.join(programs_dir, bench.get("program", bench["name"]))


def local_benchmarks(programs_dir, scale_name="local"):
    """(name, command) of every benchmark with a size of that scale ('local' unless told), one rep,
    built in programs_dir."""
    out = []
    with open(os.path.join(ROOT, "benchmarks", "benchmarks.json")) as f:
        for bench in json.load(f)["benchmarks"]:
            scale = bench["scales"].get(scale_name)
            if scale:
                out.append(("benchmarks/" + bench["name"],
                            [benchmark_program(programs_dir, bench)] + scale["args"] + ["--reps", "1"]))
    return out


def checksums(stdout):
    """The lines of a run's output that must equal the bare run's."""
    return [line for line in stdout.splitlines() if line.startswith(("checksum", "PASS"))]


def vendors_without_nvidia(folder):
    """When NVIDIA's OpenCL is registered in /etc/OpenCL/vendors: fills `folder` with the other
    registrations and returns it (for OCL_ICD_VENDORS: the loader then sees PoCL alone); else None."""
    vendors = "/etc/OpenCL/vendors"
    if not os.path.isdir(vendors) or not any("nvidia" in n.lower() for n in os.listdir(vendors)):
        return None
    os.makedirs(folder, exist_ok=True)
    for name in os.listdir(vendors):
        if "nvidia" not in name.lower():
            shutil.copy(os.path.join(vendors, name), folder)
    return folder
