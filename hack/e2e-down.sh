#!/usr/bin/env bash
# Stops exactly what e2e-up.sh started (by recorded pid) and deletes the kwok cluster. Safe to run twice.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
state=${PHASED_ROLLOUT_E2E_DIR:-$root/.e2e}
[ -d "$state" ] || { echo "[e2e-down] nothing to stop"; exit 0; }
for f in "$state"/pids/*.pid; do
  [ -e "$f" ] || continue
  "$root/hack/e2e-proc.sh" stop "$(basename "$f" .pid)"
done
if [ -d "$state/kwok/clusters" ]; then
  source "$root/hack/versions.env"
  kwokctl=$(ls "${PHASED_ROLLOUT_CACHE:-$HOME/.cache/phased-rollout}"/bin/assets-*/kwokctl 2>/dev/null | head -n 1)
  for c in "$state"/kwok/clusters/*/; do
    [ -d "$c" ] || continue
    # kwokctl stops the components by the pid files it wrote itself.
    KWOK_WORKDIR=$state/kwok "$kwokctl" delete cluster --name "$(basename "$c")" >> "$state/logs/kwokctl.log" 2>&1 || true
  done
fi
rm -rf "$state/env" "$state/kwok" "$state/prometheus" "$state/pids"
echo "[e2e-down] stopped"
