#!/usr/bin/env bash
# Memory per launched virtual device with TLS connections pooled per device: the same closed-loop
# run (each device launches once and sends 20 events, --pool per-device) through one Debian nginx
# over https (a throwaway CA, --cacert) and over plain http, at two device counts; the slope of
# peak RSS between them is the memory each further device costs. Writes Benchmarks/results/tls-memory.json.
#
# Usage: bash Benchmarks/tls-memory.sh [BINARY]   (default: a release build of optolink-soak)
#        LOW=1000 HIGH=3000 set the two device counts.
set -euo pipefail
cd "$(dirname "$0")/.."
low=${LOW:-1000} high=${HIGH:-3000}
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
for tool in nginx openssl; do
    command -v $tool >/dev/null || { apt-get update -qq && apt-get install -y -qq nginx-light openssl >/dev/null; }
done
if [ $# -ge 1 ]; then bin=$1; else
    swift build -c release --product optolink-soak 2>&1 | tail -1
    bin=.build/release/optolink-soak
fi
w=$(mktemp -d)
cleanup() { kill $(jobs -p) 2>/dev/null || true; sleep 0.3; rm -rf "$w"; }
trap cleanup EXIT
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=tls-memory CA" -keyout "$w/ca.key" -out "$w/ca.pem" \
    2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout "$w/s.key" -out "$w/s.csr" 2>/dev/null
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >"$w/san"
openssl x509 -req -in "$w/s.csr" -CA "$w/ca.pem" -CAkey "$w/ca.key" -CAcreateserial -days 1 -extfile "$w/san" \
    -out "$w/s.pem" 2>/dev/null
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
serve_port=$(free_port) http_port=$(free_port) https_port=$(free_port)
"$bin" serve --host 127.0.0.1 --port "$serve_port" --config Benchmarks/peers/serve.json >"$w/serve.log" 2>&1 &
cat >"$w/nginx.conf" <<CONF
worker_processes 1; daemon off; pid $w/nginx.pid; error_log $w/error.log warn;
worker_rlimit_nofile 20000;
events { worker_connections 10000; }
http {
    access_log off;
    upstream serve { server 127.0.0.1:$serve_port; keepalive 64; }
    server {
        listen 127.0.0.1:$http_port; listen 127.0.0.1:$https_port ssl;
        ssl_certificate $w/s.pem; ssl_certificate_key $w/s.key; ssl_protocols TLSv1.2 TLSv1.3;
        keepalive_requests 100000; keepalive_timeout 120s;
        location / { proxy_pass http://serve; proxy_http_version 1.1; proxy_set_header Connection ""; }
    }
}
CONF
nginx -c "$w/nginx.conf" -p "$w" >"$w/nginx.out" 2>&1 &
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$http_port/__admin/health" && break; sleep 0.1; done
for n in "$low" "$high"; do
    python3 - "$n" "$w/profile-$n.json" <<'PY'
import json, sys
n = int(sys.argv[1])
json.dump({"name": "tls-memory", "description": "Benchmarks/tls-memory.sh", "seed": 1, "devices": {"count": n},
           "journeys": [{"name": "events", "weight": 1, "steps": [
               {"kind": "firstLaunch"}, {"kind": "event", "name": "bench", "properties": {"k": "v"}, "repeat": 20}]}],
           "load": {"model": "closed", "concurrency": n, "duration": 8, "grace": 10},
           "sdk": {"timeout": 5, "maxRetries": 2}}, open(sys.argv[2], "w"))
PY
    for scheme in https http; do
        port=$http_port tls=()
        if [ "$scheme" = https ]; then port=$https_port tls=(--cacert "$w/ca.pem"); fi
        curl -s -o /dev/null -X POST "http://127.0.0.1:$serve_port/__admin/reset" || true
        timeout 120 "$bin" run "$w/profile-$n.json" --base-url "$scheme://localhost:$port" "${tls[@]}" \
            --pool per-device --no-thresholds --no-progress --out "$w/$scheme-$n" >"$w/$scheme-$n.log" 2>&1 \
            || { tail -5 "$w/$scheme-$n.log"; exit 1; }
    done
done
python3 - "$w" "$low" "$high" "$bin" <<'PY'
import datetime, json, os, sys
w, low, high, binary = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
runs = {}
for scheme in ("https", "http"):
    for n in (low, high):
        s = json.load(open(f"{w}/{scheme}-{n}/summary.json"))
        runs[f"{scheme} {n}"] = {"devices": n, "attempts": s["totals"]["attempts"],
                                 "peakRSSBytes": max(x["bytes"] for x in s["rss"])}
slope = {scheme: (runs[f"{scheme} {high}"]["peakRSSBytes"] - runs[f"{scheme} {low}"]["peakRSSBytes"])
         / (high - low) / 1024 for scheme in ("https", "http")}
result = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
          "loadAverage": list(os.getloadavg()), "binary": binary,
          "setup": "closed model, each device launches once and sends 20 events, --pool per-device, one nginx "
                   "(TLS 1.2/1.3 and http) in front of optolink-soak serve (limits off)",
          "runs": runs, "kilobytesPerDevice": slope,
          "targets": {"https <= 50 KB per launched device": slope["https"] <= 50}}
out = "Benchmarks/results/tls-memory.json"
json.dump(result, open(out + ".tmp", "w"), indent=2)
os.replace(out + ".tmp", out)
print(f"KB per launched device (slope {low} -> {high}): https {slope['https']:.1f}, http {slope['http']:.1f}")
PY
