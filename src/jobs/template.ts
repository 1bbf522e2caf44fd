// A Job gate as a gate policy writes it, checked (src/jobs/job-gate.ts runs it). Below the annotations,
// the policies and the planner, and importing none of them.

/** When a Job gate runs: once per step (its outcome stands for every check of the step) or at every check. */
export type JobRuns = 'step' | 'check';

/** JobGateTemplate is one Job gate as a policy writes it. */
export interface JobGateTemplate {
  /** `job.<name>` (in a policy), `<policy>/job.<name>` once merged. */
  name: string;
  runs: JobRuns;
  /** The Job's activeDeadlineSeconds: past it, the Job controller stops it and the check is an error. */
  timeoutSeconds: number;
  /** A Job template: `metadata` (labels, annotations) and `spec` (a batch/v1 JobSpec). */
  template: JobTemplate;
}

export interface JobTemplate {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: Record<string, unknown>;
}

/** JobCheck is a Job gate at one check: the step it judges. */
export interface JobCheck extends JobGateTemplate {
  revision: string;
  /** The partition of the step. */
  partition: number;
  /** The pod the check judges (the one the step rolled; before the first step, the one that rolls first), handed to the Job as PHASED_ROLLOUT_POD. */
  pod: string;
  /** Every pod's identity and Ready time at the check: a Job's pass stands for these pods only. */
  pods: string;
  /** Set for a member hook's Job (prepare or settle): kept apart from the gates' Jobs. */
  hook?: 'prepare' | 'settle';
  /** Set for an Argo job metric's Job: kept apart from the Job gates' Jobs and from other metrics'. */
  analysis?: true;
  /** More of the Job's environment (a hook's context). */
  env?: Record<string, string>;
}

export const DEFAULT_JOB_TIMEOUT_SECONDS = 600;
export const MIN_JOB_TTL_SECONDS = 60;
export const MAX_JOB_TIMEOUT_SECONDS = 86_400;
/** The largest template a policy may hold (JSON): each is copied into every Job. */
export const MAX_JOB_TEMPLATE_BYTES = 16 * 1024;

/**
 * parseJobGate checks a policy's Job gate (everything but the name) and returns it, or what is wrong.
 * The JobSpec itself is the API server's to judge when the Job is created (a refused one is an error
 * outcome that says why); here: the shape the controller relies on, and bounded size.
 */
export function parseJobGate(name: string, item: Record<string, unknown>, at: string): JobGateTemplate | string {
  const runs = item.runs ?? 'step';
  if (runs !== 'step' && runs !== 'check') return `${at}.runs: step (once per step, the default) or check (at every check)`;
  const timeout = item.timeoutSeconds ?? DEFAULT_JOB_TIMEOUT_SECONDS;
  if (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 1 || timeout > MAX_JOB_TIMEOUT_SECONDS) return `${at}.timeoutSeconds: an integer from 1 to ${MAX_JOB_TIMEOUT_SECONDS}`;
  const t = item.template;
  if (!isObject(t) || !isObject(t.spec)) return `${at}.template: a Job template with a spec (batch/v1 JobSpec)`;
  const pod = t.spec.template;
  if (!isObject(pod) || !isObject(pod.spec) || !Array.isArray(pod.spec.containers) || pod.spec.containers.length === 0) return `${at}.template.spec.template.spec.containers: at least one container`;
  if (pod.spec.restartPolicy !== undefined && pod.spec.restartPolicy !== 'Never' && pod.spec.restartPolicy !== 'OnFailure') return `${at}.template.spec.template.spec.restartPolicy: Never (the default) or OnFailure`;
  if (t.metadata !== undefined && !isObject(t.metadata)) return `${at}.template.metadata: labels and annotations`;
  for (const field of ['labels', 'annotations'] as const) {
    const m = t.metadata?.[field];
    if (m === undefined) continue;
    if (!isObject(m) || Object.values(m).some((v) => typeof v !== 'string')) return `${at}.template.metadata.${field}: a map of strings`;
    const ours = Object.keys(m).find((k) => k.startsWith('phased-rollout.io/'));
    if (ours) return `${at}.template.metadata.${field}: ${ours} is the controller's to set`;
  }
  // A Job the controller could not see through: never run (suspend), run by another controller
  // (managedBy), pods of its own choosing (selector), or gone before its outcome is read (a short TTL).
  const s = t.spec;
  if (s.suspend !== undefined && s.suspend !== false) return `${at}.template.spec.suspend: not set (a suspended Job never runs)`;
  if (s.managedBy !== undefined) return `${at}.template.spec.managedBy: not set (the Job controller must run it)`;
  if (s.selector !== undefined || s.manualSelector !== undefined) return `${at}.template.spec.selector: not set (the Job controller picks its pods)`;
  if (s.ttlSecondsAfterFinished !== undefined && (typeof s.ttlSecondsAfterFinished !== 'number' || !Number.isInteger(s.ttlSecondsAfterFinished) || s.ttlSecondsAfterFinished < MIN_JOB_TTL_SECONDS)) return `${at}.template.spec.ttlSecondsAfterFinished: an integer of at least ${MIN_JOB_TTL_SECONDS} (its outcome is read after it finished)`;
  const bad = (pod.spec.containers as unknown[]).findIndex((c) => !isObject(c) || (c.env !== undefined && !Array.isArray(c.env)));
  if (bad >= 0) return `${at}.template.spec.template.spec.containers[${bad}]: a container whose env is a list of {name, value}`;
  const size = Buffer.byteLength(JSON.stringify(t));
  if (size > MAX_JOB_TEMPLATE_BYTES) return `${at}.template: at most ${MAX_JOB_TEMPLATE_BYTES} bytes as JSON (${size})`;
  return { name, runs, timeoutSeconds: timeout, template: t as unknown as JobTemplate };
}

function isObject(v: unknown): v is Record<string, any> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
