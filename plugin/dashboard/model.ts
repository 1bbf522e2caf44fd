// What the dashboard page shows, built from the watches' caches: one card per opted-in StatefulSet, its
// pods as boxes in ordinal order, the partition, phase and message, the gate's streak, the last checks'
// verdicts, the steps, and recent Events; members of a rollout group together, in group order.
// Pure, so it is tested in tables. It copies only what the page shows: no Secret is ever read, and of a
// StatefulSet's annotations only phased-rollout.io settings that are no URL (an HTTP gate's URL may
// carry a token) go to the page.
import { KEYS, parseAnnotations } from '../../src/annotations.js';
import { readStatus } from '../../src/rollout/status.js';
import { stageCounts } from '../../src/rollout/steps.js';
import type { GateHistory } from '../../src/rollout/types.js';

/** The parts of Kubernetes objects the model reads (client-node's types fit). */
export interface StsObj {
  metadata?: { namespace?: string; name?: string; annotations?: Record<string, string> };
  spec?: { replicas?: number; updateStrategy?: { rollingUpdate?: { partition?: number } }; ordinals?: { start?: number } };
  status?: { updateRevision?: string; currentRevision?: string };
}
export interface PodObj {
  metadata?: { namespace?: string; name?: string; labels?: Record<string, string>; deletionTimestamp?: unknown; ownerReferences?: { kind?: string; name?: string }[] };
  status?: { phase?: string; conditions?: { type?: string; status?: string }[] };
}
export interface EventObj {
  metadata?: { namespace?: string };
  involvedObject?: { kind?: string; name?: string; namespace?: string };
  type?: string;
  reason?: string;
  message?: string;
  count?: number;
  lastTimestamp?: unknown;
  eventTime?: unknown;
  firstTimestamp?: unknown;
}

/** PodBox is one pod as a box. */
export interface PodBox {
  name: string;
  ordinal: number;
  /** 'update': on the revision being rolled out; 'current': the known-good one; 'other': neither */
  on: 'update' | 'current' | 'other';
  revision: string;
  ready: boolean;
  deleting: boolean;
  phase: string;
}

/** Card is one StatefulSet. */
export interface Card {
  namespace: string;
  name: string;
  group?: string;
  groupOrder?: number;
  phase: string;
  message: string;
  since?: string;
  partition: number;
  replicas: number;
  updateRevision?: string;
  currentRevision?: string;
  updated: number;
  streak?: number;
  successThreshold?: number;
  gate?: string;
  steps?: string;
  /** with steps: how many stages the partition has released so far, of how many */
  stage?: { released: number; of: number };
  /** the stage a pause of the steps waits to be promoted to */
  promotion?: number;
  /** why it is Paused when no user paused it: Inconclusive (promote takes the step) */
  reason?: string;
  /** each gate's last measurements, from the status (dry-run gates marked) */
  history?: GateHistory;
  /** gates recorded but never enforced */
  dryRun?: string[];
  paused: boolean;
  gates: string[];
  pods: PodBox[];
  /** the last gate verdicts told by Events (failures and errors carry their detail), newest first */
  checks: { at: string; verdict: string; detail: string }[];
  events: { at: string; type: string; reason: string; message: string; count: number }[];
}

const iso = (t: unknown): string => (t instanceof Date ? t.toISOString() : typeof t === 'string' ? t : '');

/** VERDICTS maps the controller's Event reasons to a check's verdict. */
const VERDICTS: Record<string, string> = { PartitionLowered: 'pass', RolloutCompleted: 'pass', CheckFailed: 'fail', PrometheusError: 'error', GateError: 'error', RolloutFailed: 'fail', CheckInconclusive: 'inconclusive' };

