#!/usr/bin/env bash
# Runs `optolink-soak capacity` against `optolink-soak serve` (limits off) behind nginx's
# limit_req at a known rate, answering 503 above it, and writes Benchmarks/results/capacity-nginx.json:
# the cap, the knee in requests/s and its bracket, and whether the cap lies within 5 % of the knee.
#
#   Benchmarks/capacity-nginx.sh                      # cap 600 requests/s, probes of 5 s
#   CAP=400 MIN_RATE=60 PROBE_SECONDS=10 Benchmarks/capacity-nginx.sh
#
# The SLO is http.errors.rate < 0.01 (nginx's 503s are errors) and match p99 < 250 ms. The search
# is in journeys/s; Profiles/capacity.json's journeys make ≈ 3.5 requests each, so MIN_RATE
# should sit near half of CAP / 3.5 for the search to end within 8 probes. Everything binds
# 127.0.0.1; the processes this script starts are stopped on exit.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${OUT:-$ROOT/Benchmarks/results/capacity-nginx.json}"
CAP="${CAP:-600}"
MIN_RATE="${MIN_RATE:-100}"
PROBE_SECONDS="${PROBE_SECONDS:-5}"
SERVE_PORT="${SERVE_PORT:-18080}"
NGINX_PORT="${NGINX_PORT:-18081}"
WORK="$(mktemp -d /tmp/optolink-capacity-nginx.XXXXXX)"
SERVE_PID=""

# Stops the serve process and nginx this script started, then removes the work directory.
stop_all() {
    if [ -f "$WORK/nginx.pid" ]; then kill "$(cat "$WORK/nginx.pid")" 2>/dev/null || true; fi
    if [ -n "$SERVE_PID" ]; then kill "$SERVE_PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap stop_all EXIT

cd "$ROOT"
swift build -c release --product optolink-soak >/dev/null
SOAK="$ROOT/.build/release/optolink-soak"

echo '{"limits": {"enabled": false}}' >"$WORK/serve.json"
"$SOAK" serve --port "$SERVE_PORT" --config "$WORK/serve.json" >"$WORK/serve.log" 2>&1 &
SERVE_PID=$!

mkdir -p "$WORK/temp"
cat >"$WORK/nginx.conf" <<CONF
worker_processes 1;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $WORK/temp/body;
  proxy_temp_path $WORK/temp/proxy;
  fastcgi_temp_path $WORK/temp/fastcgi;
  uwsgi_temp_path $WORK/temp/uwsgi;
  scgi_temp_path $WORK/temp/scgi;
  limit_req_zone \$server_name zone=all:1m rate=${CAP}r/s;
  upstream emulator { server 127.0.0.1:$SERVE_PORT; keepalive 64; }
  server {
    listen 127.0.0.1:$NGINX_PORT;
    server_name capacity;
    location / {
      limit_req zone=all burst=100 nodelay;
      proxy_pass http://emulator;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host \$http_host;
    }
  }
}
CONF
nginx -c "$WORK/nginx.conf" -p "$WORK" 2>/dev/null
sleep 1

status=0
timeout -s INT 900 "$SOAK" capacity Profiles/capacity.json --base-url "http://127.0.0.1:$NGINX_PORT" \
    --slo 'http.errors.rate < 0.01' --slo 'match.call_latency.p99 < 250ms' --probe-seconds "$PROBE_SECONDS" \
    --max-probes 8 --min-rate "$MIN_RATE" --out "$WORK/report" || status=$?

python3 - "$WORK/report/capacity.json" "$OUT" "$CAP" "$status" <<'PY'
import json, sys
report, out, cap, status = json.load(open(sys.argv[1])), sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
knee = report.get("knee") or {}
probes = report["probes"]
low, high = knee.get("bracket") or [None, None]
rps = {p["rate"]: p["requestsPerSecond"] for p in probes}
result = {
    "capRequestsPerSecond": cap,
    "exitCode": status,
    "ending": report["ending"],
    "message": report["message"],
    "kneeJourneysPerSecond": knee.get("journeysPerSecond"),
    "kneeRequestsPerSecond": knee.get("requestsPerSecond"),
    "bracketJourneysPerSecond": [low, high],
    "bracketRequestsPerSecond": [rps.get(low), rps.get(high)],
    "limitedBy": knee.get("limitedBy"),
    "kneeWithin5PercentOfCap": knee.get("requestsPerSecond") is not None
        and abs(knee["requestsPerSecond"] - cap) / cap <= 0.05,
    "probes": [{k: p[k] for k in ("index", "rate", "purpose", "result", "requestsPerSecond", "limits429")}
               | {"slo": {t["expression"]: t.get("observed") for t in p["slo"]}} for p in probes],
}
json.dump(result, open(out, "w"), indent=2, sort_keys=True)
open(out, "a").write("\n")
print(json.dumps({k: result[k] for k in ("capRequestsPerSecond", "kneeRequestsPerSecond", "kneeWithin5PercentOfCap")}))
PY
