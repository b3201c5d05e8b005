#!/usr/bin/env bash
# Checks rule 7 against the hnefatafl-copenhagen project's referee (issue 70): its own
# engine, `hnefatafl-text-protocol` 6.4.1, judges attackers' moves next to the King in
# positions of seeded random games (each played to it after the game so far: the protocol
# cannot set up a position), and the verdicts go to
# crates/brandubh-rules/tests/data/hnefatafl-king.tsv, which the rules tests replay
# (rule_7_captures_the_king_exactly_where_hnefatafl_copenhagen_does). The driver is
# crates/brandubh-cli/tests/htp.rs (`king_captures_judged_by_the_projects_referee`).
#
#   scripts/hnefatafl-king-check.sh [CASES [SEED]]
#
# CASES (3000) and SEED (70) must match the test's count when the file is replaced. Needs
# the project's binary installed as .ci/run does (or BRANDUBH_HNEFATAFL naming it).
. "$(dirname "$0")/lib.sh"
cases=${1:-3000}
seed=${2:-70}
data=crates/brandubh-rules/tests/data/hnefatafl-king.tsv
BRANDUBH_HTP_KING_CASES=$cases BRANDUBH_HTP_SEED=$seed CI=1 cargo test --release -q \
  -p brandubh-cli --test htp king_captures_judged_by_the_projects_referee -- --exact \
  --nocapture | grep -E $'^#|\t' >"$data.tmp"
mv "$data.tmp" "$data"
echo "wrote $data ($(grep -vc '^#' "$data") cases)" >&2
