#!/usr/bin/env bash
# The real node's pod network: one Linux bridge on this machine, the CNI bridge/host-local plugins of
# Debian's containernetworking-plugins, and guards that keep pod traffic on the bridge.
#   network.sh up     bridge, forwarding on the bridge only, guard rules, CNI configuration
#   network.sh forward PORT...   (re)start the host-side forwarder for these loopback ports
#   network.sh down   all of it removed
#
# Pods reach the host only at $NODE_IP (the bridge's address). The API server, Prometheus and the gate
# exporter listen on 127.0.0.1, which a pod cannot reach, so a forwarder (forward.mjs) listens on
# $NODE_IP at the same ports and relays to 127.0.0.1; the API server advertises $NODE_IP, so the
# `kubernetes` Service (through kube-proxy) and in-cluster clients land there.
#
# Containment, three layers:
#   - routes: a pod has routes to the pod and Service ranges only (no default route);
#   - forwarding is on for the bridge alone (net.ipv4.conf.$BRIDGE.forwarding), never machine-wide:
#     nothing arriving on another interface is routed anywhere;
#   - raw PREROUTING drops any packet for the pod, Service or node address that arrives on another
#     interface than the bridge or loopback, and mangle FORWARD drops anything forwarded into or out of
#     the bridge from or to another interface. Both tables come before kube-proxy's filter and nat rules.
set -euo pipefail
source "$(dirname "$0")/common.sh"
saved=$node_dir/network.saved
guard=PHASED-ROLLOUT-GUARD

up() {
  mkdir -p "$node_dir/cni" "$node_dir/cni-ipam"
  if [ ! -f "$saved" ]; then
    # What this run makes besides its own names, to know at `down` what is its own.
    {
      echo "netns_before=$(ls /run/netns 2>/dev/null | tr '\n' ' ')"
      echo "kube_chains_before=$({ iptables -w -S; iptables -w -t nat -S; ip6tables -w -S; } 2>/dev/null | grep -c '^-N KUBE-' || true)"
    } > "$saved"
  fi
  ip link show "$BRIDGE" >/dev/null 2>&1 || ip link add "$BRIDGE" type bridge
  # No IPv6 on the bridge: the pod network is IPv4 only.
  sysctl -qw "net.ipv6.conf.$BRIDGE.disable_ipv6=1" 2>/dev/null || true
  ip addr replace "$NODE_IP/${POD_CIDR#*/}" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  # A pod's packet to a Service address is DNATed to a pod on the same bridge: routed through the host,
  # in and out of the bridge. bridge-nf-call-iptables makes bridged frames pass kube-proxy's rules.
  sysctl -qw "net.ipv4.conf.$BRIDGE.forwarding=1"
  [ -e /proc/sys/net/bridge/bridge-nf-call-iptables ] || modprobe br_netfilter 2>/dev/null || true
  sysctl -qw net.bridge.bridge-nf-call-iptables=1
  local t
  for t in raw mangle filter; do
    iptables -w -t "$t" -N "$guard" 2>/dev/null || iptables -w -t "$t" -F "$guard"
  done
  iptables -w -t raw -A "$guard" -i "$BRIDGE" -j RETURN
  iptables -w -t raw -A "$guard" -i lo -j RETURN
  iptables -w -t raw -A "$guard" -d "$POD_CIDR" -j DROP
  iptables -w -t raw -A "$guard" -d "$SERVICE_CIDR" -j DROP
  for t in mangle filter; do
    iptables -w -t "$t" -A "$guard" -i "$BRIDGE" -o "$BRIDGE" -j RETURN
    iptables -w -t "$t" -A "$guard" -i "$BRIDGE" -j DROP
    iptables -w -t "$t" -A "$guard" -o "$BRIDGE" -j DROP
  done
  iptables -w -t raw -C PREROUTING -j "$guard" 2>/dev/null || iptables -w -t raw -I PREROUTING 1 -j "$guard"
  iptables -w -t mangle -C FORWARD -j "$guard" 2>/dev/null || iptables -w -t mangle -I FORWARD 1 -j "$guard"
  iptables -w -C FORWARD -j "$guard" 2>/dev/null || iptables -w -I FORWARD 1 -j "$guard"
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
  proc stop node-forward || true
  # Host ends of pod interfaces a sandbox did not take down, then the bridge itself.
  local l
  for l in $(ip -o link show master "$BRIDGE" 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1); do ip link delete "$l" 2>/dev/null || true; done
  ip link delete "$BRIDGE" 2>/dev/null || true
  if command -v iptables >/dev/null; then
    local t chain
    for t in raw mangle filter; do
      case $t in raw) chain=PREROUTING ;; *) chain=FORWARD ;; esac
      while iptables -w -t "$t" -D "$chain" -j "$guard" 2>/dev/null; do :; done
      iptables -w -t "$t" -F "$guard" 2>/dev/null || true
      iptables -w -t "$t" -X "$guard" 2>/dev/null || true
    done
  fi
  if [ -f "$saved" ]; then
    local netns_before n
    netns_before=" $(sed -n 's/^netns_before=//p' "$saved") "
    # Network namespaces the runtime made for this node's sandboxes and left behind (containerd names
    # them cni-<uuid>; only those made after `up`).
    for n in $(ls /run/netns 2>/dev/null); do
      case $n in cni-*) [[ $netns_before == *" $n "* ]] || ip netns delete "$n" 2>/dev/null || true ;; esac
    done
  fi
  return 0
}

case ${1:-} in
  up) up ;;
  forward) shift; forward "$@" ;;
  down) down ;;
  *) echo "usage: $0 up|forward PORT...|down" >&2; exit 2 ;;
esac
