#!/usr/bin/env bash
# Builds OpenKruise Rollouts (a peer system of the benchmarks, not part of this project) from the Go
# module proxy at the version pinned in hack/versions.env, cached under
# $PHASED_ROLLOUT_CACHE/bin/kruise-rollouts-<version>: the manager binary, and its module's source
# (for config/: CRDs, RBAC, webhook configurations, rendered by `kubectl kustomize config/default`).
# About 2 minutes cold on 2 cores. Prints the cache folder on the last line of stdout:
# <folder>/{manager,src}.
#
# One line of its source is changed before the build: its webhook server binds 0.0.0.0, hard-coded
# (pkg/webhook/server.go); here it binds 127.0.0.1, so that nothing of the benchmarks listens beyond
# loopback. Nothing else differs from the release.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=versions.env
source "$here/versions.env"
dir=${PHASED_ROLLOUT_CACHE:-$HOME/.cache/phased-rollout}/bin/kruise-rollouts-$KRUISE_ROLLOUTS_VERSION
log() { echo "[kruise-rollouts] $*" >&2; }
export CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=mod
if [ ! -x "$dir/manager" ]; then
  log "building $KRUISE_ROLLOUTS_VERSION from the Go module proxy (about 2 minutes on 2 cores)"
  rm -rf "$dir"; mkdir -p "$dir"
  mod=$(go mod download -json "github.com/openkruise/rollouts@$KRUISE_ROLLOUTS_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -d "$mod" ] || { log "go mod download gave no folder for github.com/openkruise/rollouts@$KRUISE_ROLLOUTS_VERSION"; exit 1; }
  cp -r "$mod" "$dir/src"; chmod -R u+w "$dir/src"
  server=$dir/src/pkg/webhook/server.go
  grep -q 'server.Host = "0.0.0.0"' "$server" || { log "$server no longer sets server.Host = \"0.0.0.0\"; look again at the loopback change"; exit 1; }
  sed -i 's/server.Host = "0.0.0.0"/server.Host = "127.0.0.1"/' "$server"
  (cd "$dir/src" && go build -trimpath -ldflags "-s -w" -o "$dir/manager.tmp" .)
  mv "$dir/manager.tmp" "$dir/manager"
else
  log "cached ($KRUISE_ROLLOUTS_VERSION)"
fi
echo "$dir"
