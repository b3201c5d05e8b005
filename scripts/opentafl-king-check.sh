#!/usr/bin/env bash
# Checks the rules crate's King-capture variants against OpenTafl's own rules engine
# (issue 70): generates Black moves next to the King (the rules crate's example
# king_cases), has OpenTafl (scripts/opentafl/KingCheck.java) judge each under its King
# strengths ks:c, ks:w, ks:s and ks:m, and writes the verdicts to
# crates/brandubh-rules/tests/data/opentafl-king.tsv, which the rules tests replay
# (rule_7_variants_capture_exactly_where_opentafl_does).
#
#   OPENTAFL_DIR=DIR scripts/opentafl-king-check.sh [CASES [SEED]]
#
# OPENTAFL_DIR and OPENTAFL_LIBS as for scripts/opentafl-rules.sh (a release folder with
# OpenTafl.jar, or a source checkout compiled here). CASES (3000) and SEED (70) must match
# the test's count when the file is replaced.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${OPENTAFL_DIR:?set OPENTAFL_DIR to an OpenTafl release folder or source checkout}"
cases=${1:-3000}
seed=${2:-70}
. scripts/lib.sh
out_dir
opentafl_classpath
mkdir -p "$out/harness"
javac -nowarn -d "$out/harness" -cp "$opentafl_cp" scripts/opentafl/RulesCheck.java \
  scripts/opentafl/KingCheck.java
cargo run -q --release -p brandubh-rules --example king_cases -- "$cases" "$seed" >"$out/cases.tsv"
rules=$(grep -o 'dim:7[^"]*' crates/brandubh-agent/src/otn.rs | head -1)
data=crates/brandubh-rules/tests/data/opentafl-king.tsv
{
  echo "# OpenTafl's own rules engine on King captures, by scripts/opentafl-king-check.sh"
  echo "# ($cases cases of the rules crate's example king_cases, seed $seed; rules: $rules"
  echo "# with each ks). Columns: position (Black to move), move, then 1 where OpenTafl takes"
  echo "# the King off the board after the move under ks:c, ks:w, ks:s, ks:m."
  java -cp "$opentafl_cp:$out/harness" KingCheck "$out/cases.tsv" "$rules" c w s m
} >"$data.tmp"
mv "$data.tmp" "$data"
echo "wrote $data ($(grep -vc '^#' "$data") cases)" >&2
