// The parts of Argo Rollouts' analysis API (argoproj.io/v1alpha1: AnalysisTemplate,
// ClusterAnalysisTemplate, AnalysisRun) that the judge reads and writes, in Argo's own field names, so
// that a template is read as it is and the status we keep reads like an AnalysisRun's.

/** Phases in Argo's words. Pending and Running are not completed; the rest are. */
export type ArgoPhase = 'Pending' | 'Running' | 'Successful' | 'Failed' | 'Error' | 'Inconclusive';

/** IntOrString as Kubernetes encodes it: an args substitution leaves a string. */
export type IntOrString = number | string;

export interface ArgoMetric {
  name: string;
  interval?: string;
  initialDelay?: string;
  count?: IntOrString;
  successCondition?: string;
  failureCondition?: string;
  failureLimit?: IntOrString;
  inconclusiveLimit?: IntOrString;
  consecutiveErrorLimit?: IntOrString;
  consecutiveSuccessLimit?: IntOrString;
  provider?: Record<string, unknown>;
}

export interface ArgoMeasurement {
  phase: ArgoPhase;
  value?: string;
  message?: string;
  startedAt: number;
  /** Unset while the measurement is in progress (a job metric's Job runs): Argo resumes it then. */
  finishedAt?: number;
  /** An in-progress measurement is resumed no earlier than this (Argo's resumeAt). */
  resumeAt?: number;
  /** What the provider keeps of it (a job metric: the Job's name). */
  metadata?: Record<string, string>;
}

export interface ArgoMetricResult {
  name: string;
  phase: ArgoPhase;
  dryRun: boolean;
  message?: string;
  count: number;
  successful: number;
  failed: number;
  inconclusive: number;
  error: number;
  consecutiveError: number;
  consecutiveSuccess: number;
  measurements: ArgoMeasurement[];
}

/** The run spec beside the metrics: dry-run and retention rules name metrics by a regular expression. */
export interface ArgoRunSpec {
  metrics: ArgoMetric[];
  dryRun?: { metricName: string }[];
  measurementRetention?: { metricName: string; limit: number }[];
}

export interface ArgoRunStatus {
  phase: ArgoPhase;
  message?: string;
  startedAt?: number;
  metricResults: ArgoMetricResult[];
}

/** Completed phases, as Argo's AnalysisPhase.Completed(). */
export function completed(phase: ArgoPhase): boolean {
  return phase !== 'Pending' && phase !== 'Running';
}
