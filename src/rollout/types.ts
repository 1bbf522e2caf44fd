// The controller's view of one StatefulSet and the decisions about it. Plain data only (times in ms
// since the epoch), so plan() is a pure function tested in tables.
import type { CompareCriteria } from '../analysis/criteria.js';
import type { PolicyLookup } from '../policies/merge.js';
import type { SelectedPolicy } from '../policies/scope.js';
import type { JobCheck } from '../jobs/template.js';
import type { AnalysisRef } from '../argo/reference.js';
import type { ArgFields } from '../argo/args.js';
import type { HookOutcome, HookRequest } from './hooks.js';

/** Phase is the rollout phase shown in the status annotation (SPEC §4.4). */
export type Phase = 'Idle' | 'Queued' | 'WaitingForPods' | 'Baking' | 'Checking' | 'RollingBack' | 'RolledBack' | 'Paused' | 'Failed' | 'Completed' | 'Bypassed' | 'Invalid';

/** PHASES lists every phase, for the one-hot phase metric. */
export const PHASES: readonly Phase[] = ['Idle', 'Queued', 'WaitingForPods', 'Baking', 'Checking', 'RollingBack', 'RolledBack', 'Paused', 'Failed', 'Completed', 'Bypassed', 'Invalid'];

/** FailureReason says why a rollout was given up: the gate, the progress deadline, a user's abort, or gates that could not be evaluated error-limit times in a row. */
export type FailureReason = 'FailureThreshold' | 'ProgressDeadlineExceeded' | 'Aborted' | 'ErrorLimit';

/** GateState summarises the latest check, so the status can show a Prometheus outage. */
export type GateState = 'passing' | 'failing' | 'error' | 'inconclusive';

/** RolloutStatus is the JSON of the phased-rollout.io/status annotation. */
export interface RolloutStatus {
  phase: Phase;
  revision: string;
  partition: number;
  replicas: number;
  updated: number;
  message: string;
  since: string;
  gate?: GateState;
  /** Consecutive passing checks of the current step (rolling phases only). */
  streak?: number;
  /** Paused at a `pause` of phased-rollout.io/steps: the step that waits for `kubectl phased-rollout promote`. */
  promotion?: number;
  /**
   * The revision last rolled back (on-failure: rollback, or an abort), and why. Kept until the status is
   * cleared (a retry): the same revision applied again is held, not rolled (no rollback loop).
   */
  failedRevision?: string;
  failureReason?: FailureReason;
  /**
   * The revision this rollout started from (the StatefulSet's currentRevision when it began), kept while
   * the rollout is unfinished. After the last step the StatefulSet controller makes the new revision
   * current before the final check has run; a rollback or an abort then returns here.
   */
  previousRevision?: string;
  /**
   * A revision the StatefulSet controller made current before any check verified it, that an undo to
   * where its rollout started turned away from (src/rollout/revisions.ts, returningToStart). Kept while
   * it is still the current revision and no rollout is settled: the undo goes on as a revert, and the
   * revision applied again is a rollout from the one restored, gated, never a revert to it.
   */
  unverifiedRevision?: string;
  /** Queued behind another member of its group before its first step: a scale-up does not make it started. */
  waitingToStart?: boolean;
  /** Why a rollout is Paused when no user paused it: `Inconclusive` (inconclusive-limit checks in a row). */
  reason?: 'Inconclusive';
  /**
   * The identity of an inconclusive hold (reason `Inconclusive`): when this hold began, in ms since the
   * epoch. Set only when a hold begins and kept while the same hold stands, so a promotion
   * (`<revision>@<partition>@<hold>`) names exactly one hold: a later hold, even at the same revision
   * and partition and after a pause, has another identity.
   */
  hold?: number;
  /** The pods the hold judged (podsIdentity of their UIDs): a pod replaced since ends the hold and its promotion. */
  holdPods?: string;
  /** The promotion of an inconclusive hold (`<revision>@<partition>@<hold>`) in force until its step is taken. */
  promoted?: string;
  /** The last promotion refused (it named a hold that has ended or never was): its Event is sent once. */
  promotionRefused?: string;
  /** The last measurements of each gate of this revision, newest last (src/rollout/history.ts). */
  history?: GateHistory;
  /** The member hooks (src/rollout/hooks.ts) that succeeded for the step under way, by run key: none is run again. */
  hooksDone?: string[];
  /**
   * The attempt at the member hooks of the step under way (src/rollout/hook-steps.ts): the step
   * (`when@revision@partition@direction`), a fingerprint of its list of runs, and when it began. It goes
   * on while the status does (same step, same list, a phase in which hooks run); anything else begins a
   * new one, whose runs have other keys.
   */
  hookAttempt?: { step: string; runs: string; at: number };
  /**
   * The checkpoints of this revision's rollout (src/checkpoints/snapshots.ts): each member's
   * VolumeSnapshots, cut before its pod was replaced. Kept while the status speaks of this revision;
   * the snapshots' labels are the lasting record (`kubectl get volumesnapshots -l phased-rollout.io/statefulset=NAME`).
   */
  checkpoints?: Record<string, string[]>;
  /** The pods the last step released, while their settle hooks are to run (`step`: `<revision>@<partition>`). */
  released?: { step: string; pods: string[] };
  /** The controller's HMAC of the rest and the StatefulSet's UID (src/rollout/status-seal.ts); written last. */
  seal?: string;
}

