#!/usr/bin/env bash
# Record, import, replay: the three commands of the README's "Recording and replay", end to end.
#
#   examples/recording/record-replay.sh [work-dir]
#
# With UPSTREAM and API_KEY set, it records the real service. Without them, an emulator stands in for it (real
# clock, tasks finishing in 3 s: stand-in.yaml), so the example runs anywhere, offline.
# Needs a checkout with its dependencies installed (npm ci). It runs the checkout's command, or the
# bin/svc-emulator.js that SVC_EMULATOR_BIN names (an installed package's, or the one the tests lay out).
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mkdir -p "${1:-recording-example}" && cd "${1:-recording-example}" && pwd)"
svc=(node "${SVC_EMULATOR_BIN:-$here/bin/svc-emulator.js}")
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT

# Waits for "<what> http://…" in a log (up to two minutes: a start on a busy machine is slow) and prints the address.
address_in() {
  for _ in $(seq 1 1200); do
    found=$(grep -o "$2 http://[^ ]*" "$1" | head -1 | awk '{print $NF}' || true)
    [ -n "$found" ] && { echo "$found"; return; }
    sleep 0.1
  done
  echo "nothing said '$2' in $1:" >&2; cat "$1" >&2; exit 2
}

if [ -z "${UPSTREAM:-}" ]; then
  "${svc[@]}" start --memory --port 0 --scenarios "$here/examples/recording/stand-in.yaml" >"$work/stand-in.log" 2>&1 &
  pids+=($!)
  UPSTREAM=$(address_in "$work/stand-in.log" 'listening on')
  API_KEY=sk-emulator-demo
  echo "stand-in for the real service: $UPSTREAM"
fi

# 1. Record: the client talks to the proxy, which checks each answer and writes the recording.
"${svc[@]}" proxy --upstream "$UPSTREAM" --port 0 --record "$work/recorded" --json "$work/deviations.json" >"$work/proxy.log" 2>&1 &
proxy=$!
pids+=($proxy)
proxy_url=$(address_in "$work/proxy.log" 'proxy listening on')
node "$here/examples/recording/client.mjs" "$proxy_url" "$API_KEY"
kill -TERM "$proxy"
wait "$proxy" || true
grep -E '^(deviation|proxy stopped|recorded)' "$work/proxy.log"

# 2. Import: the recorded tasks and text answers become scenarios.
"${svc[@]}" import-recording "$work/recorded" --out "$work/scenarios"

# 3. Replay: an emulator with those scenarios on a manual clock, and the recording replayed against it.
"${svc[@]}" start --memory --port 0 --clock manual --admin-token replay --scenarios "$work/scenarios" >"$work/replay.log" 2>&1 &
pids+=($!)
replay_url=$(address_in "$work/replay.log" 'listening on')
"${svc[@]}" parity "$work/recorded" --base-url "$replay_url" --admin-token replay --scenarios recorded --json "$work/parity.json"
