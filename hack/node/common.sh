# Shared by the real-node scripts (hack/node/*.sh): where the node lives and how it is addressed.
# Sourced, not run. Everything the node makes lives under $node_dir, has a name starting with
# "phased-rollout" / "pr-", or is an address in the two ranges below, so `down` can find all of it.
# shellcheck shell=bash
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
state=${PHASED_ROLLOUT_E2E_DIR:-$root/.e2e}
node_dir=$state/node
cache=${PHASED_ROLLOUT_CACHE:-$HOME/.cache/phased-rollout}
# shellcheck source=../versions.env
source "$root/hack/versions.env"

# The node's name, label and taint: workloads choose it with the label and tolerate the taint; kwok-sized
# tests, which do neither, never land on it.
NODE_NAME=phased-rollout-real-node
NODE_LABEL=phased-rollout.io/real-node
NODE_TAINT=phased-rollout.io/real-node

# Pod network: one bridge on this machine. The bridge's own address is the node's address (kubelet
# binds there) and the pods' only gateway; pods get routes to the pod and Service ranges only, and a
# FORWARD rule drops anything from the bridge that would leave through another interface.
BRIDGE=pr-br0
POD_CIDR=10.244.0.0/24
NODE_IP=10.244.0.1
SERVICE_CIDR=10.96.0.0/16
CLUSTER_DOMAIN=cluster.local

CONTAINERD_SOCK=$node_dir/containerd/containerd.sock
# Images are imported under this prefix and used with imagePullPolicy: Never (no registry here).
IMAGE_PREFIX=localhost/phased-rollout
PAUSE_IMAGE=$IMAGE_PREFIX/pause:3.10

# One real node per machine: it holds the bridge, the node address, kubelet's port and the kubepods
# cgroups. The lock names the state folder of the node that runs (hack/real-node.sh check refuses others).
LOCK=/run/phased-rollout-real-node
# Kernel settings the node changes (its own, kubelet's and kube-proxy's), saved at `up` in
# $state/real-node.sysctl and put back at `down`.
SYSCTLS="net.ipv4.ip_forward net.ipv4.conf.all.forwarding net.ipv4.conf.default.forwarding net.ipv4.conf.all.route_localnet
net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables kernel.panic kernel.panic_on_oops vm.overcommit_memory
vm.panic_on_oom kernel.keys.root_maxkeys kernel.keys.root_maxbytes net.netfilter.nf_conntrack_max
net.netfilter.nf_conntrack_tcp_timeout_established net.netfilter.nf_conntrack_tcp_timeout_close_wait"
SYSCTL_SAVED=$state/real-node.sysctl
MADE_SAVED=$state/real-node.made
# Fixed paths kubelet uses whatever its --root-dir: removed at `down` when `up` made them.
FIXED_DIRS="/var/lib/kubelet /var/log/containers /var/log/pods"
CGROUP_NAME=kubepods

# processes: one line per process of this machine, "PID ARGUMENTS" (arguments joined by spaces). Read
# from /proc by bash alone, so the lister never sees itself.
processes() {
  local p c
  for p in /proc/[0-9]*; do
    c=$(tr '\0' ' ' 2>/dev/null < "$p/cmdline") 2>/dev/null || continue
    [ -z "$c" ] || echo "${p#/proc/} $c"
  done
}
# freeport: a free TCP port on 127.0.0.1.
freeport() { "$root/node_modules/.bin/node" -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }

nlog() { echo "[real-node] $*" >&2; }
proc() { "$root/hack/e2e-proc.sh" "$@"; }
ctr_() { ctr --address "$CONTAINERD_SOCK" --namespace k8s.io "$@"; }
