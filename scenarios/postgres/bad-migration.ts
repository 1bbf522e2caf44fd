// bad-migration: a single PostgreSQL member (single.ts), its claim on the project's CSI driver, rolled to
// a release whose init container migrates the data before the server starts, and the migration drops
// the table the application writes to. The writer inserts rows throughout.
//   ours                opted in with examples/postgres-single (the schema Job and a checkpoint with
//                       `restore: on-rollback`): the rollback gives the member its claim back from the
//                       checkpoint, the table with it
//   ours-no-checkpoint  the same policy without its checkpoint: the old template comes back, the table does not
//   plain               the StatefulSet controller alone
// At the end every row is read back, and the acknowledged writes missing are split at the checkpoint's
// cut (checkpoint-loss.ts): none acknowledged before it may be lost; those after it are what the
// restore cost.
import { auditMark, inNamespace, readAudit, type AuditMark } from '../../test/support/audit-files.js';
import { checkSafety, type AuditEvent, type SafetyReport } from '../../test/support/safety-checker.js';
import { Poller } from '../common/gate-recorder.js';
import { until } from '../etcd/scenarios.js';
import { summarize } from '../etcd/results.js';
import { chooseCut, cutMsOf, healthyAtEnd, lossAround, type Cut, type Snapshot } from './checkpoint-loss.js';
import { GENERATION_KEY, PG_PORT } from './manifest.js';
import type { Context, Outcome } from './scenarios.js';
import { single, SINGLE, singleStatefulSet, type SingleOptions } from './single.js';
import { singleAnnotations, singlePolicy, singleTiming } from './single-gate.js';
import { prepareTable, readRows, Writer, type Target } from './writer.js';

