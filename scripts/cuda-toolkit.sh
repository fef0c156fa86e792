#!/usr/bin/env bash
# Installs the pinned CUDA 11.8 toolchain (nvcc, ptxas, cuda.h) and CUB's
# headers (libcub-dev, which workloads/kronbuild's kernels include) from
# Debian bookworm's contrib/non-free components. Idempotent: does nothing
# when the tools and headers are already present. Nothing comes from
# outside Debian's archive.
set -euo pipefail

have() { command -v "$1" >/dev/null 2>&1; }

if have nvcc && have ptxas && [ -f /usr/include/cuda.h ] && [ -f /usr/include/cub/cub.cuh ]; then
  echo "cuda-toolkit: nvcc, ptxas, cuda.h and CUB already present ($(nvcc --version | tail -n 2 | head -n 1))"
  exit 0
fi

SUDO=""
if [ "$(id -u)" != 0 ]; then
  if have sudo; then SUDO="sudo"; else
    echo "cuda-toolkit: need root (or sudo) to install nvidia-cuda-toolkit" >&2
    exit 1
  fi
fi

src=/etc/apt/sources.list.d/gpuplan-debian-nonfree.sources
if [ ! -f "$src" ]; then
  echo "cuda-toolkit: adding Debian bookworm contrib non-free components ($src)"
  $SUDO tee "$src" >/dev/null <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: contrib non-free
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
fi

export DEBIAN_FRONTEND=noninteractive
if ! $SUDO apt-get update -qq; then
  # An unrelated third-party source may be unreachable; refresh Debian's own
  # sources (the stock list and ours) and carry on.
  echo "cuda-toolkit: apt-get update failed for some source; retrying with Debian's sources only" >&2
  parts=$(mktemp -d)
  for f in /etc/apt/sources.list.d/debian.sources "$src"; do [ -f "$f" ] && cp "$f" "$parts/"; done
  $SUDO apt-get update -qq -o Dir::Etc::sourcelist=/dev/null -o Dir::Etc::sourceparts="$parts" \
    -o APT::Get::List-Cleanup=0 || true
  rm -rf "$parts"
fi
$SUDO apt-get install -y -qq --no-install-recommends nvidia-cuda-toolkit libcub-dev >/dev/null

for t in nvcc ptxas; do have "$t" || { echo "cuda-toolkit: $t missing after install" >&2; exit 1; }; done
[ -f /usr/include/cuda.h ] || { echo "cuda-toolkit: /usr/include/cuda.h missing after install" >&2; exit 1; }
[ -f /usr/include/cub/cub.cuh ] || { echo "cuda-toolkit: /usr/include/cub/cub.cuh missing after install" >&2; exit 1; }
echo "cuda-toolkit: installed ($(nvcc --version | tail -n 2 | head -n 1))"
