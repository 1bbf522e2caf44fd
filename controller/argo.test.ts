// Argo analysis gates' shell with fake API clients, a scripted Prometheus and a clock: one run per step,
// measured as the judge asks, its verdict once it ends; a run that cannot be made holds with the reason.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { quietLog } from '../test/support/quiet-log.js';
import { analysisPrometheus, AnalysisRuns } from './argo.js';
import type { ReconcileDeps } from './deps.js';
import type { AnalysisCheck } from '../src/rollout/types.js';

const target = { namespace: 'team', name: 'db', uid: 'sts-uid' };
const notFound = () => Object.assign(new Error('HTTP-Code: 404'), { code: 404 });
const template = (over: Record<string, unknown> = {}) => ({
  spec: {
    args: [{ name: 'gate' }],
    metrics: [{ name: 'up', interval: '10s', count: 3, successCondition: 'result[0] == 1', failureLimit: 0, provider: { prometheus: { query: 'e2e_gate{name="{{args.gate}}"}' } }, ...over }],
  },
});

function world(templates: Record<string, unknown>, answers: number[]) {
  let now = 1_000_000;
  const asked: { url: string; query: string; params?: Record<string, string> }[] = [];
  const objects = {
    getNamespacedCustomObject: async ({ name, namespace }: { name: string; namespace: string }) => {
      const t = templates[`${namespace}/${name}`];
      if (!t) throw notFound();
      return structuredClone(t);
    },
    getClusterCustomObject: async ({ name }: { name: string }) => {
      const t = templates[`cluster/${name}`];
      if (!t) throw notFound();
      return structuredClone(t);
    },
  } as unknown as CustomObjectsApi;
  const d = {
    objects,
    core: {} as CoreV1Api,
    log: quietLog().log,
    prometheusTimeoutMs: 5000,
    now: () => now,
    queryData: async (q: { prometheusUrl: string; query: string; params?: Record<string, string> }) => {
      asked.push({ url: q.prometheusUrl, query: q.query, ...(q.params ? { params: q.params } : {}) });
      const v = answers.shift();
      return v === undefined ? { error: 'no answer' } : { data: { resultType: 'vector', result: [{ metric: {}, value: [now / 1000, String(v)] }] } };
    },
  } as unknown as ReconcileDeps;
  return { d, asked, tick: (ms: number) => (now += ms) };
}

const check = (step: string, templates = [{ templateName: 'up' }]): AnalysisCheck => ({
  name: 'team-gates/analysis',
  ref: { templates, args: [{ name: 'gate', value: 'db' }] },
  step,
  fields: { name: 'db', namespace: 'team', uid: 'sts-uid', labels: {}, annotations: {}, replicas: 3, latest: 'db-2' },
});
const where = analysisPrometheus({ operatorGates: [], allowed: ['http://prom:9090/'], ownUrl: 'http://prom:9090' });

