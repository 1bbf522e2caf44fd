// Go's dynamic values as expr's runtime (vm/runtime) handles them: an int is a bigint wrapped to 64 bits
// as Go wraps it, a float64 a number, a map[string]any a Map, a []any or a []float64 an array (the
// latter marked, because Go tells them apart where reflect.DeepEqual compares). Every operation below
// is expr's helper of the same name; where Go would panic we throw GoPanic, which Argo reports as an
// error of the measurement.

/** Val is one Go value of a condition: nil, bool, int, float64, string, []any/[]float64, map[string]any. */
export type Val = null | boolean | bigint | number | string | Val[] | Map<string, Val>;

/** GoPanic is what expr's VM recovers from a panic and returns as the error of the evaluation. */
export class GoPanic extends Error {}

const panic = (message: string): never => {
  throw new GoPanic(message);
};

const FLOAT64S = new WeakSet<Val[]>();

/** float64s marks an array as a Go []float64 (a Prometheus vector) rather than a []any. */
export function float64s(items: number[]): Val[] {
  FLOAT64S.add(items);
  return items;
}

/** isFloat64s says an array is a []float64. */
export const isFloat64s = (a: Val[]): boolean => FLOAT64S.has(a);

/** int wraps to Go's 64-bit int. */
export const int = (v: bigint): bigint => BigInt.asIntN(64, v);

/** typeName is Go's %T of a value. */
export function typeName(v: Val): string {
  if (v === null) return '<nil>';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'bigint') return 'int';
  if (typeof v === 'number') return 'float64';
  if (typeof v === 'string') return 'string';
  if (Array.isArray(v)) return isFloat64s(v) ? '[]float64' : '[]interface {}';
  return 'map[string]interface {}';
}

const isNum = (v: Val): v is bigint | number => typeof v === 'bigint' || typeof v === 'number';

/** toF is Go's float64(x) of a number. */
const toF = (v: bigint | number): number => (typeof v === 'number' ? v : Number(v));

/** floatToInt is Go's int(f) on amd64: truncation, and MinInt64 for NaN and what does not fit. */
export function floatToInt(f: number): bigint {
  const t = Math.trunc(f);
  if (Number.isNaN(t) || t >= 2 ** 63 || t < -(2 ** 63)) return -(2n ** 63n);
  return BigInt(t);
}

/** equal is runtime.Equal: numbers by value across int and float, arrays element by element, else DeepEqual. */
export function equal(a: Val, b: Val): boolean {
  if (isNum(a) && isNum(b)) return typeof a === 'bigint' && typeof b === 'bigint' ? a === b : toF(a) === toF(b);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => equal(x, b[i] as Val));
  if (typeof a === 'string' && typeof b === 'string') return a === b;
  if (typeof a === 'boolean' && typeof b === 'boolean') return a === b;
  if (a === null && b === null) return true;
  return deepEqual(a, b);
}

/** deepEqual is reflect.DeepEqual: the same Go type all the way down, floats by ==, a value equal to itself. */
export function deepEqual(a: Val, b: Val): boolean {
  if (a === b && typeof a === 'object') return true;
  if (a === null || b === null) return a === b;
  if (typeof a !== typeof b) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || isFloat64s(a) !== isFloat64s(b) || a.length !== b.length) return false;
    return a.every((x, i) => deepEqual(x, b[i] as Val));
  }
  if (a instanceof Map) {
    if (!(b instanceof Map) || a.size !== b.size) return false;
    for (const [k, v] of a) if (!b.has(k) || !deepEqual(v, b.get(k) as Val)) return false;
    return true;
  }
  return a === b;
}

// Go strings are bytes, and slicing one can cut a character in two. Such a string is held here with each
// byte that is not part of valid UTF-8 as a lone surrogate U+DC80..U+DCFF (Python's "surrogateescape"),
// so that equal bytes are equal strings, and goBytes gives the bytes back.

