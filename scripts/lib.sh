# Shell functions the scripts share. A script starts with `. "$(dirname "$0")/lib.sh"`, which
# sets bash's strict mode and changes to the repository root.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# Sets BRANDUBH to a release build of this checkout, built now, unless the caller set it.
brandubh_binary() {
  if [ -z "${BRANDUBH:-}" ]; then
    cargo build --release --quiet --workspace
    BRANDUBH=./target/release/brandubh
  fi
}

# need_args MIN USAGE "$@": exits with status 2 and `usage: USAGE` on stderr unless at
# least MIN arguments follow.
need_args() {
  local min=$1 usage=$2
  shift 2
  if [ $# -lt "$min" ]; then
    echo "usage: $usage" >&2
    exit 2
  fi
}

# series_settings THREADS: sets `matches`, `seed` and `threads` of match_series from MATCHES
# (default 100), SEED (2026) and THREADS (default THREADS), and BRANDUBH (brandubh_binary);
# `reports` starts empty.
series_settings() {
  reports=()
  matches=${MATCHES:-100}
  seed=${SEED:-2026}
  threads=${THREADS:-$1}
  brandubh_binary
}

# match_series A B FILE [OPTION ...]: `brandubh match A B` over the caller's `matches`,
# `seed` and `threads`, with the options given, its --json report written to FILE and FILE
# added to `reports`.
match_series() {
  local a=$1 b=$2 file=$3
  shift 3
  echo "+ brandubh match $a $b $* --matches $matches --seed $seed --threads $threads --json" >&2
  "$BRANDUBH" match "$a" "$b" "$@" --matches "$matches" --seed "$seed" --threads "$threads" \
    --json >"$file"
  reports+=("$file")
}

# Prints the CPU's name as benchmarks and match reports record it (model, family and model
# numbers, logical CPUs): `brandubh bench --cpu`, the one place it is computed. Call
# brandubh_binary first.
cpu_name() {
  "$BRANDUBH" bench --cpu
}

# Sets `out` to the folder OUT names (created if missing), or to a temporary folder that is
# removed when the script exits.
out_dir() {
  if [ -n "${OUT:-}" ]; then
    out=$OUT
    mkdir -p "$out"
  else
    out=$(mktemp -d)
    trap 'rm -rf "$out"' EXIT
  fi
}

# Sets `opentafl_cp` to OpenTafl's classes: OPENTAFL_DIR's OpenTafl.jar (a release folder), or
# a source checkout of jslater89/OpenTafl compiled into $out/opentafl-classes (call out_dir
# first) with its lib/lanterna.jar and the jars in OPENTAFL_LIBS (default: Debian's
# libjline2-java, libini4j-java and libjsonp-java under /usr/share/java).
opentafl_classpath() {
  : "${OPENTAFL_DIR:?set OPENTAFL_DIR to an OpenTafl release folder or source checkout}"
  for tool in java javac; do
    command -v "$tool" >/dev/null || { echo "${0##*/}: $tool not found" >&2; exit 2; }
  done
  if [ -f "$OPENTAFL_DIR/OpenTafl.jar" ]; then
    opentafl_cp="$OPENTAFL_DIR/OpenTafl.jar"
  elif [ -d "$OPENTAFL_DIR/src/com/manywords/softworks/tafl" ]; then
    local libs=${OPENTAFL_LIBS:-/usr/share/java/jline2.jar:/usr/share/java/ini4j.jar:/usr/share/java/javax.json.jar:/usr/share/java/javax.json-api.jar}
    opentafl_cp="$out/opentafl-classes:$OPENTAFL_DIR/lib/lanterna.jar:$libs"
    if [ ! -d "$out/opentafl-classes" ]; then
      echo "+ compiling OpenTafl from $OPENTAFL_DIR" >&2
      find "$OPENTAFL_DIR/src" -name '*.java' >"$out/sources.txt"
      # Java 9+ hides two JDK internals OpenTafl 0.4.8 imports.
      javac -nowarn -encoding UTF-8 -d "$out/opentafl-classes" -cp "$opentafl_cp" \
        --add-exports java.xml/com.sun.org.apache.xerces.internal.impl.dv.util=ALL-UNNAMED \
        --add-exports java.base/sun.net=ALL-UNNAMED @"$out/sources.txt" 2>"$out/javac.log" \
        || { cat "$out/javac.log" >&2; exit 1; }
    fi
  else
    echo "${0##*/}: $OPENTAFL_DIR has neither OpenTafl.jar nor src/com/manywords" >&2
    exit 2
  fi
}

# rules_series AGENT: plays the series the referee comparisons replay, `brandubh match` of
# AGENT against alphabeta:3 and against itself over the caller's `matches`, `seed` and
# `threads` into $out (call out_dir and brandubh_binary first), adding each --json report to
# `reports`.
rules_series() {
  local agent=$1 opponent report
  for opponent in alphabeta:3 "$agent"; do
    report="$out/$(echo "$opponent" | tr -c 'a-z0-9\n' '_').json"
    echo "+ brandubh match $agent $opponent --matches $matches --seed $seed --json" >&2
    "$BRANDUBH" match "$agent" "$opponent" --matches "$matches" --seed "$seed" \
      --threads "$threads" --json >"$report"
    reports+=("$report")
  done
}

# replay_reports FILE REPORT...: every game of the `brandubh match --json` reports replayed
# by `brandubh replay` (RULES.md's judgement of each move), one JSON line a game,
# `{"id":"REPORT/MATCH.GAME","plies":[...]}`, written to FILE. Needs jq.
replay_reports() {
  local games=$1 report name id moves
  shift
  : >"$games"
  for report in "$@"; do
    name=$(basename "$report" .json)
    jq -r '.match_records[] | .index as $m | .moves | to_entries[] | "\($m).\(.key) \(.value)"' \
      "$report" | while read -r id moves; do
      # shellcheck disable=SC2086 # the moves are separate arguments
      "$BRANDUBH" replay $moves | jq -cs --arg id "$name/$id" '{id: $id, plies: .}' >>"$games"
    done
  done
  echo "# $(wc -l <"$games") games from $*" >&2
}
