#!/usr/bin/env bash
# Builds prom-label-proxy (the Prometheus ecosystem's label enforcer, used to keep each team's gate
# queries to its own namespace) from the Go module proxy at the version pinned in hack/versions.env,
# cached under $PHASED_ROLLOUT_CACHE/bin/prom-label-proxy-<version>. About 75 s cold on 2 cores.
# Prints the binary's path on the last line of stdout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=versions.env
source "$here/versions.env"
dir=${PHASED_ROLLOUT_CACHE:-$HOME/.cache/phased-rollout}/bin/prom-label-proxy-$PROM_LABEL_PROXY_VERSION
if [ ! -x "$dir/prom-label-proxy" ]; then
  echo "[prom-label-proxy] building $PROM_LABEL_PROXY_VERSION from the Go module proxy" >&2
  mkdir -p "$dir"
  CGO_ENABLED=0 GOFLAGS=-mod=mod GOTOOLCHAIN=local GOBIN="$dir" go install -trimpath -ldflags "-s -w" "github.com/prometheus-community/prom-label-proxy@$PROM_LABEL_PROXY_VERSION"
fi
echo "$dir/prom-label-proxy"
