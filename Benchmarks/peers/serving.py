"""What the peers scripts share: the bench identity, one `optolink-soak serve` (limits off,
Benchmarks/peers/serve.json) started on a free loopback port with the bench device registered,
the driver's heap allocations per request, and the one result file each script overwrites."""
import json
import os
import shutil
import socket
import subprocess
import threading
import time
import urllib.request
from datetime import datetime, timezone

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
KEY = "opl_sdk_test_acme_client"
DEVICE = "b3b1c7de-0000-4000-8000-00000000be0c"


def loadavg():
    with open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]


def timed(cmd, out_path, limit):
    """Runs cmd to completion; returns (exit code, CPU seconds of it and its children, wall seconds).
    A command still running after `limit` seconds is killed, so a hung tool (siege once hung after
    its 10 s) fails its round instead of stopping the bench."""
    code, usage, wall = timed_usage(cmd, out_path, limit)
    return code, usage.ru_utime + usage.ru_stime, wall


def timed_usage(cmd, out_path, limit, env=None):
    """`timed` with the child's whole rusage (its peak RSS in `ru_maxrss`, KiB) and an environment."""
    with open(out_path, "w") as out:
        started = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, env=env)
        watchdog = threading.Timer(limit, proc.kill)
        watchdog.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            watchdog.cancel()
        wall = time.monotonic() - started
    return os.waitstatus_to_exitcode(status), usage, wall


def write_result(name, result):
    """Overwrites Benchmarks/results/`name`.json with `result` (its date added) and returns the path:
    each script keeps one current result file, and git keeps the earlier ones."""
    directory = os.path.join(ROOT, "Benchmarks", "results")
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"{name}.json")
    document = dict(date=datetime.now(timezone.utc).isoformat(timespec="seconds"), **result)
    with open(path + ".tmp", "w") as f:
        json.dump(document, f, indent=1)
        f.write("\n")
    os.replace(path + ".tmp", path)
    return path


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_serve(binary, port, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL):
    """Starts `binary serve` on 127.0.0.1:`port` and waits (at most 10 s) until it accepts."""
    server = subprocess.Popen([binary, "serve", "--port", str(port), "--config",
                               os.path.join(ROOT, "Benchmarks", "peers", "serve.json")],
                              stdout=stdout, stderr=stderr, cwd=ROOT)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.1)
    return server


def register_device(base):
    """POST /sdk/session for the bench device; returns the HTTP status."""
    body = json.dumps({"deviceId": DEVICE, "platform": "iOS", "osVersion": "18.1", "sdkVersion": "bench"})
    request = urllib.request.Request(base + "/sdk/session", method="POST", data=body.encode(),
                                     headers={"Content-Type": "application/json", "Authorization": f"Bearer {KEY}"})
    with urllib.request.urlopen(request) as response:
        return response.status


def reset_server(base):
    """POST /__admin/reset, then registers the bench device again: each run meets a server in the
    same state. Without it the server's in-memory ledger holds every event of the benchmark (over
    a gigabyte by its end), and a late run meets a slower server than an early one."""
    request = urllib.request.Request(base + "/__admin/reset", method="POST", data=b"")
    with urllib.request.urlopen(request) as response:
        response.read()
    return register_device(base)


def allocations_per_request(binary, base, work):
    """Heap allocations per request of `binary` (Benchmarks/peers/driver.json, the closed model
    against `base`): the difference between a 3 s and a 6 s run under
    `malloc-count.c`; `None` without a C compiler."""
    shim = os.path.join(work, "malloc-count.so")
    if not os.path.exists(shim):
        compiler = shutil.which("cc") or shutil.which("gcc")
        if not compiler:
            return None
        subprocess.run([compiler, "-O2", "-shared", "-fPIC", "-o", shim,
                        os.path.join(ROOT, "Benchmarks", "peers", "malloc-count.c")], check=True)
    with open(os.path.join(ROOT, "Benchmarks", "peers", "driver.json")) as f:
        profile = json.load(f)
    executable, _, flags = binary.partition("@")
    counts = []
    for seconds in (3, 6):
        profile["load"]["duration"] = seconds
        path = os.path.join(work, f"allocations-{seconds}.json")
        with open(path, "w") as f:
            json.dump(profile, f)
        out = os.path.join(work, f"allocations-{seconds}-{abs(hash(binary))}")
        run = subprocess.run([executable, "run", path, "--base-url", base, "--api-key", KEY, "--org-key", "acme",
                              "--no-progress", "--transport", "native", "--out", out] + flags.split(),
                             env=dict(os.environ, LD_PRELOAD=shim), stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
        found = [line for line in run.stderr.splitlines() if line.startswith("malloc-count: ")]
        if not found:
            return None
        with open(os.path.join(out, "summary.json")) as f:
            attempts = json.load(f)["totals"]["attempts"]
        counts.append((int(found[-1].split()[1]), attempts))
    (short_mallocs, short_requests), (long_mallocs, long_requests) = counts
    if long_requests <= short_requests:
        return None
    return (long_mallocs - short_mallocs) / (long_requests - short_requests)
