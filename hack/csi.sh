#!/usr/bin/env bash
# Real volume snapshots on the real node (hack/real-node.sh), for the tests that need them only
# (test/e2e/csi-snapshots.test.ts, the infrastructure on its own; checkpoints.test.ts, the product): the
# project's CSI driver (hack/csi-driver, Go: volumes as ext4 images, loop-mounted; a snapshot is a copy
# taken under fsfreeze), external-provisioner's csi-provisioner, and the external-snapshotter's
# csi-snapshotter and snapshot-controller with its CRDs, all as host processes beside the node's kubelet.
# Nothing of it runs unless a test asks (test/e2e/csi.ts): `npm run e2e:up` does not build or start it.
#   csi.sh build       build what is missing (cached by version); prints the folder on the last line
#   csi.sh up          build, start, and apply the CRDs, the CSIDriver, the StorageClass and the
#                      VolumeSnapshotClass `phased-rollout-csi`; returns once the node lists the driver
#   csi.sh down        stop the processes, unmount and detach whatever the driver left mounted
#   csi.sh leftovers   one line per thing of it still on this machine (empty: nothing)
# Cold build, measured with `time` on this 2-core machine (Go module and build caches of its own, empty;
# other work running beside it, load about 4): 13 min 17 s. The driver first, 3 min 9 s (gRPC and
# protobuf compiled from nothing); then snapshot-controller 8 min 38 s (it pays for the k8s.io libraries
# the other two share), csi-snapshotter 26 s, csi-provisioner 59 s. Warm (all cached): nothing is built.
# An edit of the driver builds it again (its folder is named by a hash of its sources): about 15 s.
# Once built, `up` takes about 6 s. A snapshot of a mounted 64 MiB volume holding 48 MiB: 109 ms in the
# driver (freeze, sparse copy, thaw), ready 1.1 s after the VolumeSnapshot was made (csi-snapshots.test.ts).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/node/common.sh"
export GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=0

NAMES="csi-driver csi-provisioner csi-snapshotter snapshot-controller"
DRIVER=csi.phased-rollout.io
CLASS=phased-rollout-csi
data=$node_dir/csi
sock=$data/plugin/csi.sock
kubeconfig=$state/kubeconfig
log() { echo "[csi] $*" >&2; }

