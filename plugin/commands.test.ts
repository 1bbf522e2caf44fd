import { KEYS } from '../src/annotations.js';
import { age, annotationPatch, historyTable, parseCommand, rolloutPatch, statusJson, statusTable, type StsRow } from './commands.js';

describe('parseCommand', () => {
  it.each([
    [[], { verb: 'help' }],
    [['--help'], { verb: 'help' }],
    [['status'], { verb: 'status', all: false, output: 'table', watch: false }],
    [['status', 'db', '-n', 'prod'], { verb: 'status', all: false, output: 'table', watch: false, name: 'db', namespace: 'prod' }],
    [['status', '-A'], { verb: 'status', all: true, output: 'table', watch: false }],
    [['status', '-A', '-w', '-o', 'json'], { verb: 'status', all: true, output: 'json', watch: true }],
    [['status', '--output=json', '--watch'], { verb: 'status', all: false, output: 'json', watch: true }],
    [['pause', 'db', '--namespace=prod'], { verb: 'pause', name: 'db', namespace: 'prod' }],
    [['retry', 'db', '--kubeconfig', '/k'], { verb: 'retry', name: 'db', kubeconfig: '/k' }],
    [['promote', 'db'], { verb: 'promote', name: 'db' }],
    [['abort', 'db', '-n', 'prod'], { verb: 'abort', name: 'db', namespace: 'prod' }],
    [['wait', 'db', '-n', 'prod'], { verb: 'wait', name: 'db', namespace: 'prod', output: 'table', timeoutMs: 1_800_000, failOnPause: false }],
    [['wait', 'db', '--timeout', '20m', '--fail-on-pause', '-o', 'json'], { verb: 'wait', name: 'db', output: 'json', timeoutMs: 1_200_000, failOnPause: true }],
    [['wait', 'db', '--timeout=90s'], { verb: 'wait', name: 'db', output: 'table', timeoutMs: 90_000, failOnPause: false }],
    [['dashboard'], { verb: 'dashboard', all: false, port: 0 }],
    [['dashboard', '-A', '--port', '8080'], { verb: 'dashboard', all: true, port: 8080 }],
    [['dashboard', '-n', 'prod', '--port=0'], { verb: 'dashboard', all: false, port: 0, namespace: 'prod' }],
    [['restore', 'pg', '--pod', 'pg-1'], { verb: 'restore', name: 'pg', pod: 'pg-1', yes: false, timeoutMs: 600_000 }],
    [['restore', 'pg', '--pod=pg-0', '--checkpoint', 'data-pg-0-cp-1', '--yes', '--timeout', '2m', '-n', 'db'], { verb: 'restore', name: 'pg', pod: 'pg-0', checkpoint: 'data-pg-0-cp-1', yes: true, timeoutMs: 120_000, namespace: 'db' }],
  ])('%j', (argv, want) => expect(parseCommand(argv as string[])).toEqual(want));

  it.each([
    [['pause'], 'pause needs a StatefulSet name'],
    [['rollback', 'db'], 'unknown command "rollback"'],
    [['status', '-x'], 'unknown flag -x'],
    [['status', '-n'], '-n needs a value'],
    [['pause', 'a', 'b'], 'unexpected argument b'],
    [['status', '-o', 'yaml'], 'output format "yaml" is not table or json'],
    [['pause', 'db', '-w'], '-w and -o go with status and wait only'],
    [['wait'], 'wait needs a StatefulSet name'],
    [['dashboard', 'pg'], 'unexpected argument pg'],
    [['dashboard', '--port', '99999'], '--port "99999" is not a port'],
    [['dashboard', '-w'], 'dashboard takes -n, -A, --port and --kubeconfig only'],
    [['status', '--port', '1'], '--port goes with dashboard only'],
    [['wait', 'db', '--timeout', 'soon'], '--timeout "soon" is not a positive duration'],
    [['wait', 'db', '-w'], '-w and -A go with status only'],
    [['status', '--fail-on-pause'], '--timeout and --fail-on-pause go with wait only'],
    [['pause', 'db', '--timeout', '1m'], '--timeout and --fail-on-pause go with wait only'],
    [['restore', 'pg'], 'restore needs --pod: the member to restore'],
    [['restore', '--pod', 'pg-1'], 'restore needs a StatefulSet name'],
    [['restore', 'pg', '--pod', 'pg-1', '-w'], 'restore takes --pod, --checkpoint, --yes, --timeout, -n and --kubeconfig only'],
    [['abort', 'pg', '--yes'], '--pod, --checkpoint and --yes go with restore only'],
  ])('%j is refused', (argv, msg) => expect(() => parseCommand(argv as string[])).toThrow(msg));
});

