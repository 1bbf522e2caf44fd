#!/usr/bin/env bash
# Brings up the end-to-end environment on 127.0.0.1 only, then returns:
#   a kwok cluster (real etcd, kube-apiserver, kube-controller-manager, kube-scheduler; fake nodes),
#   the gate exporter, a Prometheus scraping it every second, the webhook (its bundle, dist/bundle/webhook.mjs) registered by URL
#   with the shipped matchConditions/namespaceSelector/timeout/failurePolicy, the ValidatingAdmissionPolicy
#   backstop, and (once dist/bundle/controller.mjs exists) the controller (its bundle) under its own ServiceAccount;
#   as root, one real node besides (hack/real-node.sh: kubelet, containerd, a bridge pod network).
# Writes .e2e/env (shell-sourceable). Idempotent: a healthy environment is left as it is.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
state=${PHASED_ROLLOUT_E2E_DIR:-$root/.e2e}
cluster=phased-rollout-e2e
proc() { "$root/hack/e2e-proc.sh" "$@"; }
log() { echo "[e2e-up] $*" >&2; }
t0=$(date +%s.%N)
phase() { log "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%6.1fs", b-a}') $*"; }

# register KUBECTL NODE URL CA_BUNDLE: the registration comes from the shipped manifests, changed only
# where a loopback process differs from a Service (clientConfig by URL with the generated CA); the
# policies, RBAC and CRDs with it. Applied again on a running environment, so a changed chart (a new
# policy, a new webhook rule) is what the next run tests, and registration.json, which tests apply to
# put the registration back, is the current one.
register() {
  local KUBECONFIG=$state/kubeconfig; export KUBECONFIG
  "$1" kustomize manifests/base > "$state/manifests.yaml"
  "$1" create --dry-run=client -o json -f "$state/manifests.yaml" > "$state/manifests.json"
  "$2" hack/e2e-manifests.mjs "$state/manifests.json" "$3" "$4" > "$state/registration.json"
  "$1" apply -f "$state/registration.json" > "$state/logs/registration.log"
}

k8s_version=$(source hack/versions.env; echo "$KUBERNETES_VERSION")
# (A webhook started before it read cluster policies makes the environment stale: brought up anew.)
if [ -f "$state/env" ] && grep -qx "KUBERNETES_VERSION='$k8s_version'" "$state/env" && grep -q -- '--cluster-policies' "$state/cmd/webhook" 2>/dev/null && proc running webhook && proc running prometheus && proc running gate-exporter \
   && { [ ! -f dist/bundle/controller.mjs ] || proc running controller; } \
   && { ! grep -q '^REAL_NODE=' "$state/env" || { proc running kubelet && proc running containerd; }; } \
   && KUBECONFIG=$state/kubeconfig "$(sed -n 's/^KUBECTL=//p' "$state/env" | tr -d "'")" get --raw /readyz >/dev/null 2>&1; then
  envval() { sed -n "s/^$1=//p" "$state/env" | tr -d "'"; }
  node=$root/node_modules/.bin/node; [ -x "$node" ] || node=$(command -v node)
  register "$(envval KUBECTL)" "$node" "$(envval WEBHOOK_URL)" "$(envval WEBHOOK_CA_BUNDLE)"
  log "environment already up ($state/env); registration applied again from manifests/base"; exit 0
fi
"$root/hack/e2e-down.sh" >/dev/null 2>&1 || true
mkdir -p "$state"/{cmd,pids,logs,certs,prometheus/targets}

phase "binaries"
assets=$("$root/hack/k8s-binaries.sh" | tail -n 1)
kubectl=$assets/kubectl
if ! command -v prometheus >/dev/null; then
  phase "installing Debian's prometheus package"
  [ "$(id -u)" = 0 ] || { log "prometheus is missing; install it (apt-get install prometheus) or run as root"; exit 1; }
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq --no-install-recommends prometheus >/dev/null
fi
prometheus=$(command -v prometheus)

phase "build"
[ -f dist/bundle/webhook.mjs ] && [ -z "${E2E_REBUILD:-}" ] || npm run -s build
# The project pins Node 24 as a devDependency; prefer it over whatever node is on PATH.
node=$root/node_modules/.bin/node; [ -x "$node" ] || node=$(command -v node)
freeport() { "$node" -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }

