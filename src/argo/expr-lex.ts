// The tokens of expr-lang's condition language (github.com/expr-lang/expr v1.17.7, parser/lexer), as
// its lexer cuts them: the same operator runs ("&&", "**", "?.", "??", "::"), the same number syntax
// (hex, octal, binary, underscores, ".5", "1e3") and the same string escapes, so that a condition that
// does not lex in Argo does not lex here either. Positions count code points, as expr's do.

/** Token is one lexeme; `pos` is its first code point, 0-based. */
export interface Token {
  kind: 'ident' | 'number' | 'string' | 'op' | 'bracket' | 'eof';
  value: string;
  pos: number;
}

/** ExprSyntaxError is a condition that does not lex or parse; `pos` is the code point it stops at. */
export class ExprSyntaxError extends Error {
  constructor(
    message: string,
    readonly pos: number,
  ) {
    super(message);
  }
}

// Go's unicode.IsSpace: ASCII white space, NEL, NBSP and the Unicode space separators.
const SPACE = /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]$/u;
// utils.IsAlphaNumeric: a letter, a decimal digit, '_' or '$'.
const ALNUM = /^[\p{L}\p{Nd}_$]$/u;
const KEYWORD_OPS = new Set(['not', 'in', 'or', 'and', 'matches', 'contains', 'startsWith', 'endsWith', 'let', 'if', 'else']);

const isHex = (c: string | undefined): boolean => c !== undefined && /^[0-9a-fA-F]$/.test(c);

/** lex cuts the whole condition into tokens, ending with one `eof`. */
export function lex(src: string): Token[] {
  const rs = Array.from(src);
  const out: Token[] = [];
  let i = 0;
  const at = (k: number): string | undefined => rs[k];
  const word = (from: number, to: number): string => rs.slice(from, to).join('');
  const fail = (message: string, pos: number): never => {
    throw new ExprSyntaxError(message, pos);
  };
  while (i < rs.length) {
    const start = i;
    const c = rs[i] as string;
    const next = at(i + 1);
    if (SPACE.test(c)) {
      i++;
    } else if (c === '"' || c === "'") {
      i = scanQuoted(rs, i, fail);
      out.push({ kind: 'string', value: unescape(word(start + 1, i - 1), start), pos: start });
    } else if (c === '`') {
      // A raw string: no escapes, a doubled backtick stands for one.
      let s = '';
      i++;
      for (;;) {
        if (i >= rs.length) fail('literal not terminated', i);
        if (rs[i] === '`' && rs[i + 1] === '`') {
          s += '`';
          i += 2;
        } else if (rs[i] === '`') {
          i++;
          break;
        } else s += rs[i++];
      }
      out.push({ kind: 'string', value: s, pos: start });
    } else if (/^[0-9]$/.test(c) || (c === '.' && next !== undefined && /^[0-9]$/.test(next))) {
      i = scanNumber(rs, i);
      if (i < rs.length && ALNUM.test(rs[i] as string)) fail(`bad number syntax: ${JSON.stringify(word(start, i + 1))}`, i);
      out.push({ kind: 'number', value: word(start, i), pos: start });
    } else if (c === '/' && next === '/') {
      while (i < rs.length && rs[i] !== '\n') i++;
    } else if (c === '/' && next === '*') {
      i += 2;
      while (!(rs[i] === '*' && rs[i + 1] === '/')) if (i++ >= rs.length) fail('unclosed comment', rs.length);
      i += 2;
    } else if (c === '#') {
      i++;
      if (rs[i] === '#') i++;
      out.push({ kind: 'op', value: word(start, i), pos: start });
      const from = i;
      while (i < rs.length && ALNUM.test(rs[i] as string)) i++;
      if (i > from) out.push({ kind: 'ident', value: word(from, i), pos: from });
    } else if ('([{)]}'.includes(c)) {
      out.push({ kind: 'bracket', value: c, pos: start });
      i++;
    } else if (ALNUM.test(c)) {
      while (i < rs.length && ALNUM.test(rs[i] as string)) i++;
      const w = word(start, i);
      out.push({ kind: KEYWORD_OPS.has(w) ? 'op' : 'ident', value: w, pos: start });
    } else {
      // Operators: the second rune each may take is exactly what expr's lexer accepts after the first.
      const pairs: Record<string, string> = { '?': '.?', '|': '|', ':': ':', '&': '&=*', '!': '&=*', '=': '&=*', '*': '&=*', '<': '&=*', '>': '&=*', '.': '.', '/': '' };
      if (',;%+-^'.includes(c)) i++;
      else if (c in pairs) i += next !== undefined && (pairs[c] as string).includes(next) ? 2 : 1;
      else fail(`unrecognized character: U+${(c.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')} '${c}'`, start);
      out.push({ kind: 'op', value: word(start, i), pos: start });
    }
  }
  out.push({ kind: 'eof', value: '', pos: Math.max(rs.length - 1, 0) });
  return out;
}

