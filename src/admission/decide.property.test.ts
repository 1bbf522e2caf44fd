// Property tests of decide() (issue 8 §3): generated AdmissionRequests, random and mutated from real
// ones. A few thousand run in `npm test`; `npm run test:fuzz` raises the count
// (PHASED_ROLLOUT_FUZZ_RUNS).
import fc from 'fast-check';
import fastJsonPatch from 'fast-json-patch';
import { clone, CONTROLLER, mutate, request, statefulSet, toRequest } from '../../test/support/arbitraries.js';
import { KEYS, PREFIX } from '../annotations.js';
import { decide, ROW_STATUS_SUBRESOURCE, type Decision } from './decide.js';
import { isObject, type KubeObject } from './review.js';
import { annotationsOf } from './statefulset.js';

const RUNS = Number(process.env.PHASED_ROLLOUT_FUZZ_RUNS ?? 5000);
const opts = { controllerUsernames: new Set([CONTROLLER]) };

const patched = (obj: unknown, d: Decision) => (d.type === 'patch' ? fastJsonPatch.applyPatch(clone(obj), d.patch, true, false).newDocument : obj);

describe('decide() over generated requests', () => {
  it('never throws, answers with a reason when it denies, and keeps warnings short', () => {
    fc.assert(
      fc.property(request, (r) => {
        const d = decide(toRequest(r), opts);
        if (d.type === 'deny') {
          expect(d.message.startsWith('phased-rollout:')).toBe(true);
          expect([400, 403, 422]).toContain(d.code);
        } else for (const w of d.warnings) expect(w.length).toBeLessThanOrEqual(120);
      }),
      { numRuns: RUNS },
    );
  });

  it('every patch applies cleanly to the object and touches only spec.updateStrategy, and the status annotation it keeps', () => {
    fc.assert(
      fc.property(request, (r) => {
        const d = decide(toRequest(r), opts);
        if (d.type !== 'patch') return;
        expect(d.patch.length).toBeGreaterThan(0);
        for (const op of d.patch) expect(op.path.startsWith('/spec/updateStrategy') || op.path === '/metadata/annotations/phased-rollout.io~1status').toBe(true);
        expect(() => patched(r.pair.object, d)).not.toThrow();
      }),
      { numRuns: RUNS },
    );
  });

  it('is idempotent: re-admitting the patched object (reinvocation) sends no further patch and is not denied', () => {
    fc.assert(
      fc.property(request, (r) => {
        const req = toRequest(r);
        const d = decide(req, opts);
        if (d.type !== 'patch') return;
        const again = decide({ ...req, object: patched(r.pair.object, d) }, opts);
        expect(again.type).toBe('allow');
      }),
      { numRuns: RUNS },
    );
  });

  it('through statefulsets/status, a user changes no phased-rollout.io/ annotation, and is never patched', () => {
    const ours = (o: unknown) => JSON.stringify(Object.entries(annotationsOf(isObject(o) ? o : undefined)).filter(([k]) => k.startsWith(PREFIX)).sort());
    fc.assert(
      fc.property(request, (g) => {
        const r = toRequest({ ...g, operation: 'UPDATE', kind: 'StatefulSet', subResource: 'status', username: 'alice' });
        const d = decide(r, opts);
        expect(d.type).not.toBe('patch');
        if (!isObject(r.object) || !isObject(r.oldObject)) return expect(d.type).toBe('deny');
        expect(d.type === 'deny' && d.row === ROW_STATUS_SUBRESOURCE).toBe(ours(r.object) !== ours(r.oldObject));
      }),
      { numRuns: RUNS },
    );
  });

  it('never lets a user move the partition of an opted-in StatefulSet below where it was', () => {
    fc.assert(
      fc.property(statefulSet, fc.integer({ min: 0, max: 14 }), fc.constantFrom('UpdateOptions', undefined), (old, to, optionsKind) => {
        const ann = (old.metadata as { annotations: Record<string, string> }).annotations;
        if (ann[KEYS.enabled] !== 'true' || ann[KEYS.standardRollingUpdate] === 'true') return;
        const obj = mutate(old, ['spec', 'updateStrategy'], { type: 'RollingUpdate', rollingUpdate: { partition: to } }, false);
        const req = toRequest({ operation: 'UPDATE', pair: { object: obj, oldObject: old }, username: 'alice', optionsKind, kind: 'StatefulSet', subResource: undefined });
        const d = decide(req, opts);
        if (d.type === 'deny') return;
        const result = ((patched(obj, d) as KubeObject).spec as { updateStrategy: { rollingUpdate: { partition: number } } }).updateStrategy.rollingUpdate.partition;
        const before = ((old.spec as KubeObject).updateStrategy as { rollingUpdate?: { partition?: number } } | undefined)?.rollingUpdate?.partition ?? 0;
        expect(result).toBeGreaterThanOrEqual(before);
      }),
      { numRuns: RUNS },
    );
  });
});
