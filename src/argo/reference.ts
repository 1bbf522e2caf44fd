// A gate policy's reference to Argo Rollouts' analysis (`spec.analysis` of a RolloutGate or a
// ClusterRolloutGate): the templates to run, as a Rollout's analysis step names them, and the args it
// supplies. Checked here as the CRD's schema checks it (an older CRD must not let a bad one through);
// the templates themselves are read when a step's run starts (controller/argo.ts).

import type { ArgoArg, TemplateRef } from './template.js';

/** AnalysisRef is a checked `spec.analysis`. */
export interface AnalysisRef {
  templates: TemplateRef[];
  args: ArgoArg[];
}

/** MAX_TEMPLATES bounds one reference's templates (each may reference more: src/argo/template.ts bounds the depth). */
export const MAX_TEMPLATES = 10;
const MAX_ARGS = 32;
// An object name (DNS subdomain), as Kubernetes requires of a template's.
const NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
const ARG_NAME = /^[A-Za-z0-9_.-]{1,253}$/;

/**
 * FIELD_PATHS are the fieldRefs an arg may take, read from the StatefulSet as Argo reads them from the
 * Rollout: its name, namespace, uid, one label or annotation, and spec.replicas.
 */
export const FIELD_PATH = /^(metadata\.(name|namespace|uid)|metadata\.(labels|annotations)\['[^'\]]+'\]|spec\.replicas)$/;

/** What podTemplateHashValue names: Latest is the revision being rolled out, Stable the one it started from. */
export const HASH_VALUES = ['Stable', 'Latest'] as const;

/** parseAnalysisRef checks `spec.analysis`; every problem names its field. */
export function parseAnalysisRef(v: unknown, at = 'spec.analysis'): AnalysisRef | string[] {
  const problems: string[] = [];
  const o = object(v);
  if (!o) return [`${at}: an object with templates (and args)`];
  for (const k of Object.keys(o)) if (k !== 'templates' && k !== 'args') problems.push(`${at}.${k}: not a field (templates, args)`);
  const templates: TemplateRef[] = [];
  if (!Array.isArray(o.templates) || o.templates.length === 0) problems.push(`${at}.templates: a list of 1 to ${MAX_TEMPLATES} templates`);
  else if (o.templates.length > MAX_TEMPLATES) problems.push(`${at}.templates: at most ${MAX_TEMPLATES} (${o.templates.length})`);
  else {
    o.templates.forEach((t, i) => {
      const x = object(t);
      const where = `${at}.templates[${i}]`;
      if (!x || typeof x.templateName !== 'string' || !NAME.test(x.templateName)) return void problems.push(`${where}.templateName: the name of an AnalysisTemplate (or, with clusterScope: true, a ClusterAnalysisTemplate)`);
      if (x.clusterScope !== undefined && typeof x.clusterScope !== 'boolean') return void problems.push(`${where}.clusterScope: true or false`);
      for (const k of Object.keys(x)) if (k !== 'templateName' && k !== 'clusterScope') return void problems.push(`${where}.${k}: not a field (templateName, clusterScope)`);
      templates.push({ templateName: x.templateName, ...(x.clusterScope === true ? { clusterScope: true } : {}) });
    });
  }
  const args: ArgoArg[] = [];
  if (o.args !== undefined && !Array.isArray(o.args)) problems.push(`${at}.args: a list`);
  else if (Array.isArray(o.args) && o.args.length > MAX_ARGS) problems.push(`${at}.args: at most ${MAX_ARGS} (${o.args.length})`);
  else {
    ((o.args as unknown[] | undefined) ?? []).forEach((a, i) => {
      const arg = parseArg(a, `${at}.args[${i}]`);
      if (typeof arg === 'string') return void problems.push(arg);
      if (args.some((x) => x.name === arg.name)) return void problems.push(`${at}.args[${i}].name: ${arg.name} is given twice`);
      args.push(arg);
    });
  }
  return problems.length > 0 ? problems : { templates, args };
}

function parseArg(a: unknown, at: string): ArgoArg | string {
  const x = object(a);
  if (!x || typeof x.name !== 'string' || !ARG_NAME.test(x.name)) return `${at}.name: the arg's name, as the template declares it`;
  const has = (x.value !== undefined ? 1 : 0) + (x.valueFrom !== undefined ? 1 : 0);
  if (has !== 1) return `${at}: exactly one of value and valueFrom`;
  if (x.value !== undefined) return typeof x.value === 'string' ? { name: x.name, value: x.value } : `${at}.value: a string`;
  const from = object(x.valueFrom);
  const kinds = from ? Object.keys(from).filter((k) => from[k] !== undefined) : [];
  if (!from || kinds.length !== 1) return `${at}.valueFrom: exactly one of secretKeyRef, fieldRef, podTemplateHashValue`;
  const secret = object(from.secretKeyRef);
  if (secret) {
    if (typeof secret.name !== 'string' || !NAME.test(secret.name) || typeof secret.key !== 'string' || !/^[-._a-zA-Z0-9]{1,253}$/.test(secret.key)) return `${at}.valueFrom.secretKeyRef: the name of a Secret of the StatefulSet's namespace and one of its keys`;
    return { name: x.name, valueFrom: { secretKeyRef: { name: secret.name, key: secret.key } } };
  }
  const field = object(from.fieldRef);
  if (field) {
    if (typeof field.fieldPath !== 'string' || !FIELD_PATH.test(field.fieldPath)) return `${at}.valueFrom.fieldRef.fieldPath: one of metadata.name, metadata.namespace, metadata.uid, metadata.labels['<key>'], metadata.annotations['<key>'], spec.replicas (read from the StatefulSet)`;
    return { name: x.name, valueFrom: { fieldRef: { fieldPath: field.fieldPath } } };
  }
  if (from.podTemplateHashValue !== undefined) {
    if (!HASH_VALUES.includes(from.podTemplateHashValue as (typeof HASH_VALUES)[number])) return `${at}.valueFrom.podTemplateHashValue: Stable (the revision the rollout started from) or Latest (the revision being rolled out)`;
    return { name: x.name, valueFrom: { podTemplateHashValue: from.podTemplateHashValue as string } };
  }
  return `${at}.valueFrom: exactly one of secretKeyRef, fieldRef, podTemplateHashValue`;
}

function object(v: unknown): Record<string, unknown> | undefined {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}