/** goBytes is a string's bytes as Go holds them. */
export function goBytes(s: string): Buffer {
  if (!/[\udc80-\udcff]/.test(s)) return Buffer.from(s, 'utf8');
  const parts: Buffer[] = [];
  for (const ch of s) {
    const c = ch.charCodeAt(0);
    parts.push(ch.length === 1 && c >= 0xdc80 && c <= 0xdcff ? Buffer.from([c - 0xdc00]) : Buffer.from(ch, 'utf8'));
  }
  return Buffer.concat(parts);
}

/** goString reads bytes back into a string as Go's utf8 decoding does: an invalid byte is one rune of its own. */
export function goString(b: Uint8Array): string {
  let out = '';
  for (let i = 0; i < b.length; ) {
    const c = b[i] as number;
    const need = c < 0x80 ? 0 : c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xf0 && c <= 0xf4 ? 3 : -1;
    let cp = need === 0 ? c : need === 1 ? c & 0x1f : need === 2 ? c & 0x0f : c & 0x07;
    let ok = need >= 0;
    for (let k = 1; ok && k <= need; k++) {
      const x = b[i + k];
      if (x === undefined || (x & 0xc0) !== 0x80) ok = false;
      else cp = (cp << 6) | (x & 0x3f);
    }
    // Overlong forms, surrogates and values past U+10FFFF are not valid UTF-8.
    if (ok && ((need === 2 && cp < 0x800) || (need === 3 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff))) ok = false;
    if (ok) {
      out += String.fromCodePoint(cp);
      i += need + 1;
    } else {
      out += String.fromCharCode(0xdc00 + c);
      i++;
    }
  }
  return out;
}

/** concat is Go's string +: the bytes joined, so two halves of a character make it whole again. */
export const concat = (a: string, b: string): string => (/[\udc80-\udcff]/.test(a + b) ? goString(Buffer.concat([goBytes(a), goBytes(b)])) : a + b);

/** compareStrings orders strings by their bytes, as Go does. */
export const compareStrings = (a: string, b: string): number => Buffer.compare(goBytes(a), goBytes(b));

/** compare is runtime.Less/More/LessOrEqual/MoreOrEqual: numbers or strings, else a panic. */
export function compare(op: string, a: Val, b: Val): boolean {
  let c: number;
  if (isNum(a) && isNum(b)) {
    if (typeof a === 'bigint' && typeof b === 'bigint') c = a < b ? -1 : a > b ? 1 : 0;
    else {
      const x = toF(a);
      const y = toF(b);
      if (Number.isNaN(x) || Number.isNaN(y)) return false;
      c = x < y ? -1 : x > y ? 1 : 0;
    }
  } else if (typeof a === 'string' && typeof b === 'string') c = compareStrings(a, b);
  else return panic(`invalid operation: ${typeName(a)} ${op} ${typeName(b)}`);
  return op === '<' ? c < 0 : op === '>' ? c > 0 : op === '<=' ? c <= 0 : c >= 0;
}

/** arith is runtime.Add/Subtract/Multiply: int op int wraps as an int, any float makes a float64; strings add. */
export function arith(op: '+' | '-' | '*', a: Val, b: Val): Val {
  if (isNum(a) && isNum(b)) {
    if (typeof a === 'bigint' && typeof b === 'bigint') return int(op === '+' ? a + b : op === '-' ? a - b : a * b);
    const x = toF(a);
    const y = toF(b);
    return op === '+' ? x + y : op === '-' ? x - y : x * y;
  }
  if (op === '+' && typeof a === 'string' && typeof b === 'string') return concat(a, b);
  return panic(`invalid operation: ${typeName(a)} ${op} ${typeName(b)}`);
}

/** divide is runtime.Divide: always a float64 division, so 1/0 is +Inf. */
export function divide(a: Val, b: Val): number {
  if (isNum(a) && isNum(b)) return toF(a) / toF(b);
  return panic(`invalid operation: ${typeName(a)} / ${typeName(b)}`);
}

