#!/usr/bin/env bash
# The memory check in real time: the same profile (default Profiles/soak-10m.json)
# for 30 s and for 120 s, each in a fresh release process; the longer run's peak RSS must stay
# within 10 % of the shorter one's. Peak = the largest RSS sample in summary.json (driver and
# embedded emulator share the process). Exit 1 when it does not. Not in `swift test`: it takes
# about 5 minutes (each run also waits out the profile's grace for calls in flight).
# --devices 600 (DEVICES=…): every virtual device's SDK state is a fixed cost paid the first time
# the device is used; with the profile's 5,000 devices at 24 journeys/s that takes ~210 s, longer
# than either run, so the comparison would measure the population, not the run's length.
set -euo pipefail
cd "$(dirname "$0")/.."
profile="${1:-Profiles/soak-10m.json}"
ulimit -n 65536 2>/dev/null || ulimit -n 20000 2>/dev/null || true
swift build -c release --product optolink-soak
peaks=()
for seconds in 30 120; do
    out="Reports/soak-memory-${seconds}s"
    rm -rf "$out"
    .build/release/optolink-soak run "$profile" --duration "$seconds" --devices "${DEVICES:-600}" --out "$out" \
        --no-progress >/dev/null 2>&1 || true
    peaks+=("$(python3 -c 'import json,sys; print(max(r["bytes"] for r in json.load(open(sys.argv[1]))["rss"]))' \
        "$out/summary.json")")
done
mkdir -p Benchmarks/results
python3 - "${peaks[0]}" "${peaks[1]}" "$profile" "${DEVICES:-600}" "$(cut -d' ' -f1-3 /proc/loadavg)" <<'PY'
import datetime, json, os, subprocess, sys, tempfile
short, long = int(sys.argv[1]), int(sys.argv[2])
ratio = long / short
print(f"peak RSS: 30 s run {short / 1048576:.1f} MiB, 120 s run {long / 1048576:.1f} MiB, ratio {ratio:.3f} (limit 1.10)")
commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
result = {
    "profile": sys.argv[3], "devices": int(sys.argv[4]), "commit": commit,
    "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    "loadAverageAfter": [float(x) for x in sys.argv[5].split()],
    "peakRSSBytes": {"30s": short, "120s": long}, "ratio": round(ratio, 4), "limit": 1.10, "pass": ratio <= 1.10,
}
path = "Benchmarks/results/soak-memory.json"
fd, tmp = tempfile.mkstemp(dir="Benchmarks/results")
with os.fdopen(fd, "w") as f:
    json.dump(result, f, indent=2)
    f.write("\n")
os.replace(tmp, path)
print(f"wrote {path}")
sys.exit(0 if ratio <= 1.10 else 1)
PY
