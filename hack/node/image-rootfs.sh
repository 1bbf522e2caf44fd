#!/usr/bin/env bash
# Stages the file tree of the product's image (controller, webhook and plugin share it) into OUT:
#   /usr/local/bin/node          the Node.js binary (PHASED_ROLLOUT_IMAGE_NODE, default: the `node`
#                                devDependency's; not NODE, which npm sets to its own Node.js)
#   the shared libraries `ldd` lists for it, at the same paths
#   /app/dist/bundle             the three programs as bundles (hack/bundle.mjs: each carries the
#                                dependencies it uses, so no node_modules), their source maps,
#                                THIRD_PARTY_LICENSES (the licences of what they bundle), the
#                                dashboard's static files
#   /etc/passwd, /etc/group      the non-root user 65532 (runAsUser of the chart)
# Used by both image builds: hack/node/images.sh (buildah, no Docker engine) and the Dockerfile's build
# stage, so the two images hold the same tree.
#   image-rootfs.sh OUT [SRC]    SRC: a folder with a built dist/ (npm run build)
set -euo pipefail
out=${1:?usage: image-rootfs.sh OUT [SRC]}
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
here=$(cd "$(dirname "$0")/../.." && pwd)
node=${PHASED_ROLLOUT_IMAGE_NODE:-$here/node_modules/node/bin/node}
[ -x "$node" ] || node=$(command -v node)
[ -f "$src/dist/bundle/controller.mjs" ] || { echo "image-rootfs: $src/dist/bundle is missing (npm run build)" >&2; exit 1; }
rm -rf "$out"; mkdir -p "$out"/{usr/local/bin,app,etc,tmp}
chmod 1777 "$out/tmp"
cp "$node" "$out/usr/local/bin/node"
# The libraries the binary links, resolved on the build machine (both builds run on Debian bookworm).
ldd "$node" | awk '/=> \// {print $3} /^\t\/[^ ]+ \(/ {print $1}' | while read -r lib; do
  mkdir -p "$out$(dirname "$lib")"
  cp -L "$lib" "$out$lib"
done
# /lib64 is a link to /usr/lib64 or holds the loader itself; keep what the binary asks for.
mkdir -p "$out/app/dist"
cp -r "$src/dist/bundle" "$out/app/dist/bundle"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' > "$out/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' > "$out/etc/group"
# Reproducible: no timestamps of the build machine in the tree.
find "$out" -exec touch -h -d @0 {} +
