import { formatProblems, INTEGER_BOUNDS, KEYS, MAX_QUERY_LENGTH, parseAnnotations, readOptIn } from './annotations.js';

const base = { [KEYS.enabled]: 'true', [KEYS.query]: 'up == 1' };

function problemsOf(extra: Record<string, string>): string[] {
  const r = parseAnnotations({ ...base, ...extra });
  return r.ok ? [] : r.problems.map((p) => p.key);
}

describe('readOptIn', () => {
  it.each([
    [undefined, 'absent'],
    [{}, 'absent'],
    [{ [KEYS.enabled]: 'false' }, 'off'],
    [{ [KEYS.enabled]: 'true' }, 'on'],
    [{ [KEYS.enabled]: 'yes' }, 'invalid'],
    [{ [KEYS.enabled]: 'True' }, 'invalid'],
    [{ [KEYS.enabled]: '' }, 'invalid'],
  ])('%j -> %s', (a, want) => {
    expect(readOptIn(a as Record<string, string>)).toBe(want);
  });
});

describe('parseAnnotations', () => {
  it('does not validate objects that are not opted in', () => {
    expect(parseAnnotations({ [KEYS.periodSeconds]: 'junk' })).toEqual({ optIn: 'absent', ok: true, config: null });
    expect(parseAnnotations({ [KEYS.enabled]: 'false', [KEYS.periodSeconds]: 'junk' })).toEqual({ optIn: 'off', ok: true, config: null });
  });

  it('applies every default of SPEC §2', () => {
    expect(parseAnnotations(base)).toEqual({
      optIn: 'on',
      ok: true,
      config: { gates: [{ name: 'query', query: 'up == 1' }], initialDelaySeconds: 30, periodSeconds: 30, successThreshold: 3, failureThreshold: 0, progressDeadlineSeconds: 0, groupOrder: 0, onFailure: 'halt', paused: false, standardRollingUpdate: false, respectPdb: true, httpGates: [], compareGates: [], jobGates: [], hooks: [], dryRun: [], policyRefs: [], errorLimit: 0, inconclusiveLimit: 3 },
    });
  });

  it('reads every key when set', () => {
    const r = parseAnnotations({
      ...base,
      [KEYS.prometheusUrl]: 'https://prom.monitoring:9090/prefix/',
      [KEYS.initialDelaySeconds]: '0',
      [KEYS.periodSeconds]: '1',
      [KEYS.successThreshold]: '1000',
      [KEYS.failureThreshold]: '5',
      [KEYS.prometheusSecret]: 'prom-creds',
      [KEYS.paused]: 'true',
      [KEYS.standardRollingUpdate]: 'false',
      [KEYS.progressDeadlineSeconds]: '600',
      [KEYS.onFailure]: 'rollback',
      [KEYS.steps]: '1,pause,100%',
      [KEYS.promote]: 'db-5d4f8c7b9/2',
      [KEYS.abort]: 'db-6f7d9c8b5',
      [KEYS.group]: 'zones',
      [KEYS.groupOrder]: '2',
      [KEYS.notify]: 'chat-hook',
      [KEYS.respectPdb]: 'false',
      [KEYS.errorLimit]: '4',
      [KEYS.inconclusiveLimit]: '0',
      [KEYS.dryRun]: 'compare.errors',
      'phased-rollout.io/compare.errors': 'sum(rate(errors_total{controller_revision_hash="{{revision}}"}[1m]))',
      'phased-rollout.io/compare.errors.criteria': 'max-ratio=1.5 test=mann-whitney min-samples=4',
      [KEYS.status]: '{"phase":"Idle"}',
    });
    expect(r).toEqual({
      optIn: 'on',
      ok: true,
      config: {
        gates: [{ name: 'query', query: 'up == 1' }],
        prometheusUrl: 'https://prom.monitoring:9090/prefix',
        initialDelaySeconds: 0,
        periodSeconds: 1,
        successThreshold: 1000,
        failureThreshold: 5,
        progressDeadlineSeconds: 600,
        group: 'zones',
        groupOrder: 2,
        onFailure: 'rollback',
        prometheusSecret: 'prom-creds',
        notify: 'chat-hook',
        paused: true,
        standardRollingUpdate: false,
        respectPdb: false,
        httpGates: [],
        jobGates: [],
      hooks: [],
        compareGates: [{ name: 'compare.errors', query: 'sum(rate(errors_total{controller_revision_hash="{{revision}}"}[1m]))', criteria: { better: 'lower', maxRatio: 1.5, maxDelta: 0, minSamples: 4, test: 'mann-whitney', alpha: 0.05 } }],
        dryRun: ['compare.errors'],
        policyRefs: [],
        errorLimit: 4,
        inconclusiveLimit: 0,
        steps: [{ count: 1 }, { percent: 100, pause: true }],
        promote: { revision: 'db-5d4f8c7b9', stage: 2 },
        abort: 'db-6f7d9c8b5',
      },
    });
  });

  const intCases = Object.values(INTEGER_BOUNDS).flatMap((b) => [
    [b.key, String(b.min), true],
    [b.key, String(b.max), true],
    [b.key, String(b.min - 1), false],
    [b.key, String(b.max + 1), false],
    [b.key, '1.5', false],
    [b.key, '1e3', false],
    [b.key, ' 5', false],
    [b.key, '+5', false],
    [b.key, '05', false],
    [b.key, '0x10', false],
    [b.key, '', false],
    [b.key, 'thirty', false],
    [b.key, '99999999999999999999', false],
  ] as [string, string, boolean][]);
  it.each(intCases)('%s=%j valid=%s', (key, value, valid) => {
    // group-order only counts beside a group.
    const group: Record<string, string> = key === KEYS.groupOrder ? { [KEYS.group]: 'g' } : {};
    expect(problemsOf({ ...group, [key]: value })).toEqual(valid ? [] : [key]);
  });

  it.each([
    [KEYS.paused, 'yes'],
    [KEYS.paused, 'TRUE'],
    [KEYS.standardRollingUpdate, '1'],
    [KEYS.respectPdb, 'no'],
    ['phased-rollout.io/http.consul', 'ftp://consul/x'],
    ['phased-rollout.io/http.consul', 'http://{{pod}}.svc/healthz'],
    ['phased-rollout.io/http.Consul', 'http://consul/x'],
    [KEYS.httpSecret, 'Bad_Name'],
    [KEYS.respectPdb, ''],
    [KEYS.prometheusUrl, 'prometheus:9090'],
    [KEYS.prometheusUrl, 'ftp://prom:9090'],
    [KEYS.prometheusUrl, 'http://user:pw@prom:9090'],
    [KEYS.prometheusUrl, 'http://prom:9090/api/v1/query'],
    [KEYS.prometheusUrl, 'http://prom:9090?x=1'],
    [KEYS.prometheusUrl, 'not a url'],
    [KEYS.prometheusSecret, 'Bad_Name'],
    [KEYS.prometheusSecret, 'a'.repeat(254)],
    [KEYS.query, ''],
    [KEYS.query, '   '],
    [KEYS.query, 'x'.repeat(MAX_QUERY_LENGTH + 1)],
    [`${'phased-rollout.io/'}perod-seconds`, '10'],
    [KEYS.query, 'up{pod={{pod}}}'], // a placeholder outside a label value
    [KEYS.query, 'up{pod="{{node}}"}'],
    [`${KEYS.query}.Latency`, 'up'],
    [`${KEYS.query}.`, 'up'],
    [`${KEYS.query}.a.b`, 'up'],
    [`${KEYS.query}.lag`, ''],
    [`${KEYS.query}.lag`, 'x{p=`{{pod}}`}'],
    [KEYS.steps, ''],
    [KEYS.steps, '1,10%,50%'], // must end with 100%
    [KEYS.steps, '1,1,100%'], // counts strictly increasing
    [KEYS.steps, '50%,10%,100%'], // percentages strictly increasing
    [KEYS.steps, '0,100%'],
    [KEYS.steps, '1,101%'],
    [KEYS.steps, '1,,100%'],
    [KEYS.steps, '1.5,100%'],
    [KEYS.steps, '-1,100%'],
    [KEYS.steps, '1,10 %,100%'],
    [KEYS.steps, '1,pause,pause,100%'],
    [KEYS.notify, 'Chat_Hook'],
    [KEYS.notify, ''],
    [KEYS.group, 'Zones'],
    [KEYS.group, ''],
    [KEYS.group, 'a'.repeat(64)],
    [KEYS.groupOrder, '1'], // without a group
    [KEYS.onFailure, 'Rollback'],
    [KEYS.onFailure, 'retry'],
    [KEYS.promote, 'db-5d4f8c7b9'],
    [KEYS.promote, 'db-5d4f8c7b9/0'],
    [KEYS.promote, 'DB/2'],
    [KEYS.abort, 'Not A Revision'],
    [KEYS.abort, ''],
    [KEYS.retry, 'db-5d4f8c7b9'], // no failure named
    [KEYS.retry, 'db-5d4f8c7b9@yesterday'],
    [KEYS.retry, 'DB@1767225600000'],
    [KEYS.retry, 'db@0'],
    [KEYS.steps, '1,100%,pause'],
    [KEYS.steps, 'Pause,100%'],
    [KEYS.steps, `${Array.from({ length: 100 }, (_, i) => i + 1).join(',')},100%`], // 101 stages
  ])('%s=%j is refused', (key, value) => {
    expect(problemsOf({ [key]: value })).toEqual([key]);
  });

  it.each([
    ['100%', [{ percent: 100 }]],
    ['1,10%,50%,100%', [{ count: 1 }, { percent: 10 }, { percent: 50 }, { percent: 100 }]],
    [' 1 , 2 ,100% ', [{ count: 1 }, { count: 2 }, { percent: 100 }]],
    ['20%,5,100%', [{ percent: 20 }, { count: 5 }, { percent: 100 }]],
    ['1,pause,50%,100%', [{ count: 1 }, { percent: 50, pause: true }, { percent: 100 }]],
    ['pause,100%', [{ percent: 100, pause: true }]],
  ])('%s=%j reads as cumulative stages', (value, want) => {
    const r = parseAnnotations({ ...base, [KEYS.steps]: value });
    expect(r.ok && r.config?.steps).toEqual(want);
  });

  it('reads named gates in key order beside the plain query; a named gate alone is enough', () => {
    const r = parseAnnotations({ ...base, [`${KEYS.query}.lag`]: 'lag{pod="{{pod}}"} < 5', [`${KEYS.query}.errors`]: 'errors == 0' });
    expect(r.ok && r.config?.gates).toEqual([
      { name: 'query', query: 'up == 1' },
      { name: 'query.errors', query: 'errors == 0' },
      { name: 'query.lag', query: 'lag{pod="{{pod}}"} < 5' },
    ]);
    expect(parseAnnotations({ [KEYS.enabled]: 'true', [`${KEYS.query}.x`]: 'up' })).toMatchObject({ ok: true, config: { gates: [{ name: 'query.x', query: 'up' }] } });
    const many = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`${KEYS.query}.g${i}`, 'up']));
    expect(problemsOf(many)).toEqual([`${KEYS.query}.*, phased-rollout.io/http.*, phased-rollout.io/compare.*`]);
  });

  describe('comparison gates, dry-run and the limits', () => {
    const cmp = 'phased-rollout.io/compare.errors';
    const q = 'rate(errors_total{controller_revision_hash="{{revision}}"}[5m])';
    it('a comparison gate with its default criteria', () => {
      expect(parseAnnotations({ ...base, [cmp]: q })).toMatchObject({ ok: true, config: { compareGates: [{ name: 'compare.errors', query: q, criteria: { better: 'lower', maxRatio: 1, maxDelta: 0, minSamples: 1, test: 'none' } }] } });
    });
    it.each([
      [{ [cmp]: 'rate(errors_total[5m])' }, [cmp]], // no {{revision}}: both sides would be the same query
      [{ [cmp]: 'rate(errors_total{controller_revision_hash={{revision}}}[5m])' }, [cmp]], // outside a literal
      [{ [cmp]: 'e{rev="{{revision}}",pod="{{pod}}"}' }, [cmp]], // one pod: the other side selects nothing
      [{ [cmp]: '' }, [cmp]],
      [{ 'phased-rollout.io/compare.Errors': q }, ['phased-rollout.io/compare.Errors']],
      [{ [cmp]: q, [`${cmp}.criteria`]: 'max-ratio=0.9' }, [`${cmp}.criteria`]],
      [{ [`${cmp}.criteria`]: 'max-ratio=1.2' }, [`${cmp}.criteria`]], // criteria of no gate
      [{ [KEYS.dryRun]: 'query.nope' }, [KEYS.dryRun]],
      [{ [KEYS.dryRun]: ' , ' }, [KEYS.dryRun]],
      [{ [KEYS.dryRun]: 'query' }, [KEYS.dryRun]], // every gate dry-run: nothing would judge
      [{ [KEYS.gates]: 'Bad_Name' }, [KEYS.gates]],
      [{ [KEYS.gates]: 'a,a' }, [KEYS.gates]],
      [{ [KEYS.gates]: 'cluster/' }, [KEYS.gates]],
      [{ [KEYS.gates]: 'ns/other' }, [KEYS.gates]],
      [{ [KEYS.gates]: Array.from({ length: 11 }, (_, i) => `p${i}`).join(',') }, [KEYS.gates]],
    ])('%j is refused', (extra, keys) => expect(problemsOf(extra)).toEqual(keys));

    it('a comparison needs an enforced query or HTTP gate beside it (the first step and the last pod have nothing to compare with)', () => {
      const alone = { [KEYS.enabled]: 'true', [cmp]: q };
      expect(parseAnnotations(alone)).toMatchObject({ ok: false, problems: [{ key: KEYS.query }, { key: 'phased-rollout.io/compare.*' }] });
      expect(problemsOf({ [cmp]: q, [KEYS.dryRun]: 'query' })).toEqual(['phased-rollout.io/compare.*']);
      expect(problemsOf({ [cmp]: q, [KEYS.dryRun]: 'compare.errors' })).toEqual([]);
    });
    it('the message of a missing {{revision}} shows how to write one', () => {
      const r = parseAnnotations({ ...base, [cmp]: 'rate(errors_total[5m])' });
      if (r.ok) throw new Error('expected problems');
      expect(formatProblems(r.problems)).toContain('selects one revision\'s pods with {{revision}}');
    });
    it('gate policies: names or cluster/<name>, and they stand in for the required query', () => {
      expect(parseAnnotations({ [KEYS.enabled]: 'true', [KEYS.gates]: 'etcd-quorum, cluster/slo.v2' })).toMatchObject({ ok: true, config: { gates: [], policyRefs: ['etcd-quorum', 'cluster/slo.v2'] } });
      // A comparison alone is accepted with policies: whether they bring an enforced gate is known once read.
      expect(parseAnnotations({ [KEYS.enabled]: 'true', [KEYS.gates]: 'p', [cmp]: q })).toMatchObject({ ok: true });
    });
    it('dry-run names gates as the status does, once each', () => {
      const r = parseAnnotations({ ...base, 'phased-rollout.io/http.consul': 'http://consul:8500/v1/health', [KEYS.dryRun]: 'http.consul, http.consul' });
      expect(r).toMatchObject({ ok: true, config: { dryRun: ['http.consul'] } });
    });
    it.each([
      ['db-5d4f8c7b9@3@1764111111', { revision: 'db-5d4f8c7b9', partition: 3, hold: 1764111111 }],
      ['db-5d4f8c7b9@0@1', { revision: 'db-5d4f8c7b9', partition: 0, hold: 1 }],
      ['db-5d4f8c7b9/3', { revision: 'db-5d4f8c7b9', stage: 3 }],
    ])('promote %j', (v, want) => expect(parseAnnotations({ ...base, [KEYS.promote]: v })).toMatchObject({ ok: true, config: { promote: want } }));
    it.each(['db@-1@1', 'db@01@1', 'db@@1', 'db@1', 'db@1@', 'db@1@0', 'db@1/2', 'db/0'])('promote %j is refused', (v) => expect(problemsOf({ [KEYS.promote]: v })).toEqual([KEYS.promote]));
  });

  it('names the placeholder problem in the message', () => {
    const r = parseAnnotations({ [KEYS.enabled]: 'true', [KEYS.query]: 'up{pod={{pod}}}' });
    if (r.ok) throw new Error('expected problems');
    expect(formatProblems(r.problems)).toContain('placeholder {{pod}} must stand inside a "..." label value, e.g. pod="{{pod}}"');
  });

  it.each(['-1', '1001', '1.5'])('group-order=%j is refused beside a group', (v) => {
    expect(problemsOf({ [KEYS.group]: 'zones', [KEYS.groupOrder]: v })).toEqual([KEYS.groupOrder]);
  });

  it('requires a query unless the rollout is bypassed', () => {
    expect(parseAnnotations({ [KEYS.enabled]: 'true' })).toMatchObject({ ok: false, problems: [{ key: KEYS.query, value: undefined }] });
    expect(parseAnnotations({ [KEYS.enabled]: 'true', [KEYS.standardRollingUpdate]: 'true' })).toMatchObject({ ok: true });
  });

  it('treats a typo in enabled as opted in and lists every bad key at once', () => {
    const r = parseAnnotations({ [KEYS.enabled]: 'yes', [KEYS.periodSeconds]: '0', [KEYS.paused]: 'maybe' });
    expect(r.optIn).toBe('invalid');
    if (r.ok) throw new Error('expected problems');
    expect(r.problems.map((p) => p.key).sort()).toEqual([KEYS.enabled, KEYS.paused, KEYS.periodSeconds, KEYS.query].sort());
    const text = formatProblems(r.problems);
    expect(text).toContain(`${KEYS.enabled}: "yes" (allowed: "true" or "false")`);
    expect(text).toContain(`${KEYS.periodSeconds}: "0" (allowed: an integer from 1 to 86400)`);
    expect(text).toContain(`${KEYS.query}: missing`);
  });

  it('ignores foreign annotations and truncates huge values in messages', () => {
    expect(problemsOf({ 'example.com/x': 'junk', 'kubectl.kubernetes.io/last-applied-configuration': '{}' })).toEqual([]);
    const r = parseAnnotations({ ...base, [KEYS.paused]: 'y'.repeat(10000) });
    if (r.ok) throw new Error('expected problems');
    expect(formatProblems(r.problems).length).toBeLessThan(200);
  });
});

