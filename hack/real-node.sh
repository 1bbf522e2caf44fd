#!/usr/bin/env bash
# One real node in the end-to-end cluster, beside the kwok nodes: containerd + runc, a bridge pod
# network, kubelet, kube-proxy and CoreDNS, and images built without a Docker engine. The parts live in
# hack/node/ by concern: runtime.sh, network.sh, images.sh, node.sh.
#   real-node.sh check             exit 0 when this machine can run it; otherwise one line saying why
#   real-node.sh up ASSETS PORT... bring it up (after the control plane); PORTs: loopback services pods
#                                  must reach (the API server's first); prints KEY='VALUE' lines for .e2e/env
#   real-node.sh down              remove every container, mount, namespace, link, rule and process it made
#   real-node.sh leftovers         list whatever of it is still on the machine (empty: nothing)
# PHASED_ROLLOUT_REAL_NODE=0 turns it off.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/node/common.sh"

check() {
  [ "${PHASED_ROLLOUT_REAL_NODE:-1}" != 0 ] || { echo "real node off (PHASED_ROLLOUT_REAL_NODE=0)"; return 1; }
  [ "$(uname -s)" = Linux ] || { echo "no real node: not Linux"; return 1; }
  [ "$(id -u)" = 0 ] || { echo "no real node: it needs root (kubelet, containerd, a bridge); kwok nodes only"; return 1; }
  command -v runc >/dev/null || command -v apt-get >/dev/null || { echo "no real node: no runc and no apt-get to install it"; return 1; }
  grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null || { echo "no real node: the kernel has no overlayfs"; return 1; }
  return 0
}

up() {
  local assets=${1:?assets}; shift
  local t0; t0=$(date +%s.%N)
  phase() { nlog "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%6.1fs", b-a}') $*"; }
  mkdir -p "$node_dir"
  [ -f "$node_dir/hostpath.saved" ] || { [ -d /tmp/hostpath_pv ] && echo keep || echo remove; } > "$node_dir/hostpath.saved"
  phase "packages"; bash "$here/node/runtime.sh" install
  phase "network"; bash "$here/node/network.sh" up; bash "$here/node/network.sh" forward "$@"
  phase "runtime"; bash "$here/node/runtime.sh" up
  phase "images"
  local images; images=$(bash "$here/node/images.sh" import)
  phase "node"; bash "$here/node/node.sh" up "$assets"
  phase "ready"
  echo "REAL_NODE='$NODE_NAME'"
  echo "REAL_NODE_IP='$NODE_IP'"
  echo "CRICTL='$assets/crictl --runtime-endpoint unix://$CONTAINERD_SOCK'"
  local line
  while IFS== read -r line; do
    local n=${line%%=*} ref=${line#*=}
    echo "IMAGE_$(echo "$n" | tr '[:lower:]' '[:upper:]')='$ref'"
  done <<< "$images"
}

down() {
  [ -d "$node_dir" ] || return 0
  bash "$here/node/node.sh" down
  bash "$here/node/runtime.sh" down
  bash "$here/node/network.sh" down
  if [ "$(cat "$node_dir/hostpath.saved" 2>/dev/null)" = remove ]; then rm -rf /tmp/hostpath_pv; fi
  # The node's folder goes with it (volumes, logs, containerd's state); kept: the image cache.
  local m; m=$(awk -v d="$node_dir/" 'index($2, d) == 1' /proc/mounts)
  [ -n "$m" ] || rm -rf "$node_dir"
}

# leftovers: one line per thing of the real node still on this machine.
leftovers() {
  local n p
  for n in containerd kubelet kube-proxy coredns node-forward; do
    [ -f "$state/pids/$n.pid" ] && "$root/hack/e2e-proc.sh" running "$n" && echo "process $n"
  done
  local c
  for p in /proc/[0-9]*; do
    c=$(tr '\0' ' ' 2>/dev/null < "$p/cmdline") 2>/dev/null || continue
    [[ $c == *"$node_dir"* ]] && echo "process ${p#/proc/}: ${c:0:120}"
  done
  awk -v d="$node_dir/" 'index($2, d) == 1 {print "mount " $2}' /proc/mounts
  ip link show "$BRIDGE" >/dev/null 2>&1 && echo "link $BRIDGE"
  if ip -o link show type veth 2>/dev/null | grep -q "master $BRIDGE"; then echo "veth on $BRIDGE"; fi
  local cmd table
  for cmd in iptables ip6tables; do
    command -v "$cmd" >/dev/null || continue
    for table in filter nat mangle; do
      { "$cmd" -w -t "$table" -S 2>/dev/null || true; } | { grep -E 'PHASED-ROLLOUT|KUBE-' || true; } | sed "s/^/$cmd $table /"
    done
  done
  [ -f "$node_dir/network.saved" ] && echo "network changes not put back ($node_dir/network.saved)"
  [ -d "$node_dir" ] && echo "folder $node_dir"
  return 0
}

case ${1:-} in
  check) check ;;
  up) shift; up "$@" ;;
  down) down ;;
  leftovers) leftovers ;;
  *) echo "usage: $0 check|up ASSETS PORT...|down|leftovers" >&2; exit 2 ;;
esac
