// The template language of k8s.io/client-go/util/jsonpath (parser.go, unchanged from v0.26 to v0.37;
// Argo Rollouts v1.10.1 vendors v0.34.5), read into parts and steps. Our own reading, but every quirk
// that changes an answer is kept, because the web provider's conditions see what client-go finds:
//  - text outside braces is a value of its own: `$.a` (no braces) is the string "$.a";
//  - `['k.a']` is re-read as the field path `.k.a`, so a dot inside a key needs a backslash (`.k\.a`);
//  - `[]` is `[0]`; a filter's sides are re-read as actions of their own, split at the first run of
//    `!<>=` characters (`@.x==` becomes `@.x` `=` `=`, a syntax error);
//  - words other than true/false parse (and fail only when evaluated: "unrecognized identifier").
// Errors read as client-go's, for the measurement's message.

/** Step is one node of an action, evaluated left to right against the values the previous one found. */
export type Step =
  | { kind: 'text'; text: string } // a quoted string: stands for itself
  | { kind: 'field'; name: string }
  | { kind: 'word'; word: string } // range, end, or anything else (refused when evaluated)
  | { kind: 'int'; value: bigint } // a Go int literal: compares with no JSON number
  | { kind: 'float'; value: number }
  | { kind: 'bool'; value: boolean }
  | { kind: 'index'; start: bigint | null; end: bigint | null; endFromStart: boolean; step: bigint | null }
  | { kind: 'filter'; left: Step[]; op: string; right: Step[] } // op `exists` when there is no operator
  | { kind: 'wildcard' }
  | { kind: 'descend' }
  | { kind: 'union'; members: Step[][] };

/** Part is a piece of a template: literal text, or an action between braces. */
export type Part = { kind: 'text'; text: string } | { kind: 'action'; steps: Step[] };

const EOF = -1;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

class SyntaxFailure extends Error {}

function fail(message: string): never {
  throw new SyntaxFailure(message);
}

/** int64 is Go's wrap-around int arithmetic (the derived end of `[9223372036854775807]` wraps). */
export function int64(n: bigint): bigint {
  return BigInt.asIntN(64, n);
}

const isDigit = (c: number): boolean => c >= 0 && /\p{Nd}/u.test(String.fromCodePoint(c));
const isAlphaNumeric = (c: number): boolean => c === 0x5f || (c >= 0 && /[\p{L}\p{Nd}]/u.test(String.fromCodePoint(c)));

// Where a field name or a word stops (parser.go isTerminator).
function isTerminator(c: number): boolean {
  return c === EOF || ' \t\r\n.,[]$@{}'.includes(String.fromCodePoint(c));
}

/** runeName prints a character as Go's %#U does: U+0021 '!' (the quoted glyph only when printable). */
function runeName(c: number): string {
  const ch = String.fromCodePoint(c);
  const hex = `U+${c.toString(16).toUpperCase().padStart(4, '0')}`;
  return c === 0x20 || /[\p{L}\p{M}\p{N}\p{P}\p{S}]/u.test(ch) ? `${hex} '${ch}'` : hex;
}

class Reader {
  constructor(
    readonly src: string,
    public pos: number,
  ) {}
  peek(): number {
    return this.pos < this.src.length ? (this.src.codePointAt(this.pos) as number) : EOF;
  }
  next(): number {
    const c = this.peek();
    if (c !== EOF) this.pos += c > 0xffff ? 2 : 1;
    return c;
  }
  startsWith(s: string): boolean {
    return this.src.startsWith(s, this.pos);
  }
}

/** readTemplate reads a whole template or throws SyntaxFailure. */
function readTemplate(src: string): Part[] {
  const parts: Part[] = [];
  let at = 0;
  while (at < src.length) {
    const open = src.indexOf('{', at);
    if (open < 0) {
      parts.push({ kind: 'text', text: src.slice(at) });
      break;
    }
    if (open > at) parts.push({ kind: 'text', text: src.slice(at, open) });
    const r = new Reader(src, open + 1);
    parts.push({ kind: 'action', steps: readAction(r) });
    at = r.pos;
  }
  return parts;
}

/** subAction re-reads a piece of an action as `{piece}`: the whole of it must parse, its first action counts. */
function subAction(piece: string): Step[] {
  const first = readTemplate(`{${piece}}`)[0];
  return first?.kind === 'action' ? first.steps : [];
}

