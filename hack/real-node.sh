#!/usr/bin/env bash
# One real node in the end-to-end cluster, beside the kwok nodes: containerd + runc, a bridge pod
# network, kubelet, kube-proxy and CoreDNS, and images built without a Docker engine. The parts live in
# hack/node/ by concern: runtime.sh, network.sh, images.sh, node.sh.
#   real-node.sh check             exit 0 when this machine can run it; otherwise one line saying why
#   real-node.sh up ASSETS PORT... bring it up (after the control plane); PORTs: loopback services pods
#                                  must reach (the API server's first); prints KEY='VALUE' lines for .e2e/env
#   real-node.sh down              remove every container, mount, namespace, link, rule, cgroup and process
#                                  it made, and put back the kernel settings it changed
#   real-node.sh leftovers         list whatever of it is still on the machine (empty: nothing)
# PHASED_ROLLOUT_REAL_NODE=0 turns it off.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/node/common.sh"

# other_node: why another real node (another state folder's, or another kubelet) is on this machine.
other_node() {
  local owner; owner=$(cat "$LOCK" 2>/dev/null || true)
  if [ -n "$owner" ] && [ "$owner" != "$node_dir" ] && [ -d "$owner" ]; then echo "the real node of $owner runs here"; return 0; fi
  local pid c
  while read -r pid c; do
    case "$c " in */kubelet\ *|kubelet\ *) [[ $c == *"$node_dir"* ]] || { echo "another kubelet runs here (pid $pid)"; return 0; } ;; esac
  done < <(processes)
  return 1
}

check() {
  [ "${PHASED_ROLLOUT_REAL_NODE:-1}" != 0 ] || { echo "real node off (PHASED_ROLLOUT_REAL_NODE=0)"; return 1; }
  [ "$(uname -s)" = Linux ] || { echo "no real node: not Linux"; return 1; }
  [ "$(id -u)" = 0 ] || { echo "no real node: it needs root (kubelet, containerd, a bridge); kwok nodes only"; return 1; }
  command -v runc >/dev/null || command -v apt-get >/dev/null || { echo "no real node: no runc and no apt-get to install it"; return 1; }
  grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null || { echo "no real node: the kernel has no overlayfs"; return 1; }
  local why
  if why=$(other_node); then echo "no real node: $why"; return 1; fi
  # The node's ranges must be free: an address or route of this machine in them would be shadowed.
  if ! ip link show "$BRIDGE" >/dev/null 2>&1 && ip -4 route show | grep -qE "^(10\.244\.|10\.96\.)"; then
    echo "no real node: this machine already routes 10.244.0.0/24 or 10.96.0.0/16"; return 1
  fi
  return 0
}

