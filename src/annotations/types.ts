// The shapes of the annotation contract: the typed config a parse yields, and the problems it reports.
// Types only, so the other files here (and the planner above them) share them without a cycle.

import type { CompareCriteria } from '../analysis/criteria.js';
import type { GateTemplate, HttpGateTemplate } from '../gate-templates.js';
import type { JobGateTemplate } from '../jobs/template.js';
import type { HookTemplate } from '../hooks/template.js';
import type { CheckpointSpec } from '../checkpoints/spec.js';
import type { AnalysisRef } from '../argo/reference.js';

/**
 * Step is one stage of phased-rollout.io/steps: a cumulative count of updated pods, or a percentage of
 * replicas; `pause` when a `pause` marker stands before it (the rollout waits for promotion there).
 */
export type Step = ({ count: number } | { percent: number }) & { pause?: true };

/** RolloutConfig is the typed, defaulted form of an opted-in StatefulSet's annotations. */
export interface RolloutConfig {
  /** The gates: `query` and every `query.<name>`, in key order; all must pass. Empty only when bypassed. */
  gates: GateTemplate[];
  /** The HTTP gates: every `http.<name>`, in key order; all must pass too. */
  httpGates: HttpGateTemplate[];
  /** The comparison gates: every `compare.<name>`, in key order (new revision against old, per step). */
  compareGates: CompareTemplate[];
  /** The Job gates: only from gate policies (phased-rollout.io/gates), never an annotation. */
  jobGates: JobGateTemplate[];
  /**
   * Argo Rollouts analysis (only policies have it: spec.analysis, src/argo/reference.ts): one run per
   * step, judged by Argo's rules; `<policy>/analysis` once merged.
   */
  analysisGates?: AnalysisGate[];
  /** Member hooks (only policies have them: src/hooks/template.ts). */
  hooks: HookTemplate[];
  /** A volume snapshot of each released member right before the partition write (only policies have it: src/checkpoints/spec.ts). */
  checkpoint?: CheckpointSpec;
  /** Gates (by name: query, query.<name>, http.<name>, compare.<name>) recorded but never enforced. */
  dryRun: string[];
  /** Checks in a row that could not be evaluated before the rollout fails (0: never). */
  errorLimit: number;
  /** Inconclusive checks in a row before the rollout pauses for a person (0: never). */
  inconclusiveLimit: number;
  /** Gate policies referenced (phased-rollout.io/gates): `name` (a RolloutGate here) or `cluster/name` (a ClusterRolloutGate). */
  policyRefs: string[];
  /** A Secret (labelled phased-rollout.io/gate-credentials) with the HTTP gates' token, username/password or ca.crt. */
  httpSecret?: string;
  prometheusUrl?: string;
  /**
   * Query and comparison gates (by name) of platform policies (src/policies/scope.ts): they go to the
   * controller's own --prometheus-url, never to prometheusUrl and never with prometheusSecret.
   */
  operatorGates?: string[];
  /** Query and comparison gates of ClusterRolloutGates with spec.tenantScoped false: sent without the tenant, to --platform-prometheus-url. */
  unscopedGates?: string[];
  initialDelaySeconds: number;
  periodSeconds: number;
  successThreshold: number;
  failureThreshold: number;
  progressDeadlineSeconds: number;
  /** The rollout group (StatefulSets of one namespace that roll one at a time), and this one's place in it. */
  group?: string;
  groupOrder: number;
  /** What a failed rollout does: stop where it is (halt), or put the known-good template back (rollback). */
  onFailure: 'halt' | 'rollback';
  prometheusSecret?: string;
  /** A Secret (labelled phased-rollout.io/notify-target) holding a `url` to POST notifications to. */
  notify?: string;
  paused: boolean;
  standardRollingUpdate: boolean;
  /** Each step first asks the PodDisruptionBudgets over the pods (phased-rollout.io/respect-pdb, default true). */
  respectPdb: boolean;
  /** Absent: one pod per step. */
  steps?: Step[];
  /**
   * The most pods one step may replace, set by an enforcing platform policy (src/policies/merge.ts):
   * `first` for the first step of a rollout (no pod on the revision yet: a canary), `later` (each a
   * count of pods, or a percent of the replicas rounded up; all hold) for every step after it. Absent:
   * the steps as written.
   */
  stepCeiling?: { first: number; later: Step[] };
  /**
   * What a user promoted with `kubectl phased-rollout promote`: a pause of the steps (`<revision>/<stage>`),
   * or one inconclusive hold (`<revision>@<partition>@<hold>`, the hold's start in Unix seconds: a
   * promotion lets that hold's step go, never a later hold of the same revision at the same partition).
   */
  promote?: { revision: string; stage: number } | { revision: string; partition: number; hold: number };
  /** The revision a user asked to roll back (`kubectl phased-rollout abort`). */
  abort?: string;
  /**
   * The Failed rollout a user asked to start again (`kubectl phased-rollout retry`): its revision and when
   * it failed (the status's `since`, in ms), so that a retry never restarts a later failure.
   */
  retry?: { revision: string; failedAt: number };
}

/** CompareTemplate is one comparison gate as written: its name, its PromQL with {{revision}}, its criteria. */
export interface CompareTemplate {
  /** `compare.<name>`. */
  name: string;
  query: string;
  criteria: CompareCriteria;
}

/** Problem is one bad annotation: its key, the value found, and what is allowed instead. */
export interface Problem {
  key: string;
  value: string | undefined;
  allowed: string;
}

/** OptIn is how the `enabled` annotation reads: absent, "false", "true", or anything else. */
export type OptIn = 'absent' | 'off' | 'on' | 'invalid';

/** ParseResult is the outcome of `parseAnnotations`. */
export type ParseResult =
  | { optIn: 'absent' | 'off'; ok: true; config: null }
  | { optIn: 'on' | 'invalid'; ok: true; config: RolloutConfig }
  | { optIn: 'on' | 'invalid'; ok: false; problems: Problem[] };

/** AnalysisGate is a policy's reference to Argo's templates, as one gate. */
export interface AnalysisGate {
  /** `<policy>/analysis`. */
  name: string;
  ref: AnalysisRef;
  /** A ClusterRolloutGate's: only ClusterAnalysisTemplates may be followed (a namespaced one is the team's to edit). */
  clusterOnly?: true;
}
