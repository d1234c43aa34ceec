#!/usr/bin/env bash
# Runs every libFuzzer target for FUZZ_SECONDS (default 60) on 1 job each, over seed corpora from the repository
# (examples, test data). New inputs go to the build folder's corpora, never into the repository. Prints each
# target's executions; exits non-zero on the first finding (the crashing input is kept as crash-*/leak-*/timeout-*
# in the build folder's fuzz-artifacts).
set -euo pipefail
build=${1:?build folder}
seconds=${FUZZ_SECONDS:-60}
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
)
declare -A dicts=([fuzz_scenario]=tests/fuzz/json.dict [fuzz_calibration_profile]=tests/fuzz/json.dict)

status=0
for target in fuzz_scenario fuzz_calibration_profile fuzz_training_log fuzz_nccl_tests fuzz_gemm_csv; do
  bin="$build/tests/fuzz/$target"
  [[ -x "$bin" ]] || { echo "fuzz: $bin not built" >&2; exit 1; }
  corpus="$build/fuzz-corpus/$target"
  mkdir -p "$corpus"
  # Seeds: folders as they are, single files copied into the working corpus.
  inputs=()
  for s in ${seeds[$target]}; do
    if [[ -d "$root/$s" ]]; then inputs+=("$root/$s"); elif [[ -f "$root/$s" ]]; then cp "$root/$s" "$corpus/"; fi
  done
  dict=()
  [[ -n "${dicts[$target]:-}" ]] && dict=(-dict="$root/${dicts[$target]}")
  log="$build/fuzz-$target.log"
  echo "fuzz: $target for ${seconds}s"
  if ! "$bin" -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$artifacts/$target-" "${dict[@]}" "$corpus" "${inputs[@]}" > "$log" 2>&1; then
    echo "fuzz: $target FOUND A PROBLEM; log: $log" >&2
    tail -n 60 "$log" >&2
    status=1
    continue
  fi
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  echo "fuzz: $target ok, $execs executions, corpus $(ls "$corpus" | wc -l) inputs"
done
exit $status
