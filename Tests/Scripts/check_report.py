#!/usr/bin/env python3
"""Loads a report.html in a real headless Chromium and checks it the way a reader sees it.

usage: check_report.py REPORT_HTML RUN=SUMMARY_JSON [RUN=SUMMARY_JSON ...]
                       [--screenshot OUT.png] [--shot-height PX] [--shot-scale S]
  RUN is the page's data-run label: `run` for a run's report, `baseline` and `current` for a compare.

Chromium is driven over the DevTools protocol on a pipe (--remote-debugging-pipe), so only the
Python standard library is needed. Checks:
  - no console error, uncaught exception or log error (a CSP violation, a failed load) while loading;
  - every number marked data-key/data-value equals the value at that path in its summary.json,
    and its visible text is not empty (at least 10 such numbers per run);
  - the page loads in under a second (navigation timing, load event);
  - every time chart (svg data-axis="time") shares one x axis, seconds since start, 0 … the run's
    length: data-x-min is 0 and data-x-max covers the longest run's durationSeconds (within one
    interval), the same on every time chart; no chart is drawn empty ("no data");
  - a screenshot is not blank (decoded PNG: enough non-white pixels and colours).
Exits 1 with a message on the first failure.
"""
import base64
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib


def fail(message):
    print(f"report check FAILED: {message}", file=sys.stderr)
    sys.exit(1)