describe('Argo analysis runs beside the checks', () => {
  it('measures when due, runs until count, then passes the step; later checks of the step keep the verdict', async () => {
    const { d, asked, tick } = world({ 'team/up': template() }, [1, 1, 1]);
    const runs = new AnalysisRuns();
    expect(await runs.advance(d, target, [check('s1')], where)).toEqual({ results: [], running: ['team-gates/analysis'], problems: [] });
    expect(asked).toEqual([{ url: 'http://prom:9090', query: 'e2e_gate{name="db"}' }]);
    tick(2000); // not due: no measurement
    await runs.advance(d, target, [check('s1')], where);
    expect(asked).toHaveLength(1);
    tick(8001); // Argo measures once the interval has passed, strictly after it
    await runs.advance(d, target, [check('s1')], where);
    tick(10_001);
    const done = await runs.advance(d, target, [check('s1')], where);
    expect(done.results).toEqual([
      { name: 'team-gates/analysis', verdict: expect.objectContaining({ result: 'pass', value: 'Successful' }) },
      // Each metric has a row of its own for status and the dashboard, never a verdict of its own.
      { name: 'team-gates/analysis/up', partOf: 'team-gates/analysis', verdict: { result: 'pass', detail: 'Successful (✔3 ✖0 ?0 ⚠0 of 3)', value: '[1]' } },
    ]);
    expect(asked).toHaveLength(3);
    tick(10_000);
    expect((await runs.advance(d, target, [check('s1')], where)).results[0]?.verdict.result).toBe('pass');
    expect(asked).toHaveLength(3);
  });

  it('a failed measurement past failureLimit ends the run Failed: a decisive fail', async () => {
    const { d } = world({ 'team/up': template() }, [0]);
    const out = await new AnalysisRuns().advance(d, target, [check('s1')], where);
    expect(out.results[0]).toEqual({ name: 'team-gates/analysis', verdict: expect.objectContaining({ result: 'fail', value: 'Failed', decisive: true }) });
    expect(out.results[1]).toMatchObject({ name: 'team-gates/analysis/up', partOf: 'team-gates/analysis', verdict: { result: 'fail', value: '[0]' } });
  });

  it('a new step is a new run: the measurements of the last step count for nothing', async () => {
    const { d, asked, tick } = world({ 'team/up': template({ count: 1, interval: undefined }) }, [1, 1]);
    const runs = new AnalysisRuns();
    expect((await runs.advance(d, target, [check('s1')], where)).results[0]?.verdict.result).toBe('pass');
    tick(1000);
    expect((await runs.advance(d, target, [check('s2')], where)).results[0]?.verdict.result).toBe('pass');
    expect(asked).toHaveLength(2);
    runs.forget('team', 'db');
    expect(runs.size).toBe(0);
  });

  it.each<[string, Record<string, unknown>, AnalysisCheck, string]>([
    ['a missing template', {}, check('s1'), 'AnalysisTemplate up not found'],
    ['a refused provider', { 'cluster/up': { spec: { metrics: [{ name: 'm', provider: { newRelic: { query: 'x' } } }] } } }, check('s1', [{ templateName: 'up', clusterScope: true } as never]), 'ClusterAnalysisTemplate up, metric m: provider.newRelic: the newRelic provider is not run here'],
    ['a job metric with no pod template', { 'team/up': { spec: { metrics: [{ name: 'j', provider: { job: { spec: {} } } }] } } }, check('s1'), 'AnalysisTemplate up, metric j: provider.job.spec.template.spec.containers: at least one container'],
    ['a web URL not under --allowed-gate-urls, shown as the template wrote it', { 'team/up': { spec: { args: [{ name: 'gate' }], metrics: [{ name: 'w', provider: { web: { url: 'http://elsewhere/{{args.gate}}' } } }] } } }, check('s1'), 'AnalysisTemplate up, metric w: provider.web.url http://elsewhere/{{args.gate}}: not under'],
    ['a Prometheus address not allowed (a hold, never measured as errors)', { 'team/up': template({ provider: { prometheus: { address: 'http://elsewhere:9090', query: 'up' } } }) }, check('s1'), 'provider.prometheus.address http://elsewhere:9090: address http://elsewhere:9090 is not under'],
    ['a web body with GET', { 'team/up': { spec: { metrics: [{ name: 'w', provider: { web: { url: 'http://health.team/x', body: 'x' } } }] } } }, check('s1'), 'provider.web: Body/JSONBody can only be used with POST or PUT'],
    ['a Host header', { 'team/up': { spec: { metrics: [{ name: 'w', provider: { web: { url: 'http://health.team/x', headers: [{ key: 'Host', value: 'admin.internal' }] } } }] } } }, check('s1'), 'provider.web.headers: the header Host is not sent from a template'],
    ["a ClusterRolloutGate's analysis reaching a namespaced template", { 'cluster/slo': { spec: { templates: [{ templateName: 'up' }] } }, 'team/up': template() }, { ...check('s1', [{ templateName: 'slo', clusterScope: true } as never]), clusterOnly: true }, 'AnalysisTemplate up, metric up: a ClusterRolloutGate\'s analysis runs only ClusterAnalysisTemplates'],
    ['an invalid metric, with Argo\'s reason', { 'team/up': template({ count: 1, failureLimit: 2 }) }, check('s1'), 'Analysis spec invalid'],
  ])('holds, measuring nothing, for %s', async (_n, templates, c, why) => {
    const { d, asked } = world(templates, [1]);
    Object.assign(d, { allowedGateUrls: ['http://health.team/'], allowedPrometheusUrls: ['http://prom:9090/'] });
    const runs = new AnalysisRuns();
    const out = await runs.advance(d, target, [c], where);
    expect(out.problems).toEqual([{ name: 'team-gates/analysis', problem: expect.stringContaining(why) }]);
    expect(asked).toEqual([]);
    expect(runs.newProblem(target, 'team-gates/analysis', out.problems[0]!.problem)).toBe(true);
    expect(runs.newProblem(target, 'team-gates/analysis', out.problems[0]!.problem)).toBe(false);
  });

  it("asks a web metric as Argo's web provider does: method, headers from args, jsonBody, and the jsonPath's value judged", async () => {
    const web = { url: 'http://health.team/{{args.gate}}', method: 'POST', headers: [{ key: 'Authorization', value: 'Bearer {{args.gate}}' }], jsonBody: { check: 'replication' }, jsonPath: '{$.lag}' };
    const { d } = world({ 'team/up': { spec: { args: [{ name: 'gate' }], metrics: [{ name: 'lag', successCondition: 'result < 5', provider: { web } }] } } }, []);
    const sent: unknown[] = [];
    Object.assign(d, {
      allowedGateUrls: ['http://health.team/'],
      webRequest: async (url: URL, o: unknown) => {
        sent.push({ url: url.href, o });
        return { status: 200, body: '{"lag": 2}' };
      },
    });
    const out = await new AnalysisRuns().advance(d, target, [check('s1')], where);
    expect(out.results[0]).toEqual({ name: 'team-gates/analysis', verdict: expect.objectContaining({ result: 'pass', value: 'Successful' }) });
    expect(out.results[1]).toMatchObject({ name: 'team-gates/analysis/lag', verdict: { result: 'pass', value: '2' } });
    expect(sent).toEqual([{ url: 'http://health.team/db', o: expect.objectContaining({ timeoutMs: 10_000, request: { method: 'POST', headers: { Authorization: 'Bearer db', 'content-type': 'application/json' }, body: '{"check":"replication"}' } }) }]);
  });

  it('sends an arg from a Secret only where the operator listed: a web URL under --allowed-gate-urls, a Prometheus it named', async () => {
    const secretArg = { name: 'gate', valueFrom: { secretKeyRef: { name: 'tok', key: 'token' } } };
    const core = { readNamespacedSecret: async () => ({ metadata: { labels: { 'phased-rollout.io/gate-credentials': 'true' } }, data: { token: Buffer.from('s3cret').toString('base64') } }) } as unknown as CoreV1Api;
    const web = { 'team/up': { spec: { args: [{ name: 'gate' }], metrics: [{ name: 'w', provider: { web: { url: 'http://health.team/x', headers: [{ key: 'X-Token', value: '{{args.gate}}' }] } } }] } } };
    const withSecret = { ...check('s1'), ref: { templates: [{ templateName: 'up' }], args: [secretArg] } };
    // No list: any URL may be asked, but no Secret goes to one.
    const open = world(web, []);
    Object.assign(open.d, { core });
    const refused = await new AnalysisRuns().advance(open.d, target, [withSecret], where);
    expect(refused.problems[0]?.problem).toContain('an arg from a Secret goes only to a URL under');
    expect(refused.problems[0]?.problem).not.toContain('s3cret');
    // Listed: it goes.
    const sent: unknown[] = [];
    Object.assign(open.d, { allowedGateUrls: ['http://health.team/'], webRequest: async (_u: URL, o: { request: { headers: Record<string, string> } }) => (sent.push(o.request.headers), { status: 200, body: '{}' }) });
    expect((await new AnalysisRuns().advance(open.d, target, [withSecret], where)).results[0]?.verdict.result).toBe('pass');
    expect(sent).toEqual([{ 'X-Token': 's3cret' }]);
    // Prometheus: the StatefulSet's own URL is not on a list here, so a Secret's value does not go there.
    const prom = world({ 'team/up': template() }, [1]);
    Object.assign(prom.d, { core });
    expect((await new AnalysisRuns().advance(prom.d, target, [withSecret], where)).problems[0]?.problem).toContain('an arg from a Secret goes only to');
  });

  it('sends the web request for real: method, headers and body reach a loopback server, a 3xx is not followed', async () => {
    const seen: { method?: string; auth?: string; type?: string; body: string }[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push({ method: req.method, auth: req.headers.authorization, type: req.headers['content-type'], body });
        if (req.url === '/moved') return void res.writeHead(302, { location: '/ok' }).end();
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok": true}');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const metric = (path: string) => ({ name: 'ok', successCondition: 'result == true', provider: { web: { url: `${base}${path}`, method: 'PUT', headers: [{ key: 'Authorization', value: 'Bearer {{args.gate}}' }], jsonBody: { a: 1 }, jsonPath: '{$.ok}' } } });
      const { d } = world({ 'team/up': { spec: { args: [{ name: 'gate' }], metrics: [metric('/ok')] } }, 'team/moved': { spec: { args: [{ name: 'gate' }], metrics: [{ ...metric('/moved'), consecutiveErrorLimit: 0 }] } } }, []);
      const ok = await new AnalysisRuns().advance(d, target, [check('s1')], where);
      expect(ok.results[0]?.verdict).toMatchObject({ result: 'pass' });
      expect(seen[0]).toEqual({ method: 'PUT', auth: 'Bearer db', type: 'application/json', body: '{"a":1}' });
      const moved = await new AnalysisRuns().advance(d, target, [check('s1', [{ templateName: 'moved' }])], where);
      expect(moved.results[0]?.verdict).toMatchObject({ result: 'fail', value: 'Error' });
      expect(moved.results[0]?.verdict.detail).toContain('received non 2xx response code: 302');
      expect(seen).toHaveLength(2);
    } finally {
      server.close();
    }
  });

  it('a job metric runs a Job gate\'s Job per measurement: Running while it runs, its outcome counted once; a failed Job fails the run', async () => {
    const jobSpec = { template: { spec: { containers: [{ name: 'check', image: 'busybox', args: ['{{args.gate}}'] }] } } };
    const { d, tick } = world({ 'team/smoke': { spec: { args: [{ name: 'gate' }], metrics: [{ name: 'smoke', count: 2, interval: '5s', provider: { job: { spec: jobSpec } } }] } } }, []);
    // The Job controller, acted by the test: Jobs are listed with their status as the test sets it.
    const jobs = new Map<string, Record<string, any>>();
    const deleted: string[] = [];
    (d as { batch: unknown }).batch = {
      listNamespacedJob: async () => ({ items: [...jobs.values()].map((j) => structuredClone(j)) }),
      createNamespacedJob: async ({ body }: { body: Record<string, any> }) => {
        const uid = `uid-${jobs.size + 1}`;
        jobs.set(body.metadata.name, { ...body, metadata: { ...body.metadata, uid, resourceVersion: '1', creationTimestamp: new Date(0).toISOString() } });
        return { metadata: { uid } };
      },
      patchNamespacedJob: async ({ name, body }: { name: string; body: { metadata: { labels: Record<string, string> } } }) => {
        const j = jobs.get(name)!;
        j.metadata.labels = { ...j.metadata.labels, ...body.metadata.labels };
        return j;
      },
      deleteNamespacedJob: async ({ name }: { name: string }) => {
        deleted.push(name);
        jobs.delete(name);
      },
    };
    (d as { events: unknown }).events = { emit: async () => undefined };
    const c = { ...check('s1', [{ templateName: 'smoke' }]), job: { revision: 'db-2', partition: 2, pod: 'db-2', pods: 'p' } };
    const runs = new AnalysisRuns();
    const finish = (type: 'Complete' | 'Failed') => {
      for (const j of jobs.values()) if (!j.status) j.status = { conditions: [{ type, status: 'True' }] };
    };
    expect((await runs.advance(d, target, [c], where)).running).toEqual(['team-gates/analysis']);
    expect(jobs.size).toBe(1);
    const first = [...jobs.values()][0]!;
    // A Job gate's Job: owned by the StatefulSet, labelled, the arg substituted, its step on it.
    expect(first.metadata).toMatchObject({ labels: { 'phased-rollout.io/statefulset': 'db' }, annotations: { 'phased-rollout.io/gate': 'team-gates/analysis/smoke', 'phased-rollout.io/revision': 'db-2', 'phased-rollout.io/partition': '2' }, ownerReferences: [{ kind: 'StatefulSet', uid: 'sts-uid' }] });
    expect(first.spec.template.spec.containers[0].args).toEqual(['db']);
    expect(first.spec.activeDeadlineSeconds).toBe(600);
    tick(2000);
    expect((await runs.advance(d, target, [c], where)).running).toEqual(['team-gates/analysis']);
    expect(jobs.size).toBe(1); // resumed, not a second Job
    finish('Complete');
    tick(2000);
    expect((await runs.advance(d, target, [c], where)).running).toEqual(['team-gates/analysis']);
    tick(6000);
    await runs.advance(d, target, [c], where); // the second measurement: a second Job
    expect(jobs.size).toBe(2);
    finish('Complete');
    tick(3000);
    const done = await runs.advance(d, target, [c], where);
    expect(done.results[0]).toMatchObject({ name: 'team-gates/analysis', verdict: { result: 'pass', value: 'Successful' } });
    expect(done.results.find((r) => r.name === 'team-gates/analysis/smoke')?.verdict).toMatchObject({ value: 'Complete' });

    // Another step: a failing Job fails the run; a run that stops while a Job runs deletes it.
    const failing = { ...c, step: 's2' };
    await runs.advance(d, target, [failing], where);
    finish('Failed');
    tick(3000);
    const failed = await runs.advance(d, target, [failing], where);
    expect(failed.results[0]?.verdict).toMatchObject({ result: 'fail', value: 'Failed' });
    expect(deleted).toEqual([]);
  });

  it('a Job still running when another metric fails the run is deleted, its measurement Inconclusive (Argo terminates it)', async () => {
    const jobSpec = { template: { spec: { containers: [{ name: 'check', image: 'busybox' }] } } };
    const { d, tick } = world({ 'team/mixed': { spec: { args: [{ name: 'gate' }], metrics: [{ name: 'smoke', provider: { job: { spec: jobSpec } } }, { name: 'up', successCondition: 'result[0] == 1', provider: { prometheus: { query: 'q' } } }] } } }, [0]);
    const jobs = new Map<string, Record<string, any>>();
    const deleted: string[] = [];
    (d as { batch: unknown }).batch = {
      listNamespacedJob: async () => ({ items: [...jobs.values()] }),
      createNamespacedJob: async ({ body }: { body: Record<string, any> }) => {
        jobs.set(body.metadata.name, { ...body, metadata: { ...body.metadata, uid: 'u1', creationTimestamp: new Date(0).toISOString() } });
        return { metadata: { uid: 'u1' } };
      },
      deleteNamespacedJob: async ({ name }: { name: string }) => void deleted.push(name),
    };
    (d as { events: unknown }).events = { emit: async () => undefined };
    const c = { ...check('s1', [{ templateName: 'mixed' }]), job: { revision: 'db-2', partition: 2, pod: 'db-2', pods: 'p' } };
    const runs = new AnalysisRuns();
    expect((await runs.advance(d, target, [c], where)).running).toEqual(['team-gates/analysis']);
    tick(1000);
    const out = await runs.advance(d, target, [c], where);
    expect(deleted).toEqual([...jobs.keys()]);
    expect(out.results[0]?.verdict).toMatchObject({ result: 'fail', value: 'Failed' });
    expect(out.results.find((r) => r.name === 'team-gates/analysis/smoke')?.verdict.detail).toContain('Metric Terminated');
  });

  it('a job metric whose template a Job gate could not run holds the step, naming the field', async () => {
    const { d } = world({ 'team/bad': { spec: { metrics: [{ name: 'smoke', provider: { job: { spec: { template: { spec: { containers: [] } } } } } }] } } }, []);
    const out = await new AnalysisRuns().advance(d, target, [check('s1', [{ templateName: 'bad' }])], where);
    expect(out.problems[0]?.problem).toBe('AnalysisTemplate bad, metric smoke: provider.job.spec.template.spec.containers: at least one container');
  });

  it("sends a platform policy's metrics to the operator's Prometheus, others to an allowed address, with the tenant", () => {
    const tenant = { label: 'namespace', value: 'team' };
    const w = analysisPrometheus({ operatorGates: ['cluster/slo/analysis'], operatorUrl: 'http://platform:9090', allowed: ['http://prom:9090/'], ownUrl: 'http://prom:9090', tenant });
    expect(w('cluster/slo/analysis', 'http://anywhere:9090')).toEqual({ prometheusUrl: 'http://platform:9090', params: { namespace: 'team' } });
    expect(w('team-gates/analysis', undefined)).toEqual({ prometheusUrl: 'http://prom:9090', params: { namespace: 'team' } });
    expect(w('team-gates/analysis', 'http://elsewhere:9090')).toEqual({ error: expect.stringContaining('address http://elsewhere:9090 is not under') });
  });
});
