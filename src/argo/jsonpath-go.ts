// The Go side of the values client-go's jsonpath walks: JSON as encoding/json decodes it into `any`,
// the few Go values jsonpath makes of its own (int literals, the bytes of a string), how json.Marshal
// and fmt's %v print them, and text/template's comparisons that filters use. Walks are iterative: Go
// accepts JSON nested 10 000 deep, deeper than a JS call stack goes.

/** GoInt is a Go int: an integer literal of the template (`{5}`, the 1 of `@.x==1`). */
export class GoInt {
  constructor(readonly n: bigint) {}
}

/** GoByte is a uint8: `*` and `..` walk a string byte by byte. */
export class GoByte {
  constructor(readonly n: number) {}
}

/** ZERO is the zero reflect.Value: reflect.ValueOf(nil), what a `null` document (or range item) becomes. */
export const ZERO: unique symbol = Symbol('zero reflect.Value');

/** GoValue is what the walk carries; null is a nil interface inside a map or a slice. */
export type GoValue = null | boolean | number | string | GoValue[] | { [key: string]: GoValue } | GoInt | GoByte | typeof ZERO;

/** GoPanic is a runtime panic of the Go code: Argo's measurement goroutine has no recover. */
export class GoPanic extends Error {}

/** MAX_JSON_DEPTH is the nesting encoding/json accepts (scanner.go maxNestingDepth). */
export const MAX_JSON_DEPTH = 10_000;

/** isMap tells a decoded JSON object (a Go map[string]any) from the other values. */
export function isMap(v: GoValue): v is { [key: string]: GoValue } {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof GoInt) && !(v instanceof GoByte);
}

const LONE_SURROGATE = /[\uD800-\uDFFF]/gu;

// Tokens of valid JSON text: a string, a number, or a bracket.
const JSON_TOKENS = /"(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+-]*|[[{]|[\]}]/g;

/**
 * decodeJson is json.Unmarshal into `any`, or undefined where Go refuses the text: what JSON.parse
 * refuses, any number beyond float64 (even under a key a later duplicate replaces; JSON.parse makes it
 * Infinity), or nesting deeper than 10 000. Lone surrogate escapes become U+FFFD as Go decodes them.
 * (Where two keys become one only by that, JS key order, not document order, picks the one kept.)
 */
export function decodeJson(text: string): { value: GoValue } | undefined {
  let root: unknown;
  try {
    root = JSON.parse(text);
  } catch {
    return undefined;
  }
  let depth = 0;
  for (const [token] of text.matchAll(JSON_TOKENS)) {
    if (token === '[' || token === '{') {
      if (++depth > MAX_JSON_DEPTH) return undefined;
    } else if (token === ']' || token === '}') depth--;
    else if (!token.startsWith('"') && !Number.isFinite(Number(token))) return undefined;
  }
  const fix = (v: unknown): unknown => (typeof v === 'string' ? v.replace(LONE_SURROGATE, '\uFFFD') : v);
  root = fix(root);
  const todo: unknown[] = [root];
  for (let v = todo.pop(); v !== undefined; v = todo.pop()) {
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) todo.push((v[i] = fix(v[i])));
    } else if (typeof v === 'object' && v !== null) {
      const holder = v as Record<string, unknown>;
      for (const key of Object.keys(holder)) {
        const child = fix(holder[key]);
        const fixed = key.replace(LONE_SURROGATE, '\uFFFD');
        if (fixed !== key) delete holder[key];
        holder[fixed] = child;
        todo.push(child);
      }
    }
  }
  return { value: root as GoValue };
}

/** compareGo orders strings as Go does, byte by byte of UTF-8, which is code point order. */
export function compareGo(a: string, b: string): number {
  for (let i = 0; i < a.length && i < b.length; i++) {
    const x = a.codePointAt(i) as number;
    const y = b.codePointAt(i) as number;
    if (x !== y) return x - y;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}

const hex2 = (c: number): string => c.toString(16).padStart(2, '0');

/** goJsonString quotes as encoding/json does, HTML-safe: <, >, & and U+2028/9 become \u escapes. */
function goJsonString(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0) as number;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (c < 0x20 || ch === '<' || ch === '>' || ch === '&') out += `\\u00${hex2(c)}`;
    else if (c === 0x2028 || c === 0x2029) out += `\\u${c.toString(16)}`;
    else if (c >= 0xd800 && c <= 0xdfff) out += '\\ufffd';
    else out += ch;
  }
  return `${out}"`;
}

/** goJsonFloat is encoding/json's float64: ES number text, but -0 keeps its sign. */
function goJsonFloat(f: number): string {
  return Object.is(f, -0) ? '-0' : String(f);
}

