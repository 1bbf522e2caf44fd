// The environment the shipped controller and webhook run with (hack/runtime.env, which says why), for
// the benchmarks and tests that start the bundles themselves: what they measure is what ships.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** parseRuntimeEnv reads KEY=VALUE lines; `#` comments and blank lines are skipped. */
export function parseRuntimeEnv(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (!m) throw new Error(`hack/runtime.env: not KEY=VALUE: ${line}`);
    env[m[1] as string] = m[2] ?? '';
  }
  return env;
}

/** runtimeEnv is hack/runtime.env of the repository at `root`. */
export function runtimeEnv(root: string): Record<string, string> {
  return parseRuntimeEnv(readFileSync(resolve(root, 'hack', 'runtime.env'), 'utf8'));
}
