#!/usr/bin/env bash
# npm run demo [-- --down | --real]: builds what is not built yet (or older than its sources), then runs the demo
# (demo/main.ts). A second run on a warm machine skips the build and the cluster's start-up.
# npm run demo -- --real (as root): the same story on a real 3-member etcd cluster on the test
# environment's real node, under a steady write load (npm run scenario:etcd -- demo, docs/etcd.md).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if [ "${1:-}" = --real ]; then
  shift
  exec bash hack/scenario-etcd.sh demo "$@"
fi
if [ ! -f dist/demo/main.js ] || [ -n "$(find src webhook controller plugin certs demo bench test/support/gate-exporter.ts -name '*.ts' -newer dist/demo/main.js -print -quit)" ]; then
  echo "[demo] building (npm run build)" >&2
  npm run -s build
fi
node=$root/node_modules/.bin/node; [ -x "$node" ] || node=$(command -v node)
exec "$node" dist/demo/main.js "$@"
