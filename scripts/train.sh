#!/usr/bin/env bash
# The whole training run as used for the shipped model (configs/default.toml), then the
# export to models/. Prints each command before running it. Override with CONFIG=...,
# RUN=..., EXPORT_SIMS=... and EXPORT_ALGO=...; other arguments go to `brandubh train`.
set -euo pipefail
cd "$(dirname "$0")/.."
run() { echo "+ $*" >&2; "$@"; }
CONFIG=${CONFIG:-configs/default.toml}
RUN=${RUN:-runs/default}
run cargo build --release
run ./target/release/brandubh train --config "$CONFIG" --run "$RUN" "$@"
run ./target/release/brandubh export "$RUN" --out models/brandubh-v1.agent \
  --sims "${EXPORT_SIMS:-1600}" --algo "${EXPORT_ALGO:-puct}"
