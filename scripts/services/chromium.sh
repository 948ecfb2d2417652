#!/usr/bin/env bash
# Debian's Chromium, for the inspector's browser tests (playwright-core drives it; Playwright's own
# browser download is blocked on closed networks, so the tests use /usr/bin/chromium).
# Sourced by scripts/services.sh (`services.sh up chromium`, part of `all`), or run on its own:
#   bash scripts/services/chromium.sh      install when missing (idempotent), print the version
# shellcheck shell=bash

CHROMIUM_BIN=/usr/bin/chromium

chromium_missing_packages() { [[ -x $CHROMIUM_BIN ]] || echo chromium; }

# Not a server: "up" means installed and able to print its version.
chromium_up() {
  local t0=$EPOCHREALTIME
  [[ -z $(chromium_missing_packages) ]] || apt_install chromium
  [[ -x $CHROMIUM_BIN ]] || die "$CHROMIUM_BIN is still missing after apt-get install chromium"
  say "ready: $("$CHROMIUM_BIN" --version 2>/dev/null | head -n1) ($(elapsed "$t0"))"
}

chromium_stop() { say "nothing to stop (a browser each test launches itself)"; }

chromium_status() {
  if [[ -x $CHROMIUM_BIN ]]; then echo "installed ($CHROMIUM_BIN)"; else
    echo "missing (bash scripts/services/chromium.sh installs it)"
    return 1
  fi
}

# Run directly: the same install, with the shared helpers (apt_install, say, die).
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  set -euo pipefail
  # shellcheck source=common.sh
  source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
  SVC=chromium
  # The same lock as services.sh: two apt-get runs at once would fight over dpkg's lock anyway.
  exec 9>"$SERVICES_DIR/.lock"
  flock -w 900 9 || die "gave up waiting for the lock on $SERVICES_DIR/.lock"
  chromium_up
fi
