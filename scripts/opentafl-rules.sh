#!/usr/bin/env bash
# Which OTN rules string makes OpenTafl the fairest referee of RULES.md games (issue 53):
# plays (or reads) `brandubh match --json` series, replays every game with `brandubh
# replay` (RULES.md's judgement of each move), and has OpenTafl's own rules engine judge
# the same moves under each candidate rules string (scripts/opentafl/RulesCheck.java).
# Prints one row per rules string: positions where OpenTafl lists other legal moves,
# refuses the move, leaves another board (captures) or ends the game otherwise (end); how
# many games have such a position; and the kinds of end differences. Examples of each kind
# go to stderr.
#
#   OPENTAFL_DIR=DIR scripts/opentafl-rules.sh [REPORT.json ...]
#
# OPENTAFL_DIR: an OpenTafl release folder (OpenTafl.jar) or a source checkout of
# jslater89/OpenTafl, compiled here with lib/lanterna.jar and the jars in OPENTAFL_LIBS
# (default: Debian's libjline2-java, libini4j-java and libjsonp-java under /usr/share/java).
# Without reports it plays the default series: the shipped agent against alphabeta:3 and
# against itself, MATCHES (100) two-game matches each, seed SEED (53). Environment: RULES
# (a file of candidate strings, one a line; default scripts/opentafl/candidates.txt),
# EXAMPLES (3 per kind), THREADS (0 = every core), OUT (a folder to keep the reports and
# games.jsonl; default a temporary one), BRANDUBH (the binary; default a release build).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${OPENTAFL_DIR:?set OPENTAFL_DIR to an OpenTafl release folder or source checkout}"
rules_file=${RULES:-scripts/opentafl/candidates.txt}
matches=${MATCHES:-100}
seed=${SEED:-53}
threads=${THREADS:-0}
examples=${EXAMPLES:-3}
agent=agent:models/brandubh-v5.agent
. scripts/lib.sh
brandubh_binary
for tool in java javac jq; do
  command -v "$tool" >/dev/null || { echo "opentafl-rules.sh: $tool not found" >&2; exit 2; }
done
out_dir

opentafl_classpath
mkdir -p "$out/harness"
javac -nowarn -d "$out/harness" -cp "$opentafl_cp" scripts/opentafl/RulesCheck.java

# The games.
reports=("$@")
if [ ${#reports[@]} -eq 0 ]; then
  rules_series "$agent"
fi
games="$out/games.jsonl"
replay_reports "$games" "${reports[@]}"
java -cp "$opentafl_cp:$out/harness" RulesCheck "$games" "$rules_file" "$examples"
