#!/usr/bin/env bash
# Runs cert-manager (controller, cainjector and webhook, built by k8s-binaries.sh from its Go module)
# as local processes against the end-to-end cluster of e2e-up.sh, like the other components. Idempotent;
# e2e-down.sh stops them with the rest. Appends CMCTL to .e2e/env.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
state=${PHASED_ROLLOUT_E2E_DIR:-$root/.e2e}
[ -f "$state/env" ] || { echo "[cert-manager-up] run npm run e2e:up first" >&2; exit 1; }
eval "$(sed -n "s/^\(KUBECONFIG\|KUBECTL\)=/export \1=/p" "$state/env")"
assets=$(dirname "$KUBECTL")
proc() { "$root/hack/e2e-proc.sh" "$@"; }
log() { echo "[cert-manager-up] $*" >&2; }
k() { "$KUBECTL" "$@"; }
freeport() { node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
if proc running cert-manager-controller && proc running cert-manager-cainjector && proc running cert-manager-webhook; then
  log "already running"; exit 0
fi

log "CRDs"
k apply --server-side -f "$assets/cert-manager-crds.yaml" > "$state/logs/cert-manager-crds.log"
k wait --for condition=established --timeout 60s crd/certificates.cert-manager.io crd/issuers.cert-manager.io crd/certificaterequests.cert-manager.io >/dev/null
k create namespace cert-manager --dry-run=client -o yaml | k apply -f - >/dev/null

log "processes"
metrics=$(freeport); secure=$(freeport); healthz=$(freeport)
common="--kubeconfig $KUBECONFIG --leader-elect=false"
echo "$assets/cert-manager-controller $common --cluster-resource-namespace=cert-manager --metrics-listen-address=127.0.0.1:$metrics --v=2" > "$state/cmd/cert-manager-controller"
echo "$assets/cert-manager-cainjector $common --v=2" > "$state/cmd/cert-manager-cainjector"
# The webhook makes its own serving CA (in a Secret) and cainjector puts it into the registrations.
echo "$assets/cert-manager-webhook --kubeconfig $KUBECONFIG --secure-port $secure --healthz-port $healthz --dynamic-serving-ca-secret-name=cert-manager-webhook-ca --dynamic-serving-ca-secret-namespace=cert-manager --dynamic-serving-dns-names=localhost --v=2" > "$state/cmd/cert-manager-webhook"
for p in cert-manager-controller cert-manager-cainjector cert-manager-webhook; do proc start "$p"; done

log "webhook registration"
rules='[{"apiGroups":["cert-manager.io","acme.cert-manager.io"],"apiVersions":["v1"],"operations":["CREATE","UPDATE"],"resources":["*/*"]}]'
for kind in Validating Mutating; do
  path=$([ $kind = Validating ] && echo validate || echo mutate)
  cat <<JSON | k apply -f - >/dev/null
{"apiVersion":"admissionregistration.k8s.io/v1","kind":"${kind}WebhookConfiguration",
 "metadata":{"name":"cert-manager-webhook","annotations":{"cert-manager.io/inject-ca-from-secret":"cert-manager/cert-manager-webhook-ca"}},
 "webhooks":[{"name":"webhook.cert-manager.io","admissionReviewVersions":["v1"],"sideEffects":"None","failurePolicy":"Fail","timeoutSeconds":10,
   "clientConfig":{"url":"https://localhost:$secure/$path"},"rules":$rules}]}
JSON
done
for _ in $(seq 1 300); do
  v=$(k get validatingwebhookconfiguration cert-manager-webhook -o jsonpath='{.webhooks[0].clientConfig.caBundle}' 2>/dev/null || true)
  m=$(k get mutatingwebhookconfiguration cert-manager-webhook -o jsonpath='{.webhooks[0].clientConfig.caBundle}' 2>/dev/null || true)
  [ -n "$v" ] && [ -n "$m" ] && break
  sleep 0.2
done
[ -n "$v" ] && [ -n "$m" ] || { log "cainjector did not inject the webhook's CA; see $state/logs/cert-manager-*.log"; exit 1; }
# Healthy once its first serving certificate is made. (It has no bind-address flag and listens on all
# interfaces; only the API server on this machine talks to it, through localhost.)
for _ in $(seq 1 100); do curl -fsS -o /dev/null "http://127.0.0.1:$healthz/healthz" 2>/dev/null && break; sleep 0.2; done
curl -fsS -o /dev/null "http://127.0.0.1:$healthz/healthz" || { log "webhook not healthy"; exit 1; }
grep -q '^CMCTL=' "$state/env" || echo "CMCTL='$assets/cert-manager-cmctl'" >> "$state/env"
log "ready"
