// expr's type checker (checker/checker.go), which Argo runs at compile time because it compiles with
// expr.Env(env): the checker knows `result` as the Go type the provider handed over (float64, []float64,
// map[string]any, ...), so `result == "x"` on a float64 or `result.foo` on a []float64 are errors before
// anything runs, while an element of a map[string]any is `any` and only checked when it runs. It also
// rewrites integer literals passed to a float64 parameter (isNaN(1)) into floats, as expr does.

import type { GoType, Nature, Node } from './expr-ast.js';
import type { Val } from './expr-values.js';
import { isFloat64s } from './expr-values.js';

/** ExprTypeError is a condition expr's checker refuses; `pos` is the node it names. */
export class ExprTypeError extends Error {
  constructor(
    message: string,
    readonly pos: number,
  ) {
    super(message);
  }
}

const T = (t: GoType, more: Partial<Nature> = {}): Nature => ({ t, ...more });
const UNKNOWN: Nature = {};
const NIL: Nature = { nil: true };
const ANY = T('any');
const BOOL = T('bool');
const INT = T('int');
const FLOAT = T('float64');
const STRING = T('string');
const fn = (ins: Nature[], out: Nature): Nature => T('func', { ins, outs: [out] });

/** ENV_FUNCS are Argo's functions in the environment, with their Go signatures. */
export const ENV_FUNCS: Record<string, Nature> = {
  asInt: fn([ANY], T('int64')),
  asFloat: fn([ANY], FLOAT),
  isNaN: fn([FLOAT], BOOL),
  isInf: fn([FLOAT], BOOL),
  isNil: fn([ANY], BOOL),
  default: fn([ANY, ANY], ANY),
};

/** natureOf is what the checker knows of `result` from the value the provider handed over. */
export function natureOf(v: Val): Nature {
  if (v === null) return NIL;
  if (typeof v === 'boolean') return BOOL;
  if (typeof v === 'number') return FLOAT;
  if (typeof v === 'string') return STRING;
  if (Array.isArray(v)) return T(isFloat64s(v) ? '[]float64' : '[]any');
  if (v instanceof Map) return T('map');
  return INT;
}

/** isUnknown: no type at all, or interface{}. */
export const isUnknown = (n: Nature): boolean => (n.t === undefined && !n.nil) || n.t === 'any';
const kindOf = (n: Nature): string => (n.t === undefined ? 'invalid' : n.t === 'any' ? 'interface' : n.t.startsWith('[]') ? 'slice' : n.t);
const isInteger = (n: Nature): boolean => n.t === 'int' || n.t === 'int64';
const isNumber = (n: Nature): boolean => isInteger(n) || n.t === 'float64';
const isArray = (n: Nature): boolean => kindOf(n) === 'slice';
const show = (n: Nature): string => (n.nil ? 'nil' : n.t === undefined ? 'unknown' : n.t === 'any' ? 'interface {}' : n.t === 'map' ? 'map[string]interface {}' : n.t === '[]any' ? '[]interface {}' : n.t);

/** elem is the nature of an array's or a map's elements. */
export function elem(n: Nature): Nature {
  if (isArray(n)) return n.ref ?? (n.t === '[]float64' ? FLOAT : ANY);
  if (n.t === 'map') return ANY;
  return UNKNOWN;
}

function assignable(n: Nature, to: Nature): boolean {
  if (n.nil && ['interface', 'func', 'map', 'slice'].includes(kindOf(to))) return true;
  if (n.t === undefined || to.t === undefined) return false;
  if (kindOf(n) !== kindOf(to) && kindOf(to) !== 'interface') return false;
  if (to.t === 'any') return true;
  if (n.t === 'func') return JSON.stringify([n.ins, n.outs]) === JSON.stringify([to.ins, to.outs]);
  return n.t === to.t;
}

const comparable = (a: Nature, b: Nature): boolean =>
  isUnknown(a) || isUnknown(b) || !!a.nil || !!b.nil || (isNumber(a) && isNumber(b)) || (isArray(a) && isArray(b)) || assignable(a, b);

type Check = (n: Nature) => boolean;
const isBool: Check = (n) => n.t === 'bool';
const isString: Check = (n) => n.t === 'string';
/** maybe is expr's MaybeCompatible: one side unknown and the other passes a check, or both unknown. */
const maybe = (a: Nature, b: Nature, ...cs: Check[]): boolean =>
  (isUnknown(a) && isUnknown(b)) || (isUnknown(a) && cs.some((c) => c(b))) || (isUnknown(b) && cs.some((c) => c(a)));

