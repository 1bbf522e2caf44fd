// Member hooks as a gate policy writes them (`spec.hooks`): a Job or an HTTP POST that acts on a member
// of the StatefulSet around its pod's replacement — `prepare` right before the partition write that
// releases the pod (a switchover away from a primary, a drain), `settle` once the pod is back Ready on
// the new revision, before the next step's checks (re-enable shard allocation, wait for catch-up).
// Checked here; src/rollout/hooks.ts decides when they run, controller/hooks.ts runs them.
import { urlProblem } from '../gate-templates.js';
import { parseJobGate, type JobTemplate } from '../jobs/template.js';

export type HookWhen = 'prepare' | 'settle';

/** HookTemplate is one hook of a policy: a Job (`template`) or an HTTP POST (`url`), never both. */
export interface HookTemplate {
  /** `hook.<name>` in a policy, `<reference>/hook.<name>` once merged. */
  name: string;
  when: HookWhen;
  /** A Job's activeDeadlineSeconds, or the HTTP request's timeout. Past it the run is an error. */
  timeoutSeconds: number;
  template?: JobTemplate;
  url?: string;
}

/** At most this many hooks in one policy: each runs once per released pod at every step. */
export const MAX_POLICY_HOOKS = 4;
export const DEFAULT_HOOK_TIMEOUT_SECONDS = 300;
export const DEFAULT_HTTP_HOOK_TIMEOUT_SECONDS = 30;
/** An HTTP hook waits at most this long for its answer (a long action belongs in a Job). */
export const MAX_HTTP_HOOK_TIMEOUT_SECONDS = 120;

/**
 * parseHook checks one item of a policy's `spec.hooks` (its name, a DNS label, checked by the caller);
 * the hook, or what is wrong with it (`at` says where).
 */
export function parseHook(name: string, item: Record<string, unknown>, at: string): HookTemplate | string {
  const when = item.when;
  if (when !== 'prepare' && when !== 'settle') return `${at}.when: prepare (before a pod is replaced) or settle (after it is back on the new revision)`;
  const hasJob = item.template !== undefined;
  const hasUrl = item.url !== undefined;
  if (hasJob === hasUrl) return `${at}: exactly one of template (a Job) or url (an HTTP POST)`;
  const timeout = item.timeoutSeconds ?? (hasUrl ? DEFAULT_HTTP_HOOK_TIMEOUT_SECONDS : DEFAULT_HOOK_TIMEOUT_SECONDS);
  if (hasUrl) {
    const url = typeof item.url === 'string' ? item.url : '';
    const bad = urlProblem(url);
    if (bad) return `${at}.url: an http(s) URL: ${bad}`;
    if (/\{\{/.test(url)) return `${at}.url: no placeholders (the POST's body says what the hook acts on)`;
    if (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 1 || timeout > MAX_HTTP_HOOK_TIMEOUT_SECONDS) return `${at}.timeoutSeconds: an integer from 1 to ${MAX_HTTP_HOOK_TIMEOUT_SECONDS} for an HTTP hook`;
    return { name: `hook.${name}`, when, timeoutSeconds: timeout, url };
  }
  // A Job hook is checked as a Job gate is (the same Job machinery runs it).
  const job = parseJobGate('', { template: item.template, timeoutSeconds: timeout }, at);
  if (typeof job === 'string') return job;
  return { name: `hook.${name}`, when, timeoutSeconds: job.timeoutSeconds, template: job.template };
}