function readAction(r: Reader): Step[] {
  const steps: Step[] = [];
  for (;;) {
    if (r.startsWith('}')) {
      r.pos += 1;
      return steps;
    }
    if (r.startsWith('[?(')) {
      r.pos += 3;
      steps.push(readFilter(r));
      continue;
    }
    if (r.startsWith('..')) {
      if (steps.at(-1)?.kind === 'descend') fail('invalid multiple recursive descent');
      r.pos += 2;
      steps.push({ kind: 'descend' });
      if (isAlphaNumeric(r.peek())) steps.push(readField(r));
      continue;
    }
    const at = r.pos;
    const c = r.next();
    const ch = c === EOF ? '' : String.fromCodePoint(c);
    if (c === EOF || ch === '\r' || ch === '\n') fail('unclosed action');
    else if (ch === ' ' || ch === '@' || ch === '$') continue;
    else if (ch === '[') steps.push(...readBrackets(r));
    else if (ch === '"' || ch === "'") steps.push({ kind: 'text', text: readQuoted(r, c) });
    else if (ch === '.') steps.push(readField(r));
    else if (ch === '+' || ch === '-' || isDigit(c)) {
      r.pos = at;
      steps.push(readNumber(r));
    } else if (isAlphaNumeric(c)) {
      r.pos = at;
      steps.push(readWord(r));
    } else fail(`unrecognized character in action: ${runeName(c)}`);
  }
}

// A field name runs to the next terminator; a backslash keeps the next character (`.a\.b` is "a.b").
function readField(r: Reader): Step {
  const from = r.pos;
  for (;;) {
    const at = r.pos;
    const c = r.next();
    if (c === 0x5c) r.next();
    else if (isTerminator(c)) {
      r.pos = at;
      break;
    }
  }
  const raw = r.src.slice(from, r.pos);
  return raw === '*' ? { kind: 'wildcard' } : { kind: 'field', name: raw.replaceAll('\\', '') };
}

function readWord(r: Reader): Step {
  const from = r.pos;
  while (!isTerminator(r.peek())) r.next();
  const word = r.src.slice(from, r.pos);
  return word === 'true' || word === 'false' ? { kind: 'bool', value: word === 'true' } : { kind: 'word', word };
}

/** goAtoi is strconv.Atoi: ASCII digits, an optional sign, within int64. */
function goAtoi(text: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(text)) return undefined;
  const n = BigInt(text);
  return n < INT64_MIN || n > INT64_MAX ? undefined : n;
}

// A number is an int when Atoi takes it, else a float when ParseFloat does (1e20 digits overflow int64
// and become a float; digits that overflow float64 are refused).
function readNumber(r: Reader): Step {
  const from = r.pos;
  if (r.startsWith('+') || r.startsWith('-')) r.next();
  while (r.peek() === 0x2e || isDigit(r.peek())) r.next();
  const text = r.src.slice(from, r.pos);
  const int = goAtoi(text);
  if (int !== undefined) return { kind: 'int', value: int };
  const float = /^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)$/.test(text) ? Number(text) : NaN;
  if (Number.isFinite(float)) return { kind: 'float', value: float };
  return fail(`cannot parse number ${text}`);
}

function readBrackets(r: Reader): Step[] {
  const from = r.pos;
  for (;;) {
    const c = r.next();
    if (c === EOF || c === 0x0a) fail('unterminated array');
    if (c === 0x5d) break;
  }
  let text = r.src.slice(from, r.pos - 1);
  if (text === '*') text = ':';
  const pieces = text.split(',');
  if (pieces.length > 1) return [{ kind: 'union', members: pieces.map((p) => subAction(`[${p.replace(/^ +| +$/g, '')}]`)) }];
  const key = /^'([^']*)'$/.exec(text);
  if (key) return subAction(`.${key[1]}`);
  const m = /^(-?\d*)(:-?\d*)?(:-?\d*)?$/.exec(text);
  if (!m) return fail(`invalid array index ${text}`);
  const number = (s: string): bigint => goAtoi(s) ?? fail(`array index ${s} is not a number`);
  const [startText = '', endText = '', stepText = ''] = [m[1], m[2], m[3]];
  const start = startText === '' ? null : number(startText);
  // No colon at all: one element, end = start + 1, and "end 0" then means "the end of the array".
  const endFromStart = endText === '';
  const end = endFromStart ? int64((start ?? 0n) + 1n) : endText === ':' ? null : number(endText.slice(1));
  const step = stepText === '' || stepText === ':' ? null : number(stepText.slice(1));
  return [{ kind: 'index', start, end, endFromStart, step }];
}

