#!/usr/bin/env bash
# The Helm chart is the one source of the install manifests. This renders from it:
#   manifests/base/phased-rollout.yaml              (helm template with hack/base-values.yaml)
#   manifests/overlays/cert-manager/certificates.yaml (the chart's cert-manager Issuer chain)
# Usage: render-manifests.sh [--check]   (--check: fail if the committed files differ from a render)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
helm=${HELM:-$(bash hack/k8s-binaries.sh | tail -n 1)/helm}
header='# Generated from charts/phased-rollout by hack/render-manifests.sh (npm run manifests). Do not edit.'
render() {
  local out=$1; shift
  { echo "$header"; "$helm" template phased-rollout charts/phased-rollout --namespace phased-rollout-system -f hack/base-values.yaml "$@" | sed -e '/^# Source: /d'; } > "$out"
}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# The base carries the gate policy CRDs too (the chart installs them from its crds/ folder).
render "$tmp/base.yaml" --include-crds
render "$tmp/certificates.yaml" --set certManager.enabled=true --show-only templates/tls.yaml
if [ "${1:-}" = "--check" ]; then
  ok=0
  diff -u manifests/base/phased-rollout.yaml "$tmp/base.yaml" || ok=1
  diff -u manifests/overlays/cert-manager/certificates.yaml "$tmp/certificates.yaml" || ok=1
  [ $ok = 0 ] && echo "manifests match the chart" || { echo "manifests differ from the chart: run npm run manifests" >&2; exit 1; }
else
  cp "$tmp/base.yaml" manifests/base/phased-rollout.yaml
  cp "$tmp/certificates.yaml" manifests/overlays/cert-manager/certificates.yaml
  echo "rendered manifests/base/phased-rollout.yaml and manifests/overlays/cert-manager/certificates.yaml"
fi
