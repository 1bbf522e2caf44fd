// The safety checker's reading of annotations from audit bodies, and of promotions of inconclusive
// holds: which hold a user promoted, and what ended the promotion before its step (docs/analysis.md:
// "it is dropped if the replica count changes, ... or a person pauses it"; a new revision or a retry
// starts the rollout or its checks over). Written from the documented behaviour, not from the planner.

const STATUS = 'phased-rollout.io/status';
const PROMOTE = 'phased-rollout.io/promote';
const PAUSED = 'phased-rollout.io/paused';
const RETRY = 'phased-rollout.io/retry';

type Obj = Record<string, any>;

/** StatusView is the part of the phased-rollout.io/status annotation the checker reads. */
export interface StatusView {
  phase?: string;
  revision?: string;
  partition?: number;
  replicas?: number;
  reason?: string;
  /** An inconclusive hold's identity (docs/analysis.md): set when a hold begins, kept while it stands. */
  hold?: number;
}

/** statusOf parses the status annotation (undefined when absent or unreadable). */
export function statusOf(annotations: Record<string, string>): StatusView | undefined {
  const raw = annotations[STATUS];
  if (!raw) return undefined;
  try {
    const s = JSON.parse(raw) as unknown;
    return s && typeof s === 'object' && !Array.isArray(s) ? (s as StatusView) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * annotationsAfter applies one write's body to a StatefulSet's annotations: a whole object (create,
 * update) replaces them, a merge or strategic merge patch sets or (null) removes keys, a JSON Patch
 * adds, replaces or removes `/metadata/annotations/<key>` (`~1` is `/`). Undefined: the body does not
 * touch them.
 */
export function annotationsAfter(verb: string, body: unknown, before: Record<string, string>): Record<string, string> | undefined {
  if (Array.isArray(body)) {
    let next: Record<string, string> | undefined;
    for (const op of body as Obj[]) {
      const path = typeof op?.path === 'string' ? op.path : '';
      if (path === '/metadata/annotations' && (op.op === 'add' || op.op === 'replace')) next = { ...(op.value ?? {}) };
      else if (path === '/metadata/annotations' && op.op === 'remove') next = {};
      else if (path.startsWith('/metadata/annotations/')) {
        const key = path.slice('/metadata/annotations/'.length).replaceAll('~1', '/').replaceAll('~0', '~');
        next = { ...(next ?? before) };
        if (op.op === 'remove') delete next[key];
        else if (op.op === 'add' || op.op === 'replace') next[key] = String(op.value);
      }
    }
    return next;
  }
  const meta = (body as Obj | undefined)?.metadata;
  if (verb === 'create' || verb === 'update') return { ...(meta?.annotations ?? {}) };
  if (!meta || !('annotations' in meta)) return undefined;
  if (meta.annotations === null) return {};
  const next = { ...before };
  for (const [k, v] of Object.entries(meta.annotations as Obj)) {
    if (v === null) delete next[k];
    else next[k] = String(v);
  }
  return next;
}

/** isHold: the status shows a rollout paused after inconclusive checks. */
function isHold(s: StatusView | undefined): boolean {
  return s?.phase === 'Paused' && s.reason === 'Inconclusive';
}

/** Promotion is one user's write of phased-rollout.io/promote while the status showed `hold`. */
export interface Promotion {
  atMs: number;
  value: string;
  hold: StatusView | undefined;
  /** spec.replicas as last reported when it was written. */
  replicas: number;
  /** Why it no longer holds (set by what ended it), if something did. */
  ended?: string;
  /** A pause set since it was written that the controller has not yet acted on (written while it stood). */
  pausePending?: true;
  used?: boolean;
}

/** Promotions keeps every StatefulSet's promotions and ends them on what drops a promotion. */
export class Promotions {
  private readonly byKey = new Map<string, Promotion[]>();
  /**
   * StatefulSets whose status shows an inconclusive hold carried over a change of replicas: the same
   * hold (revision, partition) rewritten at another size with no other status between, so no check
   * judged the pods at that size (issue 36: a change of replicas ends a hold).
   */
  private readonly carried = new Set<string>();

  /**
   * seen reads one change of annotations (from any write): a user's new promote value is a promotion
   * of the hold the status showed before it; a pause the controller acted on (it wrote while the pause
   * stood), a retry written, or the status removed, ends every promotion so far, also one written in the
   * same request. A pause removed before the controller wrote anything is one no level-based controller
   * can see: the annotations it reads then are a promotion and no pause.
   */
  seen(key: string, atMs: number, before: Record<string, string>, after: Record<string, string>, byUser: boolean, replicas: number, byController = false): void {
    const was = statusOf(before);
    const st = statusOf(after);
    if (after[STATUS] !== before[STATUS]) {
      // The same hold: its identity kept (a hold begins, with a new identity, only after checks).
      const same = isHold(was) && isHold(st) && was?.revision === st?.revision && was?.partition === st?.partition && was?.hold === st?.hold;
      if (same && (was?.replicas !== st?.replicas || this.carried.has(key))) this.carried.add(key);
      else this.carried.delete(key);
    }
    const v = after[PROMOTE];
    if (byUser && v !== undefined && v !== before[PROMOTE]) {
      const p: Promotion = { atMs, value: v, hold: was, replicas };
      if (this.carried.has(key)) p.ended = 'the hold shown had been carried over a change of replicas (no check judged the pods at this size)';
      this.list(key).push(p);
    }
    // Paused when written (set before, not yet acted on) counts as a pause too, once the controller acts.
    if (after[PAUSED] === 'true') for (const p of this.list(key)) p.pausePending = true;
    else if (byUser) for (const p of this.list(key)) delete p.pausePending;
    if (byController && before[PAUSED] === 'true') for (const p of this.list(key)) if (p.pausePending) p.ended ??= 'a pause was set';
    if (byUser && after[RETRY] !== undefined && after[RETRY] !== before[RETRY]) this.end(key, 'a retry was written');
    if (before[STATUS] !== undefined && after[STATUS] === undefined) this.end(key, 'the status was cleared (a retry)');
    if (st?.replicas !== undefined) for (const p of this.list(key)) if (p.hold?.replicas !== undefined && p.hold.replicas !== st.replicas) p.ended ??= 'the replicas changed';
  }

  /** end ends every promotion of a StatefulSet written so far. */
  end(key: string, why: string): void {
    for (const p of this.list(key)) p.ended ??= why;
  }

  /**
   * forStep finds the promotion that lets a step no gate passed go from `partition` at `revision`: the
   * last one written while the status showed that revision paused at that partition and size after
   * inconclusive checks, naming that revision and partition (`<revision>@<partition>@…`). `ok` when nothing ended it and the replicas are the hold's still; otherwise why not
   * (undefined when there is no such promotion at all).
   */
  forStep(key: string, revision: string | undefined, partition: number, replicas: number): { ok: true; p: Promotion } | { ok: false; why?: string } {
    const matches = this.list(key).filter(
      (p) =>
        !p.used &&
        p.value.startsWith(`${revision}@${partition}@`) &&
        p.hold?.phase === 'Paused' &&
        p.hold.reason === 'Inconclusive' &&
        p.hold.revision === revision &&
        p.hold.partition === partition &&
        p.hold.replicas === p.replicas,
    );
    const p = matches.at(-1);
    if (!p) {
      // A promotion naming this step, written while the status showed something else (a pause of the user's, another hold).
      const q = this.list(key).filter((x) => !x.used && x.value.startsWith(`${revision}@${partition}@`)).at(-1);
      if (!q) return { ok: false };
      const shown = q.hold ? `${q.hold.phase}${q.hold.reason ? ` (${q.hold.reason})` : ''} of ${q.hold.revision} at partition ${q.hold.partition} with ${q.hold.replicas} replicas` : 'no status';
      return { ok: false, why: `the promotion of ${new Date(q.atMs).toISOString()} was written while the status showed ${shown}, not an inconclusive hold of this step` };
    }
    const at = new Date(p.atMs).toISOString();
    if (p.ended) return { ok: false, why: `the promotion of ${at} no longer held: ${p.ended}` };
    if (p.replicas !== replicas) return { ok: false, why: `the promotion of ${at} no longer held: the replicas changed` };
    return { ok: true, p };
  }

  private list(key: string): Promotion[] {
    return this.byKey.get(key) ?? this.byKey.set(key, []).get(key)!;
  }
}
