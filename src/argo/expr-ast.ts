// The syntax tree of a condition and the static types expr's checker gives its nodes. The node kinds are
// expr's own (ast/node.go) so that its optimizer's rewrites, which change what some conditions evaluate
// to, can be made on the same shapes; `const` is an array literal the optimizer folded.

import type { Val } from './expr-values.js';

/** GoType is the Go type a nature stands for; `any` is interface{}, `map` is map[string]any. */
export type GoType = 'any' | 'bool' | 'int' | 'int64' | 'float64' | 'string' | '[]any' | '[]float64' | 'map' | 'func';

/**
 * Nature is what expr's checker knows of a value before it runs (checker/nature): no type at all
 * (`{}`, unknown), nil, or a Go type. An array may know its element (`ref`); a function its signature.
 * Two unknowns are kept apart because expr keeps them apart: interface{} is assignable-to, "no type" is not.
 */
export interface Nature {
  t?: GoType;
  nil?: true;
  ref?: Nature;
  ins?: Nature[];
  outs?: Nature[];
}

interface At {
  pos: number;
  nature?: Nature;
}

/** Node is one node of the tree; `pos` is its code point in the condition, for messages. */
export type Node = At &
  (
    | { k: 'nil' }
    | { k: 'bool'; v: boolean }
    | { k: 'int'; v: bigint }
    | { k: 'float'; v: number }
    | { k: 'string'; v: string }
    | { k: 'const'; v: Val[] }
    | { k: 'ident'; name: string }
    | { k: 'unary'; op: string; x: Node }
    // `set`: the optimizer turned `x in [literals]` into a lookup in a Go map of that key type.
    | { k: 'binary'; op: string; l: Node; r: Node; set?: 'int' | 'string' }
    | { k: 'chain'; x: Node }
    | { k: 'member'; x: Node; prop: Node; optional: boolean }
    | { k: 'slice'; x: Node; from?: Node; to?: Node }
    | { k: 'call'; name: string; args: Node[] }
    // find/findLast only come from the optimizer; `throws` and `map` as expr's BuiltinNode has them.
    | { k: 'builtin'; name: string; args: Node[]; map?: Node; throws?: boolean }
    | { k: 'predicate'; body: Node }
    | { k: 'pointer'; name: string }
    | { k: 'cond'; c: Node; a: Node; b: Node }
    | { k: 'array'; items: Node[] }
    | { k: 'map'; pairs: { key: Node; value: Node }[] }
  );

/** same says two trees are the same expression (expr compares their printed forms). */
export function same(a: Node, b: Node): boolean {
  return JSON.stringify(a, strip) === JSON.stringify(b, strip);
}

function strip(key: string, value: unknown): unknown {
  if (key === 'pos' || key === 'nature') return undefined;
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  return value;
}
