#!/usr/bin/env bash
# Where the hnefatafl-copenhagen project's referee judges Brandubh otherwise than RULES.md
# (issue 70): plays (or reads) `brandubh match --json` series, replays every game with
# `brandubh replay` (RULES.md's judgement of each move) and plays the same moves to the
# project's own engine, `hnefatafl-text-protocol` 6.4.1, with `play` and `final_status`,
# once with its default rules and once with `--repeat-moves`. Prints, for each, the plies
# judged alike and where each game is first judged otherwise, by kind (a refused move,
# other captures, another end), with examples. The driver is
# crates/brandubh-cli/tests/htp.rs (`replayed_games_judged_by_the_projects_referee`).
#
#   scripts/hnefatafl-rules.sh [REPORT.json ...]
#
# Without reports it plays the default series: the shipped agent against alphabeta:3 and
# against itself, MATCHES (100) two-game matches each, seed SEED (70). Environment: THREADS
# (0 = every core), OUT (a folder to keep the reports and games.jsonl; default a temporary
# one), BRANDUBH (the binary; default a release build). Needs jq and the project's binary
# installed as .ci/run does (or BRANDUBH_HNEFATAFL naming it).
. "$(dirname "$0")/lib.sh"
matches=${MATCHES:-100}
seed=${SEED:-70}
threads=${THREADS:-0}
agent=agent:models/brandubh-v5.agent
command -v jq >/dev/null || { echo "hnefatafl-rules.sh: jq not found" >&2; exit 2; }
brandubh_binary
out_dir
reports=("$@")
if [ ${#reports[@]} -eq 0 ]; then
  rules_series "$agent"
fi
games="$out/games.jsonl"
replay_reports "$games" "${reports[@]}"
BRANDUBH_HTP_REPLAY=$(realpath "$games") CI=1 cargo test --release -q -p brandubh-cli \
  --test htp replayed_games_judged_by_the_projects_referee -- --exact --nocapture |
  grep -E '^referee|^  '
