#!/usr/bin/env bash
# Runs every Go fuzz target in the module for FUZZTIME (default 5s) each,
# one target at a time with one fuzzing worker (-parallel 1). On a loaded
# machine with few cores, parallel workers starve the coordinator and the
# run fails with "context deadline exceeded" although no input failed (a
# known Go issue); a single worker keeps every run deterministic in load.
set -euo pipefail
FUZZTIME=${FUZZTIME:-5s}
FUZZPARALLEL=${FUZZPARALLEL:-1}
for pkg in $(CGO_ENABLED=0 go list ./...); do
  for target in $(CGO_ENABLED=0 go test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz' || true); do
    echo "== $pkg $target ($FUZZTIME, $FUZZPARALLEL worker)"
    CGO_ENABLED=0 go test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" -fuzzminimizetime 2s \
      -parallel "$FUZZPARALLEL" "$pkg"
  done
done
