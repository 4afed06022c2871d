"""The steady part of a run, measured from outside: hey and optolink-soak binaries, interleaved,
each against one `optolink-soak serve` (limits off, reset before each run), for ROUNDS rounds.

For each run the 5 s from its 2nd second on are read from /proc: the rate of `POST /sdk/events`
answered 200 (the server's counters), the CPU of the server and of the tool per counted event
(µs), the tool's CPU per thread, and the machine's idle share. Start-up, warm-up and the report
written at the end are outside the window, and the server's CPU per counted event shows what the
tool's uncounted requests (first launches: /match, /session) cost it.

Each VARIANT is BINARY:REPEAT[:NAME=VALUE...][:--option=VALUE...]: Benchmarks/peers/driver.json with
`repeat` events per journey (10000: a device launches once and sends events to the end; 50: a
relaunch every 50 events), run with the given environment variables and `run` options.

Usage: python3 Benchmarks/peers/window.py ROUNDS VARIANT [VARIANT...]   (JSON lines on stdout; all
rows, with the command line, overwrite Benchmarks/results/window.json at the end)
"""
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request

from serving import DEVICE, KEY, ROOT, free_port, reset_server, start_serve, write_result

SOAK = os.path.join(ROOT, ".build", "release", "optolink-soak")
BODY = json.dumps({"deviceId": DEVICE, "eventName": "bench", "properties": {"k": "v"}}, separators=(",", ":"))
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(stat_line):
    fields = stat_line.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def process_cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        return cpu_seconds(f.read())


def thread_cpu(pid):
    """CPU seconds per thread name (threads of one name summed)."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                line = f.read()
        except OSError:
            continue
        name = line[line.index("(") + 1:line.rindex(")")]
        out[name] = out.get(name, 0) + cpu_seconds(line)
    return out


def machine():
    with open("/proc/stat") as f:
        values = list(map(int, f.readline().split()[1:]))
    return sum(values), values[3] + values[4]


def events_answered(base):
    with urllib.request.urlopen(base + "/__admin/counters") as response:
        return json.load(response)["endpoints"].get("events", {}).get("200", 0)


def window(proc, server, base):
    time.sleep(2)
    threads0, (total0, idle0) = thread_cpu(proc.pid), machine()
    server0, tool0, events0 = process_cpu(server.pid), process_cpu(proc.pid), events_answered(base)
    time.sleep(5)
    threads1, (total1, idle1) = thread_cpu(proc.pid), machine()
    server1, tool1, events1 = process_cpu(server.pid), process_cpu(proc.pid), events_answered(base)
    proc.wait()
    n = max(1, events1 - events0)
    per_thread = {name: round(1e6 * (cpu - threads0.get(name, 0)) / n, 1) for name, cpu in threads1.items()
                  if cpu - threads0.get(name, 0) > 0.01}
    return dict(rate=round(n / 5), idle=round((idle1 - idle0) / (total1 - total0), 3),
                serverMicrosPerEvent=round(1e6 * (server1 - server0) / n, 1),
                toolMicrosPerEvent=round(1e6 * (tool1 - tool0) / n, 1), threadMicrosPerEvent=per_thread)


def main():
    rounds, variants = int(sys.argv[1]), sys.argv[2:]
    work = tempfile.mkdtemp(prefix="peers-window-")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_serve(SOAK, port)
    rows = []
    try:
        for round_index in range(rounds):
            reset_server(base)
            hey = subprocess.Popen(["hey", "-z", "8s", "-c", "64", "-m", "POST", "-T", "application/json", "-H",
                                    f"Authorization: Bearer {KEY}", "-d", BODY, base + "/sdk/events"],
                                   stdout=subprocess.DEVNULL)
            rows.append(dict(round=round_index + 1, tool="hey", **window(hey, server, base)))
            print(json.dumps(rows[-1]), flush=True)
            for index, variant in enumerate(variants):
                binary, repeat, *assignments = variant.split(":")
                with open(os.path.join(ROOT, "Benchmarks", "peers", "driver.json")) as f:
                    profile = json.load(f)
                profile["load"]["duration"] = 8
                profile["journeys"][0]["steps"][1]["repeat"] = int(repeat)
                path = os.path.join(work, f"profile-{index}.json")
                with open(path, "w") as f:
                    json.dump(profile, f)
                env = dict(os.environ, **dict(a.split("=", 1) for a in assignments if not a.startswith("--")))
                options = [part for a in assignments if a.startswith("--") for part in a.split("=", 1)]
                reset_server(base)
                driver = subprocess.Popen([binary, "run", path, "--base-url", base, "--api-key", KEY, "--org-key",
                                           "acme", "--no-progress", "--out", os.path.join(work, f"{round_index}-{index}"), *options],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
                rows.append(dict(round=round_index + 1, tool=variant, **window(driver, server, base)))
                print(json.dumps(rows[-1]), flush=True)
    finally:
        server.terminate()
        server.wait()
    how = "python3 Benchmarks/peers/window.py " + " ".join(sys.argv[1:])
    print(f"wrote {write_result('window', dict(how=how, rows=rows))}", file=sys.stderr)


if __name__ == "__main__":
    main()
