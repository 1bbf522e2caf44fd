#!/usr/bin/env node
// npm run scenario:postgres -- <upgrade|bad-release|bad-migration> [--system ours|ours-no-hooks|ours-no-checkpoint|plain] [--rate N] [--keep] [--quiet]
// A real 3-member PostgreSQL cluster run by Patroni on the test environment's real node, rolled under a
// steady stream of commits, by phased-rollout with the recipe and its switchover hook (ours), with the
// same gates and no hook (ours-no-hooks), or by the StatefulSet controller alone (plain).
// bad-migration: a single PostgreSQL member (no Patroni) rolled to a release whose migration drops the
// application's table, by phased-rollout with a schema Job and a checkpoint restored on rollback
// (ours), the same without the checkpoint (ours-no-checkpoint), or the StatefulSet controller alone.
// hack/scenario-postgres.sh brings the environment up and the image in first. The last line is the
// RESULT; the line before says what else was seen (DETAIL). With ours, a missed expectation
// (results.ts) is printed as UNMET and the exit code is 1.
import { abortAll, onAbort } from '../etcd/cleanup.js';
import { Cluster, readEnv } from '../etcd/cluster.js';
import { readArgs, USAGE } from './args.js';
import { badMigration, MigrationStage } from './bad-migration.js';
import { migrationLine, resultLine, unmet, unmetMigration } from './results.js';
import { run, Stage, type Context } from './scenarios.js';

const HARNESS_CONTROLLER = 'system:serviceaccount:phased-rollout-system:phased-rollout-controller';

async function main(): Promise<number> {
  const args = readArgs(process.argv.slice(2));
  if ('error' in args) {
    process.stderr.write(`scenario:postgres: ${args.error}\n${USAGE}\n`);
    return 2;
  }
  const env = readEnv(args.e2eDir ?? process.env.PHASED_ROLLOUT_E2E_DIR ?? '.e2e');
  if (!env.REAL_NODE) {
    process.stderr.write('scenario:postgres needs the real node of the test environment (npm run e2e:up as root); this environment has none\n');
    return 2;
  }
  const image = process.env.POSTGRES_IMAGE ?? '';
  if (!image) {
    process.stderr.write('POSTGRES_IMAGE is not set: run it through npm run scenario:postgres (hack/scenario-postgres.sh imports the image)\n');
    return 2;
  }
  const started = Date.now();
  const stamp = () => `[${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s]`;
  const ctx: Context = {
    cluster: new Cluster(env),
    system: args.system,
    image,
    rate: args.rate,
    controllerUser: HARNESS_CONTROLLER,
    say: (s) => process.stdout.write(`${stamp()} ${s}\n`),
    ...(args.quiet ? {} : { onTick: (s: string) => process.stdout.write(`${stamp()}   ${s}\n`) }),
  };
  const namespace = `pg-${args.name}-${args.system}-${Date.now().toString(36)}`;
  if (args.name === 'bad-migration') return migration(new MigrationStage(ctx, namespace), args.keep);
  const stage = new Stage(ctx, namespace);
  const unregister = onAbort(() => stage.close(args.keep));
  let outcome;
  try {
    outcome = await run(args.name, stage);
  } finally {
    unregister();
    await stage.close(args.keep);
  }
  const s = outcome.summary;
  const violations = outcome.safety?.violations.map((v) => `${v.statefulset}: ${v.why}`) ?? [];
  const details = { ...outcome.details, ...(outcome.safety ? { gated_steps: outcome.safety.gatedSteps, safety_violations: violations.length } : {}) };
  process.stdout.write(`DETAIL ${Object.entries(details).map(([k, v]) => `${k}=${v}`).join(' ')}\n`);
  const missed = args.system === 'ours' ? unmet(args.name, { lost: s.lost, onNew: outcome.onNew, members: outcome.members, failovers: outcome.failovers, switchovers: outcome.switchovers, maxOnNew: Number(outcome.details.max_on_new ?? 0), violations, gatedSteps: outcome.safety?.gatedSteps ?? 0 }) : [];
  for (const m of missed) process.stdout.write(`UNMET ${m}\n`);
  process.stdout.write(`${resultLine(args.name, args.system, s, outcome.onNew, outcome.members, outcome.failovers, outcome.switchovers)}\n`);
  return missed.length > 0 ? 1 : 0;
}

/** migration runs bad-migration and prints its lines; with ours, a missed expectation exits 1. */
async function migration(stage: MigrationStage, keep: boolean): Promise<number> {
  const unregister = onAbort(() => stage.close(keep));
  let o;
  try {
    o = await badMigration(stage);
  } finally {
    unregister();
    await stage.close(keep);
  }
  const violations = o.safety?.violations.map((v) => `${v.statefulset}: ${v.why}`) ?? [];
  const details = { ...o.details, ...(o.safety ? { gated_steps: o.safety.gatedSteps, safety_violations: violations.length } : {}) };
  process.stdout.write(`DETAIL ${Object.entries(details).map(([k, v]) => `${k}=${v}`).join(' ')}\n`);
  const missed = stage.ctx.system === 'ours' ? unmetMigration({ ...o, maxOnNew: Number(o.details.max_on_new ?? 0), checkpointCut: o.cut.what === 'checkpoint', violations, gatedSteps: o.safety?.gatedSteps ?? 0 }) : [];
  for (const m of missed) process.stdout.write(`UNMET ${m}\n`);
  process.stdout.write(`${migrationLine(stage.ctx.system, o.summary, o.onNew, o)}\n`);
  return missed.length > 0 ? 1 : 0;
}

for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
  process.once(signal, () => {
    process.stderr.write(`scenario:postgres: ${signal}: cleaning up\n`);
    void abortAll().finally(() => process.exit(code));
  });
}

main().then((code) => process.exit(code), (e: Error) => {
  process.stderr.write(`scenario:postgres: ${e.message}\n`);
  process.exit(1);
});
