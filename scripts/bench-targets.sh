#!/usr/bin/env bash
# Records the BFS benchmarks of the direction-optimizing, multi-source and
# peer targets on a machine with an NVIDIA GPU, from the repository root
# with bin/gpuplan built by `make gpu-test-bins` (or `make build-cuda`):
#
#   bench-targets.sh OUTDIR [GUNROCK_BFS]
#
# writes, 16 roots and 10 samples per arm each (the gate's minimum):
#   OUTDIR/kron-22.csv          Kronecker scale 22, direction-optimizing
#   OUTDIR/grid-2048.csv        the 2048 x 2048 grid (adaptive run-ahead)
#   OUTDIR/road-2048.csv        the road-like graph on a 2048 x 2048 lattice
#   OUTDIR/rgg-2000000-8.csv    a random geometric graph of 2M vertices
#   OUTDIR/rgg-2000000-8-top-down.csv  the same, every level top-down (the
#                               megakernel runs ahead instead of being
#                               level-synchronous), megakernel and host loop
#   OUTDIR/kron-22-batch-64.csv 64 roots: multi-source passes against the 64
#                               single-root traversals
# With GUNROCK_BFS (the peer bundle's built bin/bfs), the first four also
# run Gunrock on the same graph file and roots (10 samples) as the external
# arm gunrock. Each file carries the summary table, the plans, the
# directions and the megakernel's levels per barrier as comment lines.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: bench-targets.sh OUTDIR [GUNROCK_BFS]}
peer=()
if [ -n "${2:-}" ]; then
  peer=(--peer-gunrock "$2" --peer-samples 10)
fi
mkdir -p "$out"
bench=(./bin/gpuplan bench frontier --copy-mib 1024 --samples 10)
"${bench[@]}" --graph kron:22 --roots 16 "${peer[@]}" -o "$out/kron-22.csv"
"${bench[@]}" --graph grid:2048 --roots 16 "${peer[@]}" -o "$out/grid-2048.csv"
"${bench[@]}" --graph road:2048 --roots 16 "${peer[@]}" -o "$out/road-2048.csv"
"${bench[@]}" --graph rgg:2000000:8 --roots 16 "${peer[@]}" -o "$out/rgg-2000000-8.csv"
"${bench[@]}" --graph rgg:2000000:8 --roots 16 --direction top-down --arms host-loop,megakernel -o "$out/rgg-2000000-8-top-down.csv"
"${bench[@]}" --graph kron:22 --batch 64 -o "$out/kron-22-batch-64.csv"
