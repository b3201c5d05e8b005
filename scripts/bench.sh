#!/usr/bin/env bash
# The speed figures reported in the issues: perft and move generation, search
# simulations/s, network forward rates (burn vs the fast path), self-play vs raw rate.
set -euo pipefail
cd "$(dirname "$0")/.."
run() { echo "+ $*" >&2; "$@"; }
run cargo bench -p brandubh-rules --bench perft
run cargo bench -p brandubh-search --bench search
run cargo bench -p brandubh-net --bench inference
run cargo build --release
for config in configs/quick.toml configs/default.toml; do
  run ./target/release/brandubh bench --config "$config"
done
