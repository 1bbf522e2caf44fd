// The evaluation of a checked, optimized condition, step for step as expr's VM runs its bytecode
// (vm/vm.go, compiler/compiler.go): `&&` checks only its left side is a bool and hands back the right
// side as it is; `a?.b` ends the whole chain on a nil; an `==` of two ints or two strings (by static type)
// asserts them; predicates fetch `#` only when it is used. The builtins and Argo's functions themselves
// are in expr-builtins.ts.

import type { Node } from './expr-ast.js';
import { argoFunction, builtinValue } from './expr-builtins.js';
import {
  GoPanic, arith, goBytes, compare, divide, equal, fetch, goPow, length, modulo, negate, slice, toFloat, typeName, within,
  type Val,
} from './expr-values.js';

const panic = (message: string): never => {
  throw new GoPanic(message);
};

// Thrown by `?.` on a nil, caught by the chain around it: the chain's value is nil.
const CHAIN_NIL = Symbol('chain nil');

/** assertBool is Go's v.(bool) where the VM jumps on a condition. */
function assertBool(v: Val): boolean {
  return typeof v === 'boolean' ? v : panic(`interface conversion: interface {} is ${typeName(v)}, not bool`);
}

interface Scope {
  coll: Val;
  len: number;
  index: number;
}

/** evaluate runs a checked tree against `result`; a GoPanic is the error Argo would report. */
export function evaluate(root: Node, result: Val): Val {
  const vm = new Machine(result);
  vm.run(root);
  return vm.stack.length > 0 ? vm.pop() : null;
}

// The tree is run as expr compiles it to bytecode, on an operand stack, and for one reason: a search
// from the end (`filter(a, p)[-1]`, findLast) leaves its loop's `true` on the stack each round, so an
// operand pushed before it is not the one the next operation takes (in Argo, `0.5 < filter(a, p)[-1]`
// compares a bool). With a stack, that falls out as it does in the VM.
class Machine {
  readonly stack: Val[] = [];
  private readonly scopes: Scope[] = [];

  constructor(private readonly result: Val) {}

  push(v: Val): void {
    this.stack.push(v);
  }

  pop(): Val {
    if (this.stack.length === 0) panic('stack underflow');
    return this.stack.pop() as Val;
  }

  private current(): Val {
    if (this.stack.length === 0) panic('stack underflow');
    return this.stack[this.stack.length - 1] as Val;
  }

  // Operands are popped last first: pops(2) is [a, b] for `a op b`.
  private pops(n: number): Val[] {
    const out: Val[] = new Array(n);
    for (let i = n - 1; i >= 0; i--) out[i] = this.pop();
    return out;
  }

  run(node: Node): void {
    switch (node.k) {
      case 'nil':
        return this.push(null);
      case 'bool':
      case 'int':
      case 'float':
      case 'string':
        return this.push(node.v);
      case 'const':
        return this.push([...node.v]);
      case 'ident':
        // Only `result` reaches here checked; an unchecked name (a slice bound of an unknown) is nil.
        return this.push(node.name === 'result' ? this.result : null);
      case 'unary': {
        this.run(node.x);
        const x = this.pop();
        return this.push(node.op === '-' ? negate(x) : node.op === '+' ? x : !assertBool(x));
      }
      case 'binary':
        return this.binary(node);
      case 'chain':
        try {
          return this.run(node.x);
        } catch (e) {
          if (e !== CHAIN_NIL) throw e;
          // The jump lands at the chain's end with the nil on the stack, and the chain's value is nil.
          this.pop();
          return this.push(null);
        }
      case 'member': {
        this.run(node.x);
        if (node.optional && this.current() === null) throw CHAIN_NIL;
        this.run(node.prop);
        const [base, prop] = this.pops(2);
        return this.push(fetch(base as Val, prop as Val));
      }
      case 'slice': {
        this.run(node.x);
        if (node.to) this.run(node.to);
        else this.push(length(this.current()));
        if (node.from) this.run(node.from);
        else this.push(0n);
        const [base, to, from] = this.pops(3);
        return this.push(slice(base as Val, from as Val, to as Val));
      }
      case 'call':
        for (const a of node.args) this.run(a);
        return this.push(argoFunction(node.name, this.pops(node.args.length), this.result));
      case 'builtin':
        return this.builtin(node);
      case 'predicate':
        return this.run(node.body);
      case 'pointer': {
        const scope = this.scopes[this.scopes.length - 1] as Scope;
        return this.push(node.name === 'index' ? BigInt(scope.index) : element(scope));
      }
      case 'cond':
        this.run(node.c);
        if (assertBool(this.current())) {
          this.pop();
          return this.run(node.a);
        }
        this.pop();
        return this.run(node.b);
      case 'array':
        for (const i of node.items) this.run(i);
        return this.push(this.pops(node.items.length));
      case 'map': {
        for (const p of node.pairs) this.run(p.key), this.run(p.value);
        // The VM pops the pairs last to first, so of a repeated key the first one stays.
        const m = new Map<string, Val>();
        for (let i = node.pairs.length - 1; i >= 0; i--) {
          const v = this.pop();
          const k = this.pop();
          if (typeof k !== 'string') return panic(`interface conversion: interface {} is ${typeName(k)}, not string`);
          m.set(k, v);
        }
        return this.push(m);
      }
    }
  }

  private binary(node: Node & { k: 'binary' }): void {
    const { op } = node;
    // The short-circuit operators jump on the left value where it lies, and pop it only to go on.
    if (op === '&&' || op === 'and' || op === '||' || op === 'or' || op === '??') {
      this.run(node.l);
      const l = this.current();
      const stop = op === '??' ? l !== null : assertBool(l) === (op === '||' || op === 'or');
      if (stop) return;
      this.pop();
      return this.run(node.r);
    }
    this.run(node.l);
    this.run(node.r);
    const [l, r] = this.pops(2) as [Val, Val];
    this.push(this.operate(node, l, r));
  }

