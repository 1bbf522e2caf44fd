// The parser of expr-lang's condition language (expr v1.17.7 parser/parser.go), precedence climbing with
// expr's table: chained comparisons (`a < b < c` is `a < b && b < c`), `not in`, `??` that may not be
// mixed with other operators unparenthesised, predicates with `#` and the `.field` shorthand, `?.` chains.
// What we do not evaluate is refused here by name (see expr.ts for the list and why).

import type { Node } from './expr-ast.js';
import { ExprSyntaxError, lex, type Token } from './expr-lex.js';

/** ExprRefusal is a construct of expr's language this interpreter does not evaluate. */
export class ExprRefusal extends Error {
  constructor(
    message: string,
    readonly pos: number,
  ) {
    super(message);
  }
}

const UNARY: Record<string, number> = { not: 50, '!': 50, '-': 90, '+': 90 };
const BINARY: Record<string, { prec: number; right?: true }> = {
  '|': { prec: 0 }, or: { prec: 10 }, '||': { prec: 10 }, and: { prec: 15 }, '&&': { prec: 15 },
  '==': { prec: 20 }, '!=': { prec: 20 }, '<': { prec: 20 }, '>': { prec: 20 }, '>=': { prec: 20 }, '<=': { prec: 20 },
  in: { prec: 20 }, matches: { prec: 20 }, contains: { prec: 20 }, startsWith: { prec: 20 }, endsWith: { prec: 20 },
  '..': { prec: 25 }, '+': { prec: 30 }, '-': { prec: 30 }, '*': { prec: 60 }, '/': { prec: 60 }, '%': { prec: 60 },
  '**': { prec: 100, right: true }, '^': { prec: 100, right: true }, '??': { prec: 500 },
};
const COMPARISON = new Set(['<', '>', '>=', '<=']);
const NEGATABLE = new Set(['contains', 'matches', 'startsWith', 'endsWith', 'in']);

// expr's predicate builtins and the shape of their arguments ('?' marks an optional one).
const PREDICATES: Record<string, string[]> = {
  all: ['e', 'p'], none: ['e', 'p'], any: ['e', 'p'], one: ['e', 'p'], filter: ['e', 'p'], map: ['e', 'p'],
  count: ['e', 'p?'], sum: ['e', 'p?'], find: ['e', 'p'], findIndex: ['e', 'p'], findLast: ['e', 'p'],
  findLastIndex: ['e', 'p'], groupBy: ['e', 'p'], sortBy: ['e', 'p', 'e?'], reduce: ['e', 'p', 'e?'],
};
/** BUILTINS are every builtin function name of expr v1.17.7 (builtin/builtin.go). */
export const BUILTINS = new Set(
  ('all none any one filter map find findIndex findLast findLastIndex count sum groupBy sortBy reduce len type abs ceil floor round ' +
    'int float string trim trimPrefix trimSuffix upper lower split splitAfter replace repeat join indexOf lastIndexOf hasPrefix ' +
    'hasSuffix max min mean median toJSON fromJSON toBase64 fromBase64 now duration date timezone first last get take keys values ' +
    'toPairs fromPairs reverse uniq concat flatten sort bitnot bitand bitor bitxor bitnand bitshl bitshr bitushr').split(' '),
);
/** ENV_NAMES are the names Argo's EvalCondition puts in the environment; a builtin of that name would be overridden. */
export const ENV_NAMES = new Set(['result', 'asInt', 'asFloat', 'isNaN', 'isInf', 'isNil', 'default']);

const INT64_MAX = 2n ** 63n - 1n;

/** parse reads a condition into its tree; it throws ExprSyntaxError or ExprRefusal. */
export function parse(src: string): Node {
  return new Parser(lex(src)).parseAll();
}

class Parser {
  private i = 0;
  private depth = 0; // predicate nesting: `#` and `.field` only mean something inside one

  constructor(private readonly tokens: Token[]) {}

  parseAll(): Node {
    const node = this.sequence();
    if (this.cur.kind !== 'eof') this.unexpected();
    return node;
  }

  private get cur(): Token {
    return this.tokens[this.i] as Token;
  }

