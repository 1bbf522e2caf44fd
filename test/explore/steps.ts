// The user and cluster events of the exploration, each after `dt` ms of simulated time: plain data, so
// that fast-check shrinks a failing sequence to a short one and a replay test is a literal array.
import fc from 'fast-check';
import { KEYS } from '../../src/annotations.js';
import { annotationPatch, rolloutPatch } from '../../plugin/commands.js';
import type { RolloutStatus } from '../../src/rollout/types.js';
import { sealStatus, STATUS_KEYS } from './shell.js';
import { templateOf, USER, CONTROLLER, type World } from './world.js';

/**
 * Setup is the StatefulSet a run starts from: its size and gate policy (period 1 s, no initial delay);
 * with `hooks`, it names the RolloutGate `pg` whose prepare hooks (hook.a, hook.b, as many) run as Jobs
 * before each pod goes, kept `ttlMs` after they end (ttlSecondsAfterFinished).
 */
export interface Setup {
  replicas: number;
  successThreshold: number;
  inconclusiveLimit: number;
  failureThreshold: number;
  onFailure: 'halt' | 'rollback';
  hooks?: number;
  ttlMs?: number;
  /** The RolloutGate `pg` has a checkpoint: a VolumeSnapshot of the claim `data` of each pod before its step. */
  checkpoint?: boolean;
}

/** HOOK_NAMES are the prepare hooks a setup's RolloutGate may have, in the order it lists them at first. */
export const HOOK_NAMES = ['hook.a', 'hook.b'];

/** Step is one event after `dt` ms. */
export type Step = { dt: number } & (
  | { do: 'apply'; image: number } // kubectl apply of another image: a new template through the webhook
  | { do: 'revert' } // kubectl rollout undo: the template before the current one
  | { do: 'scale'; replicas: number; via?: 'spec' } // the scale subresource (no webhook), or the spec
  | { do: 'pause' | 'resume' | 'abort' | 'retry' } // the plugin's patches
  | { do: 'clearStatus' } // a user removes the status annotation (the retry of earlier releases; a PUT of a manifest drops it)
  | { do: 'promote'; stale?: number; pause?: true } // the plugin's token as soon as it has one within dt (or at once the stale-th one before it), maybe with a pause in the same patch
  | { do: 'gate'; result: 'pass' | 'fail' | 'inconclusive' | 'error' } // what every check returns from now on
  | { do: 'policy'; key: 'success-threshold' | 'inconclusive-limit' | 'failure-threshold' | 'on-failure'; value: string }
  | { do: 'crash'; pod: number; downMs: number } // a pod not ready, then ready again (a new Ready time)
  | { do: 'deletePod'; pod: number } // kubectl delete pod
  | { do: 'restart' } // the controller restarts: its memory is lost
  | { do: 'oldStatus' } // a status written by an older controller between rollouts: the fields it does not know dropped
  | { do: 'hook'; result: 'pass' | 'fail' | 'hang'; ms: number } // what a hook Job started from now on does
  | { do: 'hooks'; hooks: string[] } // the RolloutGate's prepare hooks edited (one added, removed, reordered)
  | { do: 'snapshots'; result: 'cut' | 'never'; ms: number } // what a VolumeSnapshot created from now on does: cut after ms, or never (its class gone, the driver down)
  | { do: 'policyCache'; downMs: number } // the controller's RolloutGate watch down: it cannot tell the hooks
  | { do: 'slowChecks'; ms: number } // a check takes this long from now on (a slow Prometheus, --prometheus-timeout)
  | { do: 'recreate'; image: number; keepStatus?: true } // delete --cascade=orphan, apply again with a new image (and the old status, from get -o yaml)
  | { do: 'wait' }
);

/** annotationsOf is a setup's opt-in and gate annotations. */
export function annotationsOf(s: Setup): Record<string, string> {
  return {
    [KEYS.enabled]: 'true',
    [KEYS.query]: 'e2e_gate{name="db"} == 1',
    [KEYS.successThreshold]: String(s.successThreshold),
    [KEYS.periodSeconds]: '1',
    [KEYS.initialDelaySeconds]: '0',
    [KEYS.inconclusiveLimit]: String(s.inconclusiveLimit),
    [KEYS.failureThreshold]: String(s.failureThreshold),
    [KEYS.onFailure]: s.onFailure,
    ...(s.hooks || s.checkpoint ? { [KEYS.gates]: 'pg' } : {}),
  };
}

