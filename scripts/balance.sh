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
# Environment: MATCHES (100), SEED (2026), THREADS (1), BRANDUBH (the binary; default a
# release build of this checkout). Depth-limited alpha-beta is deterministic, so the
# figures do not depend on the machine or its load; only the seconds do.
set -euo pipefail
cd "$(dirname "$0")/.."
depths=("$@")
[ ${#depths[@]} -gt 0 ] || depths=(2 3 4 5)
matches=${MATCHES:-100}
seed=${SEED:-2026}
threads=${THREADS:-1}
. scripts/lib.sh
brandubh_binary
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
reports=()
for d in "${depths[@]}"; do
  echo "+ brandubh match alphabeta:$d alphabeta:$d --matches $matches --seed $seed --json" >&2
  "$BRANDUBH" match "alphabeta:$d" "alphabeta:$d" --matches "$matches" --seed "$seed" \
    --threads "$threads" --json >"$out/$d.json"
  reports+=("$out/$d.json")
done
python3 - "${reports[@]}" <<'PY'
import json, sys

KEYS = ["king_escaped", "king_captured", "encirclement", "repetition", "no_moves"]
LABELS = ["escape", "capture", "encirclement", "repetition", "no moves"]

def add(a, b):
    return {k: a.get(k, 0) + b.get(k, 0) for k in KEYS}

def by(w):
    return ", ".join(f"{l} {w[k]}" for k, l in zip(KEYS, LABELS) if w[k]) or "none"

print("| players | games | White won | Black won | Black without repetition | unfinished "
      "| how White won | how Black won | mean plies |")
print("|---|---|---|---|---|---|---|---|---|")
for path in sys.argv[1:]:
    with open(path) as f:
        r = json.load(f)
    g = r["games"]
    white = add(g["a_wins_as_white_by"], g["b_wins_as_white_by"])
    black = add(g["a_wins_as_black_by"], g["b_wins_as_black_by"])
    w, b = sum(white.values()), sum(black.values())
    n = g["games"]
    print(f"| {r['a']} vs itself | {n} | {w} ({100 * w / n:.0f} %) | {b} ({100 * b / n:.0f} %) "
          f"| {b - black['repetition']} | {g['unfinished']} | {by(white)} | {by(black)} "
          f"| {r['mean_game_plies']:.1f} |")
PY
