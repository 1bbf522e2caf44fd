// Bundles the three programs users run (controller, webhook, kubectl plugin) from tsc's output into one
// file each under dist/bundle/, with esbuild: tree-shaken and minified, source maps beside them.
//
// Why: @kubernetes/client-node's index loads every generated model and API class; imported as
// packages, that alone holds ~80 MB of the controller's memory and most of the plugin's start time. A
// bundle keeps the classes the program uses (docs/benchmarks.md#memory has the figures). The image
// carries these files and no node_modules (hack/node/image-rootfs.sh).
//
//   node hack/bundle.mjs        (npm run build runs it after tsc)
import { cpSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = resolve(root, 'dist', 'bundle');

/** ENTRIES: the bundle's name and the compiled entry point it starts from. */
export const ENTRIES = {
  controller: 'dist/controller/main.js',
  webhook: 'dist/webhook/main.js',
  plugin: 'dist/plugin/main.js',
};

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
await Promise.all(
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
      sourcesContent: false,
      legalComments: 'linked',
      logLevel: 'warning',
      // hack/node/images.sh builds in a copy whose node_modules is a link: the paths in the source maps
      // must come out as they do in the Dockerfile's build, byte for byte.
      preserveSymlinks: true,
      // Some dependencies are CommonJS and call require(): an ESM bundle gives them Node's.
      banner: { js: "import { createRequire as __prCreateRequire } from 'node:module'; const require = __prCreateRequire(import.meta.url);" },
    }),
  ),
);
// The dashboard's page and script (the plugin serves them from beside its bundle).
cpSync(resolve(root, 'plugin', 'dashboard', 'static'), resolve(out, 'static'), { recursive: true });
