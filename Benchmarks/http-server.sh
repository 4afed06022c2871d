#!/usr/bin/env bash
# Benchmarks the OptoLink HTTP server against nginx with identical wrk settings and writes
# Benchmarks/results/http-server.json: every wrk run, plus per target the median requests/s and
# its ratio to the baseline's median at the same connection count.
#
#   Benchmarks/http-server.sh                          # wrk -t1, 64 and 256 connections, 3 rounds of 5 s
#   ROUNDS=1 DURATION=10s CONNECTIONS=64 Benchmarks/http-server.sh
#
# Targets: nginx with 1 and 2 workers (`return 200 "Hello, World!";`) and optolink-http-bench
# with 1 and 2 event loops (the same 13-byte text/plain body). All servers run at once and wrk
# visits them in turn, round after round, so background load on this shared machine hits every
# target alike; the medians' ratio is the figure to read, the absolute numbers are noisy.
#
# The staging emulator's POST /match (through `optolink-soak serve`, limits off) is a row too,
# against nginx's fixed body. Adding a row: start the server in the "extra targets" section, then
#   add_target NAME URL BASELINE [METHOD] [BODY] [CONTENT_TYPE]
# http-server.lua shapes the request from METHOD/BODY/CONTENT_TYPE. Everything binds 127.0.0.1;
# the processes this script starts are stopped on exit.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${OUT:-$ROOT/Benchmarks/results/http-server.json}"
DURATION="${DURATION:-5s}"
ROUNDS="${ROUNDS:-3}"
THREADS="${THREADS:-1}"
CONNECTIONS="${CONNECTIONS:-64 256}"
WARMUP="${WARMUP:-1s}"
LUA="$ROOT/Benchmarks/http-server.lua"
WORK="$(mktemp -d /tmp/optolink-http-bench.XXXXXX)"
PIDS=()

cleanup() {
    local pid
    for pid in "${PIDS[@]:-}"; do
        if [ -n "$pid" ]; then
            kill "$pid" 2>/dev/null || true
            wait "$pid" 2>/dev/null || true
        fi
    done
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

need() { command -v "$1" >/dev/null 2>&1; }
if ! need wrk || ! need nginx || ! need curl; then
    echo "installing wrk, nginx-light and curl" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq wrk nginx-light curl >/dev/null
fi
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"
ulimit -n 65536 2>/dev/null || true

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null \
        || echo $((20000 + RANDOM % 20000))
}

wait_listening() {  # PORT
    local _
    for _ in $(seq 1 200); do
        if curl -s -o /dev/null "http://127.0.0.1:$1/"; then return 0; fi
        sleep 0.05
    done
    echo "nothing answers on port $1" >&2
    return 1
}

start_nginx() {  # WORKERS PORT
    local dir="$WORK/nginx-$1"
    mkdir -p "$dir/logs" "$dir/tmp"
    cat >"$dir/nginx.conf" <<CONF
worker_processes $1;
daemon off;
pid $dir/nginx.pid;
error_log $dir/logs/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $dir/tmp/body;
    proxy_temp_path $dir/tmp/proxy;
    fastcgi_temp_path $dir/tmp/fastcgi;
    uwsgi_temp_path $dir/tmp/uwsgi;
    scgi_temp_path $dir/tmp/scgi;
    keepalive_requests 1000000;
    server {
        listen 127.0.0.1:$2;
        location / {
            default_type text/plain;
            return 200 "Hello, World!";
        }
    }
}
CONF
    "$NGINX" -p "$dir" -c "$dir/nginx.conf" &
    PIDS+=($!)
    wait_listening "$2"
}

start_optolink() {  # LOOPS PORT
    "$ROOT/.build/release/optolink-http-bench" --port "$2" --loops "$1" >"$WORK/optolink-$1.log" 2>&1 &
    PIDS+=($!)
    wait_listening "$2"
}

NAMES=(); URLS=(); BASELINES=(); METHODS=(); BODIES=(); CTYPES=()
add_target() {  # NAME URL BASELINE [METHOD] [BODY] [CONTENT_TYPE]
    NAMES+=("$1"); URLS+=("$2"); BASELINES+=("$3")
    METHODS+=("${4:-GET}"); BODIES+=("${5:-}"); CTYPES+=("${6:-}")
}

echo "building optolink-http-bench (release)" >&2
(cd "$ROOT" && swift build -c release --product optolink-http-bench >&2)

for w in 1 2; do
    port="$(free_port)"; start_nginx "$w" "$port"
    add_target "nginx/$w-worker" "http://127.0.0.1:$port/" ""
    port="$(free_port)"; start_optolink "$w" "$port"
    add_target "optolink-http/$w-loop" "http://127.0.0.1:$port/" "nginx/$w-worker"
done

