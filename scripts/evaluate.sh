#!/usr/bin/env bash
# The strength measurements of models/README.md: 100 two-game matches of an agent (default
# v1, models/brandubh-v1.agent, with the search settings stored in it) against each fixed
# baseline from seeded openings, then the Elo ladder of the run's checkpoints.
# Override with AGENT=..., RUN=..., MATCHES=..., SEED=..., LADDER_MATCHES=...
set -euo pipefail
cd "$(dirname "$0")/.."
run() { echo "+ $*" >&2; "$@"; }
AGENT=${AGENT:-models/brandubh-v1.agent}
RUN=${RUN:-runs/default}
MATCHES=${MATCHES:-100}
SEED=${SEED:-2026}
run cargo build --release
for opponent in random greedy mcts:1000 alphabeta:3; do
  run ./target/release/brandubh match "$AGENT" "$opponent" --matches "$MATCHES" --seed "$SEED"
done
run ./target/release/brandubh ladder "$RUN" --baselines random,greedy,alphabeta:2 --matches "${LADDER_MATCHES:-4}" --neighbours 1 --sims 32
