// Argo Rollouts' condition language: a successCondition or failureCondition judged as Argo v1.10.1
// judges it (utils/evaluate/evaluate.go EvalCondition), which compiles it with expr-lang v1.17.7 against
// an environment of `result` and Argo's functions, and runs it. We interpret the same language
// ourselves (there is no expr for JavaScript), in four steps that follow expr's own:
//   expr-lex.ts / expr-parse.ts  the syntax, with expr's precedences and quirks;
//   expr-check.ts                expr's type checker, run against the type of the result at hand, since
//                                Argo's expr.Env(env) makes some conditions compile errors (`result == "x"`
//                                on a float64 result, `result.foo` on a []float64);
//   expr-optimize.ts             expr's optimizer rewrites that change outcomes (`x && false` never looks
//                                at x, `filter(a, p)[0]` stops at the first match, ...);
//   expr-eval.ts / expr-values.ts  the VM's steps and Go's values: int vs float64, wrapping ints,
//                                NaN unequal to itself, byte-wise strings, panics as errors.
//
// Supported: literals (ints in decimal/hex/octal/binary, floats, strings with escapes and backticks,
// true/false/nil, arrays, maps), comments, == != < <= > >=, + - * / % ** ^, && || ! and or not, unary
// - and +, `in` / `not in`, contains / startsWith / endsWith (and `not` before them), c ? a : b and c ?: b,
// ??, a.b a?.b a[i] a?.[i] a["b"], slices a[i:j], builtins len abs ceil floor round int float string
// min max sum mean median, predicates all any none one filter map count (with `#`, `#index` in map, the
// `.field` shorthand, braces or none), and Argo's asInt asFloat isNaN isInf isNil default.
//
// Refused at compile time, each with a message that names it: `matches` (Go's RE2 regular expressions
// are not JavaScript's: the same pattern can match differently), the range `..`, the pipe `|`, `let`
// and `;` sequences, `if {} else {}`, `$env`, `::`, method calls `x.f()` (no value of a result has Go
// methods), every other builtin (string, date, time, JSON, base64, bit and array helpers: none is needed
// to judge a number, and each would be a Go library to imitate), the predicates find/findIndex/findLast/
// findLastIndex/groupBy/sortBy/reduce, and a function named without being called. A refused condition
// is an Error measurement here, where Argo might have judged it.
//
// Where Argo has no verdict we give an error: expr's optimizer panics when it prints an array folded
// from NaN or ±Inf literals to compare two all()s, and Argo does not recover from it.
//
// Known gaps, beyond what a condition on a metric meets: an int64 from asInt() and an int of equal
// value inside maps compared by reflect.DeepEqual (Go: unequal; here: equal), slices that share a Go
// backing array compared by DeepEqual (Go: equal even holding NaN), a byte of a string negated (Go
// wraps it as a uint8), and a lone UTF-16 surrogate in a result's JSON (Go decodes it as U+FFFD).

import { ExprTypeError, check, natureOf } from './expr-check.js';
import type { Node } from './expr-ast.js';
import { evaluate } from './expr-eval.js';
import { ExprSyntaxError } from './expr-lex.js';
import { optimize } from './expr-optimize.js';
import { BUILTINS, ExprRefusal, parse } from './expr-parse.js';
import { ENV_FUNCS } from './expr-check.js';
import { GoPanic, float64s, typeName, type Val } from './expr-values.js';

/** ArgoValue is what a provider hands the conditions: a float64, a []float64, decoded JSON, or nil. */
export type ArgoValue = null | undefined | boolean | number | string | readonly ArgoValue[] | { readonly [key: string]: ArgoValue };

/**
 * ResultKind is the Go type of the result: `float` (a Prometheus scalar), `floats` (a Prometheus
 * vector, []float64), `json` (the web provider's decoded JSON: []any, map[string]any, float64, ...), `nil`.
 */
export type ResultKind = 'float' | 'floats' | 'json' | 'nil';

type Checked = { ok: true; tree: Node } | { ok: false; error: string };

/** Condition is a parsed condition; its checked forms are kept per type of result, as Argo compiles per run. */
export interface Condition {
  readonly source: string;
  readonly tree: Node;
  readonly checked: Map<string, Checked>;
}

