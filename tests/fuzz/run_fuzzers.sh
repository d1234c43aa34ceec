#!/usr/bin/env bash
# Runs every libFuzzer target (one job each) over its seeds: the repository's examples and test data, and the
# committed corpus tests/fuzz/corpus/<target> (inputs earlier searches found, minimized by coverage).
#   FUZZ_SECONDS unset  replay: every seed and corpus input once, nothing new generated. The same inputs on every
#                       machine, so it passes or fails the same way everywhere (what `make test` and CI run).
#   FUZZ_SECONDS=S      search: S seconds of mutation per target from a random seed; new inputs go to the build
#                       folder's corpus (kept between runs), never into the repository (`make fuzz`).
#   FUZZ_RUNS=N         search: N executions per target instead of a time budget (the same depth on any machine).
#   FUZZ_TARGETS="a b"  only these targets (default: all); two such runs side by side use two cores.
#   FUZZ_MERGE=1        after a search, merge what it found into tests/fuzz/corpus (minimized by coverage).
# Exits non-zero if any target finds a problem; the input is kept as crash-*/leak-*/timeout-* in the build
# folder's fuzz-artifacts. A fixed finding joins the committed corpus, so the replay keeps checking it.
set -euo pipefail
build=${1:?build folder}
seconds=${FUZZ_SECONDS:-}
runs=${FUZZ_RUNS:-}
all_targets="fuzz_scenario fuzz_calibration_profile fuzz_training_log fuzz_nccl_tests fuzz_gemm_csv fuzz_cluster_trace fuzz_output_escaping fuzz_flag_values"
root=$(cd "$(dirname "$0")/../.." && pwd)
artifacts="$build/fuzz-artifacts"
mkdir -p "$artifacts"

# target: seed folders and files (relative to the repository root)
declare -A seeds=(
  [fuzz_scenario]="scenarios/examples scenarios/examples/clusters tests/cli/bad tests/cli/golden scenarios/default.json"
  [fuzz_calibration_profile]="tests/calibrate/data"
  [fuzz_training_log]="tests/calibrate/data"
  [fuzz_nccl_tests]="tests/calibrate/data"
  [fuzz_gemm_csv]="tests/calibrate/data"
  [fuzz_cluster_trace]=""
  [fuzz_output_escaping]="tests/cli/bad tests/sim/cluster"
  [fuzz_flag_values]=""
)
declare -A dicts=([fuzz_scenario]=tests/fuzz/json.dict [fuzz_calibration_profile]=tests/fuzz/json.dict)

status=0
for target in ${FUZZ_TARGETS:-$all_targets}; do
  bin="$build/tests/fuzz/$target"
  [[ -x "$bin" ]] || { echo "fuzz: $bin not built" >&2; exit 1; }
  committed="$root/tests/fuzz/corpus/$target"
  corpus="$build/fuzz-corpus/$target"  # the first folder: where libFuzzer writes what it finds
  mkdir -p "$corpus"
  inputs=()
  [[ -d "$committed" ]] && inputs+=("$committed")
  for s in ${seeds[$target]}; do
    if [[ -d "$root/$s" ]]; then inputs+=("$root/$s"); elif [[ -f "$root/$s" ]]; then cp "$root/$s" "$corpus/"; fi
  done
  dict=()
  [[ -n "${dicts[$target]:-}" ]] && dict=(-dict="$root/${dicts[$target]}")
  if [[ -n "$runs" ]]; then budget=(-runs="$runs"); what="search for $runs executions"
  elif [[ -n "$seconds" ]]; then budget=(-max_total_time="$seconds"); what="search for ${seconds}s"
  else budget=(-runs=0); what="replay of the seeds and the committed corpus"; fi
  log="$build/fuzz-$target.log"
  echo "fuzz: $target, $what"
  if ! "$bin" "${budget[@]}" -max_len=65536 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$artifacts/$target-" "${dict[@]}" "$corpus" "${inputs[@]}" > "$log" 2>&1; then
    echo "fuzz: $target FOUND A PROBLEM; log: $log" >&2
    tail -n 60 "$log" >&2
    status=1
    continue
  fi
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  echo "fuzz: $target ok, $execs executions"
  if [[ -n "$seconds$runs" && "${FUZZ_MERGE:-}" == 1 ]]; then
    mkdir -p "$committed"
    "$bin" -merge=1 -max_len=65536 -timeout=10 -rss_limit_mb=2048 "$committed" "$corpus" > "$build/fuzz-merge-$target.log" 2>&1
    echo "fuzz: $target corpus now $(ls "$committed" | wc -l) inputs ($(du -sh "$committed" | cut -f1))"
  fi
done
exit $status
