#!/usr/bin/env bash
# An ablation at equal wall time (issue 15): a baseline configuration and one or more changed
# ones train from scratch side by side for the same number of minutes, on the same machine at
# the same time (so that whatever else runs there slows all alike), then each changed run's
# last network meets the baseline's head to head, and every run plays the fixed opponents.
# Results go to docs/research/ablations.md by hand.
#
#   scripts/ablate.sh MINUTES BASELINE CHANGED [CHANGED ...]
#   scripts/ablate.sh 30 configs/ablations/ablation-discount.toml configs/ablations/ablation-sims.toml
#
# The ablation configs and what each one tested: configs/ablations/README.md.
#
# The rule, fixed before any game is played: the head to head is a sequential probability
# ratio test (`brandubh match --sprt`, docs/guide/sprt.md) on the match score, H0 "the
# changed run is SPRT's ELO0 above the baseline" against H1 "ELO1 above" (default 0,30 with
# alpha = beta = 0.05), at most MATCHES matches of the same seeded series the fixed rule
# played. A change is kept only if the test accepts H1; H0 or the maximum (inconclusive)
# keeps the baseline. The summary says after how many matches the test decided and how many
# matches of the fixed series that saved. The matches against the fixed opponents stay a
# fixed series of MATCHES each: they describe the runs (both colours, how games were won),
# they decide nothing. SPRT= (empty) plays the head to head as a fixed series too.
#
# The runs share the machine: set `selfplay.threads = 1` in every config on a 2-core
# machine (two runs get half of it each, three a third each, so give three runs 1.5 times
# the minutes of a pair for the same work). Environment: RUNS (runs/ablation; each run goes
# to RUNS/NAME, NAME from its config, and must not exist yet), MATCHES (100), SEED (2026),
# PLAY (the search every network plays with, appended to ckpt:CHECKPOINT; default
# @algo=puct@sims=400@solver=yes, so the comparison is of the training and not of the
# search), OPPONENTS ("alphabeta:2 alphabeta:3"), THREADS (0 = every core), SPRT (the head to head's test,
# ELO0,ELO1[,ALPHA,BETA]; default 0,30; empty for a fixed series), BRANDUBH (the binary;
# default a release build of this checkout).
. "$(dirname "$0")/lib.sh"
need_args 3 "scripts/ablate.sh MINUTES BASELINE CHANGED [CHANGED ...]" "$@"
minutes=$1
shift
configs=("$@")
case $minutes in
  '' | *[!0-9]*)
    echo "MINUTES must be a whole number, got '$minutes'" >&2
    exit 2
    ;;
esac
runs=${RUNS:-runs/ablation}
play=${PLAY:-@algo=puct@sims=400@solver=yes}
read -r -a opponents <<<"${OPPONENTS:-alphabeta:2 alphabeta:3}"
sprt=${SPRT-0,30}
head_rule=()
[ -z "$sprt" ] || head_rule=(--sprt "$sprt")
series_settings 0
dirs=()
for config in "${configs[@]}"; do
  [ -f "$config" ] || { echo "no such config: $config" >&2; exit 2; }
  name=$(sed -n 's/^name *= *"\(.*\)"/\1/p' "$config" | head -1)
  [ -n "$name" ] || { echo "$config: no name = \"...\" line" >&2; exit 2; }
  dir="$runs/$name"
  [ ! -e "$dir" ] || { echo "$dir exists: remove it or set RUNS" >&2; exit 2; }
  dirs+=("$dir")
done
mkdir -p "$runs"
cpu=$(cpu_name)
echo "# ablation: ${configs[*]}, $minutes min each, side by side, $cpu" >&2
pids=()
for i in "${!configs[@]}"; do
  echo "+ brandubh train --config ${configs[$i]} --run ${dirs[$i]} (for $minutes min)" >&2
  timeout --signal=INT "${minutes}m" "$BRANDUBH" train --quiet --config "${configs[$i]}" \
    --run "${dirs[$i]}" >"${dirs[$i]}.log" 2>&1 &
  pids+=($!)
done
for pid in "${pids[@]}"; do
  # 124: stopped by the time limit, as planned; the last complete iteration is kept.
  wait "$pid" || {
    rc=$?
    [ "$rc" -eq 124 ] || echo "a run ended with status $rc before its time: see its .log" >&2
  }
done
out="$runs/reports"
mkdir -p "$out"
# Each run's network is the checkpoint of its last complete iteration (state.json), not
# `run:DIR`'s newest checkpoint: a stop during an iteration's evaluation games leaves that
# iteration's checkpoint written but the iteration incomplete (no metrics line).
nets=()
for dir in "${dirs[@]}"; do
  iter=$(sed -n 's/.*"iteration": *\([0-9]*\).*/\1/p' "$dir/state.json" 2>/dev/null | head -1)
  [ -n "$iter" ] || { echo "$dir: no complete iteration (state.json): see $dir.log" >&2; exit 1; }
  nets+=("ckpt:$dir/checkpoints/iter-$(printf %06d "$iter")$play")
done
base=${nets[0]}
for i in "${!dirs[@]}"; do
  [ "$i" -gt 0 ] || continue
  match_series "${nets[$i]}" "$base" "$out/head-to-head-$i.json" "${head_rule[@]}"
done
for i in "${!dirs[@]}"; do
  for o in "${opponents[@]}"; do
    match_series "${nets[$i]}" "$o" "$out/$i-${o//[^a-z0-9]/_}.json"
  done
done
# The head to heads as `brandubh match` prints them (with the test's verdict), and the
# rule's decision; then per run its training totals and its matches against the opponents.
for i in "${!dirs[@]}"; do
  [ "$i" -gt 0 ] || continue
  h="$out/head-to-head-$i.json"
  "$BRANDUBH" report show "$h"
  if [ -n "$sprt" ]; then
    if grep -q '"verdict":"h1"' "$h"; then echo "rule: keep the change"; else echo "rule: keep the baseline"; fi
  fi
  echo
done
for i in "${!dirs[@]}"; do
  "$BRANDUBH" status --run "${dirs[$i]}" | sed -n '1p;/^iteration/p'
  run_reports=()
  for o in "${opponents[@]}"; do run_reports+=("$out/$i-${o//[^a-z0-9]/_}.json"); done
  "$BRANDUBH" report opponents "${run_reports[@]}"
  echo
done