/**
 * Measurement is one run of equal outcomes of one gate: its outcome, the last value measured, when it
 * was last measured, and how many checks in a row had that outcome (`count`, brought up to date
 * whenever the status is written).
 */
export interface Measurement {
  result: Verdict['result'];
  value?: string;
  at: string;
  count: number;
  /** Set for a dry-run gate: recorded, never enforced. */
  dryRun?: true;
}

/** GateHistory maps a gate's name (query, query.<name>, http.<name>, compare.<name>) to its last measurements. */
export type GateHistory = Record<string, Measurement[]>;

/** PodView is what the planner needs of one pod. */
export interface PodView {
  name: string;
  uid: string;
  /** ordinal - spec.ordinals.start: what the partition is compared with. */
  index: number;
  revision: string;
  ready: boolean;
  /** When the Ready condition last became True. */
  readySinceMs?: number;
  deleting: boolean;
}

/** StatefulSetView is what the planner needs of one StatefulSet. */
export interface StatefulSetView {
  namespace: string;
  name: string;
  generation: number;
  observedGeneration: number;
  replicas: number;
  ordinalsStart: number;
  partition: number;
  strategyType: string;
  minReadySeconds: number;
  /** podManagementPolicy Parallel: a stage may replace up to maxUnavailable pods at once. */
  parallel?: boolean;
  /** rollingUpdate.maxUnavailable resolved against replicas (a percentage rounds up, at least 1). */
  maxUnavailable?: number;
  updateRevision?: string;
  currentRevision?: string;
  /** status.readyReplicas and status.updatedReplicas as the StatefulSet controller last wrote them. */
  readyReplicas?: number;
  updatedReplicas?: number;
  annotations: Record<string, string>;
  /** metadata.uid and metadata.labels: what an Argo analysis arg's fieldRef may read. */
  uid?: string;
  labels?: Record<string, string>;
  /** The names of spec.volumeClaimTemplates: a member's claims are `<template>-<pod>`. */
  claimTemplates?: string[];
}

/** BudgetView is what the planner needs of one PodDisruptionBudget over a StatefulSet's pods. */
export interface BudgetView {
  name: string;
  generation: number;
  observedGeneration: number;
  disruptionsAllowed: number;
  currentHealthy: number;
  desiredHealthy: number;
}

/** GroupMember is what one member of a group tells the others. */
export interface GroupMember {
  name: string;
  order: number;
  /** Something is unfinished: a revision not on every pod yet, or the partition not pinned again. */
  pending: boolean;
  /** An unfinished rollout that has moved: the partition is below replicas or a pod is updated. */
  started: boolean;
  /** Its status says Failed or RolledBack for its current revision: the group halts. */
  failed: boolean;
  /**
   * Why one of its pods does not count as up (`pg-b-2 is not ready`), or why a step of its own is in
   * flight (a pod at or above its partition not yet on its update revision); undefined when every pod
   * exists, is Ready and available and nothing is mid-step. No other member takes a step meanwhile.
   */
  down?: string;
}

/**
 * Verdict is the outcome of one gate check (SPEC §4.3): pass, fail, inconclusive (evaluated, but not
 * enough to judge: a comparison with too few values), or error (could not be evaluated).
 */
