#!/usr/bin/env python3
"""Scrapes `optolink-soak run --metrics-listen` during a real run and parses every scrape with
prometheus_client's own parser (the format Prometheus and Grafana agents read).

usage: check_metrics.py SOAK_BINARY PROFILE OUT_DIR

Checks: every scrape parses; the families exist with their types (per-endpoint request counters by
status, latency histograms, 429s, in-flight calls, late starts, RSS); counters never go down
between scrapes; histogram buckets are cumulative and `+Inf` equals `_count`; the last scrape's
request counts do not exceed the run's summary.json. Exits 1 with a message on the first failure.
"""
import json
import re
import subprocess
import sys
import time
import urllib.request

from prometheus_client.parser import text_string_to_metric_families


def fail(message):
    print(f"metrics check FAILED: {message}", file=sys.stderr)
    sys.exit(1)


def main():
    binary, profile, out_dir = sys.argv[1:4]
    process = subprocess.Popen(
        [binary, "run", profile, "--no-progress", "--out", out_dir, "--metrics-listen", "127.0.0.1:0"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = None
    deadline = time.time() + 60
    while url is None and time.time() < deadline:
        line = process.stderr.readline()
        if not line:
            break
        match = re.search(r"metrics: (http://127\.0\.0\.1:\d+/metrics)", line)
        if match:
            url = match.group(1)
    if url is None:
        process.kill()
        fail("the run never printed its metrics address")

    scrapes = []
    while process.poll() is None and time.time() < deadline + 120:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                content_type = response.headers.get("Content-Type", "")
                text = response.read().decode("utf-8")
            if not content_type.startswith("text/plain"):
                fail(f"Content-Type {content_type!r}")
            scrapes.append(list(text_string_to_metric_families(text)))
        except (OSError, ValueError) as error:
            if process.poll() is None and not scrapes:
                fail(f"scrape failed while the run was going: {error}")
        time.sleep(0.5)
    process.stderr.read()
    code = process.wait(timeout=120)
    if code not in (0, 1):
        fail(f"run exited {code}")
    if len(scrapes) < 3:
        fail(f"only {len(scrapes)} scrapes during the run")

    expected = {
        "optolink_soak_requests": "counter",
        "optolink_soak_calls": "counter",
        "optolink_soak_attempt_latency_seconds": "histogram",
        "optolink_soak_call_latency_seconds": "histogram",
        "optolink_soak_429": "counter",
        "optolink_soak_errors": "counter",
        "optolink_soak_in_flight_calls": "gauge",
        "optolink_soak_late_starts": "counter",
        "optolink_soak_journeys": "counter",
        "process_resident_memory_bytes": "gauge",
    }
    previous = {}
    busy = 0
    for families in scrapes:
        by_name = {f.name: f for f in families}
        for name, kind in expected.items():
            if name not in by_name:
                fail(f"family {name} missing (have {sorted(by_name)})")
            if by_name[name].type != kind:
                fail(f"{name} is {by_name[name].type}, expected {kind}")
        rss = [s.value for s in by_name["process_resident_memory_bytes"].samples]
        if not rss or rss[0] <= 0:
            fail("RSS is not positive")
        for family in families:
            if family.type == "counter":
                for sample in family.samples:
                    key = (sample.name, tuple(sorted(sample.labels.items())))
                    if sample.value < previous.get(key, 0):
                        fail(f"counter {key} went down: {previous[key]} -> {sample.value}")
                    previous[key] = sample.value
            if family.type == "histogram":
                series = {}
                for sample in family.samples:
                    endpoint = sample.labels.get("endpoint")
                    entry = series.setdefault(endpoint, {"buckets": [], "count": None})
                    if sample.name.endswith("_bucket"):
                        entry["buckets"].append((float(sample.labels["le"]), sample.value))
                    elif sample.name.endswith("_count"):
                        entry["count"] = sample.value
                for endpoint, entry in series.items():
                    buckets = sorted(entry["buckets"])
                    values = [v for _, v in buckets]
                    if values != sorted(values):
                        fail(f"{family.name}{{endpoint={endpoint}}} buckets not cumulative: {buckets}")
                    if buckets[-1][0] != float("inf") or buckets[-1][1] != entry["count"]:
                        fail(f"{family.name}{{endpoint={endpoint}}} +Inf bucket != _count")
        requests = sum(s.value for s in by_name["optolink_soak_requests"].samples if s.name.endswith("_total"))
        if requests > 0:
            busy += 1
    if busy < 2:
        fail("fewer than 2 scrapes saw requests")

    with open(f"{out_dir}/summary.json") as handle:
        summary = json.load(handle)
    last = {f.name: f for f in scrapes[-1]}
    for sample in last["optolink_soak_requests"].samples:
        if not sample.name.endswith("_total"):
            continue
        endpoint, status = sample.labels["endpoint"], sample.labels["status"]
        final = summary["endpoints"].get(endpoint, {}).get("byStatus", {}).get(status, 0)
        if sample.value > final:
            fail(f"scraped {endpoint} {status} = {sample.value} exceeds the summary's {final}")
    print(f"metrics check: {len(scrapes)} scrapes parsed by prometheus_client, {busy} with traffic: passed")


if __name__ == "__main__":
    main()
