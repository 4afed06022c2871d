#!/usr/bin/env bash
# Benchmarks the soak driver itself (release build) and writes Benchmarks/results/soak-bench.json:
# RSS per virtual device (1,000 → 10,000 launched devices), request rate through the full driver
# vs a bare URLSession loop vs wrk on POST /sdk/events, and open-model start lag at 500 journeys/s.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v wrk >/dev/null 2>&1; then
    (apt-get install -y wrk >/dev/null 2>&1 || sudo apt-get install -y wrk >/dev/null 2>&1) || echo "wrk unavailable: skipping its reference" >&2
fi
# 10,000 devices and their connections need descriptors (docs/LINUX.md §1: descriptors per URLSession connection).
ulimit -n 65536 2>/dev/null || ulimit -n 20000 2>/dev/null || true
swift build -c release --product optolink-soak
exec .build/release/optolink-soak bench --out Benchmarks/results/soak-bench.json "$@"