  private is(kind: Token['kind'], value?: string): boolean {
    return this.cur.kind === kind && (value === undefined || this.cur.value === value);
  }

  private next(): void {
    if (this.i < this.tokens.length - 1) this.i++;
  }

  private unexpected(t: Token = this.cur): never {
    const shown = t.kind === 'eof' ? 'EOF' : `${t.kind === 'op' ? 'Operator' : t.kind === 'ident' ? 'Identifier' : t.kind === 'bracket' ? 'Bracket' : t.kind === 'number' ? 'Number' : 'String'}(${JSON.stringify(t.value)})`;
    throw new ExprSyntaxError(`unexpected token ${shown}`, t.pos);
  }

  private expect(kind: Token['kind'], value?: string): void {
    if (!this.is(kind, value)) this.unexpected();
    this.next();
  }

  private refuse(what: string, pos = this.cur.pos): never {
    throw new ExprRefusal(`${what} is not supported`, pos);
  }

  // A `;` sequence only makes sense with `let`; both are refused.
  private sequence(): Node {
    const node = this.expression(0);
    if (this.is('op', ';')) this.refuse('a sequence of expressions (`;`)');
    return node;
  }

  private expression(precedence: number): Node {
    if (precedence === 0 && this.is('op', 'let')) this.refuse('`let`');
    if (precedence === 0 && this.is('op', 'if')) this.refuse('`if { } else { }`');
    let left = this.primary();
    let prev = '';
    while (this.is('op')) {
      let op = this.cur;
      const negate = op.value === 'not';
      if (negate) {
        const back = this.i;
        this.next();
        if (!NEGATABLE.has(this.cur.value)) this.unexpected();
        if ((BINARY[this.cur.value] as { prec: number }).prec < precedence) {
          this.i = back;
          break;
        }
        op = this.cur;
      }
      const info = BINARY[op.value];
      if (!info || info.prec < precedence) break;
      if (op.value === '|') this.refuse('the pipe operator `|`', op.pos);
      if (op.value === '..') this.refuse('the range operator `..`', op.pos);
      if (op.value === 'matches') this.refuse('the operator `matches`', op.pos);
      this.next();
      if (prev === '??' && op.value !== '??') {
        throw new ExprSyntaxError(`Operator (${op.value}) and coalesce expressions (??) cannot be mixed. Wrap either by parentheses.`, op.pos);
      }
      if (COMPARISON.has(op.value)) {
        left = this.comparison(left, op, info.prec);
      } else {
        const right = this.expression(info.right ? info.prec : info.prec + 1);
        left = { k: 'binary', op: op.value, l: left, r: right, pos: op.pos };
        if (negate) left = { k: 'unary', op: 'not', x: left, pos: op.pos };
      }
      prev = op.value;
    }
    return precedence === 0 ? this.conditional(left) : left;
  }

  // `a < b < c` is `a < b && b < c`, with b evaluated twice, as expr builds it.
  private comparison(left: Node, op: Token, prec: number): Node {
    let root: Node | undefined;
    for (;;) {
      const right = this.expression(prec + 1);
      const cmp: Node = { k: 'binary', op: op.value, l: left, r: right, pos: op.pos };
      root = root ? { k: 'binary', op: '&&', l: root, r: cmp, pos: op.pos } : cmp;
      left = right;
      op = this.cur;
      if (!(op.kind === 'op' && COMPARISON.has(op.value))) return root;
      this.next();
    }
  }

  private conditional(node: Node): Node {
    while (this.is('op', '?')) {
      const pos = this.cur.pos;
      this.next();
      let a: Node;
      if (this.is('op', ':')) {
        this.next();
        a = node; // `c ?: b` is `c ? c : b`
      } else {
        a = this.expression(0);
        this.expect('op', ':');
      }
      node = { k: 'cond', c: node, a, b: this.expression(0), pos };
    }
    return node;
  }

