"""Benchmarks/peers.sh's measuring half: every tool on POST /sdk/events, side by side, medians.

Run through Benchmarks/peers.sh (it installs the tools and builds optolink-soak first).
"""
import csv
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone

from serving import (DEVICE, KEY, ROOT, allocations_per_request, free_port, loadavg, register_device, reset_server,
                     start_serve)
from serving import timed as serving_timed

SOAK = os.path.join(ROOT, ".build", "release", "optolink-soak")
LAYERS = os.path.join(ROOT, ".build", "release", "optolink-client-bench")
SECONDS = int(os.environ.get("SECONDS_PER_RUN", "10"))
ROUNDS = int(os.environ.get("ROUNDS", "3"))
CONNECTIONS = int(os.environ.get("CONNECTIONS", "64"))
BODY = json.dumps({"deviceId": DEVICE, "eventName": "bench", "properties": {"k": "v"}}, separators=(",", ":"))
WORK = tempfile.mkdtemp(prefix="peers-")


def log(text):
    print(f"peers: {text}", file=sys.stderr, flush=True)


def timed(cmd, out_path, limit=None):
    """serving.timed, by default killed after 3 runs' length plus 60 s."""
    return serving_timed(cmd, out_path, limit if limit is not None else 3 * SECONDS + 60)


def text(path):
    with open(path, errors="replace") as f:
        return f.read()


# MARK: - the tools


def run_wrk(url, tag):
    script = os.path.join(WORK, "events.lua")
    with open(script, "w") as f:
        f.write('wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n')
        f.write(f'wrk.headers["Authorization"] = "Bearer {KEY}"\nwrk.body = \'{BODY}\'\n')
    out = os.path.join(WORK, f"{tag}.txt")
    code, cpu, _ = timed(["wrk", "-t2", f"-c{CONNECTIONS}", f"-d{SECONDS}s", "-s", script, url], out)
    body = text(out)
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", body).group(1))
    total = int(re.search(r"(\d+) requests in", body).group(1))
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", body)
    errors = int(bad.group(1)) if bad else 0
    socket_errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", body)
    if socket_errors:
        errors += sum(int(x) for x in socket_errors.groups())
    return dict(rate=rate, requests=total, cpu=cpu, errors=errors, exit=code)


def run_hey(url, tag):
    out = os.path.join(WORK, f"{tag}.txt")
    cmd = ["hey", "-z", f"{SECONDS}s", "-c", str(CONNECTIONS), "-m", "POST", "-T", "application/json",
           "-H", f"Authorization: Bearer {KEY}", "-d", BODY, url]
    code, cpu, _ = timed(cmd, out)
    body = text(out)
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", body).group(1))
    statuses = {int(s): int(n) for s, n in re.findall(r"\[(\d{3})\]\s+(\d+) responses", body)}
    total = sum(statuses.values())
    errors = total - statuses.get(200, 0)
    err_block = re.search(r"Error distribution:(.*)", body, re.S)
    if err_block:
        errors += sum(int(n) for n in re.findall(r"\[(\d+)\]", err_block.group(1)))
    return dict(rate=rate, requests=total, cpu=cpu, errors=errors, exit=code)


def run_siege(url, tag):
    out = os.path.join(WORK, f"{tag}.txt")
    rc = os.path.join(WORK, "siegerc")
    with open(rc, "w") as f:
        f.write("protocol = HTTP/1.1\nconnection = keep-alive\nshow-logfile = false\nlogging = false\n")
    cmd = ["siege", "-R", rc, "-b", "-c", str(CONNECTIONS), "-t", f"{SECONDS}S", "--content-type",
           "application/json", "-H", f"Authorization: Bearer {KEY}", f"{url} POST {BODY}"]
    code, cpu, _ = timed(cmd, out)
    body = text(out)
    m = re.search(r'"transaction_rate":\s*([\d.]+)', body) or re.search(r"Transaction rate:\s*([\d.]+)", body)
    t = re.search(r'"transactions":\s*(\d+)', body) or re.search(r"Transactions:\s*(\d+)", body)
    f = re.search(r'"failed_transactions":\s*(\d+)', body) or re.search(r"Failed transactions:\s*(\d+)", body)
    return dict(rate=float(m.group(1)), requests=int(t.group(1)), cpu=cpu, errors=int(f.group(1)) if f else 0,
                exit=code)


