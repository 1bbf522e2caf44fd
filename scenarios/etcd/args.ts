// The command line of npm run scenario:etcd, read and checked before anything touches the cluster: a
// scenario, the system that rolls it (not every system runs every scenario), the write rate.
import { parseArgs } from 'node:util';
import type { System } from './manifest.js';
import { SCENARIOS, type ScenarioName } from './scenarios.js';

/** SYSTEMS are the systems each scenario runs with (controller-kill needs a controller of ours; the demo is ours). */
export const SYSTEMS: Record<ScenarioName, System[]> = {
  upgrade: ['ours', 'plain', 'grafana'],
  'bad-release': ['ours', 'plain', 'grafana'],
  zones: ['ours', 'plain', 'grafana'],
  'controller-kill': ['ours', 'plain'],
  demo: ['ours'],
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
export const USAGE = `usage: npm run scenario:etcd -- <${SCENARIOS.join('|')}> [--system ours|plain|grafana] [--rate 1..500] [--keep] [--quiet]
  systems: ${Object.entries(SYSTEMS).map(([n, s]) => `${n}: ${s.join(', ')}`).join('; ')}`;

/** readArgs checks a command line: the arguments, or why they are refused (one line, then USAGE). */
export function readArgs(argv: string[]): Args | { error: string } {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { system: { type: 'string', default: 'ours' }, rate: { type: 'string', default: '20' }, keep: { type: 'boolean', default: false }, 'e2e-dir': { type: 'string' }, quiet: { type: 'boolean', default: false } },
    });
  } catch (e) {
    return { error: (e as Error).message };
  }
  const { values, positionals } = parsed;
  const name = positionals[0] as ScenarioName | undefined;
  if (positionals.length !== 1 || !name || !SCENARIOS.includes(name)) return { error: `one scenario, one of ${SCENARIOS.join(', ')}; got ${JSON.stringify(positionals)}` };
  const system = values.system as System;
  if (!SYSTEMS[name].includes(system)) return { error: `${name} runs with --system ${SYSTEMS[name].join(' or ')}; got ${JSON.stringify(values.system)}` };
  // Digits only: "20" is twenty writes a second, "2e1", "0x14" and "20/s" are refused rather than guessed.
  const rate = /^\d{1,3}$/.test(values.rate) ? Number(values.rate) : NaN;
  if (!(rate >= 1 && rate <= 500)) return { error: `--rate is writes per second, an integer 1..500; got ${JSON.stringify(values.rate)}` };
  return { name, system, rate, keep: values.keep, quiet: values.quiet, ...(values['e2e-dir'] ? { e2eDir: values['e2e-dir'] } : {}) };
}
