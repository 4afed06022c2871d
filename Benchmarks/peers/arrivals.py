"""The open model's arrival schedule at fixed rates against `optolink-soak serve` in its own process:
does every planned journey start on time? For each journey kind and rate, one run of SECONDS:

- `first-launch`: one first launch (the deferred match and the session: 2 requests), on 10 virtual
  devices per journey/s of rate, so each device is installed about once per 10 s;
- `event`: a relaunch and one event on a device that is already installed after its first journey
  (the SDK sends no event before a launch), on 1 device per journey/s of rate, so each device runs
  about one journey a second.

Each run writes start lag p50 / p99 / p99.9, the late-start share (over the run's 10 ms threshold),
dropped arrivals (planned, never started), requests/s, the driver's CPU seconds per journey (user +
system, rusage of its process), `serve`'s CPU seconds per journey (/proc), the driver's peak RSS
per device (ru_maxrss over the devices: an upper bound, the process's fixed cost included), and
whether its summary named the generator as the limit.

Usage: python3 Benchmarks/peers/arrivals.py BINARY [SECONDS [RATES [KINDS]]]
  RATES: comma-separated journeys/s (default 500,1000,2500,5000,10000); KINDS: first-launch,event.
Prints one line per run and a JSON summary, and overwrites Benchmarks/results/arrivals.json with it.
"""
import json
import os
import sys
import tempfile

from serving import KEY, free_port, loadavg, register_device, reset_server, start_serve, timed_usage, write_result

KINDS = {
    "first-launch": dict(steps=[{"kind": "firstLaunch"}], devices_per_rate=10),
    "event": dict(steps=[{"kind": "relaunch"}, {"kind": "event", "name": "tick", "properties": {}}],
                  devices_per_rate=1),
}


def profile(kind, rate, seconds):
    spec = KINDS[kind]
    return {
        "name": f"arrivals-{kind}-{int(rate)}", "seed": 1,
        "devices": {"count": max(100, int(spec["devices_per_rate"] * rate))},
        "journeys": [{"name": kind.replace("-", "_"), "weight": 1, "steps": spec["steps"]}],
        "load": {"model": "open", "startRate": rate, "stages": [{"duration": seconds, "target": rate}],
                 "maxInFlight": 50000, "grace": 10},
        "sdk": {"timeout": 5, "maxRetries": 2},
    }


def run_one(binary, base, work, kind, rate, seconds):
    plan = profile(kind, rate, seconds)
    path = os.path.join(work, f"{kind}-{int(rate)}.json")
    with open(path, "w") as f:
        json.dump(plan, f)
    report = os.path.join(work, f"{kind}-{int(rate)}")
    env = dict(os.environ, OPTOLINK_API_KEY=KEY)
    code, usage, wall = timed_usage(
        [binary, "run", path, "--base-url", base, "--org-key", "acme", "--no-progress", "--out", report],
        report + ".txt", limit=seconds + 120, env=env)
    cpu, maxrss_kb = usage.ru_utime + usage.ru_stime, usage.ru_maxrss
    with open(os.path.join(report, "summary.json")) as f:
        summary = json.load(f)
    with open(os.path.join(report, "summary.txt")) as f:
        text = f.read()
    journeys = summary["journeys"]
    started = max(1, journeys["started"])
    lag = journeys["startLag"]
    devices = plan["devices"]["count"]
    generator = summary["run"].get("generator") or {}
    return dict(
        kind=kind, rate=rate, seconds=seconds, devices=devices, exit=code,
        scheduled=journeys["scheduled"], started=journeys["started"],
        startLagP50ms=1e3 * lag["p50"], startLagP99ms=1e3 * lag["p99"], startLagP999ms=1e3 * lag["p999"],
        startLagMaxms=1e3 * lag["max"],
        lateStartShare=journeys["lateStarts"] / started, lateStarts=journeys["lateStarts"],
        dropped=journeys.get("dropped") or 0,
        requestsPerSecond=summary["totals"]["attemptsPerSecond"], errors=summary["totals"]["errors"],
        cpuSecondsPerJourney=cpu / started, cpuSeconds=cpu, wallSeconds=wall,
        generatorCPUShare=generator.get("cpuSeconds", 0) / max(1e-9, generator.get("wallSeconds", 0)
                                                                 * generator.get("cores", 1)),
        maxRSSMB=maxrss_kb / 1024, rssPerDeviceKB=maxrss_kb / devices,
        generatorNamedTheLimit="generator: THE LIMIT" in text,
        loadavg1=loadavg()[0])


def process_cpu_seconds(pid):
    """User + system CPU seconds of process `pid` so far (/proc/PID/stat, fields 14 and 15)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    binary = args[0]
    seconds = float(args[1]) if len(args) > 1 else 10
    rates = [float(r) for r in (args[2] if len(args) > 2 else "500,1000,2500,5000,10000").split(",")]
    kinds = (args[3] if len(args) > 3 else "first-launch,event").split(",")
    for kind in kinds:
        if kind not in KINDS:
            sys.exit(f"unknown journey kind {kind!r}: use {', '.join(KINDS)}")
    work = tempfile.mkdtemp(prefix="arrivals-")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_serve(binary, port)
    runs = []
    load_before = loadavg()
    try:
        register_device(base)
        for kind in kinds:
            for rate in rates:
                reset_server(base)
                serve_before = process_cpu_seconds(server.pid)
                result = run_one(binary, base, work, kind, rate, seconds)
                # The server's CPU per journey beside the driver's: together they say how many of
                # the machine's cores a rate needs.
                result["serveCPUSecondsPerJourney"] = (
                    (process_cpu_seconds(server.pid) - serve_before) / max(1, result["started"]))
                runs.append(result)
                print(f"{kind} {rate:.0f}/s: start lag p50 {result['startLagP50ms']:.2f} p99 "
                      f"{result['startLagP99ms']:.2f} p99.9 {result['startLagP999ms']:.2f} ms, late "
                      f"{100 * result['lateStartShare']:.2f} %, dropped {result['dropped']}, "
                      f"{result['requestsPerSecond']:.0f} req/s, {1e6 * result['cpuSecondsPerJourney']:.0f} "
                      f"us CPU/journey (serve {1e6 * result['serveCPUSecondsPerJourney']:.0f}), "
                      f"{result['rssPerDeviceKB']:.1f} KB/device", file=sys.stderr)
    finally:
        server.terminate()
        server.wait()
    document = dict(seconds=seconds, rates=rates, kinds=kinds, cores=os.cpu_count(), loadBefore=load_before,
                    loadAfter=loadavg(), work=work, runs=runs)
    print(json.dumps(document, indent=1))
    print(f"wrote {write_result(os.environ.get('RESULT_NAME', 'arrivals'), document)}", file=sys.stderr)


if __name__ == "__main__":
    main()