// A filter runs to the first `)` outside a quoted string, and `]` must follow it.
function readFilter(r: Reader): Step {
  const from = r.pos;
  let opened = false;
  let closed = false;
  let pair = 0;
  for (;;) {
    const c = r.next();
    if (c === EOF || c === 0x0a) fail('unterminated filter');
    if (c === 0x22 || c === 0x27) {
      if (!opened) {
        opened = true;
        pair = c;
      } else if (r.src[r.pos - 2] !== '\\' && c === pair) closed = true;
    } else if (c === 0x29 && opened === closed) break;
  }
  if (r.next() !== 0x5d) fail('unclosed array expect ]');
  const text = r.src.slice(from, r.pos - 2);
  const m = /^([^!<>=]+)([!<>=]+)([^\n]+?)$/.exec(text);
  if (!m) return { kind: 'filter', left: subAction(text), op: 'exists', right: [] };
  return { kind: 'filter', left: subAction(m[1] as string), op: m[2] as string, right: subAction(m[3] as string) };
}

function readQuoted(r: Reader, quote: number): string {
  const from = r.pos - 1;
  for (;;) {
    const c = r.next();
    if (c === EOF || c === 0x0a) fail('unterminated quoted string');
    if (c === quote && r.src[r.pos - 2] !== '\\') break;
  }
  const quoted = r.src.slice(from, r.pos);
  const text = unquote(quoted);
  if (text === undefined) fail(`unquote string ${quoted} error invalid syntax`);
  return text;
}

const ESCAPES: Record<string, number> = { a: 7, b: 8, f: 12, n: 10, r: 13, t: 9, v: 11, '\\': 0x5c };

/**
 * unquote is client-go's UnquoteExtend (strconv.Unquote that also takes single quotes): Go escapes,
 * and the other quote character may not be escaped. Escapes that make bytes which are not UTF-8
 * (`"\xff"`) are refused: Go keeps such a string, but no JSON string can ever equal it.
 */
function unquote(quoted: string): string | undefined {
  const quote = quoted[0] as string;
  const s = quoted.slice(1, -1);
  if (!s.includes('\\') && !s.includes(quote)) return s;
  const bytes: number[] = [];
  const utf8 = (c: number): void => void bytes.push(...Buffer.from(String.fromCodePoint(c), 'utf8'));
  for (let i = 0; i < s.length; ) {
    const c = s.codePointAt(i) as number;
    const ch = String.fromCodePoint(c);
    if (ch === quote) return undefined;
    if (ch !== '\\') {
      utf8(c);
      i += ch.length;
      continue;
    }
    const e = s[i + 1];
    i += 2;
    if (e === undefined) return undefined;
    if (ESCAPES[e] !== undefined) bytes.push(ESCAPES[e]);
    else if (e === 'x' || e === 'u' || e === 'U') {
      const n = e === 'x' ? 2 : e === 'u' ? 4 : 8;
      const hex = s.slice(i, i + n);
      if (!new RegExp(`^[0-9a-fA-F]{${n}}$`).test(hex)) return undefined;
      i += n;
      const v = parseInt(hex, 16);
      if (e === 'x') bytes.push(v);
      else if (v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return undefined;
      else utf8(v);
    } else if (/[0-7]/.test(e)) {
      const oct = e + s.slice(i, i + 2);
      if (!/^[0-7]{3}$/.test(oct) || parseInt(oct, 8) > 255) return undefined;
      i += 2;
      bytes.push(parseInt(oct, 8));
    } else if (e === "'" || e === '"') {
      if (e !== quote) return undefined;
      bytes.push(e.charCodeAt(0));
    } else return undefined;
  }
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(Uint8Array.from(bytes));
  } catch {
    fail(`unquote string ${quoted}: bytes that are not UTF-8 are not supported (no JSON string can match them)`);
  }
}

/** parseTemplate reads a client-go jsonpath template into its parts, or gives client-go's parse error. */
export function parseTemplate(src: string): { ok: true; parts: Part[] } | { ok: false; error: string } {
  try {
    return { ok: true, parts: readTemplate(src) };
  } catch (e) {
    if (e instanceof SyntaxFailure) return { ok: false, error: e.message };
    throw e;
  }
}