const NUMERIC_KINDS = new Set(['int', 'int64', 'float64']);
/** argType is what a builtin's Validate sees: interface{} for an unknown argument, no type for nil. */
const argType = (n: Nature): Nature => (isUnknown(n) ? ANY : n.nil ? UNKNOWN : { t: n.t });

/** check type-checks the tree in place against `result`'s nature, as expr's checker does. */
export function check(root: Node, result: Nature): void {
  new Checker(result).visit(root);
}

class Checker {
  private scopes: { collection: Nature; index: boolean }[] = [];

  constructor(private readonly result: Nature) {}

  private fail(node: Node, message: string): never {
    throw new ExprTypeError(message, node.pos);
  }

  visit(node: Node): Nature {
    const n = this.nature(node);
    node.nature = n;
    return n;
  }

  private nature(node: Node): Nature {
    switch (node.k) {
      case 'nil':
        return NIL;
      case 'bool':
        return BOOL;
      case 'int':
        return INT;
      case 'float':
        return FLOAT;
      case 'string':
        return STRING;
      case 'const':
        return T('[]any');
      case 'ident':
        if (node.name === 'result') return this.result;
        if (node.name in ENV_FUNCS) return ENV_FUNCS[node.name] as Nature;
        return this.fail(node, `unknown name ${node.name}`);
      case 'unary': {
        const x = this.visit(node.x);
        if ((node.op === '!' || node.op === 'not') && (isBool(x) || isUnknown(x))) return BOOL;
        if ((node.op === '-' || node.op === '+') && isNumber(x)) return x;
        if ((node.op === '-' || node.op === '+') && isUnknown(x)) return UNKNOWN;
        return this.fail(node, `invalid operation: ${node.op} (mismatched type ${show(x)})`);
      }
      case 'binary':
        return this.binary(node, this.visit(node.l), this.visit(node.r));
      case 'chain':
        return this.visit(node.x);
      case 'member': {
        const base = this.visit(node.x);
        const prop = this.visit(node.prop);
        if (isUnknown(base)) return UNKNOWN;
        if (node.prop.k === 'string' && base.nil) return this.fail(node, `type nil has no field ${node.prop.v}`);
        if (base.t === 'map') {
          if (!assignable(prop, STRING) && !isUnknown(prop)) return this.fail(node.prop, `cannot use ${show(prop)} to get an element from ${show(base)}`);
          return ANY;
        }
        if (isArray(base)) {
          if (!isInteger(prop) && !isUnknown(prop)) return this.fail(node.prop, `array elements can only be selected using an integer (got ${show(prop)})`);
          return elem(base);
        }
        if (node.prop.k === 'string') return this.fail(node, `type ${show(base)} has no field ${node.prop.v}`);
        return this.fail(node, `type ${show(base)}[${show(prop)}] is undefined`);
      }
      case 'slice': {
        const base = this.visit(node.x);
        // expr returns before it looks at the bounds of an unknown: they are only checked when they run.
        if (isUnknown(base)) return UNKNOWN;
        if (base.t !== 'string' && !isArray(base)) return this.fail(node, `cannot slice ${show(base)}`);
        for (const bound of [node.from, node.to]) {
          if (!bound) continue;
          const b = this.visit(bound);
          if (!isInteger(b) && !isUnknown(b)) return this.fail(bound, `non-integer slice index ${show(b)}`);
        }
        return base;
      }
      case 'call': {
        const callee = node.name === 'result' ? this.result : ENV_FUNCS[node.name];
        if (!callee) return this.fail(node, `unknown name ${node.name}`);
        if (callee.nil) return this.fail(node, `${node.name} is nil; cannot call nil as function`);
        if (callee.t !== 'func') return this.fail(node, `${show(callee)} is not callable`);
        return this.callArgs(node.name, callee, node.args, node);
      }
      case 'builtin':
        return this.builtin(node);
      case 'predicate': {
        const body = this.visit(node.body);
        const outs = isUnknown(body) ? [ANY] : body.nil ? [] : [{ t: body.t, ins: body.ins, outs: body.outs }];
        return T('func', { ins: [ANY], outs, ref: body });
      }
      case 'pointer': {
        const scope = this.scopes[this.scopes.length - 1];
        if (!scope) return this.fail(node, 'cannot use pointer accessor outside predicate');
        if (node.name === '') {
          if (isUnknown(scope.collection)) return UNKNOWN;
          if (isArray(scope.collection)) return elem(scope.collection);
          return this.fail(node, `cannot use ${show(scope.collection)} as array`);
        }
        if (node.name === 'index' && scope.index) return INT;
        return this.fail(node, `unknown pointer #${node.name}`);
      }
      case 'cond': {
        const c = this.visit(node.c);
        if (!isBool(c) && !isUnknown(c)) return this.fail(node.c, `non-bool expression (type ${show(c)}) used as condition`);
        const a = this.visit(node.a);
        const b = this.visit(node.b);
        if (a.nil && !b.nil) return b;
        if (!a.nil && b.nil) return a;
        if (a.nil && b.nil) return NIL;
        if (assignable(a, b)) {
          if (isArray(a) && isArray(b) && (!assignable(elem(a), elem(b)) || !assignable(elem(b), elem(a)))) return T('[]any');
          return a;
        }
        return UNKNOWN;
      }
      case 'array': {
        // All elements of one kind: an array that knows its element (the last one's nature).
        let prev = UNKNOWN;
        let same = true;
        node.items.forEach((item, i) => {
          const cur = this.visit(item);
          if (i > 0 && kindOf(cur) !== kindOf(prev)) same = false;
          prev = cur;
        });
        return same ? T('[]any', { ref: prev }) : T('[]any');
      }
      case 'map':
        for (const p of node.pairs) this.visit(p.key), this.visit(p.value);
        return T('map');
    }
  }

