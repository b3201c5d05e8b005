#!/usr/bin/env python3
"""The fast path next to onnxruntime on the same weights and positions.

Called by scripts/bench-onnxruntime.sh (which builds the Rust side and this script's
virtual environment). For each prepared directory (see
crates/brandubh-cli/examples/onnx_bench.rs): checks that onnxruntime's outputs on the
prepared positions equal the fast path's to 1e-4, then measures positions/s of both, one
measurement after the other (the fast path through `onnx_bench serve`, onnxruntime here),
for 1 and 2 threads and each batch size, several rounds, and prints the ratios with
their spread.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import onnxruntime as ort

TOLERANCE = 1e-4


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "flags":
                    return set(value.split())
    except OSError:
        pass
    return set()


def ort_isa(flags):
    # onnxruntime's MLAS picks its kernels from CPUID at start-up and does not report
    # them; these are the ones it picks for these flags.
    if {"avx512f", "avx512bw", "avx512dq", "avx512vl"} <= flags:
        return "AVX-512 (MLAS picks it from CPUID; inferred from the CPU flags)"
    if {"avx2", "fma"} <= flags:
        return "AVX2+FMA (MLAS picks it from CPUID; inferred from the CPU flags)"
    return "SSE or scalar (inferred from the CPU flags)"


def session(model, threads):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])


def load(directory):
    with open(os.path.join(directory, "info.json")) as f:
        info = json.load(f)
    n = info["positions"]

    def read(name, shape):
        return np.fromfile(os.path.join(directory, name), dtype="<f4").reshape(shape)

    inputs = read("inputs.f32", (n, 9, 7, 7))
    policy = read("policy.f32", (n, 1176))
    value = read("value.f32", (n, 1))
    return info, inputs, policy, value


def check(directory, info, inputs, policy, value):
    sess = session(os.path.join(directory, "model.onnx"), 1)
    worst_p = worst_v = 0.0
    for batch in (1, 7, len(inputs)):
        for start in range(0, len(inputs), batch):
            x = inputs[start : start + batch]
            p, v = sess.run(["policy_logits", "value"], {"planes": x})
            worst_p = max(worst_p, float(np.abs(p - policy[start : start + batch]).max()))
            worst_v = max(worst_v, float(np.abs(v - value[start : start + batch]).max()))
            if batch == 1 and start >= 15:
                break
    ok = worst_p <= TOLERANCE and worst_v <= TOLERANCE
    print(
        f"  outputs: onnxruntime vs fast path on {len(inputs)} positions: max |diff| "
        f"policy {worst_p:.2e}, value {worst_v:.2e} ({'ok' if ok else 'FAIL'}: tolerance {TOLERANCE:g})"
    )
    return ok


def ort_rate(sess, x, seconds):
    """(positions per wall-clock second, per CPU-second of this thread)."""
    feed = {"planes": x}
    sess.run(None, feed)  # warm-up
    n, t0, c0 = 0, time.perf_counter(), time.thread_time()
    while time.perf_counter() - t0 < seconds:
        sess.run(None, feed)
        n += len(x)
    cpu = time.thread_time() - c0
    return n / (time.perf_counter() - t0), (n / cpu if cpu > 0 else float("nan"))


class FastServer:
    def __init__(self, exe, directory):
        self.proc = subprocess.Popen(
            [exe, "serve", directory], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )

    def rate(self, threads, batch, seconds):
        self.proc.stdin.write(f"{threads} {batch} {seconds}\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("onnx_bench serve ended early")
        wall, cpu = line.split()
        return float(wall), float(cpu)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def spread(values):
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def bench(exe, directory, info, inputs, args):
    server = FastServer(exe, directory)
    model = os.path.join(directory, "model.onnx")
    sessions = {t: session(model, t) for t in args.threads}
    fast = {}
    onnx = {}
    for r in range(args.rounds):
        for t in args.threads:
            for b in args.batches:
                x = np.ascontiguousarray(inputs[:b])
                # Alternate which side goes first, so that neither always runs right after
                # the other's warm caches or a burst of load.
                if r % 2 == 0:
                    f, fcpu = server.rate(t, b, args.seconds)
                    o, ocpu = ort_rate(sessions[t], x, args.seconds)
                else:
                    o, ocpu = ort_rate(sessions[t], x, args.seconds)
                    f, fcpu = server.rate(t, b, args.seconds)
                fast.setdefault((t, b), []).append(f)
                onnx.setdefault((t, b), []).append(o)
                if t == 1:
                    # With one thread all the work is on the measured thread on both sides:
                    # positions per CPU-second, robust to other load on the machine.
                    fast.setdefault(("cpu", b), []).append(fcpu)
                    onnx.setdefault(("cpu", b), []).append(ocpu)
    server.close()
    print(
        f"  positions/s, median of {args.rounds} rounds; ratio fast/onnxruntime per round: "
        "median (min-max)"
    )
    columns = list(args.threads) + (["cpu"] if 1 in args.threads else [])
    title = {c: f"{c} thread{'s' if c != 1 else ''}" for c in args.threads}
    title["cpu"] = "1 thread, per CPU-s"
    header = f"  {'batch':>5}"
    for c in columns:
        header += f" | {title[c]:>19}: {'fast':>7} {'onnxrt':>7} {'ratio':>17}"
    print(header)
    for b in args.batches:
        line = f"  {b:>5}"
        for t in columns:
            f, o = fast[(t, b)], onnx[(t, b)]
            ratios = [x / y for x, y in zip(f, o)]
            line += (
                f" | {'':>19}  {statistics.median(f):>7.0f} {statistics.median(o):>7.0f} "
                f"{spread(ratios):>17}"
            )
        print(line)
    return fast, onnx


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("exe", help="the onnx_bench example binary")
    p.add_argument("dirs", nargs="+", help="directories written by `onnx_bench prepare`")
    p.add_argument("--seconds", type=float, default=0.4)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--threads", type=lambda s: [int(x) for x in s.split(",")], default=[1, 2])
    p.add_argument(
        "--batches",
        type=lambda s: [int(x) for x in s.split(",")],
        default=[1, 2, 4, 8, 16, 32, 64, 128, 256],
    )
    p.add_argument("--json", help="also write every measurement to this file")
    args = p.parse_args()

    # The CPU's name as `brandubh bench --cpu` gives it (the wrapper script sets it).
    name = os.environ.get("BRANDUBH_CPU") or "unknown CPU"
    flags = cpu_flags()
    print(f"CPU: {name}")
    print(f"onnxruntime {ort.__version__} (CPU execution provider), numpy {np.__version__}")
    print(f"onnxruntime kernels: {ort_isa(flags)}")
    ok = True
    results = {}
    for d in args.dirs:
        info, inputs, policy, value = load(d)
        print(
            f"\nnetwork C{info['channels']}xN{info['blocks']} ({info['source']}); "
            f"fast path kernels: {info['fast_simd']}, tower convolutions: {info.get('fast_conv', 'direct')}"
        )
        ok &= check(d, info, inputs, policy, value)
        fast, onnx = bench(args.exe, d, info, inputs, args)
        results[d] = {
            "info": info,
            "fast": {f"{t}x{b}": v for (t, b), v in fast.items()},
            "onnxruntime": {f"{t}x{b}": v for (t, b), v in onnx.items()},
            "keys": "THREADSxBATCH: positions per wall-clock second; cpuxBATCH: per CPU-second, 1 thread",
        }
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cpu": name, "onnxruntime": ort.__version__, "results": results}, f, indent=1)
    if not ok:
        print("onnxruntime's outputs differ from the fast path's", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
