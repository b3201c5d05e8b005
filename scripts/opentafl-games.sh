#!/usr/bin/env bash
# Plays the engine against OpenTafl's own AI in OpenTafl's own program (its terminal
# interface, driven under tmux as a player would drive it) and checks every game against
# RULES.md move by move (issue 70): for each game, the moves as OpenTafl's `history` lists
# them, OpenTafl's result, and RULES.md's judgement of the same moves (`brandubh replay`):
# where RULES.md ends the game, with which winner, and whether that differs from OpenTafl's
# result to the engine's disadvantage.
#
#   OPENTAFL_DIR=DIR scripts/opentafl-games.sh [attackers|defenders] [GAMES]
#
# The engine plays the side named (default attackers, i.e. Black) against OpenTafl's AI,
# GAMES games (default 10), no clock, the agent's own simulations a move. OPENTAFL_DIR and
# OPENTAFL_LIBS as for scripts/opentafl-rules.sh. The script installs the engine as
# docs/guide/opentafl.md says (engines/brandubh-zero/, user-rules/brandubh-2.5w.otr) and
# writes OpenTafl's settings.ini (keeping a copy of the old one beside it) with the variant
# Brandubh 2.5W (VARIANT, its number in OpenTafl's variant list: 11 in 0.4.8.0b with one
# user variant), the sides, and AI think time THINK seconds (3). Environment: AGENT
# (models/brandubh-v5.agent), OUT (a folder for the games; default a temporary one),
# BRANDUBH (the binary; default a release build). Needs tmux, java, javac and jq.
# Prints one line a game and a summary; the games go to $OUT/games.txt.
. "$(dirname "$0")/lib.sh"
side=${1:-attackers}
games=${2:-10}
case $side in
  attackers) attacker=4 defender=2 ;;
  defenders) attacker=2 defender=4 ;;
  *) echo "usage: scripts/opentafl-games.sh [attackers|defenders] [GAMES]" >&2; exit 2 ;;
esac
for tool in tmux jq; do
  command -v "$tool" >/dev/null || { echo "opentafl-games.sh: $tool not found" >&2; exit 2; }
done
agent=${AGENT:-models/brandubh-v5.agent}
brandubh_binary
# OpenTafl runs in OPENTAFL_DIR (it finds engines/ and user-rules/ there): absolute paths.
OPENTAFL_DIR=$(realpath "${OPENTAFL_DIR:?set OPENTAFL_DIR to an OpenTafl release folder or source checkout}")
BRANDUBH=$(realpath "$BRANDUBH")
out_dir
out=$(realpath "$out")
opentafl_classpath

# The engine and the variant, as the guide installs them.
engine_dir="$OPENTAFL_DIR/engines/brandubh-zero"
mkdir -p "$engine_dir" "$OPENTAFL_DIR/user-rules"
cp "$BRANDUBH" "$engine_dir/brandubh"
cp "$agent" "$engine_dir/brandubh-v5.agent"
cp docs/opentafl/brandubh.ini "$engine_dir/"
cp docs/opentafl/brandubh-2.5w.otr "$OPENTAFL_DIR/user-rules/"
log="$engine_dir/brandubh.log"
touch "$log"
if [ -f "$OPENTAFL_DIR/settings.ini" ]; then
  cp "$OPENTAFL_DIR/settings.ini" "$OPENTAFL_DIR/settings.ini.before-opentafl-games"
fi
cat >"$OPENTAFL_DIR/settings.ini" <<EOF
[display]
shrinklarge = true
fontsize = 14
destinationcoord = true

[config]
attacker = $attacker
attackerfile = $([ "$attacker" = 4 ] && echo "$engine_dir/brandubh.ini")
defender = $defender
defenderfile = $([ "$defender" = 4 ] && echo "$engine_dir/brandubh.ini")
variant = ${VARIANT:-11}
thinktime = ${THINK:-3}
analysis = false
analysisfile = 

