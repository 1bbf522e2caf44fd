// expr's optimizer (optimizer/*.go), which Argo runs because expr.Compile optimizes by default. Its
// rewrites are not all invisible: `x && false` folds to false without evaluating x; `filter(a, p)[0]`
// becomes a search that stops at the first match, so a later element that would fail never runs;
// `all(a, p) && all(a, q)` runs p and q element by element; `x in ["a", "b"]` looks x up in a Go map of
// strings, which panics on a number; `sum([a, b])` is `a + b`; `1 % 0` is a compile error. They are
// reproduced here, in expr's order, on the checked tree.

import { same, type Nature, type Node } from './expr-ast.js';
import { ExprTypeError } from './expr-check.js';
import { goPow, int, type Val } from './expr-values.js';

type Visit = (node: Node) => Node;

/** walk rewrites the tree bottom-up, children first, as expr's ast.Walk visits it. */
function walk(node: Node, visit: Visit): Node {
  switch (node.k) {
    case 'unary':
    case 'chain':
      node.x = walk(node.x, visit);
      break;
    case 'binary':
      node.l = walk(node.l, visit);
      node.r = walk(node.r, visit);
      break;
    case 'member':
      node.x = walk(node.x, visit);
      node.prop = walk(node.prop, visit);
      break;
    case 'slice':
      node.x = walk(node.x, visit);
      if (node.from) node.from = walk(node.from, visit);
      if (node.to) node.to = walk(node.to, visit);
      break;
    case 'call':
    case 'builtin':
      node.args = node.args.map((a) => walk(a, visit));
      break;
    case 'predicate':
      node.body = walk(node.body, visit);
      break;
    case 'cond':
      node.c = walk(node.c, visit);
      node.a = walk(node.a, visit);
      node.b = walk(node.b, visit);
      break;
    case 'array':
      node.items = node.items.map((a) => walk(a, visit));
      break;
    case 'map':
      for (const p of node.pairs) (p.key = walk(p.key, visit)), (p.value = walk(p.value, visit));
      break;
  }
  return visit(node);
}

const find = (node: Node, test: (n: Node) => boolean): boolean => {
  let found = false;
  walk(node, (n) => ((found ||= test(n)), n));
  return found;
};

/** optimize applies expr's optimizer passes that can change what a condition evaluates to. */
export function optimize(root: Node): Node {
  root = walk(root, inArray);
  for (let limit = 1000; limit >= 0; limit--) {
    const f = { applied: false };
    root = walk(root, (n) => fold(n, f));
    if (!f.applied) break;
  }
  for (const pass of [filterMap, filterLen, filterLast, filterFirst, predicateCombination, sumArray, sumMap]) root = walk(root, pass);
  return root;
}

const withNature = (n: Node, nature: Nature | undefined): Node => ((n.nature = nature), n);
const isLiteral = (n: Node): n is Node & { k: 'int' | 'float' | 'string' | 'bool' } => n.k === 'int' || n.k === 'float' || n.k === 'string' || n.k === 'bool';

// `x in [1, 2]` with an int x, or `x in ["a", "b"]`: a lookup in a Go map keyed by that type.
const inArray: Visit = (n) => {
  if (n.k !== 'binary' || n.op !== 'in' || n.r.k !== 'array' || n.r.items.length === 0) return n;
  const items = n.r.items;
  const set = n.l.nature?.t === 'int' && items.every((i) => i.k === 'int') ? 'int' : items.every((i) => i.k === 'string') ? 'string' : undefined;
  if (!set) return n;
  const values = items.map((i) => (i as Node & { v: Val }).v);
  return { ...n, r: { k: 'const', v: values, pos: n.r.pos, nature: { t: '[]any' } }, set };
};