  private primary(): Node {
    const t = this.cur;
    if (t.kind === 'op' && t.value in UNARY) {
      this.next();
      return this.postfix({ k: 'unary', op: t.value, x: this.expression(UNARY[t.value] as number), pos: t.pos });
    }
    if (this.is('bracket', '(')) {
      this.next();
      const inner = this.sequence();
      this.expect('bracket', ')');
      return this.postfix(inner);
    }
    if (this.depth > 0 && (this.is('op', '#') || this.is('op', '.'))) {
      let name = '';
      if (this.is('op', '#')) {
        this.next();
        if (this.is('ident')) {
          name = this.cur.value;
          this.next();
        }
      }
      return this.postfix({ k: 'pointer', name, pos: t.pos });
    }
    if (this.is('op', '::')) this.refuse('`::`');
    return this.secondary();
  }

  private secondary(): Node {
    const t = this.cur;
    if (t.kind === 'ident') {
      this.next();
      if (t.value === 'true' || t.value === 'false') return { k: 'bool', v: t.value === 'true', pos: t.pos };
      if (t.value === 'nil') return { k: 'nil', pos: t.pos };
      if (this.is('bracket', '(')) return this.postfix(this.call(t));
      if (t.value === '$env') this.refuse('`$env`', t.pos);
      return this.postfix({ k: 'ident', name: t.value, pos: t.pos });
    }
    if (t.kind === 'number') {
      this.next();
      return number(t);
    }
    if (t.kind === 'string') {
      this.next();
      return this.postfix({ k: 'string', v: t.value, pos: t.pos });
    }
    if (this.is('bracket', '[')) return this.postfix(this.array());
    if (this.is('bracket', '{')) return this.postfix(this.map());
    return this.unexpected();
  }

  private call(name: Token): Node {
    const shape = PREDICATES[name.value];
    if (shape && !ENV_NAMES.has(name.value)) {
      this.expect('bracket', '(');
      const args: Node[] = [];
      shape.forEach((arg, i) => {
        if (arg.endsWith('?') && this.is('bracket', ')')) return;
        if (args.length < i) return;
        if (this.is('bracket', ')')) {
          throw new ExprSyntaxError(`expected at least ${shape.length} arguments`, this.cur.pos);
        }
        if (i > 0) this.expect('op', ',');
        args.push(arg.startsWith('p') ? this.predicate() : this.expression(0));
      });
      if (this.is('op', ',')) this.next();
      this.expect('bracket', ')');
      return { k: 'builtin', name: name.value, args, pos: name.pos };
    }
    const args = this.args();
    if (BUILTINS.has(name.value) && !ENV_NAMES.has(name.value)) return { k: 'builtin', name: name.value, args, pos: name.pos };
    return { k: 'call', name: name.value, args, pos: name.pos };
  }

  private args(): Node[] {
    const args: Node[] = [];
    this.expect('bracket', '(');
    while (!this.is('bracket', ')')) {
      if (args.length > 0) {
        this.expect('op', ',');
        if (this.is('bracket', ')')) break;
      }
      args.push(this.expression(0));
    }
    this.expect('bracket', ')');
    return args;
  }

  private predicate(): Node {
    const pos = this.cur.pos;
    const braces = this.is('bracket', '{');
    if (braces) this.next();
    this.depth++;
    const body = braces ? this.sequence() : this.expression(0);
    if (!braces && this.is('op', ';')) throw new ExprSyntaxError('wrap predicate with brackets { and }', this.cur.pos);
    this.depth--;
    if (braces) this.expect('bracket', '}');
    return { k: 'predicate', body, pos };
  }

  private array(): Node {
    const pos = this.cur.pos;
    const items: Node[] = [];
    this.expect('bracket', '[');
    while (!this.is('bracket', ']')) {
      if (items.length > 0) {
        this.expect('op', ',');
        if (this.is('bracket', ']')) break;
      }
      items.push(this.expression(0));
    }
    this.expect('bracket', ']');
    return { k: 'array', items, pos };
  }

