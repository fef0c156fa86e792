#!/usr/bin/env bash
# Builds or checks the committed PTX for every CUDA C kernel source.
#
#   ptx.sh build   regenerate <dir>/kernels/*.ptx from <dir>/kernels/*.cu, and
#                  for each <dir>/<name>.resources: ptxas's registers, stack,
#                  spills and shared memory of every entry point for sm_90
#                  (beside the package's Go files: what lies under kernels/
#                  is measured code, and this report is derived from it)
#   ptx.sh check   run ptxas on every committed .ptx for sm_80 and sm_90, and
#                  check that regenerating reproduces the committed PTX and
#                  resources
#
# A kernel change shows in the .resources diff wherever it changes an entry
# point's registers or spills, including the entry points it was not meant
# for: those got another schedule and are measured again too.
# PTX is generated with the pinned nvcc (CUDA 11.8) for compute_80, so one
# file loads on Ampere and Hopper alike.
set -euo pipefail
cd "$(dirname "$0")/.."
# The fixed path kernel sources are compiled from.
stage=/tmp/gpuplan-ptx-src
mode=${1:-check}
NVCCFLAGS=(-ptx -arch=compute_80 -O3 -std=c++14 -lineinfo)
# The wave ABI header relocatable sources include.
abi_dir=workloads/wavedag/kernels
# The device helpers the workloads' kernels share ("gpuplan_device.h"),
# staged with each source and passed with -I.
shared_dir=internal/kernelabi/kernels
relocatable() { grep -q '^// gpuplan: relocatable device code' "$1"; }
mapfile -t sources < <(git ls-files '*/kernels/*.cu' 2>/dev/null || find . -path '*/kernels/*.cu')
if [ ${#sources[@]} -eq 0 ]; then
  echo "ptx: no kernel sources"
  exit 0
fi
# resources PTX: one line per entry point, sorted, of ptxas's sm_90 report.
resources() {
  echo "# ptxas sm_90 resource usage of each entry point (scripts/ptx.sh build writes it)"
  ptxas "${ptxas_flags[@]}" -arch=sm_90 -v -o /dev/null "$1" 2>&1 | awk '
    /Compiling entry function/ { split($0, q, "'"'"'"); name = q[2] }
    /bytes stack frame/ { stack = $1; stores = $5; loads = $9 }
    /Used [0-9]+ registers/ {
      regs = $5; smem = 0
      if (match($0, /[0-9]+ bytes smem/)) { smem = substr($0, RSTART, RLENGTH); sub(/ bytes smem/, "", smem) }
      printf "%s registers=%s stack=%s spill_stores=%s spill_loads=%s smem=%s\n", name, regs, stack, stores, loads, smem
    }' | sort
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for cu in "${sources[@]}"; do
  ptx="${cu%.cu}.ptx"
  res="$(dirname "$(dirname "$cu")")/$(basename "${cu%.cu}").resources"
  # nvcc's output depends on where the source lies: -lineinfo names it in
  # .file directives by its absolute path, and the mangled names of
  # internal-linkage functions carry a hash of that path. Compile a copy at
  # a fixed path (under a lock: the path is shared) and rewrite the .file
  # directives to paths relative to the repository root, so the PTX does not
  # depend on where the repository is checked out.
  flags=("${NVCCFLAGS[@]}" -I "$stage/$shared_dir")
  ptxas_flags=()
  if relocatable "$cu"; then
    flags=(-ptx -arch=compute_80 -O3 -std=c++14 -rdc=true -I "$stage/$abi_dir")
    ptxas_flags=(-c)
  fi
  (
    flock 9
    rm -rf "$stage"
    mkdir -p "$stage/$(dirname "$cu")" "$stage/$abi_dir" "$stage/$shared_dir"
    cp -R "$(dirname "$cu")"/. "$stage/$(dirname "$cu")"/
    cp "$abi_dir/gpuplan_wave.h" "$stage/$abi_dir/"
    cp "$shared_dir"/*.h "$stage/$shared_dir/"
    nvcc "${flags[@]}" -o "$tmp/raw.ptx" "$stage/$cu"
  ) 9>"$stage.lock"
  sed -E "/^[[:space:]]*\.file[[:space:]]/ s#\"$stage/#\"#" "$tmp/raw.ptx" >"$tmp/out.ptx"
  case "$mode" in
    build)
      cp "$tmp/out.ptx" "$ptx"
      resources "$ptx" >"$res"
      echo "ptx: wrote $ptx and $res"
      ;;
    check)
      if [ ! -f "$ptx" ]; then echo "ptx: $ptx is missing (run 'make ptx')"; status=1; continue; fi
      if ! cmp -s "$tmp/out.ptx" "$ptx"; then
        echo "ptx: $ptx differs from what nvcc generates from $cu (run 'make ptx' and commit)"; status=1
      fi
      if ! resources "$ptx" | cmp -s - "$res"; then
        echo "ptx: $res is missing or differs from ptxas's report on $ptx (run 'make ptx' and commit; an entry point whose registers or spills changed is measured again)"; status=1
      fi
      for sm in sm_80 sm_90; do
        if ptxas "${ptxas_flags[@]}" -arch="$sm" -o /dev/null "$ptx"; then echo "ptx: $ptx ok for $sm"; else echo "ptx: ptxas $sm failed on $ptx"; status=1; fi
      done
      ;;
    *) echo "usage: ptx.sh build|check" >&2; exit 2 ;;
  esac
done
exit $status
