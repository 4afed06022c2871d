#!/usr/bin/env bash
# A run through a real nginx (Debian's package) in front of `optolink-soak serve`, as a staging
# backend sits behind a proxy: nginx overwrites X-Forwarded-For with the socket peer
# (`proxy_set_header X-Forwarded-For $remote_addr`, the usual safe setting) and closes each
# client connection after 100 requests (`keepalive_requests 100`); the virtual devices leave
# from their own loopback addresses (`--local-ips`), so the per-IP limit still sees the plan.
#
# Gates on: the run's exit 0; "limits enforced by the server: YES" and "clients waited as told:
# YES"; nginx's access log (the server-side truth) holding exactly as many requests per endpoint
# as attempts.csv; and as many distinct $remote_addr among them as the plan's source addresses.
#
# Usage: Tests/Scripts/check_nginx.sh [--scheme http|https] [--profile FILE] [--local-ips LIST]
#                                     [--dual-stack] [--out DIR] BINARY
#   --scheme https  nginx terminates TLS with a certificate from a throwaway CA (openssl CLI) and
#                   the run trusts it with --cacert (needs the native transport's TLS)
#   --dual-stack    nginx listens on [::1] too and the run goes to localhost, so a LIST mixing
#                   IPv4 and IPv6 (e.g. ::1,127.0.0.2-127.0.0.201) reaches it from both families
#   --out DIR       keep the report, nginx's logs and config there (default: a temp dir, removed)
# Everything lives in its own temp directory: its own nginx config and logs (never the system
# nginx config), nginx and serve on 127.0.0.1 high ports, both stopped on every exit path.
set -euo pipefail

scheme=http
profile=Profiles/limits.json
local_ips=127.0.0.2-127.0.0.201
keep=""
dual=""
while [ $# -gt 1 ]; do
    case "$1" in
    --dual-stack) dual=1; shift ;;
    --scheme) scheme=$2; shift 2 ;;
    --profile) profile=$2; shift 2 ;;
    --local-ips) local_ips=$2; shift 2 ;;
    --out) keep=$2; shift 2 ;;
    *) echo "check_nginx: unknown option $1" >&2; exit 2 ;;
    esac
done
[ $# -eq 1 ] || {
    echo "usage: $0 [--scheme http|https] [--profile FILE] [--local-ips LIST] [--dual-stack] [--out DIR] BINARY" >&2
    exit 2
}
binary=$1
case "$scheme" in http | https) ;; *) echo "check_nginx: --scheme is http or https" >&2; exit 2 ;; esac
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || { apt-get update -qq && apt-get install -y -qq nginx-light; }
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
if [ "$scheme" = https ]; then command -v openssl >/dev/null || apt-get install -y -qq openssl; fi

work=$(mktemp -d)
serve_pid=""
nginx_pid=""
cleanup() {
    [ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null && wait "$nginx_pid" 2>/dev/null || true
    [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null || true
    if [ -n "$keep" ]; then mkdir -p "$keep" && cp -r "$work"/. "$keep"/; fi
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# The emulator with the profile's own backend section (its limits and windows), trusting the
# X-Forwarded-For nginx sets.
python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1])).get("backend", {})))' "$profile" \
    >"$work/staging.json"
serve_port=$(free_port)
"$binary" serve --host 127.0.0.1 --port "$serve_port" --config "$work/staging.json" --trust-forwarded-for \
    >"$work/serve.log" 2>&1 &
serve_pid=$!

nginx_port=$(free_port)
listen="127.0.0.1:$nginx_port"
host=127.0.0.1
tls=""
ssl=""
run_tls=()
if [ "$scheme" = https ]; then
    openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=optolink-soak test CA" \
        -keyout "$work/ca.key" -out "$work/ca.pem" 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout "$work/server.key" -out "$work/server.csr" \
        2>/dev/null
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >"$work/san.ext"
    openssl x509 -req -in "$work/server.csr" -CA "$work/ca.pem" -CAkey "$work/ca.key" -CAcreateserial -days 1 \
        -extfile "$work/san.ext" -out "$work/server.pem" 2>/dev/null
    listen="$listen ssl"
    ssl=" ssl"
    tls="ssl_certificate $work/server.pem; ssl_certificate_key $work/server.key; ssl_protocols TLSv1.2 TLSv1.3;"
    run_tls=(--cacert "$work/ca.pem")
fi
# A host name, not an address, so TLS checks the certificate against a DNS name (SNI included).
if [ -n "$dual" ] || [ "$scheme" = https ]; then host=localhost; fi
mkdir -p "$work/nginx"
cat >"$work/nginx.conf" <<EOF
worker_processes 1;
daemon off;
pid $work/nginx.pid;
error_log $work/nginx-error.log warn;
events { worker_connections 4096; }
http {
    log_format soak '\$remote_addr \$request_method \$uri \$status \$connection';
    access_log $work/access.log soak;
    client_body_temp_path $work/nginx/body;
    proxy_temp_path $work/nginx/proxy;
    fastcgi_temp_path $work/nginx/fastcgi;
    uwsgi_temp_path $work/nginx/uwsgi;
    scgi_temp_path $work/nginx/scgi;
    upstream emulator { server 127.0.0.1:$serve_port; keepalive 64; }
    server {
        listen $listen;
        ${dual:+listen [::1]:$nginx_port${ssl:-};}
        $tls
        keepalive_requests 100;
        location / {
            proxy_pass http://emulator;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host \$host;
            proxy_set_header X-Forwarded-For \$remote_addr;
        }
    }
}
EOF
"$nginx_bin" -p "$work/nginx" -e "$work/nginx-error.log" -c "$work/nginx.conf" &
nginx_pid=$!

