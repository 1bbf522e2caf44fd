#!/usr/bin/env bash
# Runs the end-to-end jest suite against the real control plane, bringing it up first if needed
# (it is left running for the next run; `npm run e2e:down` stops it). Extra args go to jest. The chaos
# suites' rows (.e2e/chaos-report.jsonl) are printed as a table at the end.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
npm run -s build
E2E_REBUILD= bash hack/e2e-up.sh
# The dashboard's browser test needs Debian's Chromium (installed once).
PHASED_ROLLOUT_CHROMIUM=$(bash hack/browser.sh | tail -n 1)
export PHASED_ROLLOUT_CHROMIUM
state=${PHASED_ROLLOUT_E2E_DIR:-$root/.e2e}
rm -f "$state/chaos-report.jsonl"
rc=0
node --experimental-vm-modules node_modules/jest/bin/jest.js --selectProjects e2e --runInBand "$@" || rc=$?
[ ! -s "$state/chaos-report.jsonl" ] || node hack/chaos-table.mjs "$state/chaos-report.jsonl"
exit $rc
