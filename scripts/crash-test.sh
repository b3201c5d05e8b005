#!/usr/bin/env bash
# Crash test (issue 9): `brandubh train` on configs/tiny.toml (30 iterations) is killed with
# SIGKILL at seeded random moments (after a random delay, while a replay chunk is being
# written, while a checkpoint is being written) and restarted each time; the run must
# finish with every chunk and checkpoint decoding, one metrics line per iteration, the
# iteration count never going back and no finished game lost.
#
# Usage: scripts/crash-test.sh [SEED] [KILLS]     (defaults: 1 and 12)
# The test itself is crates/brandubh-cli/tests/crash.rs; it prints one line per kill with
# the phase the kill hit, read from the run directory.
set -euo pipefail
cd "$(dirname "$0")/.."
export BRANDUBH_CRASH_TEST=1
export BRANDUBH_CRASH_SEED="${1:-1}"
export BRANDUBH_CRASH_KILLS="${2:-12}"
# --workspace keeps the feature set of the README test command, so nothing is rebuilt.
exec cargo test --workspace --release --test crash -- --nocapture
