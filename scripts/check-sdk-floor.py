#!/usr/bin/env python3
"""Static check of the SDK's floor: iOS 15 (macOS 12) and a Swift 6.0 compiler.

Nothing in this repository can build for Apple platforms, so this script stands in for that
build: it fails when a source of the SDK (Sources/OptoLink) uses, outside an availability guard,
an API newer than iOS 15 or a compiler feature newer than Swift 6.0, from the list below. It is a
static text check, not an Apple build: it knows only the names listed, and reads `@available`,
`if #available` / `guard #available` and `#if compiler(>=X)` as guards.

Usage: scripts/check-sdk-floor.py [DIR ...]   (default Sources/OptoLink; exit 1 on a finding)
       scripts/check-sdk-floor.py --self-test (shows it fails on an unguarded TaskExecutor)
"""
import re
import sys
import tempfile
from pathlib import Path

FLOOR_IOS = (15, 0)
FLOOR_COMPILER = (6, 0)

# (name, pattern, kind, first version): kind "ios" is the first iOS release with the API
# (macOS: iOS - 3, e.g. iOS 16 = macOS 13); kind "compiler" is the first Swift compiler.
NEWER = [
    ("Clock", r"(?<![\w.])(?:any |some |: ?)?Clock\s*<|:\s*Clock\b|\bany Clock\b|\bsome Clock\b", "ios", (16, 0)),
    ("ContinuousClock", r"\bContinuousClock\b", "ios", (16, 0)),
    ("SuspendingClock", r"\bSuspendingClock\b", "ios", (16, 0)),
    ("Duration", r"(?<![\w])Duration\b", "ios", (16, 0)),
    ("Task.sleep(for:)", r"\bsleep\(\s*for:\s*\.(?:seconds|milliseconds|microseconds|nanoseconds)\b|Task\.sleep\(\s*for:", "ios", (16, 0)),
    ("TaskExecutor", r"\bTaskExecutor\b", "ios", (18, 0)),
    ("executorPreference", r"\bexecutorPreference\b", "ios", (18, 0)),
    ("Mutex", r"\bMutex\b", "ios", (18, 0)),
    ("Atomic", r"\bAtomic\b|\bimport Synchronization\b", "ios", (18, 0)),
    ("Regex", r"\bRegex\b|\bRegexBuilder\b", "ios", (16, 0)),
    ("regex literal", r"#/|(?<![\w)\]\s])/(?![\s/*=])[^/\n]+/(?![\w/])", "ios", (16, 0)),
    ("URL(filePath:)", r"URL\(\s*filePath:", "ios", (16, 0)),
    ("URL.appending(path:)", r"\.appending\(\s*path:", "ios", (16, 0)),
    ("withDiscardingTaskGroup", r"\bwith(?:Throwing)?DiscardingTaskGroup\b", "ios", (17, 0)),
    ("nonisolated(nonsending)", r"\bnonisolated\s*\(\s*nonsending\s*\)", "compiler", (6, 2)),
    ("@concurrent", r"@concurrent\b", "compiler", (6, 2)),
]

AVAILABLE = re.compile(r"[@#]available\s*\(([^)]*)\)")
COMPILER_IF = re.compile(r"^\s*#if\s+compiler\(\s*>=\s*(\d+)\.(\d+)\s*\)")


def version(text):
    parts = [int(p) for p in text.split(".")]
    return (parts + [0])[:2]


def ios_version_of(arguments):
    """The iOS version an availability list guards (`*` alone: none; Linux has no guard to read)."""
    for item in arguments.split(","):
        item = item.strip()
        match = re.match(r"iOS\s+(\d+(?:\.\d+)?)", item)
        if match:
            return tuple(version(match.group(1)))
    return None


def strip(line, in_block):
    """The code of `line` without comments and string contents; and whether a /* */ stays open."""
    out, i = [], 0
    while i < len(line):
        if in_block:
            end = line.find("*/", i)
            if end < 0:
                return "".join(out), True
            i, in_block = end + 2, False
            continue
        if line.startswith("//", i):
            break
        if line.startswith("/*", i):
            in_block, i = True, i + 2
            continue
        if line[i] == '"':
            j = i + 1
            while j < len(line) and line[j] != '"':
                j += 2 if line[j] == "\\" else 1
            out.append('""')
            i = j + 1
            continue
        out.append(line[i])
        i += 1
    return "".join(out), in_block


