#!/usr/bin/env bash
# The real node's container runtime: Debian's containerd (1.6) with runc, its whole state under
# .e2e/node/containerd, listening on a socket there (never /run/containerd/containerd.sock).
#   runtime.sh install   apt-get install what the node needs (root; once per machine)
#   runtime.sh up        write the configuration and start containerd
#   runtime.sh down      stop every container and sandbox, containerd and its shims; unmount
set -euo pipefail
source "$(dirname "$0")/common.sh"
packages=(containerd runc containernetworking-plugins iptables conntrack buildah)

install() {
  local missing=()
  command -v containerd >/dev/null || missing+=(containerd)
  command -v runc >/dev/null || missing+=(runc)
  [ -x /usr/lib/cni/bridge ] || missing+=(containernetworking-plugins)
  command -v iptables >/dev/null || missing+=(iptables)
  command -v conntrack >/dev/null || missing+=(conntrack)
  command -v buildah >/dev/null || missing+=(buildah)
  [ ${#missing[@]} = 0 ] && return 0
  nlog "installing Debian's ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
}

up() {
  local d=$node_dir/containerd
  mkdir -p "$d"/{root,state}
  # restrict_oom_score_adj: this machine's root lacks CAP_SYS_RESOURCE, so runc cannot lower a
  # container's oom_score_adj below its own; without it every sandbox fails to start ("can't get final
  # child's PID from pipe: EOF"). The pause image is a local one (no registry can be reached).
  cat > "$d/config.toml" <<TOML
version = 2
root = "$d/root"
state = "$d/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs", "io.containerd.internal.v1.opt", "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = "$CONTAINERD_SOCK"
[ttrpc]
  address = "$CONTAINERD_SOCK.ttrpc"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        # runc's own state beside containerd's, not in /run/containerd/runc.
        Root = "$d/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$node_dir/cni"
TOML
  echo "containerd --config $d/config.toml" > "$state/cmd/containerd"
  proc start containerd
  for _ in $(seq 1 100); do ctr_ version >/dev/null 2>&1 && return 0; sleep 0.1; done
  nlog "containerd did not start; see $state/logs/containerd.log"; return 1
}

# shims: the containerd-shim processes of this containerd (they are started with its socket address).
shims() {
  local pid c
  while read -r pid c; do
    [[ "$c " != *"-address $CONTAINERD_SOCK "* ]] || echo "$pid"
  done < <(processes)
}

down() {
  if [ -S "$CONTAINERD_SOCK" ] && proc running containerd; then
    # Through the CRI first, so each sandbox's network is torn down by the CNI plugins that made it.
    if [ -x "$node_dir/bin/crictl" ]; then
      "$node_dir/bin/crictl" --runtime-endpoint "unix://$CONTAINERD_SOCK" --timeout 30s rmp --all --force >/dev/null 2>&1 || true
    fi
    local t
    for t in $(ctr_ tasks list -q 2>/dev/null); do ctr_ tasks kill -s SIGKILL "$t" >/dev/null 2>&1 || true; done
    for t in $(ctr_ tasks list -q 2>/dev/null); do ctr_ tasks delete --force "$t" >/dev/null 2>&1 || true; done
    for t in $(ctr_ containers list -q 2>/dev/null); do ctr_ containers delete "$t" >/dev/null 2>&1 || true; done
  fi
  proc stop containerd || true
  local pids; pids=$(shims)
  if [ -n "$pids" ]; then
    # shellcheck disable=SC2086
    kill -KILL $pids 2>/dev/null || true
  fi
  # Whatever is still mounted under the node's folder (sandbox shm, container rootfs, kubelet volumes),
  # deepest first.
  local m
  while read -r m; do umount -l "$m" 2>/dev/null || true; done < <(awk -v d="$node_dir/" 'index($2, d) == 1 {print $2}' /proc/mounts | sort -r)
  return 0
}

case ${1:-} in
  install) install ;;
  up) up ;;
  down) down ;;
  shims) shims ;;
  *) echo "usage: $0 install|up|down|shims" >&2; exit 2 ;;
esac
