// The gate for an etcd cluster, written as a user would write it from etcd's own metrics (the recipe of
// docs/etcd.md; examples/etcd-statefulset.yaml carries the same annotations). Each condition is a named
// query, so the status and the CheckFailed Events say which one held the rollout.
//
// The members are selected by the labels Prometheus gives their targets: `namespace` and the pods'
// `app` label (see docs/etcd.md for the scrape configuration). `{{namespace}}` is filled in by the
// controller.

/** QUERIES are the recipe's conditions, by name. */
export const QUERIES: Record<string, string> = {
  // Every one of the three members is scraped and follows a leader: a member that is down, restarting
  // or outside the quorum (no leader) makes the count fall below 3. This is also the member count.
  'members-with-leader': 'count(etcd_server_has_leader{namespace="{{namespace}}",app="etcd"} == 1) == 3',
  // No member is a learner (a member added as a learner and not promoted yet does not vote).
  'no-learners': 'max(etcd_server_is_learner{namespace="{{namespace}}",app="etcd"}) == 0',
  // No proposal failed in the last 30 s: failures come with lost leaders and elections.
  'proposals-ok': 'sum(increase(etcd_server_proposals_failed_total{namespace="{{namespace}}",app="etcd"}[30s])) == 0',
  // Caught up: every member has applied nearly as many entries as the most advanced one. A member that
  // came back is behind until it has replayed what it missed; a member of another cluster never catches up.
  'caught-up': '(max(etcd_server_proposals_applied_total{namespace="{{namespace}}",app="etcd"}) - min(etcd_server_proposals_applied_total{namespace="{{namespace}}",app="etcd"})) < 200',
};

/**
 * TIMING: checks every 5 s, three passes in a row after 15 s of calm; twelve failures in a row (a minute)
 * roll the release back. A good step's leader election can fail proposals for up to the 30 s window,
 * which is well under a minute of failures.
 */
export const TIMING: Record<string, string> = {
  'phased-rollout.io/initial-delay-seconds': '15',
  'phased-rollout.io/period-seconds': '5',
  'phased-rollout.io/success-threshold': '3',
  'phased-rollout.io/failure-threshold': '12',
  'phased-rollout.io/on-failure': 'rollback',
};

/** gateAnnotations are the opt-in, the recipe's queries and its timing. */
export function gateAnnotations(): Record<string, string> {
  const out: Record<string, string> = { 'phased-rollout.io/enabled': 'true' };
  const [first, ...rest] = Object.entries(QUERIES);
  if (first) out['phased-rollout.io/query'] = first[1];
  for (const [name, q] of rest) out[`phased-rollout.io/query.${name}`] = q;
  return { ...out, ...TIMING };
}

/** filled is a query with the placeholders the controller fills in for this namespace. */
export const filled = (query: string, namespace: string) => query.replaceAll('{{namespace}}', namespace);

/**
 * gatePolicy is the same recipe as a RolloutGate (examples/etcd/rolloutgate.yaml): the queries and the
 * timing, shared by every etcd StatefulSet of a namespace that names it in phased-rollout.io/gates.
 * `on-failure` stays on the StatefulSet: what to do on failure is the workload's call.
 */
export function gatePolicy(): { queries: { name: string; query: string }[]; initialDelaySeconds: number; periodSeconds: number; successThreshold: number; failureThreshold: number } {
  return {
    queries: Object.entries(QUERIES).map(([name, query]) => ({ name, query })),
    initialDelaySeconds: Number(TIMING['phased-rollout.io/initial-delay-seconds']),
    periodSeconds: Number(TIMING['phased-rollout.io/period-seconds']),
    successThreshold: Number(TIMING['phased-rollout.io/success-threshold']),
    failureThreshold: Number(TIMING['phased-rollout.io/failure-threshold']),
  };
}
