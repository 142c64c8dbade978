#!/usr/bin/env python3
"""The tests of label `remote` (docs/remote.md, docs/testing.md): coex over devices served by PoCL's
remote driver (PoCL-R), two `pocld` servers on 127.0.0.1, each serving this machine's PoCL CPU device.

  remote_test.py --prefix P app -- python3 differential.py --mode layer ... -- ./app
      runs the differential harness with the app's devices two remote ones (home: the first);
  remote_test.py --prefix P --coex build/coex [--servers N] server-killed -- ./benchmark args
      the app on this machine's device (home), split with N remote devices (default 1), the server of
      the first killed (SIGKILL) once it has computed for a while: the app must exit 0 with the bare
      run's checksums, within a bounded time, and the report must show launches split before the
      kill. With two servers the kill stalls both remote devices (PoCL-R ends the other server's
      session too, docs/remote.md), one of them often in an upload that never returns.

P is the PoCL-R prefix scripts/remote-demo builds (build-remote/pocl-r). Without it the test exits
with status 77, which ctest reports as skipped (SKIP_RETURN_CODE), and says why."""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import pocl_remote  # noqa: E402

SKIPPED = 77
# The basic driver gives single-threaded devices on PoCL 3 (cpu-minimal on PoCL 5): two fit two cores.
SERVER_DRIVER = os.environ.get("COEX_TEST_REMOTE_DRIVER", "basic")


def server_cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def checksums(text):
    return [line for line in text.splitlines() if line.startswith("checksum ")]


def run_app(servers, args, work):
    env = dict(os.environ)
    env.update(servers.client_env())
    env["COEX_CACHE"] = os.path.join(work, "history.json")
    result = subprocess.run(args.command, env=env, timeout=args.timeout)
    return result.returncode


def run_server_killed(servers, args, work):
    env = dict(os.environ)
    env.update(servers.client_env(local_driver=SERVER_DRIVER))
    env["COEX_CACHE"] = os.path.join(work, "history.json")
    out = subprocess.run([args.coex, "devices"], env=env, capture_output=True, text=True, timeout=60).stdout
    local = [row.split()[0] for row in out.splitlines() if row[:1].isdigit() and " local " in row]
    remote = [row for row in out.splitlines() if row[:1].isdigit() and " remote " in row]
    if not local or len(remote) != args.servers:
        print("expected one local and %d remote devices:\n%s" % (args.servers, out))
        return 1
    app = args.command + ["--device", local[0]]
    bare = subprocess.run(app, env=env, capture_output=True, text=True, timeout=args.timeout)
    if bare.returncode != 0 or not checksums(bare.stdout):
        print("bare run failed (%d):\n%s%s" % (bare.returncode, bare.stdout, bare.stderr))
        return 1
    report = os.path.join(work, "report.json")
    server = servers.procs[0].pid
    # From now on: the servers also spin while a client (the bare run) merely holds its session.
    cpu_before = server_cpu_seconds(server)
    started = time.monotonic()
    log = open(os.path.join(work, "coex.log"), "w+")
    proc = subprocess.Popen([args.coex, "run", "--report", report] + app, env=env, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        # Mid-run: once the server has computed kill_after_cpu seconds (its build takes a fraction).
        while proc.poll() is None and server_cpu_seconds(server) - cpu_before < args.kill_after_cpu:
            if time.monotonic() - started > args.timeout:
                raise subprocess.TimeoutExpired(app, args.timeout)
            time.sleep(0.05)
        if proc.poll() is not None:
            print("the app ended before the server had computed %.1f s" % args.kill_after_cpu)
            return 1
        servers.kill(0)
        killed = time.monotonic() - started
        proc.wait(timeout=max(1, args.timeout - killed))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=30)
        print("HANG: the app did not end within %d s" % args.timeout)
        return 1
    log.seek(0)
    out = log.read()
    log.close()
    print("server killed after %.1f s; the app ended after %.1f s with status %d"
          % (killed, time.monotonic() - started, proc.returncode))
    # What coex said of the devices taken over (abandoned, or left behind while uploading).
    for line in out.splitlines():
        if "sits out" in line or "redid" in line or "waiting up to" in line:
            print(line)
    if proc.returncode != 0 or checksums(out) != checksums(bare.stdout):
        print("FAIL: other output than bare:\n%s\nbare:\n%s" % (out, bare.stdout))
        return 1
    with open(report) as f:
        kernels = json.load(f).get("kernels", [])
    split = sum(k.get("split_launches", 0) for k in kernels)
    if split < 1:
        print("FAIL: no launch was split before the kill (report: %s)" % report)
        return 1
    print("PASS: same checksums as bare, %d launches split" % split)
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--prefix", required=True, help="the PoCL-R prefix (bin/pocld, lib/libpocl-remote.so)")
    p.add_argument("--timeout", type=float, default=240, help="seconds for one run")
    p.add_argument("what", choices=("app", "server-killed"))
    p.add_argument("--coex", help="the coex launcher (server-killed)")
    p.add_argument("--kill-after-cpu", type=float, default=2.0, help="server CPU seconds before the kill")
    p.add_argument("--servers", type=int, default=1, help="remote devices (server-killed)")
    p.add_argument("command", nargs=argparse.REMAINDER)
    args = p.parse_args()
    if args.command[:1] == ["--"]:
        args.command = args.command[1:]
    if not pocl_remote.prefix_ready(args.prefix):
        print("SKIPPED: no PoCL-R in %s (scripts/remote-demo builds it)" % args.prefix)
        return SKIPPED
    count = 2 if args.what == "app" else args.servers
    with tempfile.TemporaryDirectory(prefix="coex-remote-test-") as work:
        with pocl_remote.Servers(args.prefix, count, os.path.join(work, "servers"), driver=SERVER_DRIVER) as servers:
            if args.what == "app":
                return run_app(servers, args, work)
            return run_server_killed(servers, args, work)


if __name__ == "__main__":
    sys.exit(main())
