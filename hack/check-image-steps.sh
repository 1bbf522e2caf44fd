#!/usr/bin/env bash
# Proves the Dockerfile's runtime stage without a Docker engine: in a clean directory, install only
# production dependencies (npm ci --omit=dev), copy the built dist/, and run every entry point with
# --help. An entry point that imports a dev dependency at run time fails here.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[ -d dist ] || npm run -s build
node=$root/node_modules/.bin/node; [ -x "$node" ] || node=$(command -v node)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp package.json package-lock.json "$work/"
(cd "$work" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund >/dev/null 2>&1) || { echo "npm ci --omit=dev failed" >&2; exit 1; }
cp -r dist "$work/dist"
[ ! -e "$work/node_modules/typescript" ] && [ ! -e "$work/node_modules/jest" ] || { echo "dev dependencies leaked into the production install" >&2; exit 1; }
status=0
for entry in dist/webhook/main.js dist/controller/main.js dist/plugin/main.js; do
  [ -f "$work/$entry" ] || continue
  if (cd "$work" && NODE_ENV=production "$node" "$entry" --help >/dev/null 2>"$work/err"); then
    echo "ok   $entry --help (production dependencies only)"
  else
    echo "FAIL $entry --help:" >&2; cat "$work/err" >&2; status=1
  fi
done
exit $status
