#!/usr/bin/env bash
# Starts and stops the harness's own processes by the pid it recorded, never by name.
#   e2e-proc.sh start NAME      runs .e2e/cmd/NAME detached, logs to .e2e/logs/NAME.log, pid in .e2e/pids/NAME.pid
#   e2e-proc.sh stop NAME       SIGTERM, up to 10 s, then SIGKILL; a no-op when not running
#   e2e-proc.sh kill NAME       SIGKILL at once (chaos tests); a no-op when not running
#   e2e-proc.sh running NAME    exit 0 when it runs
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
state=${PHASED_ROLLOUT_E2E_DIR:-$root/.e2e}
action=${1:?start|stop|running}; name=${2:?name}
pidfile=$state/pids/$name.pid

# starttime PID: the kernel's start time of a process (field 22 of /proc/PID/stat), empty when gone.
starttime() { awk '{print $22}' "/proc/$1/stat" 2>/dev/null || true; }
# alive: the recorded pid still runs and is the process we started (same start time: pids are reused).
alive() {
  [ -f "$pidfile" ] || return 1
  local pid st; read -r pid st < "$pidfile" || return 1
  [ -n "$pid" ] && [ "$(starttime "$pid")" = "$st" ] && [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != "Z" ]
}
pid_of() { awk '{print $1}' "$pidfile"; }

case $action in
  start)
    mkdir -p "$state/pids" "$state/logs"
    # One start at a time per name: two callers at once (benchmarks' sentinels waking together) would
    # otherwise both see it stopped and start two, only one of them recorded.
    exec 9>"$state/pids/$name.lock"
    flock 9
    if alive; then echo "$name already running"; exit 0; fi
    # setsid: the process outlives the npm script that started it and gets no terminal signals.
    setsid bash -c "exec $(cat "$state/cmd/$name")" >> "$state/logs/$name.log" 2>&1 < /dev/null 9>&- &
    pid=$!
    echo "$pid $(starttime "$pid")" > "$pidfile"
    ;;
  stop)
    [ -f "$pidfile" ] || exit 0
    pid=$(pid_of)
    if alive; then
      kill -TERM "$pid" 2>/dev/null || true
      for _ in $(seq 1 100); do alive || break; sleep 0.1; done
      if alive; then echo "$name (pid $pid) ignored SIGTERM for 10 s; killing" >&2; kill -KILL "$pid" 2>/dev/null || true; fi
    fi
    rm -f "$pidfile"
    ;;
  kill)
    [ -f "$pidfile" ] || exit 0
    if alive; then kill -KILL "$(pid_of)" 2>/dev/null || true; for _ in $(seq 1 50); do alive || break; sleep 0.02; done; fi
    rm -f "$pidfile"
    ;;
  running)
    alive
    ;;
  *) echo "usage: $0 start|stop|kill|running NAME" >&2; exit 2 ;;
esac
