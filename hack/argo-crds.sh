#!/usr/bin/env bash
# Prints the folder of Argo Rollouts' CRD manifests (AnalysisTemplate, ClusterAnalysisTemplate, ...) at
# the version hack/argo-oracle/go.mod pins, from the Go module proxy's copy of the module (downloaded
# once into the module cache; no build). test/e2e/argo-analysis.test.ts installs the two template CRDs
# from it, as a cluster without Argo Rollouts would (docs/analysis.md, Argo AnalysisTemplates).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
version=$(awk '$1 == "github.com/argoproj/argo-rollouts" { print $2 }' "$here/argo-oracle/go.mod" | head -1)
dir=$(cd "$here/argo-oracle" && GOTOOLCHAIN=local GOFLAGS=-mod=mod go mod download -json "github.com/argoproj/argo-rollouts@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -d "$dir/manifests/crds" ] || { echo "[argo-crds] no manifests/crds in $dir" >&2; exit 1; }
echo "$dir/manifests/crds"