/** modulo is runtime.Modulo: ints only (truncated, as Go's %), a zero divisor panics. */
export function modulo(a: Val, b: Val): bigint {
  if (typeof a === 'bigint' && typeof b === 'bigint') return b === 0n ? panic('runtime error: integer divide by zero') : int(a % b);
  return panic(`invalid operation: ${typeName(a)} % ${typeName(b)}`);
}

/** goPow is Go's math.Pow where it differs from JS: x**0 and 1**y are 1 even for NaN, (-1)**±Inf is 1. */
export function goPow(x: number, y: number): number {
  if (y === 0 || x === 1) return 1;
  if (x === -1 && !Number.isFinite(y) && !Number.isNaN(y)) return 1;
  return Math.pow(x, y);
}

/** toFloat is runtime.ToFloat64 (the operands of `**`). */
export function toFloat(v: Val): number {
  return isNum(v) ? toF(v) : panic(`invalid operation: float(${typeName(v)})`);
}

/** toInt is runtime.ToInt (indexes and slice bounds): a float is truncated, anything else panics. */
export function toInt(v: Val): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number') return floatToInt(v);
  return panic(`invalid operation: int(${typeName(v)})`);
}

/** negate is runtime.Negate. */
export function negate(v: Val): Val {
  if (typeof v === 'bigint') return int(-v);
  if (typeof v === 'number') return -v;
  return panic(`invalid operation: - ${typeName(v)}`);
}

/** fetch is runtime.Fetch: `a[i]`, `a.b`. Arrays count back from the end; a missing map key is nil. */
export function fetch(from: Val, i: Val): Val {
  if (Array.isArray(from) || typeof from === 'string') {
    // A string is indexed by byte, and the byte is a uint8 (an int here).
    const items = typeof from === 'string' ? Array.from(goBytes(from), (b) => BigInt(b)) : from;
    let index = toInt(i);
    const l = BigInt(items.length);
    if (index < 0n) index += l;
    if (index < 0n || index >= l) return panic(`index out of range: ${index} (array length is ${l})`);
    return items[Number(index)] as Val;
  }
  if (from instanceof Map) {
    if (i === null) return from.get('') ?? null;
    if (typeof i !== 'string') return panic(`reflect.Value.MapIndex: value of type ${typeName(i)} is not assignable to type string`);
    return from.get(i) ?? null;
  }
  return panic(`cannot fetch ${formatV(i)} from ${typeName(from)}`);
}

/** length is runtime.Len (the end of an open slice): bytes of a string, elements of an array or a map. */
export function length(v: Val): bigint {
  if (Array.isArray(v)) return BigInt(v.length);
  if (v instanceof Map) return BigInt(v.size);
  if (typeof v === 'string') return BigInt(goBytes(v).length);
  return panic(`invalid argument for len (type ${typeName(v)})`);
}

/** slice is runtime.Slice: bounds counted from the end when negative, then clamped; strings by byte. */
export function slice(v: Val, from: Val, to: Val): Val {
  if (!Array.isArray(v) && typeof v !== 'string') return panic(`cannot slice ${formatV(from)}`);
  const n = BigInt(typeof v === 'string' ? goBytes(v).length : v.length);
  let a = toInt(from);
  let b = toInt(to);
  if (a < 0n) a += n;
  if (a < 0n) a = 0n;
  if (b < 0n) b += n;
  if (b < 0n) b = 0n;
  if (b > n) b = n;
  if (a > b) a = b;
  if (typeof v === 'string') return goString(goBytes(v).subarray(Number(a), Number(b)));
  const out = v.slice(Number(a), Number(b));
  return isFloat64s(v) ? float64s(out as number[]) : out;
}