  private binary(node: Node & { k: 'binary' }, l: Nature, r: Nature): Nature {
    const op = node.op;
    const promote = (): Nature => (l.t === 'float64' || r.t === 'float64' ? FLOAT : INT);
    switch (op) {
      case '==':
      case '!=':
        if (comparable(l, r)) return BOOL;
        break;
      case 'or':
      case '||':
      case 'and':
      case '&&':
        if ((isBool(l) && isBool(r)) || maybe(l, r, isBool)) return BOOL;
        break;
      case '<':
      case '>':
      case '<=':
      case '>=':
        if ((isNumber(l) && isNumber(r)) || (isString(l) && isString(r)) || maybe(l, r, isNumber, isString)) return BOOL;
        break;
      case '-':
      case '*':
        if (isNumber(l) && isNumber(r)) return promote();
        if (maybe(l, r, isNumber)) return UNKNOWN;
        break;
      case '+':
        if (isNumber(l) && isNumber(r)) return promote();
        if (isString(l) && isString(r)) return STRING;
        if (maybe(l, r, isNumber, isString)) return UNKNOWN;
        break;
      case '/':
      case '**':
      case '^':
        if ((isNumber(l) && isNumber(r)) || maybe(l, r, isNumber)) return FLOAT;
        break;
      case '%':
        if ((isInteger(l) && isInteger(r)) || maybe(l, r, isInteger)) return INT;
        break;
      case 'in':
        if (r.t === 'map') {
          if (!isUnknown(l) && !assignable(l, STRING)) return this.fail(node, `cannot use ${show(l)} as type string in map key`);
          return BOOL;
        }
        if (isArray(r)) {
          if (!comparable(l, elem(r))) return this.fail(node, `cannot use ${show(l)} as type ${show(elem(r))} in array`);
          return BOOL;
        }
        if (isUnknown(l) && isString(r)) return BOOL;
        if (isUnknown(r)) return BOOL;
        break;
      case 'contains':
      case 'startsWith':
      case 'endsWith':
        if ((isString(l) && isString(r)) || maybe(l, r, isString)) return BOOL;
        break;
      case '??':
        if (l.nil && !r.nil) return r;
        if (!l.nil && r.nil) return l;
        if (l.nil && r.nil) return NIL;
        return assignable(r, l) ? l : UNKNOWN;
    }
    return this.fail(node, `invalid operation: ${op} (mismatched types ${show(l)} and ${show(r)})`);
  }

  // checkArguments: the count, then each argument assignable to its parameter; an integer given for a
  // float64 parameter passes, its literals made floats (a computed int still fails when it runs).
  private callArgs(name: string, f: Nature, args: Node[], node: Node): Nature {
    const ins = f.ins ?? [];
    if (args.length !== ins.length) return this.fail(node, `${args.length > ins.length ? 'too many' : 'not enough'} arguments to call ${name}`);
    args.forEach((arg, i) => {
      const a = this.visit(arg);
      const want = ins[i] as Nature;
      if (want.t === 'float64' && isInteger(a)) {
        args[i] = intsToFloats(arg);
        return;
      }
      if (a.nil) {
        if (kindOf(want) === 'interface') return;
        this.fail(arg, `cannot use nil as argument (type ${show(want)}) to call ${name}`);
      }
      if (!assignable(a, want) && !isUnknown(a)) this.fail(arg, `cannot use ${show(a)} as argument (type ${show(want)}) to call ${name}`);
    });
    return (f.outs ?? [])[0] ?? UNKNOWN;
  }

