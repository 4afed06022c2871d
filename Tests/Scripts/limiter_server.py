#!/usr/bin/env python3
"""A small stand-in backend with its own rate limiters, to check the limit oracle against
something that is not the project's emulator.

It answers the client contract's happy paths (/match miss 201, /sdk/session, /sdk/identity,
/sdk/events 200) and rate-limits them with one limiter family for every bucket:

  clock  fixed window aligned to clock edges (floor(epoch / window), the INCR key:<minute> kind)
  token  token bucket of LIMIT tokens refilled at LIMIT / WINDOW per second

The /match bucket is keyed on X-Forwarded-For (first address), or on the socket peer with
--key-peer (as behind a proxy that overwrites the header); the events and session+identity
buckets on the Bearer key. A 429 says "Rate limit exceeded. Retry after N second(s)." with
N = ceil(seconds until a hit would pass). Limits default to Profiles/limits.json's backend
section (match 10/2s, events 40/2s, session+identity 1000/2s).

Usage: limiter_server.py --family clock|token [--key-peer] [--port 0] [--seconds 60]
Prints "PORT <n>" when it listens; exits after --seconds (bounded) or on SIGTERM.
"""
import argparse
import json
import math
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class ClockWindow:
    def __init__(self, limit, window):
        self.limit, self.window, self.counts = limit, window, {}

    def hit(self, key, now):
        slot = math.floor(now / self.window)
        count = self.counts.get((key, slot), 0) + 1
        self.counts[(key, slot)] = count
        if count <= self.limit:
            return None
        return (slot + 1) * self.window - now


class TokenBucket:
    def __init__(self, limit, window):
        self.limit, self.rate, self.state = limit, limit / window, {}

    def hit(self, key, now):
        tokens, last = self.state.get(key, (float(self.limit), now))
        tokens = min(float(self.limit), tokens + (now - last) * self.rate)
        if tokens >= 1:
            self.state[key] = (tokens - 1, now)
            return None
        self.state[key] = (tokens, now)
        return (1 - tokens) / self.rate


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--family", choices=["clock", "token"], required=True)
    parser.add_argument("--key-peer", action="store_true")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--match", default="10/2")
    parser.add_argument("--events", default="40/2")
    parser.add_argument("--session", default="1000/2")
    args = parser.parse_args()
    kind = ClockWindow if args.family == "clock" else TokenBucket

    def make(spec):
        limit, window = spec.split("/")
        return kind(int(limit), float(window))

    buckets = {"match": make(args.match), "events": make(args.events), "session": make(args.session)}
    lock = threading.Lock()
    counts = {"passed": 0, "rejected": 0}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_):
            pass

        def send(self, status, body):
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            self.send(404, {"statusCode": 404, "error": "Not Found", "message": "Not found"})

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            path = self.path.split("?")[0]
            if path == "/match":
                forwarded = self.headers.get("X-Forwarded-For")
                key = self.client_address[0] if args.key_peer or not forwarded else forwarded.split(",")[0].strip()
                bucket = "match"
            elif path == "/sdk/events":
                key, bucket = self.headers.get("Authorization", ""), "events"
            elif path in ("/sdk/session", "/sdk/identity", "/sdk/identity/clear"):
                key, bucket = self.headers.get("Authorization", ""), "session"
            else:
                self.send(404, {"statusCode": 404, "error": "Not Found", "message": "Not found", "path": path})
                return
            with lock:
                # The clock is read under the lock, so hits are counted in the order of their times.
                now = time.time()
                wait = buckets[bucket].hit(key, now)
                counts["rejected" if wait is not None else "passed"] += 1
            if wait is not None:
                n = max(1, math.ceil(wait))
                unit = "second" if n == 1 else "seconds"
                self.send(429, {"statusCode": 429, "error": "Too Many Requests",
                                "message": f"Rate limit exceeded. Retry after {n} {unit}.", "path": path})
                return
            device = body.get("deviceId", "")
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(now))
            if path == "/match":
                self.send(201, {"matched": False, "matchMethod": "NONE"})
            elif path == "/sdk/session":
                self.send(200, {"ok": True, "deviceId": device, "firstSeenAt": stamp, "lastSeenAt": stamp})
            elif path == "/sdk/identity":
                self.send(200, {"endUserId": body.get("externalId", ""), "rebound": False})
            elif path == "/sdk/identity/clear":
                self.send(200, {"cleared": True})
            else:
                self.send(200, {"ok": True})

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"PORT {server.server_address[1]}", flush=True)
    timer = threading.Timer(args.seconds, server.shutdown)
    timer.daemon = True
    timer.start()
    server.serve_forever()
    print(f"DONE passed {counts['passed']} rejected {counts['rejected']}", flush=True)


if __name__ == "__main__":
    main()
