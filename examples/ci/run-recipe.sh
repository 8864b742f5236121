#!/usr/bin/env bash
# The steps of ci/conformance.yml as one script, so this repository's CI runs the recipe itself.
# Usage: examples/ci/run-recipe.sh [output-dir]   (from a checkout with dependencies installed)
set -euo pipefail
out="${1:-test-results}"
mkdir -p "$out"
here="$(cd "$(dirname "$0")/../.." && pwd)"
node "$here/bin/svc-emulator.js" start --memory --clock manual --admin-token ci --allow-insecure-webhooks --port 0 >"$out/recipe-emulator.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  base=$(grep -o 'listening on http://[^ ]*' "$out/recipe-emulator.log" | head -1 | cut -d' ' -f3 || true)
  [ -n "$base" ] && break
  sleep 0.1
done
[ -n "${base:-}" ] || { echo "the emulator did not start"; cat "$out/recipe-emulator.log"; exit 2; }
node "$here/bin/svc-emulator.js" conformance --base-url "$base" \
  --admin-url "$base" --admin-token ci --fail-on-skip --junit "$out/conformance.xml" --json "$out/conformance.json"
