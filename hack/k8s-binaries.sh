#!/usr/bin/env bash
# Obtains the binaries the end-to-end harness runs: kube-apiserver, kube-controller-manager,
# kube-scheduler, kubectl, and for the real node kubelet and kube-proxy (Kubernetes), etcd, kwok and
# kwokctl, helm, cert-manager's controller, cainjector, webhook and cmctl (cert-manager-* names) plus its
# CRDs (cert-manager-crds.yaml), and CoreDNS (the real node's cluster DNS).
#
# Order of preference for each binary:
#   1. $PHASED_ROLLOUT_E2E_ASSETS/<name>  (a directory you fill yourself)
#   2. $KUBEBUILDER_ASSETS/<name>         (envtest convention; setup-envtest gives apiserver, etcd, kubectl)
#   3. the build cache $PHASED_ROLLOUT_CACHE/bin/<component>-<version>/<name>, built from the Go module
#      proxy when missing or when its --version does not match the pinned one.
# Prints the directory that holds all of them (symlinks) on the last line of stdout.
#
# PHASED_ROLLOUT_BINARIES=demo: only what `npm run demo` runs (kube-apiserver, kube-controller-manager,
# kube-scheduler, kubectl, etcd, kwok, kwokctl, helm); the rest is built when the e2e suite or the real
# node first asks for it (the same cache, the same folder of links).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=versions.env
source "$here/versions.env"

cache=${PHASED_ROLLOUT_CACHE:-$HOME/.cache/phased-rollout}
k8s_dir=$cache/bin/kubernetes-$KUBERNETES_VERSION
etcd_dir=$cache/bin/etcd-$ETCD_VERSION
kwok_dir=$cache/bin/kwok-$KWOK_VERSION
helm_dir=$cache/bin/helm-$HELM_VERSION
cm_dir=$cache/bin/cert-manager-$CERT_MANAGER_VERSION
coredns_dir=$cache/bin/coredns-$COREDNS_VERSION
crictl_dir=$cache/bin/crictl-$CRICTL_VERSION
out=$cache/bin/assets-$KUBERNETES_VERSION-$ETCD_VERSION-$KWOK_VERSION
export CGO_ENABLED=0 GOFLAGS=-mod=mod GOTOOLCHAIN=local
log() { echo "[k8s-binaries] $*" >&2; }

# A cold build takes 15-30 min on 2 cores, most of it in a few `go build`s that print nothing. Each
# long step runs under `progress`, which says which binary (n of TOTAL) and the time spent: a live bar
# on a terminal, a plain line every 10 s otherwise (CI, pipes), so nothing sits silent for long.
binaries=${PHASED_ROLLOUT_BINARIES:-all}
case $binaries in
  all) k8s_components=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy) ;;
  demo) k8s_components=(kube-apiserver kube-controller-manager kube-scheduler) ;;
  *) echo "[k8s-binaries] PHASED_ROLLOUT_BINARIES is all or demo; got $binaries" >&2; exit 2 ;;
