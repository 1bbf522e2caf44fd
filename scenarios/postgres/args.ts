// The command line of npm run scenario:postgres, checked before anything touches the cluster.
import { parseArgs } from 'node:util';

export const SCENARIOS = ['upgrade', 'bad-release'] as const;
export type ScenarioName = (typeof SCENARIOS)[number];
/** ours: phased-rollout with the recipe and its switchover hook; ours-no-hooks: the same gates, no hook; plain: the StatefulSet controller alone. */
export const SYSTEMS = ['ours', 'ours-no-hooks', 'plain'] as const;
export type System = (typeof SYSTEMS)[number];

export interface Args {
  name: ScenarioName;
  system: System;
  rate: number;
  keep: boolean;
  quiet: boolean;
  e2eDir?: string;
}

export const USAGE = `usage: npm run scenario:postgres -- <${SCENARIOS.join('|')}> [--system ${SYSTEMS.join('|')}] [--rate 1..500] [--keep] [--quiet]`;

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
  if (!SYSTEMS.includes(system)) return { error: `--system is one of ${SYSTEMS.join(', ')}; got ${JSON.stringify(values.system)}` };
  const rate = /^\d{1,3}$/.test(values.rate) ? Number(values.rate) : NaN;
  if (!(rate >= 1 && rate <= 500)) return { error: `--rate is writes per second, an integer 1..500; got ${JSON.stringify(values.rate)}` };
  return { name, system, rate, keep: values.keep, quiet: values.quiet, ...(values['e2e-dir'] ? { e2eDir: values['e2e-dir'] } : {}) };
}