/** The classic setup's fields: sizes 1 to 4, thresholds 1 or 2, failures counted or not, halt or rollback. */
const classicSetup = {
  replicas: fc.integer({ min: 1, max: 4 }),
  successThreshold: fc.integer({ min: 1, max: 2 }),
  inconclusiveLimit: fc.integer({ min: 1, max: 2 }),
  failureThreshold: fc.integer({ min: 0, max: 2 }),
  onFailure: fc.constantFrom('halt' as const, 'rollback' as const),
};

/** setupArb: the classic world's setups. */
export const setupArb: fc.Arbitrary<Setup> = fc.record(classicSetup);

/** extendedSetupArb: with member hooks (none, one or two prepare hooks as Jobs, kept an hour or 2 s). */
export const extendedSetupArb: fc.Arbitrary<Setup> = fc.record({ ...classicSetup, hooks: fc.constantFrom(0, 1, 1, 2), ttlMs: fc.constantFrom(3_600_000, 2000), checkpoint: fc.boolean() });

/**
 * dtArb: mostly the time a pod, a check or a step takes, or long waits; sometimes under the 5 ms the
 * controller takes to see a change (two writes before it acts, as one person's two quick commands).
 */
const dtArb = fc.oneof({ weight: 2, arbitrary: fc.integer({ min: 0, max: 4 }) }, { weight: 5, arbitrary: fc.integer({ min: 5, max: 3000 }) }, { weight: 3, arbitrary: fc.integer({ min: 3000, max: 20_000 }) });

