// Kubernetes' jsonpath (k8s.io/client-go/util/jsonpath) as Argo Rollouts v1.10.1's `web` metric
// provider uses it (metricproviders/webmetric): the template defaults to `{$}`, missing keys are errors
// (AllowMissingKeys is never set), and the FIRST value found, in the first part that finds any, is
// what the conditions see; its json.Marshal is the measurement's value. Written from client-go's
// parser.go and jsonpath.go, not translated, with its quirks kept (see jsonpath-parse.ts and the
// tests), because a template must measure here what it measures under Argo. FindResults is the same
// from client-go v0.33 to v0.37 (Argo pins v0.34.5); what changed there (printing, struct tags) is not
// on this path.
//
// Where Go iterates a map (`*`, `..`), its order is random, so Argo's "first value" is any of them; we
// take JS property order. Where Argo's code panics (a `null` document under `{$}`, `[0]` inside an
// empty range) its controller goes down, since measurements run in goroutines without recover; we
// answer an error marked `goPanic` instead.

import { decodeJson, goCompare, GoByte, goFormatV, GoInt, goMarshal, GoPanic, goTypeName, type GoValue, isMap, ZERO } from './jsonpath-go.js';
import { int64, parseTemplate, type Part, type Step } from './jsonpath-parse.js';

/** JsonPath is a compiled template; immutable, so unlike client-go's it can be run again after a range. */
export interface JsonPath {
  readonly source: string;
  readonly parts: readonly Part[];
}

/** DEFAULT_WEB_JSONPATH is the template Argo's web provider uses when jsonPath is empty. */
export const DEFAULT_WEB_JSONPATH = '{$}';

/** NO_VALUE is the error Argo's getValue gives when the template finds nothing. */
export const NO_VALUE = 'result of web metric produced no value';

/** compileJsonPath parses a client-go jsonpath template; the error is client-go's parse error. */
export function compileJsonPath(src: string): { ok: true; path: JsonPath } | { ok: false; error: string } {
  const parsed = parseTemplate(src);
  return parsed.ok ? { ok: true, path: { source: src, parts: parsed.parts } } : parsed;
}

// What one step found: on an error client-go still returns values (the input, or what it had), and a
// filter's existence test counts them, so `?(@.tags[5])` keeps an item whose tags are too short.
type Found = { values: GoValue[]; err?: string };

// The range bookkeeping of client-go's JSONPath, shared by the whole walk as its fields are.
interface RangeState {
  begin: number;
  inside: number;
  end: number;
  lastEnd: number;
}

function walkSteps(input: GoValue[], steps: readonly Step[], st: RangeState): Found {
  let values = input;
  for (const step of steps) {
    const found = walkStep(values, step, st);
    if (found.err !== undefined) return found;
    values = found.values;
  }
  return { values };
}

function walkStep(input: GoValue[], step: Step, st: RangeState): Found {
  switch (step.kind) {
    case 'text':
      return { values: [step.text] };
    case 'int':
      return { values: input.map(() => new GoInt(step.value)) };
    case 'float':
    case 'bool':
      return { values: input.map(() => step.value) };
    case 'field':
      return field(input, step.name);
    case 'index':
      return index(input, step);
    case 'filter':
      return filter(input, step, st);
    case 'wildcard':
      return { values: input.flatMap(children) };
    case 'descend':
      return { values: descend(input) };
    case 'union': {
      const values: GoValue[] = [];
      for (const member of step.members) {
        const found = walkSteps(input, member, st);
        if (found.err !== undefined) return { values: input, err: found.err };
        values.push(...found.values);
      }
      return { values };
    }
    case 'word':
      if (step.word === 'range') {
        st.begin++;
        return { values: input };
      }
      if (step.word === 'end') {
        if (st.inside === 0) return { values: [], err: 'not in range, nothing to end' };
        st.end++;
        return { values: [] };
      }
      return { values: input, err: `unrecognized identifier ${step.word}` };
  }
}

