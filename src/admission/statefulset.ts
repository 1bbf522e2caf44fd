// Readers for the few StatefulSet fields admission looks at, applying the API server's defaults so a
// raw object (as in tests, or an object the server has not defaulted) reads like a stored one.
import { isObject, type KubeObject } from './review.js';

/** ShapeError says a field of the object has a type the API would never store. */
export class ShapeError extends Error {}

/** metadataOf returns `metadata` or an empty object. */
export function metadataOf(obj: KubeObject): KubeObject {
  return isObject(obj.metadata) ? obj.metadata : {};
}

/** annotationsOf returns the string annotations of an object (non-string values are dropped). */
export function annotationsOf(obj: KubeObject | undefined): Record<string, string> {
  const a = obj ? metadataOf(obj).annotations : undefined;
  if (!isObject(a)) return {};
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(a)) if (typeof v === 'string') out[k] = v;
  return out;
}

/** specOf returns `spec`, refusing a non-object one. */
export function specOf(obj: KubeObject): KubeObject {
  if (obj.spec === undefined) return {};
  if (!isObject(obj.spec)) throw new ShapeError('spec must be an object');
  return obj.spec;
}

function nonNegativeInt(v: unknown, field: string, dflt: number): number {
  if (v === undefined || v === null) return dflt;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw new ShapeError(`${field} must be a non-negative integer`);
  return v;
}

/** replicasOf returns spec.replicas, defaulting to 1 as the API server does. */
export function replicasOf(obj: KubeObject): number {
  return nonNegativeInt(specOf(obj).replicas, 'spec.replicas', 1);
}

/** strategyOf returns spec.updateStrategy, or undefined when absent. */
export function strategyOf(obj: KubeObject): KubeObject | undefined {
  const s = specOf(obj).updateStrategy;
  if (s === undefined || s === null) return undefined;
  if (!isObject(s)) throw new ShapeError('spec.updateStrategy must be an object');
  if (s.rollingUpdate !== undefined && s.rollingUpdate !== null && !isObject(s.rollingUpdate)) {
    throw new ShapeError('spec.updateStrategy.rollingUpdate must be an object');
  }
  return s;
}

/** strategyTypeOf returns the update strategy type; RollingUpdate is the API default. */
export function strategyTypeOf(obj: KubeObject): string {
  const t = strategyOf(obj)?.type;
  if (t === undefined || t === null) return 'RollingUpdate';
  if (typeof t !== 'string') throw new ShapeError('spec.updateStrategy.type must be a string');
  return t;
}

/** partitionOf returns the effective partition: 0 when absent, as the API server defaults it. */
export function partitionOf(obj: KubeObject): number {
  const ru = strategyOf(obj)?.rollingUpdate as KubeObject | undefined | null;
  return nonNegativeInt(ru?.partition, 'spec.updateStrategy.rollingUpdate.partition', 0);
}

/** templateOf returns spec.template as stored (undefined when absent). */
export function templateOf(obj: KubeObject): unknown {
  return specOf(obj).template;
}

/** hasDeletionTimestamp is true when the object is being deleted. */
export function hasDeletionTimestamp(obj: KubeObject): boolean {
  const ts = metadataOf(obj).deletionTimestamp;
  return ts !== undefined && ts !== null;
}

/** revisionPending is true when the stored status shows pods that do not run the update revision yet. */
export function revisionPending(obj: KubeObject): boolean {
  const st = isObject(obj.status) ? obj.status : {};
  if (typeof st.updateRevision === 'string' && typeof st.currentRevision === 'string' && st.updateRevision !== st.currentRevision) return true;
  return typeof st.updatedReplicas === 'number' && typeof st.replicas === 'number' && st.updatedReplicas < st.replicas;
}