# --- extra targets: the staging emulator's /match through `optolink-soak serve` ---
# Rate limits off (the limiter would answer 429 after 30 hits), so wrk measures the route:
# JSON body parsing, validation, the match ladder over an empty click store, the miss body.
echo "building optolink-soak (release)" >&2
(cd "$ROOT" && swift build -c release --product optolink-soak >&2)
printf '{"limits":{"enabled":false}}\n' >"$WORK/staging.json"
port="$(free_port)"
"$ROOT/.build/release/optolink-soak" serve --port "$port" --config "$WORK/staging.json" >"$WORK/staging.log" 2>&1 &
PIDS+=($!)
wait_listening "$port"
MATCH_BODY='{"platform":"iOS","osVersion":"18.1","deviceModel":"iPhone","language":"en-US","deviceId":"wrk-device-0001"}'
add_target "staging/match" "http://127.0.0.1:$port/match" "nginx/2-worker" POST "$MATCH_BODY" "application/json"

wrk_once() {  # INDEX CONNECTIONS DURATION [--latency]
    local i="$1"
    WRK_METHOD="${METHODS[$i]}" WRK_BODY="${BODIES[$i]}" WRK_CONTENT_TYPE="${CTYPES[$i]}" \
        wrk -t"$THREADS" -c"$2" -d"$3" ${4:-} -s "$LUA" "${URLS[$i]}"
}

RUNS=()
declare -A SAMPLES
for c in $CONNECTIONS; do
    for i in "${!NAMES[@]}"; do wrk_once "$i" "$c" "$WARMUP" >/dev/null 2>&1 || true; done
    for round in $(seq 1 "$ROUNDS"); do
        for i in "${!NAMES[@]}"; do
            line="$(wrk_once "$i" "$c" "$DURATION" --latency | sed -n 's/^WRKJSON //p')"
            [ -n "$line" ] || { echo "wrk produced no result for ${NAMES[$i]}" >&2; exit 1; }
            rps="$(sed -E 's/.*"requests_per_sec":([0-9.]+).*/\1/' <<<"$line")"
            SAMPLES["$i/$c"]="${SAMPLES["$i/$c"]:-} $rps"
            echo "round $round c=$c ${NAMES[$i]}: $rps req/s" >&2
            RUNS+=("{\"target\":\"${NAMES[$i]}\",\"method\":\"${METHODS[$i]}\",\"url\":\"${URLS[$i]}\",\"connections\":$c,\"round\":$round,\"result\":$line}")
        done
    done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

SUMMARY=()
for c in $CONNECTIONS; do
    for i in "${!NAMES[@]}"; do
        med="$(median <<<"${SAMPLES["$i/$c"]}")"
        ratio="null"; baseline="null"
        for j in "${!NAMES[@]}"; do
            if [ "${NAMES[$j]}" = "${BASELINES[$i]}" ]; then
                base="$(median <<<"${SAMPLES["$j/$c"]}")"
                ratio="$(awk -v a="$med" -v b="$base" 'BEGIN { printf "%.3f", a / b }')"
                baseline="\"${BASELINES[$i]}\""
            fi
        done
        echo "c=$c ${NAMES[$i]}: median $med req/s, ratio to ${BASELINES[$i]:-—}: $ratio" >&2
        SUMMARY+=("{\"target\":\"${NAMES[$i]}\",\"connections\":$c,\"median_requests_per_sec\":$med,\"samples\":[$(tr -s ' ' ',' <<<"${SAMPLES["$i/$c"]# }")],\"baseline\":$baseline,\"ratio_to_baseline\":$ratio}")
    done
done

json_list() {  # items...
    local n=$# k=0 item
    for item in "$@"; do
        k=$((k + 1))
        if [ "$k" -lt "$n" ]; then printf '    %s,\n' "$item"; else printf '    %s\n' "$item"; fi
    done
}

mkdir -p "$(dirname "$OUT")"
{
    printf '{\n  "benchmark": "http-server",\n'
    printf '  "date": "%s",\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    printf '  "machine": {"cpus": %s, "cpu_model": "%s", "kernel": "%s", "load_average_at_end": "%s"},\n' \
        "$(nproc)" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')" "$(uname -r)" \
        "$(cut -d' ' -f1-3 /proc/loadavg)"
    printf '  "wrk": {"version": "%s", "threads": %s, "connections": [%s], "duration": "%s", "rounds": %s, "warmup": "%s", "latency": true},\n' \
        "$(wrk -v 2>&1 | head -1 | awk '{print $2}')" "$THREADS" "$(tr ' ' ',' <<<"$CONNECTIONS")" "$DURATION" "$ROUNDS" "$WARMUP"
    printf '  "body": "Hello, World! (13 bytes, text/plain), keep-alive",\n'
    printf '  "note": "%s",\n' "${NOTE:-wrk and every server share the same 2 cores, and other jobs ran on them too; absolute numbers vary a lot run to run, compare the medians side by side}"
    printf '  "summary": [\n'; json_list "${SUMMARY[@]}"; printf '  ],\n'
    printf '  "runs": [\n'; json_list "${RUNS[@]}"; printf '  ]\n}\n'
} >"$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "wrote $OUT" >&2
