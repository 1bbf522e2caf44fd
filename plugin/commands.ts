// The kubectl plugin's pure parts: argument parsing, the status table, and the patches each verb sends.
import { KEYS, parseAnnotations } from '../src/annotations.js';
import { readStatus } from '../src/rollout/status.js';
import { retryToken } from '../src/rollout/retry.js';
import { restoring } from '../src/rollout/revisions.js';
import type { GateHistory } from '../src/rollout/types.js';
import { stripControls } from '../src/text.js';
import { parseDuration } from '../src/runtime/config.js';

/** USAGE is the plugin's help text. */
export const USAGE = `Usage: kubectl phased-rollout COMMAND [NAME] [-n NAMESPACE | -A]

Commands:
  status [NAME]   phase, partition and progress of opted-in StatefulSets (all in the namespace if no NAME);
                  with a NAME, each gate's last measurements too (outcome, checks in a row, value)
                  -w/--watch: print the table again whenever it changes (Ctrl-C to stop)
                  -o json: one JSON object per StatefulSet, in an array (with -w: one array per change)
  pause NAME      hold the partition where it is (sets ${KEYS.paused}: "true")
  resume NAME     continue a paused rollout (removes ${KEYS.paused})
  retry NAME      restart the checks of a Failed rollout or an inconclusive hold from zero (sets ${KEYS.retry})
  promote NAME    continue a rollout waiting at a "pause" of ${KEYS.steps}, or take the step of one
                  paused after inconclusive checks (sets ${KEYS.promote})
  abort NAME      roll the current rollout back to the known-good revision (sets ${KEYS.abort}; ends a pause)
  wait NAME       block until the rollout of the StatefulSet's current revision ends (for pipelines);
                  one line per phase or partition change. Exit 0 Completed, 1 Failed or RolledBack,
                  2 timed out, 3 Invalid / not opted in / not found, 4 Paused (with --fail-on-pause)
  restore NAME --pod POD [--checkpoint SNAPSHOT] [--yes]
                  give one member its data back from its checkpoint (a VolumeSnapshot the controller took
                  before the pod was replaced; default the newest ready one): its claims are made again
                  from the snapshot and its pod runs the revision it ran then. Writes the member took
                  after the checkpoint are gone from it. Asks first unless --yes; run it again to go on
                  after an interruption. Exit 0 restored, 1 refused or failed, 2 timed out (--timeout, default 10m)
  dashboard       a live page of the namespace's (or -A: all) opted-in StatefulSets on 127.0.0.1, with
                  buttons for promote, pause, resume, retry and abort; prints the URL (with its token)

Flags:
  -n, --namespace NS   namespace (default: the kubeconfig context's, else "default")
  -A, --all-namespaces status across all namespaces
  -o, --output FORMAT  table (default) or json
  -w, --watch          keep watching (status only)
      --timeout D      wait: give up after this long, exit 2 (default 30m; e.g. 90s, 20m, 1h)
      --fail-on-pause  wait: exit 4 when the rollout is Paused (a pause step or phased-rollout.io/paused)
      --port P         dashboard: the port on 127.0.0.1 (default 0: a free one)
      --pod POD        restore: the member to restore
      --checkpoint S   restore: the VolumeSnapshot whose checkpoint to restore (default: the newest ready one)
      --yes            restore: do not ask
      --again          restore: restore a checkpoint the member's claims already came from, once more
      --kubeconfig F   kubeconfig file (default: $KUBECONFIG or ~/.kube/config)
`;

/** Command is a parsed plugin invocation. */
export type Command =
  | { verb: 'help' }
  | { verb: 'status'; name?: string; namespace?: string; all: boolean; kubeconfig?: string; output: 'table' | 'json'; watch: boolean }
  | { verb: 'pause' | 'resume' | 'retry' | 'promote' | 'abort'; name: string; namespace?: string; kubeconfig?: string }
  | { verb: 'wait'; name: string; namespace?: string; kubeconfig?: string; output: 'table' | 'json'; timeoutMs: number; failOnPause: boolean }
  | { verb: 'dashboard'; namespace?: string; kubeconfig?: string; all: boolean; port: number }
  | { verb: 'restore'; name: string; pod: string; checkpoint?: string; yes: boolean; again?: boolean; timeoutMs: number; namespace?: string; kubeconfig?: string };

