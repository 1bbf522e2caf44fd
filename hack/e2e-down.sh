#!/usr/bin/env bash
# Stops exactly what e2e-up.sh started (by recorded pid) and deletes the kwok cluster. Safe to run twice.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
state=${PHASED_ROLLOUT_E2E_DIR:-$root/.e2e}
[ -d "$state" ] || { echo "[e2e-down] nothing to stop"; exit 0; }
# The real node first, while containerd still runs to stop its containers.
bash "$root/hack/real-node.sh" down
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
    # A component the chaos suite restarted (hack/e2e-apiserver.sh) is not one kwokctl knows: stop
    # whatever still runs a binary from this cluster's own bin/ folder (a path no other process has).
    left=()
    for p in /proc/[0-9]*; do
      # The braces silence the redirect's error too: the process may be gone since the glob.
      first=$( { tr '\0' '\n' < "$p/cmdline"; } 2>/dev/null | head -n 1)
      case $first in "${c}bin/"*) left+=("${p#/proc/}"); echo "[e2e-down] stopping leftover ${first##*/} (pid ${p#/proc/})" ;; esac
    done
    if [ ${#left[@]} -gt 0 ]; then
      kill -TERM "${left[@]}" 2>/dev/null
      for _ in $(seq 1 50); do alive=0; for p in "${left[@]}"; do [ -d "/proc/$p" ] && alive=1; done; [ $alive = 0 ] && break; sleep 0.1; done
      kill -KILL "${left[@]}" 2>/dev/null
    fi
  done
fi
rm -rf "$state/env" "$state/kwok" "$state/prometheus" "$state/pids"
echo "[e2e-down] stopped"
