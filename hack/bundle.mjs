// Bundles the three programs users run (controller, webhook, kubectl plugin) from tsc's output into one
// file each under dist/bundle/, with esbuild: tree-shaken and minified, source maps beside them, and
// THIRD_PARTY_LICENSES: the licence files of every package a bundle includes (the image carries no
// node_modules, so no other copy of them).
//
// Why: @kubernetes/client-node's index loads every generated API class (and every model, which its
// serializer still needs); a bundle keeps the API classes the program uses and loads as one file
// (docs/benchmarks.md, section 7, has the figures). The image carries these files and no node_modules
// (hack/node/image-rootfs.sh).
//
//   node hack/bundle.mjs        (npm run build runs it after tsc)
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = resolve(root, 'dist', 'bundle');

/** ENTRIES: the bundle's name and the compiled entry point it starts from. */
const ENTRIES = {
  controller: 'dist/controller/main.js',
  webhook: 'dist/webhook/main.js',
  plugin: 'dist/plugin/main.js',
};

/**
 * builtinsViaRequire makes every `import … from 'node:x'` in the bundle a require('node:x') (esbuild
 * wraps it so named and default imports still work). Why: an ES module's import of a built-in goes
 * through an ESM facade that reads every export of the module, and in Node.js 24 node:http exports
 * lazy getters (WebSocket, MessageEvent, CloseEvent) that load Node's own copy of undici — 0.7 MB of
 * source and ~4 MB RSS that nothing here uses (client-node brings its own undici). require() returns
 * the module object without touching its getters.
 */
const builtins = new Set(builtinModules.map((m) => m.replace(/^node:/, '')));
const builtinsViaRequire = {
  name: 'builtins-via-require',
  setup(b) {
    b.onResolve({ filter: /^(node:)?[a-z_/0-9]+$/ }, (args) => {
      const bare = args.path.replace(/^node:/, '');
      if (!builtins.has(bare)) return undefined;
      if (args.namespace === 'builtin') return { path: `node:${bare}`, external: true };
      if (args.kind !== 'import-statement' || bare === 'module') return undefined; // the banner imports node:module itself
      return { path: `node:${bare}`, namespace: 'builtin' };
    });
    b.onLoad({ filter: /.*/, namespace: 'builtin' }, (args) => ({ contents: `module.exports = require(${JSON.stringify(args.path)});`, loader: 'js' }));
  },
};

/**
 * withoutIconv (the webhook's bundle only) stands in for iconv-lite, which express loads through
 * body-parser's eager requires of every parser: 0.5 MB of charset tables the webhook never uses, as it
 * reads AdmissionReviews itself (webhook/body-share.ts) and never calls express.json() or the like.
 * Were a body parser ever used, the stand-in fails loudly instead of decoding.
 */
const withoutIconv = {
  name: 'without-iconv',
  setup(b) {
    b.onResolve({ filter: /^iconv-lite$/ }, () => ({ path: 'iconv-lite', namespace: 'stand-in' }));
    b.onLoad({ filter: /.*/, namespace: 'stand-in' }, () => ({
      contents: "const no = () => { throw new Error('iconv-lite is not in this bundle (hack/bundle.mjs): the webhook reads request bodies itself'); }; module.exports = { getDecoder: no, decode: no, encodingExists: no };",
      loader: 'js',
    }));
  },
};

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const results = await Promise.all(
  Object.entries(ENTRIES).map(([name, entry]) =>
    build({
      entryPoints: [resolve(root, entry)],
      outfile: resolve(out, `${name}.mjs`),
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node22',
      minify: true,
      // Minified names would make stack traces and pino's error serializers useless without the maps;
      // keepNames costs a few KB.
      keepNames: true,
      sourcemap: 'linked',
      metafile: true,
      sourcesContent: false,
      // The licences are in THIRD_PARTY_LICENSES, whole (a bundle's own legal comments are a few of them).
      legalComments: 'none',
      // Paths in the maps and the metafile relative to the repository, wherever this is run from.
      absWorkingDir: root,
      logLevel: 'warning',
      // hack/node/images.sh builds in a copy whose node_modules is a link: the paths in the source maps
      // must come out as they do in the Dockerfile's build, byte for byte.
      preserveSymlinks: true,
      plugins: name === 'webhook' ? [builtinsViaRequire, withoutIconv] : [builtinsViaRequire],
      // Some dependencies are CommonJS and call require(): an ESM bundle gives them Node's.
      banner: { js: "import { createRequire as __prCreateRequire } from 'node:module'; const require = __prCreateRequire(import.meta.url);" },
    }),
  ),
);
// The dashboard's page and script (the plugin serves them from beside its bundle).
cpSync(resolve(root, 'plugin', 'dashboard', 'static'), resolve(out, 'static'), { recursive: true });

// Every package any bundle includes, from esbuild's own account of its inputs: name@version and its
// LICENSE / LICENCE / NOTICE / COPYING files, sorted, with no path of this machine in it (the two image
// builds must give the same bytes).
const packages = new Set(results.flatMap((r) => Object.keys(r.metafile.inputs).flatMap((input) => /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input)?.[1] ?? [])));
const sections = [...packages].map((rel) => {
  const dir = resolve(root, rel);
  const pkg = JSON.parse(readFileSync(resolve(dir, 'package.json'), 'utf8'));
  const files = readdirSync(dir).filter((f) => /^(licen[cs]e|notice|copying)/i.test(f)).sort();
  const texts = files.map((f) => readFileSync(resolve(dir, f), 'utf8').trim());
  const head = `${pkg.name}@${pkg.version} (${typeof pkg.license === 'string' ? pkg.license : 'see below'})`;
  return { key: `${pkg.name}@${pkg.version}`, text: `${head}\n${'-'.repeat(head.length)}\n${texts.length > 0 ? texts.join('\n\n') : '(no licence file in the package; its package.json names the licence above)'}\n` };
});
const unique = [...new Map(sections.map((s) => [s.key, s.text])).entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
writeFileSync(resolve(out, 'THIRD_PARTY_LICENSES'), `The bundles in this folder include the following packages, under these licences.\n\n${unique.map(([, t]) => t).join('\n')}`);

