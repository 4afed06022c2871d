"""Runtime calls per request of optolink-soak binaries: swift_retain, swift_release,
swift_task_switch and malloc, counted exactly by uprobes (perf probe + perf stat), for the closed
model of Benchmarks/peers/driver.json against one `optolink-soak serve` (limits off, reset before
each run).

CPU time per request moves by ±15 % from run to run on a shared 2-core machine; these counts do
not move with the load, so a change of a few per cent in the work per request shows in one run.
Each binary runs twice (3 s and 6 s) and the difference is divided by the difference in requests:
start-up and the report written at the end cancel out. The probes slow every call, so the rates
of these runs mean nothing; only the counts are read.

Needs root and perf (Debian's linux-perf); the probes are added if missing and left in place.
Usage: python3 Benchmarks/peers/runtime-calls.py BINARY [BINARY...]   (JSON on stdout; the same
JSON overwrites Benchmarks/results/runtime-calls.json)
"""
import json
import os
import subprocess
import sys
import tempfile

from serving import KEY, ROOT, free_port, reset_server, start_serve, write_result

PROBES = [
    ("/opt/swift/usr/lib/swift/linux/libswiftCore.so", "swift_retain", "probe_libswiftCore:swift_retain"),
    ("/opt/swift/usr/lib/swift/linux/libswiftCore.so", "swift_release", "probe_libswiftCore:swift_release"),
    ("/opt/swift/usr/lib/swift/linux/libswift_Concurrency.so", "swift_task_switch",
     "probe_libswift_Concurrency:swift_task_switch"),
    ("/lib/x86_64-linux-gnu/libc.so.6", "malloc", "probe_libc:malloc"),
]


def ensure_probes():
    listing = subprocess.run(["perf", "probe", "-l"], capture_output=True, text=True).stdout
    # Each line starts with the event's name; compare whole names (malloc is a prefix of malloc_trim).
    listed = {line.split()[0] for line in listing.splitlines() if line.strip()}
    for library, symbol, event in PROBES:
        if event not in listed:
            subprocess.run(["perf", "probe", "-x", library, "--add", symbol], capture_output=True, check=True)


def counted_run(binary, base, work, tag, seconds):
    with open(os.path.join(ROOT, "Benchmarks", "peers", "driver.json")) as f:
        profile = json.load(f)
    profile["load"]["duration"] = seconds
    path = os.path.join(work, f"{tag}.json")
    with open(path, "w") as f:
        json.dump(profile, f)
    out = os.path.join(work, tag)
    stat = out + ".stat"
    reset_server(base)
    events = ",".join(event for _, _, event in PROBES)
    subprocess.run(["perf", "stat", "-x,", "-e", events, "-o", stat, binary, "run", path, "--base-url", base,
                    "--api-key", KEY, "--org-key", "acme", "--no-progress", "--transport", "native", "--out", out],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    with open(os.path.join(out, "summary.json")) as f:
        requests = json.load(f)["totals"]["attempts"]
    counts = {}
    with open(stat) as f:
        for line in f:
            fields = line.strip().split(",")
            if len(fields) > 2 and fields[2].startswith("probe_"):
                counts[fields[2].split(":")[1]] = int(fields[0])
    return requests, counts


def main():
    binaries = sys.argv[1:]
    if not binaries:
        sys.exit(__doc__)
    ensure_probes()
    work = tempfile.mkdtemp(prefix="runtime-calls-")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_serve(binaries[-1], port)
    results = {}
    try:
        for index, binary in enumerate(binaries):
            short_requests, short = counted_run(binary, base, work, f"b{index}-3", 3)
            long_requests, long = counted_run(binary, base, work, f"b{index}-6", 6)
            extra = long_requests - short_requests
            per_request = {k: (long[k] - short[k]) / extra for k in short} if extra > 0 else None
            results[binary] = dict(requests=[short_requests, long_requests], perRequest=per_request)
            print(f"{binary}: " + (" ".join(f"{k}={v:.1f}" for k, v in per_request.items())
                                   if per_request else "too few requests"), file=sys.stderr, flush=True)
    finally:
        server.terminate()
        server.wait()
    summary = dict(profile="Benchmarks/peers/driver.json", results=results)
    print(json.dumps(summary, indent=1))
    print(f"wrote {write_result('runtime-calls', summary)}", file=sys.stderr)


if __name__ == "__main__":
    main()
