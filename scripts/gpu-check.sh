#!/usr/bin/env bash
# Checks the GPU code on a machine with an NVIDIA GPU, from the repository
# root, with the binaries `make gpu-test-bins` put in bin/:
#
#   gpu-check.sh tests      every GPU test binary, plain and with the Go race
#                           detector; a missing GPU is a failure
#   gpu-check.sh sanitize   compute-sanitizer memcheck, racecheck and
#                           synccheck over every BFS kernel, through short
#                           benchmark runs of every arm and a multi-source
#                           batch on four graphs (top-down, direction-
#                           optimizing and run-ahead paths), over the
#                           partitioned BFS kernels, through short runs of
#                           three partitions simulated on the GPU, and over
#                           every e-graph rebuild kernel, through short runs
#                           of every arm on three generated e-graphs, and
#                           over the wave runtime (gpuplan run's five arms
#                           on four small wave DAGs)
#   gpu-check.sh sanitize-bfs, sanitize-run, sanitize-egraph
#                           the same over one family of kernels: the BFS
#                           kernels, the wave runtime or the e-graph kernels
#   gpu-check.sh all        both
#
# It prints one PASS or FAIL line per check, then a summary, and exits 1 if
# anything failed.
set -uo pipefail
cd "$(dirname "$0")/.."
export GPUPLAN_REQUIRE_GPU=1
mode=${1:-all}
results=()
fail=0
start=$SECONDS
record() { # name status: printed at once, and again in the summary
  local line
  line=$(printf '%-50s %s (%ds)' "$1" "$2" $((SECONDS - start)))
  echo "$line"
  results+=("$line")
  start=$SECONDS
  [ "$2" = PASS ] || fail=1
}

run_tests() {
  for t in bin/*.test; do
    [ -x "$t" ] || continue
    name=$(basename "$t")
    if "$t" -test.run GPU -test.count 1 >"/tmp/gpu-check-$name.log" 2>&1; then
      record "go test $name" PASS
    else
      record "go test $name" FAIL
      tail -n 40 "/tmp/gpu-check-$name.log"
    fi
  done
}

# sanitize TOOL NAME LOG CMD...: runs CMD under compute-sanitizer's TOOL with
# its output in LOG, and records NAME as passing only when the run exits 0
# and the tool reports no error or hazard.
sanitize() {
  local tool=$1 name=$2 log=$3
  shift 3
  if "$sanitizer" --tool "$tool" --error-exitcode 3 "$@" >"$log" 2>&1 &&
    grep -q "ERROR SUMMARY: 0 errors\|RACECHECK SUMMARY: 0 hazards" "$log"; then
    record "compute-sanitizer $tool $name" PASS
  else
    record "compute-sanitizer $tool $name" FAIL
    grep -E "ERROR SUMMARY|HAZARD|hazard|Error|error" "$log" | head -n 20
  fi
}

sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)

# sanitize_bfs TOOL: every BFS kernel. The top-down arms and the adaptive
# megakernel on the grid and the road graph, the direction-optimizing level
# kernel and megakernel (bottom-up levels) on the Kronecker and random
# geometric graphs, the multi-source kernels (--batch) on all, the
# high-degree run-ahead path on the Kronecker graph with every level
# top-down, the query kernels (gpuplan bfs), and the partitioned kernels
# over three simulated devices.
sanitize_bfs() {
  local tool=$1 run graph extra
  for run in "grid:64|" "kron:10|" "road:48|" "rgg:4000:8|" "kron:10|--direction top-down"; do
    graph=${run%%|*}
    extra=${run#*|}
    # shellcheck disable=SC2086 # extra is a list of flags
    sanitize "$tool" "$graph $extra" "/tmp/gpu-check-$tool-${graph//:/-}${extra:+-top-down}.log" \
      ./bin/gpuplan bench frontier --graph "$graph" --roots 2 --batch 2 --samples 1 --copy-mib 1 --barrier-levels 8 \
      --arms host-loop,device-loop,megakernel,host-loop-scan $extra
  done
  # Multi-source levels that push hubs (degree 1024 or more) over the grid.
  sanitize "$tool" "multi-source hubs kron:15" "/tmp/gpu-check-$tool-ms-hubs.log" \
    ./bin/gpuplan bench frontier --graph kron:15 --roots 4 --batch 4 --samples 1 --copy-mib 1 --barrier-levels 0 --arms host-loop
  # The query kernels: one root's target levels and level counts, and a
  # multi-source pass's, with parents (their in-neighbours' levels).
  sanitize "$tool" "queries one root kron:12" "/tmp/gpu-check-$tool-query-one.log" \
    ./bin/gpuplan bfs --graph kron:12 --root-ids 3 --targets 0,1,2,77,4095 --parents --max-depth 3 -o /tmp/gpu-check-query-one.csv
  sanitize "$tool" "queries multi-source kron:12" "/tmp/gpu-check-$tool-query-ms.log" \
    ./bin/gpuplan bfs --graph kron:12 --roots 70 --targets 0,1,2,77,4095 --parents -o /tmp/gpu-check-query-ms.csv
  for graph in kron:10 grid:24; do
    sanitize "$tool" "partitioned $graph" "/tmp/gpu-check-$tool-partitioned-${graph/:/-}.log" \
      ./bin/gpuplan bench frontier --graph "$graph" --roots 2 --samples 1 --simulate-devices 3
  done
}

# sanitize_run TOOL: the wave runtime. Both persistent schedulers, the
# launch wrappers (graph-pdl's griddepcontrol too) and the examples' kernels.
sanitize_run() {
  local tool=$1 wave
  for wave in examples/quickstart/quickstart.json examples/decode/decode-small.json gen:chain:40:3 gen:wide:300:1000:1; do
    sanitize "$tool" "run $wave" "/tmp/gpu-check-$tool-run-$(basename "${wave//:/-}" .json).log" \
      ./bin/gpuplan run "$wave" --samples 1
  done
}

# sanitize_egraph TOOL: every e-graph rebuild kernel, through every arm on
# three generated e-graphs.
sanitize_egraph() {
  local tool=$1 egraph
  for egraph in gen:3000:1 gen:2000:2:chain gen:1500:3:cycle; do
    sanitize "$tool" "$egraph" "/tmp/gpu-check-$tool-${egraph//:/-}.log" \
      ./bin/gpuplan bench egraph --egraph "$egraph" --samples 1 --cpu-samples 0 --floor-rounds 4
  done
}

# run_sanitizers FAMILY...: memcheck, racecheck and synccheck over each
# family's kernels (bfs, run, egraph).
run_sanitizers() {
  local tool family
  for tool in memcheck racecheck synccheck; do
    for family in "$@"; do
      "sanitize_$family" "$tool"
    done
  done
}

case "$mode" in
  tests) run_tests ;;
  sanitize) run_sanitizers bfs run egraph ;;
  sanitize-bfs | sanitize-run | sanitize-egraph) run_sanitizers "${mode#sanitize-}" ;;
  all) run_tests; run_sanitizers bfs run egraph ;;
  *) echo "usage: gpu-check.sh tests|sanitize|sanitize-bfs|sanitize-run|sanitize-egraph|all" >&2; exit 2 ;;
esac
echo "== summary"
printf '%s\n' "${results[@]}"
exit $fail