/** within is runtime.In: an element equal to the needle, a key of a map (nil looks up ""); nil holds nothing. */
export function within(needle: Val, coll: Val): boolean {
  if (coll === null) return false;
  if (Array.isArray(coll)) return coll.some((x) => equal(x, needle));
  if (coll instanceof Map) {
    if (needle === null) return coll.has('');
    if (typeof needle !== 'string') return panic(`reflect.Value.MapIndex: value of type ${typeName(needle)} is not assignable to type string`);
    return coll.has(needle);
  }
  return panic(`operator "in" not defined on ${typeName(coll)}`);
}

/** formatV is Go's fmt %v of a value (the builtin string()). */
export function formatV(v: Val): string {
  if (v === null) return '<nil>';
  if (typeof v === 'number') return formatFloat(v);
  if (typeof v === 'bigint' || typeof v === 'boolean' || typeof v === 'string') return String(v);
  if (Array.isArray(v)) return `[${v.map(formatV).join(' ')}]`;
  const keys = [...v.keys()].sort(compareStrings);
  return `map[${keys.map((k) => `${k}:${formatV(v.get(k) as Val)}`).join(' ')}]`;
}

/** formatFloat is %v of a float64: shortest digits, an exponent below 1e-4 and from 1e6 on (1e+06). */
export function formatFloat(f: number): string {
  if (Number.isNaN(f)) return 'NaN';
  if (f === Infinity) return '+Inf';
  if (f === -Infinity) return '-Inf';
  if (f === 0) return Object.is(f, -0) ? '-0' : '0';
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(f.toExponential()) as RegExpExecArray;
  const [, sign, first, rest = '', e] = m;
  const exp = Number(e);
  const digits = `${first}${rest}`;
  if (exp < -4 || exp >= 6) {
    const mant = rest ? `${first}.${rest}` : first;
    return `${sign}${mant}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  const whole = digits.slice(0, exp + 1).padEnd(exp + 1, '0');
  const frac = digits.slice(exp + 1);
  return `${sign}${whole}${frac ? `.${frac}` : ''}`;
}

/** underscoresOk is strconv's underscoreOK: an underscore only between digits, or after a base prefix. */
function underscoresOk(text: string): boolean {
  const s = text.replace(/^[+-]/, '');
  let saw = '^';
  let i = 0;
  const hex = /^0[xX]/.test(s);
  if (/^0[bBoOxX]/.test(s)) (i = 2), (saw = '0');
  for (; i < s.length; i++) {
    const c = s[i] as string;
    if (/[0-9]/.test(c) || (hex && /[a-fA-F]/.test(c))) saw = '0';
    else if (c === '_') {
      if (saw !== '0') return false;
      saw = '_';
    } else if (saw === '_') return false;
    else saw = '!';
  }
  return saw !== '_';
}

/** parseFloat is strconv.ParseFloat(s, 64): undefined where Go returns an error (syntax, or overflow). */
export function parseGoFloat(s: string): number | undefined {
  const m = /^([+-]?)(inf|infinity|nan)$/i.exec(s);
  if (m) {
    if (/nan/i.test(s)) return m[1] ? undefined : NaN;
    return m[1] === '-' ? -Infinity : Infinity;
  }
  if (!underscoresOk(s)) return undefined;
  const t = s.replace(/_/g, '');
  let v: number;
  const hex = /^([+-]?)0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?[pP]([+-]?\d+)$/.exec(t);
  if (hex) {
    const [, sign, whole = '', frac = '', exp] = hex;
    if (whole === '' && frac === '') return undefined;
    v = Number(BigInt(`0x${whole}${frac}` || '0')) * 2 ** (Number(exp) - 4 * frac.length);
    if (sign === '-') v = -v;
  } else if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t)) {
    v = Number(t);
  } else return undefined;
  return Number.isFinite(v) ? v : undefined;
}

/** parseGoInt is strconv.ParseInt(s, 10, 64) (and Atoi): undefined where Go returns an error. */
export function parseGoInt(s: string): bigint | undefined {
  if (!/^[+-]?\d+$/.test(s)) return undefined;
  const v = BigInt(s);
  return v === int(v) ? v : undefined;
}