// Nothing in, nothing out; else a key no map has is an error (Argo never allows missing keys).
function field(input: GoValue[], name: string): Found {
  if (input.length === 0) return { values: [] };
  const values = input.filter((v) => isMap(v) && Object.hasOwn(v, name)).map((v) => (v as Record<string, GoValue>)[name] as GoValue);
  return values.length > 0 ? { values } : { values, err: `${name} is not found` };
}

// Indexes and slices as client-go takes them: negative counts from the end, but an end past the array
// is an error, not a clamp; a slice that asks for nothing stops the whole step with what it has.
function index(input: GoValue[], s: Extract<Step, { kind: 'index' }>): Found {
  const values: GoValue[] = [];
  for (const v of input) {
    if (v === null) continue;
    if (v === ZERO) throw new GoPanic('reflect: call of reflect.Value.Type on zero Value');
    if (!Array.isArray(v)) return { values: input, err: `${goTypeName(v)} is not array or slice` };
    const len = BigInt(v.length);
    let start = s.start ?? 0n;
    if (start < 0n) start = int64(start + len);
    let end = s.end ?? len;
    if (end < 0n || (end === 0n && s.endFromStart)) end = int64(end + len);
    if (end === start) return { values };
    if (start >= len || start < 0n) return { values: input, err: `array index out of bounds: index ${start}, length ${len}` };
    if (end > len || end < 0n) return { values: input, err: `array index out of bounds: index ${int64(end - 1n)}, length ${len}` };
    if (start > end) return { values: input, err: `starting index ${start} is greater than ending index ${end}` };
    if (s.step !== null && s.step <= 0n) return { values: input, err: 'step must be > 0' };
    for (let i = start; i < end; i += s.step ?? 1n) values.push(v[Number(i)] as GoValue);
  }
  return { values };
}

function filter(input: GoValue[], f: Extract<Step, { kind: 'filter' }>, st: RangeState): Found {
  const values: GoValue[] = [];
  for (const v of input) {
    if (!Array.isArray(v)) return { values: input, err: `${goFormatV(v)} is not array or slice and cannot be filtered` };
    for (const item of v) {
      const left = walkSteps([item], f.left, st);
      if (f.op === 'exists') {
        if (left.values.length > 0) values.push(item);
        continue;
      }
      // Unlike the existence test, a comparison fails on an item that lacks the key.
      if (left.err !== undefined) return { values: input, err: left.err };
      if (left.values.length === 0) continue;
      if (left.values.length > 1) return { values: input, err: 'can only compare one element at a time' };
      const right = walkSteps([item], f.right, st);
      if (right.err !== undefined) return { values: input, err: right.err };
      if (right.values.length === 0) continue;
      if (right.values.length > 1) return { values: input, err: 'can only compare one element at a time' };
      const verdict = goCompare(f.op, left.values[0] as GoValue, right.values[0] as GoValue);
      if (typeof verdict === 'string') return { values, err: verdict };
      if (verdict) values.push(item);
    }
  }
  return { values };
}

// The members of a map or a slice, or the bytes of a string; nothing for anything else.
function children(v: GoValue): GoValue[] {
  if (Array.isArray(v)) return v;
  if (isMap(v)) return Object.values(v);
  if (typeof v === 'string') return [...Buffer.from(v, 'utf8')].map((b) => new GoByte(b));
  return [];
}

// `..`: every value that has members, in preorder (so non-empty strings too, leaves never).
function descend(input: GoValue[]): GoValue[] {
  const out: GoValue[] = [];
  const todo = [...input].reverse();
  for (let v = todo.pop(); v !== undefined; v = todo.pop()) {
    const kids = children(v);
    if (kids.length === 0) continue;
    out.push(v);
    for (let i = kids.length - 1; i >= 0; i--) todo.push(kids[i] as GoValue);
  }
  return out;
}

// A range walks the parts after it once per value (nil → the zero Value), up to its `{end}`; with no
// values it still walks them once, on the zero Value, so `{.x}` there fails with "x is not found".
function asData(v: GoValue): GoValue {
  if (v === ZERO) throw new GoPanic('reflect: call of reflect.Value.Interface on zero Value');
  return v === null ? ZERO : v;
}

