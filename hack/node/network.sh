#!/usr/bin/env bash
# The real node's pod network: one Linux bridge on this machine, the CNI bridge/host-local plugins of
# Debian's containernetworking-plugins, and a guard that keeps pod traffic on the bridge.
#   network.sh up     bridge, sysctls, guard rules, CNI configuration, the host-side forwarder
#   network.sh down   all of it removed, the sysctls put back as they were
#
# Pods reach the host only at $NODE_IP (the bridge's address). The API server, Prometheus and the gate
# exporter listen on 127.0.0.1, which a pod cannot reach, so a forwarder (forward.mjs) listens on
# $NODE_IP at the same ports and relays to 127.0.0.1; the API server advertises $NODE_IP, so the
# `kubernetes` Service (through kube-proxy) and in-cluster clients land there.
set -euo pipefail
source "$(dirname "$0")/common.sh"
saved=$node_dir/network.saved
guard=PHASED-ROLLOUT-GUARD

up() {
  mkdir -p "$node_dir/cni" "$node_dir/cni-ipam"
  if [ ! -f "$saved" ]; then
    # What this run changes on the machine, to put back at `down`.
    {
      echo "ip_forward=$(cat /proc/sys/net/ipv4/ip_forward)"
      echo "bridge_nf=$(cat /proc/sys/net/bridge/bridge-nf-call-iptables 2>/dev/null || echo -)"
      echo "netns_before=$(ls /run/netns 2>/dev/null | tr '\n' ' ')"
      echo "kube_chains_before=$({ iptables -w -S; iptables -w -t nat -S; ip6tables -w -S; } 2>/dev/null | grep -c '^-N KUBE-')"
    } > "$saved"
  fi
  ip link show "$BRIDGE" >/dev/null 2>&1 || ip link add "$BRIDGE" type bridge
  ip addr replace "$NODE_IP/${POD_CIDR#*/}" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  # A pod's packet to a Service address is DNATed to a pod on the same bridge: that is routing through
  # the host, so it needs ip_forward; bridge-nf-call-iptables makes bridged frames pass kube-proxy's rules.
  sysctl -qw net.ipv4.ip_forward=1
  [ -e /proc/sys/net/bridge/bridge-nf-call-iptables ] || modprobe br_netfilter 2>/dev/null || true
  sysctl -qw net.bridge.bridge-nf-call-iptables=1
  # The guard: forwarding is allowed between ports of the bridge only; nothing from a pod leaves through
  # another interface, and nothing from another interface is forwarded to a pod.
  iptables -w -N "$guard" 2>/dev/null || iptables -w -F "$guard"
  iptables -w -A "$guard" -i "$BRIDGE" -o "$BRIDGE" -j RETURN
  iptables -w -A "$guard" -i "$BRIDGE" -j DROP
  iptables -w -A "$guard" -o "$BRIDGE" -j DROP
  iptables -w -C FORWARD -j "$guard" 2>/dev/null || iptables -w -I FORWARD 1 -j "$guard"
  # Pods get routes to the pod and Service ranges only: no default route, so no other address is
  # reachable from inside a pod at all.
  cat > "$node_dir/cni/10-phased-rollout.conflist" <<JSON
{
  "cniVersion": "0.4.0",
  "name": "phased-rollout",
  "plugins": [{
    "type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": false, "hairpinMode": true,
    "ipam": {
      "type": "host-local",
      "ranges": [[{"subnet": "$POD_CIDR", "gateway": "$NODE_IP"}]],
      "routes": [{"dst": "$SERVICE_CIDR", "gw": "$NODE_IP"}],
      "dataDir": "$node_dir/cni-ipam"
    }
  }]
}
JSON
}

# forward PORT...: (re)start the forwarder from $NODE_IP to 127.0.0.1 for these ports.
forward() {
  local node_bin=$root/node_modules/.bin/node; [ -x "$node_bin" ] || node_bin=$(command -v node)
  echo "$node_bin $root/hack/node/forward.mjs $NODE_IP 127.0.0.1 $*" > "$state/cmd/node-forward"
  proc stop node-forward
  proc start node-forward
}

down() {
  proc stop node-forward
  # Host ends of pod interfaces a sandbox did not take down, then the bridge itself.
  local l
  for l in $(ip -o link show master "$BRIDGE" 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1); do ip link delete "$l" 2>/dev/null || true; done
  ip link delete "$BRIDGE" 2>/dev/null || true
  if command -v iptables >/dev/null; then
    while iptables -w -D FORWARD -j "$guard" 2>/dev/null; do :; done
    iptables -w -F "$guard" 2>/dev/null || true
    iptables -w -X "$guard" 2>/dev/null || true
  fi
  if [ -f "$saved" ]; then
    local ip_forward bridge_nf netns_before n
    ip_forward=$(sed -n 's/^ip_forward=//p' "$saved"); bridge_nf=$(sed -n 's/^bridge_nf=//p' "$saved")
    netns_before=" $(sed -n 's/^netns_before=//p' "$saved") "
    # Network namespaces the runtime made for this run's sandboxes and left behind.
    for n in $(ls /run/netns 2>/dev/null); do
      case $n in cni-*) [[ $netns_before == *" $n "* ]] || ip netns delete "$n" 2>/dev/null || true ;; esac
    done
    [ -z "$ip_forward" ] || sysctl -qw net.ipv4.ip_forward="$ip_forward"
    [ -z "$bridge_nf" ] || [ "$bridge_nf" = - ] || sysctl -qw net.bridge.bridge-nf-call-iptables="$bridge_nf"
    rm -f "$saved"
  fi
  return 0
}

case ${1:-} in
  up) up ;;
  forward) shift; forward "$@" ;;
  down) down ;;
  *) echo "usage: $0 up|forward PORT...|down" >&2; exit 2 ;;
esac
