import { describe, expect, it } from '@jest/globals';
import { fieldsOf, table, type Run } from './table.js';

describe('the results table', () => {
  it('reads RESULT fields', () => {
    expect(fieldsOf('RESULT scenario=upgrade system=ours acked=10 lost=0 members_on_new=3/3')).toEqual({ scenario: 'upgrade', system: 'ours', acked: '10', lost: '0', members_on_new: '3/3' });
  });
  it('one row per scenario and system, each run side by side, in the order first seen', () => {
    const runs: Run[] = [
      { scenario: 'upgrade', system: 'ours', acked: '10', lost: '0', failed: '0', unavailable_s: '0.1', p99_ms: '9', members_on_new: '3/3', max_down: '1' },
      { scenario: 'upgrade', system: 'plain', acked: '5', lost: '2', failed: '1', unavailable_s: '3.0', p99_ms: '900', members_on_new: '3/3', max_down: '3' },
      { scenario: 'upgrade', system: 'ours', acked: '11', lost: '0', failed: '0', unavailable_s: '0.2', p99_ms: '10', members_on_new: '3/3' },
    ];
    expect(table(runs)).toEqual([
      '| scenario | system | runs | acked | lost | failed | unavailable s | p99 ms | on new | most down at once |',
      '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
      '| upgrade | ours | 2 | 10 / 11 | 0 / 0 | 0 / 0 | 0.1 / 0.2 | 9 / 10 | 3/3 / 3/3 | 1 / - |',
      '| upgrade | plain | 1 | 5 | 2 | 1 | 3.0 | 900 | 3/3 | 3 |',
    ]);
  });
});