/** parseCommand reads argv (after the program name) or throws an Error with a usage hint. */
export function parseCommand(argv: readonly string[]): Command {
  const rest: string[] = [];
  let namespace: string | undefined;
  let kubeconfig: string | undefined;
  let all = false;
  let output: 'table' | 'json' = 'table';
  let watch = false;
  let timeoutMs: number | undefined;
  let failOnPause = false;
  let port: number | undefined;
  let pod: string | undefined;
  let checkpoint: string | undefined;
  let yes = false;
  let again = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] ?? '';
    const value = () => {
      const v = a.includes('=') ? a.slice(a.indexOf('=') + 1) : argv[++i];
      if (!v) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '-h' || a === '--help') return { verb: 'help' };
    else if (a === '-n' || a.startsWith('--namespace')) namespace = value();
    else if (a.startsWith('--kubeconfig')) kubeconfig = value();
    else if (a === '-A' || a === '--all-namespaces') all = true;
    else if (a === '-w' || a === '--watch') watch = true;
    else if (a === '--fail-on-pause') failOnPause = true;
    else if (a === '--yes' || a === '-y') yes = true;
    else if (a === '--again') again = true;
    else if (a.startsWith('--pod')) pod = value();
    else if (a.startsWith('--checkpoint')) checkpoint = value();
    else if (a.startsWith('--port')) {
      const v = value();
      if (!/^\d+$/.test(v) || Number(v) > 65535) throw new Error(`--port ${JSON.stringify(v)} is not a port (0-65535)`);
      port = Number(v);
    }
    else if (a.startsWith('--timeout')) {
      const v = value();
      const ms = parseDuration(v);
      if (ms === undefined || ms <= 0) throw new Error(`--timeout ${JSON.stringify(v)} is not a positive duration (e.g. 90s, 20m, 1h)`);
      timeoutMs = ms;
    }
    else if (a === '-o' || a.startsWith('--output') || a.startsWith('-o=')) {
      const v = value();
      if (v !== 'table' && v !== 'json') throw new Error(`output format ${JSON.stringify(v)} is not table or json`);
      output = v;
    }
    else if (a.startsWith('-')) throw new Error(`unknown flag ${a}`);
    else rest.push(a);
  }
  const [verb, name, extra] = rest;
  if (extra !== undefined) throw new Error(`unexpected argument ${extra}`);
  const opts = { ...(namespace ? { namespace } : {}), ...(kubeconfig ? { kubeconfig } : {}) };
  if (verb === undefined) return { verb: 'help' };
  if (verb !== 'dashboard' && port !== undefined) throw new Error('--port goes with dashboard only');
  if (verb !== 'restore' && (pod !== undefined || checkpoint !== undefined || yes || again)) throw new Error('--pod, --checkpoint and --yes go with restore only');
  if (verb === 'restore') {
    if (!name) throw new Error('restore needs a StatefulSet name');
    if (!pod) throw new Error('restore needs --pod: the member to restore');
    if (watch || all || output !== 'table' || failOnPause) throw new Error('restore takes --pod, --checkpoint, --yes, --timeout, -n and --kubeconfig only');
    return { verb, name, pod, yes, timeoutMs: timeoutMs ?? 10 * 60_000, ...(checkpoint ? { checkpoint } : {}), ...(again ? { again } : {}), ...opts };
  }
  if (verb === 'dashboard') {
    if (name !== undefined) throw new Error(`unexpected argument ${name}`);
    if (watch || output !== 'table' || timeoutMs !== undefined || failOnPause) throw new Error('dashboard takes -n, -A, --port and --kubeconfig only');
    return { verb, all, port: port ?? 0, ...opts };
  }
  if (verb === 'status') {
    if (timeoutMs !== undefined || failOnPause) throw new Error('--timeout and --fail-on-pause go with wait only');
    return { verb, all, output, watch, ...(name ? { name } : {}), ...opts };
  }
  if (verb === 'wait') {
    if (!name) throw new Error('wait needs a StatefulSet name');
    if (watch || all) throw new Error('-w and -A go with status only');
    return { verb, name, output, timeoutMs: timeoutMs ?? 30 * 60_000, failOnPause, ...opts };
  }
  if (timeoutMs !== undefined || failOnPause) throw new Error('--timeout and --fail-on-pause go with wait only');
  if (watch || output !== 'table') throw new Error(`-w and -o go with status and wait only`);
  if (verb === 'pause' || verb === 'resume' || verb === 'retry' || verb === 'promote' || verb === 'abort') {
    if (!name) throw new Error(`${verb} needs a StatefulSet name`);
    return { verb, name, ...opts };
  }
  throw new Error(`unknown command ${JSON.stringify(verb)}`);
}

