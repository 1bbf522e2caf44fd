#!/usr/bin/env bash
# The real node itself: kubelet (built from the same Kubernetes source as the control plane), kube-proxy
# (iptables mode: Service addresses for pods and for the API server's webhook calls), CoreDNS (cluster
# DNS, a local process reading the API server) and a hostPath StorageClass.
#   node.sh up ASSETS     start them and wait until the Node is Ready
#   node.sh down          stop them; kube-proxy --cleanup removes its iptables rules
set -euo pipefail
source "$(dirname "$0")/common.sh"
kubeconfig=$state/kubeconfig

up() {
  local assets=${1:?assets dir}
  local k=("$assets/kubectl" --kubeconfig "$kubeconfig")
  mkdir -p "$node_dir"/{kubelet,pod-logs,bin}
  ln -sfn "$assets/crictl" "$node_dir/bin/crictl"

  # CoreDNS on the node's address, port 53: the cluster.local zone from the API server; any other name
  # is answered NXDOMAIN at once (there is nothing outside to ask).
  local dns_health; dns_health=$(freeport)
  cat > "$node_dir/Corefile" <<COREFILE
$CLUSTER_DOMAIN:53 in-addr.arpa:53 ip6.arpa:53 {
    bind $NODE_IP
    errors
    health 127.0.0.1:$dns_health
    kubernetes $CLUSTER_DOMAIN in-addr.arpa ip6.arpa {
        kubeconfig $kubeconfig
        pods insecure
        ttl 2
    }
}
.:53 {
    bind $NODE_IP
    template ANY ANY {
        rcode NXDOMAIN
    }
}
COREFILE
  echo "$assets/coredns -conf $node_dir/Corefile" > "$state/cmd/coredns"
  proc start coredns

  local proxy_health proxy_metrics; proxy_health=$(freeport); proxy_metrics=$(freeport)
  cat > "$node_dir/kube-proxy.yaml" <<YAML
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $kubeconfig}
hostnameOverride: $NODE_NAME
mode: iptables
clusterCIDR: $POD_CIDR
bindAddress: 127.0.0.1
healthzBindAddress: 127.0.0.1:$proxy_health
metricsBindAddress: 127.0.0.1:$proxy_metrics
nodePortAddresses: ["$NODE_IP/32"]
# Leave the machine's conntrack table size and timeouts alone.
conntrack: {maxPerCore: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
YAML
  echo "$assets/kube-proxy --config $node_dir/kube-proxy.yaml --v=1" > "$state/cmd/kube-proxy"
  proc start kube-proxy

  local kubelet_health; kubelet_health=$(freeport)
  local started; started=$(date +%s)
  # cgroups here are v1 (a hybrid mount): failCgroupV1 false keeps kubelet >= 1.35 running on them.
  # This machine's root lacks CAP_SYS_RESOURCE: kubelet logs that it cannot set oom_score_adj or
  # rlimits, harmlessly. Image garbage collection is off: the images are imported, not pullable.
  cat > "$node_dir/kubelet.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $kubelet_health
# The API server reaches kubelet (logs, exec) on the node's address, which only this machine and its
# pods can reach; it presents no client certificate in this harness.
authentication: {anonymous: {enabled: true}, webhook: {enabled: false}}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://$CONTAINERD_SOCK
podLogsDir: $node_dir/pod-logs
volumePluginDir: $node_dir/volume-plugins
clusterDNS: [$NODE_IP]
clusterDomain: $CLUSTER_DOMAIN
resolvConf: ""
registerWithTaints:
  - {key: $NODE_TAINT, value: "true", effect: NoSchedule}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
maxPods: 60
serializeImagePulls: false
YAML
  echo "$assets/kubelet --config $node_dir/kubelet.yaml --kubeconfig $kubeconfig --root-dir $node_dir/kubelet --cert-dir $node_dir/kubelet-pki --hostname-override $NODE_NAME --node-ip $NODE_IP --node-labels $NODE_LABEL=true --v=1" > "$state/cmd/kubelet"
  proc start kubelet

  "${k[@]}" apply -f - > /dev/null <<YAML
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: phased-rollout-hostpath
provisioner: kubernetes.io/host-path
reclaimPolicy: Delete
volumeBindingMode: Immediate
YAML
  # Ready, and this kubelet alive: a Node object left from an earlier start still reads Ready until the
  # node lifecycle controller times it out, so also wait for this kubelet's first renewal of its Lease,
  # and for a Ready this kubelet posted itself (its heartbeat time on the condition is from after the
  # start: a new kubelet's first status may say NotReady, over the old object's Ready, until its
  # runtime and network are up; one CI run read that False right after `up`).
  local i ready renew beat
  for i in $(seq 1 240); do
    ready=$("${k[@]}" get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null || true)
    beat=$("${k[@]}" get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].lastHeartbeatTime}' 2>/dev/null || true)
    renew=$("${k[@]}" get lease "$NODE_NAME" -n kube-node-lease -o jsonpath='{.spec.renewTime}' 2>/dev/null || true)
    [ "$ready" = True ] && [ -n "$renew" ] && [ "$(date -d "$renew" +%s 2>/dev/null || echo 0)" -ge "$started" ] \
      && [ -n "$beat" ] && [ "$(date -d "$beat" +%s 2>/dev/null || echo 0)" -ge "$started" ] && return 0
    sleep 0.5
  done
  nlog "node $NODE_NAME not Ready after 120 s; see $state/logs/kubelet.log"; return 1
}

