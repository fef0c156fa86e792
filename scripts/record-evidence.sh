#!/usr/bin/env bash
# Records the BFS evidence that evidence/gates.json judges, on a machine
# with an NVIDIA GPU, from the repository root with bin/gpuplan built by
# `make gpu-test-bins` (or `make build-cuda`) from the commit being measured:
#
#   record-evidence.sh OUTDIR [GUNROCK_BFS]
#
# writes OUTDIR/grid-2048.csv (16 random roots, 30 samples per arm),
# OUTDIR/grid-2048-corners.csv (the two opposite corners, 20 samples) and
# OUTDIR/kron-22.csv (16 roots, 10 samples), each with the summary table and
# the plans as comment lines; with GUNROCK_BFS (the peer bundle's built
# bin/bfs) the grid and Kronecker files also hold Gunrock's external arm
# (10 samples). scripts/bench-targets.sh records the other graphs. Copy
# them to evidence/results/ and run `gpuplan gate`.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: record-evidence.sh OUTDIR [GUNROCK_BFS]}
peer=()
if [ -n "${2:-}" ]; then
  peer=(--peer-gunrock "$2" --peer-samples 10)
fi
mkdir -p "$out"
bench=(./bin/gpuplan bench frontier --copy-mib 1024)
"${bench[@]}" --graph grid:2048 --roots 16 --samples 30 "${peer[@]}" -o "$out/grid-2048.csv"
"${bench[@]}" --graph grid:2048 --root-ids 0,4194303 --samples 20 -o "$out/grid-2048-corners.csv"
"${bench[@]}" --graph kron:22 --roots 16 --samples 10 "${peer[@]}" -o "$out/kron-22.csv"