/** goFloatV is fmt's %v of a float64 (strconv 'g', shortest): an exponent from 1e+06 and below 1e-04. */
export function goFloatV(f: number): string {
  if (f === 0) return Object.is(f, -0) ? '-0' : '0';
  const [mantissa = '', expText = ''] = Math.abs(f).toExponential().split('e');
  const digits = mantissa.replace('.', '');
  const exp = Number(expText);
  const sign = f < 0 ? '-' : '';
  if (exp < -4 || exp >= 6) {
    const frac = digits.length > 1 ? `.${digits.slice(1)}` : '';
    return `${sign}${digits[0]}${frac}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  const int = digits.slice(0, exp + 1).padEnd(exp + 1, '0');
  const frac = digits.slice(exp + 1);
  return frac ? `${sign}${int}.${frac}` : `${sign}${int}`;
}

class Chunk {
  constructor(readonly text: string) {}
}

type Style = { scalar: (v: GoValue) => string; open: [string, string]; map: [string, string]; comma: string; colon: string; key: (k: string) => string };

// Prints a value with an explicit stack; maps in Go's key order (sorted).
function print(v: GoValue, style: Style): string {
  let out = '';
  const todo: (GoValue | Chunk)[] = [v];
  for (let item = todo.pop(); item !== undefined; item = todo.pop()) {
    if (item instanceof Chunk) out += item.text;
    else if (Array.isArray(item)) {
      const tasks: (GoValue | Chunk)[] = [new Chunk(style.open[0])];
      item.forEach((x, i) => tasks.push(...(i > 0 ? [new Chunk(style.comma)] : []), x));
      tasks.push(new Chunk(style.open[1]));
      todo.push(...tasks.reverse());
    } else if (isMap(item)) {
      const tasks: (GoValue | Chunk)[] = [new Chunk(style.map[0])];
      Object.keys(item)
        .sort(compareGo)
        .forEach((k, i) => tasks.push(new Chunk(`${i > 0 ? style.comma : ''}${style.key(k)}${style.colon}`), item[k] as GoValue));
      tasks.push(new Chunk(style.map[1]));
      todo.push(...tasks.reverse());
    } else out += style.scalar(item);
  }
  return out;
}

function scalarJson(v: GoValue): string {
  if (v === null) return 'null';
  if (typeof v === 'boolean') return String(v);
  if (typeof v === 'number') return goJsonFloat(v);
  if (typeof v === 'string') return goJsonString(v);
  if (v instanceof GoInt) return v.n.toString();
  if (v instanceof GoByte) return String(v.n);
  throw new GoPanic('reflect: call of reflect.Value.Interface on zero Value');
}

function scalarV(v: GoValue): string {
  if (v === ZERO) return '<invalid reflect.Value>';
  if (v === null) return '<nil>';
  if (typeof v === 'number') return goFloatV(v);
  if (v instanceof GoInt || v instanceof GoByte) return String(v.n);
  return String(v);
}

/** goMarshal is json.Marshal of the value, the text Argo records as the measurement's value. */
export function goMarshal(v: GoValue): string {
  return print(v, { scalar: scalarJson, open: ['[', ']'], map: ['{', '}'], comma: ',', colon: ':', key: goJsonString });
}

/** goFormatV is fmt's %v, as client-go's "... is not array or slice and cannot be filtered" prints it. */
export function goFormatV(v: GoValue): string {
  return print(v, { scalar: scalarV, open: ['[', ']'], map: ['map[', ']'], comma: ' ', colon: ':', key: (k) => k });
}

/** goTypeName is the Go type of a value, as "... is not array or slice" names it. */
export function goTypeName(v: GoValue): string {
  if (isMap(v)) return 'map[string]interface {}';
  if (typeof v === 'number') return 'float64';
  if (typeof v === 'boolean') return 'bool';
  if (v instanceof GoInt) return 'int';
  if (v instanceof GoByte) return 'uint8';
  return typeof v === 'string' ? 'string' : '[]interface {}';
}

type Kind = 'bool' | 'int' | 'uint' | 'float' | 'string';

function kindOf(v: GoValue): Kind | undefined {
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return 'float';
  if (typeof v === 'string') return 'string';
  if (v instanceof GoInt) return 'int';
  if (v instanceof GoByte) return 'uint';
  return undefined; // nil, a map, a slice: "invalid type for comparison"
}

const BAD_TYPE = 'invalid type for comparison';
const INCOMPATIBLE = 'incompatible types for comparison';
const num = (v: GoValue): bigint => (v instanceof GoInt || v instanceof GoByte ? BigInt(v.n) : 0n);

// text/template's eq and lt: kinds must match (a JSON number is a float64, `1` an int: incompatible),
// except signed against unsigned integers.
function goEqual(a: GoValue, b: GoValue): boolean | string {
  const ka = kindOf(a);
  const kb = kindOf(b);
  if (!ka || !kb) return BAD_TYPE;
  if (ka !== kb) {
    if ((ka === 'int' && kb === 'uint') || (ka === 'uint' && kb === 'int')) return num(a) === num(b);
    return INCOMPATIBLE;
  }
  return ka === 'int' || ka === 'uint' ? num(a) === num(b) : a === b;
}

function goLess(a: GoValue, b: GoValue): boolean | string {
  const ka = kindOf(a);
  const kb = kindOf(b);
  if (!ka || !kb) return BAD_TYPE;
  if (ka !== kb) {
    if ((ka === 'int' && kb === 'uint') || (ka === 'uint' && kb === 'int')) return num(a) < num(b);
    return INCOMPATIBLE;
  }
  if (ka === 'bool') return BAD_TYPE;
  if (ka === 'string') return compareGo(a as string, b as string) < 0;
  return ka === 'float' ? (a as number) < (b as number) : num(a) < num(b);
}

/** goCompare is a filter's operator: the verdict, or text/template's error (a string). */
export function goCompare(op: string, a: GoValue, b: GoValue): boolean | string {
  const not = (r: boolean | string): boolean | string => (typeof r === 'string' ? r : !r);
  const lessEqual = (): boolean | string => {
    const lt = goLess(a, b);
    return lt === false ? goEqual(a, b) : lt;
  };
  switch (op) {
    case '==':
      return goEqual(a, b);
    case '!=':
      return not(goEqual(a, b));
    case '<':
      return goLess(a, b);
    case '>=':
      return not(goLess(a, b));
    case '<=':
      return lessEqual();
    case '>':
      return not(lessEqual());
    default:
      return `unrecognized filter operator ${op}`;
  }
}