function fold(n: Node, f: { applied: boolean }): Node {
  const patch = (m: Node): Node => {
    f.applied = true;
    m.pos = n.pos;
    const t = m.k === 'int' ? 'int' : m.k === 'float' ? 'float64' : m.k === 'bool' ? 'bool' : m.k === 'string' ? 'string' : '[]any';
    return withNature(m, { t });
  };
  const copy = (m: Node): Node => ((f.applied = true), withNature(m, n.nature ?? { t: 'any' }));
  if (n.k === 'unary') {
    const x = n.x;
    if ((n.op === '-' || n.op === '+') && x.k === 'int') return patch({ k: 'int', v: n.op === '-' ? int(-x.v) : x.v, pos: 0 });
    if ((n.op === '-' || n.op === '+') && x.k === 'float') return patch({ k: 'float', v: n.op === '-' ? -x.v : x.v, pos: 0 });
    if ((n.op === '!' || n.op === 'not') && x.k === 'bool') return patch({ k: 'bool', v: !x.v, pos: 0 });
    return n;
  }
  if (n.k === 'array') {
    if (n.items.length === 0 || !n.items.every(isLiteral)) return n;
    return patch({ k: 'const', v: n.items.map((i) => (i as Node & { v: Val }).v), pos: 0 });
  }
  if (n.k === 'builtin' && n.name === 'filter' && n.args.length === 2) {
    const [base, outer] = n.args as [Node, Node];
    if (base.k !== 'builtin' || base.name !== 'filter' || outer.k !== 'predicate') return n;
    const inner = base.args[1] as Node & { k: 'predicate' };
    const both: Node = { k: 'binary', op: '&&', l: inner.body, r: outer.body, pos: outer.pos };
    return copy({ k: 'builtin', name: 'filter', args: [base.args[0] as Node, { k: 'predicate', body: both, pos: outer.pos }], pos: n.pos });
  }
  if (n.k !== 'binary') return n;
  const { l, r, op } = n;
  const num = (x: Node): x is Node & { k: 'int' | 'float' } => x.k === 'int' || x.k === 'float';
  const f64 = (x: Node & { k: 'int' | 'float' }): number => (x.k === 'int' ? Number(x.v) : x.v);
  if (num(l) && num(r) && ['+', '-', '*'].includes(op)) {
    if (l.k === 'int' && r.k === 'int') return patch({ k: 'int', v: int(op === '+' ? l.v + r.v : op === '-' ? l.v - r.v : l.v * r.v), pos: 0 });
    const [a, b] = [f64(l), f64(r)];
    return patch({ k: 'float', v: op === '+' ? a + b : op === '-' ? a - b : a * b, pos: 0 });
  }
  if (num(l) && num(r) && op === '/') return patch({ k: 'float', v: f64(l) / f64(r), pos: 0 });
  if (num(l) && num(r) && (op === '**' || op === '^')) return patch({ k: 'float', v: goPow(f64(l), f64(r)), pos: 0 });
  if (op === '%' && l.k === 'int' && r.k === 'int') {
    if (r.v === 0n) throw new ExprTypeError('integer divide by zero', n.pos);
    return patch({ k: 'int', v: int(l.v % r.v), pos: 0 });
  }
  if (op === '+' && l.k === 'string' && r.k === 'string') return patch({ k: 'string', v: l.v + r.v, pos: 0 });
  if (op === '==' && l.k === r.k && (l.k === 'int' || l.k === 'string' || l.k === 'bool')) {
    return patch({ k: 'bool', v: l.v === (r as typeof l).v, pos: 0 });
  }
  const a = l.k === 'bool' ? l.v : undefined;
  const b = r.k === 'bool' ? r.v : undefined;
  if (op === 'and' || op === '&&') {
    if (a === true) return copy(r);
    if (b === true) return copy(l);
    if (a === false || b === false) return patch({ k: 'bool', v: false, pos: 0 });
  }
  if (op === 'or' || op === '||') {
    if (a === false) return copy(r);
    if (b === false) return copy(l);
    if (a === true || b === true) return patch({ k: 'bool', v: true, pos: 0 });
  }
  return n;
}

const isFilter = (n: Node): n is Node & { k: 'builtin' } => n.k === 'builtin' && n.name === 'filter' && n.args.length === 2;

// map(filter(a, p), q) → one pass that maps what it keeps (unless q uses #index).
const filterMap: Visit = (n) => {
  if (n.k !== 'builtin' || n.name !== 'map' || n.args.length !== 2) return n;
  const [base, q] = n.args as [Node, Node];
  if (find(q, (x) => x.k === 'pointer' && x.name === 'index') || q.k !== 'predicate') return n;
  if (base.k !== 'builtin' || base.name !== 'filter' || base.map) return n;
  return withNature({ k: 'builtin', name: 'filter', args: base.args, map: q.body, pos: n.pos }, n.nature);
};

