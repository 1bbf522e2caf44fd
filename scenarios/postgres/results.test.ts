import { resultLine, unmet, type Seen } from './results.js';

const ok: Seen = { lost: 0, onNew: 3, members: 3, failovers: 0, switchovers: 1, maxOnNew: 3, violations: [], gatedSteps: 3 };

describe('resultLine', () => {
  it('is the etcd form with failovers and switchovers', () => {
    expect(resultLine('upgrade', 'ours', { acked: 900, lost: 0, failed: 2, unavailableS: 2.04, p99Ms: 41.6 }, 3, 3, 0, 1)).toBe('RESULT scenario=upgrade system=ours acked=900 lost=0 failed=2 unavailable_s=2.0 p99_ms=42 members_on_new=3/3 failovers=0 switchovers=1');
  });
});

describe('unmet', () => {
  it.each([
    ['upgrade', ok, []],
    ['upgrade', { ...ok, lost: 4 }, ['lost 4 acknowledged commits (want 0)']],
    ['upgrade', { ...ok, failovers: 1 }, [expect.stringMatching(/^1 unplanned failovers/)]],
    ['upgrade', { ...ok, switchovers: 2 }, ['2 switchovers (want at most one per rollout)']],
    ['upgrade', { ...ok, onNew: 2, gatedSteps: 2 }, ['2/3 members on the new template (want all)', '2 gated partition steps in the audit log (want 3)']],
    ['bad-release', { ...ok, onNew: 0, maxOnNew: 1, switchovers: 0 }, []],
    ['bad-release', { ...ok, onNew: 0, maxOnNew: 2 }, ['2 members on the bad release at once (want at most 1)']],
    ['bad-release', { ...ok, onNew: 1, maxOnNew: 1, violations: ['stepped on a failing gate'] }, ['safety checker: stepped on a failing gate', '1 members still on the bad release (want 0: rolled back)']],
  ] as const)('%s %j', (scenario, seen, want) => expect(unmet(scenario, seen)).toEqual(want));
});
