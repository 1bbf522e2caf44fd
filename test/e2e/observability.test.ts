// The things to look at: the alert rules under `promtool test rules`, the Grafana dashboard's every
// expression parsed by promtool and naming only metrics the running webhook and controller export
// (scraped here), and the chart's PrometheusRule carrying exactly the tested rules.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { jest } from '@jest/globals';
import { loadYaml } from '@kubernetes/client-node';
import { ROOT } from '../support/process.js';
import { env, helm, run } from './cluster.js';

jest.setTimeout(60_000);

const CHART = resolve(ROOT, 'charts', 'phased-rollout');

interface Dashboard {
  panels: { title: string; targets: { expr: string }[] }[];
  templating: { list: { name: string; query?: unknown }[] };
}

const dashboard = (): Dashboard => JSON.parse(readFileSync(resolve(CHART, 'files', 'dashboard.json'), 'utf8')) as Dashboard;

/** exprsOf lists every PromQL expression of the dashboard: panel targets and variable queries. */
function exprsOf(d: Dashboard): string[] {
  const out = d.panels.flatMap((p) => p.targets.map((t) => t.expr));
  for (const v of d.templating.list) {
    const m = typeof v.query === 'string' ? /^label_values\((.*),\s*\w+\)$/.exec(v.query) : null;
    if (m?.[1]) out.push(m[1]);
  }
  return out;
}

/** metricNames returns the metric names an expression selects (histogram series mapped to their family). */
function metricNames(expr: string): string[] {
  const names = new Set<string>();
  for (const m of expr.matchAll(/\b(phased_rollout_[a-z0-9_]+)/g)) names.add((m[1] ?? '').replace(/_(bucket|sum|count)$/, ''));
  // Anything else used as a selector would be a metric of some other exporter.
  for (const m of expr.matchAll(/\b([a-zA-Z_:][\w:]*)\s*[{[]/g)) if (!(m[1] ?? '').startsWith('phased_rollout_') && !['by', 'without', 'on', 'ignoring', 'group_left', 'group_right'].includes(m[1] ?? '')) names.add(m[1] ?? '');
  return [...names];
}

async function exported(): Promise<Set<string>> {
  const e = env();
  const families = new Set<string>();
  for (const url of [e.WEBHOOK_METRICS_URL, e.CONTROLLER_METRICS_URL]) {
    const text = await (await fetch(`${url}/metrics`)).text();
    for (const m of text.matchAll(/^# TYPE (\S+) /gm)) families.add(m[1] ?? '');
  }
  return families;
}

describe('alerts', () => {
  it('every alert passes its promtool unit tests (fires where it should, silent where it should not)', async () => {
    const r = await run(env().PROMTOOL, ['test', 'rules', resolve(ROOT, 'test', 'promtool', 'alerts.test.yaml')]);
    expect(r.stderr + r.stdout).toContain('SUCCESS');
    expect(r.code).toBe(0);
  });

  it('the chart\'s PrometheusRule carries exactly the rules file that was tested', async () => {
    const t = await helm(['template', 'x', CHART, '--set', 'metrics.prometheusRule.enabled=true', '--show-only', 'templates/monitoring.yaml']);
    expect(t.code).toBe(0);
    const rule = loadYaml<{ kind: string; spec: unknown }>(t.stdout.replace(/^---\n/, ''));
    expect(rule.kind).toBe('PrometheusRule');
    expect(rule.spec).toEqual(loadYaml(readFileSync(resolve(CHART, 'files', 'alerts.yaml'), 'utf8')));
  });
});

describe('Grafana dashboard', () => {
  it('every expression parses with promtool', async () => {
    const exprs = exprsOf(dashboard());
    expect(exprs.length).toBeGreaterThanOrEqual(10);
    // promtool parses PromQL when it checks rules: one recording rule per expression. Grafana's
    // $variables stand inside label matcher strings, where any text parses.
    const rules = { groups: [{ name: 'dashboard', rules: exprs.map((expr, i) => ({ record: `dashboard:expr_${i}`, expr })) }] };
    const file = resolve(mkdtempSync(resolve(tmpdir(), 'pr-dash-')), 'rules.json');
    writeFileSync(file, JSON.stringify(rules));
    const r = await run(env().PROMTOOL, ['check', 'rules', file]);
    expect(r.stdout).toContain(`SUCCESS: ${exprs.length} rules found`);
    expect(r.code).toBe(0);
  });

  it('names only metrics that the running webhook and controller export', async () => {
    const have = await exported();
    expect(have.has('phased_rollout_partition')).toBe(true); // the scrape worked
    const used = new Set(exprsOf(dashboard()).flatMap(metricNames));
    expect([...used].filter((n) => !have.has(n))).toEqual([]);
    // Every panel of the issue is there.
    const titles = dashboard().panels.map((p) => p.title);
    expect(titles).toEqual(expect.arrayContaining(['Rollouts by phase', 'Partition vs replicas', 'Gate checks by result', 'Gate check latency', 'Admission decisions', 'Admission latency']));
  });

  it('the metric-name check itself catches a foreign or misspelt metric', () => {
    expect(metricNames('sum(rate(kube_pod_info{x="y"}[5m]))')).toContain('kube_pod_info');
    expect(metricNames('phased_rollout_partitions{a="b"}')).toEqual(['phased_rollout_partitions']);
    expect(metricNames('histogram_quantile(0.9, sum by (le) (rate(phased_rollout_check_duration_seconds_bucket[5m])))')).toEqual(['phased_rollout_check_duration_seconds']);
  });
});
