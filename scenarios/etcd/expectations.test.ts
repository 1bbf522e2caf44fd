import { describe, expect, it } from '@jest/globals';
import { ELECTION_S, unmet, type Seen } from './expectations.js';

const ok: Seen = { lost: 0, unavailableS: 1, onNew: 3, members: 3, details: { max_down: 1, max_on_new: 1, steps_while_b_down: 0, controller_kills: 3 }, violations: [], gatedSteps: 3 };
const bad: Seen = { ...ok, onNew: 0, gatedSteps: 1 };
const restored: Seen = { ...bad, healthy: 3 };

describe('unmet', () => {
  it.each([
    ['upgrade', ok, []],
    ['upgrade', { ...ok, lost: 2 }, ['lost 2 acknowledged writes (want 0)']],
    ['upgrade', { ...ok, onNew: 2 }, ['2/3 members on the new release (want all)']],
    ['upgrade', { ...ok, unavailableS: ELECTION_S + 0.5 }, [`no write acknowledged for ${(ELECTION_S + 0.5).toFixed(1)} s (want at most one election, ${ELECTION_S} s)`]],
    ['upgrade', { ...ok, violations: ['x lowered twice'] }, ['safety checker: x lowered twice']],
    ['upgrade', { ...ok, gatedSteps: 0 }, ['0 gated partition steps in the audit log (want 3)']],
    ['bad-release', bad, []],
    ['bad-release', { ...bad, details: { ...ok.details, max_on_new: 2 } }, ['2 members on the bad release at once (want at most 1)']],
    ['bad-release', { ...bad, onNew: 3 }, ['3 members still on the bad release (want 0: rolled back)']],
    ['bad-release', { ...bad, gatedSteps: 0 }, ['0 gated partition steps in the audit log (want 1)']],
    ['damaged-release', restored, []],
    ['damaged-release', { ...restored, healthy: 2 }, ['2/3 members follow a leader and serve once settled (want all: the damaged member restored from its checkpoint)']],
    ['damaged-release', { ...bad }, ['?/3 members follow a leader and serve once settled (want all: the damaged member restored from its checkpoint)']],
    ['damaged-release', { ...restored, onNew: 1, details: { ...ok.details, max_on_new: 2 } }, ['2 members on the damaging release at once (want at most 1)', '1 members still on the damaging release (want 0: rolled back)']],
    ['damaged-release', { ...restored, lost: 5, unavailableS: 4 }, ['lost 5 acknowledged writes (want 0)', 'no write acknowledged for 4.0 s (want the quorum of two to serve throughout)']],
    ['zones', ok, []],
    ['zones', { ...ok, details: { ...ok.details, max_down: 2 } }, ['2 members down at once (want at most 1)']],
    ['zones', { ...ok, details: { ...ok.details, steps_while_b_down: 1 } }, ['1 partition steps while etcd-b was down (want 0)']],
    ['zones', { ...ok, unavailableS: 30 }, []],
    ['controller-kill', { ...ok, onNew: 1 }, ['1/3 members on the new release (want all)']],
    ['controller-kill', { ...ok, details: { ...ok.details, controller_kills: 0 } }, ['0 controller pods deleted (want one at each step)']],
  ])('%s %j', (scenario, seen, want) => expect(unmet(scenario, seen as Seen)).toEqual(want));
});
