#!/usr/bin/env bash
# Installs everything tally needs to build, run and test on Debian 12, from Debian's packages.
# Idempotent and quiet: packages already present are not reinstalled; apt-get update runs only
# when something is missing. Needs root (or sudo). Prints one line when done.
set -euo pipefail

PKGS=(
  build-essential cmake pkg-config git
  clang libclang-rt-14-dev llvm
  libcjson-dev libpcre2-dev libcmocka-dev libcurl4-openssl-dev libssl-dev librandom123-dev
  libopenmpi-dev openmpi-bin libhdf5-openmpi-dev hdf5-tools libdeflate-dev zlib1g-dev libzstd-dev libxml2-dev
  python3 python3-h5py python3-numpy python3-scipy python3-pandas python3-mpmath python3-sklearn
  slurmctld slurmd slurm-client slurm-wlm-basic-plugins munge
  # the HTML report's test in a browser (tools/chromium-check.sh, tests/e2e/test_html_chromium.sh):
  # headless Chromium, and a font for its screenshots
  chromium fonts-dejavu-core
)

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

if [ "${#missing[@]}" -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  log="$(mktemp)"
  if ! { $SUDO apt-get update -qq && \
         $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
    cat "$log" >&2
    echo "install-deps: apt-get failed (log above)" >&2
    exit 1
  fi
  rm -f "$log"
  echo "install-deps: installed ${#missing[@]} package(s): ${missing[*]}"
else
  echo "install-deps: all ${#PKGS[@]} packages present"
fi
