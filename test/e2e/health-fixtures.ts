// StatefulSet fixtures for the delivery tools' health checks (Argo CD's Lua, Flux's CEL): one object
// of 3 replicas, every field a health rule reads, and our status annotation as the controller writes it.
import { KEYS } from '../../src/annotations.js';

export interface Fixture {
  ann?: Record<string, string>;
  status?: Record<string, unknown>;
  partition?: number;
  generation?: number;
  type?: string;
}

/** sts is the fixture's StatefulSet: by default rolled out on db-1, observed, unpinned. */
export function sts(f: Fixture) {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'db', namespace: 'ns', generation: f.generation ?? 2, annotations: f.ann ?? {} },
    spec: { replicas: 3, updateStrategy: { type: f.type ?? 'RollingUpdate', ...(f.type === 'OnDelete' ? {} : { rollingUpdate: { partition: f.partition ?? 0 } }) } },
    status: { observedGeneration: 2, replicas: 3, readyReplicas: 3, currentReplicas: 3, updatedReplicas: 3, currentRevision: 'db-1', updateRevision: 'db-1', ...f.status },
  };
}

/** ON opts a fixture in. */
export const ON = { [KEYS.enabled]: 'true', [KEYS.query]: 'up' };
/** report is our status annotation in `phase`, about `revision` (db-2, the new one, unless told). */
export const report = (phase: string, o: { message?: string; revision?: string } = {}) =>
  JSON.stringify({ phase, revision: o.revision ?? 'db-2', partition: 3, replicas: 3, updated: 0, message: o.message ?? 'm', since: '2026-01-01T00:00:00Z' });
/** pinnedPending: a new revision db-2 applied and pinned, no pod on it yet. */
export const pinnedPending = { updatedReplicas: 0, updateRevision: 'db-2' };