/** SUPPORTED_BUILTINS are the builtins we evaluate; the rest of expr's are refused. */
export const SUPPORTED_BUILTINS = new Set('len abs ceil floor round int float string min max sum mean median all any none one filter map count'.split(' '));

const at = (message: string, pos: number): string => `${message} (column ${pos + 1})`;

/** compileCondition parses a condition once; a syntax error or a refused construct says where. */
export function compileCondition(src: string): { ok: true; program: Condition } | { ok: false; error: string } {
  try {
    const tree = parse(src);
    refuseUnsupported(tree);
    return { ok: true, program: { source: src, tree, checked: new Map() } };
  } catch (e) {
    if (e instanceof ExprSyntaxError || e instanceof ExprRefusal) return { ok: false, error: at(e.message, e.pos) };
    throw e;
  }
}

/** evalCondition runs a condition as Argo's EvalCondition: the type check against this result, then the value, which must be a bool. */
export function evalCondition(program: Condition, result: ArgoValue, kind?: ResultKind): { ok: true; value: boolean } | { ok: false; error: string } {
  const value = toVal(result, kind ?? kindOf(result));
  const nature = natureOf(value);
  const shape = JSON.stringify(nature);
  let checked = program.checked.get(shape);
  if (!checked) {
    checked = checkFor(program.tree, value);
    program.checked.set(shape, checked);
  }
  if (!checked.ok) return checked;
  try {
    const out = evaluate(checked.tree, value);
    if (typeof out === 'boolean') return { ok: true, value: out };
    return { ok: false, error: `expected bool, but got ${typeName(out)}` };
  } catch (e) {
    if (e instanceof GoPanic) return { ok: false, error: e.message };
    if (e instanceof RangeError) return { ok: false, error: `the condition is too deep to evaluate: ${e.message}` };
    throw e;
  }
}

function checkFor(tree: Node, value: Val): Checked {
  const copy = structuredClone(tree);
  try {
    check(copy, natureOf(value));
    return { ok: true, tree: optimize(copy) };
  } catch (e) {
    if (e instanceof ExprTypeError) return { ok: false, error: at(e.message, e.pos) };
    throw e;
  }
}

/** kindOf guesses the Go type of a value given bare: a number a float64, an array of numbers a []float64. */
function kindOf(v: ArgoValue): ResultKind {
  if (v === null || v === undefined) return 'nil';
  if (typeof v === 'number') return 'float';
  if (Array.isArray(v) && v.every((x) => typeof x === 'number')) return 'floats';
  return 'json';
}

function toVal(v: ArgoValue, kind: ResultKind): Val {
  if (kind === 'floats' && Array.isArray(v) && v.every((x) => typeof x === 'number')) return float64s([...(v as number[])]);
  return fromJson(v);
}

function fromJson(v: ArgoValue): Val {
  if (v === null || v === undefined) return null;
  if (Array.isArray(v)) return v.map(fromJson);
  if (typeof v === 'object') return new Map(Object.entries(v).map(([k, x]) => [k, fromJson(x)]));
  return v as Val;
}

// Every builtin we do not evaluate, and any function named without a call, is refused by name.
function refuseUnsupported(node: Node): void {
  const visit = (n: Node): void => {
    if (n.k === 'builtin' && !SUPPORTED_BUILTINS.has(n.name)) throw new ExprRefusal(`the function \`${n.name}\` is not supported`, n.pos);
    if (n.k === 'ident' && (BUILTINS.has(n.name) || n.name in ENV_FUNCS)) throw new ExprRefusal(`\`${n.name}\` named without a call is not supported`, n.pos);
    for (const child of children(n)) visit(child);
  };
  visit(node);
}

function children(n: Node): Node[] {
  switch (n.k) {
    case 'unary':
    case 'chain':
      return [n.x];
    case 'binary':
      return [n.l, n.r];
    case 'member':
      return [n.x, n.prop];
    case 'slice':
      return [n.x, ...(n.from ? [n.from] : []), ...(n.to ? [n.to] : [])];
    case 'call':
    case 'builtin':
      return n.args;
    case 'predicate':
      return [n.body];
    case 'cond':
      return [n.c, n.a, n.b];
    case 'array':
      return n.items;
    case 'map':
      return n.pairs.flatMap((p) => [p.key, p.value]);
    default:
      return [];
  }
}
