// The annotations that steer a rollout: its steps, and what `kubectl phased-rollout` writes (promote,
// abort, retry); what a failure does, and the rollout group it rolls in.

import { GATE_NAME, KEYS, MAX_STEPS } from './keys.js';
import type { Problem, RolloutConfig, Step } from './types.js';

const STEP_COUNT = /^[1-9][0-9]{0,5}$/;
const STEP_PERCENT = /^([1-9][0-9]?|100)%$/;

/**
 * parseSteps reads `phased-rollout.io/steps`: comma-separated cumulative targets, each a pod count
 * ("1") or a percentage of replicas ("10%"), counts increasing among counts and percentages among
 * percentages, ending with "100%" so that a rollout always reaches every pod whatever the replica count.
 * A `pause` marker before a stage makes the rollout wait there for `kubectl phased-rollout promote`.
 * Counts and percentages are compared only once replicas are known (src/rollout/steps.ts): a stage
 * that adds no pod at that size is skipped (its pause moves to the next stage).
 */
export function parseSteps(a: Record<string, string | undefined>, problems: Problem[]): Step[] | undefined {
  const v = a[KEYS.steps];
  if (v === undefined) return undefined;
  const allowed = `comma-separated cumulative pod counts or percentages, increasing, ending with 100%, with optional "pause" markers between them (at most ${MAX_STEPS} stages), e.g. "1,pause,10%,50%,100%"`;
  const items = v.split(',').map((x) => x.trim());
  const steps: Step[] = [];
  let lastCount = 0;
  let lastPercent = 0;
  let pause = false;
  const refuse = () => {
    problems.push({ key: KEYS.steps, value: v, allowed });
    return undefined;
  };
  for (const item of items) {
    if (item === 'pause') {
      if (pause) return refuse();
      pause = true;
      continue;
    }
    let step: Step;
    if (STEP_COUNT.test(item) && Number(item) > lastCount) {
      lastCount = Number(item);
      step = { count: lastCount };
    } else if (STEP_PERCENT.test(item) && Number(item.slice(0, -1)) > lastPercent) {
      lastPercent = Number(item.slice(0, -1));
      step = { percent: lastPercent };
    } else return refuse();
    if (pause) step.pause = true;
    pause = false;
    steps.push(step);
  }
  if (steps.length > MAX_STEPS || items[items.length - 1] !== '100%') return refuse();
  return steps;
}

// A ControllerRevision name (a DNS subdomain) and a stage number, or "@" a partition "@" a hold's start.
const PROMOTE = /^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)(\/([1-9][0-9]{0,2})|@(0|[1-9][0-9]{0,5})@([1-9][0-9]{0,14}))$/;
const REVISION = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/** parseRevision reads a revision name, as `kubectl phased-rollout abort` writes it. */
export function parseRevision(a: Record<string, string | undefined>, key: string, problems: Problem[]): string | undefined {
  const v = a[key];
  if (v === undefined) return undefined;
  if (REVISION.test(v)) return v;
  problems.push({ key, value: v, allowed: 'a revision name (status.updateRevision), as `kubectl phased-rollout abort` writes it' });
  return undefined;
}

/** parseOnFailure reads `phased-rollout.io/on-failure`: "halt" (the default) or "rollback". */
export function parseOnFailure(a: Record<string, string | undefined>, problems: Problem[]): 'halt' | 'rollback' {
  const v = a[KEYS.onFailure];
  if (v === undefined || v === 'halt') return 'halt';
  if (v === 'rollback') return 'rollback';
  problems.push({ key: KEYS.onFailure, value: v, allowed: '"halt" or "rollback"' });
  return 'halt';
}

/** parsePromote reads `phased-rollout.io/promote`: a pause of the steps, or one inconclusive hold. */
export function parsePromote(a: Record<string, string | undefined>, problems: Problem[]): RolloutConfig['promote'] {
  const v = a[KEYS.promote];
  if (v === undefined) return undefined;
  const m = PROMOTE.exec(v);
  if (m) return m[4] !== undefined ? { revision: m[1] ?? '', stage: Number(m[4]) } : { revision: m[1] ?? '', partition: Number(m[5]), hold: Number(m[6]) };
  problems.push({ key: KEYS.promote, value: v, allowed: '<revision>/<step> or <revision>@<partition>@<hold>, as `kubectl phased-rollout promote` writes it' });
  return undefined;
}

// A revision name, "@", and the failure's time in ms since the epoch.
const RETRY = /^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)@([1-9][0-9]{0,14})$/;

/** parseRetry reads `phased-rollout.io/retry`: the Failed rollout to start again. */
export function parseRetry(a: Record<string, string | undefined>, problems: Problem[]): RolloutConfig['retry'] {
  const v = a[KEYS.retry];
  if (v === undefined) return undefined;
  const m = RETRY.exec(v);
  if (m) return { revision: m[1] ?? '', failedAt: Number(m[3]) };
  problems.push({ key: KEYS.retry, value: v, allowed: '<revision>@<failed at>, as `kubectl phased-rollout retry` writes it' });
  return undefined;
}

/** parseGroup reads the rollout group; a group order without a group is a problem. */
export function parseGroup(a: Record<string, string | undefined>, problems: Problem[]): string | undefined {
  const v = a[KEYS.group];
  if (v === undefined) {
    if (a[KEYS.groupOrder] !== undefined) problems.push({ key: KEYS.groupOrder, value: a[KEYS.groupOrder], allowed: `only together with ${KEYS.group}` });
    return undefined;
  }
  if (GATE_NAME.test(v)) return v;
  problems.push({ key: KEYS.group, value: v, allowed: 'a group name of lowercase letters, digits and "-" (at most 63), shared by the StatefulSets of one namespace that roll one at a time' });
  return undefined;
}
