#!/usr/bin/env bash
# Images for the real node, built without a Docker engine or a registry: buildah (Debian) assembles each
# from files into a docker-archive, cached by the content of its inputs under $cache/images, and
# `ctr images import` puts it into the node's containerd. Pods use them with imagePullPolicy: Never.
#   images.sh build     build what is missing from the cache; prints NAME=REFERENCE=ARCHIVE lines
#   images.sh import    build, then import every image into the running containerd
# Images:
#   pause      the sandbox image: Kubernetes' own pause.c (from the kubernetes module), static
#   busybox    Debian's busybox-static with its applets: the test workloads' shell, sleep, nc, httpd
#   product    this repository's image (hack/node/image-rootfs.sh: Node.js, its libraries, dist/,
#              production node_modules), the same configuration as the Dockerfile
# and, on request only (npm run scenario:etcd; the suite's etcd rows):
#   etcd       etcd and etcdctl at ETCD_WORKLOAD_FROM and ETCD_WORKLOAD_TO (hack/versions.env), static
# and (images.sh postgres; examples/postgres, scenarios/postgres):
#   postgres   PostgreSQL 15 and Patroni 3 (patroni, patronictl) from the Debian packages of this
#              machine's apt sources, a minbase root file system made by mmdebstrap
set -euo pipefail
source "$(dirname "$0")/common.sh"
images_dir=$cache/images
mkdir -p "$images_dir"

# key FILE...: a short content hash of the inputs.
key() { cat "$@" | sha256sum | cut -c1-16; }