describe('rolloutPatch: abort', () => {
  it('refuses while a rollback to the known-good revision is under way, paused or not', () => {
    for (const phase of ['RollingBack', 'Paused']) {
      const annotations = { [KEYS.status]: JSON.stringify({ phase, revision: 'r1', partition: 0, replicas: 3, updated: 1, message: '', since: '', failedRevision: 'r2' }) };
      expect(() => rolloutPatch('abort', { name: 'db', annotations, updateRevision: 'r1', currentRevision: 'r2' })).toThrow('statefulset.apps/db is rolling back to r1 from r2: nothing to abort');
    }
  });
  it('allows the abort of a revision applied over a rollback, paused or held (its status names where it started)', () => {
    const annotations = { [KEYS.status]: JSON.stringify({ phase: 'Paused', reason: 'Inconclusive', revision: 'y', partition: 2, replicas: 3, updated: 1, message: '', since: '', failedRevision: 'f', previousRevision: 'g' }) };
    expect(rolloutPatch('abort', { name: 'db', annotations, updateRevision: 'y', currentRevision: 'f' })).toEqual({ metadata: { annotations: { [KEYS.abort]: 'y', [KEYS.paused]: null } } });
  });
});

describe('rolloutPatch: retry', () => {
  const since = '2026-01-01T00:00:05.000Z';
  const state = (status?: Record<string, unknown>) => ({ name: 'db', annotations: (status ? { [KEYS.status]: JSON.stringify({ revision: 'r2', partition: 2, replicas: 3, updated: 1, message: 'gate failed', since, ...status }) } : {}) as Record<string, string> });
  it('names the Failed rollout and when it failed; leaves the status as it is', () => {
    expect(rolloutPatch('retry', state({ phase: 'Failed' }))).toEqual({ metadata: { annotations: { [KEYS.retry]: `r2@${Date.parse(since)}` } } });
  });
  it.each([
    ['no status', undefined, /has no Failed rollout nor inconclusive hold to retry \(phase unknown\)/],
    ['a rollout that has not failed', { phase: 'Checking', message: 'gate 1/3' }, /has no Failed rollout nor inconclusive hold to retry \(phase Checking: gate 1\/3\)/],
  ])('refuses %s', (_, status, want) => expect(() => rolloutPatch('retry', state(status))).toThrow(want));
});

describe('annotationPatch', () => {
  it('pauses, resumes and retries through annotations only', () => {
    expect(annotationPatch('pause')).toEqual({ metadata: { annotations: { [KEYS.paused]: 'true' } } });
    expect(annotationPatch('resume')).toEqual({ metadata: { annotations: { [KEYS.paused]: null } } });
  });
});

