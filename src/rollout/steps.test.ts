import { KEYS, parseAnnotations, type Step } from '../annotations.js';
import { nextPartition, stageCounts, stages, stepTarget } from './steps.js';
import type { PodView } from './types.js';

const steps = (s: string): Step[] => {
  const r = parseAnnotations({ [KEYS.enabled]: 'true', [KEYS.query]: 'up', [KEYS.steps]: s });
  if (!r.ok || !r.config?.steps) throw new Error(`bad steps ${s}`);
  return r.config.steps;
};

/** byIndex builds pods by index from revisions: 'n' = the new revision, 'o' = an old one. */
function byIndex(revs: string): Map<number, PodView> {
  return new Map([...revs].map((r, index) => [index, { name: `db-${index}`, uid: `u${index}`, index, revision: r === 'n' ? 'new' : 'old', ready: true, deleting: false }]));
}

describe('stageCounts', () => {
  it.each([
    ['1,10%,50%,100%', 10, [1, 5, 10]], // 10% of 10 is 1: adds no pod, skipped
    ['1,10%,50%,100%', 200, [1, 20, 100, 200]],
    ['1,10%,50%,100%', 3, [1, 2, 3]], // 50% of 3 rounds up to 2
    ['1,10%,50%,100%', 1, [1]],
    ['5,100%', 3, [3]], // a count above replicas is capped
    ['25%,50%,100%', 1000, [250, 500, 1000]],
    ['100%', 7, [7]],
    ['2,4,100%', 0, []],
    ['1,pause,50%,100%', 4, [1, 2, 4]],
  ])('%s at %i replicas -> %j', (s, replicas, want) => {
    expect(stageCounts(steps(s), replicas)).toEqual(want);
  });
});

describe('stages', () => {
  it.each([
    ['1,pause,50%,100%', 10, [[1, false], [5, true], [10, false]]],
    ['pause,100%', 3, [[3, true]]],
    // 10% of 10 is 1 pod, no more than stage 1: skipped, and its pause moves to the 50% stage.
    ['1,pause,10%,50%,100%', 10, [[1, false], [5, true], [10, false]]],
    ['1,pause,10%,50%,100%', 100, [[1, false], [10, true], [50, false], [100, false]]],
  ])('%s at %i replicas -> %j', (s, replicas, want) => {
    expect(stages(steps(s), replicas).map((x) => [x.count, x.pause])).toEqual(want);
  });
});

describe('stepTarget', () => {
  it('says when the next stage waits for promotion', () => {
    expect(stepTarget(9, 10, steps('1,pause,50%,100%'), byIndex('ooooooooon'), 'new')).toEqual({ to: 5, next: 8, stage: 2, stages: 3, pause: true });
    expect(stepTarget(10, 10, steps('1,pause,50%,100%'), byIndex('oooooooooo'), 'new')).toMatchObject({ stage: 1, pause: false });
  });

  it.each([
    // [steps, pods by index, partition p, expected to, stage, stages]
    [undefined, 'oooooooooo', 10, 9, 0, 0],
    ['1,50%,100%', 'oooooooooo', 10, 9, 1, 3],
    ['1,50%,100%', 'ooooooooon', 9, 5, 2, 3],
    ['1,50%,100%', 'ooooonnnnn', 5, 0, 3, 3],
    // Stages are cumulative: pods already on the revision below the partition count toward them.
    ['1,50%,100%', 'oooonnnnnn', 10, 0, 3, 3],
    ['1,50%,100%', 'oooooooonn', 10, 5, 2, 3],
    // Without steps the one-pod step skips updated pods too.
    [undefined, 'onnnnnnnnn', 10, 0, 0, 0],
  ])('steps %s, pods %s, partition %i -> %i (stage %i of %i)', (s, revs, p, to, stage, stages) => {
    expect(stepTarget(p, revs.length, s === undefined ? undefined : steps(s), byIndex(revs), 'new')).toMatchObject({ to, stage, stages, pause: false });
  });

  it('always releases the next pod still to roll, and never goes below 0', () => {
    for (let p = 1; p <= 10; p++) {
      const pods = byIndex('o'.repeat(p) + 'n'.repeat(10 - p));
      const t = stepTarget(p, 10, steps('1,10%,50%,100%'), pods, 'new');
      expect(t.to).toBeLessThanOrEqual(nextPartition(p, pods, 'new'));
      expect(t.to).toBeGreaterThanOrEqual(0);
    }
  });
});