  private collection(node: Node & { k: 'builtin' }): Nature {
    const coll = this.visit(node.args[0] as Node);
    if (!isArray(coll) && !isUnknown(coll)) return this.fail(node.args[0] as Node, `builtin ${node.name} takes only array (got ${show(coll)})`);
    return coll;
  }

  private predicate(node: Node & { k: 'builtin' }, coll: Nature, index = false): Nature {
    this.scopes.push({ collection: coll, index });
    const p = this.visit(node.args[1] as Node);
    this.scopes.pop();
    if (p.outs?.length !== 1) return this.fail(node.args[1] as Node, 'predicate should has one input and one output param');
    return p;
  }

  private boolPredicate(node: Node & { k: 'builtin' }, coll: Nature): void {
    const out = (this.predicate(node, coll).outs as Nature[])[0] as Nature;
    if (!isBool(out) && !isUnknown(out)) this.fail(node.args[1] as Node, `predicate should return boolean (got ${show(out)})`);
  }

  private builtin(node: Node & { k: 'builtin' }): Nature {
    const { name, args } = node;
    switch (name) {
      case 'all':
      case 'none':
      case 'any':
      case 'one':
        this.boolPredicate(node, this.collection(node));
        return BOOL;
      case 'filter': {
        const coll = this.collection(node);
        this.boolPredicate(node, coll);
        return isUnknown(coll) ? T('[]any') : T('[]any', { ref: elem(coll) });
      }
      case 'map': {
        const p = this.predicate(node, this.collection(node), true);
        return T('[]any', { ref: p.ref });
      }
      case 'count': {
        const coll = this.collection(node);
        if (args.length === 2) this.boolPredicate(node, coll);
        return INT;
      }
      case 'sum': {
        const coll = this.collection(node);
        if (args.length === 2) return (this.predicate(node, coll).outs as Nature[])[0] as Nature;
        return isUnknown(coll) ? UNKNOWN : elem(coll);
      }
      case 'string':
        return this.callArgs(name, fn([ANY], STRING), args, node);
    }
    const types = args.map((a) => argType(this.visit(a)));
    const invalid = (t: Nature): never => this.fail(node, `invalid argument for ${name} (type ${show(t)})`);
    if (['max', 'min', 'mean', 'median'].includes(name)) {
      if (types.length === 0) return this.fail(node, `not enough arguments to call ${name}`);
      for (const t of types) {
        if (kindOf(t) === 'interface' || kindOf(t) === 'slice') return ANY;
        if (!NUMERIC_KINDS.has(kindOf(t))) invalid(t);
      }
      return { t: (types[0] as Nature).t };
    }
    if (types.length !== 1) return this.fail(node, `invalid number of arguments (expected 1, got ${types.length})`);
    const t = types[0] as Nature;
    const k = kindOf(t);
    switch (name) {
      case 'len':
        return ['slice', 'map', 'string', 'interface'].includes(k) ? INT : invalid(t);
      case 'abs':
        return NUMERIC_KINDS.has(k) || k === 'interface' ? { t: t.t } : invalid(t);
      case 'ceil':
      case 'floor':
      case 'round':
        return NUMERIC_KINDS.has(k) || k === 'interface' ? FLOAT : invalid(t);
      case 'int':
      case 'float':
        return NUMERIC_KINDS.has(k) || k === 'interface' || k === 'string' ? (name === 'int' ? INT : FLOAT) : invalid(t);
    }
    return this.fail(node, `unknown builtin ${name}`);
  }
}

/** intsToFloats is expr's traverseAndReplaceIntegerNodesWithFloatNodes: through unary and + - * only. */
function intsToFloats(node: Node): Node {
  if (node.k === 'int') return { k: 'float', v: Number(node.v), pos: node.pos, nature: FLOAT };
  if (node.k === 'unary') node.x = intsToFloats(node.x);
  if (node.k === 'binary' && ['+', '-', '*'].includes(node.op)) {
    node.l = intsToFloats(node.l);
    node.r = intsToFloats(node.r);
  }
  return node;
}