def run_locust(url, tag):
    locustfile = os.path.join(WORK, "locustfile.py")
    with open(locustfile, "w") as f:
        f.write(
            "from locust import constant\nfrom locust.contrib.fasthttp import FastHttpUser\nfrom locust import task\n"
            "class Events(FastHttpUser):\n    wait_time = constant(0)\n"
            "    @task\n    def events(self):\n"
            f"        self.client.post('/sdk/events', data={BODY!r}, headers={{'Content-Type': 'application/json', "
            f"'Authorization': 'Bearer {KEY}'}})\n")
    prefix = os.path.join(WORK, tag)
    out = prefix + ".txt"
    base = url.rsplit("/sdk/events", 1)[0]
    cmd = [os.path.join(ROOT, "Benchmarks", ".venv", "bin", "locust"), "-f", locustfile, "--headless", "-u",
           str(CONNECTIONS), "-r", str(CONNECTIONS), "-t", f"{SECONDS}s", "--host", base, "--csv", prefix,
           "--only-summary", "--loglevel", "WARNING"]
    code, cpu, _ = timed(cmd, out)
    with open(prefix + "_stats.csv") as f:
        rows = {r["Name"]: r for r in csv.DictReader(f)}
    row = rows.get("Aggregated") or next(iter(rows.values()))
    return dict(rate=float(row["Requests/s"]), requests=int(row["Request Count"]), cpu=cpu,
                errors=int(row["Failure Count"]), exit=code)


def run_driver(base, tag, transport, repeat=None, extra=()):
    """`optolink-soak run` on driver.json; `repeat` overrides how many events a device sends before
    its journey ends and a new one relaunches it (driver.json: until the run ends); `extra`: more
    `run` flags (e.g. `--cacert FILE`)."""
    with open(os.path.join(ROOT, "Benchmarks", "peers", "driver.json")) as f:
        profile = json.load(f)
    profile["load"]["duration"] = SECONDS + 1  # 1 s warm-up, then the counted window
    if repeat is not None:
        profile["journeys"][0]["steps"][1]["repeat"] = repeat
    path = os.path.join(WORK, f"{tag}-profile.json")
    with open(path, "w") as f:
        json.dump(profile, f)
    report = os.path.join(WORK, tag)
    out = report + ".txt"
    cmd = [SOAK, "run", path, "--base-url", base, "--api-key", KEY, "--org-key", "acme", "--no-progress",
           "--transport", transport, "--out", report, *extra]
    code, cpu, _ = timed(cmd, out)
    with open(os.path.join(report, "summary.json")) as f:
        summary = json.load(f)
    counted = 0
    with open(os.path.join(report, "attempts.csv")) as f:
        for r in csv.DictReader(f):
            if r["endpoint"] == "events" and r["status"] == "200" and float(r["actual_start"]) >= 1 \
                    and float(r["end"]) <= 1 + SECONDS:
                counted += 1
    return dict(rate=counted / SECONDS, requests=summary["totals"]["attempts"], cpu=cpu,
                errors=summary["totals"]["errors"], exit=code, transport=summary["run"].get("transport"))


def run_layer(base, tag, layer):
    """The driver's lower layers alone (optolink-client-bench): the native client, or the SDK over it."""
    out = os.path.join(WORK, f"{tag}.txt")
    cmd = [LAYERS, "--base-url", base, "--layer", layer, "--seconds", str(SECONDS), "--connections",
           str(CONNECTIONS), "--device-id", DEVICE, "--api-key", KEY]
    code, cpu, _ = timed(cmd, out)
    result = json.loads(text(out).strip().splitlines()[-1])
    return dict(rate=result["rate"], requests=result["requests"], cpu=cpu, errors=result["errors"], exit=code)


