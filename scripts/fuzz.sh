#!/usr/bin/env bash
# Runs every Go fuzz target in the module for FUZZTIME (default 5s) each.
set -euo pipefail
FUZZTIME=${FUZZTIME:-5s}
for pkg in $(CGO_ENABLED=0 go list ./...); do
  for target in $(CGO_ENABLED=0 go test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz' || true); do
    echo "== $pkg $target ($FUZZTIME)"
    CGO_ENABLED=0 go test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" -fuzzminimizetime 2s "$pkg"
  done
done