export interface Verdict {
  result: 'pass' | 'fail' | 'error' | 'inconclusive';
  detail: string;
  /** The measured value in short (a sample, an HTTP status, both sides of a comparison), for the history. */
  value?: string;
  /**
   * The end of an Argo analysis run (src/argo/verdict.ts): Failed or Error takes the failure path and
   * Inconclusive holds for a person at once, as Argo acts on a run's end, whatever the thresholds say.
   */
  decisive?: true;
}

/** Memory is what the controller remembers between reconciles of one StatefulSet (lost on restart). */
export interface Memory {
  /** `revision@partition#gate`: the step and gate settings the streak belongs to. */
  step: string;
  revision: string;
  /** The bake anchor: when this process saw the revision (or the gate settings) first. */
  seenAtMs: number;
  streak: number;
  failures: number;
  /** Checks in a row that could not be evaluated (error-limit); any evaluated check resets it. */
  errors?: number;
  /** Inconclusive checks in a row (inconclusive-limit); a pass or a fail resets it, an error does not. */
  inconclusive?: number;
  /** The measurements of this revision so far (the status carries them; src/rollout/history.ts). */
  history?: GateHistory;
  /** Replicas when the step began: growth mid-rollout is a scale the partition must hold back. */
  replicas?: number;
  /**
   * Every pod's (UID, Ready time) when the streak was counted: any other value is a pod that went down
   * and came back (or was replaced) since, even if no reconcile saw it down, whatever the node clocks say.
   */
  podsKey?: string;
  /** This process's clock when it first saw the pods as `podsKey` says: the initial delay counts from here too. */
  podsSeenAtMs?: number;
  lastCheckAtMs?: number;
  lastVerdict?: Verdict;
  /** Set while restoring a known-good revision, so its end re-pins without a gate. */
  reverting?: boolean;
  /** The last progress of this rollout (first seen, or a partition step), for progress-deadline-seconds. */
  progressAtMs?: number;
  /** When the settle hooks of the last step were done: the initial delay counts from here too. */
  settledAtMs?: number;
  /**
   * Why an Argo analysis run of this step cannot be made (a template missing or refused): the step
   * holds as Invalid with the reason, and its check is asked again until the template is fixed.
   */
  analysisProblem?: string;
}

/** CheckRequest asks the shell to query the gates now: every one, placeholders filled in; all must pass. */
export interface CheckRequest {
  /** Set when there is a Prometheus gate of the StatefulSet's own or of a policy it names. */
  prometheusUrl?: string;
  /** The controller's --prometheus-url, for operatorGates. */
  operatorPrometheusUrl?: string;
  /** Query and comparison gates (by name) of platform policies: sent to operatorPrometheusUrl, never with secretName's credentials. */
  operatorGates?: string[];
  /** Gates of ClusterRolloutGates with spec.tenantScoped false: to platformPrometheusUrl, without the tenant or any Secret. */
  unscopedGates?: string[];
  /** --platform-prometheus-url (or --prometheus-url), for unscopedGates. */
  platformPrometheusUrl?: string;
  gates: { name: string; query: string }[];
  /** Comparison gates: the same expression for the update revision's pods and for the old revision's. */
  compare?: CompareCheck[];
  /** Gates whose verdicts are recorded but never enforced (phased-rollout.io/dry-run). */
  dryRun?: string[];
  secretName?: string;
  /** HTTP gates (phased-rollout.io/http.<name>), URLs rendered. */
  http?: { name: string; url: string }[];
  httpSecretName?: string;
  /** Job gates (from gate policies), with the step they judge. */
  jobs?: JobCheck[];
  /** Argo analysis runs (from gate policies): one per step, advanced at each check (controller/argo.ts). */
  analysis?: AnalysisCheck[];
  /**
   * --prometheus-tenant-label: every query goes with `<label>=<value>` (the StatefulSet's namespace)
   * as a URL parameter, the form prom-label-proxy enforces; absent: queries go as written.
   */
  tenant?: { label: string; value: string };
}

/** CompareCheck is one comparison gate, rendered for one check. */
export interface CompareCheck {
  name: string;
  newQuery: string;
  oldQuery: string;
  criteria: CompareCriteria;
}

/**
 * PodConfirm is the pod a gated step stands on as the cache showed it: the one that rolled last (the
 * lowest updated ordinal, the last to become Ready under OrderedReady). The shell reads it from the API
 * server right before the patch and drops the step unless it is still that pod, Ready since then.
 */
