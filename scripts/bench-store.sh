#!/usr/bin/env bash
# Distributed self-play against in-process self-play, same machine, same config, same
# network (iteration 0: both roles start from the config's seeded initial weights), in
# interleaved rounds:
#   all     `brandubh train --role all`, one iteration: games/s of its self-play phase
#           (metrics.jsonl: selfplay_games / selfplay_s);
#   actor   `brandubh train --role actor --chunks K` through the store, the same number of
#           games (K chunks of games_per_iteration/8): games/s from its summary line;
#   ingest  a fresh learner whose first iteration finds those K chunks waiting: its
#           gather time (selfplay_s of that iteration: list, get, check and replay every
#           move, copy into the cache, record) gives chunks/s and positions/s.
# The store is a directory (file://) unless STORE is set (e.g. STORE=s3://bucket/bench with
# the AWS_* variables of docs/guide/distributed.md).
#
# GAMES=N overrides games_per_iteration (more games, steadier figures).
#
# Usage: scripts/bench-store.sh [CONFIG] [ROUNDS]     (defaults: configs/quick.toml, 2)
set -euo pipefail
cd "$(dirname "$0")/.."
config_in="${1:-configs/quick.toml}"
rounds="${2:-2}"
cargo build --workspace --release --bin brandubh 2>/dev/null
bin=target/release/brandubh
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

# One iteration, no evaluation matches: only self-play and ingest are compared. The bench's
# config extends the given one (docs/guide/training.md, "extends").
config="$work/bench.toml"
{
  echo "extends = \"$(realpath "$config_in")\""
  echo "iterations = 1"
  echo "[evaluation]"
  echo "matches = 0"
  if [ -n "${GAMES:-}" ]; then
    echo "[selfplay]"
    echo "games_per_iteration = $GAMES"
  fi
} >"$config"
cpu=$("$bin" bench --cpu)

metric() { # FILE KEY: the number KEY of the last metrics line
  tail -n 1 "$1" | sed -n "s/.*\"$2\": *\([0-9.eE+-]*\).*/\1/p"
}

for r in $(seq 1 "$rounds"); do
  # all
  $bin train --config "$config" --run "$work/all-$r" --quiet 2>"$work/all-$r.log"
  if [ "$r" -eq 1 ]; then
    # The iteration's games, as the run played them; the actor plays as many, in chunks of an
    # eighth of an iteration (1 to 64 games, as brandubh-train cuts them).
    games=$(metric "$work/all-$r/metrics.jsonl" selfplay_games)
    per_chunk=$(( games / 8 )); (( per_chunk < 1 )) && per_chunk=1; (( per_chunk > 64 )) && per_chunk=64
    chunks=$(( (games + per_chunk - 1) / per_chunk ))
    echo "config $config_in: $games games per iteration, $per_chunk per chunk, $chunks chunks; CPU: $cpu"
    printf "%-6s %12s %12s %12s %14s\n" round "all games/s" "actor g/s" "chunks/s" "positions/s"
  fi
  all=$(awk -v g="$(metric "$work/all-$r/metrics.jsonl" selfplay_games)" \
    -v s="$(metric "$work/all-$r/metrics.jsonl" selfplay_s)" 'BEGIN { print g / s }')

  # actor: a learner publishes iteration 0 and is stopped; the actor plays alone.
  store="${STORE:-file://$work/store}-$r"
  local_store="${store#file://}"
  # A short lease: the learner is killed, and the next one may start once it runs out.
  $bin train --role learner --config "$config" --run "$store" --cache "$work/l1-$r" --lease-s 3 --quiet 2>"$work/l1-$r.log" &
  learner=$!
  if [[ "$store" == file://* ]]; then
    until [ -f "$local_store/latest" ]; do sleep 0.2; done
  else
    until $bin status --run "$store" 2>/dev/null | grep -q "actors play network 0"; do sleep 0.5; done
  fi
  kill "$learner"; wait "$learner" 2>/dev/null || true
  lease_out=$(( $(date +%s) + 4 ))
  $bin train --role actor --run "$store" --actor-id bench --chunks "$chunks" --cache "$work/a-$r" --quiet 2>"$work/a-$r.log"
  actor=$(sed -n 's/.*uploaded in .* (\([0-9.]*\) games\/s).*/\1/p' "$work/a-$r.log")

  # ingest: a fresh learner finds the chunks waiting (once the killed one's lease ran out).
  while [ "$(date +%s)" -lt "$lease_out" ]; do sleep 0.2; done
  $bin train --role learner --run "$store" --cache "$work/l2-$r" --quiet 2>"$work/l2-$r.log"
  if [[ "$store" == file://* ]]; then m="$local_store/metrics.jsonl"; else
    m="$work/l2-$r/metrics.jsonl"; fi
  s=$(metric "$m" selfplay_s); p=$(metric "$m" positions)
  read -r cps pps < <(awk -v s="$s" -v c="$chunks" -v p="$p" 'BEGIN { printf "%.0f %.0f\n", c / s, p / s }')
  printf "%-6s %12.2f %12.2f %12s %14s\n" "$r" "$all" "$actor" "$cps" "$pps"
done
