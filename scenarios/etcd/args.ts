// The command line of npm run scenario:etcd, read and checked before anything touches the cluster: a
// scenario, the system that rolls it (not every system runs every scenario), the write rate.
import { readCommon } from '../common/args.js';
import type { System } from './manifest.js';
import { SCENARIOS, type ScenarioName } from './scenarios.js';

/**
 * SYSTEMS are the systems each scenario runs with (controller-kill needs a controller of ours; the demo is
 * ours; damaged-release compares ours with and without its checkpoint policy, and plain).
 */
export const SYSTEMS: Record<ScenarioName, System[]> = {
  upgrade: ['ours', 'plain', 'grafana', 'kruise'],
  'bad-release': ['ours', 'plain', 'grafana', 'kruise'],
  zones: ['ours', 'plain', 'grafana'],
  'controller-kill': ['ours', 'plain'],
  demo: ['ours'],
  'damaged-release': ['ours', 'ours-no-checkpoint', 'plain'],
};

/** Args is a checked command line. */
export interface Args {
  name: ScenarioName;
  system: System;
  rate: number;
  keep: boolean;
  quiet: boolean;
  e2eDir?: string;
}

/** USAGE is printed with every refusal. */
export const USAGE = `usage: npm run scenario:etcd -- <${SCENARIOS.join('|')}> [--system ours|ours-no-checkpoint|plain|grafana|kruise] [--rate 1..500] [--keep] [--quiet]
  systems: ${Object.entries(SYSTEMS).map(([n, s]) => `${n}: ${s.join(', ')}`).join('; ')}`;

/** readArgs checks a command line: the arguments, or why they are refused (one line, then USAGE). */
export function readArgs(argv: string[]): Args | { error: string } {
  const c = readCommon(argv);
  if ('error' in c) return c;
  const name = c.positionals[0] as ScenarioName | undefined;
  if (c.positionals.length !== 1 || !name || !SCENARIOS.includes(name)) return { error: `one scenario, one of ${SCENARIOS.join(', ')}; got ${JSON.stringify(c.positionals)}` };
  const system = c.system as System;
  if (!SYSTEMS[name].includes(system)) return { error: `${name} runs with --system ${SYSTEMS[name].join(' or ')}; got ${JSON.stringify(c.system)}` };
  return { name, system, rate: c.rate, keep: c.keep, quiet: c.quiet, ...(c.e2eDir ? { e2eDir: c.e2eDir } : {}) };
}
