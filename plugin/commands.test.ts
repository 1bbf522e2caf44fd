import { KEYS } from '../src/annotations.js';
import { annotationPatch, parseCommand, statusTable } from './commands.js';

describe('parseCommand', () => {
  it.each([
    [[], { verb: 'help' }],
    [['--help'], { verb: 'help' }],
    [['status'], { verb: 'status', all: false }],
    [['status', 'db', '-n', 'prod'], { verb: 'status', all: false, name: 'db', namespace: 'prod' }],
    [['status', '-A'], { verb: 'status', all: true }],
    [['pause', 'db', '--namespace=prod'], { verb: 'pause', name: 'db', namespace: 'prod' }],
    [['retry', 'db', '--kubeconfig', '/k'], { verb: 'retry', name: 'db', kubeconfig: '/k' }],
  ])('%j', (argv, want) => expect(parseCommand(argv as string[])).toEqual(want));

  it.each([
    [['pause'], 'pause needs a StatefulSet name'],
    [['rollback', 'db'], 'unknown command "rollback"'],
    [['status', '-x'], 'unknown flag -x'],
    [['status', '-n'], '-n needs a value'],
    [['pause', 'a', 'b'], 'unexpected argument b'],
  ])('%j is refused', (argv, msg) => expect(() => parseCommand(argv as string[])).toThrow(msg));
});

describe('annotationPatch', () => {
  it('pauses, resumes and retries through annotations only', () => {
    expect(annotationPatch('pause')).toEqual({ metadata: { annotations: { [KEYS.paused]: 'true' } } });
    expect(annotationPatch('resume')).toEqual({ metadata: { annotations: { [KEYS.paused]: null } } });
    expect(annotationPatch('retry')).toEqual({ metadata: { annotations: { [KEYS.status]: null } } });
  });
});

describe('statusTable', () => {
  it('lists opted-in StatefulSets with phase, partition, progress and message', () => {
    const status = JSON.stringify({ phase: 'Checking', revision: 'r', partition: 2, replicas: 3, updated: 1, message: 'gate 1/3 at partition 2', since: '', gate: 'passing' });
    const out = statusTable(
      [
        { namespace: 'a', name: 'db', annotations: { [KEYS.enabled]: 'true', [KEYS.status]: status }, partition: 2, replicas: 3 },
        { namespace: 'a', name: 'plain', annotations: {}, partition: 0, replicas: 1 },
        { namespace: 'b', name: 'new', annotations: { [KEYS.enabled]: 'true' }, partition: 3, replicas: 3 },
      ],
      true,
    );
    const lines = out.trim().split('\n');
    expect(lines[0]).toMatch(/^NAMESPACE\s+NAME\s+PHASE\s+PARTITION\s+UPDATED\s+GATE\s+MESSAGE$/);
    expect(lines[1]).toMatch(/^a\s+db\s+Checking\s+2\s+1\/3\s+passing\s+gate 1\/3 at partition 2$/);
    expect(lines[2]).toMatch(/^b\s+new\s+Pending\s+3\s+\?\/3\s+-\s+no status yet/);
    expect(lines).toHaveLength(3);
    expect(statusTable([], false)).toBe('No opted-in StatefulSets found.\n');
  });
});