const MINUTES = 60_000;
/** SETTLE_MS: the writer writes on this long after the rollout ended; the last WINDOW_MS of it say whether the application works. */
const SETTLE_MS = 10_000;
const WINDOW_MS = 5000;
const POD = `${SINGLE}-0`;
const CLAIM = `data-${POD}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** MigrationOutcome is an Outcome with what the restore gave back and cost. */
export interface MigrationOutcome extends Outcome {
  tableBack: boolean;
  cut: Cut;
  beforeCutLost: number;
  afterCutLost: number;
  healthyAtEnd: boolean;
  restoresCompleted: number;
}

interface Seen {
  uid: string;
  ready: boolean;
  deleting: boolean;
  generation?: string;
}

/** MigrationStage is the scenario's namespace, its one member as last seen, and its writer. */
export class MigrationStage {
  readonly mark: AuditMark;
  member: Seen | undefined;
  /** When the member's pod was first seen going (deleting, gone or replaced) after `watchFrom`. */
  goneMs: number | undefined;
  maxOnNew = 0;
  private watchFrom = Infinity;
  private firstUid = '';
  private readonly poller = new Poller(() => this.poll());
  private writer: Writer | undefined;
  private writerStart = 0;
  private target: Target | undefined;
  private ticker: NodeJS.Timeout | undefined;
  private lastStatus = '';

  constructor(readonly ctx: Context, readonly namespace: string) {
    this.mark = auditMark(ctx.cluster.env.AUDIT_LOG ?? '');
  }

  private get optedIn(): boolean {
    return this.ctx.system !== 'plain';
  }

  private options(generation: number): SingleOptions {
    return { namespace: this.namespace, image: this.ctx.image, realNode: true, generation, ...(generation > 1 ? { migration: true } : {}), ...(this.optedIn ? { annotations: singleAnnotations() } : {}) };
  }

  private async poll(): Promise<void> {
    const list = await this.ctx.cluster.core.listNamespacedPod({ namespace: this.namespace, labelSelector: `app=${SINGLE}` });
    const p = list.items.find((x) => x.metadata?.name === POD);
    this.member = p ? {
      uid: p.metadata?.uid ?? '',
      ready: p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
      deleting: p.metadata?.deletionTimestamp !== undefined,
      ...(p.metadata?.annotations?.[GENERATION_KEY] ? { generation: p.metadata.annotations[GENERATION_KEY] } : {}),
    } : undefined;
    if (this.goneMs === undefined && Date.now() >= this.watchFrom && (!this.member || this.member.deleting || this.member.uid !== this.firstUid)) this.goneMs = Date.now();
    this.maxOnNew = Math.max(this.maxOnNew, this.onGeneration(2));
  }

  /** onGeneration is 1 when the member runs the template of this generation (and is not going). */
  onGeneration(g: number): number {
    return this.member?.generation === String(g) && !this.member.deleting ? 1 : 0;
  }

  /** begin creates the member on the CSI class, makes the table, starts the writer and lets it write for 5 s. */
  async begin(): Promise<void> {
    const { cluster, say, system } = this.ctx;
    const objects = single(this.options(1));
    await cluster.apply(objects.slice(0, 1));
    if (this.optedIn) await cluster.apply([singlePolicy(this.namespace, this.ctx.image, system === 'ours')]);
    say(`one PostgreSQL member in namespace ${this.namespace}, its claim on the CSI driver's class, ${system === 'plain' ? 'RollingUpdate, no phased-rollout' : system === 'ours' ? 'opted in with the schema Job and a checkpoint restored on rollback' : 'opted in with the schema Job, no checkpoint'}`);
    await cluster.apply(objects.slice(1));
    this.poller.start();
    await until('the member ready', 4 * MINUTES, () => this.member?.ready === true);
    const ip = (await cluster.getJson(['service', SINGLE, '-n', this.namespace])).spec.clusterIP as string;
    this.target = { host: ip, port: PG_PORT, user: 'postgres', password: 'superuser-secret' };
    await prepareTable(this.target);
    this.writer = new Writer({ target: this.target, rate: this.ctx.rate });
    this.writerStart = Date.now();
    this.writer.start();
    if (this.ctx.onTick) {
      const tick = this.ctx.onTick;
      this.ticker = setInterval(() => {
        const c = this.writer?.live();
        if (c) tick(`writes: acked ${c.acked}, failed ${c.failed}, in flight ${c.inFlight}; ${POD} ${this.member ? `generation ${this.member.generation}${this.member.ready ? ' ready' : ''}${this.member.deleting ? ' deleting' : ''}` : 'gone'}`);
      }, 1000);
    }
    await sleep(5000);
    if (this.writer.live().acked === 0) throw new Error(`no commit acknowledged in the first 5 s: ${this.writer.records.find((r) => r.error)?.error ?? 'no answer'}`);
  }

  /** release applies the release with the migration (kubectl apply, as a user or GitOps would). */
  async release(): Promise<void> {
    this.firstUid = this.member?.uid ?? '';
    this.watchFrom = Date.now();
    this.ctx.say('kubectl apply: generation 2, whose init container migrates the data (and drops the table the application writes to)');
    await this.ctx.cluster.apply([singleStatefulSet(this.options(2))]);
  }

  /** status reads the controller's status annotation, and says when it changed. */
  async status(): Promise<{ phase?: string } | null> {
    const o = await this.ctx.cluster.getJson(['statefulset', SINGLE, '-n', this.namespace]);
    const raw = (o.metadata.annotations?.['phased-rollout.io/status'] as string | undefined) ?? 'null';
    const st = JSON.parse(raw) as { phase?: string; partition?: number; replicas?: number; message?: string } | null;
    if (st && raw !== this.lastStatus) {
      this.ctx.say(`${SINGLE}: ${st.phase} partition ${st.partition}/${st.replicas}: ${st.message ?? ''}`);
      this.lastStatus = raw;
    }
    return st;
  }

  /** checkpoints reads the member's checkpoints with their cuts, and the one its claim was restored from. */
  private async checkpoints(): Promise<{ snapshots: Snapshot[]; restoredFrom?: string }> {
    const { cluster } = this.ctx;
    const list = await cluster.getJson<{ items: any[] }>(['volumesnapshots', '-n', this.namespace, '-l', `phased-rollout.io/checkpoint=true,phased-rollout.io/pod=${POD}`]).catch(() => ({ items: [] }));
    const snapshots: Snapshot[] = [];
    for (const s of list.items) {
      const content = s.status?.boundVolumeSnapshotContentName as string | undefined;
      const cutMs = content ? cutMsOf(await cluster.getJson(['volumesnapshotcontent', content]).catch(() => undefined)) : undefined;
      snapshots.push({ name: s.metadata.name, ...(cutMs !== undefined ? { cutMs } : {}) });
    }
    const claim = await cluster.getJson(['pvc', CLAIM, '-n', this.namespace]).catch(() => undefined);
    const source = claim?.spec?.dataSource;
    return { snapshots, ...(source?.kind === 'VolumeSnapshot' ? { restoredFrom: source.name as string } : {}) };
  }

  /** events counts the namespace's Events by reason. */
  private async events(): Promise<(reason: string) => number> {
    const events = await this.ctx.cluster.getJson<{ items: { reason?: string; count?: number }[] }>(['events', '-n', this.namespace]).catch(() => ({ items: [] }));
    return (reason: string) => events.items.filter((e) => e.reason === reason).reduce((a, e) => a + (e.count ?? 1), 0);
  }

  /** finish writes on for SETTLE_MS, stops the writer, reads every row back and sums the run up. */
  async finish(details: Record<string, string | number>): Promise<MigrationOutcome> {
    await sleep(SETTLE_MS);
    const stopMs = Date.now();
    await this.writer?.stop();
    if (this.ticker) clearInterval(this.ticker);
    this.ctx.say('reading every row back');
    const stored = await readRows(this.target as Target).catch((e: Error) => {
      this.ctx.say(e.message);
      return undefined;
    });
    const tableBack = stored !== null && stored !== undefined;
    if (stored === null) this.ctx.say('the table is gone');
    const records = this.writer?.records ?? [];
    const { snapshots, restoredFrom } = await this.checkpoints();
    const cut = chooseCut(snapshots, restoredFrom, this.goneMs);
    const loss = lossAround(records, stored ?? null, cut.atMs);
    const count = await this.events();
    const out: MigrationOutcome = {
      summary: summarize(records, stored ?? new Map(), this.writerStart, stopMs),
      onNew: this.onGeneration(2),
      members: 1,
      failovers: 0,
      switchovers: 0,
      details: {
        ...details,
        max_on_new: this.maxOnNew,
        cut: cut.what,
        ...(cut.what === 'checkpoint' && this.goneMs !== undefined ? { cut_before_pod_went_ms: this.goneMs - cut.atMs } : {}),
        acked_after_cut: records.filter((r) => r.ackAt !== undefined && r.ackAt >= cut.atMs).length,
        restored_from: restoredFrom ?? 'none',
        checkpoints: count('CheckpointTaken'),
        restores_completed: count('RestoreCompleted'),
        restores_skipped: count('RestoreSkipped'),
      },
      tableBack,
      cut,
      beforeCutLost: loss.beforeCut,
      afterCutLost: loss.afterCut,
      healthyAtEnd: healthyAtEnd(records, { ready: this.member?.ready === true, tableBack, stopMs, windowMs: WINDOW_MS }),
      restoresCompleted: count('RestoreCompleted'),
    };
    if (this.optedIn) out.safety = this.safety();
    return out;
  }

  /**
   * safety runs the independent safety checker over the audit log: the gate is a Job (no Prometheus
   * history to judge), so it checks the step's timing and, with ours, that the member's claim was
   * snapshotted and cut before the partition write that released it.
   */
  safety(): SafetyReport {
    const events = readAudit<AuditEvent>(this.ctx.cluster.env.AUDIT_LOG ?? '', this.mark, inNamespace(this.namespace));
    return checkSafety(events, [], {
      controllerUser: this.ctx.controllerUser,
      lagMs: 2500,
      gateNames: () => [],
      settings: singleTiming(),
      ...(this.ctx.system === 'ours' ? { checkpoints: () => ({ templates: ['data'], sinceMs: 0 }) } : {}),
    });
  }

  async close(keep: boolean): Promise<void> {
    await this.poller.stop();
    if (this.ticker) clearInterval(this.ticker);
    await this.writer?.stop();
    if (!keep) await this.ctx.cluster.kubectl(['delete', 'namespace', this.namespace, '--wait=false', '--ignore-not-found']).catch(() => '');
  }
}

/** badMigration applies the release with the destructive migration and waits for the rollback (ours) or the new member (plain). */
export async function badMigration(stage: MigrationStage): Promise<MigrationOutcome> {
  await stage.begin();
  const t0 = Date.now();
  await stage.release();
  if (stage.ctx.system === 'plain') {
    await until('the member on the release and ready', 5 * MINUTES, () => stage.onGeneration(2) === 1 && stage.member?.ready === true);
    stage.ctx.say(`the member replaced in ${((Date.now() - t0) / 1000).toFixed(0)} s; writing on`);
  } else {
    await until('the rollback, the member on the old template and ready', 8 * MINUTES, async () => (await stage.status())?.phase === 'RolledBack' && stage.onGeneration(1) === 1 && stage.member?.ready === true);
    stage.ctx.say(`rolled back in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  }
  const details: Record<string, string | number> = { rolled_s: Math.round((Date.now() - t0) / 1000) };
  if (stage.ctx.system !== 'plain') details.phase = (await stage.status())?.phase ?? '-';
  return stage.finish(details);
}