TOOLS = {
    "wrk": lambda url, base, tag: run_wrk(url, tag),
    "hey": lambda url, base, tag: run_hey(url, tag),
    "siege": lambda url, base, tag: run_siege(url, tag),
    "locust": lambda url, base, tag: run_locust(url, tag),
    "optolink-soak native": lambda url, base, tag: run_driver(base, tag, "native"),
    "optolink-soak urlsession": lambda url, base, tag: run_driver(base, tag, "urlsession"),
    # Not a target: what relaunches cost, a first launch (/match, /session: 4 % of the requests,
    # not counted, and /match costs the shared server more) every 50 events.
    "optolink-soak native, relaunch every 50 events": lambda url, base, tag: run_driver(base, tag, "native", 50),
    # Not peers: the driver's layers without the soak's journeys, recording and verdicts.
    "layer: native client alone": lambda url, base, tag: run_layer(base, tag, "client"),
    "layer: SDK on the native transport": lambda url, base, tag: run_layer(base, tag, "sdk"),
}


def start_lag_against_serve(base):
    """The open model at 5,000 journeys/s (relaunch + one event, 1,000 devices, 3 s) against the peers'
    `optolink-soak serve` in its own process: start lag and the driver's CPU per journey."""
    profile = {
        "name": "peers-start-lag", "seed": 1, "devices": {"count": 1000},
        "journeys": [{"name": "tick", "weight": 1,
                      "steps": [{"kind": "relaunch"}, {"kind": "event", "name": "tick", "properties": {}}]}],
        "load": {"model": "open", "startRate": 5000, "stages": [{"duration": 3, "target": 5000}],
                 "maxInFlight": 5000, "grace": 10},
        "sdk": {"timeout": 5, "maxRetries": 2},
    }
    path = os.path.join(WORK, "start-lag-profile.json")
    with open(path, "w") as f:
        json.dump(profile, f)
    report = os.path.join(WORK, "start-lag")
    code, cpu, wall = timed([SOAK, "run", path, "--base-url", base, "--api-key", KEY, "--org-key", "acme",
                             "--no-progress", "--out", report], report + ".txt")
    with open(os.path.join(report, "summary.json")) as f:
        summary = json.load(f)
    journeys = summary["journeys"]
    started = journeys["started"] or 1
    return dict(rate=5000, seconds=3, journeys=journeys["started"], lateStarts=journeys.get("lateStarts"),
                p50=journeys["startLag"]["p50"], p99=journeys["startLag"]["p99"], max=journeys["startLag"]["max"],
                attempts=summary["totals"]["attempts"], errors=summary["totals"]["errors"],
                driverCPUSeconds=cpu, driverCPUMicrosecondsPerJourney=1e6 * cpu / started, exit=code,
                loadavg1=loadavg()[0])


# MARK: - profile


