#!/usr/bin/env bash
# The fast training step next to PyTorch's on the same CPU, same run, same network, losses
# and optimizer: configs/default.toml (C32xN4) and configs/default-c48.toml (C48xN5).
#
#     scripts/bench-pytorch.sh [--seconds S] [--rounds R] [--threads 1,2] [--simd avx512,avx2] [--burn]
#                              [--torch-isa avx2]
#
# Creates a Python virtual environment with PyTorch and numpy from PyPI (in
# target/torch-venv, or $BENCH_TORCH_VENV; PyPI's Linux wheel brings NVIDIA's CUDA libraries
# along, about 5 GB, so the script checks for 8 GB of free disk first), builds the
# train_bench example, and prints training samples/s at the configuration's batch size of
# PyTorch (eager, oneDNN) and of the fast step on each SIMD level (and burn's with --burn),
# for 1 and 2 threads, measured one after the other in alternating order over several
# rounds, with each round's ratio to PyTorch's 2-thread rate and the CPU's name. Arguments
# go to scripts/bench_pytorch.py, but --torch-isa avx2: PyTorch limited to AVX2 (its own
# kernels by ATEN_CPU_CAPABILITY, oneDNN's by ONEDNN_MAX_CPU_ISA), as on a CPU without
# AVX-512, for the AVX2 kernels' comparison on a CPU that has it. Not part of the test run.
set -euo pipefail
cd "$(dirname "$0")/.."

args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --torch-isa)
            [ $# -ge 2 ] || { echo "bench-pytorch: --torch-isa needs a value (avx2)" >&2; exit 2; }
            case "$2" in
                avx2) export ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 ;;
                *) echo "bench-pytorch: --torch-isa $2: only avx2 is known" >&2; exit 2 ;;
            esac
            shift 2 ;;
        *) args+=("$1"); shift ;;
    esac
done
set -- "${args[@]+"${args[@]}"}"

venv="${BENCH_TORCH_VENV:-target/torch-venv}"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import torch, numpy' 2>/dev/null; then
    mkdir -p "$(dirname "$venv")"
    free_kb=$(df -Pk "$(dirname "$venv")" | awk 'NR == 2 { print $4 }')
    if [ "$free_kb" -lt $((8 * 1024 * 1024)) ]; then
        echo "bench-pytorch: PyTorch from PyPI needs about 5 GB; only $((free_kb / 1024)) MB free under $(dirname "$venv")" >&2
        exit 1
    fi
    echo "creating $venv with torch and numpy from PyPI (about 5 GB)" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check torch numpy
fi

cargo build --release --quiet --workspace --bin brandubh --example train_bench
exe="${CARGO_TARGET_DIR:-target}/release/examples/train_bench"
BRANDUBH_CPU=$("${CARGO_TARGET_DIR:-target}/release/brandubh" bench --cpu) \
  "$venv/bin/python" scripts/bench_pytorch.py "$exe" configs/default.toml configs/default-c48.toml "$@"
