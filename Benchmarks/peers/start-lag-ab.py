"""Two optolink-soak binaries side by side on the open model: start lag and the driver's CPU per
journey at a fixed arrival rate, interleaved rounds against one `optolink-soak serve` (limits off, reset before each run),
then the same in `optolink-soak bench` (the emulator in the driver's process: the issue's figure).

Journey: relaunch + one event (2 requests), 1,000 devices, open model, RATE journeys/s for SECONDS
(5,000/s for 10 s by default: 50,000 journeys, of which the first 1,000 are first launches).
CPU per journey is user + system of the driver process (rusage), over the journeys it started.

Usage: python3 Benchmarks/peers/start-lag-ab.py OLD_BINARY NEW_BINARY [ROUNDS [RATE [SECONDS]]]
Prints one line per run and a JSON summary on stdout (the machine's load average included), and
overwrites Benchmarks/results/start-lag-ab.json with that summary.
"""
import json
import os
import statistics
import sys
import tempfile

from serving import KEY, free_port, loadavg, register_device, reset_server, start_serve, timed, write_result


def run_against_serve(binary, base, work, tag, rate, seconds):
    profile = {
        "name": "start-lag-ab", "seed": 1, "devices": {"count": 1000},
        "journeys": [{"name": "tick", "weight": 1,
                      "steps": [{"kind": "relaunch"}, {"kind": "event", "name": "tick", "properties": {}}]}],
        "load": {"model": "open", "startRate": rate, "stages": [{"duration": seconds, "target": rate}],
                 "maxInFlight": 5000, "grace": 10},
        "sdk": {"timeout": 5, "maxRetries": 2},
    }
    path = os.path.join(work, "profile.json")
    with open(path, "w") as f:
        json.dump(profile, f)
    report = os.path.join(work, tag)
    code, cpu, _ = timed([binary, "run", path, "--base-url", base, "--api-key", KEY, "--org-key", "acme",
                       "--no-progress", "--out", report], report + ".txt", limit=300)
    with open(os.path.join(report, "summary.json")) as f:
        summary = json.load(f)
    journeys = summary["journeys"]
    return dict(p50ms=1e3 * journeys["startLag"]["p50"], p99ms=1e3 * journeys["startLag"]["p99"],
                lateStarts=journeys["lateStarts"], journeys=journeys["started"],
                cpuMicrosecondsPerJourney=1e6 * cpu / max(1, journeys["started"]),
                errors=summary["totals"]["errors"], exit=code)


def run_bench(binary, work, tag, rate):
    out = os.path.join(work, tag + ".json")
    timed([binary, "bench", "--devices", "1000,2000", "--rate", str(rate), "--seconds", "3", "--transport",
           "native", "--out", out], os.path.join(work, tag + ".txt"), limit=900)
    with open(out) as f:
        lag = json.load(f)["startLag"]
    return dict(p50ms=1e3 * lag["p50"], p99ms=1e3 * lag["p99"], lateStarts=lag["lateStarts"])


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        sys.exit(__doc__)
    binaries = args[:2]
    rounds = int(args[2]) if len(args) > 2 else 4
    rate = float(args[3]) if len(args) > 3 else 5000
    seconds = float(args[4]) if len(args) > 4 else 10
    work = tempfile.mkdtemp(prefix="start-lag-ab-")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_serve(binaries[1], port)
    runs = {b: {"serve": [], "bench": []} for b in binaries}
    load_before = loadavg()
    try:
        register_device(base)
        for index in range(rounds):
            for which, binary in enumerate(binaries):
                reset_server(base)
                result = run_against_serve(binary, base, work, f"serve-{index}-{which}", rate, seconds)
                result["loadavg1"] = loadavg()[0]
                runs[binary]["serve"].append(result)
                print(f"round {index + 1} {['old', 'new'][which]} serve: p99 {result['p99ms']:.2f} ms, "
                      f"{result['cpuMicrosecondsPerJourney']:.0f} us/journey, late {result['lateStarts']}",
                      file=sys.stderr)
            for which, binary in enumerate(binaries):
                result = run_bench(binary, work, f"bench-{index}-{which}", rate)
                result["loadavg1"] = loadavg()[0]
                runs[binary]["bench"].append(result)
                print(f"round {index + 1} {['old', 'new'][which]} bench: p99 {result['p99ms']:.2f} ms, "
                      f"late {result['lateStarts']}", file=sys.stderr)
    finally:
        server.terminate()
        server.wait()

    def med(values):
        return statistics.median(values) if values else None

    summary = {}
    for label, binary in zip(["old", "new"], binaries):
        serve = runs[binary]["serve"]
        bench = runs[binary]["bench"]
        summary[label] = dict(
            binary=binary,
            serveP99msMedian=med([r["p99ms"] for r in serve]),
            serveCPUMicrosecondsPerJourneyMedian=med([r["cpuMicrosecondsPerJourney"] for r in serve]),
            benchP99msMedian=med([r["p99ms"] for r in bench]),
            serve=serve, bench=bench)
    document = dict(rate=rate, seconds=seconds, rounds=rounds, loadBefore=load_before, loadAfter=loadavg(),
                    results=summary)
    print(json.dumps(document, indent=1))
    print(f"wrote {write_result('start-lag-ab', document)}", file=sys.stderr)


if __name__ == "__main__":
    main()