up() {
  local assets=${1:?assets}; shift
  local t0; t0=$(date +%s.%N)
  phase() { nlog "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%6.1fs", b-a}') $*"; }
  if [ ! -d "$node_dir" ]; then
    # A fresh node: what `down` must put back or remove. Kernel settings as they are now, and which fixed
    # paths and cgroups do not exist yet (so they are this node's when `down` finds them). Both files
    # outlive `down`, for `leftovers` to compare against.
    local s d
    for s in $SYSCTLS; do echo "$s=$(sysctl -n "$s" 2>/dev/null || echo -)"; done > "$SYSCTL_SAVED"
    { for d in $FIXED_DIRS /tmp/hostpath_pv; do [ -e "$d" ] || echo "$d"; done
      for d in /sys/fs/cgroup/*/"$CGROUP_NAME"; do [ ! -e "$d" ] || echo "cgroups-existed"; done
    } > "$MADE_SAVED"
  fi
  mkdir -p "$node_dir"
  echo "$assets" > "$node_dir/assets"
  echo "$node_dir" > "$LOCK"
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

# cgroup_pids DIR: every process in a cgroup folder and those below it.
cgroup_pids() { find "$1" -name cgroup.procs -exec cat {} + 2>/dev/null || true; }

down() {
  [ -d "$node_dir" ] || return 0
  local rc=0
  # Each part goes even when another fails: a half-made or half-dead node is the usual case here.
  bash "$here/node/node.sh" down || rc=1
  bash "$here/node/runtime.sh" down || rc=1
  # Container processes whose containerd or shim died before them: they stay in kubelet's cgroups.
  local made; made=$(cat "$MADE_SAVED" 2>/dev/null || true)
  if ! grep -qx cgroups-existed <<< "$made"; then
    local d pids
    for d in /sys/fs/cgroup/*/"$CGROUP_NAME"; do
      [ -d "$d" ] || continue
      pids=$(cgroup_pids "$d")
      # shellcheck disable=SC2086
      [ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
    done
    # A killed process leaves its cgroup only once the kernel has reaped it, which on a loaded machine
    # takes longer than a moment; an rmdir before that fails (EBUSY). Wait for the cgroups to empty
    # (bounded: 10 s), then remove them, again a few times while a straggler goes.
    local i
    for i in $(seq 1 50); do
      pids=""
      for d in /sys/fs/cgroup/*/"$CGROUP_NAME"; do [ ! -d "$d" ] || pids+=$(cgroup_pids "$d"); done
      [ -n "$pids" ] || break
      sleep 0.2
    done
    for i in 1 2 3 4 5; do
      for d in /sys/fs/cgroup/*/"$CGROUP_NAME"; do
        [ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true
      done
      compgen -G "/sys/fs/cgroup/*/$CGROUP_NAME" > /dev/null || break
      sleep 0.5
    done
  fi
  # The CSI driver's loop mounts (hack/csi.sh), once no container holds them.
  bash "$here/csi.sh" down || rc=1
  bash "$here/node/network.sh" down || rc=1
  local line
  while read -r line; do
    case $line in
      /tmp/hostpath_pv|/var/lib/kubelet|/var/log/containers|/var/log/pods) rm -rf --one-file-system "$line" ;;
    esac
  done <<< "$made"
  if [ -f "$SYSCTL_SAVED" ]; then
    local s v
    while IFS='=' read -r s v; do [ "$v" = - ] || sysctl -qw "$s=$v" 2>/dev/null || true; done < "$SYSCTL_SAVED"
  fi
  # The node's folder goes with it (volumes, logs, containerd's state); kept: the image cache.
  if [ -z "$(awk -v d="$node_dir/" 'index($2, d) == 1' /proc/mounts)" ]; then rm -rf --one-file-system "$node_dir"; else rc=1; fi
  [ "$(cat "$LOCK" 2>/dev/null)" != "$node_dir" ] || rm -f "$LOCK"
  return $rc
}

# leftovers: one line per thing of the real node still on this machine.
leftovers() {
  local n pid c
  for n in containerd kubelet kube-proxy coredns node-forward; do
    [ -f "$state/pids/$n.pid" ] && "$root/hack/e2e-proc.sh" running "$n" && echo "process $n"
  done
  while read -r pid c; do
    [[ $c != *"$node_dir"* ]] || echo "process $pid: ${c:0:120}"
  done < <(processes)
  local d made; made=$(cat "$MADE_SAVED" 2>/dev/null || true)
  if ! grep -qx cgroups-existed <<< "$made"; then
    for d in /sys/fs/cgroup/*/"$CGROUP_NAME"; do
      [ -d "$d" ] || continue
      echo "cgroup $d"
      [ -z "$(cgroup_pids "$d")" ] || echo "processes in $d: $(cgroup_pids "$d" | tr '\n' ' ')"
    done
  fi
  # Fixed paths kubelet made (absent before `up`) and the hostPath provisioner's folder.
  while read -r d; do [[ $d != /* ]] || [ ! -e "$d" ] || echo "folder $d"; done <<< "$made"
  awk -v d="$node_dir/" 'index($2, d) == 1 {print "mount " $2}' /proc/mounts
  bash "$here/csi.sh" leftovers
  ip link show "$BRIDGE" >/dev/null 2>&1 && echo "link $BRIDGE"
  if ip -o link show type veth 2>/dev/null | grep -q "master $BRIDGE"; then echo "veth on $BRIDGE"; fi
  local cmd table
  for cmd in iptables ip6tables; do
    command -v "$cmd" >/dev/null || continue
    for table in raw mangle filter nat; do
      { "$cmd" -w -t "$table" -S 2>/dev/null || true; } | { grep -E 'PHASED-ROLLOUT|KUBE-' || true; } | sed "s/^/$cmd $table /"
    done
  done
  if [ -f "$SYSCTL_SAVED" ]; then
    local s v now
    while IFS='=' read -r s v; do
      now=$(sysctl -n "$s" 2>/dev/null || echo -)
      [ "$now" = "$v" ] || echo "sysctl $s is $now (was $v)"
    done < "$SYSCTL_SAVED"
  fi
  [ ! -f "$LOCK" ] || [ "$(cat "$LOCK")" != "$node_dir" ] || echo "lock $LOCK"
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