describe('rolloutPatch', () => {
  const paused = JSON.stringify({ phase: 'Paused', revision: 'db-2', partition: 9, replicas: 10, updated: 1, message: 'waiting for promotion before step 2 of 3', since: '', promotion: 2 });
  it('promote names the revision and the step that waits', () => {
    expect(rolloutPatch('promote', { name: 'db', annotations: { [KEYS.status]: paused } })).toEqual({ metadata: { annotations: { [KEYS.promote]: 'db-2/2' } } });
  });
  it('promote of a rollout paused after inconclusive checks names the revision and the partition', () => {
    const held = (hold?: number) => JSON.stringify({ phase: 'Paused', reason: 'Inconclusive', revision: 'db-2', partition: 7, replicas: 10, updated: 3, message: 'paused: 3 inconclusive checks', since: '2026-11-25T22:00:05.123Z', ...(hold !== undefined ? { hold } : {}) });
    // The hold's identity, not its phase's start: a later hold after a pause is another one.
    expect(rolloutPatch('promote', { name: 'db', annotations: { [KEYS.status]: held(1795644005123) } })).toEqual({ metadata: { annotations: { [KEYS.promote]: 'db-2@7@1795644005123' } } });
    expect(() => rolloutPatch('promote', { name: 'db', annotations: { [KEYS.status]: held() } })).toThrow('has no identity for its inconclusive hold yet');
  });
  it('promote refuses a rollout that waits for no promotion', () => {
    const checking = JSON.stringify({ phase: 'Checking', revision: 'db-2', partition: 9, replicas: 10, updated: 1, message: 'gate 1/3', since: '' });
    expect(() => rolloutPatch('promote', { name: 'db', annotations: { [KEYS.status]: checking } })).toThrow('statefulset.apps/db is not waiting for promotion (phase Checking: gate 1/3)');
    expect(() => rolloutPatch('promote', { name: 'db', annotations: {} })).toThrow('is not waiting for promotion (phase unknown)');
  });
  it('abort names the update revision and ends a pause; refuses when nothing rolls', () => {
    expect(rolloutPatch('abort', { name: 'db', annotations: {}, updateRevision: 'db-2', currentRevision: 'db-1' })).toEqual({ metadata: { annotations: { [KEYS.abort]: 'db-2', [KEYS.paused]: null } } });
    expect(() => rolloutPatch('abort', { name: 'db', annotations: {}, updateRevision: 'db-1', currentRevision: 'db-1' })).toThrow('has no rollout to abort');
    // At the final check every pod is on the new revision and it is current, but the rollout is unfinished.
    const finalCheck = { [KEYS.status]: JSON.stringify({ phase: 'Checking', revision: 'db-2', previousRevision: 'db-1' }) };
    expect(rolloutPatch('abort', { name: 'db', annotations: finalCheck, updateRevision: 'db-2', currentRevision: 'db-2' })).toEqual({ metadata: { annotations: { [KEYS.abort]: 'db-2', [KEYS.paused]: null } } });
  });
});

describe('historyTable', () => {
  const NOW = Date.parse('2026-01-01T01:00:00Z');
  it('lists each gate\'s runs of outcomes, dry-run gates marked, control characters stripped', () => {
    const history = {
      query: [{ result: 'pass', value: '1', at: '2026-01-01T00:59:50Z', count: 3 }],
      'compare.errors': [
        { result: 'pass', value: 'new 0.01 old 0.01', at: '2026-01-01T00:58:00Z', count: 2 },
        { result: 'fail', value: 'new 0.05\u001b[31m old 0.01', at: '2026-01-01T00:59:55Z', count: 1, dryRun: true },
      ],
    };
    const status = JSON.stringify({ phase: 'Checking', revision: 'r', partition: 2, replicas: 3, updated: 1, message: 'm', since: '', history });
    const out = historyTable({ namespace: 'a', name: 'db', annotations: { [KEYS.enabled]: 'true', [KEYS.query]: 'up', [KEYS.status]: status }, partition: 2, replicas: 3 }, NOW);
    expect(out.split('\n').map((l) => l.trimEnd())).toEqual([
      '',
      'GATE                       RESULT   IN A ROW   VALUE                   LAST',
      'compare.errors             pass     2          new 0.01 old 0.01       2m',
      'compare.errors (dry-run)   fail     1          new 0.05[31m old 0.01   5s',
      'query                      pass     3          1                       10s',
      '',
    ]);
  });
  it('is empty without measurements', () => expect(historyTable({ namespace: 'a', name: 'db', annotations: { [KEYS.enabled]: 'true', [KEYS.query]: 'up' }, partition: 3, replicas: 3 }, NOW)).toBe(''));
});