const classicEvents: fc.WeightedArbitrary<Omit<Step, 'dt'>>[] = [
  { weight: 5, arbitrary: fc.record({ do: fc.constant('gate' as const), result: fc.constantFrom('pass' as const, 'pass' as const, 'fail' as const, 'inconclusive' as const, 'inconclusive' as const, 'error' as const) }) },
  { weight: 3, arbitrary: fc.constant({ do: 'wait' as const }) },
  { weight: 3, arbitrary: fc.record({ do: fc.constant('apply' as const), image: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 3, arbitrary: fc.record({ do: fc.constant('scale' as const), replicas: fc.integer({ min: 0, max: 4 }) }, { requiredKeys: ['do', 'replicas'] }) },
  { weight: 1, arbitrary: fc.record({ do: fc.constant('scale' as const), replicas: fc.integer({ min: 0, max: 4 }), via: fc.constant('spec' as const) }) },
  { weight: 3, arbitrary: fc.record({ do: fc.constant('promote' as const), stale: fc.integer({ min: 1, max: 2 }), pause: fc.constant(true as const) }, { requiredKeys: ['do'] }) },
  { weight: 2, arbitrary: fc.constantFrom({ do: 'pause' as const }, { do: 'resume' as const }) },
  { weight: 1, arbitrary: fc.constantFrom({ do: 'abort' as const }, { do: 'retry' as const }, { do: 'revert' as const }) },
  { weight: 1, arbitrary: fc.record({ do: fc.constant('crash' as const), pod: fc.integer({ min: 0, max: 3 }), downMs: fc.integer({ min: 100, max: 5000 }) }) },
  { weight: 1, arbitrary: fc.record({ do: fc.constant('deletePod' as const), pod: fc.integer({ min: 0, max: 3 }) }) },
  { weight: 1, arbitrary: fc.constantFrom({ do: 'restart' as const }, { do: 'oldStatus' as const }, { do: 'clearStatus' as const }) },
  {
    weight: 1,
    arbitrary: fc.oneof(
      fc.record({ do: fc.constant('policy' as const), key: fc.constantFrom('success-threshold' as const, 'inconclusive-limit' as const, 'failure-threshold' as const), value: fc.constantFrom('0', '1', '2') }),
      fc.record({ do: fc.constant('policy' as const), key: fc.constant('on-failure' as const), value: fc.constantFrom('halt', 'rollback') }),
    ),
  },
];

/**
 * The extended world's events (issue 46 §4): member hooks that take time and pass, fail or hang; the
 * RolloutGate's hooks edited mid-step; its cache down; checks slower than the 30 s a result is good
 * for; a StatefulSet deleted with its pods orphaned and created again.
 */
const extendedEvents: fc.WeightedArbitrary<Omit<Step, 'dt'>>[] = [
  { weight: 2, arbitrary: fc.record({ do: fc.constant('hook' as const), result: fc.constantFrom('pass' as const, 'pass' as const, 'fail' as const, 'hang' as const), ms: fc.integer({ min: 10, max: 5000 }) }) },
  { weight: 1, arbitrary: fc.record({ do: fc.constant('hooks' as const), hooks: fc.constantFrom(['hook.a'], ['hook.b', 'hook.a'], ['hook.a', 'hook.b'], ['hook.c', 'hook.a'], []) }) },
  { weight: 1, arbitrary: fc.record({ do: fc.constant('snapshots' as const), result: fc.constantFrom('cut' as const, 'cut' as const, 'never' as const), ms: fc.integer({ min: 10, max: 3000 }) }) },
  { weight: 1, arbitrary: fc.record({ do: fc.constant('policyCache' as const), downMs: fc.integer({ min: 100, max: 20_000 }) }) },
  { weight: 1, arbitrary: fc.record({ do: fc.constant('slowChecks' as const), ms: fc.constantFrom(250, 250, 29_000, 31_000) }) },
  { weight: 1, arbitrary: fc.record({ do: fc.constant('recreate' as const), image: fc.integer({ min: 1, max: 3 }), keepStatus: fc.constant(true as const) }, { requiredKeys: ['do', 'image'] }) },
];

const eventArb = fc.oneof(...classicEvents);
const extendedEventArb = fc.oneof(...classicEvents, ...extendedEvents);

/** stepsArb: up to `max` events (of the extended world: with hooks, policy caches, slow checks, re-creation). */
export function stepsArb(max: number, extended = false): fc.Arbitrary<Step[]> {
  return fc.array(fc.tuple(dtArb, extended ? extendedEventArb : eventArb).map(([dt, e]) => ({ dt, ...e }) as Step), { minLength: 1, maxLength: max, size: 'max' });
}

/** Hooks are what a step needs of the run beyond the world: the controller's restart. */
export interface Hooks {
  restart(): void;
  crash(pod: number, downMs: number): void;
  /** The setup's opt-in and gate annotations and replicas (a manifest applied again carries them). */
  annotations: Record<string, string>;
  replicas: number;
}

/** applyStep makes one event happen now; it returns what happened, for the trace. */
export function applyStep(w: World, s: Step, hooks: Hooks, history: number[]): string {
  const annotate = (annotations: Record<string, string | null>, user = USER) => w.patchStatefulSet(user, { metadata: { annotations } }).code;
  const state = () => ({ name: 'db', annotations: w.sts.metadata.annotations as Record<string, string>, updateRevision: w.sts.status.updateRevision, currentRevision: w.sts.status.currentRevision });
  switch (s.do) {
    case 'apply': {
      if (history.at(-1) === s.image) return 'apply: same image, no change';
      const code = w.patchStatefulSet(USER, { spec: { template: templateOf(s.image) } }).code;
      if (code === 200) history.push(s.image);
      return `apply app:${s.image} (${code})`;
    }
    case 'revert': {
      const before = history.at(-2);
      if (before === undefined) return 'revert: no earlier template';
      const code = w.patchStatefulSet(USER, { spec: { template: templateOf(before) } }).code;
      if (code === 200) history.push(before);
      return `revert to app:${before} (${code})`;
    }
    case 'scale':
      if (s.via === 'spec') return `scale to ${s.replicas} through the spec (${w.patchStatefulSet(USER, { spec: { replicas: s.replicas } }).code})`;
      w.scale(s.replicas);
      return `scale to ${s.replicas}`;
    case 'retry': {
      // The plugin's retry names the Failed status there is; anything else it refuses.
      try {
        return `retry (${annotate((rolloutPatch('retry', state()) as { metadata: { annotations: Record<string, string> } }).metadata.annotations)})`;
      } catch (err) {
        return `retry refused by the plugin: ${(err as Error).message}`;
      }
    }
    case 'clearStatus':
      return `status removed by a user (${annotate({ [KEYS.status]: null })})`;
    case 'pause':
    case 'resume':
      return `${s.do} (${w.patchStatefulSet(USER, annotationPatch(s.do)).code})`;
    case 'abort':
    case 'promote': {
      let value: string | undefined;
      if (s.do === 'promote' && s.stale) {
        // The stale-th token the plugin wrote before the one it would write now.
        const now = tokenOf(w);
        value = w.tokens.filter((t) => t !== now).at(-s.stale);
        if (value === undefined) return `promote with stale token ${s.stale}: none`;
      } else {
        try {
          const patch = rolloutPatch(s.do, state()) as { metadata: { annotations: Record<string, string | null> } };
          if (s.do === 'abort') return `abort (${annotate(patch.metadata.annotations)})`;
          value = patch.metadata.annotations[KEYS.promote] ?? undefined;
        } catch (err) {
          return `${s.do} refused by the plugin: ${(err as Error).message}`;
        }
      }
      return `promote ${value}${s.do === 'promote' && s.pause ? ' with a pause' : ''} (${annotate({ [KEYS.promote]: value ?? null, ...(s.do === 'promote' && s.pause ? { [KEYS.paused]: 'true' } : {}) })})`;
    }
    case 'gate':
      w.setGate(s.result);
      return `gate ${s.result}`;
    case 'policy':
      return `policy ${s.key}=${s.value} (${annotate({ [`phased-rollout.io/${s.key}`]: s.value })})`;
    case 'crash':
      hooks.crash(s.pod, s.downMs);
      return `crash db-${s.pod} for ${s.downMs} ms`;
    case 'deletePod':
      return `delete db-${s.pod} (${w.deletePod(USER, s.pod, 200).code})`;
    case 'restart':
      hooks.restart();
      return 'controller restarted (memory lost)';
    case 'oldStatus': {
      const raw = w.sts.metadata.annotations[KEYS.status];
      if (!raw) return 'older controller: no status to write';
      const st = JSON.parse(raw) as Record<string, unknown>;
      // An earlier release reads this release's status as none: the docs ask to downgrade between
      // rollouts, so it writes only when no rollout is on record.
      if (st.previousRevision !== undefined || st.unverifiedRevision !== undefined || !['Idle', 'Completed', 'RolledBack', 'Bypassed'].includes(st.phase as string)) return 'older controller: not mid-rollout (downgrade between rollouts)';
      // What an earlier release does not know (docs/analysis.md, "Upgrading and downgrading").
      for (const k of ['history', 'reason', 'promoted', 'previousRevision', 'waitingToStart', 'hold', 'promotionRefused', 'holdPods', 'unverifiedRevision']) delete st[k];
      if (st.gate === 'inconclusive') delete st.gate;
      if (st.failureReason === 'ErrorLimit') delete st.failureReason;
      // Sealed with the key (an older release that seals: what it drops is the point here).
      return `older controller rewrote the status (${annotate({ [KEYS.status]: sealStatus(st as unknown as RolloutStatus, w.sts.metadata.uid, STATUS_KEYS) }, CONTROLLER)})`;
    }
    case 'snapshots':
      w.snapshotBehaviour = { result: s.result, ms: s.ms };
      return `VolumeSnapshots from now: ${s.result === 'cut' ? `cut after ${s.ms} ms` : 'never cut'}`;
    case 'hook':
      w.hook = { result: s.result, ms: s.ms };
      return `hook Jobs from now: ${s.result}${s.result === 'hang' ? '' : ` after ${s.ms} ms`}`;
    case 'hooks': {
      if (w.policies.length === 0) return 'no RolloutGate: no hooks to edit';
      if (w.policies.at(-1)!.hooks.join() === s.hooks.join()) return 'RolloutGate pg: the same hooks, no change';
      w.policies.push({ ...w.policies.at(-1)!, hooks: [...s.hooks], sinceMs: w.now });
      w.onChange();
      return `RolloutGate pg prepare hooks now [${s.hooks.join(', ')}]`;
    }
    case 'policyCache':
      w.policyCacheDownUntil = Math.max(w.policyCacheDownUntil, w.now + s.downMs);
      w.at(w.now + s.downMs, 'policy cache up', () => w.onChange());
      return `RolloutGate watch down for ${s.downMs} ms`;
    case 'slowChecks':
      w.checkMs = s.ms;
      return `checks take ${s.ms} ms from now`;
    case 'recreate': {
      const image = s.image;
      const old = w.sts.metadata.annotations[KEYS.status];
      const code = w.recreate({ ...hooks.annotations, ...(s.keepStatus && old ? { [KEYS.status]: old } : {}) }, templateOf(image), hooks.replicas).code;
      if (code === 201 && history.at(-1) !== image) history.push(image);
      return `deleted with --cascade=orphan, created again with app:${image}${s.keepStatus && old ? ' and the old status' : ''} (${code})`;
    }
    case 'wait':
      return 'wait';
  }
}

/** tokenOf is what `kubectl phased-rollout promote` would write now, if anything. */
export function tokenOf(w: World): string | undefined {
  try {
    const patch = rolloutPatch('promote', { name: 'db', annotations: w.sts.metadata.annotations, updateRevision: w.sts.status.updateRevision, currentRevision: w.sts.status.currentRevision }) as { metadata: { annotations: Record<string, string> } };
    return patch.metadata.annotations[KEYS.promote];
  } catch {
    return undefined;
  }
}
