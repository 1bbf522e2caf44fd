#!/usr/bin/env python3
# A prepare hook for a Patroni cluster (docs/hooks.md, docs/postgres.md): run by phased-rollout right
# before the pod PHASED_ROLLOUT_POD is replaced. When that pod leads, it hands the primary role to a
# replica through Patroni's REST API (a planned switchover: the primary stops only after the candidate
# has caught up), and waits until the candidate leads and the old primary follows it. When the pod does
# not lead, it does nothing. Run twice, the second run finds the pod no longer leads: it is idempotent.
#
# The candidate is a replica the primary sees streaming, with a known lag within MAX_LAG_BYTES, preferring one already on
# the revision the pod goes to (PHASED_ROLLOUT_UPDATED_PODS), then the lowest ordinal (the pod a rollout
# or a rollback replaces last). No candidate: the hook fails and the step waits (a failed check), rather
# than let the primary's pod go and Patroni fail over.
#
# Environment: PHASED_ROLLOUT_NAMESPACE, _POD, _UPDATED_PODS (set by phased-rollout); PATRONI_MEMBERS
# (host:port of Patroni's REST API of any member, e.g. the headless Service), PATRONI_RESTAPI_USERNAME and
# _PASSWORD (the REST API's write credentials). Needs only the network to the members: no Kubernetes
# rights. Python 3 standard library only (the Patroni image has it).
import base64
import json
import os
import sys
import time
import urllib.error
import urllib.request

POD = os.environ["PHASED_ROLLOUT_POD"]
UPDATED = [p for p in os.environ.get("PHASED_ROLLOUT_UPDATED_PODS", "").split(",") if p]
MEMBERS = os.environ["PATRONI_MEMBERS"]
AUTH = "Basic " + base64.b64encode(f"{os.environ['PATRONI_RESTAPI_USERNAME']}:{os.environ['PATRONI_RESTAPI_PASSWORD']}".encode()).decode()
MAX_LAG_BYTES = int(os.environ.get("MAX_LAG_BYTES", str(1024 * 1024)))
WAIT_SECONDS = int(os.environ.get("WAIT_SECONDS", "90"))


def say(msg):
    print(f"switchover {POD}: {msg}", flush=True)


def call(url, body=None, timeout=10):
    req = urllib.request.Request(url, data=None if body is None else json.dumps(body).encode(), method="GET" if body is None else "POST")
    if body is not None:
        req.add_header("Content-Type", "application/json")
        req.add_header("Authorization", AUTH)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def cluster():
    """The cluster as Patroni's REST API shows it (any member answers for all), retried for a while."""
    last = None
    for _ in range(20):
        try:
            status, text = call(f"http://{MEMBERS}/cluster")
            if status == 200:
                return json.loads(text)
            last = f"HTTP {status}: {text[:200]}"
        except (OSError, ValueError) as e:
            last = str(e)
        time.sleep(1)
    raise SystemExit(f"switchover {POD}: cannot read the cluster from {MEMBERS}: {last}")


def leader_of(c):
    return next((m for m in c.get("members", []) if m.get("role") in ("leader", "master", "primary")), None)


def ordinal(name):
    tail = name.rsplit("-", 1)[-1]
    return int(tail) if tail.isdigit() else 1 << 30


def main():
    c = cluster()
    leader = leader_of(c)
    if leader is None:
        # No primary now: nothing to hand over. The gates judge the cluster; the step is theirs.
        say("the cluster has no leader now; nothing to hand over")
        return 0
    if leader["name"] != POD:
        say(f"{leader['name']} leads, not this pod; nothing to do")
        return 0
    # Streaming, as the primary itself sees it (pg_stat_replication): a replica that runs but does not
    # stream (still starting, a wrong credential) may show a small lag and still miss recent commits.
    api = leader.get("api_url", f"http://{leader['host']}:8008/patroni").rsplit("/", 1)[0]
    status, text = call(f"{api}/patroni")
    streaming = {r.get("application_name") for r in (json.loads(text).get("replication") or []) if r.get("state") == "streaming"} if status == 200 else set()
    replicas = [m for m in c["members"] if m["name"] != POD and m.get("role") in ("replica", "sync_standby") and m.get("state") in ("running", "streaming")]
    fit = [m for m in replicas if isinstance(m.get("lag"), int) and m["lag"] <= MAX_LAG_BYTES and m["name"] in streaming]
    if not fit:
        seen = ", ".join(f"{m['name']} {m.get('role')} {m.get('state')} lag {m.get('lag')}" for m in c["members"] if m["name"] != POD) or "none"
        say(f"no replica to hand the primary role to (streaming, lag <= {MAX_LAG_BYTES} bytes); streaming: {sorted(streaming) or 'none'}; members: {seen}")
        return 1
    fit.sort(key=lambda m: (m["name"] not in UPDATED, ordinal(m["name"]), m["lag"]))
    candidate = fit[0]["name"]
    say(f"leads; switching over to {candidate} (on the new revision: {candidate in UPDATED}; lag {fit[0]['lag']} bytes)")
    status, text = call(f"{api}/switchover", {"leader": POD, "candidate": candidate}, timeout=60)
    if status != 200:
        say(f"Patroni refused the switchover: HTTP {status}: {text.strip()[:300]}")
        return 1
    say(text.strip())
    # Done when the candidate leads and the old primary runs again as its replica.
    deadline = time.time() + WAIT_SECONDS
    while time.time() < deadline:
        c = cluster()
        lead = leader_of(c)
        old = next((m for m in c.get("members", []) if m["name"] == POD), None)
        if lead and lead["name"] == candidate and old and old.get("role") in ("replica", "sync_standby") and old.get("state") in ("running", "streaming"):
            say(f"{candidate} leads; {POD} follows it")
            return 0
        time.sleep(1)
    say(f"{candidate} did not lead with {POD} following within {WAIT_SECONDS}s")
    return 1


if __name__ == "__main__":
    sys.exit(main())
