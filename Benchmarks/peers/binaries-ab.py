"""Two optolink-soak binaries side by side: CPU seconds per 1,000 requests and requests/s of the
driver (the SDK on the native transport, closed model, POST /sdk/events, 64 devices), interleaved
rounds against one `optolink-soak serve` (limits off, reset before each run), medians.

CPU per 1,000 requests (user + system of the driver process, from the kernel's rusage, as /proc
reports it) is the measure to compare: on a shared machine it moves far less than requests/s.

Heap allocations per request are counted too (`malloc-count.c` loaded with LD_PRELOAD, when a C
compiler is present): the difference between a 3 s and a 6 s run of each binary, divided by the
difference in requests. Unlike CPU time it does not move with the load of the machine.

Usage: python3 Benchmarks/peers/binaries-ab.py OLD_BINARY NEW_BINARY [MORE_BINARIES…] [SECONDS [ROUNDS]]
A binary may carry extra `run` flags after an `@`, e.g. `.build/release/optolink-soak@--client-loops 1`.
Prints one line per run and a JSON summary on stdout (the machine's load average included), and
overwrites Benchmarks/results/binaries-ab.json with that summary.
"""
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile

from serving import (KEY, ROOT, allocations_per_request, free_port, register_device, reset_server, start_serve,
                     write_result)


def main():
    args = sys.argv[1:]
    numbers = [a for a in args if a.replace(".", "", 1).isdigit()]
    binaries = [a for a in args if a not in numbers]
    if len(binaries) < 2:
        sys.exit(__doc__)
    seconds = float(numbers[0]) if numbers else 10
    rounds = int(numbers[1]) if len(numbers) > 1 else 3
    work = tempfile.mkdtemp(prefix="binaries-ab-")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_serve(binaries[1].split("@")[0], port)
    try:
        register_device(base)
        with open(os.path.join(ROOT, "Benchmarks", "peers", "driver.json")) as f:
            profile = json.load(f)
        profile["load"]["duration"] = seconds + 1  # 1 s warm-up, then the counted window
        path = os.path.join(work, "profile.json")
        with open(path, "w") as f:
            json.dump(profile, f)
        results = {b: [] for b in binaries}
        load_before = os.getloadavg()
        for r in range(rounds):
            for i, binary in enumerate(binaries):
                out = os.path.join(work, f"r{r}-{i}")
                reset_server(base)
                executable, _, flags = binary.partition("@")
                proc = subprocess.Popen([executable, "run", path, "--base-url", base, "--api-key", KEY, "--org-key",
                                         "acme", "--no-progress", "--transport", "native", "--out", out]
                                        + flags.split(),
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                _, _, usage = os.wait4(proc.pid, 0)
                cpu = usage.ru_utime + usage.ru_stime
                with open(os.path.join(out, "summary.json")) as f:
                    totals = json.load(f)["totals"]
                counted = 0
                with open(os.path.join(out, "attempts.csv")) as f:
                    for row in csv.DictReader(f):
                        if row["endpoint"] == "events" and row["status"] == "200" \
                                and float(row["actual_start"]) >= 1 and float(row["end"]) <= 1 + seconds:
                            counted += 1
                run = dict(cpuPer1000=1000 * cpu / totals["attempts"], rate=counted / seconds,
                           attempts=totals["attempts"], errors=totals["errors"], loadavg1=os.getloadavg()[0])
                results[binary].append(run)
                print(f"round {r + 1} {binary}: {run['cpuPer1000']:.4f} CPU s/1k, {run['rate']:.0f} req/s, "
                      f"{run['errors']} errors, load {run['loadavg1']:.2f}", file=sys.stderr, flush=True)
        allocations = {b: allocations_per_request(b, base, work) for b in binaries}
    finally:
        server.terminate()
        server.wait()
    summary = dict(secondsPerRun=seconds, rounds=rounds, loadAverageBefore=load_before,
                   loadAverageAfter=os.getloadavg(), binaries={
                       b: dict(medianCPUSecondsPer1000=statistics.median(x["cpuPer1000"] for x in runs),
                               medianRequestsPerSecond=statistics.median(x["rate"] for x in runs),
                               mallocsPerRequest=allocations[b], runs=runs)
                       for b, runs in results.items()})
    print(json.dumps(summary, indent=2))
    print(f"wrote {write_result('binaries-ab', summary)}", file=sys.stderr)


if __name__ == "__main__":
    main()
