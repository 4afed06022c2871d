"""What peers.py and before-after.py share: the bench identity and one `optolink-soak serve`
(limits off, Benchmarks/peers/serve.json) started on a free loopback port with the bench device
registered."""
import json
import os
import socket
import subprocess
import time
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
KEY = "opl_sdk_test_acme_client"
DEVICE = "b3b1c7de-0000-4000-8000-00000000be0c"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_serve(binary, port, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL):
    """Starts `binary serve` on 127.0.0.1:`port` and waits (at most 10 s) until it accepts."""
    server = subprocess.Popen([binary, "serve", "--port", str(port), "--config",
                               os.path.join(ROOT, "Benchmarks", "peers", "serve.json")],
                              stdout=stdout, stderr=stderr, cwd=ROOT)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.1)
    return server


def register_device(base):
    """POST /sdk/session for the bench device; returns the HTTP status."""
    body = json.dumps({"deviceId": DEVICE, "platform": "iOS", "osVersion": "18.1", "sdkVersion": "bench"})
    request = urllib.request.Request(base + "/sdk/session", method="POST", data=body.encode(),
                                     headers={"Content-Type": "application/json", "Authorization": f"Bearer {KEY}"})
    with urllib.request.urlopen(request) as response:
        return response.status