esac
# Binaries are numbered in build order: Kubernetes' (and kubectl), etcd, kwok, helm, then for `all`
# lua-health, cert-manager's four, and the node tools.
k8s_n=$(( ${#k8s_components[@]} + 1 ))
etcd_n=$((k8s_n + 1)) kwok_n=$((k8s_n + 2)) helm_n=$((k8s_n + 3)) lua_n=$((k8s_n + 4)) cm_n=$((k8s_n + 5)) node_n=$((k8s_n + 9))
if [ "$binaries" = demo ]; then TOTAL=$helm_n; else TOTAL=$node_n; fi
t_start=$(date +%s)
fmt_secs() { local s=$1; if [ "$s" -ge 60 ]; then printf '%dm%02ds' $((s / 60)) $((s % 60)); else printf '%ds' "$s"; fi; }
# progress N LABEL CMD...: runs CMD (binary N of TOTAL) and reports on it until it ends; returns its status.
progress() {
  local n=$1 label=$2; shift 2
  local t0 rc=0 last=0 now; t0=$(date +%s)
  log "[$n/$TOTAL] $label"
  "$@" &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    now=$(date +%s)
    if [ -t 2 ]; then
      local width=24 filled=$(( (n - 1) * 24 / TOTAL )) bar
      bar=$(printf '%*s' "$filled" '' | tr ' ' '#')$(printf '%*s' $((width - filled)) '' | tr ' ' '.')
      printf '\r[k8s-binaries] [%s] %d/%d %s %s (%s in all)\033[K' "$bar" "$n" "$TOTAL" "$label" "$(fmt_secs $((now - t0)))" "$(fmt_secs $((now - t_start)))" >&2
    elif [ $((now - last)) -ge 10 ]; then
      [ "$last" = 0 ] || log "[$n/$TOTAL] still $label: $(fmt_secs $((now - t0))) ($(fmt_secs $((now - t_start))) in all)"
      last=$now
    fi
  done
  wait "$pid" || rc=$?
  [ -t 2 ] && printf '\r\033[K' >&2
  [ "$rc" = 0 ] && log "[$n/$TOTAL] done: $label in $(fmt_secs $(( $(date +%s) - t0 )))"
  return "$rc"
}

# from_user NAME: prints a user-supplied binary path for NAME, if any.
from_user() {
  local d
  for d in "${PHASED_ROLLOUT_E2E_ASSETS:-}" "${KUBEBUILDER_ASSETS:-}"; do
    if [ -n "$d" ] && [ -x "$d/$1" ]; then echo "$d/$1"; return 0; fi
  done
  return 1
}

# version_ok BIN WANT: the binary exists and its --version output mentions WANT.
# (Output is captured first: `| grep -q` would close the pipe early and, under pipefail, fail the check.)
version_ok() { local out; [ -x "$1" ] && out=$("$1" --version 2>/dev/null) && [[ $out == *"${2#v}"* ]]; }

build_kubernetes() {
  local v=$KUBERNETES_VERSION minor staging=v0${KUBERNETES_VERSION#v1}
  minor=$(echo "$KUBERNETES_VERSION" | cut -d. -f2)
  local todo=()
  for c in "${k8s_components[@]}"; do
    version_ok "$k8s_dir/$c" "$v" || todo+=("$c")
  done
  [ -x "$k8s_dir/kubectl" ] || todo+=(kubectl)
  if [ ${#todo[@]} = 0 ]; then log "kubernetes $v cached in $k8s_dir"; return; fi
  log "building kubernetes $v (cold: 15-30 min on 2 cores)"
  local w; w=$(mktemp -d); mkdir -p "$k8s_dir"
  (
    cd "$w"
    go mod init phased-rollout.local/k8s-build >/dev/null 2>&1
    # k8s.io/kubernetes replaces its staging modules with local paths, which `go install` refuses;
    # derive the list of staging modules from its go.mod and point each at the published version.
    progress 1 "downloading the k8s.io/kubernetes module" go mod download -json "k8s.io/kubernetes@$v" >/dev/null
    local gomod; gomod=$(go mod download -json "k8s.io/kubernetes@$v" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
    local args=()
    while read -r mod; do args+=("-replace=$mod=$mod@$staging"); done \
      < <(grep -E '^\s*k8s.io/[^ ]+ => ./staging/' "$gomod" | awk '{print $1}')
    [ ${#args[@]} -gt 10 ] || { log "could not derive staging replaces from $gomod"; exit 1; }
    go mod edit "${args[@]}"
    progress 1 "fetching the modules kubernetes needs" bash -c 'go get "$1" >/dev/null 2>&1 || go get "$1"' _ "k8s.io/kubernetes@$v"
    local ld="-s -w -X k8s.io/component-base/version.gitVersion=$v -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/client-go/pkg/version.gitVersion=$v -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=$minor"
    local i=0
    for c in "${todo[@]}"; do
      i=$((i + 1))
      progress "$i" "building $c" go build -trimpath -ldflags "$ld" -o "$k8s_dir/$c" "k8s.io/kubernetes/cmd/$c"
    done
  )
  rm -rf "$w"
}

build_etcd() {
  if version_ok "$etcd_dir/etcd" "$ETCD_VERSION"; then log "etcd $ETCD_VERSION cached"; return; fi
  log "building etcd $ETCD_VERSION"
  local w; w=$(mktemp -d); mkdir -p "$etcd_dir"
  (
    cd "$w"
    go mod init phased-rollout.local/etcd-build >/dev/null 2>&1
    progress $etcd_n "fetching the modules etcd needs" bash -c 'go get "$1" >/dev/null 2>&1 || go get "$1"' _ "go.etcd.io/etcd/server/v3@$ETCD_VERSION"
    progress $etcd_n "building etcd" go build -trimpath -ldflags "-s -w" -o "$etcd_dir/etcd" go.etcd.io/etcd/server/v3
  )
  rm -rf "$w"
}

build_kwok() {
  if version_ok "$kwok_dir/kwokctl" "$KWOK_VERSION" && [ -x "$kwok_dir/kwok" ]; then log "kwok $KWOK_VERSION cached"; return; fi
  log "building kwok $KWOK_VERSION"
  mkdir -p "$kwok_dir"
  GOBIN=$kwok_dir progress $kwok_n "building kwok and kwokctl" go install -trimpath -ldflags "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=$KWOK_VERSION" \
    "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION" "sigs.k8s.io/kwok/cmd/kwokctl@$KWOK_VERSION"
}

build_helm() {
  if [ -x "$helm_dir/helm" ] && [ "$("$helm_dir/helm" version --short 2>/dev/null)" = "$HELM_VERSION" ]; then log "helm $HELM_VERSION cached"; return; fi
  log "building helm $HELM_VERSION"
  mkdir -p "$helm_dir"
  # Without these, a go-installed helm reports "v3.22" and templates for Kubernetes v1.20.
  local minor; minor=$(echo "$KUBERNETES_VERSION" | cut -d. -f2)
  GOBIN=$helm_dir progress $helm_n "building helm" go install -trimpath -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$minor" \
    "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
}

build_cert_manager() {
  local have; have=$("$cm_dir/cert-manager-cmctl" version --client 2>/dev/null || true)
  if [[ $have == *"$CERT_MANAGER_VERSION"* ]] && [ -x "$cm_dir/cert-manager-controller" ] && [ -x "$cm_dir/cert-manager-cainjector" ] \
     && [ -x "$cm_dir/cert-manager-webhook" ] && [ -s "$cm_dir/cert-manager-crds.yaml" ]; then
    log "cert-manager $CERT_MANAGER_VERSION cached"; return
  fi
  log "building cert-manager $CERT_MANAGER_VERSION (cold: about 10 min on 2 cores)"
  local w; w=$(mktemp -d); mkdir -p "$cm_dir"
  (
    cd "$w"
    go mod init phased-rollout.local/cert-manager-build >/dev/null 2>&1
    local m=github.com/cert-manager/cert-manager
    local dir gomod; dir=$(go mod download -json "$m@$CERT_MANAGER_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
    gomod=$dir/go.mod
    # Its go.mod pins some dependencies by replace directives, which only apply in its own build:
    # repeat them here (one-line form: `replace a vX => b vY`).
    local args=("-require=$m@$CERT_MANAGER_VERSION")
    while read -r from fv _ to tv; do args+=("-replace=$from@$fv=$to@$tv"); done < <(sed -n 's/^replace \(.*\)$/\1/p' "$gomod")
    go mod edit "${args[@]}"
    local ld="-s -w -X $m/pkg/util.AppVersion=$CERT_MANAGER_VERSION"
    for c in controller cainjector webhook ctl; do
      progress $cm_n "fetching the modules of cert-manager $c" bash -c 'go get "$1" >/dev/null 2>&1 || go get "$1"' _ "$m/cmd/$c@$CERT_MANAGER_VERSION"
    done
    local i=$((cm_n - 1))
    for c in controller cainjector webhook; do
      i=$((i + 1))
      progress "$i" "building cert-manager $c" go build -trimpath -ldflags "$ld" -o "$cm_dir/cert-manager-$c" "$m/cmd/$c"
    done
    progress $((cm_n + 3)) "building cmctl" go build -trimpath -ldflags "$ld" -o "$cm_dir/cert-manager-cmctl" "$m/cmd/ctl"
    # The CRDs ship as Helm templates whose only template parts are labels: drop those lines.
    for f in "$dir"/deploy/crds/crd-*.yaml; do echo "---"; sed -e '/{{/d' "$f"; done > "$cm_dir/cert-manager-crds.yaml"
  )
  rm -rf "$w"
}

# The Argo CD health-script runner (hack/lua-health: gopher-lua, as Argo CD embeds it), rebuilt when
# its source changes.
build_lua_health() {
  local key; key=$(cat "$here/lua-health/main.go" "$here/lua-health/go.sum" | sha256sum | cut -c1-12)
  lua_dir=$cache/bin/lua-health-$key
  if [ -x "$lua_dir/lua-health" ]; then log "lua-health cached"; return; fi
  log "building lua-health"
  mkdir -p "$lua_dir"
  (cd "$here/lua-health" && progress $lua_n "building lua-health" go build -trimpath -ldflags "-s -w" -o "$lua_dir/lua-health" .)
}

# The real node's cluster DNS (hack/node/node.sh runs it beside kubelet) and crictl (its cleanup and the
# tests that kill a container for real).
build_node_tools() {
  if version_ok "$coredns_dir/coredns" "$COREDNS_VERSION"; then log "coredns $COREDNS_VERSION cached"; else
    mkdir -p "$coredns_dir"
    GOBIN=$coredns_dir progress $node_n "building coredns" go install -trimpath -ldflags "-s -w" "github.com/coredns/coredns@$COREDNS_VERSION"
  fi
  if [ -x "$crictl_dir/crictl" ]; then log "crictl $CRICTL_VERSION cached"; else
    mkdir -p "$crictl_dir"
    GOBIN=$crictl_dir progress $node_n "building crictl" go install -trimpath -ldflags "-s -w -X sigs.k8s.io/cri-tools/pkg/version.Version=$CRICTL_VERSION" "sigs.k8s.io/cri-tools/cmd/crictl@$CRICTL_VERSION"
  fi
}

need() { for n in "$@"; do from_user "$n" >/dev/null || return 0; done; return 1; }
need "${k8s_components[@]}" kubectl && build_kubernetes
need etcd && build_etcd
need kwok kwokctl && build_kwok
need helm && build_helm
if [ "$binaries" = all ]; then
  build_lua_health
  need cert-manager-controller cert-manager-cainjector cert-manager-webhook cert-manager-cmctl && build_cert_manager
  need coredns crictl && build_node_tools
fi

mkdir -p "$out"
link() { local src; src=$(from_user "$1" || echo "$2/$1"); [ -e "$src" ] || { log "missing $1"; exit 1; }; ln -sfn "$src" "$out/$1"; }
for n in "${k8s_components[@]}" kubectl; do link "$n" "$k8s_dir"; done
link etcd "$etcd_dir"; link kwok "$kwok_dir"; link kwokctl "$kwok_dir"; link helm "$helm_dir"
if [ "$binaries" = all ]; then
  link coredns "$coredns_dir"; link crictl "$crictl_dir"; link lua-health "$lua_dir"
  for n in cert-manager-controller cert-manager-cainjector cert-manager-webhook cert-manager-cmctl cert-manager-crds.yaml; do link "$n" "$cm_dir"; done
fi
echo "$out"
