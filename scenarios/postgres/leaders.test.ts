import { leaderChange, tally, type PodSeen } from './leaders.js';

const pod = (name: string, o: Partial<PodSeen> = {}): [string, PodSeen] => [name, { name, uid: `${name}-u1`, ready: true, deleting: false, ...o }];

describe('leaderChange', () => {
  it.each([
    ['the same leader', 'pg-0', 'pg-0', [pod('pg-0')], undefined],
    ['a leader found where there was none', '', 'pg-1', [pod('pg-1')], undefined],
    ['handed over, the old one running on', 'pg-0', 'pg-2', [pod('pg-0'), pod('pg-2')], 'switchover'],
    ['its pod being deleted', 'pg-0', 'pg-1', [pod('pg-0', { deleting: true })], 'failover'],
    ['its pod gone', 'pg-0', '', [pod('pg-1')], 'failover'],
    ['its pod not Ready', 'pg-0', 'pg-1', [pod('pg-0', { ready: false })], 'failover'],
    ['its pod replaced (another uid)', 'pg-0', 'pg-1', [pod('pg-0', { uid: 'pg-0-u2' })], 'failover'],
  ] as const)('%s', (_, from, to, pods, kind) => {
    const c = leaderChange(from, 'pg-0-u1', to, new Map(pods));
    expect(c?.kind).toBe(kind);
  });
  it('tallies', () => expect(tally([{ from: 'a', to: 'b', kind: 'switchover' }, { from: 'b', to: '', kind: 'failover' }, { from: 'c', to: 'd', kind: 'failover' }])).toEqual({ failovers: 2, switchovers: 1 }));
});
