#!/usr/bin/env bash
# Load test of `brandubh serve` on loopback: 50 clients playing whole games for 30 s
# against an agent (default: v1, the 32x4 model shipped before v2, at 32 simulations a
# move). Bounded in clients and time; prints requests/s, p50/p95/p99 latency and errors
# (exit 1 if any).
#
#   scripts/load-test.sh [AGENT_FILE] [CLIENTS] [SECONDS] [SIMS]
set -euo pipefail
cd "$(dirname "$0")/.."
agent="${1:-models/brandubh-v1.agent}"
clients="${2:-50}"
seconds="${3:-30}"
sims="${4:-32}"
echo "== CPU: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores"
cargo run --release --quiet -p brandubh-serve --example load -- "$agent" "$clients" "$seconds" "$sims"
