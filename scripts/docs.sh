#!/usr/bin/env bash
# Builds DocC archives for OptoLink (with its catalog, Sources/OptoLink/OptoLink.docc) and
# OptoLinkTestSupport from symbol graphs, and fails when the SDK's public API has undocumented
# declarations or DocC warns about either module (an undocumented parameter, a broken link).
# Output: .build/docs/<Module>.doccarchive. Needs no network; `.ci/run` runs it.
#
#   scripts/docs.sh
#
# Uses the toolchain's docc (`swift build -Xswiftc -emit-symbol-graph`, then `docc convert`).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
DOCC="$(command -v docc || xcrun --find docc 2>/dev/null || true)"
[ -n "$DOCC" ] || { echo "docs.sh: docc not found in the toolchain" >&2; exit 2; }

GRAPHS="$ROOT/.build/symbol-graphs"
OUT="$ROOT/.build/docs"
# Graphs are rewritten only when a module recompiles, so keep the directory between runs.
rm -rf "$OUT" "$GRAPHS"/*-only && mkdir -p "$GRAPHS" "$OUT"
swift build --target OptoLinkTestSupport --scratch-path "$ROOT/.build/docs-build" \
    -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$GRAPHS" 2>&1 | tail -n 2

status=0
for module in OptoLink OptoLinkTestSupport; do
    catalog=()
    [ -d "Sources/$module/$module.docc" ] && catalog=("Sources/$module/$module.docc")
    module_graphs="$GRAPHS/$module-only"
    mkdir -p "$module_graphs"
    cp "$GRAPHS/$module".symbols.json "$GRAPHS/$module"@*.symbols.json "$module_graphs"/ 2>/dev/null || true
    log="$OUT/$module.log"
    if ! "$DOCC" convert "${catalog[@]}" --additional-symbol-graph-dir "$module_graphs" \
        --fallback-display-name "$module" --fallback-bundle-identifier "dev.optolink.$module" \
        --output-path "$OUT/$module.doccarchive" --analyze >"$log" 2>&1; then
        status=1
    fi
    # Any DocC warning fails: a parameter without its `- Parameters:` line, a broken symbol link.
    if grep -E "warning|error" "$log" | sort -u | head -40; then
        status=1
    fi
    # Public declarations of the SDK without a doc comment fail the script (synthesized members,
    # e.g. Equatable's ==, and members inherited from other modules have no source to document).
    if [ "$module" = OptoLink ]; then
        python3 - "$GRAPHS/$module.symbols.json" <<'PY' || status=1
import json, sys
graph = json.load(open(sys.argv[1]))
missing = sorted(
    ".".join(symbol["pathComponents"])
    for symbol in graph["symbols"]
    if symbol.get("accessLevel") == "public" and "docComment" not in symbol
    and symbol.get("location") and not symbol["identifier"]["precise"].startswith("s:S")
)
for name in missing:
    print(f"docs.sh: undocumented public declaration: {name}", file=sys.stderr)
sys.exit(1 if missing else 0)
PY
    fi
    echo "docs.sh: $OUT/$module.doccarchive"
done
exit "$status"
