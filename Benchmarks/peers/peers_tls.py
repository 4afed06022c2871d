"""Benchmarks/peers-tls.sh's measuring half: hey, wrk and optolink-soak through nginx, over https
(nginx terminating TLS) and over plain http, medians of interleaved rounds."""
import json
import os
import statistics
import subprocess
import sys
from datetime import datetime, timezone

from peers import ROUNDS, SECONDS, CONNECTIONS, SOAK, WORK, log, run_driver, run_hey, run_wrk
from serving import ROOT, free_port, loadavg, reset_server, start_serve

NGINX_CONF = """worker_processes 2;
pid {work}/nginx.pid;
error_log {work}/nginx-error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {work}/body;
    proxy_temp_path {work}/proxy;
    fastcgi_temp_path {work}/fcgi;
    uwsgi_temp_path {work}/uwsgi;
    scgi_temp_path {work}/scgi;
    upstream soak {{ server 127.0.0.1:{upstream}; keepalive 128; }}
    server {{
        listen 127.0.0.1:{https} ssl;
        listen 127.0.0.1:{http};
        ssl_certificate {work}/server.pem;
        ssl_certificate_key {work}/server.key;
        ssl_protocols TLSv1.2 TLSv1.3;
        keepalive_requests 1000;
        location / {{
            proxy_pass http://soak;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }}
    }}
}}
"""


def make_certificates():
    key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    def run(*args):
        subprocess.run(["openssl", *args], cwd=WORK, check=True, capture_output=True)
    run("req", "-x509", *key, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=peers-tls CA")
    run("req", *key, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1")
    with open(os.path.join(WORK, "server.ext"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1\n")
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2",
        "-extfile", "server.ext", "-out", "server.pem")
    return os.path.join(WORK, "ca.pem")


def main():
    ca = make_certificates()
    upstream, https_port, http_port = free_port(), free_port(), free_port()
    conf = os.path.join(WORK, "nginx.conf")
    with open(conf, "w") as f:
        f.write(NGINX_CONF.format(work=WORK, upstream=upstream, https=https_port, http=http_port))
    server_log = open(os.path.join(WORK, "serve.txt"), "w")
    server = start_serve(SOAK, upstream, stdout=server_log, stderr=subprocess.STDOUT)
    subprocess.run(["nginx", "-c", conf, "-g", "daemon on;"], check=True)
    fronts = {"https": f"https://127.0.0.1:{https_port}", "http": f"http://127.0.0.1:{http_port}"}
    tools = {
        "hey": lambda base, tag: run_hey(base + "/sdk/events", tag),
        "wrk": lambda base, tag: run_wrk(base + "/sdk/events", tag),
        "optolink-soak": lambda base, tag: run_driver(base, tag, "native", extra=("--cacert", ca)),
    }
    runs = {f"{tool} {front}": [] for front in fronts for tool in tools}
    try:
        for round_index in range(ROUNDS):
            for front, base in fronts.items():
                for tool, run in tools.items():
                    reset_server(f"http://127.0.0.1:{upstream}")
                    name = f"{tool} {front}"
                    result = run(base, f"{tool}-{front}-{round_index}")
                    log(f"round {round_index + 1}: {name}: {result['rate']:.0f}/s, errors {result['errors']}")
                    runs[name].append(result)
    finally:
        subprocess.run(["nginx", "-c", conf, "-s", "stop"], check=False)
        server.terminate()
        server.wait()
    medians = {name: statistics.median(r["rate"] for r in results) for name, results in runs.items()}

    def ratio(a, b):
        return medians[a] / medians[b] if medians[b] else None

    ratios = {
        "tool/hey over https": ratio("optolink-soak https", "hey https"),
        "tool/wrk over https": ratio("optolink-soak https", "wrk https"),
        "tool https/http": ratio("optolink-soak https", "optolink-soak http"),
        "wrk https/http": ratio("wrk https", "wrk http"),
        "hey https/http": ratio("hey https", "hey http"),
    }
    targets = {
        "tool >= 1.0 x hey over https": (ratios["tool/hey over https"] or 0) >= 1.0,
        "tool >= 0.5 x wrk over https": (ratios["tool/wrk over https"] or 0) >= 0.5,
        "tool https >= 0.7 x its http": (ratios["tool https/http"] or 0) >= 0.7,
    }
    result = dict(
        date=datetime.now(timezone.utc).isoformat(timespec="seconds"), loadAverage=loadavg(),
        setup=dict(seconds=SECONDS, rounds=ROUNDS, connections=CONNECTIONS, route="POST /sdk/events",
                   front="nginx (Debian), 2 workers, TLS 1.2/1.3 (ECDSA P-256) and plain http, keep-alive upstream",
                   server="one optolink-soak serve, limits off", tool="optolink-soak run driver.json, native "
                   "transport, --cacert"),
        medianRequestsPerSecond=medians, ratios=ratios, targets=targets,
        runs={name: [dict(rate=r["rate"], errors=r["errors"], cpu=r["cpu"], exit=r["exit"]) for r in results]
              for name, results in runs.items()})
    path = os.path.join(ROOT, "Benchmarks", "results", "peers-tls.json")
    with open(path, "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    log(f"wrote {path}")
    print(json.dumps(dict(medians=medians, ratios=ratios, targets=targets), indent=2))


if __name__ == "__main__":
    sys.exit(main())