def check_file(path):
    findings = []
    depth = 0
    guards = []  # (depth at which the guarded block opened, iOS version)
    pending = None  # an availability guard waiting for its `{`
    compiler_stack = []  # per #if: the compiler version its active branch guarantees (or None)
    in_block = False
    for number, raw in enumerate(Path(path).read_text().splitlines(), 1):
        code, in_block = strip(raw, in_block)
        stripped = code.strip()
        match = COMPILER_IF.match(code)
        if match:
            compiler_stack.append((int(match.group(1)), int(match.group(2))))
            continue
        if stripped.startswith("#if"):
            compiler_stack.append(None)
            continue
        if stripped.startswith("#else") or stripped.startswith("#elseif"):
            if compiler_stack:
                compiler_stack[-1] = None
            continue
        if stripped.startswith("#endif"):
            if compiler_stack:
                compiler_stack.pop()
            continue
        for argument in AVAILABLE.findall(code):
            guarded = ios_version_of(argument)
            if guarded:
                pending = guarded if pending is None else max(pending, guarded)
        ios_guard = max([g for _, g in guards] + [pending or FLOOR_IOS, FLOOR_IOS])
        compiler_guard = max([c for c in compiler_stack if c] + [FLOOR_COMPILER])
        scan = AVAILABLE.sub("", code)
        for name, pattern, kind, first in NEWER:
            if not re.search(pattern, scan):
                continue
            have = ios_guard if kind == "ios" else compiler_guard
            if have < first:
                need = "iOS %d.%d" % first if kind == "ios" else "a Swift %d.%d compiler" % first
                fix = "@available / if #available" if kind == "ios" else "#if compiler(>=%d.%d)" % first
                findings.append("%s:%d: %s needs %s; guard it with %s (floor: iOS 15, Swift 6.0)"
                                % (path, number, name, need, fix))
        for char in code:
            if char == "{":
                depth += 1
                if pending is not None:
                    guards.append((depth, pending))
                    pending = None
            elif char == "}":
                while guards and guards[-1][0] == depth:
                    guards.pop()
                depth -= 1
    return findings


def check(directories):
    findings = []
    for directory in directories:
        for path in sorted(Path(directory).rglob("*.swift")):
            findings.extend(check_file(path))
    return findings


def self_test():
    """The check fails on an unguarded TaskExecutor and passes on the same code behind guards."""
    unguarded = "func start(on executor: any TaskExecutor) {\n    Task(executorPreference: executor) {}\n}\n"
    guarded = (
        "@available(iOS 18, macOS 15, *)\nfunc start(on executor: any TaskExecutor) {\n"
        "    Task(executorPreference: executor) {}\n}\n"
        "func start() {\n    if #available(iOS 18, macOS 15, *) {\n        let e: (any TaskExecutor)? = nil\n"
        "        _ = e\n    }\n}\n"
        "#if compiler(>=6.2)\n    nonisolated(nonsending) func f() async {}\n#else\n    func f() async {}\n#endif\n"
    )
    outside = "func later() {\n    let e: (any TaskExecutor)? = nil\n}\n"
    ok = True
    with tempfile.TemporaryDirectory() as directory:
        cases = [("unguarded", unguarded, 2), ("guarded", guarded, 0), ("guarded" + "+outside", guarded + outside, 1)]
        for name, text, expected in cases:
            path = Path(directory) / (name + ".swift")
            path.write_text(text)
            found = check_file(path)
            if len(found) != expected:
                print("self-test %s: expected %d finding(s), got %d: %s" % (name, expected, len(found), found))
                ok = False
            path.unlink()
    return ok


def main(arguments):
    if arguments[:1] == ["--self-test"]:
        if not self_test():
            return 1
        print("check-sdk-floor self-test: an unguarded TaskExecutor fails, a guarded one passes")
        return 0
    findings = check(arguments or ["Sources/OptoLink"])
    for finding in findings:
        print(finding)
    if findings:
        print("check-sdk-floor: %d use(s) newer than the SDK's floor (iOS 15, Swift 6.0)" % len(findings))
        return 1
    print("check-sdk-floor: no API newer than iOS 15 or compiler feature newer than Swift 6.0 outside a guard")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
