import { KEYS } from '../src/annotations.js';
import { judge, type WaitView } from './wait.js';

const status = (phase: string, revision: string, o: Record<string, unknown> = {}) => JSON.stringify({ phase, revision, partition: 3, replicas: 3, updated: 3, message: `${phase} message`, since: '', ...o });

function view(o: Partial<WaitView> & { status?: string } = {}): WaitView {
  const annotations: Record<string, string> = { [KEYS.enabled]: 'true', [KEYS.query]: 'up' };
  if (o.status) annotations[KEYS.status] = o.status;
  const { status: _s, ...rest } = o;
  return { name: 'pg', generation: 2, observedGeneration: 2, updateRevision: 'pg-new', currentRevision: 'pg-new', replicas: 3, partition: 3, annotations, ...rest, ...(o.annotations ? { annotations: o.annotations } : {}) };
}

describe('judge', () => {
  it.each([
    ['Completed on every pod', view({ status: status('Completed', 'pg-new') }), 0],
    ['Idle on the current revision (nothing to roll)', view({ status: status('Idle', 'pg-new') }), 0],
    ['Failed', view({ currentRevision: 'pg-old', status: status('Failed', 'pg-new') }), 1],
    ['RolledBack (the template is the old revision again)', view({ updateRevision: 'pg-old', currentRevision: 'pg-old', status: status('RolledBack', 'pg-old') }), 1],
    ['Invalid', view({ status: status('Invalid', 'pg-new') }), 3],
    ['not opted in', view({ annotations: {} }), 3],
    ['opted out', view({ annotations: { [KEYS.enabled]: 'false' } }), 3],
    ['no such StatefulSet', undefined, 3],
  ] as [string, WaitView | undefined, number][])('%s: exit %s', (_what, v, code) => {
    expect(judge(v, { failOnPause: false }).code).toBe(code);
  });

  it.each([
    ['the StatefulSet controller has not observed the new generation: the old Completed does not count', view({ generation: 3, observedGeneration: 2, currentRevision: 'pg-new', status: status('Completed', 'pg-new') }), 'waiting for the StatefulSet controller to observe generation 3'],
    ['a new update revision, the status still about the previous one', view({ updateRevision: 'pg-next', status: status('Completed', 'pg-new') }), 'revision pg-next: waiting for the controller\'s status of this revision'],
    ['no status yet', view({ currentRevision: 'pg-old' }), 'waiting for the controller\'s status'],
    ['Completed written, the StatefulSet controller not yet on it', view({ currentRevision: 'pg-old', status: status('Completed', 'pg-new') }), 'revision pg-new: Completed'],
    ['Checking', view({ currentRevision: 'pg-old', partition: 2, status: status('Checking', 'pg-new', { partition: 2 }) }), 'revision pg-new: Checking, partition 2/3'],
    ['RollingBack', view({ updateRevision: 'pg-old', currentRevision: 'pg-new', status: status('RollingBack', 'pg-old') }), 'RollingBack'],
    ['Paused without --fail-on-pause', view({ currentRevision: 'pg-old', status: status('Paused', 'pg-new') }), 'Paused'],
  ] as [string, WaitView, string][])('keeps waiting: %s', (_what, v, line) => {
    const j = judge(v, { failOnPause: false });
    expect(j.code).toBeUndefined();
    expect(j.line).toContain(line);
  });

  it('Paused with --fail-on-pause: exit 4', () => {
    expect(judge(view({ currentRevision: 'pg-old', status: status('Paused', 'pg-new') }), { failOnPause: true }).code).toBe(4);
  });

  it('prints a new line on a change of phase or partition, not on a repeated observation', () => {
    const a = judge(view({ currentRevision: 'pg-old', partition: 2, status: status('Checking', 'pg-new') }), { failOnPause: false });
    const again = judge(view({ currentRevision: 'pg-old', partition: 2, status: status('Checking', 'pg-new', { message: 'gate 1/3' }) }), { failOnPause: false });
    const stepped = judge(view({ currentRevision: 'pg-old', partition: 1, status: status('WaitingForPods', 'pg-new') }), { failOnPause: false });
    expect(again.key).toBe(a.key);
    expect(stepped.key).not.toBe(a.key);
  });
});
