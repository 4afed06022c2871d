#!/usr/bin/env bash
# Reading a run's attempts.csv back (ReportCSVReader.attempts, as `run` does for report.html and
# `compare`/`merge` do), before and after: `optolink-client-bench csv-read` built from BASE (the
# library before, this tree's benchmark file) and from this tree, run RUNS times each, interleaved
# (the order alternates), each run a fresh process on the same file. Writes medians to
# Benchmarks/results/csv-read.json. Other builds may share the machine: the load average is recorded.
#   Benchmarks/csv-read.sh [BASE] [RUNS] [ROWS]
set -euo pipefail
cd "$(dirname "$0")/.."
base="${1:-3f01a755602361c26ca1ade1f43a50d7faa27ee4}"  # main before the byte-level reader
runs="${2:-5}"
rows="${3:-200000}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

swift build -c release --product optolink-client-bench 2>&1 | tail -1
after=".build/release/optolink-client-bench"
# BASE's tree in a fixed place, so a second sitting rebuilds only what changed.
src=".build-csv-read-base/src-$base"
if [ ! -d "$src" ]; then
    mkdir -p "$src"
    git archive "$base" | tar -x -C "$src"
fi
for f in Benchmarks/ClientLayersBench/*.swift; do
    cmp -s "$f" "$src/$f" || cp "$f" "$src/$f"
done
swift build -c release --product optolink-client-bench --package-path "$src" \
    --scratch-path .build-csv-read-base 2>&1 | tail -1
before=".build-csv-read-base/release/optolink-client-bench"

file="$work/attempts.csv"
"$after" csv-read --file "$file" --rows "$rows" >/dev/null  # writes the file (not timed)
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
: >"$work/results"
for i in $(seq 1 "$runs"); do
    if ((i % 2)); then order="before after"; else order="after before"; fi
    for side in $order; do
        bin="$before"
        [ "$side" = after ] && bin="$after"
        echo "$side $("$bin" csv-read --file "$file")" | tee -a "$work/results"
    done
done
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"

mkdir -p Benchmarks/results
python3 - "$work/results" "$base" "$load_before" "$load_after" "$runs" <<'PY'
import datetime, json, os, statistics, subprocess, sys
path, base, load_before, load_after, runs = sys.argv[1:6]
samples = {"before": [], "after": []}
for line in open(path):
    side, data = line.split(" ", 1)
    samples[side].append(json.loads(data))
def summary(side):
    s = samples[side]
    rows, size = s[0]["rows"], s[0]["bytes"]
    assert all(x["rows"] == rows and x["bytes"] == size for x in s), "runs read different files"
    seconds = statistics.median(x["seconds"] for x in s)
    return {
        "rows": rows, "bytes": size, "seconds": round(seconds, 4),
        "cpuSeconds": round(statistics.median(x["cpuSeconds"] for x in s), 4),
        "rowsPerSecond": round(rows / seconds), "bytesPerSecond": round(size / seconds),
        "runs": [round(x["seconds"], 4) for x in s],
    }
before, after = summary("before"), summary("after")
assert before["rows"] == after["rows"], "before and after read a different number of rows"
commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
result = {
    "what": "ReportCSVReader.attempts on one attempts.csv written by CSVStreamWriter/appendCSVRow; "
            "median of interleaved runs, each a fresh release process",
    "commit": commit, "base": base[:7], "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    "machine": {"cpus": os.cpu_count(), "cpu": cpu, "loadAverageBefore": load_before, "loadAverageAfter": load_after,
                "note": "shared machine: other builds and tests ran at the same time"},
    "runsEach": int(runs), "before": before, "after": after,
    "speedup": round(before["seconds"] / after["seconds"], 2),
    # Each run's before and after ran back to back: the median of their ratios is the least
    # sensitive to load that changes during the sitting.
    "pairedSpeedupMedian": round(statistics.median(
        b["seconds"] / a["seconds"] for b, a in zip(samples["before"], samples["after"])), 2),
    "cpuSpeedup": round(before["cpuSeconds"] / after["cpuSeconds"], 2),
}
json.dump(result, open("Benchmarks/results/csv-read.json", "w"), indent=2)
print(f"before {before['seconds']} s ({before['rowsPerSecond']} rows/s), after {after['seconds']} s "
      f"({after['rowsPerSecond']} rows/s): {result['speedup']} x; load {load_before} -> {load_after}")
PY
