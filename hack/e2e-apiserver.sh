#!/usr/bin/env bash
# Restarts the e2e cluster's kube-apiserver (etcd keeps the data), for the chaos suite:
#   e2e-apiserver.sh restart [SECONDS_DOWN]
# kwokctl runs each component as a local process and records its pid in
# $KWOK_WORKDIR/clusters/NAME/pids/; a component is started again with the command line it had, and its
# new pid written back, so `kwokctl delete cluster` (e2e-down) still stops it.
# On a real control plane kube-controller-manager and kube-scheduler exit when they cannot renew their
# leader Lease through a long API server outage, and the kubelet starts them again. kwokctl supervises
# nothing, so this script does what the kubelet would: it restarts either one that exited. It returns
# once /readyz answers and both run again.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
state=${PHASED_ROLLOUT_E2E_DIR:-$root/.e2e}
eval "$(sed -n "s/^\([A-Z0-9_]*\)='\(.*\)'$/\1='\2'/p" "$state/env")"
action=${1:?restart}; down=${2:-3}
[ "$action" = restart ] || { echo "usage: $0 restart [SECONDS_DOWN]" >&2; exit 2; }
dir=$KWOK_WORKDIR/clusters/$E2E_CLUSTER
components=(kube-apiserver kube-controller-manager kube-scheduler)

# pidof_component C: the pid of this cluster's C, found by its binary path, which lies inside this
# cluster's own directory (so no other process can match; a pid file can be stale, a pid reused).
# Bash builtins only: the scan runs often while the restart waits, and a tr/head/awk per process of
# the machine (hundreds) took seconds a scan under load, minutes in all (bench:soak timed out on it).
pidof_component() {
  local c=$1 p first
  for p in /proc/[0-9]*; do
    # The process may be gone between the glob and the read: the braces silence the redirect's error too.
    { IFS= read -r -d '' first < "$p/cmdline"; } 2>/dev/null || continue
    if [ "$first" = "$dir/bin/$c" ] && ! zombie "${p#/proc/}"; then echo "${p#/proc/}"; return 0; fi
  done
  return 1
}
# zombie PID: the process has exited and is not reaped (its state, the field after "(comm)", is Z).
zombie() {
  local stat
  { read -r stat < "/proc/$1/stat"; } 2>/dev/null || return 1
  stat=${stat##*) }
  [ "${stat%% *}" = Z ]
}
declare -A cmdline cwd
for c in "${components[@]}"; do
  pid=$(pidof_component "$c") || { echo "$c of $dir is not running" >&2; exit 1; }
  cmdline[$c]=$(tr '\0' '\n' < "/proc/$pid/cmdline")
  cwd[$c]=$(readlink "/proc/$pid/cwd")
done
# start C: the recorded command line again, detached (setsid), logging where kwokctl logs it; the pid
# file gets the new process's pid, looked up by its binary path.
start() {
  local c=$1 args
  mapfile -t args <<< "${cmdline[$c]}"
  (cd "${cwd[$c]}" && exec setsid "${args[@]}" >> "$dir/logs/$c.log" 2>&1 < /dev/null) &
  for _ in $(seq 1 50); do pidof_component "$c" > "$dir/pids/$c.pid" && return 0; sleep 0.1; done
  echo "$c did not start" >&2; return 1
}
running() { pidof_component "$1" > /dev/null; }
# exited PID: the process is gone, or a zombie. kwokctl's components are orphans; where the pid 1 of
# a container reaps nothing (CI runs in one), an exited server stays a zombie forever, and waiting for
# its /proc entry to vanish would wait out the drain and then fail.
exited() {
  [ -d "/proc/$1" ] || return 0
  zombie "$1"
}

pid=$(pidof_component kube-apiserver)
kill -TERM "$pid"
for _ in $(seq 1 200); do exited "$pid" && break; sleep 0.1; done
exited "$pid" || { echo "kube-apiserver (pid $pid) still draining after 20 s; killing it" >&2; kill -KILL "$pid"; sleep 0.5; }
sleep "$down"
start kube-apiserver
ready=
for _ in $(seq 1 600); do
  if "$KUBECTL" --kubeconfig "$KUBECONFIG" get --raw /readyz >/dev/null 2>&1; then ready=1; break; fi
  sleep 0.1
done
[ -n "$ready" ] || { echo "kube-apiserver did not become ready within 60 s after the restart" >&2; exit 1; }
# Whoever lost its Lease exits within its renew deadline of the outage's start; give them the time.
for _ in $(seq 1 50); do
  for c in kube-controller-manager kube-scheduler; do
    running "$c" || { echo "$c exited during the outage (lost its leader Lease); restarting it" >&2; start "$c"; }
  done
  sleep 0.2
done
