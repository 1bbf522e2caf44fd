#!/usr/bin/env bash
# Builds the repository's Dockerfile without a Docker engine: `buildah bud`, as Docker would, into a
# docker-archive. The Dockerfile's base (node:24.9.0-bookworm-slim) cannot be pulled here, so a local
# stand-in is made once and cached: Debian bookworm (debootstrap --variant=minbase, from the machine's
# own apt source), the same Node.js binary the `node` devDependency ships, and npm from the npm registry
# (the version Node.js 24.9.0 bundles). test/e2e/image.test.ts compares the result with the image of
# hack/node/images.sh.
#   dockerfile-build.sh OUT.tar
set -euo pipefail
source "$(dirname "$0")/common.sh"
out=${1:?usage: dockerfile-build.sh OUT.tar}
npm_version=11.6.0
base_ref=docker.io/library/node:24.9.0-bookworm-slim
images_dir=$cache/images
mkdir -p "$images_dir"
node_bin=$root/node_modules/node/bin/node

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
b=(buildah --root "$tmp/root" --runroot "$tmp/run" --storage-driver vfs)

# This machine reaches the npm registry through a TLS endpoint whose CA is in its own bundle: the
# stand-in carries that bundle and tells Node.js to trust it (NODE_EXTRA_CA_CERTS), as a Docker user's
# build host would.
ca=/etc/ssl/certs/ca-certificates.crt
key=$( { sha256sum "$node_bin"; [ ! -f "$ca" ] || sha256sum "$ca"; echo "bookworm minbase npm $npm_version"; } | sha256sum | cut -c1-16)
base=$images_dir/node-build-base-$key.tar
if [ ! -s "$base" ]; then
  command -v debootstrap >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
  mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  [ -n "$mirror" ] || mirror=$(awk '/^deb / {print $2; exit}' /etc/apt/sources.list)
  r=$tmp/base
  debootstrap --variant=minbase bookworm "$r" "$mirror" > "$tmp/debootstrap.log" 2>&1 \
    || { tail -20 "$tmp/debootstrap.log" >&2; exit 1; }
  install -m 0755 "$node_bin" "$r/usr/local/bin/node"
  mkdir -p "$r/usr/local/lib/node_modules"
  (cd "$tmp" && npm pack --silent "npm@$npm_version" >/dev/null)
  tar -xzf "$tmp/npm-$npm_version.tgz" -C "$r/usr/local/lib/node_modules" && mv "$r/usr/local/lib/node_modules/package" "$r/usr/local/lib/node_modules/npm"
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$r/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$r/usr/local/bin/npx"
  extra=()
  if [ -f "$ca" ]; then mkdir -p "$r/etc/ssl/certs"; cp "$ca" "$r$ca"; extra=(--env "NODE_EXTRA_CA_CERTS=$ca"); fi
  rm -rf "$r/var/cache/apt/archives"/*.deb "$r/var/lib/apt/lists"/*
  c=$("${b[@]}" from --quiet scratch)
  "${b[@]}" copy --quiet "$c" "$r/" / >/dev/null
  "${b[@]}" config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "${extra[@]}" --cmd '["node"]' "$c"
  "${b[@]}" commit --quiet --rm "$c" "docker-archive:$base.part:$base_ref" >/dev/null
  mv "$base.part" "$base"
  rm -rf "$r"
  for f in "$images_dir"/node-build-base-*.tar; do [ "$f" = "$base" ] || rm -f "$f"; done
fi
"${b[@]}" pull --quiet "docker-archive:$base" >/dev/null
# RUN steps use the host's network (npm ci reaches the npm registry as the host does).
# The build context: what git tracks (a clean checkout's tree), so local build output is not in it.
ctx=$tmp/ctx
mkdir -p "$ctx"
(cd "$root" && git ls-files -z | xargs -0 cp --parents -t "$ctx")
"${b[@]}" bud --quiet --network host --pull=never --layers=false --timestamp 0 -f "$ctx/Dockerfile" -t localhost/phased-rollout/dockerfile:test "$ctx" > "$tmp/bud.log" 2>&1 \
  || { tail -30 "$tmp/bud.log" >&2; exit 1; }
rm -f "$out"
"${b[@]}" push --quiet localhost/phased-rollout/dockerfile:test "docker-archive:$out:localhost/phased-rollout/dockerfile:test" >/dev/null
echo "$out"
