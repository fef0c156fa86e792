#!/usr/bin/env bash
# Records every BFS evidence file that evidence/results/ holds, on a machine
# with NVIDIA GPUs, from the repository root with bin/gpuplan built by
# `make build-cuda` (or `make gpu-test-bins`) from the commit being measured:
#
#   record-all.sh OUTDIR GUNROCK_BFS [NAME...]
#
# GUNROCK_BFS is the peer bundle's built bin/bfs; the environment's GAPBS_BFS,
# GSWITCH_BFS and BLEST_BFS, where set, name the other peer bundles' built
# driver binaries, run as peers beside Gunrock (PEER_SAMPLES samples of
# every root each, 10 by default). With NAMEs (for example
# grid-2048 road-2048) only those files are recorded. The high-diameter
# graphs take 8 roots (thousands of levels each, and Gunrock spends about
# 10 s per sample of 16 roots on them); the Kronecker graphs 16 or 8. With two or more GPUs the
# single-GPU files are recorded in two streams side by side, one on GPU 0
# and one on GPU 1, each process (Gunrock's too) seeing only its own GPU;
# then kron-26-p2.csv is recorded over both GPUs with NCCL (libnccl.so.2 from
# GPUPLAN_NCCL_LIBRARY, else the first one found under /usr and /opt). With
# one GPU both streams run one after the other and the partitioned file is
# left out. The e-graph files (math-1e6, egraph-gen-1e6, egraph-gen-1e7 and
# egraph-gen-1e6-giant, whose 769 rounds each change little: the incremental
# arms' case; each file with all six arms) follow the BFS streams, then the
# Kronecker builds (kron-build-22, kron-build-26 and kron-build-28, `gpuplan bench kron`); math-1e6 needs EGG_BENCH, the egg-bench
# baseline's binary, which first writes egg's 1e6 dump under OUTDIR/egg,
# then runs beside the GPU rebuild on it (without it, math-1e6 is left
# out). The example runs of `gpuplan run` (examples.Records: the chains,
# the wide DAG, the decode step and the taint DAG) follow on GPU 0. Copy
# the files to evidence/results/ and run `gpuplan gate`. Before
# recording, `gpuplan gate --list-stale` prints the NAMEs a change left stale.
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

# wanted NAME: whether NAME is to be recorded (every file without NAMEs).
wanted() { [ "$only" = "  " ] || [[ "$only" == *" $1 "* ]]; }

# bench NAME FLAGS...: records OUTDIR/NAME.csv, its output in OUTDIR/NAME.log,
# with the copy ceiling measured beside the arms.
bench() {
  run_bench frontier "$1" --copy-mib 1024 "${@:2}"
}

# partitioned NAME FLAGS...: the same for the partitioned BFS, which
# measures no copy ceiling.
partitioned() {
  run_bench frontier "$@"
}

# egraph NAME FLAGS...: records the e-graph file OUTDIR/NAME.csv.
egraph() {
  run_bench egraph "$@"
}

# run_bench KIND NAME FLAGS...: `gpuplan bench KIND` into OUTDIR/NAME.csv.
run_bench() {
  local kind=$1 name=$2 t=$SECONDS
  shift 2
  wanted "$name" || return 0
  if ./bin/gpuplan bench "$kind" "$@" -o "$out/$name.csv" >"$out/$name.log" 2>&1; then
    echo "$name: recorded ($((SECONDS - t)) s)"
  else
    echo "$name: FAILED ($((SECONDS - t)) s); the end of $out/$name.log:"
    tail -n 8 "$out/$name.log"
    return 1
  fi
}

# peers: the --peer flags of the peers the environment names (GAPBS_BFS,
# GSWITCH_BFS, BLEST_BFS: each bundle's built driver binary), Gunrock's
# always.
peers() {
  local flags=(--peer "gunrock=$peer")
  [ -n "${GAPBS_BFS:-}" ] && flags+=(--peer "gapbs=$(realpath "$GAPBS_BFS")")
  [ -n "${GSWITCH_BFS:-}" ] && flags+=(--peer "gswitch=$(realpath "$GSWITCH_BFS")")
  [ -n "${BLEST_BFS:-}" ] && flags+=(--peer "blest=$(realpath "$BLEST_BFS")")
  printf '%s\n' "${flags[@]}"
}
mapfile -t peer_flags < <(peers)
peer_flags+=(--peer-samples "${PEER_SAMPLES:-10}")

stream0() {
  bench grid-2048 --graph grid:2048 --roots 8 --samples 30 "${peer_flags[@]}" || return 1
  bench grid-2048-corners --graph grid:2048 --root-ids 0,4194303 --samples 20 || return 1
  bench road-2048 --graph road:2048 --roots 8 --samples 10 "${peer_flags[@]}" || return 1
  bench grid3d-160 --graph grid3d:160 --roots 8 --samples 10 || return 1
  bench kron-26-h200 --graph kron:26 --roots 8 --samples 5 --arms host-loop,device-loop
  bench kron-27-h200 --graph kron:27 --roots 8 --samples 10 --arms host-loop,device-loop || return 1
  bench kron-28-h200 --graph kron:28 --roots 8 --samples 10 --arms host-loop,device-loop
}

