// The product's image two ways: hack/node/images.sh (buildah from files, no Docker engine; what the real
// node runs) and the repository's Dockerfile built by `buildah bud` (hack/node/dockerfile-build.sh, on a
// local stand-in for the node:bookworm-slim base). Both must hold the same file tree, byte for byte, and
// the same configuration: a Docker user gets exactly what the tests ran.
import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { jest } from '@jest/globals';
import { runtimeEnv } from '../../bench/runtime-env.js';
import { ROOT } from '../support/process.js';
import { run } from './cluster.js';
import { needRealNode, realNodeIt } from './real-node.js';

jest.setTimeout(600_000);
const { realIt, skipped } = realNodeIt();

interface Image {
  config: Record<string, any>;
  /** path -> "mode uid:gid size sha256-or-link-target" */
  tree: Map<string, string>;
}

/** unpack reads a one-layer docker-archive: its configuration and every file of its layer. */
async function unpack(archive: string, dir: string): Promise<Image> {
  mkdirSync(join(dir, 'fs'), { recursive: true });
  const x = await run('tar', ['-xf', archive, '-C', dir]);
  if (x.code !== 0) throw new Error(`tar ${archive}: ${x.stderr}`);
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'))[0] as { Config: string; Layers: string[] };
  expect(manifest.Layers).toHaveLength(1);
  const l = await run('tar', ['--numeric-owner', '-xf', join(dir, manifest.Layers[0]!), '-C', join(dir, 'fs')]);
  if (l.code !== 0) throw new Error(`tar layer: ${l.stderr}`);
  const tree = new Map<string, string>();
  const walk = (rel: string) => {
    const p = join(dir, 'fs', rel);
    const s = lstatSync(p);
    const what = s.isSymbolicLink() ? `-> ${readlinkSync(p)}` : s.isFile() ? createHash('sha256').update(readFileSync(p)).digest('hex') : s.isDirectory() ? 'dir' : 'other';
    tree.set(rel || '/', `${(s.mode & 0o7777).toString(8)} ${s.uid}:${s.gid} ${s.isFile() ? s.size : 0} ${what}`);
    if (s.isDirectory()) for (const e of readdirSync(p)) walk(join(rel, e));
  };
  walk('');
  return { config: JSON.parse(readFileSync(join(dir, manifest.Config), 'utf8')).config, tree };
}

const runtimeConfig = (c: Record<string, any>) => ({
  Env: [...(c.Env as string[])].sort(),
  WorkingDir: c.WorkingDir,
  User: c.User,
  Entrypoint: c.Entrypoint,
  Cmd: c.Cmd,
  ExposedPorts: Object.keys(c.ExposedPorts ?? {}).map((p) => p.replace(/\/tcp$/, '')).sort(),
});

describe(`the product image${skipped}`, () => {
  realIt('the Dockerfile and the engine-less build give the same file tree and configuration', async () => {
    const { product } = needRealNode();
    const work = mkdtempSync(join(tmpdir(), 'pr-image-'));
    try {
      const t0 = Date.now();
      const built = await run('bash', [resolve(ROOT, 'hack', 'node', 'dockerfile-build.sh'), join(work, 'dockerfile.tar')], { timeoutMs: 540_000 });
      if (built.code !== 0) throw new Error(`dockerfile-build.sh failed: ${built.stderr}`);
      console.log(`image: the Dockerfile built with buildah bud in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
      const cache = process.env.PHASED_ROLLOUT_CACHE ?? join(homedir(), '.cache', 'phased-rollout');
      const archive = join(cache, 'images', `phased-rollout-${product.slice(product.lastIndexOf(':') + 1)}.tar`);
      const a = await unpack(join(work, 'dockerfile.tar'), join(work, 'a'));
      const b = await unpack(archive, join(work, 'b'));

      expect(runtimeConfig(a.config)).toEqual(runtimeConfig(b.config));
      expect(runtimeConfig(b.config)).toEqual({
        // hack/runtime.env's variables, then the two every image sets.
        Env: [...Object.entries(runtimeEnv(ROOT)).map(([k, v]) => `${k}=${v}`), 'NODE_ENV=production', 'PATH=/usr/local/bin:/usr/bin:/bin'].sort(), WorkingDir: '/app', User: '65532:65532',
        Entrypoint: ['node'], Cmd: ['dist/bundle/webhook.mjs', '--help'], ExposedPorts: ['8080', '9443'],
      });
      const differ = [...new Set([...a.tree.keys(), ...b.tree.keys()])].filter((p) => a.tree.get(p) !== b.tree.get(p));
      expect(differ.map((p) => `${p}: Dockerfile ${a.tree.get(p) ?? 'absent'} | images.sh ${b.tree.get(p) ?? 'absent'}`)).toEqual([]);
      // What the tree is: Node.js and its libraries, the bundled programs, the user.
      // The Node.js the project pins (the `node` devDependency), whatever node runs npm.
      const pinned = createHash('sha256').update(readFileSync(resolve(ROOT, 'node_modules', 'node', 'bin', 'node'))).digest('hex');
      expect(b.tree.get('usr/local/bin/node')).toMatch(new RegExp(`^755 0:0 \\d+ ${pinned}$`));
      expect([...b.tree.keys()].filter((p) => p.startsWith('bin/') || p === 'bin' || p.startsWith('usr/bin'))).toEqual([]);
      expect(b.tree.has('app/dist/bundle/controller.mjs') && b.tree.has('app/dist/bundle/webhook.mjs') && b.tree.has('app/dist/bundle/plugin.mjs')).toBe(true);
      // No node_modules, so the bundled packages' licences travel in one file.
      const licences = readFileSync(join(work, 'b', 'fs', 'app', 'dist', 'bundle', 'THIRD_PARTY_LICENSES'), 'utf8');
      for (const pkg of ['@kubernetes/client-node@', 'express@', 'pino@', 'prom-client@']) expect(licences).toContain(`\n${pkg}`);
      // The bundles carry what they use: no node_modules, no compiled sources besides them.
      expect([...b.tree.keys()].filter((p) => p.startsWith('app/') && !p.startsWith('app/dist/bundle') && p !== 'app/dist')).toEqual([]);
      expect(readFileSync(join(work, 'b', 'fs', 'etc', 'passwd'), 'utf8')).toContain('nonroot:x:65532:65532');
      console.log(`image: ${b.tree.size} entries, ${(lstatSync(archive).size / 1048576).toFixed(0)} MiB uncompressed`);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
});
