#!/usr/bin/env bash
# Builds the peer systems of bench:peers from their source snapshots in ../shared/peers (or
# $PHASED_ROLLOUT_PEERS), cached by archive name under $PHASED_ROLLOUT_CACHE/bin/peers: nothing is
# downloaded but Go modules from the module proxy (rollout-operator vendors its own). Their code is
# built and run beside ours for the comparison only; none of it is part of this project.
# Prints the cache folder on the last line of stdout: <folder>/<peer>/{bin,src}.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
peers=${PHASED_ROLLOUT_PEERS:-$here/../../shared/peers}
cache=${PHASED_ROLLOUT_CACHE:-$HOME/.cache/phased-rollout}/bin/peers
log() { echo "[peers-build] $*" >&2; }
export CGO_ENABLED=0 GOTOOLCHAIN=local
missing() { log "no peer snapshots at $peers ($1): put sts-phased-rollout-operator-<commit>.tar.gz and rollout-operator-<commit>.tar.gz (git archive of each project) there, or name a folder that has them with PHASED_ROLLOUT_PEERS"; exit 1; }
[ -d "$peers" ] || missing "no such folder"
ls "$peers"/sts-phased-rollout-operator-*.tar.gz >/dev/null 2>&1 || missing "no sts-phased-rollout-operator-*.tar.gz"
ls "$peers"/rollout-operator-*.tar.gz >/dev/null 2>&1 || missing "no rollout-operator-*.tar.gz"

# build NAME ARCHIVE BINARY PACKAGE [GOFLAGS]: unpacks ARCHIVE once and builds PACKAGE to NAME/bin/BINARY.
build() {
  local name=$1 archive=$2 binary=$3 pkg=$4 flags=${5:-}
  local dir=$cache/$name key; key=$(basename "$archive" .tar.gz)
  if [ -x "$dir/bin/$binary" ] && [ "$(cat "$dir/key" 2>/dev/null)" = "$key" ]; then log "$name cached ($key)"; return; fi
  log "building $name from $key (a few minutes on 2 cores)"
  rm -rf "$dir"; mkdir -p "$dir/src" "$dir/bin"
  tar xzf "$archive" -C "$dir/src"
  (cd "$dir/src" && GOFLAGS=$flags go build -trimpath -ldflags "-s -w" -o "$dir/bin/$binary" "$pkg")
  echo "$key" > "$dir/key"
}

build sts-phased-rollout-operator "$(ls "$peers"/sts-phased-rollout-operator-*.tar.gz | head -n 1)" manager ./cmd -mod=mod
build rollout-operator "$(ls "$peers"/rollout-operator-*.tar.gz | head -n 1)" rollout-operator ./cmd/rollout-operator -mod=vendor
echo "$cache"
