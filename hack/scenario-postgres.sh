#!/usr/bin/env bash
# npm run scenario:postgres -- <upgrade|bad-release|bad-migration> [--system ours|ours-no-hooks|ours-no-checkpoint|plain] [--rate N] [--keep] [--quiet]
# Builds what is stale, brings the test environment up with its real node (hack/e2e-up.sh; a healthy one
# is left as it is), for bad-migration the CSI driver and snapshots too (hack/csi.sh up: about 10 min the
# first time, cached after), builds and imports the PostgreSQL image (hack/node/images.sh postgres), then
# runs the scenario (scenarios/postgres/main.ts). The environment stays up afterwards (and the CSI parts:
# bash hack/csi.sh down stops them): npm run e2e:down stops it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if [ ! -f dist/scenarios/postgres/main.js ] || [ -n "$(find src webhook controller plugin certs demo bench scenarios test/support -name '*.ts' -newer dist/scenarios/postgres/main.js -print -quit)" ]; then
  echo "[scenario] building (npm run build)" >&2
  npm run -s build
fi
bash hack/e2e-up.sh
state=${PHASED_ROLLOUT_E2E_DIR:-$root/.e2e}
grep -q '^REAL_NODE=' "$state/env" || { echo "[scenario] the environment has no real node (it needs root); the PostgreSQL scenarios run only there" >&2; exit 2; }
# bad-migration keeps its member's data on the CSI driver's class, to snapshot it.
for a in "$@"; do
  if [ "$a" = bad-migration ]; then bash hack/csi.sh up; break; fi
done
images=$(bash hack/node/images.sh postgres)
export POSTGRES_IMAGE
POSTGRES_IMAGE=$(echo "$images" | sed -n 's|^postgres=||p')
[ -n "$POSTGRES_IMAGE" ] || { echo "[scenario] hack/node/images.sh postgres named no image; it printed: $images" >&2; exit 1; }
node=$root/node_modules/.bin/node; [ -x "$node" ] || node=$(command -v node)
exec "$node" dist/scenarios/postgres/main.js "$@"