phase "certificates"
"$node" dist/certs/generate.js --out "$state/certs" --ip 127.0.0.1 >/dev/null

real_node=1
why=$(bash "$root/hack/real-node.sh" check) || { real_node=0; log "$why"; }
# kwok fakes only the nodes it made (kwokctl scale node annotates them); the real node is kubelet's.
patches="  - name: kwok-controller
    extraArgs:
      - {key: manage-all-nodes, value: \"false\", override: true}
      - {key: manage-nodes-with-annotation-selector, value: \"kwok.x-k8s.io/node=fake\"}"
sans=""
if [ $real_node = 1 ]; then
  # For pods on the real node: the API server advertises the node's bridge address (a forwarder there
  # relays to its loopback port), Services get addresses kube-proxy routes, and its certificate names
  # the \`kubernetes\` Service's address. The hostPath provisioner gives the node's PVCs a volume.
  source hack/node/common.sh
  patches="$patches
  - name: kube-apiserver
    extraArgs:
      - {key: advertise-address, value: \"$NODE_IP\"}
      - {key: service-cluster-ip-range, value: \"$SERVICE_CIDR\"}
      - {key: kubelet-preferred-address-types, value: \"InternalIP\"}
  - name: kube-controller-manager
    extraArgs:
      - {key: enable-hostpath-provisioner, value: \"true\"}"
  sans="  kubeApiserverCertSANs: [\"${SERVICE_CIDR%.*/*}.1\", \"$NODE_IP\"]"
fi

phase "cluster"
cat > "$state/kwokctl.yaml" <<EOF
apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokctlConfiguration
options:
  runtime: binary
  bindAddress: 127.0.0.1
  kubeVersion: $(source hack/versions.env; echo "$KUBERNETES_VERSION")
  kubeApiserverBinary: $assets/kube-apiserver
  kubeControllerManagerBinary: $assets/kube-controller-manager
  kubeSchedulerBinary: $assets/kube-scheduler
  kwokControllerBinary: $assets/kwok
  etcdBinary: $assets/etcd
  kubectlBinary: $kubectl
  # No feature gates: each version runs with its own defaults, as users run it (MaxUnavailableStatefulSet
  # is beta and on in 1.37, off in 1.35.4-1.36; the tests that depend on it read which, see
  # test/e2e/cluster.ts maxUnavailableKept).
$sans
componentsPatches:
$patches
EOF
# The API server audits every request of the controller's ServiceAccount, and StatefulSet and pod writes
# with their bodies: tests and bench/controller-step.ts count the controller's calls and time its
# reactions from it, and the safety checker replays it.
cat > "$state/audit-policy.yaml" <<EOF
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  # With bodies, for the safety checker (test/support/safety-checker.ts): every StatefulSet write (who
  # moved the partition, to what; the update revision the StatefulSet controller reports), pod creations
  # (their revision), pod status writes (when they became ready) and pod deletions (when a replacement
  # began: test/e2e/cluster.ts mostReplacedAtOnce).
  # Lease writes of the controller's leader election, with bodies: who held the Lease when. The
  # leader-election chaos test checks every partition step against the term it fell in.
  - level: Request
    resources: [{group: "coordination.k8s.io", resources: ["leases"]}]
    namespaces: ["phased-rollout-system"]
    verbs: ["create", "update", "patch"]
  # A StatefulSet write with its response too: the resourceVersion it made. The StatefulSet controller's
  # status write names the resourceVersion it answers, and may complete (and be logged) before the write
  # it answers; the checker puts it back after that write (safety-checker.ts, causalOrder).
  - level: RequestResponse
    resources: [{group: "apps", resources: ["statefulsets"]}]
    verbs: ["create", "update", "patch"]
  - level: Request
    resources: [{group: "apps", resources: ["statefulsets/status"]}]
    verbs: ["create", "update", "patch"]
  - level: Request
    resources: [{group: "", resources: ["pods", "pods/status"]}]
    verbs: ["create", "patch", "update", "delete"]
  # Job creations with bodies: a member hook's Job (phased-rollout.io/hook: prepare) says when a step's
  # prepare hooks began; the gates the step stands on were judged before that (safety-checker.ts).
  - level: Request
    resources: [{group: "batch", resources: ["jobs"]}]
    verbs: ["create"]
  # VolumeSnapshots with bodies: a checkpoint's creation and the snapshot controller's status writes
  # (bound, the cut) come before the partition write that releases the member (test/e2e/checkpoints.test.ts).
  - level: Request
    resources: [{group: "snapshot.storage.k8s.io", resources: ["volumesnapshots", "volumesnapshots/status"]}]
    verbs: ["create", "update", "patch", "delete"]
  # Claim creations, whoever asks: a restore's guard refuses the StatefulSet controller's empty ones (403).
  - level: Metadata
    resources: [{group: "", resources: ["persistentvolumeclaims"]}]
    verbs: ["create", "delete"]
  - level: Metadata
    users: ["system:serviceaccount:phased-rollout-system:phased-rollout-controller"]
  # The chart's controller of test/e2e/chart-pods.test.ts (as pods on the real node): a request its RBAC
  # refuses shows as a 403 here.
  - level: Metadata
    users: ["system:serviceaccount:pr-pods-system:pr-pods-controller"]
  # The peer systems of bench:peers, each under a ServiceAccount of its own: their API requests are counted.
  - level: Metadata
    users: ["system:serviceaccount:peers:sts-phased-rollout-operator", "system:serviceaccount:peers:rollout-operator", "system:serviceaccount:kruise-rollout:kruise-rollout-controller-manager"]
  - level: None
EOF
export KWOK_WORKDIR=$state/kwok
"$assets/kwokctl" --config "$state/kwokctl.yaml" create cluster --name "$cluster" --kubeconfig "$state/kubeconfig" --wait 2m --kube-audit-policy "$state/audit-policy.yaml" > "$state/logs/kwokctl.log" 2>&1 \
  || { log "cluster creation failed:"; tail -20 "$state/logs/kwokctl.log" >&2; exit 1; }
"$assets/kwokctl" --name "$cluster" scale node --replicas 3 >> "$state/logs/kwokctl.log" 2>&1
export KUBECONFIG=$state/kubeconfig
k() { "$kubectl" "$@"; }
for _ in $(seq 1 120); do k get serviceaccount default -n default >/dev/null 2>&1 && break; sleep 0.5; done
k get serviceaccount default -n default >/dev/null

phase "gate exporter and prometheus"
gate_port=$(freeport); prom_port=$(freeport)
echo "$node $root/dist/test/support/gate-exporter.js --port $gate_port --host 127.0.0.1" > "$state/cmd/gate-exporter"
proc start gate-exporter
cat > "$state/prometheus/prometheus.yml" <<EOF
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: gate
    static_configs: [{targets: ['127.0.0.1:$gate_port']}]
  # Further loopback targets (npm run demo's app exporter) are dropped in as JSON files; Prometheus
  # watches the folder.
  - job_name: extra
    file_sd_configs: [{files: ['$state/prometheus/targets/*.json'], refresh_interval: 5s}]
EOF
echo "$prometheus --config.file=$state/prometheus/prometheus.yml --storage.tsdb.path=$state/prometheus/data --web.listen-address=127.0.0.1:$prom_port --storage.tsdb.retention.time=2h" > "$state/cmd/prometheus"
proc start prometheus

# sa_kubeconfig SA FILE: a kubeconfig with a token of ServiceAccount SA of phased-rollout-system, so
# each program runs as its real identity and its RBAC from manifests/base is what is tested.
sa_kubeconfig() {
  local token server cacert
  token=$(k create token "$1" -n phased-rollout-system --duration 24h)
  server=$(k config view --minify -o jsonpath='{.clusters[0].cluster.server}')
  cacert=$(k config view --minify -o jsonpath='{.clusters[0].cluster.certificate-authority}')
  cat > "$2" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: e2e, cluster: {server: "$server", certificate-authority: "$cacert"}}]
users: [{name: $1, user: {token: "$token"}}]
contexts: [{name: e2e, context: {cluster: e2e, user: $1}}]
current-context: e2e
EOF
  chmod 600 "$2"
}
wait_http() { for _ in $(seq 1 200); do curl -fsS -o /dev/null "$1" 2>/dev/null && return 0; sleep 0.1; done; log "$1 not ready"; return 1; }

phase "webhook"
# The environment the image gives both programs (hack/runtime.env), so tests and benchmarks run what ships.
runtime_env=$(grep -v '^#' hack/runtime.env | grep . | tr '\n' ' ')
wh_port=$(freeport); wh_metrics=$(freeport)
ca_bundle=$(base64 -w0 < "$state/certs/ca.crt")
# Registered first: the webhook's ServiceAccount and RBAC come with it. The webhook reads
# ClusterRolloutGates and Namespaces (--cluster-policies) as that ServiceAccount, and is ready once it
# has listed them.
register "$kubectl" "$node" "https://127.0.0.1:$wh_port/mutate" "$ca_bundle"
sa_kubeconfig phased-rollout-webhook "$state/webhook.kubeconfig"
echo "env $runtime_env $node $root/dist/bundle/webhook.mjs --bind-address 127.0.0.1 --port $wh_port --metrics-port $wh_metrics --tls-cert-file $state/certs/tls.crt --tls-key-file $state/certs/tls.key --tls-poll-interval 1s --controller-username system:serviceaccount:phased-rollout-system:phased-rollout-controller --cluster-policies --kubeconfig $state/webhook.kubeconfig --log-level debug" > "$state/cmd/webhook"
proc start webhook

wait_http "http://127.0.0.1:$wh_metrics/readyz"
wait_http "http://127.0.0.1:$prom_port/-/ready"
wait_http "http://127.0.0.1:$gate_port/gates"

phase "controller identity"
# The controller runs as its real ServiceAccount, so its RBAC from manifests/base is what is tested.
sa_kubeconfig phased-rollout-controller "$state/controller.kubeconfig"

ctl_metrics=""
if [ -f dist/bundle/controller.mjs ]; then
  phase "controller"
  ctl_metrics=$(freeport)
  # The Node.js flags of the chart's controller.nodeArgs, so benchmarks measure what users run.
  echo "env $runtime_env $node --max-semi-space-size=1 --optimize-for-size $root/dist/bundle/controller.mjs --kubeconfig $state/controller.kubeconfig --prometheus-url http://127.0.0.1:$prom_port --metrics-port $ctl_metrics --bind-address 127.0.0.1 --log-level debug --status-key-secret phased-rollout-system/phased-rollout-controller-status-key" > "$state/cmd/controller"
  proc start controller
  wait_http "http://127.0.0.1:$ctl_metrics/readyz"
fi

real_env=""
if [ $real_node = 1 ]; then
  phase "real node"
  api_port=$(k config view --minify -o jsonpath='{.clusters[0].cluster.server}' | sed 's/.*://')
  real_env=$(bash hack/real-node.sh up "$assets" "$api_port" "$prom_port" "$gate_port") \
    || { log "the real node did not come up; see $state/logs/kubelet.log, containerd.log"; exit 1; }
fi

cat > "$state/env" <<EOF
$real_env
KUBERNETES_VERSION='$k8s_version'
KUBECONFIG='$state/kubeconfig'
KUBECTL='$kubectl'
KWOKCTL='$assets/kwokctl'
HELM='$assets/helm'
LUA_HEALTH='$assets/lua-health'
PROMTOOL='$(command -v promtool)'
WEBHOOK_CA_BUNDLE='$ca_bundle'
KWOK_WORKDIR='$state/kwok'
E2E_CLUSTER='$cluster'
PROMETHEUS_URL='http://127.0.0.1:$prom_port'
GATE_URL='http://127.0.0.1:$gate_port'
WEBHOOK_URL='https://127.0.0.1:$wh_port/mutate'
WEBHOOK_METRICS_URL='http://127.0.0.1:$wh_metrics'
CONTROLLER_METRICS_URL='${ctl_metrics:+http://127.0.0.1:$ctl_metrics}'
CONTROLLER_KUBECONFIG='$state/controller.kubeconfig'
E2E_DIR='$state'
AUDIT_LOG='$state/kwok/clusters/$cluster/logs/audit.log'
EOF
phase "ready: source $state/env"