# The driver's folder is named by a hash of its sources: an edit builds it again.
driver_hash() { cat "$here/csi-driver/go.mod" "$here/csi-driver/go.sum" "$here"/csi-driver/*.go | sha256sum | cut -c1-12; }
sidecars=$cache/bin/csi-sidecars-$EXTERNAL_SNAPSHOTTER_VERSION-$EXTERNAL_PROVISIONER_VERSION

# step LABEL CMD...: runs a step that prints nothing for minutes (go get, go build) with a line every 10 s,
# so a cold build is never silent for long; its output is shown only when it fails.
step() {
  local label=$1 t0=$SECONDS last=$SECONDS out rc=0; shift
  out=$(mktemp)
  "$@" > "$out" 2>&1 &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    if [ $((SECONDS - last)) -ge 10 ]; then last=$SECONDS; log "still $label: $((SECONDS - t0)) s"; fi
  done
  wait "$pid" || rc=$?
  if [ "$rc" = 0 ]; then log "done: $label in $((SECONDS - t0)) s"; else log "$label failed:"; cat "$out" >&2; fi
  rm -f "$out"
  return "$rc"
}

build() {
  local driver_dir; driver_dir=$cache/bin/csi-driver-$(driver_hash)
  if [ ! -x "$driver_dir/csi-driver" ]; then
    mkdir -p "$driver_dir"
    (cd "$here/csi-driver" && step "building the CSI driver (hack/csi-driver)" go build -trimpath -ldflags "-s -w" -o "$driver_dir/csi-driver" .)
  fi
  if [ ! -x "$sidecars/snapshot-controller" ] || [ ! -x "$sidecars/csi-snapshotter" ] || [ ! -x "$sidecars/csi-provisioner" ] || [ ! -f "$sidecars/crds.yaml" ]; then
    local t0=$SECONDS w; w=$(mktemp -d)
    log "building snapshot-controller, csi-snapshotter ($EXTERNAL_SNAPSHOTTER_VERSION) and csi-provisioner ($EXTERNAL_PROVISIONER_VERSION): about 10 min cold"
    mkdir -p "$sidecars"
    (
      cd "$w"
      # A module of our own that requires both: their go.mod files replace the snapshotter's client
      # module with a local path, which `go install pkg@version` refuses.
      go mod init phased-rollout.local/csi-sidecars >/dev/null 2>&1
      step "fetching the modules of the sidecars" go get "github.com/kubernetes-csi/external-snapshotter/v8@$EXTERNAL_SNAPSHOTTER_VERSION" "github.com/kubernetes-csi/external-snapshotter/client/v8@$EXTERNAL_SNAPSHOTTER_VERSION" "github.com/kubernetes-csi/external-provisioner/v6@$EXTERNAL_PROVISIONER_VERSION"
      local c
      for c in snapshot-controller csi-snapshotter; do
        step "building $c" go build -trimpath -ldflags "-s -w" -o "$sidecars/$c" "github.com/kubernetes-csi/external-snapshotter/v8/cmd/$c"
      done
      step "building csi-provisioner" go build -trimpath -ldflags "-s -w" -o "$sidecars/csi-provisioner" "github.com/kubernetes-csi/external-provisioner/v6/cmd/csi-provisioner"
      # The CRDs of the same release, from its client module.
      local crd; crd=$(go mod download -json "github.com/kubernetes-csi/external-snapshotter/client/v8@$EXTERNAL_SNAPSHOTTER_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')/config/crd
      for f in volumesnapshotclasses volumesnapshotcontents volumesnapshots; do cat "$crd/snapshot.storage.k8s.io_$f.yaml"; echo '---'; done > "$sidecars/crds.yaml.tmp"
      mv "$sidecars/crds.yaml.tmp" "$sidecars/crds.yaml"
    )
    rm -rf "$w"
    log "built the sidecars in $((SECONDS - t0)) s"
  fi
  echo "$driver_dir"
}

up() {
  local driver_dir; driver_dir=$(build | tail -n 1)
  [ -f "$kubeconfig" ] && grep -q '^REAL_NODE=' "$state/env" 2>/dev/null || { log "no real node: npm run e2e:up (as root) first"; return 1; }
  # The kubectl of the binaries the node runs (real-node.sh up records their folder).
  local k=("$(cat "$node_dir/assets")/kubectl" --kubeconfig "$kubeconfig")
  "${k[@]}" apply --server-side -f "$sidecars/crds.yaml" > /dev/null
  "${k[@]}" wait --for condition=established --timeout=60s crd/volumesnapshots.snapshot.storage.k8s.io crd/volumesnapshotcontents.snapshot.storage.k8s.io crd/volumesnapshotclasses.snapshot.storage.k8s.io > /dev/null
  "${k[@]}" apply -f - > /dev/null <<YAML
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: $DRIVER}
spec:
  attachRequired: false      # no external-attacher: the node publishes by itself
  podInfoOnMount: false
  volumeLifecycleModes: [Persistent]
---
# Immediate: the volume has no topology (the one real node reaches every image), so a claim is bound
# at once, as on most cloud classes; a pod waits for nothing but its mount.
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: $CLASS}
provisioner: $DRIVER
reclaimPolicy: Delete
volumeBindingMode: Immediate
---
apiVersion: snapshot.storage.k8s.io/v1
kind: VolumeSnapshotClass
metadata: {name: $CLASS}
driver: $DRIVER
deletionPolicy: Delete
YAML
  mkdir -p "$data/plugin" "$data/store"
  echo "$driver_dir/csi-driver --name $DRIVER --endpoint $sock --registration-dir $node_dir/kubelet/plugins_registry --data-dir $data/store --node-id $NODE_NAME" > "$state/cmd/csi-driver"
  echo "$sidecars/csi-provisioner --csi-address=$sock --kubeconfig=$kubeconfig --leader-election=false --timeout=60s --extra-create-metadata --v=2" > "$state/cmd/csi-provisioner"
  # No volume group snapshots (their CRDs are not applied): with the gate on, snapshot-controller
  # v8.7.0 looks for those CRDs for 30 s before it starts, and a snapshot asked for meanwhile waits.
  echo "$sidecars/snapshot-controller --kubeconfig=$kubeconfig --leader-election=false --feature-gates=CSIVolumeGroupSnapshot=false --v=2" > "$state/cmd/snapshot-controller"
  echo "$sidecars/csi-snapshotter --csi-address=$sock --kubeconfig=$kubeconfig --leader-election=false --timeout=60s --feature-gates=CSIVolumeGroupSnapshot=false --v=2" > "$state/cmd/csi-snapshotter"
  # snapshot-controller has no probe: that it started its controller is told by its log, read from
  # where this start began.
  local n sc_log=$state/logs/snapshot-controller.log sc_from=0 sc_started=1
  if ! proc running snapshot-controller; then sc_from=$(stat -c %s "$sc_log" 2>/dev/null || echo 0); sc_started=0; fi
  for n in $NAMES; do proc start "$n" > /dev/null; done
  # Ready once the kubelet registered the driver (its CSINode lists it), the snapshot controller
  # started and the sidecars run.
  local i drivers
  for i in $(seq 1 120); do
    drivers=$("${k[@]}" get csinode "$NODE_NAME" -o jsonpath='{.spec.drivers[*].name}' 2>/dev/null || true)
    [ "$sc_started" = 1 ] || [[ $(tail -c +$((sc_from + 1)) "$sc_log" 2>/dev/null) != *"Starting snapshot controller"* ]] || sc_started=1
    if [[ " $drivers " == *" $DRIVER "* ]] && [ "$sc_started" = 1 ]; then
      for n in $NAMES; do proc running "$n" || { log "$n exited; see $state/logs/$n.log"; return 1; }; done
      log "ready: StorageClass and VolumeSnapshotClass $CLASS"
      return 0
    fi
    sleep 0.5
  done
  log "not ready within 60 s (driver registered with the kubelet: $([[ " $drivers " == *" $DRIVER "* ]] && echo yes || echo no), snapshot controller started: $([ "$sc_started" = 1 ] && echo yes || echo no)); see $state/logs/csi-driver.log, snapshot-controller.log and kubelet.log"
  return 1
}

# loops: the loop devices whose backing file is one of the driver's images.
loops() { losetup -l -n -O NAME,BACK-FILE 2>/dev/null | awk -v d="$data/" 'index($2, d) == 1 {print $1}'; }

down() {
  local n
  for n in $NAMES; do proc stop "$n" 2>/dev/null || true; done
  # The driver's mounts (pods' targets, loop-mounted images) and their loop devices.
  local dev m
  for dev in $(loops); do
    for m in $(awk -v d="$dev" '$1 == d {print $2}' /proc/mounts); do umount -l "$m" 2>/dev/null || true; done
    losetup -d "$dev" 2>/dev/null || true
  done
  return 0
}

leftovers() {
  local n
  for n in $NAMES; do [ -f "$state/pids/$n.pid" ] && proc running "$n" && echo "process $n"; done
  local dev; for dev in $(loops); do echo "loop device $dev"; done
  return 0
}

case ${1:-} in
  build) build ;;
  up) up ;;
  down) down ;;
  leftovers) leftovers ;;
  *) echo "usage: $0 build|up|down|leftovers" >&2; exit 2 ;;
esac
