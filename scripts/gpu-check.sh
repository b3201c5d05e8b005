#!/usr/bin/env bash
# The gpu build on a machine with an NVIDIA GPU and its Vulkan driver (issue 56), in two
# steps: `prepare` here, `run` there (the device tool of docs/guide/gpu.md, or any machine).
#
#   scripts/gpu-check.sh prepare   # here: build the gpu binary, strip and xz it, fetch the Vulkan
#                                  # loader's .deb; all into .gpu-check/ (git-ignored)
#   scripts/gpu-check.sh run       # there, from the repository root with .gpu-check/ beside
#                                  # it: the gpu tests' checks through the binary, the bench
#                                  # on GPU and CPU side by side, 2 iterations of gpu.toml
#
# `run` takes under 10 minutes (each step has its own time limit, 555 s in all) and writes its logs to
# $OUT (or .gpu-check/out); its last lines are the figures for the README.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=.gpu-check

prepare() {
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
  cargo build --release --workspace --features brandubh-cli/gpu
  mkdir -p "$dir"
  exclude="$(git rev-parse --git-path info/exclude)"
  grep -qx "/$dir/" "$exclude" 2>/dev/null || echo "/$dir/" >>"$exclude"
  # Stripped it is about 113 MB, over the 64 MiB the device tool carries: xz makes it ~21.
  cp "$CARGO_TARGET_DIR/release/brandubh" "$dir/brandubh"
  strip "$dir/brandubh"
  rm -f "$dir/brandubh.xz"
  xz -T2 -6 "$dir/brandubh"
  # The Vulkan loader (the NVIDIA driver there brings its ICD, not always the loader).
  rm -f "$dir"/*.deb
  local o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
  mkdir -p /tmp/amd64/partial
  # shellcheck disable=SC2086
  apt-get $o update -qq
  # shellcheck disable=SC2086
  (cd "$dir" && apt-get $o download libvulkan1 >/dev/null)
  du -sh "$dir"
  local bytes
  bytes="$(du -sb "$dir" | cut -f1)"
  if [ "$bytes" -gt $((60 * 1024 * 1024)) ]; then
    echo "$dir is over 60 MiB: the device tool carries 64 MiB in all" >&2
    exit 1
  fi
  echo "ready: run \`scripts/gpu-check.sh run\` there with $dir carried"
}

# One step: its name, its time limit in seconds, the command; output to $out/NAME.log.
step() {
  local name="$1" limit="$2"
  shift 2
  echo "== $name (limit ${limit}s): $*"
  local t0=$SECONDS rc=0
  timeout "$limit" "$@" >"$out/$name.log" 2>&1 || rc=$?
  tail -n 25 "$out/$name.log"
  echo "== $name: exit $rc after $((SECONDS - t0)) s"
  [ "$rc" = 0 ] || failed="$failed $name"
}

run() {
  for f in "$dir"/*.deb; do dpkg -x "$f" /; done
  ldconfig
  if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
    export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  fi
  export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
  out="${OUT:-$dir/out}"
  mkdir -p "$out"
  local bin tmp
  tmp="$(mktemp -d)"
  bin="$tmp/brandubh"
  xz -dc "$dir/brandubh.xz" >"$bin"
  chmod +x "$bin"
  failed=""
  nvidia-smi -L || true
  # The tests' checks (crates/brandubh-cli/tests/gpu.rs) through the binary: tiny.toml on
  # the GPU with self-play there too, continued on the CPU; a CPU run continued on the GPU.
  printf 'extends = "%s/configs/tiny.toml"\niterations = 3\n' "$PWD" >"$tmp/tiny3.toml"
  step tiny-gpu 60 "$bin" train --quiet --config "$tmp/tiny3.toml" --run "$tmp/a" \
    --device gpu --selfplay-inference device --iterations 2
  step tiny-gpu-then-cpu 45 "$bin" train --quiet --config "$tmp/tiny3.toml" --run "$tmp/a" --device cpu
  step tiny-cpu 30 "$bin" train --quiet --config configs/tiny.toml --run "$tmp/b" --iterations 1
  step tiny-cpu-then-gpu 60 "$bin" train --quiet --config configs/tiny.toml --run "$tmp/b" --device gpu
  # GPU and CPU side by side (it checks the outputs against each other first).
  step bench-default 90 "$bin" bench --device gpu --config configs/default.toml --seconds 2
  step bench-gpu-config 120 "$bin" bench --device gpu --config configs/gpu.toml --seconds 2 --games 256
  # Two iterations of the GPU recipe, cut to 64 games and 50 steps each so that they fit:
  # metrics.jsonl's selfplay_s and training_s per game and per step scale to a full one.
  printf 'extends = "%s/configs/gpu.toml"\n[selfplay]\ngames_per_iteration = 64\n[training]\nsteps_per_iteration = 50\nwindow_min_positions = 1000\n' \
    "$PWD" >"$tmp/gpu-short.toml"
  step gpu-toml 150 "$bin" train --quiet --config "$tmp/gpu-short.toml" --run "$tmp/gpu" --device gpu --iterations 2
  wc -l "$tmp"/*/metrics.jsonl 2>/dev/null || true
  cp "$tmp/gpu/metrics.jsonl" "$out/gpu-metrics.jsonl" 2>/dev/null || true
  if [ -n "$failed" ]; then
    echo "FAILED:$failed" >&2
    exit 1
  fi
  echo "all steps passed"
}

case "${1:-}" in
  prepare) prepare ;;
  run) run ;;
  *)
    echo "usage: scripts/gpu-check.sh prepare|run" >&2
    exit 2
    ;;
esac