down() {
  proc stop kubelet || true
  proc stop coredns || true
  proc stop kube-proxy || true
  # kube-proxy's own cleanup removes the chains and rules it made; kubelet's (KUBE-FIREWALL and the
  # KUBE-KUBELET-CANARY chains) go by name. Only when the machine had no KUBE- chains before `up`
  # (network.sh records it) and no other kubelet or kube-proxy runs: then every one of them is this node's.
  [ "$(sed -n 's/^kube_chains_before=//p' "$node_dir/network.saved" 2>/dev/null)" = 0 ] || return 0
  local pid c
  while read -r pid c; do
    case "$c " in */kubelet\ *|*/kube-proxy\ *) nlog "another kubelet or kube-proxy runs (pid $pid): its iptables rules are left alone"; return 0 ;; esac
  done < <(processes)
  local kp; kp=$(cat "$node_dir/assets" 2>/dev/null || true)/kube-proxy
  [ ! -x "$kp" ] || "$kp" --cleanup >/dev/null 2>&1 || true
  local cmd table chain rule
  for cmd in iptables ip6tables; do
    command -v "$cmd" >/dev/null || continue
    for table in filter nat mangle; do
      # Jumps from the built-in chains first, then the chains themselves.
      while read -r rule; do
        [ -n "$rule" ] || continue
        eval "$cmd -w -t $table ${rule/-A /-D }" 2>/dev/null || true
      done < <({ "$cmd" -w -t "$table" -S 2>/dev/null || true; } | { grep -E '^-A (INPUT|OUTPUT|FORWARD|PREROUTING|POSTROUTING) .*-j KUBE-' || true; })
      for chain in $({ "$cmd" -w -t "$table" -S 2>/dev/null || true; } | sed -n 's/^-N \(KUBE-[^ ]*\)$/\1/p'); do
        "$cmd" -w -t "$table" -F "$chain" 2>/dev/null || true
      done
      for chain in $({ "$cmd" -w -t "$table" -S 2>/dev/null || true; } | sed -n 's/^-N \(KUBE-[^ ]*\)$/\1/p'); do
        "$cmd" -w -t "$table" -X "$chain" 2>/dev/null || true
      done
    done
  done
  return 0
}

case ${1:-} in
  up) shift; up "$@" ;;
  down) down ;;
  *) echo "usage: $0 up ASSETS|down" >&2; exit 2 ;;
esac
