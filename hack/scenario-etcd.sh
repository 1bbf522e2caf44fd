#!/usr/bin/env bash
# npm run scenario:etcd -- <upgrade|bad-release|zones|controller-kill|damaged-release> [--system ours|ours-no-checkpoint|plain|grafana|kruise] [--rate N] [--keep]
# Builds what is stale, brings the test environment up with its real node (hack/e2e-up.sh; a healthy one
# is left as it is), for damaged-release the CSI driver and snapshots too (hack/csi.sh up: about 10 min
# the first time, cached after), builds and imports the two etcd images (hack/node/images.sh etcd), then
# runs the scenario (scenarios/etcd/main.ts). The environment stays up afterwards (and the CSI parts:
# bash hack/csi.sh down stops them): npm run e2e:down stops it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if [ ! -f dist/scenarios/etcd/main.js ] || [ -n "$(find src webhook controller plugin certs demo bench scenarios test/support -name '*.ts' -newer dist/scenarios/etcd/main.js -print -quit)" ]; then
  echo "[scenario] building (npm run build)" >&2
  npm run -s build
fi
bash hack/e2e-up.sh
state=${PHASED_ROLLOUT_E2E_DIR:-$root/.e2e}
grep -q '^REAL_NODE=' "$state/env" || { echo "[scenario] the environment has no real node (it needs root); the etcd scenarios run only there" >&2; exit 2; }
# damaged-release keeps its members' data on the CSI driver's class, to snapshot it.
for a in "$@"; do
  if [ "$a" = damaged-release ]; then bash hack/csi.sh up; break; fi
done
source hack/versions.env
images=$(bash hack/node/images.sh etcd)
pick() { echo "$images" | sed -n "s|^etcd_${1//./_}=||p"; }
export ETCD_IMAGE_FROM ETCD_IMAGE_TO
ETCD_IMAGE_FROM=$(pick "$ETCD_WORKLOAD_FROM"); ETCD_IMAGE_TO=$(pick "$ETCD_WORKLOAD_TO")
[ -n "$ETCD_IMAGE_FROM" ] && [ -n "$ETCD_IMAGE_TO" ] || { echo "[scenario] hack/node/images.sh etcd named no image for $ETCD_WORKLOAD_FROM or $ETCD_WORKLOAD_TO; it printed: $images" >&2; exit 1; }
node=$root/node_modules/.bin/node; [ -x "$node" ] || node=$(command -v node)
exec "$node" dist/scenarios/etcd/main.js "$@"
