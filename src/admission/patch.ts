// Builds the JSON Patch that pins the partition by mutating a copy and diffing, never by writing paths
// by hand (an absent `rollingUpdate` must become an `add` of the whole block; an equal value no patch).
import fastJsonPatch, { type Operation } from 'fast-json-patch';
import { isObject, type KubeObject } from './review.js';
import { ShapeError, strategyOf } from './statefulset.js';

const { compare } = fastJsonPatch;

/**
 * pinPartitionPatch returns the operations that make `obj` use RollingUpdate with the given partition,
 * keeping every other field of updateStrategy (maxUnavailable...). Only `spec.updateStrategy` is diffed,
 * so the patch cannot touch anything else and diffing stays cheap for very large objects.
 */
export function pinPartitionPatch(obj: KubeObject, partition: number): Operation[] {
  // The API server defaults `spec` before admission, so only a hand-made review lacks it: refuse it
  // (decide() turns a ShapeError into a 400 denial) rather than send a patch that cannot apply.
  if (!isObject(obj.spec)) throw new ShapeError('spec is missing');
  const before = strategyOf(obj);
  // A shallow copy is a full one here: the only nested object, rollingUpdate, is copied just below.
  const after: KubeObject = { ...(before ?? {}) };
  after.type = 'RollingUpdate';
  after.rollingUpdate = { ...(isObject(after.rollingUpdate) ? after.rollingUpdate : {}), partition };
  const original = before === undefined ? { spec: {} } : { spec: { updateStrategy: before } };
  return compare(original, { spec: { updateStrategy: after } });
}
