#!/usr/bin/env bash
# Restarts the e2e cluster's kube-apiserver alone (etcd and everything else keep running), for the
# chaos suite: e2e-apiserver.sh restart [SECONDS_DOWN]. kwokctl runs each component as a local process
# and records its pid in $KWOK_WORKDIR/clusters/NAME/pids/; the same command line is started again and
# its pid written back, so `kwokctl delete cluster` (e2e-down) still stops it. Returns once /readyz
# answers again.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
state=${PHASED_ROLLOUT_E2E_DIR:-$root/.e2e}
# shellcheck disable=SC1091
source <(sed -n "s/^\([A-Z0-9_]*\)='\(.*\)'$/\1='\2'/p" "$state/env")
action=${1:?restart}; down=${2:-3}
[ "$action" = restart ] || { echo "usage: $0 restart [SECONDS_DOWN]" >&2; exit 2; }
dir=$KWOK_WORKDIR/clusters/$E2E_CLUSTER
pidfile=$dir/pids/kube-apiserver.pid
pid=$(cat "$pidfile")
[ -r "/proc/$pid/cmdline" ] || { echo "kube-apiserver (pid $pid from $pidfile) is not running" >&2; exit 1; }
mapfile -d '' cmd < "/proc/$pid/cmdline"
cwd=$(readlink "/proc/$pid/cwd")
kill -TERM "$pid"
for _ in $(seq 1 150); do [ -d "/proc/$pid" ] || break; sleep 0.1; done
[ ! -d "/proc/$pid" ] || { echo "kube-apiserver (pid $pid) ignored SIGTERM for 15 s; killing" >&2; kill -KILL "$pid"; sleep 0.5; }
sleep "$down"
cd "$cwd"
setsid "${cmd[@]}" >> "$dir/logs/kube-apiserver.log" 2>&1 < /dev/null &
echo $! > "$pidfile"
for _ in $(seq 1 600); do
  "$KUBECTL" --kubeconfig "$KUBECONFIG" get --raw /readyz >/dev/null 2>&1 && exit 0
  sleep 0.1
done
echo "kube-apiserver did not become ready within 60 s after the restart" >&2
exit 1
