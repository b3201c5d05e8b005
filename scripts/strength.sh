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
. "$(dirname "$0")/lib.sh"
need_args 1 "scripts/strength.sh AGENT [OPPONENT ...]" "$@"
agent=$1
shift
opponents=("$@")
[ ${#opponents[@]} -gt 0 ] || opponents=(alphabeta:3 alphabeta:4 alphabeta:1s)
series_settings 0
out_dir
cpu=$(cpu_name)
echo "# $agent: $matches matches per opponent, seed $seed, $cpu" >&2
for i in "${!opponents[@]}"; do
  match_series "$agent" "${opponents[$i]}" "$out/$i.json"
done
"$BRANDUBH" report opponents "${reports[@]}"
