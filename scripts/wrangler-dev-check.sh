#!/usr/bin/env bash
# A by-hand check of what docs/cloudflare-workers.md tells a user to do: the engine and
# @stepfold/cloudflare packed into tarballs and installed with npm in a project outside the
# repository (as packages/cloudflare/test/installed.test.ts does), wrangler installed from the npm
# registry, the package's wrangler.toml template and the example Worker's sources copied in, then
# `npx wrangler dev --local` serving it while curl drives one workflow to completion. Not run in CI
# (wrangler and workerd are a large download); run it after `pnpm build`:
#
#   bash scripts/wrangler-dev-check.sh            # WRANGLER_VERSION, PORT and KEEP=1 to keep the dir
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
# 4.86.0 is the newest wrangler that runs on Node 20 (later ones need Node 22); it bundles
# miniflare 4.20260426.0, the one the repository's tests use.
WRANGLER_VERSION=${WRANGLER_VERSION:-4.86.0}
PORT=${PORT:-8799}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/stepfold-wrangler-XXXXXX")
APP=$WORK/app
SERVER=
cleanup() {
  if [ -n "$SERVER" ]; then kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; fi
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

step() { printf '\n== %s\n' "$*"; }

step "pack @stepfold/engine and @stepfold/cloudflare"
node --input-type=module -e "
  import { packAll } from '$ROOT/scripts/pack-all.mjs';
  for (const p of packAll('$WORK/tarballs', console.log, ['engine', 'cloudflare'])) console.log(p.file);
"

step "install them and wrangler@$WRANGLER_VERSION into $APP"
mkdir -p "$APP/src"
cd "$APP"
echo '{ "name": "shop", "private": true, "type": "module" }' >package.json
npm install --no-audit --no-fund --loglevel=error "$WORK"/tarballs/*.tgz
npm install --save-dev --no-audit --no-fund --loglevel=error "wrangler@$WRANGLER_VERSION"
npx wrangler --version

step "the template wrangler.toml and the example Worker"
cp node_modules/@stepfold/cloudflare/templates/wrangler.toml .
cp "$ROOT"/examples/cloudflare-worker/src/*.ts src/
# The example's schemas import zod/mini: the engine depends on zod, a user's project lists it too.
npm install --no-audit --no-fund --loglevel=error "zod@$(node -p "require('./node_modules/zod/package.json').version")"

step "npx wrangler dev --local --port $PORT"
WRANGLER_SEND_METRICS=false npx wrangler dev --local --port "$PORT" >"$WORK/wrangler.log" 2>&1 &
SERVER=$!
for _ in $(seq 1 120); do
  if curl -s -o /dev/null "http://127.0.0.1:$PORT/instances/none"; then break; fi
  if ! kill -0 "$SERVER" 2>/dev/null; then cat "$WORK/wrangler.log"; exit 1; fi
  sleep 1
done

step "one workflow, driven with curl"
BASE=http://127.0.0.1:$PORT
show() { echo "\$ curl $*"; curl -s -w '\n  -> HTTP %{http_code}\n' "$@"; }
show -X POST "$BASE/workflows/publish/instances/doc-1" -d '{"title":"Q3 report"}'
show -X POST "$BASE/instances/doc-1/signals/review" -d '{"decision":"approve"}'
final=$(curl -s "$BASE/instances/doc-1")
echo "$final"
late=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$BASE/instances/doc-1/signals/review" -d '{"decision":"reject"}')
echo "a decision after the end: HTTP $late"
# The order's retry: the Durable Object's alarm rings after the 1 s backoff.
show -X POST "$BASE/workflows/order/instances/order-1" -d '{"sku":"BOOK-7","amount":25,"chargeFailures":1}'
sleep 3
order=$(curl -s "$BASE/instances/order-1")
echo "$order"

step "result"
case "$final" in *'"status":"completed"'*) ;; *) echo "doc-1 did not complete"; tail -50 "$WORK/wrangler.log"; exit 1 ;; esac
case "$order" in *'"status":"completed"'*) ;; *) echo "order-1 did not complete after its retry alarm"; tail -50 "$WORK/wrangler.log"; exit 1 ;; esac
[ "$late" = 409 ] || { echo "a late decision answered $late, not 409"; exit 1; }
echo "wrangler dev served the example Worker: publish approved and completed, order retried by its alarm and completed"