/** annotationPatch is the merge patch a verb applies to the StatefulSet's annotations. */
export function annotationPatch(verb: 'pause' | 'resume'): Record<string, unknown> {
  return { metadata: { annotations: { [KEYS.paused]: verb === 'pause' ? 'true' : null } } };
}

/** RolloutState is what promote and abort read of the StatefulSet first. */
export interface RolloutState {
  name: string;
  annotations: Record<string, string>;
  updateRevision?: string;
  currentRevision?: string;
}

/**
 * rolloutPatch is the merge patch of promote or abort, which name the revision (and step) they act on,
 * so a stale command never promotes or aborts a later rollout. Throws with what is wrong otherwise.
 */
export function rolloutPatch(verb: 'promote' | 'abort' | 'retry', s: RolloutState): Record<string, unknown> {
  if (verb === 'retry') {
    // The retry names this failure: never a later one, and the status (the record of where the rollout
    // started) stays as it is (src/rollout/retry.ts).
    const status = readStatus(s.annotations);
    const token = retryToken(status);
    if (!token) throw new Error(`statefulset.apps/${s.name} has no Failed rollout nor inconclusive hold to retry (phase ${status?.phase ?? 'unknown'}${status?.message ? `: ${status.message}` : ''})`);
    return { metadata: { annotations: { [KEYS.retry]: token } } };
  }
  if (verb === 'promote') {
    const status = readStatus(s.annotations);
    // Paused after inconclusive checks: the promotion names the partition whose step it lets go, and the
    // hold by its identity, so that it never lets a later hold of the same revision go.
    if (status?.phase === 'Paused' && status.reason === 'Inconclusive') {
      if (status.hold === undefined) throw new Error(`statefulset.apps/${s.name} has no identity for its inconclusive hold yet (a status of an older controller): wait for the controller to write one, then promote`);
      return { metadata: { annotations: { [KEYS.promote]: `${status.revision}@${status.partition}@${status.hold}` } } };
    }
    if (status?.phase !== 'Paused' || status.promotion === undefined) {
      throw new Error(`statefulset.apps/${s.name} is not waiting for promotion (phase ${status?.phase ?? 'unknown'}${status?.message ? `: ${status.message}` : ''})`);
    }
    return { metadata: { annotations: { [KEYS.promote]: `${status.revision}/${status.promotion}` } } };
  }
  // After the last step the StatefulSet controller makes the new revision current before the final
  // check has run: the status's previousRevision says the rollout is unfinished and where abort returns.
  const status = readStatus(s.annotations);
  // A rollback under way (paused or not) restores the known-good revision: nothing there to abort (the
  // planner's own test of it).
  if (status?.failedRevision !== undefined && restoring(s, status)) {
    throw new Error(`statefulset.apps/${s.name} is rolling back to ${s.updateRevision} from ${status.failedRevision}: nothing to abort`);
  }
  const finalCheck = status !== undefined && status.revision === s.updateRevision && status.previousRevision !== undefined && status.previousRevision !== s.updateRevision;
  if (!s.updateRevision || (s.updateRevision === s.currentRevision && !finalCheck)) {
    throw new Error(`statefulset.apps/${s.name} has no rollout to abort (every pod is meant to run ${s.currentRevision ?? 'the current revision'})`);
  }
  return { metadata: { annotations: { [KEYS.abort]: s.updateRevision, [KEYS.paused]: null } } };
}

/** StsRow is what the status table needs of one StatefulSet. */
export interface StsRow {
  namespace: string;
  name: string;
  annotations: Record<string, string>;
  partition: number;
  replicas: number;
}

/** RolloutReport is one StatefulSet's rollout as the plugin shows it (also its JSON output). */
export interface RolloutReport {
  namespace: string;
  name: string;
  phase: string;
  revision?: string;
  partition: number;
  replicas: number;
  updated?: number;
  /** Passing checks of the current step, and how many the step needs. */
  streak?: number;
  successThreshold?: number;
  /** The latest check's result: passing, failing, error or inconclusive. */
  gate?: string;
  since?: string;
  message: string;
  /** Why it is Paused when no user paused it (Inconclusive). */
  reason?: string;
  /** Each gate's last measurements (src/rollout/history.ts). */
  history?: GateHistory;
}