/** buildModel returns the cards, grouped (group, order, name) then alone (namespace, name). */
export function buildModel(sets: readonly StsObj[], pods: readonly PodObj[], events: readonly EventObj[]): Card[] {
  const cards: Card[] = [];
  for (const s of sets) {
    const annotations = s.metadata?.annotations ?? {};
    const parsed = parseAnnotations(annotations);
    if (parsed.optIn === 'absent' || parsed.optIn === 'off') continue;
    const namespace = s.metadata?.namespace ?? '';
    const name = s.metadata?.name ?? '';
    const replicas = s.spec?.replicas ?? 1;
    const start = s.spec?.ordinals?.start ?? 0;
    const update = s.status?.updateRevision;
    const current = s.status?.currentRevision;
    const status = readStatus(annotations);
    const boxes: PodBox[] = [];
    for (const p of pods) {
      if (p.metadata?.namespace !== namespace) continue;
      const pname = p.metadata?.name ?? '';
      const owned = (p.metadata?.ownerReferences ?? []).some((o) => o.kind === 'StatefulSet' && o.name === name);
      const m = /-(\d+)$/.exec(pname);
      if (!owned || !m || pname.slice(0, -m[0].length) !== name) continue;
      const revision = p.metadata?.labels?.['controller-revision-hash'] ?? '';
      boxes.push({
        name: pname,
        ordinal: Number(m[1]),
        on: revision === update ? 'update' : revision === current ? 'current' : 'other',
        revision,
        ready: (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
        deleting: Boolean(p.metadata?.deletionTimestamp),
        phase: p.status?.phase ?? 'Unknown',
      });
    }
    boxes.sort((a, b) => a.ordinal - b.ordinal);
    const mine = events
      .filter((e) => e.involvedObject?.kind === 'StatefulSet' && e.involvedObject.name === name && (e.involvedObject.namespace ?? e.metadata?.namespace) === namespace)
      .map((e) => ({ at: iso(e.lastTimestamp) || iso(e.eventTime) || iso(e.firstTimestamp), type: e.type ?? 'Normal', reason: e.reason ?? '', message: e.message ?? '', count: e.count ?? 1 }))
      .sort((a, b) => b.at.localeCompare(a.at));
    const cfg = parsed.ok ? parsed.config : undefined;
    const card: Card = {
      namespace,
      name,
      phase: status?.phase ?? 'Pending',
      message: status?.message ?? 'no status yet: is the controller running?',
      partition: s.spec?.updateStrategy?.rollingUpdate?.partition ?? 0,
      replicas,
      updated: boxes.filter((b) => b.on === 'update' && b.ordinal - start < replicas).length,
      paused: annotations[KEYS.paused] === 'true',
      gates: [...(cfg?.gates ?? []), ...(cfg?.httpGates ?? []), ...(cfg?.compareGates ?? [])].map((g) => g.name),
      pods: boxes,
      checks: mine.filter((e) => VERDICTS[e.reason] !== undefined).slice(0, 6).map((e) => ({ at: e.at, verdict: VERDICTS[e.reason] ?? '', detail: e.message })),
      events: mine.slice(0, 8),
    };
    if (status?.since) card.since = status.since;
    if (update) card.updateRevision = update;
    if (current) card.currentRevision = current;
    if (status?.streak !== undefined) card.streak = status.streak;
    if (cfg) card.successThreshold = cfg.successThreshold;
    if (status?.gate) card.gate = status.gate;
    if (annotations[KEYS.steps]) card.steps = annotations[KEYS.steps];
    if (cfg?.steps) {
      const counts = stageCounts(cfg.steps, replicas);
      card.stage = { released: counts.filter((n) => n <= replicas - card.partition).length, of: counts.length };
    }
    if (status?.promotion !== undefined) card.promotion = status.promotion;
    if (status?.reason) card.reason = status.reason;
    if (status?.history) card.history = status.history;
    if (cfg && cfg.dryRun.length > 0) card.dryRun = cfg.dryRun;
    if (cfg?.group) {
      card.group = cfg.group;
      card.groupOrder = cfg.groupOrder;
    }
    cards.push(card);
  }
  const key = (c: Card) => [c.group === undefined ? 1 : 0, c.namespace, c.group ?? '', String(c.groupOrder ?? 0).padStart(6, '0'), c.name].join('\u0000');
  return cards.sort((a, b) => key(a).localeCompare(key(b)));
}
