#!/usr/bin/env bash
# The fast inference path next to onnxruntime, same machine, same run, same weights:
# v1, the C32xN4 model shipped before v2 (models/brandubh-v1.agent), and a seeded random
# C64xN6 network.
#
#     scripts/bench-onnxruntime.sh [--seconds S] [--rounds R] [--batches 1,16,64] [--threads 1,2]
#
# Creates a Python virtual environment with onnxruntime and numpy from PyPI (in
# target/bench-venv, or $BENCH_VENV), builds the `brandubh` binary and the onnx_bench
# example, exports both networks to ONNX (the shipped one through `brandubh export --format
# onnx`, checked to be the same bytes), checks that onnxruntime's outputs match the fast
# path's on the same 256 positions to 1e-4, and prints positions/s of both for 1 and 2
# threads and batches 1-256, with the CPU's name and the SIMD level each side uses.
# Arguments are passed to scripts/bench_onnxruntime.py. Not part of the test run.
set -euo pipefail
cd "$(dirname "$0")/.."

venv="${BENCH_VENV:-target/bench-venv}"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import onnxruntime, numpy' 2>/dev/null; then
    echo "creating $venv with onnxruntime and numpy" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check onnxruntime numpy
fi

cargo build --release --quiet -p brandubh-cli --bin brandubh --example onnx_bench
exe=target/release/examples/onnx_bench
out=target/bench-onnx
mkdir -p "$out"

"$exe" prepare --agent models/brandubh-v1.agent --out "$out/c32n4" >/dev/null
"$exe" prepare --random C64xN6 --seed 1 --out "$out/c64n6" >/dev/null
# What users run writes the same model.
target/release/brandubh export --format onnx models/brandubh-v1.agent --out "$out/brandubh-v1.onnx" >/dev/null
cmp "$out/brandubh-v1.onnx" "$out/c32n4/model.onnx"

BRANDUBH_CPU=$(target/release/brandubh bench --cpu) \
  "$venv/bin/python" scripts/bench_onnxruntime.py "$exe" "$out/c32n4" "$out/c64n6" "$@"