// len(filter(a, p)) → count(a, p): what the filter would have mapped is never computed.
const filterLen: Visit = (n) => {
  if (n.k !== 'builtin' || n.name !== 'len' || n.args.length !== 1 || !isFilter(n.args[0] as Node)) return n;
  return withNature({ k: 'builtin', name: 'count', args: (n.args[0] as Node & { k: 'builtin' }).args, pos: n.pos }, n.nature);
};

// filter(a, p)[-1] → the last match, searched from the end; none is an index error, as before.
const filterLast: Visit = (n) => firstOrLast(n, -1n, 'findLast');
// filter(a, p)[0] → the first match: elements after it are never looked at.
const filterFirst: Visit = (n) => firstOrLast(n, 0n, 'find');

function firstOrLast(n: Node, at: bigint, name: string): Node {
  if (n.k !== 'member' || n.optional || n.prop.k !== 'int' || n.prop.v !== at || !isFilter(n.x)) return n;
  return withNature({ k: 'builtin', name, args: n.x.args, map: n.x.map, throws: true, pos: n.pos }, n.nature);
}

// all(x, p) && all(x, q) → all(x, p && q); any with ||; none(x, p) && none(x, q) → none(x, p || q).
const predicateCombination: Visit = (n) => {
  if (n.k !== 'binary' || !['and', 'or', '&&', '||'].includes(n.op)) return n;
  const { l, r } = n;
  if (l.k !== 'builtin' || r.k !== 'builtin' || l.name !== r.name) return n;
  const op =
    l.name === 'all' && (n.op === 'and' || n.op === '&&') ? n.op
    : l.name === 'any' && (n.op === 'or' || n.op === '||') ? n.op
    : l.name === 'none' && n.op === 'and' ? 'or'
    : l.name === 'none' && n.op === '&&' ? '||'
    : undefined;
  if (!op) return n;
  const [a, b] = [l.args[0] as Node, r.args[0] as Node];
  if ((a.nature?.t ?? 'any') !== (b.nature?.t ?? 'any')) return n;
  // expr compares the two collections by their printed forms, and prints a folded array by
  // json.Marshal, which panics on NaN and ±Inf: Argo's compile panics. An error here.
  if ([a, b].some((x) => find(x, (y) => y.k === 'const' && y.v.some((v) => typeof v === 'number' && !Number.isFinite(v))))) {
    throw new ExprTypeError('json: unsupported value (expr panics printing an array of NaN or ±Inf)', n.pos);
  }
  if (!same(a, b)) return n;
  const body = predicateCombination({ k: 'binary', op, l: (l.args[1] as Node & { k: 'predicate' }).body, r: (r.args[1] as Node & { k: 'predicate' }).body, pos: n.pos });
  return withNature({ k: 'builtin', name: l.name, args: [l.args[0] as Node, { k: 'predicate', body, pos: n.pos }], pos: n.pos }, n.nature);
};

// sum([a, b, c]) of an array literal that did not fold → a + (b + c).
const sumArray: Visit = (n) => {
  if (n.k !== 'builtin' || n.name !== 'sum' || n.args.length !== 1) return n;
  const arr = n.args[0] as Node;
  if (arr.k !== 'array' || arr.items.length < 2) return n;
  const chain = (items: Node[]): Node =>
    items.length === 2 ? { k: 'binary', op: '+', l: items[0] as Node, r: items[1] as Node, pos: n.pos } : { k: 'binary', op: '+', l: items[0] as Node, r: chain(items.slice(1)), pos: n.pos };
  return withNature(chain(arr.items), n.nature);
};

// sum(map(a, p)) → sum(a, p).
const sumMap: Visit = (n) => {
  if (n.k !== 'builtin' || n.name !== 'sum' || n.args.length !== 1) return n;
  const m = n.args[0] as Node;
  if (m.k !== 'builtin' || m.name !== 'map' || m.args.length !== 2) return n;
  return withNature({ k: 'builtin', name: 'sum', args: m.args, pos: n.pos }, n.nature);
};