def perf_profile(base):
    """perf record of one more native driver run (5 s in its steady part); top symbols and areas."""
    if not shutil.which("perf"):
        return None
    with open(os.path.join(ROOT, "Benchmarks", "peers", "driver.json")) as f:
        profile = json.load(f)
    path = os.path.join(WORK, "perf-profile.json")
    with open(path, "w") as f:
        json.dump(profile, f)
    out = open(os.path.join(WORK, "perf-run.txt"), "w")
    proc = subprocess.Popen([SOAK, "run", path, "--base-url", base, "--api-key", KEY, "--org-key", "acme",
                             "--no-progress", "--out", os.path.join(WORK, "perf-run")], stdout=out,
                            stderr=subprocess.STDOUT, cwd=ROOT)
    time.sleep(3)
    data = os.path.join(WORK, "perf.data")
    subprocess.run(["perf", "record", "-F", "499", "-g", "-p", str(proc.pid), "-o", data, "--", "sleep", "5"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    proc.wait()
    flat = subprocess.run(["perf", "report", "-i", data, "--stdio", "--no-children", "--sort", "dso,sym", "-g",
                           "none"], capture_output=True, text=True).stdout
    inclusive = subprocess.run(["perf", "report", "-i", data, "--stdio", "--children", "--sort", "sym", "-g",
                                "none"], capture_output=True, text=True).stdout
    top = [line.rstrip()[:150] for line in flat.splitlines() if line.strip() and not line.startswith("#")][:25]
    areas = {
        "native client loop thread (ClientLoop.run)": r"ClientLoopC3run",
        "recorder middleware (intercept: queues the attempt's events)": r"RecorderC9intercept_7context4next.*TY0_$",
        "recorder writer thread (opl-recorder: rows, histograms, calls, verdict passes)": r"RecorderC11startWriter",
        "native transport adapter (NativeTransport.send)": r"NativeTransportV4send",
        "recorder: CSV rows (attempts.csv, calls.csv; on the writer)": r"appendCSVRow",
        "recorder: live verdict passes (fed per attempt and call; on the writer)": r"TypedPassBox.*consume",
        "kernel: send/recv system calls": r"__x64_sys_(sendto|recvfrom|read|write)$",
        "kernel: epoll_wait": r"__x64_sys_epoll_wait$",
    }
    owners = own_code_shares(data)
    shares = {}
    for name, pattern in areas.items():
        best = 0.0
        for line in inclusive.splitlines():
            m = re.match(r"\s+([\d.]+)%\s+[\d.]+%\s+\[.\]\s+(\S+)", line)
            if m and re.search(pattern, m.group(2)):
                best = max(best, float(m.group(1)))
        shares[name] = best
    return dict(top=top, areas=shares, owners=owners)


# Frames of the project's binary that are library code specialised into it, not its own.
LIBRARY_FRAME = re.compile(
    r"^(specialized )?(Array|ContiguousArray|Dictionary|Set|String|Substring|Hasher|_Native|__Raw|_Dictionary|"
    r"_Array|Sequence|Collection|MutableCollection|RangeReplaceable|Optional|Mutex|LockedBox|withUnsafe|Unsafe|"
    r"outlined|value witness|destroy|initializeWith|assignWith|__swift|merged |Data|_StringGuts|static String|"
    r"static Array|reabstraction thunk|thunk|partial apply|_ContiguousArrayBuffer|_ArrayBuffer|Slice|"
    r"IndexingIterator|__DataStorage)")


def own_code_shares(data, binary=SOAK, limit=25):
    """Each sample of `data` counted once, for the innermost frame of the project's own code in its
    stack (the Swift runtime, libc and the kernel under it go to that caller); the top `limit`.
    Unlike the inclusive areas, this follows no async call chain, so its rows add up."""
    script = subprocess.run(["perf", "script", "-i", data, "-F", "comm,ip,sym,dso"], capture_output=True,
                            text=True).stdout
    samples, frames = [], None
    for line in script.splitlines():
        if not line.strip():
            if frames is not None:
                samples.append(frames)
            frames = None
        elif not line.startswith("\t"):  # a sample's header (its thread); its frames follow, tab-indented
            frames = []
        elif frames is not None:
            m = re.match(r"\s*[0-9a-f]+ (\S+) \((.*)\)$", line)
            if m:
                frames.append((m.group(1), m.group(2)))
    if frames is not None:
        samples.append(frames)
    own = os.path.basename(binary)
    names = sorted({sym for frames in samples for sym, dso in frames if os.path.basename(dso) == own})
    demangled = subprocess.run(["swift", "demangle", "--simplified", "--compact"], input="\n".join(names),
                               capture_output=True, text=True).stdout.splitlines()
    readable = dict(zip(names, demangled))
    counts = {}
    for frames in samples:
        owner = "(the Swift runtime, libc or the kernel only)"
        for sym, dso in frames:
            name = readable.get(sym)
            if name and name != "[unknown]" and not LIBRARY_FRAME.search(name):
                owner = name
                break
        counts[owner] = counts.get(owner, 0) + 1
    total = max(1, len(samples))
    ranked = sorted(counts.items(), key=lambda item: -item[1])[:limit]
    return [dict(owner=owner[:120], share=round(100 * n / total, 2)) for owner, n in ranked]


# MARK: - main


def median(values):
    return statistics.median(values) if values else None


def main():
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    url = base + "/sdk/events"
    server_log = open(os.path.join(WORK, "serve.txt"), "w")
    server = start_serve(SOAK, port, stdout=server_log, stderr=subprocess.STDOUT)
    try:
        log(f"registered the bench device ({register_device(base)})")
        started = datetime.now(timezone.utc).isoformat(timespec="seconds")
        load_before = loadavg()
        runs = {name: [] for name in TOOLS}
        for round_index in range(ROUNDS):
            for name, run in TOOLS.items():
                load = loadavg()
                try:
                    reset_server(base)  # every tool meets the server in the same state
                    result = run(url, base, f"{name.replace(' ', '-')}-{round_index}")
                except Exception as error:  # a tool that failed is reported, not fatal
                    result = dict(rate=0.0, requests=0, cpu=0.0, errors=-1, exit=-1, failure=str(error))
                result["loadavg1"] = load[0]
                runs[name].append(result)
                log(f"round {round_index + 1}/{ROUNDS} {name}: {result['rate']:.0f} req/s, "
                    f"{result['errors']} errors, load {load[0]}")
        load_after = loadavg()
        log("driver figures: optolink-soak bench --transport native")
        bench_out = os.path.join(WORK, "bench.json")  # kept in peers.json as driver.bench
        timed([SOAK, "bench", "--devices", "1000,10000", "--rate", "5000", "--seconds", "3", "--transport",
               "native", "--out", bench_out], os.path.join(WORK, "bench.txt"), limit=900)
        with open(bench_out) as f:
            bench = json.load(f)
        log("start lag at 5,000 journeys/s against serve (its own process)")
        try:
            served_lag = start_lag_against_serve(base)
        except Exception as error:  # reported, not fatal
            served_lag = dict(failure=str(error))
        log("heap allocations per request (malloc-count.c)")
        allocations = allocations_per_request(SOAK, base, WORK)
        log("perf profile of one native run")
        profile = perf_profile(base)
    finally:
        server.terminate()
        server.wait()

    tools = {}
    for name, results in runs.items():
        ok = [r for r in results if r["exit"] == 0 or name.startswith("optolink")]
        rate = median([r["rate"] for r in ok])
        cpu_per_k = median([1000 * r["cpu"] / r["requests"] for r in ok if r["requests"] > 0])
        tools[name] = dict(rounds=results, medianRequestsPerSecond=rate, medianCPUSecondsPer1000=cpu_per_k,
                           errors=sum(max(0, r["errors"]) for r in results))
    native = tools["optolink-soak native"]["medianRequestsPerSecond"] or 0
    hey = tools["hey"]["medianRequestsPerSecond"] or 0
    wrk = tools["wrk"]["medianRequestsPerSecond"] or 0
    urlsession = tools["optolink-soak urlsession"]["medianRequestsPerSecond"] or 0
    ratios = {
        "native/hey": native / hey if hey else None,
        "native/wrk": native / wrk if wrk else None,
        "native/urlsession": native / urlsession if urlsession else None,
        "native client alone/hey": (tools["layer: native client alone"]["medianRequestsPerSecond"] or 0) / hey
        if hey else None,
        "SDK on the native transport/hey": (tools["layer: SDK on the native transport"]["medianRequestsPerSecond"]
                                            or 0) / hey if hey else None,
    }
    targets = {
        "native >= hey": bool(hey) and native >= hey,
        "native >= 0.3 x wrk": bool(wrk) and native >= 0.3 * wrk,
        "native >= 5 x urlsession": bool(urlsession) and native >= 5 * urlsession,
        "0 errors in the driver's report": tools["optolink-soak native"]["errors"] == 0,
        "memory per launched device <= 50 KB": (bench.get("memory") or {}).get("bytesPerDevice", 1e9) <= 51200,
        "start lag p99 at 5,000 journeys/s <= 5 ms": (bench.get("startLag") or {}).get("p99", 1) <= 0.005,
    }
    result = dict(
        date=started, cores=os.cpu_count(), secondsPerRun=SECONDS, rounds=ROUNDS, connections=CONNECTIONS,
        route="POST /sdk/events", loadAverageBefore=load_before, loadAverageAfter=load_after,
        notes=[
            "one optolink-soak serve (limits off, 2 event loops) and every tool share this machine's cores",
            "other builds may have run on the machine at the same time: see loadAverage and each round's loadavg1",
            "optolink-soak rate: POST /sdk/events answered 200 between 1 s and 1 s + secondsPerRun (the SDK, "
            "recorder and CSV rows included); peers: the tool's own report",
            "optolink-soak's 64 virtual devices launch once in the warm-up second and then send events until "
            "the end (Benchmarks/peers/driver.json); the row 'relaunch every 50 events' shows what relaunches "
            "cost, not a target",
            "CPU seconds: user + system of the tool's process and its children (kernel rusage, as /proc reports it)",
        ],
        tools=tools, ratios=ratios, targets=targets,
        driver=dict(bytesPerDevice=(bench.get("memory") or {}).get("bytesPerDevice"),
                    startLagP99Seconds=(bench.get("startLag") or {}).get("p99"),
                    startLagRate=(bench.get("startLag") or {}).get("rate"), bench=bench,
                    startLagAgainstServe=served_lag, mallocsPerRequest=allocations),
        profile=profile)
    os.makedirs(os.path.join(ROOT, "Benchmarks", "results"), exist_ok=True)
    out = os.path.join(ROOT, "Benchmarks", "results", "peers.json")
    with open(out + ".tmp", "w") as f:
        json.dump(result, f, indent=2, sort_keys=True)
    os.replace(out + ".tmp", out)
    log(f"wrote {out}; its tables for Benchmarks/README.md follow on stdout")
    print(markdown(result))


def markdown(r):
    """The figures of `r` as the Markdown tables Benchmarks/README.md shows."""
    def fmt(v, digits=0):
        return "–" if v is None else f"{v:,.{digits}f}"

    lines = [
        "# optolink-soak beside its peers",
        "",
        "From `Benchmarks/results/peers.json` (`Benchmarks/peers.sh`). One "
        f"`optolink-soak serve` with limits off; every tool sends `{r['route']}` over {r['connections']} "
        f"connections for {r['secondsPerRun']} s, {r['rounds']} interleaved rounds, medians. "
        f"{r['cores']} cores, run {r['date']}; load average before {r['loadAverageBefore']}, after "
        f"{r['loadAverageAfter']}. The machine may have been shared with other builds: compare the ratios "
        "measured side by side here, not the absolute rates with another day's.",
        "",
        "| tool | requests/s (median) | CPU s per 1,000 requests | errors | rounds (req/s) |",
        "|---|---|---|---|---|",
    ]
    for name, t in r["tools"].items():
        rounds = ", ".join(fmt(x["rate"]) for x in t["rounds"])
        lines.append(f"| {name} | {fmt(t['medianRequestsPerSecond'])} | {fmt(t['medianCPUSecondsPer1000'], 3)} | "
                     f"{t['errors']} | {rounds} |")
    lines += ["", "## Targets (ratios in this run)", "", "| target | observed | met |", "|---|---|---|"]
    ratios = r["ratios"]
    observed = {
        "native >= hey": f"{fmt(ratios['native/hey'], 3)} × hey",
        "native >= 0.3 x wrk": f"{fmt(ratios['native/wrk'], 3)} × wrk",
        "native >= 5 x urlsession": f"{fmt(ratios['native/urlsession'], 1)} × urlsession",
        "0 errors in the driver's report": str(r["tools"]["optolink-soak native"]["errors"]),
        "memory per launched device <= 50 KB": f"{fmt((r['driver']['bytesPerDevice'] or 0) / 1024, 1)} KB",
        "start lag p99 at 5,000 journeys/s <= 5 ms": f"{fmt((r['driver']['startLagP99Seconds'] or 0) * 1000, 2)} ms",
    }
    for name, met in r["targets"].items():
        lines.append(f"| {name} | {observed[name]} | {'yes' if met else 'no'} |")
    layers = [(name, r["tools"].get(name)) for name in ("layer: native client alone",
                                                         "layer: SDK on the native transport",
                                                         "optolink-soak native")]
    hey_tool = r["tools"].get("hey") or {}
    if all(t for _, t in layers) and hey_tool.get("medianRequestsPerSecond"):
        hey_rate, hey_cpu = hey_tool["medianRequestsPerSecond"], hey_tool["medianCPUSecondsPer1000"]
        lines += ["", "## The driver's layers beside hey (not targets: where the driver's CPU goes)", "",
                  "`optolink-client-bench` runs the lower layers alone in the same rounds: the native client "
                  "sending the SDK's events request, then SDK instances calling `trackEvent` over it, without "
                  "the soak's journeys, recorder, CSV rows and verdicts. The last row is the whole driver.", "",
                  "| layer | requests/s | × hey | CPU s per 1,000 requests | × hey's CPU |", "|---|---|---|---|---|"]
        for name, t in layers:
            label = {"optolink-soak native": "whole driver (`optolink-soak run`, native)"}.get(
                name, name.removeprefix("layer: "))
            rate, cpu = t["medianRequestsPerSecond"] or 0, t["medianCPUSecondsPer1000"] or 0
            lines.append(f"| {label} | {fmt(rate)} | {fmt(rate / hey_rate, 2)} | {fmt(cpu, 3)} | "
                         f"{fmt(cpu / hey_cpu, 2) if hey_cpu else '–'} |")
    served = r["driver"].get("startLagAgainstServe") or {}
    bench_lag = (r["driver"].get("bench") or {}).get("startLag") or {}
    lines += ["", "## Start lag at 5,000 journeys/s (relaunch + one event: 2 requests per journey)", "",
              "| setup | p50 | p99 | late starts | journeys | driver CPU per journey |", "|---|---|---|---|---|---|"]
    if bench_lag:
        lines.append(f"| `optolink-soak bench` (emulator in the driver's process, the target's figure) | "
                     f"{fmt(bench_lag.get('p50', 0) * 1000, 2)} ms | {fmt(bench_lag.get('p99', 0) * 1000, 2)} ms | "
                     f"{bench_lag.get('lateStarts')} | {bench_lag.get('journeys')} | – |")
    if "p99" in served:
        lines.append(f"| `optolink-soak run` against the peers' `serve` (own process), load {served['loadavg1']} | "
                     f"{fmt(served['p50'] * 1000, 2)} ms | {fmt(served['p99'] * 1000, 2)} ms | "
                     f"{served['lateStarts']} | {served['journeys']} | "
                     f"{fmt(served['driverCPUMicrosecondsPerJourney'])} µs |")
    if r["driver"].get("mallocsPerRequest") is not None:
        lines += ["", f"Heap allocations per request of the driver (closed model, `Benchmarks/peers/malloc-count.c`): "
                      f"{fmt(r['driver']['mallocsPerRequest'], 1)}."]
    if r.get("profile"):
        lines += ["", "## Where the driver's time goes (perf, one native run, 5 s of its steady part)", "",
                  "Inclusive share of the driver process's samples (a sample can count in more than one row; "
                  "perf follows no async call chain, so these are the synchronous parts of each area):", "",
                  "| area | share |", "|---|---|"]
        for name, share in r["profile"]["areas"].items():
            lines.append(f"| {name} | {share:.1f}% |")
        if r["profile"].get("owners"):
            lines += ["", "Each sample counted once, for the innermost function of the project's own code on its "
                          "stack (runtime, libc and kernel time under it included; the rows add up):", "",
                      "| function | share |", "|---|---|"]
            for row in r["profile"]["owners"]:
                lines.append(f"| `{row['owner']}` | {row['share']:.2f}% |")
        lines += ["", "Top symbols (self time):", "", "```"] + r["profile"]["top"] + ["```"]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
