#!/usr/bin/env bash
# Which openings each agent wins as Black (issue 15): reads the `--json` reports of
# `brandubh match` series played from the same seeded openings against the same opponent
# (e.g. the files `scripts/strength.sh` leaves in OUT), agent A in each, and prints per
# report its Black wins, then how many openings all of them won as Black, none of them,
# and the best of them on each opening (how many Black games an agent that always played
# the best of these would win).
#
#   scripts/openings.sh REPORT.json REPORT.json ...
#
# Reports of different seeds or match counts are refused: their openings differ.
#
# The table is `brandubh report openings` (docs/guide/evaluation.md); this script builds the
# binary (BRANDUBH overrides it) and runs it on the reports, named from the current folder.
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: scripts/openings.sh REPORT.json [REPORT.json ...]" >&2
  exit 2
fi
if [ -z "${BRANDUBH:-}" ]; then
  root=$(cd "$(dirname "$0")/.." && pwd)
  cargo build --release --quiet --workspace --manifest-path "$root/Cargo.toml"
  BRANDUBH=${CARGO_TARGET_DIR:-$root/target}/release/brandubh
fi
exec "$BRANDUBH" report openings "$@"
