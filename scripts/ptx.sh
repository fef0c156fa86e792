#!/usr/bin/env bash
# Builds or checks the committed PTX for every CUDA C kernel source.
#
#   ptx.sh build   regenerate <dir>/kernels/*.ptx from <dir>/kernels/*.cu
#   ptx.sh check   run ptxas on every committed .ptx for sm_80 and sm_90, and
#                  check that regenerating reproduces the committed PTX
#
# PTX is generated with the pinned nvcc (CUDA 11.8) for compute_80, so one
# file loads on Ampere and Hopper alike.
set -euo pipefail
cd "$(dirname "$0")/.."
# The fixed path kernel sources are compiled from.
stage=/tmp/gpuplan-ptx-src
mode=${1:-check}
NVCCFLAGS=(-ptx -arch=compute_80 -O3 -std=c++14 -lineinfo)
mapfile -t sources < <(git ls-files '*/kernels/*.cu' 2>/dev/null || find . -path '*/kernels/*.cu')
if [ ${#sources[@]} -eq 0 ]; then
  echo "ptx: no kernel sources"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for cu in "${sources[@]}"; do
  ptx="${cu%.cu}.ptx"
  # nvcc's output depends on where the source lies: -lineinfo names it in
  # .file directives by its absolute path, and the mangled names of
  # internal-linkage functions carry a hash of that path. Compile a copy at
  # a fixed path (under a lock: the path is shared) and rewrite the .file
  # directives to paths relative to the repository root, so the PTX does not
  # depend on where the repository is checked out.
  (
    flock 9
    rm -rf "$stage"
    mkdir -p "$stage/$(dirname "$cu")"
    cp -R "$(dirname "$cu")"/. "$stage/$(dirname "$cu")"/
    nvcc "${NVCCFLAGS[@]}" -o "$tmp/raw.ptx" "$stage/$cu"
  ) 9>"$stage.lock"
  sed -E "/^[[:space:]]*\.file[[:space:]]/ s#\"$stage/#\"#" "$tmp/raw.ptx" >"$tmp/out.ptx"
  case "$mode" in
    build)
      cp "$tmp/out.ptx" "$ptx"
      echo "ptx: wrote $ptx"
      ;;
    check)
      if [ ! -f "$ptx" ]; then echo "ptx: $ptx is missing (run 'make ptx')"; status=1; continue; fi
      if ! cmp -s "$tmp/out.ptx" "$ptx"; then
        echo "ptx: $ptx differs from what nvcc generates from $cu (run 'make ptx' and commit)"; status=1
      fi
      for sm in sm_80 sm_90; do
        if ptxas -arch="$sm" -o /dev/null "$ptx"; then echo "ptx: $ptx ok for $sm"; else echo "ptx: ptxas $sm failed on $ptx"; status=1; fi
      done
      ;;
    *) echo "usage: ptx.sh build|check" >&2; exit 2 ;;
  esac
done
exit $status
