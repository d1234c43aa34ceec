#!/usr/bin/env bash
# Installs trainsim's build and test dependencies from Debian packages.
# Idempotent: packages already present are not reinstalled; apt-get runs only when something is missing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libeigen3-dev libsimgrid-dev nlohmann-json3-dev libcli11-dev doctest-dev
  libbenchmark-dev python3 python3-jsonschema python3-yaml
  clang libclang-rt-14-dev
  chromium python3-html5lib  # HTML report tests: headless render + screenshots (tests/reports)
  slurm-wlm  # a real Slurm (slurmctld, slurmd) for the scheduler comparison (tests/sim/slurm)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  echo "bootstrap: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
echo "bootstrap: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