  private operate(node: Node & { k: 'binary' }, l: Val, r: Val): Val {
    const { op } = node;
    switch (op) {
      case '==':
      case '!=': {
        // Two operands the checker knows as int (or as string) are compared by a Go type assertion.
        for (const t of ['int', 'string'] as const) {
          if (node.l.nature?.t === t && node.r.nature?.t === t) {
            for (const v of [l, r]) if (typeof v !== (t === 'int' ? 'bigint' : 'string')) panic(`interface conversion: interface {} is ${typeName(v)}, not ${t}`);
          }
        }
        return equal(l, r) === (op === '==');
      }
      case '<':
      case '>':
      case '<=':
      case '>=':
        return compare(op, l, r);
      case '+':
      case '-':
      case '*':
        return arith(op, l, r);
      case '/':
        return divide(l, r);
      case '%':
        return modulo(l, r);
      case '**':
      case '^':
        return goPow(toFloat(l), toFloat(r));
      case 'in':
        if (node.set) {
          // A lookup in Go map[int]struct{} or map[string]struct{}: nil is the zero key, another type panics.
          const key = l === null ? (node.set === 'int' ? 0n : '') : l;
          if (typeof key !== (node.set === 'int' ? 'bigint' : 'string')) {
            return panic(`reflect.Value.MapIndex: value of type ${typeName(l)} is not assignable to type ${node.set}`);
          }
          return (r as Val[]).includes(key);
        }
        return within(l, r);
      case 'contains':
      case 'startsWith':
      case 'endsWith': {
        if (l === null || r === null) return false;
        if (typeof l !== 'string' || typeof r !== 'string') return panic(`interface conversion: interface {} is ${typeName(typeof l !== 'string' ? l : r)}, not string`);
        // By bytes, as Go's strings package: a cut half of a character is found in the whole one.
        const [x, y] = [goBytes(l), goBytes(r)];
        if (op === 'contains') return x.includes(y);
        if (op === 'startsWith') return x.subarray(0, y.length).equals(y);
        return y.length <= x.length && x.subarray(x.length - y.length).equals(y);
      }
    }
    return panic(`unknown operator (${op})`);
  }

  private builtin(node: Node & { k: 'builtin' }): void {
    const { name, args } = node;
    if (['all', 'none', 'any', 'one', 'filter', 'map', 'count', 'sum', 'find', 'findLast'].includes(name)) return this.loop(node);
    for (const a of args) this.run(a);
    const vals = this.pops(args.length);
    this.push(builtinValue(name, vals));
  }

  // The predicate builtins as their bytecode loops: OpBegin takes the collection's length (a nil or a
  // number panics there), `#` is fetched only when used, and each step leaves on the stack what it does.
  private loop(node: Node & { k: 'builtin' }): void {
    this.run(node.args[0] as Node);
    const coll = this.pop();
    const len = Array.isArray(coll) ? coll.length : coll instanceof Map ? coll.size : typeof coll === 'string' ? goBytes(coll).length : panic(`reflect: call of reflect.Value.Len on ${coll === null ? 'zero' : typeName(coll)} Value`);
    const scope: Scope = { coll, len, index: 0 };
    const pred = node.args[1];
    const { name } = node;
    const step = (): void => (pred ? this.run(pred) : this.push(element(scope)));
    const value = (): void => (node.map ? this.run(node.map) : this.push(element(scope)));
    this.scopes.push(scope);
    let count = 0;
    if (name === 'findLast') {
      for (scope.index = len - 1; ; scope.index--) {
        // The loop's own condition is left on the stack, every round.
        this.push(scope.index >= 0);
        if (!this.current()) break;
        step();
        if (assertBool(this.current())) {
          this.pop();
          value();
          this.scopes.pop();
          return;
        }
        this.pop();
      }
      panic('reflect: slice index out of range');
    }
    let acc: Val = 0n;
    for (; scope.index < len; scope.index++) {
      switch (name) {
        case 'all':
        case 'any':
          step();
          if (assertBool(this.current()) === (name === 'any')) return void this.scopes.pop();
          this.pop();
          break;
        case 'none':
          step();
          this.push(!assertBool(this.pop()));
          if (!this.current()) return void this.scopes.pop();
          this.pop();
          break;
        case 'one':
        case 'count':
        case 'filter':
          step();
          if (assertBool(this.current())) {
            this.pop();
            count++;
            if (name === 'filter') value();
          } else this.pop();
          break;
        case 'map':
          step();
          break;
        case 'sum':
          step();
          this.push(acc);
          acc = arith('+', ...(this.pops(2) as [Val, Val]));
          break;
        case 'find':
          step();
          if (assertBool(this.current())) {
            this.pop();
            value();
            return void this.scopes.pop();
          }
          this.pop();
          break;
      }
    }
    this.scopes.pop();
    switch (name) {
      case 'all':
      case 'none':
        return this.push(true);
      case 'any':
        return this.push(false);
      case 'one':
        return this.push(count === 1);
      case 'count':
        return this.push(BigInt(count));
      case 'filter':
        return this.push(this.pops(count));
      case 'map':
        return this.push(this.pops(len));
      case 'sum':
        return this.push(acc);
      default:
        return panic('reflect: slice index out of range');
    }
  }
}

/** element is `#`: an array's element, a string's byte; a map cannot be indexed. */
function element(scope: Scope): Val {
  const { coll, index } = scope;
  if (Array.isArray(coll)) return coll[index] as Val;
  if (typeof coll === 'string') return BigInt(goBytes(coll)[index] as number);
  return panic('reflect: call of reflect.Value.Index on map Value');
}

