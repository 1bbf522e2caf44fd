// The kubectl plugin's pure parts: argument parsing, the status table, and the patches each verb sends.
import { KEYS, parseAnnotations } from '../src/annotations.js';
import { readStatus } from '../src/rollout/status.js';

/** USAGE is the plugin's help text. */
export const USAGE = `Usage: kubectl phased-rollout COMMAND [NAME] [-n NAMESPACE | -A]

Commands:
  status [NAME]   phase, partition and progress of opted-in StatefulSets (all in the namespace if no NAME)
  pause NAME      hold the partition where it is (sets ${KEYS.paused}: "true")
  resume NAME     continue a paused rollout (removes ${KEYS.paused})
  retry NAME      restart a Failed rollout's gate from zero (clears ${KEYS.status})

Flags:
  -n, --namespace NS   namespace (default: the kubeconfig context's, else "default")
  -A, --all-namespaces status across all namespaces
      --kubeconfig F   kubeconfig file (default: $KUBECONFIG or ~/.kube/config)
`;

/** Command is a parsed plugin invocation. */
export type Command =
  | { verb: 'help' }
  | { verb: 'status'; name?: string; namespace?: string; all: boolean; kubeconfig?: string }
  | { verb: 'pause' | 'resume' | 'retry'; name: string; namespace?: string; kubeconfig?: string };

/** parseCommand reads argv (after the program name) or throws an Error with a usage hint. */
export function parseCommand(argv: readonly string[]): Command {
  const rest: string[] = [];
  let namespace: string | undefined;
  let kubeconfig: string | undefined;
  let all = false;
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
    else if (a.startsWith('-')) throw new Error(`unknown flag ${a}`);
    else rest.push(a);
  }
  const [verb, name, extra] = rest;
  if (extra !== undefined) throw new Error(`unexpected argument ${extra}`);
  const opts = { ...(namespace ? { namespace } : {}), ...(kubeconfig ? { kubeconfig } : {}) };
  if (verb === undefined) return { verb: 'help' };
  if (verb === 'status') return { verb, all, ...(name ? { name } : {}), ...opts };
  if (verb === 'pause' || verb === 'resume' || verb === 'retry') {
    if (!name) throw new Error(`${verb} needs a StatefulSet name`);
    return { verb, name, ...opts };
  }
  throw new Error(`unknown command ${JSON.stringify(verb)}`);
}

/** annotationPatch is the merge patch a verb applies to the StatefulSet's annotations. */
export function annotationPatch(verb: 'pause' | 'resume' | 'retry'): Record<string, unknown> {
  const value = verb === 'pause' ? { [KEYS.paused]: 'true' } : verb === 'resume' ? { [KEYS.paused]: null } : { [KEYS.status]: null };
  return { metadata: { annotations: value } };
}

/** StsRow is what the status table needs of one StatefulSet. */
export interface StsRow {
  namespace: string;
  name: string;
  annotations: Record<string, string>;
  partition: number;
  replicas: number;
}

/** statusTable renders opted-in StatefulSets like `kubectl get` does. */
export function statusTable(rows: StsRow[], withNamespace: boolean): string {
  const lines = rows
    .filter((r) => parseAnnotations(r.annotations).optIn !== 'absent')
    .map((r) => {
      const s = readStatus(r.annotations);
      const cells = [r.name, s?.phase ?? 'Pending', `${r.partition}`, s ? `${s.updated}/${r.replicas}` : `?/${r.replicas}`, s?.gate ?? '-', s?.message ?? 'no status yet: is the controller running?'];
      return withNamespace ? [r.namespace, ...cells] : cells;
    });
  const header = [...(withNamespace ? ['NAMESPACE'] : []), 'NAME', 'PHASE', 'PARTITION', 'UPDATED', 'GATE', 'MESSAGE'];
  if (lines.length === 0) return 'No opted-in StatefulSets found.\n';
  const table = [header, ...lines];
  const widths = header.map((_, i) => Math.max(...table.map((l) => (l[i] ?? '').length)));
  return table.map((l) => l.map((c, i) => (i === l.length - 1 ? c : c.padEnd((widths[i] ?? 0) + 3))).join('')).join('\n') + '\n';
}
