#!/usr/bin/env bash
# Proves the Dockerfile's runtime stage without a Docker engine: in a clean directory that holds only
# dist/bundle (what the image's /app holds: no node_modules, no compiled sources), run every program
# with --help. A bundle that still needs a package from node_modules at run time fails here.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[ -f dist/bundle/controller.mjs ] || npm run -s build
node=$root/node_modules/.bin/node; [ -x "$node" ] || node=$(command -v node)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/dist"
cp -r dist/bundle "$work/dist/bundle"
status=0
for entry in dist/bundle/webhook.mjs dist/bundle/controller.mjs dist/bundle/plugin.mjs; do
  if (cd "$work" && NODE_ENV=production NODE_PATH= "$node" "$entry" --help >/dev/null 2>"$work/err"); then
    echo "ok   $entry --help (the bundle alone, no node_modules)"
  else
    echo "FAIL $entry --help:" >&2; cat "$work/err" >&2; status=1
  fi
done
exit $status