# commit ARCHIVE REF ROOTFS CONFIG...: buildah from scratch, the folder ROOTFS as one layer, the given
# `buildah config` flags, committed as REF to $images_dir/ARCHIVE.tar. Storage is a temporary folder
# (vfs: nothing stays mounted).
commit() {
  local base=$1 ref=$2 rootfs=$3 archive=$images_dir/$1.tar; shift 3
  [ -s "$archive" ] && return 0
  local tmp; tmp=$(mktemp -d)
  local b=(buildah --root "$tmp/root" --runroot "$tmp/run" --storage-driver vfs)
  local c; c=$("${b[@]}" from --quiet scratch)
  "${b[@]}" copy --quiet "$c" "$rootfs/" / >/dev/null
  "${b[@]}" config "$@" "$c"
  "${b[@]}" commit --quiet --rm --timestamp 0 "$c" "docker-archive:$archive.part:$ref" >/dev/null
  mv "$archive.part" "$archive"
  rm -rf "$tmp"
  # Older builds of the same image go: the cache holds the current one of each.
  local prefix=${base%-*}- f
  for f in "$images_dir/$prefix"*.tar; do
    [ "$f" = "$archive" ] || [[ ${f#"$images_dir/$prefix"} == *-* ]] || rm -f "$f"
  done
}

pause() {
  local srcf; srcf=$(go env GOMODCACHE)/k8s.io/kubernetes@$KUBERNETES_VERSION/build/pause/linux/pause.c
  [ -f "$srcf" ] || (cd /tmp && GOFLAGS=-mod=mod go mod download "k8s.io/kubernetes@$KUBERNETES_VERSION" >/dev/null)
  # The tag is fixed (containerd's sandbox_image names it); the archive is keyed by the source.
  local archive; archive=pause-$(key "$srcf")
  if [ ! -s "$images_dir/$archive.tar" ]; then
    local r; r=$(mktemp -d)
    mkdir -p "$r/rootfs"
    gcc -Os -static -DVERSION=v3.10 -o "$r/rootfs/pause" "$srcf"
    strip "$r/rootfs/pause"
    commit "$archive" "$PAUSE_IMAGE" "$r/rootfs" --entrypoint '["/pause"]' --user 65535:65535
    rm -rf "$r"
  fi
  echo "pause=$PAUSE_IMAGE=$archive"
}

busybox() {
  local bb=/bin/busybox
  dpkg -s busybox-static >/dev/null 2>&1 || {
    [ "$(id -u)" = 0 ] || { nlog "busybox-static is missing"; return 1; }
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq busybox-static >/dev/null; }
  local tag; tag=1.35-$(key "$bb")
  if [ ! -s "$images_dir/busybox-$tag.tar" ]; then
    local r; r=$(mktemp -d)
    mkdir -p "$r/rootfs/bin" "$r/rootfs/tmp" "$r/rootfs/etc"
    cp "$bb" "$r/rootfs/bin/busybox"
    local a
    for a in $("$bb" --list); do [ "$a" = busybox ] || ln -s busybox "$r/rootfs/bin/$a"; done
    printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' > "$r/rootfs/etc/passwd"
    printf 'root:x:0:\nnobody:x:65534:\n' > "$r/rootfs/etc/group"
    chmod 1777 "$r/rootfs/tmp"
    commit "busybox-$tag" "$IMAGE_PREFIX/busybox:$tag" "$r/rootfs" --env PATH=/bin --cmd '["/bin/sh"]'
    rm -rf "$r"
  fi
  echo "busybox=$IMAGE_PREFIX/busybox:$tag=busybox-$tag"
}

# The product image's configuration; the Dockerfile's final stage says the same (test/image.test.ts).
product() {
  local nodebin=$root/node_modules/node/bin/node
  # Compiled afresh from the sources tsconfig.build.json takes (a stale file in dist/ never ships), and
  # keyed by them, the lockfile, the Node.js binary and the staging script.
  local srcs; srcs=$(cd "$root" && git ls-files -- src webhook controller certs plugin bench demo test/support tsconfig.json tsconfig.build.json hack/bundle.mjs | grep -v '\.test\.ts$')
  # The installed tree too: the bundles take their packages from node_modules as it is.
  local tag; tag=$(cd "$root" && { sha256sum "$nodebin" package.json package-lock.json node_modules/.package-lock.json hack/node/image-rootfs.sh hack/node/images.sh hack/runtime.env; echo "$srcs" | xargs sha256sum; } | key /dev/stdin)
  if [ ! -s "$images_dir/phased-rollout-$tag.tar" ]; then
    local r; r=$(mktemp -d)
    # In a copy of the sources, as the Dockerfile's build stage compiles in /src: the source maps'
    # relative paths come out the same.
    mkdir -p "$r/src"
    (cd "$root" && echo "$srcs" | xargs cp --parents -t "$r/src" package.json package-lock.json)
    ln -s "$root/node_modules" "$r/src/node_modules"
    # tsc tells its errors on stdout, which carries this function's answer: to stderr with them.
    (cd "$r/src" && "$root/node_modules/.bin/tsc" -p tsconfig.build.json && "$nodebin" hack/bundle.mjs) >&2
    rm "$r/src/node_modules"
    bash "$root/hack/node/image-rootfs.sh" "$r/rootfs" "$r/src"
    local runtime_env; runtime_env=$(grep -v '^#' "$root/hack/runtime.env" | grep . | sed 's/^/--env /' | tr '\n' ' ')
    # shellcheck disable=SC2086 # one --env KEY=VALUE per word
    commit "phased-rollout-$tag" "$IMAGE_PREFIX/phased-rollout:$tag" "$r/rootfs" --env NODE_ENV=production --env PATH=/usr/local/bin:/usr/bin:/bin $runtime_env \
      --workingdir /app --user 65532:65532 --port 9443 --port 8080 --entrypoint '["node"]' --cmd '["dist/bundle/webhook.mjs","--help"]'
    rm -rf "$r"
  fi
  echo "product=$IMAGE_PREFIX/phased-rollout:$tag=phased-rollout-$tag"
}

# etcd VERSION: etcd and etcdctl built static (no C library in the image) from the Go module proxy into
# $cache/bin/etcd-image-VERSION, then an image of the two. The tag is the version; the archive is keyed
# by the binaries.
etcd() {
  local v=$1 bin=$cache/bin/etcd-image-$1
  if [ ! -x "$bin/etcd" ] || [ ! -x "$bin/etcdctl" ]; then
    local w; w=$(mktemp -d)
    (cd "$w" && go mod init phased-rollout.local/etcd-image 2>/dev/null \
      && { go get "go.etcd.io/etcd/server/v3@$v" "go.etcd.io/etcd/etcdctl/v3@$v" >/dev/null 2>&1 || go get "go.etcd.io/etcd/server/v3@$v" "go.etcd.io/etcd/etcdctl/v3@$v"; } \
      && mkdir -p "$w/out" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$w/out/" go.etcd.io/etcd/server/v3 go.etcd.io/etcd/etcdctl/v3) >&2 \
      || { nlog "building etcd $v from the Go module proxy failed (see above)"; rm -rf "$w"; return 1; }
    mkdir -p "$bin"
    mv "$w/out/server" "$bin/etcd"; mv "$w/out/etcdctl" "$bin/etcdctl"
    rm -rf "$w"
  fi
  local tag; tag=$(key "$bin/etcd" "$bin/etcdctl")
  if [ ! -s "$images_dir/etcd-$v-$tag.tar" ]; then
    local r; r=$(mktemp -d)
    mkdir -p "$r/rootfs/usr/local/bin" "$r/rootfs/tmp" "$r/rootfs/var/lib/etcd"
    cp "$bin/etcd" "$bin/etcdctl" "$r/rootfs/usr/local/bin/"
    chmod 1777 "$r/rootfs/tmp"
    commit "etcd-$v-$tag" "$IMAGE_PREFIX/etcd:$v" "$r/rootfs" --env PATH=/usr/local/bin --entrypoint '["/usr/local/bin/etcd"]' \
      --port 2379 --port 2380 --port 2381
    rm -rf "$r"
  fi
  echo "etcd_${v//./_}=$IMAGE_PREFIX/etcd:$v=etcd-$v-$tag"
}

# postgres: PostgreSQL 15 and Patroni from Debian's packages, as a minbase root file system (mmdebstrap)
# from the apt sources this machine is configured with. Keyed by the versions apt resolves for the
# packages and everything they depend on (apt's view of the lists here: run apt-get update for newer
# ones) and by this script. The tag is PostgreSQL's major version and the key, so a rebuilt image never
# hides behind an older one of the same name in containerd (pods use imagePullPolicy: Never).
postgres() {
  local pkgs=(postgresql-15 patroni)
  command -v mmdebstrap >/dev/null || {
    [ "$(id -u)" = 0 ] || { nlog "mmdebstrap is missing"; return 1; }
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >/dev/null; }
  # What a fresh system would install: apt's simulation against an empty package status.
  local closure; closure=$(apt-get -s -o Dir::State::status=/dev/null -o APT::Install-Recommends=false install "${pkgs[@]}" 2>/dev/null \
    | sed -n 's/^Inst \([^ ]*\) (\([^ ]*\) .*/\1 \2/p' | sort)
  [ -n "$closure" ] || { nlog "apt resolves no version for ${pkgs[*]} (apt-get update?)"; return 1; }
  local tag; tag=15-$({ echo "$closure"; cat "$root/hack/node/images.sh"; } | key /dev/stdin)
  if [ ! -s "$images_dir/postgres-$tag.tar" ]; then
    [ "$(id -u)" = 0 ] || { nlog "building the postgres image needs root (mmdebstrap --mode=root)"; return 1; }
    # The enabled apt sources of this machine, as files mmdebstrap reads (.list or .sources).
    local sources=() f
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do [ -s "$f" ] && sources+=("$f"); done
    local suite; suite=$(. /etc/os-release && echo "$VERSION_CODENAME")
    local r; r=$(mktemp -d)
    # The postgres account exists before the packages come, with a fixed id (999): the manifests run
    # the container as that user and its init container gives it the volume, by number.
    # Trimmed afterwards: no apt lists or caches, logs, documentation (licences stay), manual pages,
    # translations or locale sources (C.UTF-8 is built into the C library), no cluster the package made
    # (Patroni makes its own on the volume) and no snakeoil key. No JIT either: llvmjit.so, its bitcode
    # and LLVM are 160 of the 410 MB, and PostgreSQL runs queries without JIT when its provider library
    # is missing. The image holds files only, all owned by root (buildah copies them so): whatever the
    # postgres user writes is on the volume or in /tmp.
    mmdebstrap --quiet --mode=root --variant=minbase --format=directory \
      --aptopt='APT::Install-Recommends "false"' --include="$(IFS=,; echo "${pkgs[*]}")" \
      --essential-hook='echo "postgres:x:999:999:PostgreSQL administrator:/var/lib/postgresql:/bin/bash" >> "$1/etc/passwd"; echo "postgres:x:999:" >> "$1/etc/group"; echo "postgres:*:19000:0:99999:7:::" >> "$1/etc/shadow"' \
      --customize-hook='chroot "$1" pg_dropcluster 15 main 2>/dev/null || true' \
      --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/* "$1"/var/cache/debconf/*-old "$1"/var/log/* "$1"/usr/share/man "$1"/usr/share/info "$1"/usr/share/locale "$1"/usr/share/i18n "$1"/usr/share/lintian "$1"/etc/ssl/private/ssl-cert-snakeoil.key "$1"/etc/ssl/certs/ssl-cert-snakeoil.pem' \
      --customize-hook='find "$1/usr/share/doc" -mindepth 1 ! -name copyright ! -type d -delete; find "$1/usr/share/doc" -depth -type d -empty -delete' \
      --customize-hook='rm -rf "$1"/usr/lib/postgresql/15/lib/llvmjit* "$1"/usr/lib/postgresql/15/lib/bitcode "$1"/usr/lib/x86_64-linux-gnu/libLLVM-14.so* "$1"/usr/lib/x86_64-linux-gnu/libz3.so*' \
      "$suite" "$r/rootfs" "${sources[@]}" >&2 \
      || { nlog "mmdebstrap of ${pkgs[*]} failed (see above)"; rm -rf "$r"; return 1; }
    commit "postgres-$tag" "$IMAGE_PREFIX/postgres:$tag" "$r/rootfs" \
      --env PATH=/usr/lib/postgresql/15/bin:/usr/sbin:/usr/bin:/sbin:/bin --env LANG=C.UTF-8 \
      --user 999:999 --workingdir /var/lib/postgresql --port 5432 --port 8008 --cmd '["patroni"]'
    rm -rf "$r"
  fi
  echo "postgres=$IMAGE_PREFIX/postgres:$tag=postgres-$tag"
}

build() { pause; busybox; product; }

# import: prints NAME=REFERENCE lines.
import() {
  local name ref archive
  build | while IFS== read -r name ref archive; do
    ctr_ images import "$images_dir/$archive.tar" >/dev/null
    echo "$name=$ref"
  done
}

# import_etcd: builds and imports the two etcd images; prints NAME=REFERENCE lines.
import_etcd() {
  local name ref archive
  { etcd "$ETCD_WORKLOAD_FROM"; etcd "$ETCD_WORKLOAD_TO"; } | while IFS== read -r name ref archive; do
    ctr_ images import "$images_dir/$archive.tar" >/dev/null
    echo "$name=$ref"
  done
}

# import_postgres: builds and imports the PostgreSQL + Patroni image; prints its NAME=REFERENCE line.
import_postgres() {
  local name ref archive
  postgres | while IFS== read -r name ref archive; do
    ctr_ images import "$images_dir/$archive.tar" >/dev/null
    echo "$name=$ref"
  done
}

case ${1:-} in
  build) build ;;
  import) import ;;
  etcd) import_etcd ;;
  postgres) import_postgres ;;
  *) echo "usage: $0 build|import|etcd|postgres" >&2; exit 2 ;;
esac
