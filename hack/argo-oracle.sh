#!/usr/bin/env bash
# Builds hack/argo-oracle (golden verdicts for our TypeScript judge of Argo's AnalysisTemplates, from
# Argo Rollouts' own evaluate and analysis-controller code at the version in its go.mod) into
# $PHASED_ROLLOUT_CACHE/bin/argo-oracle-<hash of its source>, once. About 6 minutes cold on 2 cores
# (Argo pulls in every metric provider's SDK and client-go), then cached. Prints the binary's path on
# the last line of stdout. With --cached it never builds: it prints the path and exits 0 if the binary
# is there, else exits 1 (for suites that skip rather than wait). Protocol: hack/argo-oracle/README.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
key=$(cd "$here/argo-oracle" && cat $(ls *.go | LC_ALL=C sort) go.mod go.sum | sha256sum | cut -c1-12)
dir=${PHASED_ROLLOUT_CACHE:-$HOME/.cache/phased-rollout}/bin/argo-oracle-$key
if [ "${1:-}" = --cached ]; then
  [ -x "$dir/argo-oracle" ] || exit 1
elif [ ! -x "$dir/argo-oracle" ]; then
  echo "[argo-oracle] building from the Go module proxy (once; about 6 minutes cold)" >&2
  mkdir -p "$dir"
  (cd "$here/argo-oracle" && CGO_ENABLED=0 GOTOOLCHAIN=local go build -trimpath -ldflags "-s -w" -o "$dir/argo-oracle.tmp" . && mv "$dir/argo-oracle.tmp" "$dir/argo-oracle")
fi
echo "$dir/argo-oracle"
