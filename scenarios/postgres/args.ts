// The command line of npm run scenario:postgres, checked before anything touches the cluster.
import { readCommon } from '../common/args.js';

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
  const c = readCommon(argv);
  if ('error' in c) return c;
  const name = c.positionals[0] as ScenarioName | undefined;
  if (c.positionals.length !== 1 || !name || !SCENARIOS.includes(name)) return { error: `one scenario, one of ${SCENARIOS.join(', ')}; got ${JSON.stringify(c.positionals)}` };
  const system = c.system as System;
  if (!SYSTEMS.includes(system)) return { error: `--system is one of ${SYSTEMS.join(', ')}; got ${JSON.stringify(c.system)}` };
  return { name, system, rate: c.rate, keep: c.keep, quiet: c.quiet, ...(c.e2eDir ? { e2eDir: c.e2eDir } : {}) };
}
