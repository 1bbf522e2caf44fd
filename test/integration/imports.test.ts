// The layering of src/ is one-way: no module imports itself back through others. Annotation parsing
// (the config) sits below the rollout planner; a type both need lives with the lower one.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..', '..');

/** modules lists the non-test .ts files under a folder. */
function modules(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) return modules(p);
    return f.endsWith('.ts') && !f.endsWith('.test.ts') ? [p] : [];
  });
}

/** importsOf reads the relative imports of a module (type-only ones too: they couple the files all the same). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found = [...text.matchAll(/^(?:import|export)\s[^;]*?from\s+'(\.{1,2}\/[^']+)'/gms)].map((m) => resolve(dirname(file), (m[1] ?? '').replace(/\.js$/, '.ts')));
  return [...new Set(found)];
}

/** cycles finds every import cycle (each once, as a path of files). */
export function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (n: string) => {
    state.set(n, 'open');
    stack.push(n);
    for (const m of graph.get(n) ?? []) {
      if (state.get(m) === 'open') found.push([...stack.slice(stack.indexOf(m)), m]);
      else if (!state.has(m)) visit(m);
    }
    stack.pop();
    state.set(n, 'done');
  };
  for (const n of graph.keys()) if (!state.has(n)) visit(n);
  return found;
}

describe('imports of src/', () => {
  it('finds a cycle when there is one (the check can fail)', () => {
    expect(cycles(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a']]]))).toEqual([['a', 'b', 'c', 'a']]);
    expect(cycles(new Map([['a', ['b']], ['b', []]]))).toEqual([]);
  });

  it('has no import cycle', () => {
    const files = modules(join(ROOT, 'src'));
    expect(files.length).toBeGreaterThan(20);
    const graph = new Map(files.map((f) => [f, importsOf(f)]));
    expect(cycles(graph).map((c) => c.map((f) => relative(ROOT, f)).join(' -> '))).toEqual([]);
  });
});

/** valueImportsOf reads the packages a module loads (type-only imports and re-exports are erased): static, re-exported, side-effect and dynamic. */
export function valueImportsOf(text: string): string[] {
  const staticOnes = [...text.matchAll(/^(?:import|export)\s+(?!type\s)([^;]*?)from\s+'([^.][^']*)'/gms)].filter((m) => !/^\{\s*(type\s+[^,}]+,?\s*)+\}\s*$/.test((m[1] ?? '').trim())).map((m) => m[2] ?? '');
  const bare = [...text.matchAll(/^import\s+'([^.][^']*)'/gm)].map((m) => m[1] ?? '');
  const dynamic = [...text.matchAll(/\bimport\(\s*'([^.][^']*)'\s*\)/g)].map((m) => m[1] ?? '');
  return [...staticOnes, ...bare, ...dynamic];
}

/** reachable is every module `entry` imports, itself included, through relative imports. */
function reachable(entry: string): string[] {
  const seen = new Set<string>();
  const visit = (f: string) => {
    if (seen.has(f)) return;
    seen.add(f);
    for (const m of importsOf(f)) visit(m);
  };
  visit(entry);
  return [...seen];
}

describe('the webhook', () => {
  it.each([
    ["import { A } from 'p';", ['p']],
    ["import type { A } from 'p';", []],
    ["import { type A, type B } from 'p';", []],
    ["import { type A, B } from 'p';", ['p']],
    ["export { A } from 'p';", ['p']],
    ["export type { A } from 'p';", []],
    ["import 'p';", ['p']],
    ["const m = await import('p');", ['p']],
    ["import { A } from './local.js';", []],
  ])('reads the packages of %s', (text, want) => expect(valueImportsOf(text)).toEqual(want));

  it('reads value imports as the bundler does (the check can fail)', () => {
    const controllerPackages = reachable(join(ROOT, 'controller', 'main.ts')).flatMap((f) => valueImportsOf(readFileSync(f, 'utf8')));
    expect(controllerPackages).toContain('@kubernetes/client-node');
  });

  it('loads nothing of @kubernetes/client-node (its model classes and undici are most of a bundle: docs/benchmarks.md §7)', () => {
    const files = reachable(join(ROOT, 'webhook', 'main.ts'));
    expect(files.length).toBeGreaterThan(10);
    expect(files.filter((f) => valueImportsOf(readFileSync(f, 'utf8')).includes('@kubernetes/client-node')).map((f) => relative(ROOT, f))).toEqual([]);
  });
});
