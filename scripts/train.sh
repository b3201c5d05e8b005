#!/usr/bin/env bash
# The whole training run, v1's recipe with what the ablations kept since: 100 iterations of
# configs/default.toml, then 30 more with configs/default-stage2.toml (v1's stage 2 also
# softened the Gumbel policy target, which default.toml now does from the start), then the
# export to models/. Prints each command before running it.
# Override with CONFIG=..., STAGE2=... (empty: no second stage), RUN=..., EXPORT_SIMS=...,
# EXPORT_ALGO=..., EXPORT_AVERAGE=N (the agent's weights the mean of the last N
# checkpoints; default 1, as v1 was exported), EXPORT_OUT=... (default
# models/brandubh-new.agent, so that the shipped agents are never overwritten),
# EXPORT_NAME=... (the agent's name, default brandubh-new) and BRANDUBH (the binary; default
# a release build of this checkout); other arguments go to `brandubh train`.
set -euo pipefail
cd "$(dirname "$0")/.."
run() { echo "+ $*" >&2; "$@"; }
CONFIG=${CONFIG:-configs/default.toml}
RUN=${RUN:-runs/default}
. scripts/lib.sh
brandubh_binary
STAGE2=${STAGE2-configs/default-stage2.toml}
# Stage 1, unless the run is already past it (the script was run before and stopped in
# stage 2; for v1's run, whose stage 2 changed a key, stage 1 would refuse it).
stage1=$(sed -n 's/^iterations *= *//p' "$CONFIG")
done_iterations=$(sed -n 's/.*"iteration": *\([0-9]*\).*/\1/p' "$RUN/state.json" 2>/dev/null || true)
if [ -z "$STAGE2" ] || [ "${done_iterations:-0}" -lt "${stage1:-0}" ]; then
  run "$BRANDUBH" train --config "$CONFIG" --run "$RUN" "$@"
fi
if [ -n "$STAGE2" ]; then
  run "$BRANDUBH" train --config "$STAGE2" --run "$RUN" --force-config "$@"
fi
run "$BRANDUBH" export "$RUN" --out "${EXPORT_OUT:-models/brandubh-new.agent}" \
  --sims "${EXPORT_SIMS:-1600}" --algo "${EXPORT_ALGO:-puct}" --average "${EXPORT_AVERAGE:-1}" \
  --name "${EXPORT_NAME:-brandubh-new}"
