#!/usr/bin/env node
// Where the time of a rollout step goes, from the API server's audit log (after bench:rollout): for
// each pod of a StatefulSet, its last Ready status write -> the controller's partition patch (ours) ->
// the creation of the next pod (the StatefulSet controller). For a plain StatefulSet, Ready -> next pod.
// Medians per quarter of the pod indices show whether anything grows with the StatefulSet's size.
// Reproduce: node dist/bench/step-breakdown.js NAMESPACE STATEFULSET...   (the namespace may be deleted)
import { LOG_START } from '../test/support/audit-files.js';
import { auditSince, e2eEnv, lowersPartition, median, type AuditEvent } from './e2e-env.js';

const [ns, ...names] = process.argv.slice(2);
if (!ns || names.length === 0) {
  console.error('usage: step-breakdown NAMESPACE STATEFULSET...');
  process.exit(2);
}
const env = e2eEnv();
const events = auditSince(env.AUDIT_LOG ?? '', LOG_START, ns);
const at = (e: AuditEvent & { stageTimestamp?: string }) => Date.parse(e.stageTimestamp ?? e.requestReceivedTimestamp);
type Obj = { metadata?: { name?: string }; status?: { conditions?: { type: string; status: string }[] } };

for (const name of names) {
  const own = (pod: string | undefined) => pod !== undefined && pod.slice(0, pod.lastIndexOf('-')) === name;
  const ready = new Map<string, number>();
  const created = new Map<string, number>();
  const patches: number[] = [];
  // The StatefulSet controller's status writes, and how many of them lost a race (409 Conflict) with
  // another write of the StatefulSet, such as our partition patch; each such loss costs it a re-read.
  let statusWrites = 0, statusConflicts = 0;
  for (const e of events) {
    if (e.objectRef?.resource === 'statefulsets' && e.objectRef.name === name && e.objectRef.subresource === 'status' && e.verb === 'update') {
      statusWrites++;
      if (e.responseStatus?.code === 409) statusConflicts++;
    }
    const body = e.requestObject as Obj | undefined;
    if (e.objectRef?.resource === 'pods' && e.verb === 'create' && !e.objectRef.subresource && own(body?.metadata?.name)) created.set(body?.metadata?.name ?? '', at(e));
    if (e.objectRef?.resource === 'pods' && e.objectRef.subresource === 'status' && own(e.objectRef.name) && body?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) ready.set(e.objectRef.name ?? '', at(e));
    if (e.objectRef?.resource === 'statefulsets' && e.objectRef.name === name && e.verb === 'patch' && lowersPartition(e)) patches.push(Date.parse(e.requestReceivedTimestamp));
  }
  const n = Math.max(...[...created.keys()].map((k) => Number(k.slice(k.lastIndexOf('-') + 1)))) + 1;
  const rows: { i: number; total: number; ours?: number; theirs?: number }[] = [];
  for (let i = n - 1; i >= 1; i--) {
    const r = ready.get(`${name}-${i}`);
    const c = created.get(`${name}-${i - 1}`);
    if (r === undefined || c === undefined || c < r) continue;
    const p = patches.find((t) => t > r && t < c);
    rows.push({ i, total: c - r, ...(p !== undefined ? { ours: p - r, theirs: c - p } : {}) });
  }
  const fmt = (xs: (number | undefined)[]) => {
    const v = xs.filter((x): x is number => x !== undefined);
    return v.length ? `${median(v).toFixed(1)} ms` : '-';
  };
  for (const [lo, hi] of [[Math.floor((n * 3) / 4), n], [Math.floor(n / 4), Math.floor((n * 3) / 4)], [0, Math.floor(n / 4)]] as const) {
    const sel = rows.filter((r) => r.i >= lo && r.i < hi);
    console.log(`${name} pods ${lo}-${hi - 1}: Ready -> next pod created ${fmt(sel.map((r) => r.total))}; Ready -> partition patch ${fmt(sel.map((r) => r.ours))}; patch -> next pod created ${fmt(sel.map((r) => r.theirs))} (n=${sel.length})`);
  }
  console.log(`${name}: StatefulSet status updates ${statusWrites}, of which 409 Conflict ${statusConflicts}`);
}
