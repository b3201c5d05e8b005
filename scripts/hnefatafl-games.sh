#!/usr/bin/env bash
# Plays the shipped agent against the hnefatafl-copenhagen project's built-in AI through
# that project's own engine, `hnefatafl-text-protocol` 6.4.1 (issue 70): the agent runs as
# `brandubh engine --protocol htp`, the AI chooses its moves with `generate_move`, the
# project's referee (`--repeat-moves`) judges every move with `play` and `final_status`,
# and the rules crate checks each move, each capture and the result against RULES.md. The
# driver is crates/brandubh-cli/tests/htp.rs (`games_against_the_projects_ai`).
#
#   scripts/hnefatafl-games.sh [GAMES [TRANSCRIPTS]]
#
# GAMES (20) games in pairs from the seeded balanced openings of `brandubh match` (SEED,
# default 70): the engine White in the first game of a pair, Black in the second, the
# agent file's search (1,600 simulations a move; SIMS to change it). Prints a table, one
# row a game, and a tally; writes the transcripts to TRANSCRIPTS (default
# docs/guide/hnefatafl-games.txt). Needs the project's binary installed as .ci/run does
# (or BRANDUBH_HNEFATAFL naming it).
. "$(dirname "$0")/lib.sh"
games=${1:-20}
transcripts=$(realpath -m "${2:-docs/guide/hnefatafl-games.txt}")
export BRANDUBH_HTP_GAMES=$games BRANDUBH_HTP_OUT=$transcripts BRANDUBH_HTP_SEED=${SEED:-70}
if [ -n "${SIMS:-}" ]; then export BRANDUBH_HTP_SIMS=$SIMS; fi
CI=1 cargo test --release -q -p brandubh-cli --test htp games_against_the_projects_ai -- \
  --exact --nocapture | grep -E '^\||^engine as '
echo "transcripts: $transcripts" >&2
