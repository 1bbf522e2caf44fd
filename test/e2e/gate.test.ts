// The gate client against the real Prometheus of the harness (series from the gate exporter), and the
// credentials-Secret rule of the controller on the real cluster.
import { jest } from '@jest/globals';
import { KEYS } from '../../src/annotations.js';
import { CREDENTIALS_LABEL } from '../../src/k8s/credentials.js';
import { queryGate } from '../../src/prometheus/client.js';
import { eventually } from '../support/eventually.js';
import { statefulSet } from '../support/statefulset.js';
import { createNamespace, deleteNamespace, env, getJson, kubectlOk, setGate } from './cluster.js';

jest.setTimeout(120_000);

const q = (query: string) => queryGate({ prometheusUrl: env().PROMETHEUS_URL, query, timeoutMs: 5000 });

describe('queryGate against the real Prometheus', () => {
  it('passes, fails and errors as SPEC §4.3 says', async () => {
    await setGate('real', '1');
    await eventually(async () => expect((await q('e2e_gate{name="real"} == 1')).result).toBe('pass'), 30_000, 300);
    await setGate('real', '0');
    await eventually(async () => expect((await q('e2e_gate{name="real"} == 1')).result).toBe('fail'), 30_000, 300);
    // A zero sample is still a sample: the query, not the value, decides.
    expect((await q('e2e_gate{name="real"}')).result).toBe('pass');
    await setGate('real', 'NaN');
    await eventually(async () => expect(await q('e2e_gate{name="real"}')).toEqual({ result: 'fail', detail: 'only NaN samples (1)', value: 'NaN' }), 30_000, 300);
    await setGate('real', 'absent');
    await eventually(async () => expect(await q('e2e_gate{name="real"}')).toEqual({ result: 'fail', detail: 'query returned no samples', value: 'no samples' }), 30_000, 300);
    expect((await q('scalar(vector(2))')).result).toBe('pass');
    expect((await q('scalar(vector(0))')).result).toBe('fail');
    expect((await q('0/0')).result).toBe('fail');
    expect((await q('e2e_gate{name="real"}[5m]')).result).toMatch(/pass|fail/); // a matrix is judged, not refused
    const bad = await q('sum(');
    expect(bad.result).toBe('error');
    expect(bad.detail).toContain('bad_data');
  });
});

describe('prometheus-secret', () => {
  let ns: string;
  beforeAll(async () => {
    ns = await createNamespace('e2e-secret');
  });
  afterAll(() => deleteNamespace(ns));

  it('refuses a Secret without the credentials label (status and Event), and uses it once labelled', async () => {
    await kubectlOk(['create', 'secret', 'generic', 'prom-creds', '-n', ns, '--from-literal=token=s3cret-token-value']);
    const name = 'creds';
    await setGate(name, '1');
    const ann = { [KEYS.enabled]: 'true', [KEYS.query]: `e2e_gate{name="${name}"} == 1`, [KEYS.initialDelaySeconds]: '0', [KEYS.periodSeconds]: '1', [KEYS.successThreshold]: '1', [KEYS.prometheusSecret]: 'prom-creds' };
    const m = statefulSet(name, { annotations: ann, replicas: 2 });
    await kubectlOk(['apply', '-f', '-'], { ...m, metadata: { ...m.metadata, namespace: ns } });
    await eventually(async () => expect((await getJson(['statefulset', name, '-n', ns])).status.readyReplicas ?? 0).toBe(2), 60_000, 250);
    const m2 = statefulSet(name, { annotations: ann, replicas: 2, image: 'registry.example/app:2' });
    await kubectlOk(['apply', '-f', '-'], { ...m2, metadata: { ...m2.metadata, namespace: ns } });
    const status = async () => JSON.parse((await getJson(['statefulset', name, '-n', ns])).metadata.annotations[KEYS.status] ?? 'null');
    await eventually(async () => expect(await status()).toMatchObject({ phase: 'Checking', gate: 'error', message: expect.stringContaining(`is not labelled ${CREDENTIALS_LABEL}`) }), 30_000, 300);
    const events = await getJson<{ items: { reason: string; message: string }[] }>(['events', '-n', ns]);
    const refused = events.items.filter((e) => e.reason === 'PrometheusError');
    expect(refused.length).toBeGreaterThan(0);
    // The secret's value appears nowhere the user or the logs can see.
    expect(JSON.stringify(events.items)).not.toContain('s3cret');
    expect(JSON.stringify(await status())).not.toContain('s3cret');
    expect((await getJson(['statefulset', name, '-n', ns])).spec.updateStrategy.rollingUpdate.partition).toBe(2);

    await kubectlOk(['label', 'secret', 'prom-creds', '-n', ns, `${CREDENTIALS_LABEL}=true`]);
    await eventually(async () => expect(await status()).toMatchObject({ phase: 'Completed' }), 60_000, 300);
  });
});
