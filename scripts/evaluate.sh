#!/usr/bin/env bash
# The strength measurements of models/README.md: 100 two-game matches against each fixed
# baseline from seeded openings, then the Elo ladder of the run's checkpoints.
set -euo pipefail
cd "$(dirname "$0")/.."
run() { echo "+ $*" >&2; "$@"; }
AGENT=${AGENT:-run:runs/default@sims=200@algo=puct}
RUN=${RUN:-runs/default}
MATCHES=${MATCHES:-100}
SEED=${SEED:-2026}
run cargo build --release
for opponent in random greedy mcts:1000 alphabeta:3; do
  run ./target/release/brandubh match "$AGENT" "$opponent" --matches "$MATCHES" --seed "$SEED"
done
run ./target/release/brandubh ladder "$RUN" --baselines random,greedy,alphabeta:2 --matches "${LADDER_MATCHES:-4}" --neighbours 1 --sims 32
