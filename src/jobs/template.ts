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
  /** The pod the step rolled (empty at the final check), handed to the Job as PHASED_ROLLOUT_POD. */
  pod: string;
}

export const DEFAULT_JOB_TIMEOUT_SECONDS = 600;
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
  const size = Buffer.byteLength(JSON.stringify(t));
  if (size > MAX_JOB_TEMPLATE_BYTES) return `${at}.template: at most ${MAX_JOB_TEMPLATE_BYTES} bytes as JSON (${size})`;
  return { name, runs, timeoutSeconds: timeout, template: t as unknown as JobTemplate };
}

function isObject(v: unknown): v is Record<string, any> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
