// What the benchmarks that run against the end-to-end cluster share: .e2e/env and kubectl.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { inNamespace, readAudit, type AuditMark } from '../test/support/audit-files.js';

/** ROOT is the repository root (bench files run from dist/bench). */
export const ROOT = resolve(import.meta.dirname, '..', '..');

/** e2eEnv reads .e2e/env written by hack/e2e-up.sh. */
export function e2eEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of readFileSync(resolve(ROOT, '.e2e', 'env'), 'utf8').split('\n')) {
    const m = /^([A-Z0-9_]+)='(.*)'$/.exec(line);
    if (m) env[m[1] ?? ''] = m[2] ?? '';
  }
  return env;
}

/** kubectl runs the harness's kubectl and returns stdout (throws on failure). */
export function kubectl(env: Record<string, string>, args: string[], input?: string): string {
  return execFileSync(env.KUBECTL ?? 'kubectl', args, { env: { ...process.env, KUBECONFIG: env.KUBECONFIG }, input, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
}

/** sleep waits. */
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** waitFor polls `check` every 200 ms. */
export async function waitFor(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

/** median of a list (the mean of the two middle values for an even count). */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/** AuditEvent is what the cluster benchmarks read of an API server audit event. */
export interface AuditEvent {
  verb: string;
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string };
  user: { username: string };
  requestReceivedTimestamp: string;
  responseStatus?: { code?: number };
  requestObject?: unknown;
}

/** CONTROLLER is the controller's user in the harness. */
export const CONTROLLER = 'system:serviceaccount:phased-rollout-system:phased-rollout-controller';

/** auditSince reads the audit events of one namespace written since `mark`, across the log's rotations. */
export function auditSince(file: string, mark: AuditMark, ns: string): AuditEvent[] {
  return readAudit<AuditEvent>(file, mark, inNamespace(ns));
}

/** lowersPartition: a JSON Patch of the partition (not a status write). */
export const lowersPartition = (e: AuditEvent) => Array.isArray(e.requestObject) && e.requestObject.some((op: { op?: string; path?: string }) => op.op === 'replace' && op.path === '/spec/updateStrategy/rollingUpdate/partition');

/**
 * reactions: for every partition step of each StatefulSet after its first, the rolled pod's last
 * status write (it became Ready) -> the controller's next partition patch, by API server timestamps (ms).
 */
export function reactions(events: AuditEvent[], names: string[], replicas: number): number[] {
  const out: number[] = [];
  for (const name of names) {
    const patches = events.filter((e) => e.user.username === CONTROLLER && e.verb === 'patch' && e.objectRef?.resource === 'statefulsets' && e.objectRef.name === name && !e.objectRef.subresource && (e.responseStatus?.code ?? 200) < 300 && lowersPartition(e));
    for (let ordinal = replicas - 1; ordinal >= 1; ordinal--) {
      const ready = events.filter((e) => e.objectRef?.resource === 'pods' && e.objectRef.subresource === 'status' && e.objectRef.name === `${name}-${ordinal}` && e.user.username !== CONTROLLER).pop();
      if (!ready) continue;
      const t0 = Date.parse(ready.requestReceivedTimestamp);
      const next = patches.find((p) => Date.parse(p.requestReceivedTimestamp) > t0);
      if (next) out.push(Date.parse(next.requestReceivedTimestamp) - t0);
    }
  }
  return out;
}