  // Keys: a number, a string or an identifier stand for that text; anything else in parentheses.
  private map(): Node {
    const pos = this.cur.pos;
    const pairs: { key: Node; value: Node }[] = [];
    this.expect('bracket', '{');
    while (!this.is('bracket', '}')) {
      if (pairs.length > 0) {
        this.expect('op', ',');
        if (this.is('bracket', '}')) break;
        if (this.is('op', ',')) this.unexpected();
      }
      let key: Node;
      if (this.is('number') || this.is('string') || this.is('ident')) {
        key = { k: 'string', v: this.cur.value, pos: this.cur.pos };
        this.next();
      } else if (this.is('bracket', '(')) {
        key = this.expression(0);
      } else {
        throw new ExprSyntaxError('a map key must be a quoted string, a number, a identifier, or an expression enclosed in parentheses', this.cur.pos);
      }
      this.expect('op', ':');
      pairs.push({ key, value: this.expression(0) });
    }
    this.expect('bracket', '}');
    return { k: 'map', pairs, pos };
  }

  // `.name`, `?.name`, `?.[i]`, `[i]`, `[a:b]`. A `.name` after a `?.` chain joins the chain (nil ends it
  // all); an index or a slice after it does not, so `a?.b[0]` fails on a nil `a` as it does in expr.
  private postfix(node: Node): Node {
    for (;;) {
      const t = this.cur;
      let optional = t.kind === 'op' && t.value === '?.';
      if (t.kind === 'op' && (t.value === '.' || t.value === '?.')) {
        this.next();
        if (optional && this.is('bracket', '[')) {
          node = this.index(node, true);
          continue;
        }
        const prop = this.cur;
        this.next();
        if (prop.kind !== 'ident' && !(prop.kind === 'op' && /^[\p{L}_$][\p{L}\p{Nd}_$]*$/u.test(prop.value))) {
          throw new ExprSyntaxError('expected name', prop.pos);
        }
        const inChain = node.k === 'chain';
        const base = node.k === 'chain' ? node.x : node;
        if (this.is('bracket', '(')) this.refuse(`the method call \`.${prop.value}()\``, prop.pos);
        const member: Node = { k: 'member', x: base, prop: { k: 'string', v: prop.value, pos: prop.pos }, optional, pos: prop.pos };
        node = inChain || optional ? { k: 'chain', x: member, pos: prop.pos } : member;
      } else if (t.kind === 'bracket' && t.value === '[') {
        node = this.index(node, (optional = false));
      } else {
        return node;
      }
    }
  }

  private index(node: Node, optional: boolean): Node {
    const pos = this.cur.pos;
    this.expect('bracket', '[');
    if (this.is('op', ':')) {
      this.next();
      const to = this.is('bracket', ']') ? undefined : this.expression(0);
      this.expect('bracket', ']');
      return { k: 'slice', x: node, to, pos };
    }
    const from = this.expression(0);
    if (this.is('op', ':')) {
      this.next();
      const to = this.is('bracket', ']') ? undefined : this.expression(0);
      this.expect('bracket', ']');
      return { k: 'slice', x: node, from, to, pos };
    }
    this.expect('bracket', ']');
    const member: Node = { k: 'member', x: node, prop: from, optional, pos };
    return optional ? { k: 'chain', x: member, pos } : member;
  }
}

/** number reads a number token as expr does: hex, octal and binary ints, floats with `.` or `e`, else a decimal int. */
function number(t: Token): Node {
  const text = t.value.replace(/_/g, '');
  const lower = text.toLowerCase();
  const bad = (what: string): never => {
    throw new ExprSyntaxError(`invalid ${what} literal: ${JSON.stringify(t.value)}`, t.pos);
  };
  const int = (v: bigint): Node => (v > INT64_MAX ? bad('integer') : { k: 'int', v, pos: t.pos });
  if (lower.startsWith('0x')) return /^0x[0-9a-f]+$/.test(lower) ? int(BigInt(lower)) : bad('hex');
  if (/[.e]/.test(lower)) {
    const v = Number(lower);
    return Number.isNaN(v) || !Number.isFinite(v) ? bad('float') : { k: 'float', v, pos: t.pos };
  }
  if (lower.startsWith('0b')) return /^0b[01]+$/.test(lower) ? int(BigInt(lower)) : bad('binary');
  if (lower.startsWith('0o')) return /^0o[0-7]+$/.test(lower) ? int(BigInt(lower)) : bad('octal');
  return /^[0-9]+$/.test(lower) ? int(BigInt(lower)) : bad('integer');
}
