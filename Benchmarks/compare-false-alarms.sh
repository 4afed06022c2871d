#!/usr/bin/env bash
# How often `compare` cries wolf, and how often it catches a real slowdown.
# Runs the README's main job (Profiles/limits.json, embedded emulator, same seed) N times back to
# back and compares each run with the one before (N-1 identical pairs: every regression is a false
# alarm). Then, for DETECT pairs each, compares an identical run with a run whose emulator answers
# /match 30 ms later, and one whose every /sdk/events answer is 5 ms later (the emulator's
# `latency` fault at rate 1): every regression there is a detection.
# Writes one results file, Benchmarks/results/compare-false-alarms.json (overwritten each run;
# RESULTS=FILE writes elsewhere, for a trial run that must not replace the committed figures).
# Usage: Benchmarks/compare-false-alarms.sh [N (default 20, 2…40)] [DETECT (default N-1, 0…39)]
#   N=20 gives 19 identical pairs and 19 pairs for each of the two slowed variants: 59 runs of
#   about 15 s each. Run it on a quiet machine (MACHINE_NOTE="…" describes the machine in the file).
# The runs use the release build (built here first) unless SOAK_BIN names another binary.
# Each run is bounded (timeout 180 s; the profile lasts 8 s plus at most 20 s of grace).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-20}
DETECT=${2:-$((N - 1))}
if ! [[ $N =~ ^[0-9]+$ ]] || ((N < 2 || N > 40)); then echo "N must be 2…40" >&2; exit 2; fi
if ! [[ $DETECT =~ ^[0-9]+$ ]] || ((DETECT > 39 || DETECT > N - 1)); then
    echo "DETECT must be 0…min(39, N-1)" >&2; exit 2
fi
# SOAK_BIN: an already built optolink-soak for the runs; COMPARE_BIN: another one for the comparisons.
BIN=${SOAK_BIN:-.build/release/optolink-soak}
if [[ -z ${SOAK_BIN:-} ]]; then swift build -c release --product optolink-soak >&2; fi
CMP_BIN=${COMPARE_BIN:-$BIN}
# WORK_DIR: keep the runs there (and reuse the runs already there: only the comparisons are redone).
if [[ -n ${WORK_DIR:-} ]]; then
    WORK=$WORK_DIR
    mkdir -p "$WORK"
else
    WORK=$(mktemp -d /tmp/compare-false-alarms.XXXXXX)
    trap 'rm -rf "$WORK"' EXIT
fi
OUT=${RESULTS:-Benchmarks/results/compare-false-alarms.json}
NOTE=${MACHINE_NOTE:-CPU shared with other builds and tests while this ran}
BUILD=$([[ $BIN == */release/* ]] && echo release || echo "as given: $BIN")
COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)

# The two slowed variants of the profile: the same workload plus a latency fault on one endpoint.
for variant in match:0.03 events:0.005; do
    endpoint=${variant%%:*}
    delay=${variant#*:}
    jq --arg e "$endpoint" --argjson d "$delay" \
        '.backend.faults = {seed: 1, endpoints: {($e): [{kind: "latency", rate: 1, delaySeconds: $d}]}}' \
        Profiles/limits.json >"$WORK/limits-$endpoint-slow.json"
done

# One run, bounded in time (the profile's 8 s plus its 20 s grace, and a margin).
run() { # profile out
    local code=0
    if [[ -f $2/summary.json ]]; then
        jq '.result as $r | {"passed": 0, "failed": 1, "invalid": 2}[$r] // 2' "$2/summary.json"
        return
    fi
    timeout 180 "$BIN" run "$1" --out "$2" >"$2.log" 2>&1 || code=$?
    echo "$code"
}
# One comparison: its exit code and the checks that did not pass, as a JSON object.
compare() { # baseline current kind
    local code=0
    timeout 120 "$CMP_BIN" compare "$1" "$2" --force >"$2.compare.log" 2>&1 || code=$?
    local failed='[]'
    if [[ -f $2/compare/compare.json ]]; then
        failed=$(jq -c '[.checks[] | select(.passed == false or .inconclusive == true) | {name, message}]' \
            "$2/compare/compare.json")
    fi
    jq -cn --arg kind "$3" --argjson code "$code" --argjson failed "$failed" \
        --arg baseline "$(basename "$1")" --arg current "$(basename "$2")" \
        '{kind: $kind, baseline: $baseline, current: $current, exit: $code, failed: $failed}'
}

load_start=$(cut -d' ' -f1-3 /proc/loadavg)
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
: >"$WORK/pairs.jsonl"
: >"$WORK/runs.jsonl"
for ((i = 0; i < N; i++)); do
    code=$(run Profiles/limits.json "$WORK/same-$i")
    echo "{\"run\": \"same-$i\", \"exit\": $code}" >>"$WORK/runs.jsonl"
    if ((i > 0)); then compare "$WORK/same-$((i - 1))" "$WORK/same-$i" identical >>"$WORK/pairs.jsonl"; fi
    if ((i > 0 && i <= DETECT)); then
        for endpoint in match events; do
            code=$(run "$WORK/limits-$endpoint-slow.json" "$WORK/$endpoint-slow-$i")
            echo "{\"run\": \"$endpoint-slow-$i\", \"exit\": $code}" >>"$WORK/runs.jsonl"
            compare "$WORK/same-$((i - 1))" "$WORK/$endpoint-slow-$i" "$endpoint-slow" >>"$WORK/pairs.jsonl"
        done
    fi
    echo "run $((i + 1))/$N done ($(cut -d' ' -f1 /proc/loadavg) load)" >&2
done
load_end=$(cut -d' ' -f1-3 /proc/loadavg)

jq -s --argjson n "$N" --argjson detect "$DETECT" --arg started "$started" \
    --arg loadStart "$load_start" --arg loadEnd "$load_end" --arg cores "$(nproc)" \
    --arg note "$NOTE" --arg build "$BUILD" --arg commit "$COMMIT" \
    --slurpfile runs "$WORK/runs.jsonl" '
    def tally(kind): [.[] | select(.kind == kind)] as $p
        | {pairs: ($p | length), regression: ([$p[] | select(.exit == 1)] | length),
           inconclusive: ([$p[] | select(.exit == 2)] | length), noRegression: ([$p[] | select(.exit == 0)] | length)};
    {benchmark: "compare-false-alarms", profile: "Profiles/limits.json", startedAt: $started,
     binary: $build, commit: $commit,
     machine: {cores: ($cores | tonumber), loadAverageAtStart: $loadStart, loadAverageAtEnd: $loadEnd,
               note: $note},
     identicalRuns: $n, detectionPairsPerFault: $detect,
     identical: tally("identical"), match30msSlower: tally("match-slow"), events5msSlower: tally("events-slow"),
     runs: $runs, pairs: .}' "$WORK/pairs.jsonl" >"$OUT.tmp"
mv "$OUT.tmp" "$OUT"
jq '{identical, match30msSlower, events5msSlower, binary, machine}' "$OUT"
