#!/usr/bin/env bash
# Builds hack/flux-health (Flux's own CEL health evaluator and kstatus, from fluxcd/pkg at the versions
# in its go.mod) into $PHASED_ROLLOUT_CACHE/bin/flux-health-<hash of its source>, once. About 4 minutes
# cold on 2 cores (Kubernetes' apimachinery and cel-go), then cached. Prints the binary's path on the
# last line of stdout. Used by test/e2e/flux-health.test.ts.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
key=$(cat "$here/flux-health/main.go" "$here/flux-health/go.mod" "$here/flux-health/go.sum" | sha256sum | cut -c1-12)
dir=${PHASED_ROLLOUT_CACHE:-$HOME/.cache/phased-rollout}/bin/flux-health-$key
if [ ! -x "$dir/flux-health" ]; then
  echo "[flux-health] building from the Go module proxy (once; about 4 minutes cold)" >&2
  mkdir -p "$dir"
  (cd "$here/flux-health" && CGO_ENABLED=0 GOTOOLCHAIN=local go build -trimpath -ldflags "-s -w" -o "$dir/flux-health.tmp" . && mv "$dir/flux-health.tmp" "$dir/flux-health")
fi
echo "$dir/flux-health"
