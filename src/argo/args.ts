// The values of an analysis run's args, resolved as Argo resolves a Rollout's (utils/analysis:
// ResolveArgs; the fieldRef and podTemplateHashValue of rollout/analysis.go), with the StatefulSet in the
// Rollout's place. Pure: the shell reads the Secrets the args name (secretRefs) and hands them in.

import type { ArgoArg } from './template.js';

/** ArgFields: what a fieldRef or podTemplateHashValue reads from the StatefulSet and its rollout. */
export interface ArgFields {
  name: string;
  namespace: string;
  uid: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  replicas: number;
  /** The revision being rolled out (its pods' controller-revision-hash): podTemplateHashValue Latest. */
  latest: string;
  /** The revision the rollout started from: podTemplateHashValue Stable. */
  stable?: string;
}

/** secretKey names one Secret key in the map argValues reads. */
export const secretKey = (name: string, key: string): string => `${name}/${key}`;

/** secretRefs lists the Secret keys the args take values from, each once. */
export function secretRefs(args: readonly ArgoArg[]): { name: string; key: string }[] {
  const seen = new Map<string, { name: string; key: string }>();
  for (const a of args) {
    const r = a.value === undefined ? a.valueFrom?.secretKeyRef : undefined;
    if (r) seen.set(secretKey(r.name, r.key), { name: r.name, key: r.key });
  }
  return [...seen.values()];
}

/** argValues gives each arg its value (a value written wins over valueFrom, as in Argo), or the first that has none. */
export function argValues(args: readonly ArgoArg[], f: ArgFields, secrets: ReadonlyMap<string, string>): Map<string, string> | { error: string } {
  const out = new Map<string, string>();
  for (const a of args) {
    const v = a.value ?? fromSource(a, f, secrets);
    if (typeof v !== 'string') return { error: `args.${a.name}: ${v.error}` };
    out.set(a.name, v);
  }
  return out;
}

function fromSource(a: ArgoArg, f: ArgFields, secrets: ReadonlyMap<string, string>): string | { error: string } {
  const from = a.valueFrom ?? {};
  if (from.secretKeyRef) {
    const v = secrets.get(secretKey(from.secretKeyRef.name, from.secretKeyRef.key));
    return v ?? { error: `key ${from.secretKeyRef.key} of Secret ${from.secretKeyRef.name} was not read` };
  }
  if (from.podTemplateHashValue === 'Latest') return f.latest;
  if (from.podTemplateHashValue === 'Stable') return f.stable ?? { error: 'podTemplateHashValue Stable: no revision this rollout started from' };
  if (from.podTemplateHashValue !== undefined) return { error: `podTemplateHashValue ${from.podTemplateHashValue}: Stable or Latest` };
  if (from.fieldRef) return fieldValue(from.fieldRef.fieldPath, f);
  return { error: 'no value and no valueFrom' };
}

/** fieldValue reads one fieldRef; a label or annotation the StatefulSet has not is empty, as Kubernetes' fieldpath gives it. */
export function fieldValue(path: string, f: ArgFields): string | { error: string } {
  if (path === 'metadata.name') return f.name;
  if (path === 'metadata.namespace') return f.namespace;
  if (path === 'metadata.uid') return f.uid;
  if (path === 'spec.replicas') return String(f.replicas);
  const m = /^metadata\.(labels|annotations)\['([^'\]]+)'\]$/.exec(path);
  if (m) return (m[1] === 'labels' ? f.labels : f.annotations)[m[2] as string] ?? '';
  return { error: `fieldRef ${path} is not read from a StatefulSet (metadata.name, metadata.namespace, metadata.uid, metadata.labels['<key>'], metadata.annotations['<key>'], spec.replicas)` };
}
