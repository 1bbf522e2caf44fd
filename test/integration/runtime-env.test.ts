// hack/runtime.env is the one account of the environment the shipped programs run with: the image's
// two builds, the chart and the rendered manifests must carry exactly it, or what the benchmarks
// measured (docs/benchmarks.md, section 7) is not what users run.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseRuntimeEnv, runtimeEnv } from '../../bench/runtime-env.js';
import { ROOT } from '../support/process.js';

const read = (rel: string) => readFileSync(resolve(ROOT, rel), 'utf8');
const shipped = runtimeEnv(ROOT);
const pairs = Object.entries(shipped);

describe('hack/runtime.env', () => {
  it('parses KEY=VALUE lines, skips comments and blanks, and refuses anything else', () => {
    expect(parseRuntimeEnv('# why\n\nA_B=1\nC=x=y\n')).toEqual({ A_B: '1', C: 'x=y' });
    expect(() => parseRuntimeEnv('export A=1')).toThrow(/not KEY=VALUE: export A=1/);
    expect(pairs.length).toBeGreaterThan(0);
  });

  it('the Dockerfile sets each variable with its value', () => {
    const env = read('Dockerfile')
      .split('\n')
      .filter((l) => l.startsWith('ENV '))
      .flatMap((l) => l.slice(4).trim().split(/\s+/));
    for (const [k, v] of pairs) expect(env).toContain(`${k}=${v}`);
  });

  it('the chart and manifests/base give both containers exactly these variables', () => {
    const values = read('charts/phased-rollout/values.yaml');
    const block = /^runtimeEnv:\n((?: {2}- .*\n)+)/m.exec(values)?.[1] ?? '';
    const fromValues = Object.fromEntries([...block.matchAll(/- \{name: (\w+), value: "([^"]*)"\}/g)].map((m) => [m[1], m[2]]));
    expect(fromValues).toEqual(shipped);
    // The rendered manifests (hack/render-manifests.sh; an e2e test checks they are the chart's render).
    const manifests = read('manifests/base/phased-rollout.yaml');
    for (const container of ['controller', 'webhook']) {
      const spec = manifests.split(`- name: ${container}\n`)[1]?.split(/\n {10}ports:/)[0] ?? '';
      for (const [k, v] of pairs) expect(spec).toContain(`- name: ${k}\n              value: "${v}"`);
    }
  });

  it('the e2e harness and the image build read it rather than repeat it', () => {
    expect(read('hack/e2e-up.sh')).toMatch(/hack\/runtime\.env/);
    expect(read('hack/node/images.sh')).toMatch(/hack\/runtime\.env/);
    for (const [k] of pairs) {
      expect(read('hack/e2e-up.sh')).not.toContain(k);
      expect(read('hack/node/images.sh')).not.toContain(k);
    }
  });

  it("the controller's Node.js flags are the chart's controller.nodeArgs in manifests/base and the e2e harness", () => {
    const values = read('charts/phased-rollout/values.yaml');
    const args = JSON.parse(/^ {2}nodeArgs: (\[.*\])$/m.exec(values)?.[1] ?? 'null') as string[];
    expect(args.length).toBeGreaterThan(0);
    expect(read('manifests/base/phased-rollout.yaml')).toContain(`command: ${JSON.stringify(['node', ...args, 'dist/bundle/controller.mjs']).replace(/","/g, '", "')}`);
    expect(read('hack/e2e-up.sh')).toContain(`$node ${args.join(' ')} $root/dist/bundle/controller.mjs`);
  });
});
