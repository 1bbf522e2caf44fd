// The safety checker's record of member hooks (test/support/safety-checker.ts): the hook Jobs the
// controller created (their pod, hook, partition) and how they ended (the Job controller's status
// writes), read from the audit log. From it the checker judges two things, with no code of the planner:
//  - when a step's prepare hooks began (the gates the step stands on were judged before that);
//  - that a pod replaced by a rolling update had every prepare hook of this attempt run for it first:
//    a Job for that pod and hook created after the attempt began and done before the pod was deleted
//    (passed, for a forward step; ended either way, for a revert, which never stops on a failure).

/** The audit fields read here and in safety-checkpoints.ts (a subset of safety-checker.ts's AuditEvent). */
export interface Audited {
  verb: string;
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string };
  requestObject?: unknown;
  stageTimestamp: string;
}

export type Obj = Record<string, any>;

/** HookJob is one hook Job: whose, for what, created when, and how it ended. */
export interface HookJob {
  name: string;
  /** `namespace/statefulset` of its owner. */
  owner: string;
  pod?: string;
  hook: string;
  when: string;
  partition: number;
  createdMs: number;
  doneMs?: number;
  result?: 'pass' | 'fail';
}

/** PrepareHooks is the list of prepare hooks a StatefulSet's step needs, and since when that list stands. */
export interface PrepareHooks {
  hooks: string[];
  sinceMs: number;
}

const ms = (t: string) => Date.parse(t);

/** envOf reads a variable of the Job's first container that has it. */
function envOf(body: Obj, name: string): string | undefined {
  for (const c of (body.spec?.template?.spec?.containers ?? []) as Obj[]) {
    const v = (c.env as Obj[] | undefined)?.find((e) => e.name === name)?.value;
    if (typeof v === 'string') return v;
  }
  return undefined;
}

/** HookRecord collects the hook Jobs of a log (read ahead: a Job's end comes later than the step may look). */
export class HookRecord {
  readonly jobs: HookJob[] = [];

  /** read takes one successful audit event: a hook Job's creation, or a status write that ends one. */
  read(e: Audited): void {
    const r = e.objectRef ?? {};
    const body = e.requestObject as Obj | undefined;
    if (r.resource !== 'jobs' || !body) return;
    const at = ms(e.stageTimestamp);
    if (!r.subresource && e.verb === 'create') {
      const ann = (body.metadata?.annotations ?? {}) as Record<string, string>;
      const when = ann['phased-rollout.io/hook'];
      if (!when) return;
      const owner = (body.metadata?.ownerReferences as { kind?: string; name?: string }[] | undefined)?.find((x) => x.kind === 'StatefulSet')?.name;
      const pod = envOf(body, 'PHASED_ROLLOUT_POD');
      this.jobs.push({ name: body.metadata?.name ?? r.name ?? '', owner: `${r.namespace}/${owner}`, ...(pod ? { pod } : {}), hook: ann['phased-rollout.io/gate'] ?? '', when, partition: Number(ann['phased-rollout.io/partition']), createdMs: at });
      return;
    }
    if (r.subresource === 'status') {
      const conditions = (body.status?.conditions ?? []) as Obj[];
      const done = conditions.find((c) => c.status === 'True' && (c.type === 'Complete' || c.type === 'SuccessCriteriaMet' || c.type === 'Failed' || c.type === 'FailureTarget'));
      if (!done) return;
      // The latest Job of that name created before this write (a name comes back after a TTL removed it).
      const job = this.jobs.filter((j) => j.name === r.name && j.owner.startsWith(`${r.namespace}/`) && j.createdMs <= at).at(-1);
      if (!job || job.doneMs !== undefined) return;
      job.doneMs = at;
      job.result = done.type === 'Complete' || done.type === 'SuccessCriteriaMet' ? 'pass' : 'fail';
    }
  }

  /**
   * firstStart: when the first prepare hook Job of a step to `partition` began after `sinceMs` and by
   * `T` (undefined: none). The gates of that step are judged up to then.
   */
  firstStart(owner: string, partition: number, sinceMs: number, T: number): number | undefined {
    return this.jobs.find((j) => j.owner === owner && j.when === 'prepare' && j.partition === partition && j.createdMs > sinceMs && j.createdMs <= T)?.createdMs;
  }

  /**
   * unprepared: the first hook of `hooks` that has no Job for `pod` created after `sinceMs` and ended by
   * `T` (passed, unless `anyEnd`: a revert goes on after a failure); undefined when each has one.
   */
  unprepared(owner: string, pod: string, hooks: readonly string[], sinceMs: number, T: number, anyEnd: boolean): string | undefined {
    return hooks.find((h) => !this.jobs.some((j) => j.owner === owner && j.pod === pod && j.hook === h && j.when === 'prepare' && j.createdMs > sinceMs && j.doneMs !== undefined && j.doneMs <= T && (anyEnd || j.result === 'pass')));
  }
}
