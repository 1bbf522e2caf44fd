// Generators of AdmissionRequests for property tests and fuzzing: realistic StatefulSets with knobs,
// realistic UPDATE pairs, and the same mutated at random paths with random JSON.
import fc from 'fast-check';
import { KEYS } from '../../src/annotations.js';
import type { AdmissionRequest, KubeObject } from '../../src/admission/review.js';

/** CONTROLLER is the controller's username in generated requests. */
export const CONTROLLER = 'system:serviceaccount:phased-rollout-system:phased-rollout-controller';

/** A realistic StatefulSet with knobs a generator turns. */
export const statefulSet = fc
  .record({
    enabled: fc.constantFrom(undefined, 'true', 'false', 'yes', ''),
    paused: fc.constantFrom(undefined, 'true', 'false'),
    bypass: fc.constantFrom(undefined, 'true', 'false'),
    period: fc.constantFrom(undefined, '1', '0', 'x', '86401'),
    status: fc.constantFrom(undefined, '{"phase":"Checking"}', '{"phase":"Failed"}'),
    replicas: fc.option(fc.integer({ min: 0, max: 12 }), { nil: undefined }),
    image: fc.constantFrom('app:1', 'app:2', 'app:3'),
    strategy: fc.constantFrom<unknown>(undefined, { type: 'RollingUpdate' }, { type: 'OnDelete' }, { rollingUpdate: {} }),
    partition: fc.option(fc.integer({ min: 0, max: 14 }), { nil: undefined }),
  })
  .map((k) => {
    const annotations: Record<string, string> = {};
    if (k.enabled !== undefined) annotations[KEYS.enabled] = k.enabled;
    if (k.enabled !== undefined) annotations[KEYS.query] = 'up';
    if (k.paused) annotations[KEYS.paused] = k.paused;
    if (k.bypass) annotations[KEYS.standardRollingUpdate] = k.bypass;
    if (k.period) annotations[KEYS.periodSeconds] = k.period;
    if (k.status) annotations[KEYS.status] = k.status;
    const spec: KubeObject = { selector: { matchLabels: { app: 'db' } }, template: { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'db', image: k.image }] } } };
    if (k.replicas !== undefined) spec.replicas = k.replicas;
    if (k.strategy !== undefined) spec.updateStrategy = clone(k.strategy);
    if (k.partition !== undefined) {
      const s = (spec.updateStrategy ?? { type: 'RollingUpdate' }) as KubeObject;
      s.rollingUpdate = { ...((s.rollingUpdate as KubeObject | undefined) ?? {}), partition: k.partition };
      spec.updateStrategy = s;
    }
    return { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'db', namespace: 'prod', annotations }, spec } as KubeObject;
  });

// JSON clones, not structuredClone: under jest's VM, structuredClone makes objects of another realm,
// whose prototypes differ from the test's own (isDeepStrictEqual would then see a changed template).
export const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

/** garbage replaces a value somewhere in an object by anything JSON can hold (or removes it). */
export function mutate(obj: KubeObject, path: string[], value: unknown, remove: boolean): KubeObject {
  const copy = clone(obj);
  let at: unknown = copy;
  for (const key of path.slice(0, -1)) {
    if (typeof at !== 'object' || at === null) return copy;
    at = (at as Record<string, unknown>)[key];
  }
  const last = path[path.length - 1];
  if (typeof at === 'object' && at !== null && last !== undefined) {
    if (remove) delete (at as Record<string, unknown>)[last];
    else (at as Record<string, unknown>)[last] = value;
  }
  return copy;
}
const PATHS = [['spec'], ['spec', 'replicas'], ['spec', 'updateStrategy'], ['spec', 'updateStrategy', 'type'], ['spec', 'updateStrategy', 'rollingUpdate'], ['spec', 'updateStrategy', 'rollingUpdate', 'partition'], ['spec', 'template'], ['metadata'], ['metadata', 'annotations'], ['metadata', 'annotations', KEYS.enabled], ['metadata', 'annotations', KEYS.status], ['metadata', 'deletionTimestamp']];
const garbage = fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.string({ unit: 'grapheme', maxLength: 40 }), fc.constantFrom(-1, 1.5, 1e308, null, [], {}, '3', true));
const mutated = fc.tuple(statefulSet, fc.constantFrom(...PATHS), garbage, fc.boolean(), fc.boolean()).map(([o, p, v, remove, apply]) => (apply ? mutate(o, p, v, remove) : o));

/** update is a realistic UPDATE: the new object is the old one with a scale, a new image, a partition. */
const update = fc
  .tuple(statefulSet, fc.option(fc.integer({ min: 0, max: 12 }), { nil: undefined }), fc.option(fc.constantFrom('app:1', 'app:9'), { nil: undefined }), fc.option(fc.integer({ min: 0, max: 14 }), { nil: undefined }))
  .map(([old, replicas, image, partition]) => {
    let obj = replicas === undefined ? old : mutate(old, ['spec', 'replicas'], replicas, false);
    if (image) obj = mutate(obj, ['spec', 'template'], { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'db', image }] } }, false);
    if (partition !== undefined) obj = mutate(obj, ['spec', 'updateStrategy'], { type: 'RollingUpdate', rollingUpdate: { partition } }, false);
    return { object: obj, oldObject: old };
  });

const anyPair = fc.record({
  object: fc.oneof({ weight: 8, arbitrary: mutated }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) }),
  oldObject: fc.oneof({ weight: 8, arbitrary: mutated }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) }),
});

export const request = fc.record({
  operation: fc.constantFrom('CREATE', 'UPDATE', 'UPDATE', 'UPDATE', 'DELETE', 'CONNECT', 'PATCH'),
  pair: fc.oneof(anyPair, update),
  username: fc.constantFrom('alice', CONTROLLER, undefined),
  optionsKind: fc.constantFrom('UpdateOptions', 'CreateOptions', undefined),
  kind: fc.constantFrom('StatefulSet', 'StatefulSet', 'StatefulSet', 'Deployment'),
  subResource: fc.constantFrom(undefined, undefined, undefined, 'scale', 'status'),
});

export type Generated = typeof request extends fc.Arbitrary<infer T> ? T : never;

/** toRequest turns a generated value into an AdmissionRequest. */
export function toRequest(g: Generated): AdmissionRequest {
  const r = { ...g, ...g.pair };
  return {
    uid: 'u',
    kind: { group: 'apps', version: 'v1', kind: r.kind },
    name: 'db',
    namespace: 'prod',
    operation: r.operation,
    ...(r.subResource ? { subResource: r.subResource } : {}),
    userInfo: r.username === undefined ? {} : { username: r.username },
    object: r.object,
    oldObject: r.operation === 'CREATE' ? undefined : r.oldObject,
    ...(r.optionsKind ? { options: { kind: r.optionsKind } } : {}),
  };
}

