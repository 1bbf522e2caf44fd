// The command line of npm run scenario:postgres, checked before anything touches the cluster.
import { readCommon } from '../common/args.js';

export const SCENARIOS = ['upgrade', 'bad-release', 'bad-migration'] as const;
export type ScenarioName = (typeof SCENARIOS)[number];
/**
 * ours: phased-rollout with the recipe (for upgrade and bad-release with its switchover hook, for
 * bad-migration with its checkpoint); ours-no-hooks: the Patroni recipe without its hook;
 * ours-no-checkpoint: the single member's recipe without its checkpoint; plain: the StatefulSet controller alone.
 */
export const SYSTEMS = ['ours', 'ours-no-hooks', 'ours-no-checkpoint', 'plain'] as const;
export type System = (typeof SYSTEMS)[number];

/** SYSTEMS_OF: the systems each scenario compares (a hook is Patroni's, a checkpoint the single member's). */
export const SYSTEMS_OF: Record<ScenarioName, readonly System[]> = {
  upgrade: ['ours', 'ours-no-hooks', 'plain'],
  'bad-release': ['ours', 'ours-no-hooks', 'plain'],
  'bad-migration': ['ours', 'ours-no-checkpoint', 'plain'],
};

export interface Args {
  name: ScenarioName;
  system: System;
  rate: number;
  keep: boolean;
  quiet: boolean;
  e2eDir?: string;
}

export const USAGE = `usage: npm run scenario:postgres -- <${SCENARIOS.join('|')}> [--system ${SYSTEMS.join('|')}] [--rate 1..500] [--keep] [--quiet]
  upgrade, bad-release: --system ${SYSTEMS_OF.upgrade.join('|')}; bad-migration: --system ${SYSTEMS_OF['bad-migration'].join('|')}`;

/** readArgs checks a command line: the arguments, or why they are refused (one line, then USAGE). */
export function readArgs(argv: string[]): Args | { error: string } {
  const c = readCommon(argv);
  if ('error' in c) return c;
  const name = c.positionals[0] as ScenarioName | undefined;
  if (c.positionals.length !== 1 || !name || !SCENARIOS.includes(name)) return { error: `one scenario, one of ${SCENARIOS.join(', ')}; got ${JSON.stringify(c.positionals)}` };
  const system = c.system as System;
  const systems = SYSTEMS_OF[name];
  if (!systems.includes(system)) return { error: `--system is one of ${systems.join(', ')} for ${name}; got ${JSON.stringify(c.system)}` };
  return { name, system, rate: c.rate, keep: c.keep, quiet: c.quiet, ...(c.e2eDir ? { e2eDir: c.e2eDir } : {}) };
}
