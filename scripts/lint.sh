#!/usr/bin/env bash
# Lints every Swift file against .swift-format (4 spaces, 120 columns) with the toolchain's
# swift-format; exits non-zero on any finding. .ci/run gates on it.
#
#   scripts/lint.sh            # lint Sources, Tests and Benchmarks
#   scripts/lint.sh FILE...    # lint only these files
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$#" -gt 0 ]; then
    exec swift format lint --strict "$@"
fi
exec swift format lint --strict -r Sources Tests Benchmarks
