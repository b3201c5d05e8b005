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
