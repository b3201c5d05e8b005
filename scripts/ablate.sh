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
# search), OPPONENTS ("alphabeta:2 alphabeta:3"), SPRT (the head to head's test,
# ELO0,ELO1[,ALPHA,BETA]; default 0,30; empty for a fixed series), BRANDUBH (the binary;
# default a release build of this checkout).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 3 ]; then
  echo "usage: scripts/ablate.sh MINUTES BASELINE CHANGED [CHANGED ...]" >&2
  exit 2
fi
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
matches=${MATCHES:-100}
seed=${SEED:-2026}
play=${PLAY:-@algo=puct@sims=400@solver=yes}
read -r -a opponents <<<"${OPPONENTS:-alphabeta:2 alphabeta:3}"
sprt=${SPRT-0,30}
head_rule=()
[ -z "$sprt" ] || head_rule=(--sprt "$sprt")
. scripts/lib.sh
brandubh_binary
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
echo "# ablation: ${configs[*]}, $minutes min each, side by side, $(nproc) cores, ${cpu:-unknown CPU}" >&2
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
  iter=$(python3 -c 'import json, sys; print("%06d" % json.load(open(sys.argv[1]))["iteration"])' \
    "$dir/state.json" 2>/dev/null) || { echo "$dir: no complete iteration (state.json): see $dir.log" >&2; exit 1; }
  nets+=("ckpt:$dir/checkpoints/iter-$iter$play")
done
base=${nets[0]}
for i in "${!dirs[@]}"; do
  [ "$i" -gt 0 ] || continue
  a=${nets[$i]}
  echo "+ brandubh match $a $base ${head_rule[*]} --matches $matches --seed $seed" >&2
  "$BRANDUBH" match "$a" "$base" "${head_rule[@]}" --matches "$matches" --seed "$seed" \
    --json >"$out/head-to-head-$i.json"
done
for i in "${!dirs[@]}"; do
  for o in "${opponents[@]}"; do
    echo "+ brandubh match ${nets[$i]} $o --matches $matches --seed $seed" >&2
    "$BRANDUBH" match "${nets[$i]}" "$o" --matches "$matches" --seed "$seed" \
      --json >"$out/$i-${o//[^a-z0-9]/_}.json"
  done
done
python3 - "$out" "${#dirs[@]}" "${dirs[@]}" "${opponents[@]}" <<'EOF'
import json, os, re, sys

out, n = sys.argv[1], int(sys.argv[2])
dirs, opponents = sys.argv[3:3 + n], sys.argv[3 + n:]

def metrics(d):
    lines = []
    with open(os.path.join(d, "metrics.jsonl")) as f:
        for line in f:
            if line.strip():
                lines.append(json.loads(line))
    return lines

def report(path):
    with open(path) as f:
        return json.load(f)

for i in range(1, n):
    h = report(os.path.join(out, f"head-to-head-{i}.json"))
    g = h["games"]
    print(f"head to head ({h['matches']} matches): {h['a']} {h['record']['wins']}/"
          f"{h['record']['draws']}/{h['record']['losses']} against {h['b']} (games won as White "
          f"{g['a_wins_as_white']} against {g['b_wins_as_white']}, as Black "
          f"{g['a_wins_as_black']} against {g['b_wins_as_black']})")
    t = h.get("sprt")
    if t:
        verdict, keep = {"h1": ("H1 accepted", "keep the change"),
                         "h0": ("H0 accepted", "keep the baseline"),
                         "inconclusive": ("inconclusive at the maximum", "keep the baseline")
                         }[t["verdict"]]
        past = t["played_past_stop"]
        saved = t["max_matches"] - t["matches"] - past
        print(f"  SPRT [{t['elo0']:g}, {t['elo1']:g}] Elo, alpha {t['alpha']:g}, beta {t['beta']:g}: "
              f"{verdict} after {t['matches']} matches (LLR {t['llr']:.2f}, bounds "
              f"{t['lower']:.2f} and {t['upper']:.2f}): {keep}; {saved} of the fixed series' "
              f"{t['max_matches']} matches not played ({past} more finished after the stop)")
header = "| run | iterations | wall time (s) | self-play games | positions | White share of self-play wins, last iteration |"
header += "".join(f" vs {o}: matches W/D/L, won as Black (without repetition) |" for o in opponents)
print(header)
print("|---" * (6 + len(opponents)) + "|")
for i, d in enumerate(dirs):
    m = metrics(d)
    last = m[-1] if m else {}
    games = sum(x["selfplay_games"] for x in m)
    decided = last.get("white_win_rate", 0) + last.get("black_win_rate", 0)
    share = last.get("white_win_rate", 0) / decided if decided else float("nan")
    row = (f"| {os.path.basename(d)} | {len(m)} | {last.get('elapsed_s', 0):.0f} | {games} "
           f"| {last.get('total_positions', 0)} | {share:.2f} |")
    for o in opponents:
        r = report(os.path.join(out, f"{i}-{re.sub('[^a-z0-9]', '_', o)}.json"))
        rec, g = r["record"], r["games"]
        rep = g["a_wins_as_black_by"]["repetition"]
        row += (f" {rec['wins']}/{rec['draws']}/{rec['losses']}, {g['a_wins_as_black']} "
                f"({g['a_wins_as_black'] - rep}) |")
    print(row)
EOF