# Both up: serve prints its URL once it listens; nginx answers once its port is open.
for _ in $(seq 1 100); do
    grep -q 'staging emulator on' "$work/serve.log" 2>/dev/null \
        && curl -sk -o /dev/null "$scheme://127.0.0.1:$nginx_port/__admin/health" && break
    sleep 0.1
done
curl -skf -o /dev/null "$scheme://127.0.0.1:$nginx_port/__admin/health" \
    || { echo "check_nginx: nginx or serve did not come up"; cat "$work/serve.log" "$work/nginx-error.log"; exit 1; }

# The profile's thresholds, but those that need the server ledger: a remote ledger file is read at
# the run's end, before serve has written its last second (issue 34, "a ledger that lags"); nginx's
# log below is the server-side count instead.
thresholds=()
while IFS= read -r line; do thresholds+=(--threshold "$line"); done < <(python3 -c '
import json, sys
for t in json.load(open(sys.argv[1]))["expect"].get("thresholds", []):
    expression = t if isinstance(t, str) else t["threshold"]
    if not expression.startswith(("events.lost", "events.duplicated", "session.lost", "reconcile.")):
        print(expression)' "$profile")

echo "check_nginx: $profile through nginx $scheme://$host:$nginx_port (keepalive_requests 100," \
    "X-Forwarded-For \$remote_addr) with --local-ips $local_ips"
status=0
timeout 600 "$binary" run "$profile" --base-url "$scheme://$host:$nginx_port" --local-ips "$local_ips" \
    "${run_tls[@]}" --no-thresholds "${thresholds[@]}" --no-progress --out "$work/report" >"$work/run.log" 2>&1 \
    || status=$?
if [ "$status" -ne 0 ]; then
    tail -n 40 "$work/run.log"
    echo "check_nginx: the run exited $status"
    exit 1
fi
summary="$work/report/summary.txt"
grep -E '^limits enforced by the server: YES' "$summary"
grep -E '^clients waited as told: YES' "$summary"
grep -E 'note: source addresses' "$summary"
# The pre-flight asked the server (through nginx, over TLS too) which peer it saw from each address.
grep -qE 'the server saw ([0-9]+) distinct of \1 planned' "$summary" \
    || { echo "check_nginx: FAIL: the pre-flight did not see every planned source address"; exit 1; }

# nginx's access log against attempts.csv: the same requests per endpoint, and as many distinct
# peers as the plan's source addresses (the pre-flight's /__admin/peer requests and the
# reachability probe are not SDK attempts and are left out).
python3 - "$work/access.log" "$work/report/attempts.csv" "$summary" "$scheme" <<'EOF'
import collections, csv, re, sys
log, attempts, summary, scheme = sys.argv[1:5]
def endpoint(uri):
    fixed = {"/match": "match", "/sdk/session": "session", "/sdk/events": "events",
             "/sdk/identity": "identity", "/sdk/identity/clear": "identity_clear"}
    if uri in fixed:
        return fixed[uri]
    if uri.endswith("/data") and uri.count("/") == 3:
        return "data"
    return None
server = collections.Counter()
peers = set()
connections = set()
for line in open(log):
    addr, method, uri, status, connection = line.split()
    connections.add(connection)
    name = endpoint(uri)
    if name is None:
        continue
    server[name] += 1
    peers.add(addr)
rows = list(csv.DictReader(open(attempts)))
client = collections.Counter(row["endpoint"] for row in rows)
handshakes = [float(row["tls"]) for row in rows if row["tls"]]
plan = int(re.search(r"source addresses: (\d+) of the", open(summary).read()).group(1))
print("nginx access log per endpoint:", dict(sorted(server.items())))
print("attempts.csv per endpoint:    ", dict(sorted(client.items())))
print(f"distinct $remote_addr: {len(peers)}, plan's source addresses: {plan}")
problems = []
if server != client:
    problems.append("nginx's access log and attempts.csv disagree per endpoint")
if len(peers) != plan:
    problems.append(f"nginx saw {len(peers)} distinct peers, the plan has {plan} source addresses")
# Over TLS each attempt that opened a connection carries its handshake time; nginx counts every
# connection (the pre-flight's too), so there are at least as many as timed handshakes.
if scheme == "https":
    print(f"attempts with a tls handshake time: {len(handshakes)}, nginx connections: {len(connections)}, "
          f"median handshake {sorted(handshakes)[len(handshakes) // 2] * 1000 if handshakes else 0:.2f} ms")
    if not handshakes or len(handshakes) > len(connections) or min(handshakes) <= 0:
        problems.append("attempts.csv's tls column does not match the TLS connections nginx accepted")
elif handshakes:
    problems.append("attempts.csv has tls handshake times over plain http")
for problem in problems:
    print("check_nginx: FAIL:", problem)
sys.exit(1 if problems else 0)
EOF
echo "check_nginx: OK ($scheme)"
