#!/usr/bin/env python3
"""pyopencl keeps a binary cache: its first run builds from source and stores the binary, later runs
create the program from it (clCreateProgramWithBinary). Under coex the second run must split as many
launches as the first, with the same output (model/binary_sources.h).

  pyopencl_cache_check.py --layer /abs/libcoex.so          (runs itself as the app with --app)

Needs Debian's python3-pyopencl (scripts/install-deps installs it). Exit status 0 when it holds.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

KERNELS = """
__kernel void scale(__global const float* x, __global float* y, float a) {
  size_t i = get_global_id(0);
  y[i] = a * x[i] + (float)get_group_id(0);
}
__kernel void square(__global const int* x, __global int* y) {
  size_t i = get_global_id(0);
  y[i] = x[i] * x[i];
}
"""


def app():
    import numpy as np
    import pyopencl as cl

    platform = cl.get_platforms()[0]
    device = platform.get_devices()[0]
    ctx = cl.Context([device])
    queue = cl.CommandQueue(ctx)
    program = cl.Program(ctx, KERNELS).build()
    n = 1 << 18
    x = np.arange(n, dtype=np.float32) / 7.0
    xi = (np.arange(n, dtype=np.int32) % 1000) - 500
    mf = cl.mem_flags
    x_buf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    xi_buf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=xi)
    y_buf = cl.Buffer(ctx, mf.WRITE_ONLY, x.nbytes)
    yi_buf = cl.Buffer(ctx, mf.WRITE_ONLY, xi.nbytes)
    program.scale(queue, (n,), (64,), x_buf, y_buf, np.float32(1.5))
    program.square(queue, (n,), (64,), xi_buf, yi_buf)
    y = np.empty_like(x)
    yi = np.empty_like(xi)
    cl.enqueue_copy(queue, y, y_buf)
    cl.enqueue_copy(queue, yi, yi_buf)
    queue.finish()
    import hashlib
    print("checksum", hashlib.sha256(y.tobytes() + yi.tobytes()).hexdigest()[:16])
    print("PASS")


def split_launches(report_path):
    with open(report_path) as f:
        report = json.load(f)
    kernels = report.get("kernels", {})
    items = kernels.values() if isinstance(kernels, dict) else kernels
    return {k.get("name"): (k.get("split_launches", 0), k.get("not_split", {})) for k in items}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--layer")
    p.add_argument("--app", action="store_true", help="run as the pyopencl app")
    args = p.parse_args()
    if args.app:
        return app()
    try:
        import pyopencl  # noqa: F401
    except ImportError:
        raise SystemExit("FAIL: python3-pyopencl is not installed (scripts/install-deps installs it)")
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith("COEX_") and k != "OPENCL_LAYERS"}
        env.setdefault("POCL_DEVICES", "basic basic")
        env.pop("PYOPENCL_NO_CACHE", None)
        env.update(XDG_CACHE_HOME=os.path.join(tmp, "xdg"), OPENCL_LAYERS=args.layer, COEX_POLICY="static",
                   COEX_LOG="warn", COEX_CACHE=os.path.join(tmp, "coex", "history.json"),
                   PYOPENCL_COMPILER_OUTPUT="0")
        outputs, splits = [], []
        for run in (1, 2):
            env["COEX_REPORT"] = os.path.join(tmp, "report%d.json" % run)
            proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--app"], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
            if proc.returncode != 0 or not proc.stdout.endswith(b"PASS\n"):
                sys.stderr.write(proc.stdout.decode(errors="replace") + proc.stderr.decode(errors="replace"))
                raise SystemExit("FAIL: run %d exited %d" % (run, proc.returncode))
            outputs.append(proc.stdout)
            splits.append(split_launches(env["COEX_REPORT"]))
            print("run %d: %s" % (run, splits[-1]))
        cached = os.listdir(os.path.join(tmp, "xdg")) if os.path.isdir(os.path.join(tmp, "xdg")) else []
        problems = []
        if not cached:
            problems.append("pyopencl kept no cache: the second run did not load a binary")
        if outputs[0] != outputs[1]:
            problems.append("outputs differ: %r %r" % (outputs[0], outputs[1]))
        for name in ("scale", "square"):
            first, second = splits[0].get(name, (0, {})), splits[1].get(name, (0, {}))
            if first[0] < 1 or second[0] < first[0]:
                problems.append("%s: split %d launch(es) in the first run, %d in the second (%s)"
                                % (name, first[0], second[0], second[1]))
        if problems:
            raise SystemExit("FAIL: " + "; ".join(problems))
    print("PASS")


if __name__ == "__main__":
    main()