/** reportOf reads one opted-in StatefulSet's report; undefined when it is not opted in. */
export function reportOf(r: StsRow): RolloutReport | undefined {
  const parsed = parseAnnotations(r.annotations);
  if (parsed.optIn === 'absent') return undefined;
  const s = readStatus(r.annotations);
  const out: RolloutReport = { namespace: r.namespace, name: r.name, phase: s?.phase ?? 'Pending', partition: r.partition, replicas: r.replicas, message: s?.message ?? 'no status yet: is the controller running?' };
  if (s) Object.assign(out, { revision: s.revision, updated: s.updated, since: s.since }, s.gate ? { gate: s.gate } : {}, s.streak !== undefined ? { streak: s.streak } : {}, s.reason ? { reason: s.reason } : {}, s.history ? { history: s.history } : {});
  if (parsed.ok && parsed.config) out.successThreshold = parsed.config.successThreshold;
  return out;
}

/** age renders a duration like kubectl does: 45s, 3m12s, 5h3m, 2d4h. */
export function age(sinceIso: string | undefined, nowMs: number): string {
  const t = sinceIso ? Date.parse(sinceIso) : NaN;
  if (Number.isNaN(t)) return '-';
  const s = Math.max(0, Math.floor((nowMs - t) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${s % 60 ? `${s % 60}s` : ''}`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60) ? `${Math.floor((s % 3600) / 60)}m` : ''}`;
  return `${Math.floor(s / 86_400)}d${Math.floor((s % 86_400) / 3600) ? `${Math.floor((s % 86_400) / 3600)}h` : ''}`;
}

/** gateCell shows the streak against its threshold and the last result: `2/3 passing`. */
function gateCell(r: RolloutReport): string {
  const streak = r.streak !== undefined && r.successThreshold !== undefined ? `${r.streak}/${r.successThreshold}` : '';
  return [streak, r.gate ?? ''].filter(Boolean).join(' ') || '-';
}

/** statusTable renders opted-in StatefulSets like `kubectl get` does; AGE is the time in the phase. */
export function statusTable(rows: StsRow[], withNamespace: boolean, nowMs: number): string {
  const lines = rows
    .flatMap((r) => reportOf(r) ?? [])
    .map((r) => {
      // Text from the annotation reaches a terminal: no control character gets through (src/text.ts).
      const cells = [r.name, r.phase, `${r.partition}/${r.replicas}`, r.updated !== undefined ? `${r.updated}/${r.replicas}` : `?/${r.replicas}`, gateCell(r), age(r.since, nowMs), stripControls(r.message.replace(/\s+/g, ' '))];
      return withNamespace ? [r.namespace, ...cells] : cells;
    });
  const header = [...(withNamespace ? ['NAMESPACE'] : []), 'NAME', 'PHASE', 'PARTITION', 'UPDATED', 'GATE', 'AGE', 'MESSAGE'];
  if (lines.length === 0) return 'No opted-in StatefulSets found.\n';
  const table = [header, ...lines];
  const widths = header.map((_, i) => Math.max(...table.map((l) => (l[i] ?? '').length)));
  return table.map((l) => l.map((c, i) => (i === l.length - 1 ? c : c.padEnd((widths[i] ?? 0) + 3))).join('')).join('\n') + '\n';
}

/**
 * historyTable lists each gate's last measurements of one StatefulSet, oldest first: the outcome, how
 * many checks in a row had it, the last value and how long ago it was measured. Empty without any.
 */
export function historyTable(row: StsRow, nowMs: number): string {
  const h = reportOf(row)?.history;
  if (!h || Object.keys(h).length === 0) return '';
  const lines = Object.keys(h)
    .sort()
    .flatMap((gate) => (h[gate] ?? []).map((m) => [m.dryRun ? `${gate} (dry-run)` : gate, m.result, String(m.count), stripControls(m.value ?? '-'), age(m.at, nowMs)]));
  const header = ['GATE', 'RESULT', 'IN A ROW', 'VALUE', 'LAST'];
  const table = [header, ...lines];
  const widths = header.map((_, i) => Math.max(...table.map((l) => (l[i] ?? '').length)));
  return '\n' + table.map((l) => l.map((c, i) => (i === l.length - 1 ? c : c.padEnd((widths[i] ?? 0) + 3))).join('')).join('\n') + '\n';
}

/** statusJson renders the reports for scripts. */
export function statusJson(rows: StsRow[]): string {
  return JSON.stringify(rows.flatMap((r) => reportOf(r) ?? []), null, 2) + '\n';
}