/** scanQuoted finds the end of a quoted string and checks its escapes as expr's scanString does. */
function scanQuoted(rs: string[], i: number, fail: (m: string, p: number) => never): number {
  const quote = rs[i];
  i++;
  for (;;) {
    const ch = rs[i];
    if (ch === undefined || ch === '\n') fail('literal not terminated', i);
    if (ch === quote) return i + 1;
    if (ch !== '\\') {
      i++;
      continue;
    }
    const e = rs[i + 1];
    i += 2;
    const digits = (n: number, ok: (c: string | undefined) => boolean): void => {
      for (let k = 0; k < n; k++, i++) if (!ok(rs[i])) fail('invalid char escape', i);
    };
    if (e !== undefined && 'abfnrtv\\'.includes(e)) continue;
    if (e === quote) continue;
    if (e !== undefined && /^[0-7]$/.test(e)) {
      i--;
      digits(3, (c) => c !== undefined && /^[0-7]$/.test(c));
    } else if (e === 'x') digits(2, isHex);
    else if (e === 'U') digits(8, isHex);
    else if (e === 'u' && rs[i] === '{') {
      i++;
      let n = 0;
      while (rs[i] !== '}') {
        if (!isHex(rs[i]) || n >= 6) fail('invalid char escape', i);
        i++;
        n++;
      }
      if (n === 0) fail('invalid char escape', i);
      i++;
    } else if (e === 'u') digits(4, isHex);
    else fail('invalid char escape', i - 1);
  }
}

/** scanNumber takes the longest number expr's lexer takes, stopping before a `..` range. */
function scanNumber(rs: string[], i: number): number {
  let digits = /^[0-9_]$/;
  if (rs[i] === '0') {
    i++;
    const p = rs[i];
    if (p === 'x' || p === 'X') (digits = /^[0-9a-fA-F_]$/), i++;
    else if (p === 'o' || p === 'O') (digits = /^[0-7_]$/), i++;
    else if (p === 'b' || p === 'B') (digits = /^[01_]$/), i++;
  }
  const run = (): void => {
    while (i < rs.length && digits.test(rs[i] as string)) i++;
  };
  run();
  if (rs[i] === '.') {
    if (rs[i + 1] === '.') return i;
    i++;
    run();
  }
  if (rs[i] === 'e' || rs[i] === 'E') {
    i++;
    if (rs[i] === '+' || rs[i] === '-') i++;
    run();
  }
  return i;
}

/** unescape turns a quoted string's body into its value as expr's unescape does (\r\n becomes \n). */
function unescape(body: string, pos: number): string {
  const s = body.replace(/\r\n|\r/g, '\n');
  let out = '';
  const bad = (): never => {
    throw new ExprSyntaxError('unable to unescape string', pos);
  };
  // A code point as Go's utf8.EncodeRune writes it: surrogates and values past U+10FFFF are invalid.
  const rune = (v: number): string => (v > 0x10ffff ? bad() : v >= 0xd800 && v <= 0xdfff ? '\ufffd' : String.fromCodePoint(v));
  for (let i = 0; i < s.length; ) {
    const c = s[i] as string;
    if (c !== '\\') {
      out += c;
      i++;
      continue;
    }
    const e = s[i + 1];
    i += 2;
    const simple: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\', "'": "'", '"': '"', '`': '`', '?': '?' };
    if (e !== undefined && e in simple) {
      out += simple[e];
    } else if (e === 'u' && s[i] === '{') {
      const end = s.indexOf('}', i);
      const hex = end < 0 ? '' : s.slice(i + 1, end);
      if (!/^[0-9a-fA-F]{1,6}$/.test(hex)) bad();
      out += rune(parseInt(hex, 16));
      i = end + 1;
    } else if (e === 'x' || e === 'X' || e === 'u' || e === 'U') {
      const n = e === 'u' ? 4 : e === 'U' ? 8 : 2;
      const hex = s.slice(i, i + n);
      if (!new RegExp(`^[0-9a-fA-F]{${n}}$`).test(hex)) bad();
      out += rune(parseInt(hex, 16));
      i += n;
    } else if (e !== undefined && '0123'.includes(e)) {
      const oct = e + s.slice(i, i + 2);
      if (!/^[0-3][0-7]{2}$/.test(oct)) bad();
      out += rune(parseInt(oct, 8));
      i += 2;
    } else bad();
  }
  return out;
}