function findResults(parts: readonly Part[], from: number, data: GoValue, st: RangeState): { lists: GoValue[][] } | { err: string } {
  const lists: GoValue[][] = [];
  for (let i = from; i < parts.length; i++) {
    const part = parts[i] as Part;
    const found = part.kind === 'text' ? { values: [part.text] } : walkSteps([data], part.steps, st);
    if (found.err !== undefined) return { err: found.err };
    if (st.end > 0 && st.end <= st.inside) {
      st.end--;
      st.lastEnd = i;
      break;
    }
    if (st.begin > 0) {
      st.begin--;
      st.inside++;
      for (const v of found.values.length > 0 ? found.values : [undefined]) {
        const inner = findResults(parts, i + 1, v === undefined ? ZERO : asData(v), st);
        if ('err' in inner) return inner;
        if (v !== undefined) lists.push(...inner.lists);
      }
      st.inside--;
      // Resume after the {end} the range met; a range without one lets the parts after it run again.
      if (st.lastEnd > i) i = st.lastEnd;
      continue;
    }
    lists.push(found.values);
  }
  return { lists };
}

/** FirstValue is the value Argo's conditions see (decoded JSON; Go ints and bytes as numbers) and the text it records. */
export type FirstValue = { ok: true; value: unknown; text: string } | { ok: false; error: string; goPanic?: true };

/**
 * findFirst runs a compiled template over decoded JSON (`null` is Go's nil document) as Argo's web
 * provider does: FindResults, then the first value of the first non-empty result, json.Marshal'ed.
 * Errors read as Argo's measurement messages.
 */
export function findFirst(path: JsonPath, data: unknown): FirstValue {
  const st: RangeState = { begin: 0, inside: 0, end: 0, lastEnd: -1 };
  try {
    const found = findResults(path.parts, 0, data === null || data === undefined ? ZERO : (data as GoValue), st);
    if ('err' in found) return { ok: false, error: `Could not find JSONPath in body: ${found.err}` };
    const first = found.lists.find((list) => list.length > 0)?.[0];
    if (first === undefined) return { ok: false, error: NO_VALUE };
    if (first === ZERO) throw new GoPanic('reflect: call of reflect.Value.Interface on zero Value');
    const value = first instanceof GoInt ? Number(first.n) : first instanceof GoByte ? first.n : first;
    return { ok: true, value, text: goMarshal(first) };
  } catch (e) {
    if (e instanceof GoPanic) return { ok: false, error: `panic: ${e.message} (Argo Rollouts' controller crashes on this answer)`, goPanic: true };
    throw e;
  }
}

/**
 * WebValue is what Argo's web provider makes of a 2xx answer (parseResponse): a value for the
 * conditions with its text; a body that is not JSON, which is Successful with the body as the value
 * and no condition evaluated; or an Error measurement's message.
 */
export type WebValue =
  | { kind: 'value'; value: unknown; text: string }
  | { kind: 'raw'; phase: 'Successful'; text: string }
  | { kind: 'error'; message: string; goPanic?: true };

/** webValue reads an answer's body with a metric's `jsonPath` as Argo's web provider does. */
export function webValue(body: string, jsonPath: string | undefined): WebValue {
  // Argo parses the template when it builds the provider, before any request: a bad one is an Error
  // whatever the answer, with client-go's message alone.
  const compiled = compileJsonPath(jsonPath || DEFAULT_WEB_JSONPATH);
  if (!compiled.ok) return { kind: 'error', message: compiled.error };
  const decoded = decodeJson(body);
  if (!decoded) return { kind: 'raw', phase: 'Successful', text: body };
  const first = findFirst(compiled.path, decoded.value);
  if (!first.ok) return { kind: 'error', message: first.error, ...(first.goPanic ? { goPanic: true as const } : {}) };
  return { kind: 'value', value: first.value, text: first.text };
}
