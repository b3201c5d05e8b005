#!/usr/bin/env bash
# The game's balance at increasing strength (issue 15): alpha-beta against itself at each
# depth, 100 two-game matches from the seeded openings, and how often each colour wins and
# how. With equal players on both sides, White's share of the games is the game's White
# advantage at that level of play.
#
#   scripts/balance.sh [DEPTH ...]        (default: 2 3 4 5)
#
# A DEPTH may also be a time a move, as `brandubh match` takes it: `scripts/balance.sh 1s`
# plays `alphabeta:1s` against itself (give it an idle machine and THREADS=2, about an hour
# on 2 cores; the depth it reaches, and so the figures, then depend on the machine).
#
# Environment: MATCHES (100), SEED (2026), THREADS (1), OUT (a folder for each match's
# --json report; default a temporary folder, removed afterwards), BRANDUBH (the binary; default a
# release build of this checkout). Depth-limited alpha-beta is deterministic, so the
# figures do not depend on the machine or its load; only the seconds do.
. "$(dirname "$0")/lib.sh"
depths=("$@")
[ ${#depths[@]} -gt 0 ] || depths=(2 3 4 5)
series_settings 1
out_dir
for d in "${depths[@]}"; do
  match_series "alphabeta:$d" "alphabeta:$d" "$out/$d.json"
done
"$BRANDUBH" report colours "${reports[@]}"
