#!/usr/bin/env bash
# Benchmarks the OptoLink HTTP server against nginx with identical wrk settings and writes
# Benchmarks/results/http-server.json (a list of runs plus the ratio of each run to nginx).
#
#   Benchmarks/http-server.sh            # defaults: wrk -t1, 64 and 256 connections, 10 s
#   DURATION=5s CONNECTIONS="64" Benchmarks/http-server.sh
#
# Runs: nginx (1 and 2 workers, `return 200 "Hello, World!"`) and optolink-http-bench (1 and 2
# event loops, same 13-byte body). Each server row is compared with nginx at the same worker
# count and connection count. To add a row for another server or route (e.g. the emulator's
# /match through `optolink-soak serve`), call `bench_run NAME URL BASELINE_NAME` below with
# WRK_METHOD / WRK_BODY / WRK_CONTENT_TYPE set; http-server.lua shapes the request from them.
# Everything binds 127.0.0.1 only. Processes this script starts are stopped on exit.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${OUT:-$ROOT/Benchmarks/results/http-server.json}"
DURATION="${DURATION:-10s}"
THREADS="${THREADS:-1}"
CONNECTIONS="${CONNECTIONS:-64 256}"
WORKERS="${WORKERS:-1 2}"
WARMUP="${WARMUP:-2s}"
LUA="$ROOT/Benchmarks/http-server.lua"
WORK="$(mktemp -d /tmp/optolink-http-bench.XXXXXX)"
PIDS=()

cleanup() {
    for pid in "${PIDS[@]:-}"; do
        [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
    done
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

need() { command -v "$1" >/dev/null 2>&1; }
if ! need wrk || ! need nginx; then
    echo "installing wrk and nginx-light" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq wrk nginx-light >/dev/null
fi
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"

free_port() {
    # Ask the kernel for a free loopback port by binding port 0 (the bench server does the same).
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null \
        || echo $((20000 + RANDOM % 20000))
}

wait_listening() {  # PORT
    for _ in $(seq 1 200); do
        if curl -s -o /dev/null "http://127.0.0.1:$1/"; then return 0; fi
        sleep 0.05
    done
    echo "nothing answers on port $1" >&2
    return 1
}

RUNS=()
declare -A RPS

bench_run() {  # NAME URL BASELINE  (BASELINE: name of the run this one is compared with, or "")
    local name="$1" url="$2" baseline="$3" c
    for c in $CONNECTIONS; do
        wrk -t"$THREADS" -c"$c" -d"$WARMUP" -s "$LUA" "$url" >/dev/null 2>&1 || true
        local line
        line="$(wrk -t"$THREADS" -c"$c" -d"$DURATION" --latency -s "$LUA" "$url" | sed -n 's/^WRKJSON //p')"
        [ -n "$line" ] || { echo "wrk produced no result for $name" >&2; exit 1; }
        local rps
        rps="$(sed -E 's/.*"requests_per_sec":([0-9.]+).*/\1/' <<<"$line")"
        RPS["$name/c$c"]="$rps"
        local ratio="null" against="null"
        if [ -n "$baseline" ] && [ -n "${RPS[$baseline/c$c]:-}" ]; then
            ratio="$(awk -v a="$rps" -v b="${RPS[$baseline/c$c]}" 'BEGIN { printf "%.3f", a / b }')"
            against="\"$baseline\""
        fi
        echo "$name c=$c: $rps req/s (ratio to ${baseline:-none}: $ratio)" >&2
        RUNS+=("{\"name\":\"$name\",\"url\":\"$url\",\"method\":\"${WRK_METHOD:-GET}\",\"connections\":$c,\"threads\":$THREADS,\"duration\":\"$DURATION\",\"result\":$line,\"baseline\":$against,\"ratio_to_baseline\":$ratio}")
    done
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

stop_last() {
    local pid="${PIDS[-1]}"
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    unset 'PIDS[-1]'
}

echo "building optolink-http-bench (release)" >&2
(cd "$ROOT" && swift build -c release --product optolink-http-bench >&2)

for w in $WORKERS; do
    port="$(free_port)"; start_nginx "$w" "$port"
    bench_run "nginx/$w-worker" "http://127.0.0.1:$port/" ""
    stop_last

    port="$(free_port)"; start_optolink "$w" "$port"
    bench_run "optolink-http/$w-loop" "http://127.0.0.1:$port/" "nginx/$w-worker"
    stop_last
done

# Extra rows (e.g. the emulator's /match) go here: start the server, bench_run "NAME" URL "nginx/1-worker", stop_last.

mkdir -p "$(dirname "$OUT")"
{
    printf '{\n  "benchmark": "http-server",\n'
    printf '  "date": "%s",\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    printf '  "machine": {"cpus": %s, "cpu_model": "%s", "kernel": "%s"},\n' \
        "$(nproc)" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')" "$(uname -r)"
    printf '  "wrk": {"version": "%s", "threads": %s, "connections": [%s], "duration": "%s", "warmup": "%s"},\n' \
        "$(wrk -v 2>&1 | head -1 | awk '{print $2}')" "$THREADS" "$(tr ' ' ',' <<<"$CONNECTIONS")" "$DURATION" "$WARMUP"
    printf '  "body": "Hello, World! (13 bytes, text/plain), keep-alive",\n'
    printf '  "note": "%s",\n' "${NOTE:-wrk, nginx and the server share the same 2 cores; numbers vary run to run, the side-by-side ratio is what counts}"
    printf '  "runs": [\n'
    for i in "${!RUNS[@]}"; do
        sep=","; [ "$i" -eq $((${#RUNS[@]} - 1)) ] && sep=""
        printf '    %s%s\n' "${RUNS[$i]}" "$sep"
    done
    printf '  ]\n}\n'
} >"$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "wrote $OUT" >&2
