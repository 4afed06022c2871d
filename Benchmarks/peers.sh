#!/usr/bin/env bash
# The soak driver beside its peers, side by side on one machine at one time.
#
# Installs wrk, hey and siege (Debian) and Locust (PyPI, in Benchmarks/.venv), builds
# optolink-soak in release, starts one `optolink-soak serve` with limits off, registers the
# bench device, then runs every tool in turn on POST /sdk/events with 64 connections for
# SECONDS_PER_RUN seconds, ROUNDS interleaved rounds, and keeps the medians:
#   wrk, hey, siege, Locust (FastHttpUser, 1 process),
#   optolink-soak run (the SDK on the native transport), optolink-soak run --transport urlsession,
#   and the driver's lower layers alone (optolink-client-bench: the native client; the SDK over it).
# Then the driver's own figures on the native transport (optolink-soak bench: memory per launched
# device, start lag p99 at 5,000 journeys/s) and a perf profile of one more native run.
# Overwrites Benchmarks/results/peers.json and prints its figures as the Markdown tables of
# Benchmarks/README.md (load average recorded: the machine may be shared, so only ratios
# measured in the same run are meant to be compared).
#
# Usage: bash Benchmarks/peers.sh            (SECONDS_PER_RUN=10 ROUNDS=3 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
export SECONDS_PER_RUN="${SECONDS_PER_RUN:-10}" ROUNDS="${ROUNDS:-3}" CONNECTIONS="${CONNECTIONS:-64}"
ulimit -n 65536 2>/dev/null || true

need_apt=()
command -v wrk >/dev/null || need_apt+=(wrk)
command -v hey >/dev/null || need_apt+=(hey)
command -v siege >/dev/null || need_apt+=(siege)
command -v perf >/dev/null || need_apt+=(linux-perf)
if ((${#need_apt[@]})); then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
if [[ ! -x Benchmarks/.venv/bin/locust ]]; then
    python3 -m venv Benchmarks/.venv
    Benchmarks/.venv/bin/pip install -q locust
fi

swift build -c release --product optolink-soak 2>&1 | tail -1
swift build -c release --product optolink-client-bench 2>&1 | tail -1
exec python3 Benchmarks/peers/peers.py