[clock]
maintime = 0
overtime = 0
otcount = 0
increment = 0
EOF

session="opentafl-games-$$"
tmux kill-session -t "$session" 2>/dev/null || true
# Tall, so that `history` shows every move of a long game.
tmux new-session -d -s "$session" -x 130 -y 160 \
  "cd '$OPENTAFL_DIR' && java -cp '$opentafl_cp' com.manywords.softworks.tafl.OpenTafl --fallback"
cleanup_out=$([ -z "${OUT:-}" ] && echo "$out" || true)
trap 'tmux kill-session -t "$session" 2>/dev/null; [ -z "$cleanup_out" ] || rm -rf "$cleanup_out"' EXIT
keys() { tmux send-keys -t "$session" "$@"; sleep 1; }
screen() { tmux capture-pane -t "$session" -p; }
sleep 8
screen | grep -q "< Play >" || { screen >&2; echo "opentafl-games.sh: no main menu" >&2; exit 1; }

finished() { grep -c "game finished" "$log" || true; }
transcript="$out/games.txt"
: >"$transcript"
differing=0
declare -A tally
for ((g = 1; g <= games; g++)); do
  before=$(finished)
  keys Enter # < Play >
  waited=0
  until [ "$(finished)" -gt "$before" ]; do
    sleep 2
    waited=$((waited + 2))
    if [ $waited -gt 1800 ]; then
      screen >&2
      echo "opentafl-games.sh: game $g not finished after 30 minutes" >&2
      exit 1
    fi
  done
  sleep 2
  result=$(screen | grep -oE "(Attackers|Defenders) win!|[Dd]raw[^│]*" | tail -1 || true)
  keys "history" Enter
  sleep 1
  # OpenTafl's record: "N. MOVE [MOVE]" lines, moves as [K]from-to[xcaptures].
  moves=$(screen | grep -oE '│[0-9]+\. [^│]*' | sed -E 's/^│[0-9]+\. //' \
    | grep -oE '[a-g][1-7]-[a-g][1-7]' | paste -sd' ')
  keys "quit" Enter
  plies=$(wc -w <<<"$moves")
  # RULES.md's judgement of the same moves: the first ply at which it ends the game.
  # shellcheck disable=SC2086 # the moves are separate arguments
  # (The replay stops with an error at the first move after RULES.md's end.)
  rules_end=$({ "$BRANDUBH" replay $moves 2>/dev/null || true; } \
    | jq -rs 'map(select(.outcome != null))[0] // empty
              | "\(.ply) \(.outcome.winner) \(.outcome.reason)"')
  case $result in
    Attackers*) host_winner=black ;;
    Defenders*) host_winner=white ;;
    *) host_winner=draw ;;
  esac
  ours=$([ "$side" = attackers ] && echo black || echo white)
  rules_winner=$(awk '{print $2}' <<<"$rules_end")
  verdict="same result"
  if [ -z "$rules_end" ]; then
    verdict="RULES.md: unfinished after $plies plies"
  elif [ "$rules_winner" != "$host_winner" ]; then
    verdict="RULES.md differs: $rules_end"
    if [ "$rules_winner" = "$ours" ]; then
      verdict="$verdict (to the engine's disadvantage)"
      differing=$((differing + 1))
    fi
  elif [ "$(awk '{print $1}' <<<"$rules_end")" != "$plies" ]; then
    verdict="same winner; RULES.md ends it sooner: $rules_end"
  fi
  tally["$host_winner"]=$((${tally[$host_winner]:-0} + 1))
  line="game $g: engine as $side, OpenTafl: ${result:-no result} after $plies plies; $verdict"
  echo "$line"
  { echo "# $line"; echo "$moves"; echo; } >>"$transcript"
done
echo "engine as $side: OpenTafl's results: Black ${tally[black]:-0}, White ${tally[white]:-0}, draws ${tally[draw]:-0}; $differing of $games games whose result RULES.md gives the engine while OpenTafl does not"
echo "games: $transcript" >&2