describe('statusTable', () => {
  const NOW = Date.parse('2026-01-01T01:00:00Z');
  const rows = (): StsRow[] => {
    const status = JSON.stringify({ phase: 'Checking', revision: 'r', partition: 2, replicas: 3, updated: 1, message: 'gate 1/3 at partition 2', since: '2026-01-01T00:57:48Z', gate: 'passing', streak: 1 });
    return [
      { namespace: 'a', name: 'db', annotations: { [KEYS.enabled]: 'true', [KEYS.query]: 'up', [KEYS.successThreshold]: '3', [KEYS.status]: status }, partition: 2, replicas: 3 },
      { namespace: 'a', name: 'plain', annotations: {}, partition: 0, replicas: 1 },
      { namespace: 'b', name: 'new', annotations: { [KEYS.enabled]: 'true', [KEYS.query]: 'up' }, partition: 3, replicas: 3 },
    ];
  };

  it('lists opted-in StatefulSets: phase, partition/replicas, updated, gate streak and result, age in phase, message', () => {
    const lines = statusTable(rows(), true, NOW).trim().split('\n');
    expect(lines[0]).toMatch(/^NAMESPACE\s+NAME\s+PHASE\s+PARTITION\s+UPDATED\s+GATE\s+AGE\s+MESSAGE$/);
    expect(lines[1]).toMatch(/^a\s+db\s+Checking\s+2\/3\s+1\/3\s+1\/3 passing\s+2m12s\s+gate 1\/3 at partition 2$/);
    expect(lines[2]).toMatch(/^b\s+new\s+Pending\s+3\/3\s+\?\/3\s+-\s+-\s+no status yet/);
    expect(lines).toHaveLength(3);
    expect(statusTable([], false, NOW)).toBe('No opted-in StatefulSets found.\n');
    expect(statusTable(rows(), false, NOW).split('\n')[0]).toMatch(/^NAME\s+PHASE/);
  });

  it('prints no control character of a message: an escape sequence cannot rewrite the previous line', () => {
    const status = JSON.stringify({ phase: 'Checking', revision: 'r', partition: 2, replicas: 3, updated: 1, message: 'HTTP 503\u001b[1A\u001b[2K\rdb   Completed   3/3', since: '2026-01-01T00:57:48Z' });
    const out = statusTable([{ namespace: 'a', name: 'db', annotations: { [KEYS.enabled]: 'true', [KEYS.query]: 'up', [KEYS.status]: status }, partition: 2, replicas: 3 }], false, NOW);
    expect(out).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(out.trim().split('\n')).toHaveLength(2);
  });

  it('JSON output carries the same facts for scripts', () => {
    const out = JSON.parse(statusJson(rows())) as Record<string, unknown>[];
    expect(out).toEqual([
      { namespace: 'a', name: 'db', phase: 'Checking', revision: 'r', partition: 2, replicas: 3, updated: 1, streak: 1, successThreshold: 3, gate: 'passing', since: '2026-01-01T00:57:48Z', message: 'gate 1/3 at partition 2' },
      { namespace: 'b', name: 'new', phase: 'Pending', partition: 3, replicas: 3, successThreshold: 3, message: 'no status yet: is the controller running?' },
    ]);
  });

  it.each([
    ['2026-01-01T00:59:15Z', '45s'],
    ['2026-01-01T00:57:00Z', '3m'],
    ['2025-12-31T19:57:00Z', '5h3m'],
    ['2025-12-29T21:00:00Z', '2d4h'],
    ['', '-'],
    ['garbage', '-'],
  ])('age(%j) = %s', (since, want) => expect(age(since, NOW)).toBe(want));
});
