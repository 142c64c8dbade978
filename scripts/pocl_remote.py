"""PoCL's remote driver on one machine (docs/remote.md): `pocld` servers on 127.0.0.1, each serving
this machine's PoCL CPU device, and the environment that makes a client see them as OpenCL devices.
Used by scripts/remote_demo_run.py and tests/remote/remote_test.py.

Every server is started in its own session and stopped by its process id (SIGTERM, then SIGKILL
after a bounded wait); a Servers object used as a context manager stops them on every way out."""

import os
import random
import signal
import socket
import subprocess
import tempfile
import time

CLIENT_LIBRARY = "lib/libpocl-remote.so"  # scripts/remote-demo renames PoCL-R's libpocl (see there)
SERVER = "bin/pocld"
SYSTEM_ICD = "/etc/OpenCL/vendors/pocl.icd"


def prefix_ready(prefix):
    return all(os.path.isfile(os.path.join(prefix, p)) for p in (CLIENT_LIBRARY, SERVER))


def local_cpu_driver():
    """The system PoCL's threaded CPU driver: "cpu" from PoCL 4 on, "pthread" before."""
    for d in ("/usr/lib/x86_64-linux-gnu/pocl", "/usr/lib64/pocl", "/usr/lib/pocl"):
        if os.path.exists(os.path.join(d, "libpocl-devices-cpu.so")):
            return "cpu"
    return "pthread"


def threads_env(threads):
    """Limits a PoCL CPU device to `threads` threads (PoCL 3's pthread and PoCL 5's cpu driver)."""
    return {"POCL_MAX_PTHREAD_COUNT": str(threads), "POCL_CPU_MAX_CU_COUNT": str(threads)}


def listening(port):
    """Whether some socket listens on TCP `port` (read from /proc: no connection is made)."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                for line in f.readlines()[1:]:
                    fields = line.split()
                    if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                        return True
        except OSError:
            pass
    return False


def port_free(port):
    for address in ("127.0.0.1", "0.0.0.0"):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind((address, port))
            except OSError:
                return False
    return True


def free_base_port(taken):
    """A port p with p, p+1 and p+2 free: pocld listens on all three."""
    for _ in range(200):
        base = random.randrange(20000, 60000, 10)
        ports = (base, base + 1, base + 2)
        if not any(p in taken for p in ports) and all(port_free(p) for p in ports):
            return base
    raise RuntimeError("no three free consecutive TCP ports")


class Servers:
    """`count` pocld servers on 127.0.0.1. `cores`: a list of CPU lists (taskset -c), one per server,
    or None; `threads`: the CPU device's threads per server."""

    def __init__(self, prefix, count, log_dir, driver=None, cores=None, threads=1, start_timeout=30):
        self.prefix = os.path.abspath(prefix)
        self.count = count
        self.log_dir = log_dir
        self.driver = driver or local_cpu_driver()
        self.cores = cores
        self.threads = threads
        self.start_timeout = start_timeout
        self.procs = []
        self.ports = []
        self.icd_dir = tempfile.mkdtemp(prefix="coex-pocl-remote-")

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def server_env(self):
        env = dict(os.environ)
        for name in list(env):
            if name.startswith("POCL_REMOTE") or name.startswith("COEX_") or name in ("OPENCL_LAYERS", "LD_PRELOAD"):
                del env[name]
        # pocld serves what its ICD loader finds: only the system's PoCL, so that device 0 is its CPU.
        if os.path.exists(SYSTEM_ICD):
            env["OCL_ICD_VENDORS"] = SYSTEM_ICD
        env["POCL_DEVICES"] = self.driver
        env.update(threads_env(self.threads))
        return env

    def start(self):
        os.makedirs(self.log_dir, exist_ok=True)
        env = self.server_env()
        for i in range(self.count):
            port = free_base_port(set(p + k for p in self.ports for k in range(3)))
            command = [os.path.join(self.prefix, SERVER), "-a", "127.0.0.1", "-p", str(port)]
            if self.cores:
                command = ["taskset", "-c", self.cores[i]] + command
            log = open(os.path.join(self.log_dir, "pocld-%d.log" % i), "w")
            self.procs.append(subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT,
                                               stdin=subprocess.DEVNULL, start_new_session=True))
            log.close()
            self.ports.append(port)
        deadline = time.monotonic() + self.start_timeout
        for proc, port in zip(self.procs, self.ports):
            while not all(listening(port + k) for k in range(3)):
                if proc.poll() is not None:
                    raise RuntimeError("pocld on port %d exited with status %d (log in %s)"
                                       % (port, proc.returncode, self.log_dir))
                if time.monotonic() > deadline:
                    raise RuntimeError("pocld on port %d not listening after %d s" % (port, self.start_timeout))
                time.sleep(0.05)

    def client_env(self, servers=None, local_driver=None, local_threads=None):
        """The client's environment: the remote devices of `servers` (indices, default all), then,
        with local_driver, this machine's PoCL device as well (one POCL_DEVICES serves both PoCLs:
        each takes the driver names it knows)."""
        servers = range(self.count) if servers is None else servers
        with open(os.path.join(self.icd_dir, "pocl-remote.icd"), "w") as f:
            f.write(os.path.join(self.prefix, CLIENT_LIBRARY) + "\n")
        local_icd = os.path.join(self.icd_dir, "pocl.icd")
        if local_driver and os.path.exists(SYSTEM_ICD):
            with open(SYSTEM_ICD) as src, open(local_icd, "w") as dst:
                dst.write(src.read())
        elif os.path.exists(local_icd):
            os.remove(local_icd)
        env = {"OCL_ICD_VENDORS": self.icd_dir}
        names = []
        for n, i in enumerate(servers):
            names.append("remote")
            env["POCL_REMOTE%d_PARAMETERS" % n] = "127.0.0.1:%d/0" % self.ports[i]
        if local_driver:
            names.append(local_driver)
            if local_threads:
                env.update(threads_env(local_threads))
        env["POCL_DEVICES"] = " ".join(names)
        return env

    def kill(self, i):
        """Kills server i at once (SIGKILL), as a machine that goes away."""
        proc = self.procs[i]
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=10)

    def stop(self):
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 5
        for proc in self.procs:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGKILL)
                proc.wait(timeout=10)
        for name in os.listdir(self.icd_dir) if os.path.isdir(self.icd_dir) else []:
            os.remove(os.path.join(self.icd_dir, name))
        if os.path.isdir(self.icd_dir):
            os.rmdir(self.icd_dir)
