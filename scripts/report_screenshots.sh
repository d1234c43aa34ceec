#!/usr/bin/env bash
# Regenerates the README's report screenshots, docs/screenshots/<kind>.png, one per report kind (`make report-screenshots`).
# Each entry of `reports` below is "<kind>|<trainsim arguments>"; the script adds `--report <tmp>/<kind>.html`, checks the
# page (tests/reports/check_html.py) and screenshots it in headless Chromium (tests/reports/browser_check.py, which also
# fails on console errors and undrawn charts). A page that fails leaves its old screenshot in place and the script exits 1.
#   bash scripts/report_screenshots.sh [BUILD_DIR]      (default build; SCREENSHOT_HEIGHT=0 for the whole page)
set -euo pipefail

# ---- The report commands, one per report kind. --------------------------------------------------------------------
reports=(
  "estimate|estimate scenarios/examples/gpt3-175b-pretrain-1024xa100.json"
  "plan|plan --gpus 8..64"
  "reliability|reliability scenarios/examples/llama3-405b-reliability-16k-h100.json"
  "simulate|simulate scenarios/examples/mixtral-8x7b-pretrain-64xh100.json"
  "cluster|cluster --trace philly-chronus:../shared/traces/philly-derived-chronus/trace_job_Philly_MIX1.csv --nodes 160 --policy fifo,backfill,las,drf"
  "sweep|sweep merge {tmp}/sweep"
)
# Run first: what a report above reads ({tmp} is the script's scratch folder).
setup=(
  "sweep tests/sweep/plan_grid.json --out {tmp}/sweep"
)
# ---------------------------------------------------------------------------------------------------------------------

root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
trainsim="$build/trainsim"
height=${SCREENSHOT_HEIGHT:-1000}  # the top of the report, what a reader sees first
python=/usr/bin/python3
[[ -x $python ]] || python=python3

chromium=$(command -v chromium || command -v chromium-browser || true)
if [[ -z $chromium ]]; then
  echo "report-screenshots: chromium not found; install it with 'make bootstrap' (Debian package chromium)" >&2
  exit 1
fi
if [[ ! -x $trainsim ]]; then
  echo "report-screenshots: $trainsim not found; build first ('make build')" >&2
  exit 1
fi
if ((${#reports[@]} == 0)); then
  echo "report-screenshots: no report commands listed in scripts/report_screenshots.sh yet" >&2
  exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$root/docs/screenshots"
failed=0
cd "$root"
for s in "${setup[@]}"; do
  read -r -a args <<<"${s//\{tmp\}/$tmp}"
  "$trainsim" "${args[@]}" >/dev/null
done
for entry in "${reports[@]}"; do
  kind=${entry%%|*}
  spec=${entry#*|}
  read -r -a args <<<"${spec//\{tmp\}/$tmp}"
  html="$tmp/$kind.html"
  echo "== $kind: trainsim ${args[*]} --report $html"
  if "$trainsim" "${args[@]}" --report "$html" >"$tmp/$kind.log" 2>&1 &&
     "$python" tests/reports/check_html.py "$html" &&
     "$python" tests/reports/browser_check.py --chromium "$chromium" --out-dir "$tmp/shots" --height "$height" "$html"; then
    cp "$tmp/shots/$kind.png" "docs/screenshots/$kind.png"
    echo "   wrote docs/screenshots/$kind.png"
  else
    echo "   FAILED ($kind); trainsim's output:" >&2
    cat "$tmp/$kind.log" >&2
    failed=1
  fi
done
exit $failed
