#!/usr/bin/env bash
# Regenerates the README's accuracy tables (between the "accuracy:begin" and "accuracy:end" markers) from a fresh run
# of the accuracy harness over ../shared/reference/: per file, leave-one-source-out, fit/OOM verdicts, band coverage.
# Usage: scripts/readme_accuracy.sh BUILD_DIR
set -euo pipefail
build="${1:-build}"
tables="$(mktemp)"
trap 'rm -f "$tables" "$tables.readme"' EXIT
"$build/tests/trainsim_accuracy" --write-markdown "$tables" > /dev/null || true  # a guard failing still yields the tables
[ -s "$tables" ] || { echo "error: $build/tests/trainsim_accuracy wrote no tables" >&2; exit 1; }
grep -q '<!-- accuracy:begin -->' README.md && grep -q '<!-- accuracy:end -->' README.md ||
  { echo "error: README.md lacks the accuracy:begin / accuracy:end markers" >&2; exit 1; }
awk -v tables="$tables" '
  /<!-- accuracy:begin -->/ { print; while ((getline line < tables) > 0) print line; skip = 1; next }
  /<!-- accuracy:end -->/ { skip = 0 }
  !skip { print }
' README.md > "$tables.readme"
mv "$tables.readme" README.md
echo "README.md: accuracy tables regenerated"
