#!/usr/bin/env bash
# Runs a long soak (default Profiles/soak-1h.json, 1 hour at ~115 requests/s with faults) against
# the embedded emulator in a release build and writes its result file:
# sustained request rate, RSS after warm-up (first/last/min/max and the spread around the mean)
# for the one process that holds the driver and the embedded emulator, what the emulator held over
# time, CSV and ledger sizes, rss.growth_mb_per_hour, and the verdicts.
#
#   Benchmarks/soak-1h.sh                                   # the hour (the lead's run)
#   Benchmarks/soak-1h.sh Profiles/soak-10m.json            # ten minutes, same rate and faults
#   Benchmarks/soak-1h.sh Profiles/soak-10m.json --duration 120
#
# The report directory (CSVs, ledger.jsonl, summary.json) goes to Reports/<name>-bench/ (replaced).
# The hour's result overwrites Benchmarks/results/soak-1h.json, the one tracked result of this
# script; a run of any other profile writes Reports/<name>-bench/result.json instead, so a shorter
# run never replaces the hour's figures.
set -euo pipefail
cd "$(dirname "$0")/.."
profile="${1:-Profiles/soak-1h.json}"
shift || true
name="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["name"])' "$profile")"
out="Reports/${name}-bench"
result="$out/result.json"
[ "$name" = soak-1h ] && result="Benchmarks/results/soak-1h.json"
ulimit -n 65536 2>/dev/null || ulimit -n 20000 2>/dev/null || true
swift build -c release --product optolink-soak
rm -rf "$out"
mkdir -p Reports Benchmarks/results
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
status=0
.build/release/optolink-soak run "$profile" --out "$out" --no-progress "$@" || status=$?
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$out" "$result" "$status" "$load_before" "$load_after" "$profile" "$*" <<'PY'
import json, os, sys, tempfile
out, result, status, load_before, load_after, profile, args = sys.argv[1:8]
s = json.load(open(os.path.join(out, "summary.json")))
m = s.get("metrics", {})
interval = s.get("intervalSeconds", 1)
rows = s.get("timeline", [])
rss = s.get("rss", [])
end = max((r["t"] for r in rss), default=0)
# Warm-up: the first 10 % of the run, at least 5 minutes (soak profiles bring their 5,000 devices
# into use over the first ~210 s at 24 journeys/s, each device's SDK state a fixed cost), and
# never more than half the run.
warm = min(max(0.1 * end, 300), end / 2)
late = [r for r in rss if r["t"] >= warm]
def stats(values):
    if not values:
        return None
    mean = sum(values) / len(values)
    return {
        "first": values[0], "last": values[-1], "min": min(values), "max": max(values), "mean": round(mean),
        "spreadAroundMean": round(max(abs(max(values) - mean), abs(mean - min(values))) / mean, 4) if mean else None,
    }
bytes_late = [r["bytes"] for r in late]
process = stats(bytes_late)
emulator_keys = ["ledgerInMemory", "ledgerTotal", "clicks", "devices", "limiterKeys"]
emulator = {}
for key in emulator_keys:
    values = [r["emulator"][key] for r in late if r.get("emulator")]
    if values:
        emulator[key] = {"first": values[0], "last": values[-1], "min": min(values), "max": max(values)}
# The sustained rate: attempts per second over the intervals where journeys were still starting.
active = [r for r in rows if r.get("journeys", 0) > 0]
def size(name):
    path = os.path.join(out, name)
    return os.path.getsize(path) if os.path.exists(path) else None
v = s.get("verdicts") or {}
doc = {
    "profile": profile, "extraArguments": args, "exitCode": int(status),
    "startedAt": s["run"]["startedAt"], "durationSeconds": s["run"]["durationSeconds"],
    "stopReason": s["run"]["stopReason"], "loadAverageBeforeAfter": [load_before, load_after],
    "requests": m.get("http.requests"),
    "requestsPerSecondWhileStarting": round(sum(r["attempts"] for r in active) / (len(active) * interval), 1)
    if active else None,
    "rss": {
        "scope": s.get("rssScope"),
        "warmUpSeconds": round(warm, 1), "samplesAfterWarmUp": len(late),
        "process": process,
        "flatWithin10Percent": process is not None and process["spreadAroundMean"] <= 0.10,
        "growthMiBPerHour": m.get("rss.growth_mb_per_hour"),
        "emulatorRetained": emulator,
    },
    "files": {name: size(name) for name in ["attempts.csv", "calls.csv", "ledger.jsonl", "summary.json"]},
    "verdicts": {
        "metrics": {k: m[k] for k in sorted(m) if k.split(".")[0] in
                    ("backoff", "retry", "reconcile", "limits", "events", "session", "identity", "identity_clear",
                     "attribution") and not k.endswith((".p50", ".p90", ".p99", ".min", ".max"))},
        "reconciliationAvailable": (v.get("reconciliation") or {}).get("available"),
    },
    "thresholds": [{"expression": t["expression"], "passed": t["passed"], "observed": t.get("observed")}
                   for t in s.get("thresholds", [])],
}
fd, tmp = tempfile.mkstemp(dir=os.path.dirname(result) or ".")
with os.fdopen(fd, "w") as f:
    json.dump(doc, f, indent=2, sort_keys=True)
    f.write("\n")
os.replace(tmp, result)
print(f"{result}: {doc['requestsPerSecondWhileStarting']} req/s, RSS after warm-up {process}, "
      f"growth {doc['rss']['growthMiBPerHour']} MiB/h, exit {status}")
PY
exit "$status"
