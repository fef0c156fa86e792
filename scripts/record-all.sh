#!/usr/bin/env bash
# Records every BFS evidence file that evidence/results/ holds, on a machine
# with NVIDIA GPUs, from the repository root with bin/gpuplan built by
# `make build-cuda` (or `make gpu-test-bins`) from the commit being measured:
#
#   record-all.sh OUTDIR GUNROCK_BFS [NAME...]
#
# GUNROCK_BFS is the peer bundle's built bin/bfs. With NAMEs (for example
# grid-2048 road-2048) only those files are recorded. The high-diameter
# graphs take 8 roots (thousands of levels each, and Gunrock spends about
# 10 s per sample of 16 roots on them); the Kronecker graphs 16 or 8. With two or more GPUs the
# single-GPU files are recorded in two streams side by side, one on GPU 0
# and one on GPU 1, each process (Gunrock's too) seeing only its own GPU;
# then kron-26-p2.csv is recorded over both GPUs with NCCL (libnccl.so.2 from
# GPUPLAN_NCCL_LIBRARY, else the first one found under /usr and /opt). With
# one GPU both streams run one after the other and the partitioned file is
# left out. Copy the files to evidence/results/ and run `gpuplan gate`.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: record-all.sh OUTDIR GUNROCK_BFS [NAME...]}
peer=${2:?usage: record-all.sh OUTDIR GUNROCK_BFS [NAME...]}
peer=$(realpath "$peer")
shift 2
only=" $* "
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
fail=0

# bench NAME FLAGS...: records OUTDIR/NAME.csv, its output in OUTDIR/NAME.log.
bench() {
  local name=$1 t=$SECONDS
  shift
  if [ "$only" != "  " ] && [[ "$only" != *" $name "* ]]; then
    return 0
  fi
  if ./bin/gpuplan bench frontier --copy-mib 1024 "$@" -o "$out/$name.csv" >"$out/$name.log" 2>&1; then
    echo "$name: recorded ($((SECONDS - t)) s)"
  else
    echo "$name: FAILED ($((SECONDS - t)) s); the end of $out/$name.log:"
    tail -n 8 "$out/$name.log"
    return 1
  fi
}

stream0() {
  bench grid-2048 --graph grid:2048 --roots 8 --samples 30 --peer-gunrock "$peer" --peer-samples 10 || return 1
  bench grid-2048-corners --graph grid:2048 --root-ids 0,4194303 --samples 20 || return 1
  bench road-2048 --graph road:2048 --roots 8 --samples 10 --peer-gunrock "$peer" --peer-samples 10
}

stream1() {
  bench kron-22 --graph kron:22 --roots 16 --samples 10 --peer-gunrock "$peer" --peer-samples 10 || return 1
  bench kron-22-batch-64 --graph kron:22 --batch 64 --samples 10 || return 1
  bench rgg-2000000-8 --graph rgg:2000000:8 --roots 8 --samples 10 --peer-gunrock "$peer" --peer-samples 10 || return 1
  bench rgg-2000000-8-top-down --graph rgg:2000000:8 --roots 8 --samples 10 --direction top-down --arms host-loop,megakernel || return 1
  bench kron-25-h200 --graph kron:25 --roots 16 --samples 10 || return 1
  bench kron-26-h200 --graph kron:26 --roots 8 --samples 5 --arms host-loop,device-loop || return 1
  bench kron-22-sim2 --graph kron:22 --simulate-devices 2 --roots 8 --samples 5
}

if [ "$gpus" -ge 2 ]; then
  CUDA_VISIBLE_DEVICES=0 stream0 &
  p0=$!
  CUDA_VISIBLE_DEVICES=1 stream1 &
  p1=$!
  wait $p0 || fail=1
  wait $p1 || fail=1
  lib=${GPUPLAN_NCCL_LIBRARY:-$(find /usr /opt -name libnccl.so.2 2>/dev/null | head -n 1)}
  GPUPLAN_NCCL_LIBRARY=$lib bench kron-26-p2 --graph kron:26 --devices 2 --roots 8 --samples 5 || fail=1
elif [ "$gpus" -eq 1 ]; then
  stream0 || fail=1
  stream1 || fail=1
  echo "kron-26-p2: left out (one GPU)"
else
  echo "record-all: no NVIDIA GPU found (nvidia-smi -L lists none)"
  exit 1
fi
exit $fail
