#!/usr/bin/env bash
# The soak driver beside hey and wrk through nginx terminating TLS, and through the same nginx
# over plain http, in one sitting.
#
# Installs nginx, openssl, wrk and hey (Debian), builds optolink-soak in release, makes a
# throwaway CA and a certificate for 127.0.0.1, starts one `optolink-soak serve` (limits off)
# behind one nginx (TLS 1.2/1.3 and plain http listeners, keep-alive to the upstream), then runs
# hey, wrk and `optolink-soak run` (native transport, --cacert) on POST /sdk/events with 64
# connections for SECONDS_PER_RUN seconds, over https and over http, ROUNDS interleaved rounds,
# and keeps the medians. Writes Benchmarks/results/peers-tls.json.
#
# Usage: bash Benchmarks/peers-tls.sh        (SECONDS_PER_RUN=10 ROUNDS=3 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
export SECONDS_PER_RUN="${SECONDS_PER_RUN:-10}" ROUNDS="${ROUNDS:-3}" CONNECTIONS="${CONNECTIONS:-64}"
ulimit -n 65536 2>/dev/null || true

need_apt=()
command -v nginx >/dev/null || need_apt+=(nginx)
command -v openssl >/dev/null || need_apt+=(openssl)
command -v wrk >/dev/null || need_apt+=(wrk)
command -v hey >/dev/null || need_apt+=(hey)
if ((${#need_apt[@]})); then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
swift build -c release --product optolink-soak 2>&1 | tail -1
exec python3 Benchmarks/peers/peers_tls.py
