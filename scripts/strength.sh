#!/usr/bin/env bash
# The strength benchmark that does not move (issue 15): AGENT plays 100 two-game matches
# from the seeded openings against each fixed opponent, then one table sums them up:
# matches W/D/L, games won as White and as Black (and as Black without repetition wins),
# and how every game was won, for both sides.
#
#   scripts/strength.sh AGENT [OPPONENT ...]
#
# AGENT and OPPONENT are `brandubh match` specs (an .agent file, run:DIR, alphabeta:3, ...).
# Opponents default to alphabeta:3 alphabeta:4 alphabeta:1s. Environment: MATCHES (100),
# SEED (2026), THREADS (0 = every core), OUT (a folder for each match's --json report;
# default a temporary folder, removed afterwards), BRANDUBH (the binary; default a release
# build of this checkout). Time-limited players (alphabeta:1s, @time=...) depend on the
# machine and on its load: run them on an idle machine and name the CPU with the figures.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ]; then
  echo "usage: scripts/strength.sh AGENT [OPPONENT ...]" >&2
  exit 2
fi
agent=$1
shift
opponents=("$@")
[ ${#opponents[@]} -gt 0 ] || opponents=(alphabeta:3 alphabeta:4 alphabeta:1s)
matches=${MATCHES:-100}
seed=${SEED:-2026}
threads=${THREADS:-0}
. scripts/lib.sh
brandubh_binary
out_dir
cpu=$(cpu_name)
echo "# $agent: $matches matches per opponent, seed $seed, $(nproc) cores, ${cpu:-unknown CPU}" >&2
reports=()
for i in "${!opponents[@]}"; do
  opponent=${opponents[$i]}
  report="$out/$i.json"
  echo "+ brandubh match $agent $opponent --matches $matches --seed $seed --threads $threads --json" >&2
  "$BRANDUBH" match "$agent" "$opponent" --matches "$matches" --seed "$seed" \
    --threads "$threads" --json >"$report"
  reports+=("$report")
done
python3 - "${reports[@]}" <<'EOF'
import json, sys

def by(w):
    names = [("king_escaped", "escape"), ("king_captured", "capture"),
             ("encirclement", "encirclement"), ("repetition", "repetition"),
             ("no_moves", "no moves")]
    parts = [f"{label} {w.get(key, 0)}" for key, label in names if w.get(key, 0)]
    return ", ".join(parts) or "none"

print("| opponent | matches W/D/L | won as White | won as Black | as Black without repetition "
      "| agent's wins as White | agent's wins as Black | opponent's wins as White "
      "| opponent's wins as Black | unfinished | s |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for path in sys.argv[1:]:
    with open(path) as f:
        r = json.load(f)
    g, rec, n = r["games"], r["record"], r["matches"]
    black = g["a_wins_as_black"]
    black_rep = g["a_wins_as_black_by"]["repetition"]
    print(f"| {r['b']} | {rec['wins']}/{rec['draws']}/{rec['losses']} "
          f"| {g['a_wins_as_white']}/{n} | {black}/{n} | {black - black_rep}/{n} "
          f"| {by(g['a_wins_as_white_by'])} | {by(g['a_wins_as_black_by'])} "
          f"| {by(g['b_wins_as_white_by'])} | {by(g['b_wins_as_black_by'])} "
          f"| {g['unfinished']} | {r['seconds']:.0f} |")
EOF