class Browser:
    def __init__(self):
        binary = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
        if not binary:
            fail("no chromium on PATH (.ci/run installs it: apt-get install chromium)")
        self.profile = tempfile.mkdtemp(prefix="report-check-")
        to_browser_r, self.to_browser_w = os.pipe()
        self.from_browser_r, from_browser_w = os.pipe()
        # The browser reads commands on fd 3 and writes replies on fd 4.
        self.process = subprocess.Popen(
            [binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
             "--no-first-run", "--no-default-browser-check", "--hide-scrollbars", f"--user-data-dir={self.profile}",
             "about:blank"],
            pass_fds=(3, 4), preexec_fn=lambda: (os.dup2(to_browser_r, 3), os.dup2(from_browser_w, 4)),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.buffer = b""
        self.next_id = 0
        self.events = []

    def send(self, method, params=None, session=None):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.to_browser_w, json.dumps(message).encode() + b"\0")
        return self.next_id

    def read(self, timeout):
        deadline = time.time() + timeout
        while b"\0" not in self.buffer:
            if time.time() > deadline:
                fail("the browser stopped answering")
            import select
            ready, _, _ = select.select([self.from_browser_r], [], [], 0.5)
            if ready:
                chunk = os.read(self.from_browser_r, 1 << 20)
                if not chunk:
                    fail("the browser closed the pipe")
                self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, params=None, session=None, timeout=30):
        wanted = self.send(method, params, session)
        while True:
            message = self.read(timeout)
            if message.get("id") == wanted:
                if "error" in message:
                    fail(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def wait_event(self, name, timeout=30):
        for index, event in enumerate(self.events):
            if event.get("method") == name:
                return self.events.pop(index)
        deadline = time.time() + timeout
        while time.time() < deadline:
            message = self.read(deadline - time.time())
            if message.get("method") == name:
                return message
            self.events.append(message)
        fail(f"no {name} within {timeout} s")

    def close(self):
        try:
            self.send("Browser.close")
            self.process.wait(timeout=10)
        except Exception:
            self.process.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


def lookup(document, path):
    value = document
    for part in path.split("."):
        if isinstance(value, list):
            value = value[int(part)]
        else:
            value = value[part]
    return value


def check_time_axes(axes, summaries):
    """Every time chart spans 0 … the longest run, all on the same axis."""
    if len(axes) < 3:
        fail(f"only {len(axes)} time charts (load, latency, memory at least)")
    runs = list(summaries.values())
    longest = max(float(s["run"]["durationSeconds"]) for s in runs)
    interval = max(float(s.get("intervalSeconds", 1)) for s in runs)
    maxima = set()
    for title, low, high in axes:
        low, high = float(low), float(high)
        if low != 0:
            fail(f"time chart {title!r} starts at {low} s, not at the run's start")
        if high < longest - 1e-6 or high > longest + interval + 1e-6:
            fail(f"time chart {title!r} ends at {high} s; the run lasted {longest} s")
        maxima.add(round(high, 6))
    if len(maxima) != 1:
        fail(f"time charts do not share one x axis: they end at {sorted(maxima)} s")


def png_pixels(data):
    """Decodes an 8-bit RGB/RGBA PNG (what Chromium writes) into rows of pixel tuples."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail("screenshot is not a PNG")
    offset, idat, width, height, channels = 8, b"", 0, 0, 0
    while offset < len(data):
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        body = data[offset + 8:offset + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            if depth != 8 or color not in (2, 6):
                fail(f"unexpected PNG format depth {depth} colour {color}")
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        offset += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = previous[i]
            c = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        previous = line
    return width, height, channels, rows


def main():
    args = sys.argv[1:]
    options = {"--screenshot": None, "--shot-height": "6000", "--shot-scale": "1"}
    for flag in list(options):
        if flag in args:
            index = args.index(flag)
            options[flag] = args[index + 1]
            del args[index:index + 2]
    screenshot_path = options["--screenshot"]
    html, summaries = os.path.abspath(args[0]), {}
    for pair in args[1:]:
        label, path = pair.split("=", 1)
        with open(path) as handle:
            summaries[label] = json.load(handle)
    size = os.path.getsize(html)

    browser = Browser()
    try:
        target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            browser.call(f"{domain}.enable", session=session)
        browser.call("Emulation.setDeviceMetricsOverride",
                     {"width": 960, "height": 1400, "deviceScaleFactor": 1, "mobile": False}, session=session)
        browser.call("Page.navigate", {"url": "file://" + html}, session=session)
        browser.wait_event("Page.loadEventFired")
        time.sleep(0.3)
        # Drain what arrived (console messages come as events).
        result = browser.call("Runtime.evaluate", {"expression": "1", "returnByValue": True}, session=session)
        problems = []
        for event in browser.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.exceptionThrown":
                problems.append(f"exception: {params.get('exceptionDetails', {}).get('text')}")
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert", "warning"):
                problems.append(f"console.{params['type']}: {[a.get('value') for a in params.get('args', [])]}")
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") in ("error", "warning"):
                problems.append(f"log {params['entry']['level']}: {params['entry'].get('text')}")
        if problems:
            fail("console errors: " + "; ".join(problems))

        expression = ("JSON.stringify({numbers: Array.from(document.querySelectorAll('[data-key][data-value]'))"
                      ".map(e => [e.dataset.run, e.dataset.key, e.dataset.value, e.textContent.trim()]),"
                      " outcome: (document.querySelector('.outcome') || {}).textContent,"
                      " svgs: document.querySelectorAll('svg.chart').length,"
                      " axes: Array.from(document.querySelectorAll('svg.chart[data-axis=\"time\"]'))"
                      ".map(e => [e.querySelector('title').textContent, e.dataset.xMin, e.dataset.xMax]),"
                      " empty: document.querySelectorAll('svg.chart text.empty').length,"
                      " load: performance.getEntriesByType('navigation')[0].loadEventEnd,"
                      " external: Array.from(document.querySelectorAll('[src],link[href],script[src]')).length,"
                      " height: document.documentElement.scrollHeight})")
        page = json.loads(browser.call("Runtime.evaluate", {"expression": expression, "returnByValue": True},
                                       session=session)["result"]["value"])
        checked = {label: 0 for label in summaries}
        for run, key, value, text in page["numbers"]:
            if run not in summaries:
                fail(f"number {key} for run {run!r}, but no summary given for it")
            expected = lookup(summaries[run], key)
            if isinstance(expected, bool) or not isinstance(expected, (int, float)):
                fail(f"{run} {key}: summary value {expected!r} is not a number")
            if abs(float(value) - float(expected)) > 1e-9 * max(1.0, abs(float(expected))):
                fail(f"{run} {key}: page shows {value}, summary.json has {expected}")
            if not text:
                fail(f"{run} {key}: empty text")
            checked[run] += 1
        for label, count in checked.items():
            if count < 10:
                fail(f"only {count} numbers of run {label!r} checked")
        if page["svgs"] < 5:
            fail(f"only {page['svgs']} charts")
        check_time_axes(page["axes"], summaries)
        if page["empty"]:
            fail(f"{page['empty']} charts are drawn empty (a chart with no data must be left out with a note)")
        if page["external"]:
            fail(f"{page['external']} elements reference external resources")
        if page["load"] > 1000:
            fail(f"load took {page['load']:.0f} ms (> 1 s)")

        shot = browser.call("Page.captureScreenshot",
                            {"format": "png", "captureBeyondViewport": True,
                             "clip": {"x": 0, "y": 0, "width": 960,
                                      "height": min(page["height"], int(options["--shot-height"])),
                                      "scale": float(options["--shot-scale"])}},
                            session=session, timeout=60)
        data = base64.b64decode(shot["data"])
        width, height, channels, rows = png_pixels(data)
        colored, colors = 0, set()
        for row in rows[::4]:
            for x in range(0, width * channels, channels * 4):
                pixel = row[x:x + 3]
                colors.add(pixel)
                if pixel != b"\xff\xff\xff":
                    colored += 1
        samples = len(rows[::4]) * len(range(0, width * channels, channels * 4))
        if colored < samples * 0.02 or len(colors) < 8:
            fail(f"screenshot looks blank: {colored}/{samples} non-white samples, {len(colors)} colours")
        if screenshot_path:
            with open(screenshot_path, "wb") as handle:
                handle.write(data)
        print(f"report check: {os.path.basename(os.path.dirname(html))}/report.html {size / 1024:.0f} KB, "
              f"no console errors, {sum(checked.values())} numbers equal summary.json, {page['svgs']} charts "
              f"({len(page['axes'])} on one time axis), "
              f"loaded in {page['load']:.0f} ms, screenshot {width}x{height} not blank: passed")
    finally:
        browser.close()


if __name__ == "__main__":
    main()
