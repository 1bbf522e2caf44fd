import { parsePolicySpec } from './policy.js';

describe('parsePolicySpec', () => {
  it('reads every kind of gate, the dry-run ones, and the settings it carries', () => {
    expect(
      parsePolicySpec({
        queries: [{ name: 'leader', query: 'count(etcd_server_has_leader == 1) == 3' }],
        http: [{ name: 'consul', url: 'http://consul:8500/v1/health/{{pod}}', dryRun: false }],
        compare: [{ name: 'errors', query: 'rate(e{rev="{{revision}}"}[1m])', criteria: 'max-ratio=1.2', dryRun: true }],
        periodSeconds: 5,
        failureThreshold: 12,
      }),
    ).toEqual({
      queries: [{ name: 'query.leader', query: 'count(etcd_server_has_leader == 1) == 3' }],
      http: [{ name: 'http.consul', url: 'http://consul:8500/v1/health/{{pod}}' }],
      compare: [{ name: 'compare.errors', query: 'rate(e{rev="{{revision}}"}[1m])', criteria: expect.objectContaining({ maxRatio: 1.2 }) }],
      jobs: [],
      hooks: [],
      dryRun: ['compare.errors'],
      timing: { periodSeconds: 5, failureThreshold: 12 },
    });
  });

  it.each([
    [{}, ['spec: at least one gate in queries, http, compare, jobs or analysis, a hook in hooks, or a checkpoint']],
    [null, ['spec: at least one gate in queries, http, compare, jobs or analysis, a hook in hooks, or a checkpoint']],
    [{ queries: 'up' }, ['spec.queries: a list']],
    [{ queries: [{ name: 'Bad', query: 'up' }] }, ['spec.queries[0].name: a DNS label (lowercase letters, digits, "-", at most 63)']],
    [{ queries: [{ name: 'a', query: 'up' }, { name: 'a', query: 'up' }] }, ['spec.queries[1].name: a is used twice']],
    [{ queries: [{ name: 'a', query: '' }] }, ['spec.queries[0].query: a non-empty PromQL expression of at most 8192 characters']],
    [{ queries: [{ name: 'a', query: 'up{pod={{pod}}}' }] }, [expect.stringMatching(/^spec\.queries\[0\]\.query: a PromQL expression: placeholder \{\{pod\}\} must stand inside/)]],
    [{ http: [{ name: 'a', url: 'ftp://x' }] }, [expect.stringMatching(/^spec\.http\[0\]\.url: an http\(s\) URL: /)]],
    [{ compare: [{ name: 'a', query: 'rate(e[1m])' }] }, [expect.stringMatching(/^spec\.compare\[0\]\.query: a PromQL expression .* with \{\{revision\}\}/)]],
    [{ compare: [{ name: 'a', query: 'e{r="{{revision}}"}', criteria: 'max-ratio=0' }] }, [expect.stringMatching(/^spec\.compare\[0\]\.criteria: .*\(max-ratio=0: a decimal from 1 to 100\)$/)]],
    [{ queries: [{ name: 'a', query: 'up', dryRun: 'yes' }] }, ['spec.queries[0].dryRun: true or false']],
    [{ queries: [{ name: 'a', query: 'up' }], periodSeconds: 0 }, ['spec.periodSeconds: an integer from 1 to 86400']],
    [{ queries: [{ name: 'a', query: 'up' }], successThreshold: '3' }, ['spec.successThreshold: an integer from 1 to 1000']],
    [{ queries: Array.from({ length: 11 }, (_, i) => ({ name: `q${i}`, query: 'up' })) }, ['spec: at most 10 gates in all (11)']],
    [{ jobs: [{ name: 'smoke', runs: 'sometimes', template: { spec: { template: { spec: { containers: [{}] } } } } }] }, ['spec.jobs[0].runs: step (once per step, the default) or check (at every check)']],
    [{ jobs: [{ name: 'smoke', template: {} }] }, ['spec.jobs[0].template: a Job template with a spec (batch/v1 JobSpec)']],
    [{ hooks: [{ name: 'switchover', when: 'before', url: 'http://hooks/switchover' }] }, ['spec.hooks[0].when: prepare (before a pod is replaced) or settle (after it is back on the new revision)']],
    [{ hooks: [{ name: 'switchover', when: 'prepare' }] }, ['spec.hooks[0]: exactly one of template (a Job) or url (an HTTP POST)']],
    [{ hooks: [{ name: 'switchover', when: 'prepare', url: 'http://hooks/x', template: { spec: { template: { spec: { containers: [{ name: 'h', image: 'x' }] } } } } }] }, ['spec.hooks[0]: exactly one of template (a Job) or url (an HTTP POST)']],
    [{ hooks: [{ name: 'switchover', when: 'prepare', url: 'http://hooks/{{pod}}' }] }, ['spec.hooks[0].url: no placeholders (the POST\'s body says what the hook acts on)']],
    [{ hooks: [{ name: 'switchover', when: 'prepare', url: 'http://hooks/x', timeoutSeconds: 600 }] }, ['spec.hooks[0].timeoutSeconds: an integer from 1 to 120 for an HTTP hook']],
    [{ hooks: [{ name: 'switchover', when: 'prepare', template: { spec: {} } }] }, ['spec.hooks[0].template.spec.template.spec.containers: at least one container']],
    [{ hooks: [{ name: 'a', when: 'prepare', url: 'http://hooks.db/a' }, { name: 'a', when: 'settle', url: 'http://hooks.db/a' }] }, ['spec.hooks[1].name: a is used twice']],
    [{ hooks: Array.from({ length: 5 }, (_, i) => ({ name: `h${i}`, when: 'prepare', url: 'http://hooks.db/a' })) }, ['spec.hooks: at most 4 (5)']],
  ])('%j is refused: %j', (spec, problems) => expect(parsePolicySpec(spec)).toEqual(problems));

  it('reads a Job gate: once per step unless it says, with its timeout', () => {
    const template = { spec: { template: { spec: { containers: [{ name: 'check', image: 'busybox', command: ['true'] }] } } } };
    const p = parsePolicySpec({ jobs: [{ name: 'smoke', template }, { name: 'verify', runs: 'check', timeoutSeconds: 30, template, dryRun: true }] });
    expect(p).toMatchObject({ jobs: [{ name: 'job.smoke', runs: 'step', timeoutSeconds: 600, template }, { name: 'job.verify', runs: 'check', timeoutSeconds: 30 }], dryRun: ['job.verify'] });
  });

  it("reads Argo analysis: a policy of it alone is one gate; its problems under spec.analysis", () => {
    expect(parsePolicySpec({ analysis: { templates: [{ templateName: 'success-rate' }], args: [{ name: 'service-name', value: 'db' }] } })).toMatchObject({ analysis: { templates: [{ templateName: 'success-rate' }], args: [{ name: 'service-name', value: 'db' }] }, queries: [] });
    expect(parsePolicySpec({ analysis: { templates: [] } })).toEqual(['spec.analysis.templates: a list of 1 to 10 templates']);
  });

  it('reads a checkpoint: a policy of a checkpoint alone, its problems under spec.checkpoint', () => {
    expect(parsePolicySpec({ checkpoint: { volumeSnapshotClassName: 'csi', claims: ['data'] } })).toMatchObject({ checkpoint: { name: 'checkpoint', className: 'csi', claims: ['data'], waitFor: 'creationTime', timeoutSeconds: 600, keep: 3 }, queries: [] });
    expect(parsePolicySpec({ queries: [{ name: 'up', query: 'up' }], checkpoint: { waitFor: 'now' } })).toEqual(['spec.checkpoint.volumeSnapshotClassName: the name of a VolumeSnapshotClass', 'spec.checkpoint.waitFor: creationTime (the cut; the default) or readyToUse (the copy is done)']);
  });

  it('reads hooks: a Job or an HTTP POST, prepare or settle, a policy of hooks alone', () => {
    const template = { spec: { template: { spec: { containers: [{ name: 'h', image: 'x' }] } } } };
    const p = parsePolicySpec({ hooks: [{ name: 'switchover', when: 'prepare', timeoutSeconds: 120, template }, { name: 'caught-up', when: 'settle', url: 'http://hooks.db/settle' }] });
    expect(p).toMatchObject({
      hooks: [
        { name: 'hook.switchover', when: 'prepare', timeoutSeconds: 120, template },
        { name: 'hook.caught-up', when: 'settle', timeoutSeconds: 30, url: 'http://hooks.db/settle' },
      ],
      queries: [],
    });
  });
});
