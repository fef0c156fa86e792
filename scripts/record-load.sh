#!/usr/bin/env bash
# Records the BFS query server's load evidence on a machine with an NVIDIA
# GPU, from the repository root with bin/gpuplan built by `make build-cuda`
# from the commit being measured:
#
#   record-load.sh OUTDIR [soak]
#
# kron-22: 1, 16, 64 and 256 clients, the default 200 us window beside the
# serial baseline (one query at a time through the same server); the
# single-root wall time to compare one client's p50 with is the device
# loop's in kron-22.csv. rgg-2000000-8: the same clients over three windows.
# With "soak", ten minutes of mixed queries with random disconnects, which
# fails on growth of device memory, goroutines or file descriptors. Copy the
# CSVs to evidence/load/ and read them with `gpuplan report FILE`.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: record-load.sh OUTDIR [soak]}
mkdir -p "$out"
fail=0

# load NAME FLAGS...: `gpuplan load` into OUTDIR/NAME.csv and NAME.svg.
load() {
  local name=$1 t=$SECONDS
  shift
  if ./bin/gpuplan load "$@" -o "$out/$name.csv" --chart "$out/$name.svg" >"$out/$name.md" 2>"$out/$name.log"; then
    echo "$name: recorded ($((SECONDS - t)) s)"
    cat "$out/$name.md"
  else
    echo "$name: FAILED ($((SECONDS - t)) s); the end of $out/$name.log:"
    tail -n 8 "$out/$name.log"
    fail=1
  fi
}

load load-kron-22 --graph kron:22 --clients 1,16,64,256 --duration 10s
load load-rgg-2000000-8 --graph rgg:2000000:8 --clients 1,64,256 --windows 50us,200us,1ms --duration 10s
if [ "${2:-}" = soak ]; then
  t=$SECONDS
  if ./bin/gpuplan load --graph kron:22 --soak --clients 256 --serial=false --duration 10m >"$out/soak-kron-22.md" 2>"$out/soak-kron-22.log"; then
    echo "soak-kron-22: no leak ($((SECONDS - t)) s)"
  else
    echo "soak-kron-22: FAILED; the end of $out/soak-kron-22.log:"
    tail -n 8 "$out/soak-kron-22.log"
    fail=1
  fi
fi
exit $fail
