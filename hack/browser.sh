#!/usr/bin/env bash
# Debian's Chromium for the dashboard's browser test (test/e2e/dashboard.test.ts), which drives it with
# playwright-core (a devDependency that never downloads a browser). Installed once, from Debian's
# packages, like Prometheus in hack/e2e-up.sh; prints the executable's path on its last line.
set -euo pipefail
bin=${PHASED_ROLLOUT_CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$bin" ]; then
  [ "$(id -u)" = 0 ] || { echo "[browser] $bin is missing; install it (apt-get install chromium) or run as root" >&2; exit 1; }
  echo "[browser] installing Debian's chromium package (once)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2 && apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
echo "[browser] $("$bin" --version 2>/dev/null | head -n 1)" >&2
echo "$bin"
