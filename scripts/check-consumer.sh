#!/usr/bin/env bash
# Builds and runs Tests/Fixtures/ConsumerPackage: a separate package that depends on this one by
# path and uses the OptoLink and OptoLinkTestSupport products as an app's tests would, and the
# OptoLinkSoak product through its public API only. Proves those products are importable from
# outside and that the documented public API is enough for them (debug build).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SCRATCH="${SCRATCH:-$ROOT/.build/consumer-check}"
swift build --package-path "$ROOT/Tests/Fixtures/ConsumerPackage" --scratch-path "$SCRATCH" 2>&1 | tail -n 3
"$SCRATCH/debug/consumer-check"
"$SCRATCH/debug/soak-consumer-check" "$ROOT"
