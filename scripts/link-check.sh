#!/usr/bin/env bash
# Links, without a GPU, what `gpuplan run` links at run time: for every
# example (and generated DAGs of both kinds), the user's module with the
# launch wrappers gpuplan generates, and with the scheduler runtime and the
# generated dispatch, each input compiled by ptxas as relocatable code and
# the images linked by nvlink, for sm_80 and sm_90. A generated PTX that
# does not assemble, or a symbol that does not resolve, fails here as the
# driver's JIT linker would fail on a GPU.
#
#   link-check.sh   from the repository root, with nvcc's ptxas and nvlink
#                   on PATH (make cuda-toolkit)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=0 go build -o "$tmp/gpuplan" ./cmd/gpuplan
status=0
for spec in examples/quickstart/quickstart.json examples/taint/taint.json examples/decode/decode.json gen:chain:8:3 gen:wide:64:200:1; do
  out="$tmp/$(echo "$spec" | tr '/:.' '___')"
  "$tmp/gpuplan" run "$spec" --emit-ptx "$out" >/dev/null
  for sm in sm_80 sm_90; do
    d="$out/$sm"
    user=$(find "$d" -name '*.ptx' ! -name 'gpuplan-*' | head -n 1)
    for f in "$user" "$d"/gpuplan-*.ptx; do
      ptxas -c -arch="$sm" -o "${f%.ptx}.cubin" "$f"
    done
    ucubin="${user%.ptx}.cubin"
    if nvlink -arch="$sm" -o "$d/launch.image" "$ucubin" "$d/gpuplan-launch.cubin" &&
      nvlink -arch="$sm" -o "$d/sched.image" "$ucubin" "$d/gpuplan-runtime.cubin" "$d/gpuplan-dispatch.cubin"; then
      echo "link-check: $spec links for $sm"
    else
      echo "link-check: $spec does not link for $sm"
      status=1
    fi
  done
done
exit $status