export interface PodConfirm {
  name: string;
  uid: string;
  revision: string;
  readySinceMs?: number;
}

/** Action is one change the shell applies to the cluster. */
export type Action =
  /** `confirm`: a gated step's newest pod, read live before the patch (the cache may lag a pod's loss). */
  /** `peers`: a gated step of a group member; the shell reads the other members' pods live first. */
  | { type: 'setPartition'; from: number; to: number; confirm?: PodConfirm; peers?: true }
  /** Put the pod template of a known-good ControllerRevision back on the StatefulSet (automatic rollback). */
  | { type: 'restoreTemplate'; revision: string }
  | { type: 'deletePod'; name: string; uid: string; reason: 'RollbackPodDeleted' | 'StrandedPodDeleted'; message: string }
  /** `pods`: the pods a step releases (PartitionLowered), for notifications. */
  | { type: 'event'; eventType: 'Normal' | 'Warning'; reason: string; message: string; pods?: string[] }
  | { type: 'writeStatus'; status: RolloutStatus }
  | { type: 'removeStatus' };

/** PlanInput is everything plan() looks at. */
export interface PlanInput {
  sts: StatefulSetView;
  pods: PodView[];
  nowMs: number;
  memory?: Memory;
  /** The controller's --prometheus-url, used when the annotation is absent. */
  defaultPrometheusUrl?: string;
  /** The controller's --allowed-prometheus-urls: no query goes anywhere else. */
  allowedPrometheusUrls?: readonly string[];
  /** The controller's --allowed-gate-urls: no HTTP gate goes anywhere else. */
  allowedGateUrls?: readonly string[];
  /** The gate policies its phased-rollout.io/gates references, as the shell found them (src/policies/merge.ts). */
  policies?: PolicyLookup;
  /** The ClusterRolloutGates that select its namespace (src/policies/scope.ts): they apply as if named, and an enforcing one opts it in. */
  selectedPolicies?: readonly SelectedPolicy[];
  /** Why the shell cannot tell which ClusterRolloutGates select the namespace now (not listed yet, a watch down): a step waits. */
  selectionUnknown?: string;
  /** The other members of this StatefulSet's rollout group (phased-rollout.io/group), from the cache. */
  group?: GroupMember[];
  /** The PodDisruptionBudgets of the namespace whose selector matches this StatefulSet's pods. */
  budgets?: BudgetView[];
  /**
   * The controller's --status-sync-wait (ms): a step waits up to this long after the last pod became
   * available for the StatefulSet's status to count the ready and updated pods the cache shows.
   */
  statusSyncWaitMs?: number;
  /** What the shell read of the member hooks the last plan asked for (src/rollout/hooks.ts). */
  hookOutcomes?: HookOutcome[];
  /** The controller's --min-period-seconds: a shorter period-seconds (annotation or policy) is raised to it. */
  minPeriodSeconds?: number;
  /** The controller's --prometheus-tenant-label: queries carry the namespace in this URL parameter. */
  tenantLabel?: string;
  /** The controller's --platform-prometheus-url: where a ClusterRolloutGate's queries go when it says tenantScoped: false. */
  platformPrometheusUrl?: string;
}

/** PlanResult is what to do now and when to look again. */
export interface PlanResult {
  phase: Phase | null;
  actions: Action[];
  memory?: Memory;
  check?: CheckRequest;
  /** Member hooks to run (or look at) now, before the step they prepare or after the one they settle. */
  hooks?: HookRequest;
  /** A rollback with `restore: on-rollback`: the shell carries on the restores it began (controller/restores.ts). */
  restores?: true;
  /** Look again after this long even if nothing changes (delays, check periods). */
  requeueAfterMs?: number;
}

/** AnalysisCheck is an Argo analysis gate at one check: the step whose run it advances, and what its args read. */
export interface AnalysisCheck {
  /** `<policy>/analysis`. */
  name: string;
  ref: AnalysisRef;
  /** The step (revision, partition, pods) the run judges: another step, another run. */
  step: string;
  fields: ArgFields;
  /** A ClusterRolloutGate's: only ClusterAnalysisTemplates may be followed (controller/argo.ts). */
  clusterOnly?: true;
  /** What a job metric's Job is told it judges (as a Job gate's): set by the planner at every check. */
  job?: { revision: string; partition: number; pod: string; pods: string };
}