describe('parseAnnotations memo', () => {
  const base = { [KEYS.enabled]: 'true', [KEYS.query]: 'up == 1' };

  it('returns the same frozen result for the same phased-rollout entries, whatever else the object carries', () => {
    const a = parseAnnotations({ ...base, 'kubectl.kubernetes.io/last-applied-configuration': '{"x":1}' });
    const b = parseAnnotations({ ...base, 'other/key': 'y' });
    expect(b).toBe(a);
    expect(Object.isFrozen(a)).toBe(true);
    if (!a.ok || !a.config) throw new Error('expected a config');
    expect(Object.isFrozen(a.config.gates)).toBe(true);
    expect(() => (a.config as { periodSeconds: number }).periodSeconds++).toThrow(TypeError);
  });

  it('never answers for different entries, an empty value or a value moved to another key', () => {
    const results = [
      parseAnnotations({ ...base, [KEYS.periodSeconds]: '5' }),
      parseAnnotations({ ...base, [KEYS.periodSeconds]: '6' }),
      parseAnnotations({ ...base, [KEYS.periodSeconds]: '' }),
      parseAnnotations({ ...base, [KEYS.initialDelaySeconds]: '5' }),
    ];
    expect(results.map((r) => (r.ok ? `${r.config?.periodSeconds}/${r.config?.initialDelaySeconds}` : 'problems'))).toEqual(['5/30', '6/30', 'problems', '30/5']);
  });

  it('gives the same answer for keys beyond the memo bound, and for many distinct objects', () => {
    const long = { ...base, [KEYS.query]: `up == 1 or ${'x'.repeat(MAX_QUERY_LENGTH - 12)}` };
    expect(parseAnnotations(long)).toEqual(parseAnnotations({ ...long }));
    for (let i = 0; i < 1500; i++) {
      const r = parseAnnotations({ ...base, [KEYS.groupOrder]: String(i % 1001), [KEYS.group]: 'g' });
      expect(r.ok && r.config?.groupOrder).toBe(i % 1001);
    }
  });
});

describe('HTTP gates', () => {
  it('reads http.<name> gates, which stand in for a query; an http-secret names their credentials', () => {
    const r = parseAnnotations({ [KEYS.enabled]: 'true', 'phased-rollout.io/http.consul': 'http://consul:8500/v1/agent/health/service/name/{{statefulset}}', [KEYS.httpSecret]: 'consul-token' });
    expect(r.ok && r.config).toMatchObject({ gates: [], httpGates: [{ name: 'http.consul', url: 'http://consul:8500/v1/agent/health/service/name/{{statefulset}}' }], httpSecret: 'consul-token' });
  });

  it('counts queries and HTTP gates together against MAX_GATES', () => {
    const many: Record<string, string> = { [KEYS.enabled]: 'true', [KEYS.query]: 'up' };
    for (let i = 0; i < 10; i++) many[`phased-rollout.io/http.h${i}`] = `http://h/${i}`;
    const r = parseAnnotations(many);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.problems.map((p) => p.allowed)).toEqual(['at most 10 gates in all']);
  });
});
