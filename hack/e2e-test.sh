#!/usr/bin/env bash
# Runs the end-to-end jest suite against the real control plane, bringing it up first if needed
# (it is left running for the next run; `npm run e2e:down` stops it). Extra args go to jest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
npm run -s build
E2E_REBUILD= bash hack/e2e-up.sh
exec node --experimental-vm-modules node_modules/jest/bin/jest.js --selectProjects e2e --runInBand "$@"
