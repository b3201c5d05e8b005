#!/usr/bin/env bash
# Load test of `brandubh serve` on loopback: 50 clients playing whole games for 30 s
# against an agent (default: the shipped brandubh-v5, thinking 50 ms a move: the search's
# own deadline, as a player's game asks). Bounded in clients and time; prints requests/s,
# p50/p95/p99 latency, errors (exit 1 if any) and the memory before and after.
#
#   scripts/load-test.sh [AGENT_FILE] [CLIENTS] [SECONDS] [MOVE_MS]
set -euo pipefail
cd "$(dirname "$0")/.."
agent="${1:-models/brandubh-v5.agent}"
clients="${2:-50}"
seconds="${3:-30}"
move_ms="${4:-50}"
. scripts/lib.sh
brandubh_binary
echo "== CPU: $(cpu_name)"
cargo run --release --quiet --example load -- "$agent" "$clients" "$seconds" "$move_ms"