stream1() {
  bench kron-22 --graph kron:22 --roots 16 --samples 10 "${peer_flags[@]}" || return 1
  bench kron-22-batch-64 --graph kron:22 --batch 64 --samples 30 || return 1
  bench rgg-2000000-8 --graph rgg:2000000:8 --roots 8 --samples 10 "${peer_flags[@]}" || return 1
  bench rgg-2000000-8-top-down --graph rgg:2000000:8 --roots 8 --samples 10 --direction top-down --arms host-loop,megakernel || return 1
  bench kron-25-h200 --graph kron:25 --roots 16 --samples 10 || return 1
  partitioned kron-22-sim2 --graph kron:22 --simulate-devices 2 --roots 8 --samples 5
}

if [ "$gpus" -ge 2 ]; then
  CUDA_VISIBLE_DEVICES=0 stream0 &
  p0=$!
  CUDA_VISIBLE_DEVICES=1 stream1 &
  p1=$!
  wait $p0 || fail=1
  wait $p1 || fail=1
  lib=${GPUPLAN_NCCL_LIBRARY:-$(find /usr /opt -name libnccl.so.2 2>/dev/null | head -n 1)}
  GPUPLAN_NCCL_LIBRARY=$lib partitioned kron-26-p2 --graph kron:26 --devices 2 --roots 8 --samples 5 || fail=1
elif [ "$gpus" -eq 1 ]; then
  stream0 || fail=1
  stream1 || fail=1
  echo "kron-26-p2: left out (one GPU)"
else
  echo "record-all: no NVIDIA GPU found (nvidia-smi -L lists none)"
  exit 1
fi

# The e-graph files: egg's 1e6 dump (written by egg-bench) with egg-bench
# beside the GPU rebuild, and three generated e-graphs, every file with
# the full and the incremental rounds' arms.
egraphs() {
  if wanted math-1e6 && [ -z "${EGG_BENCH:-}" ]; then
    echo "math-1e6: left out (EGG_BENCH is not set)"
  elif wanted math-1e6; then
    EGG_BENCH=$(realpath "$EGG_BENCH")
    "$EGG_BENCH" --preset 1e6 --reps 1 --out "$out/egg" >"$out/egg-dump.log" 2>&1 || {
      echo "math-1e6: FAILED: egg-bench could not write egg's 1e6 dump; the end of $out/egg-dump.log:"
      tail -n 8 "$out/egg-dump.log"
      return 1
    }
    egraph math-1e6 --egraph "file:$out/egg/math-1e6.pre.txt" --peer-egg "$EGG_BENCH" || return 1
  fi
  egraph egraph-gen-1e6 --egraph gen:1e6 --samples 20 || return 1
  egraph egraph-gen-1e7 --egraph gen:1e7 --samples 10 --structural=false || return 1
  egraph egraph-gen-1e6-giant --egraph gen:1000000:7:giant --samples 20
}
egraphs || fail=1

# The Kronecker builds on the GPU (workloads/kronbuild) against the CPU's
# frontier.Kronecker: scale 22 with both arms, scale 26 with one CPU build
# (the reference's checksum and CSR held equal to the GPU's), scale 28
# without the CPU arm (no CPU build runs: the GPU warm-up build, checked on
# its own, is the reference).
builds() {
  run_bench kron kron-build-22 --scale 22 --samples 10 || return 1
  run_bench kron kron-build-26 --scale 26 --samples 10 --cpu-samples 1 || return 1
  run_bench kron kron-build-28 --scale 28 --samples 10 --cpu-samples -1
}
builds || fail=1

# example NAME SPEC FLAGS...: records OUTDIR/NAME.csv with gpuplan run.
example() {
  local name=$1 t=$SECONDS
  shift
  wanted "$name" || return 0
  if CUDA_VISIBLE_DEVICES=0 ./bin/gpuplan run "$@" -o "$out/$name.csv" >"$out/$name.log" 2>&1; then
    echo "$name: recorded ($((SECONDS - t)) s)"
  else
    echo "$name: FAILED ($((SECONDS - t)) s); the end of $out/$name.log:"
    tail -n 8 "$out/$name.log"
    return 1
  fi
}

# The example runs, as examples.Records lists them (a test holds the two
# lists together).
runs() {
  example chain-1000-1 gen:chain:1000:1 --samples 20 || return 1
  example chain-1000-132 gen:chain:1000:132 --samples 20 || return 1
  example wide-2000-8000-1 gen:wide:2000:8000:1 --samples 20 || return 1
  example decode-l32-h2048-i4096 examples/decode/decode.json --samples 20 --copy-mib 1024 || return 1
  example taint-dataflow-12m examples/taint/taint.json --samples 20
}
runs || fail=1
exit $fail
