#!/usr/bin/env bash
# Which openings each agent wins as Black (issue 15): reads the `--json` reports of
# `brandubh match` series played from the same seeded openings against the same opponent
# (e.g. the files `scripts/strength.sh` leaves in OUT), agent A in each, and prints per
# report its Black wins, then how many openings all of them won as Black, none of them,
# and the best of them on each opening (how many Black games an agent that always played
# the best of these would win).
#
#   scripts/openings.sh REPORT.json REPORT.json ...
#
# Reports of different seeds or match counts are refused: their openings differ.
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: scripts/openings.sh REPORT.json [REPORT.json ...]" >&2
  exit 2
fi
python3 - "$@" <<'PY'
import json, sys

def black_wins(path):
    """(seed, {opening index: whether A won its Black game}, agent A, opponent B)"""
    try:
        with open(path) as f:
            r = json.load(f)
        won = {}
        for m in r["match_records"]:
            won[m["index"]] = any(g["white"] == "b" and g["winner"] == "a" for g in m["games"])
        return r["seed"], won, r["a"], r["b"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        sys.exit(f"{path}: not a `brandubh match --json` report ({e})")

reports = [(p, *black_wins(p)) for p in sys.argv[1:]]
seed, won0 = reports[0][1], reports[0][2]
for path, s, won, _, _ in reports:
    if s != seed or set(won) != set(won0):
        sys.exit(f"{path}: seed {s} with {len(won)} matches, but {reports[0][0]} has seed "
                 f"{seed} with {len(won0)}: not the same openings")
print(f"| report | agent (A) | opponent (B) | Black games won (of {len(won0)}) |")
print("|---|---|---|---|")
for path, _, won, a, b in reports:
    print(f"| {path} | {a} | {b} | {sum(won.values())} |")
openings = sorted(won0)
by_all = [i for i in openings if all(r[2][i] for r in reports)]
by_none = [i for i in openings if not any(r[2][i] for r in reports)]
print()
print(f"won as Black by all {len(reports)}: {len(by_all)} openings")
print(f"won as Black by none: {len(by_none)} openings: {' '.join(map(str, by_none))}")
print(f"the best of them on each opening: {len(openings) - len(by_none)} Black games")
PY
