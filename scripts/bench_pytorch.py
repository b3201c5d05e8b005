#!/usr/bin/env python3
"""The fast training step next to PyTorch's on the same CPU: same network, losses, optimizer.

Called by scripts/bench-pytorch.sh (which builds the Rust side and this script's virtual
environment). For each run configuration: builds the network that
`train_bench info CONFIG` describes (crates/brandubh-cli/examples/train_bench.rs) in
PyTorch (eager mode, float32, the CPU's default kernels: oneDNN), with the same losses
(cross-entropy over the legal moves, value MSE after tanh, moves-left MSE, their weights) and
Adam (β 0.9/0.999, ε 1e-5, L2 weight decay added to the gradient, as burn's), then measures
training samples/s at the configuration's batch size for 1 and 2 threads: PyTorch here, the
fast step (and burn's) through `train_bench serve`, one measurement after the other in
alternating order, several rounds, and prints each round's ratio with their spread.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

POLICY_SIZE = 1176
MASKED_LOGIT = -1.0e9


def cpu_name():
    """The CPU's name as `brandubh bench --cpu` gives it (the wrapper script sets it)."""
    return os.environ.get("BRANDUBH_CPU") or "unknown CPU"


class ConvBn(nn.Module):
    def __init__(self, cin, cout, k):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, padding=k // 2, bias=False)
        self.bn = nn.BatchNorm2d(cout, eps=1e-5, momentum=0.1)

    def forward(self, x):
        return self.bn(self.conv(x))


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = ConvBn(c, c, 3)
        self.conv2 = ConvBn(c, c, 3)

    def forward(self, x):
        y = F.relu(self.conv1(x))
        return F.relu(self.conv2(y) + x)


class Net(nn.Module):
    """crates/brandubh-net/src/model.rs in PyTorch."""

    def __init__(self, info):
        super().__init__()
        c, pc, vc = info["channels"], info["policy_channels"], info["value_channels"]
        self.stem = ConvBn(info["planes"], c, 3)
        self.blocks = nn.ModuleList(Block(c) for _ in range(info["blocks"]))
        self.policy_conv = ConvBn(c, pc, 1)
        self.policy_fc = nn.Linear(pc * 49, POLICY_SIZE)
        self.value_conv = ConvBn(c, vc, 1)
        self.value_fc1 = nn.Linear(vc * 49, info["value_hidden"])
        self.value_fc2 = nn.Linear(info["value_hidden"], 1)
        m = info["moves_left_hidden"]
        self.moves_left = None
        if m:
            self.moves_left = nn.ModuleDict(
                {"conv": ConvBn(c, vc, 1), "fc1": nn.Linear(vc * 49, m), "fc2": nn.Linear(m, 1)}
            )

    def forward(self, x):
        x = F.relu(self.stem(x))
        for b in self.blocks:
            x = b(x)
        p = F.relu(self.policy_conv(x)).flatten(1)
        logits = self.policy_fc(p)
        ml = None
        if self.moves_left is not None:
            h = F.relu(self.moves_left["conv"](x)).flatten(1)
            ml = self.moves_left["fc2"](F.relu(self.moves_left["fc1"](h)))
        v = F.relu(self.value_conv(x)).flatten(1)
        value = torch.tanh(self.value_fc2(F.relu(self.value_fc1(v))))
        return logits, value, ml


def batch(info, seed=1):
    """Random inputs of the network's shape, 10-40 legal moves a position with normalised
    random targets among them, values in [-1, 1], moves-left targets."""
    g = torch.Generator().manual_seed(seed)
    n = info["batch_size"]
    x = (torch.rand(n, info["planes"], 7, 7, generator=g) < 0.2).float()
    legal = torch.zeros(n, POLICY_SIZE, dtype=torch.bool)
    for i in range(n):
        k = int(torch.randint(10, 41, (1,), generator=g))
        legal[i, torch.randperm(POLICY_SIZE, generator=g)[:k]] = True
    t = torch.rand(n, POLICY_SIZE, generator=g) * legal
    t = t / t.sum(1, keepdim=True)
    z = torch.rand(n, 1, generator=g) * 2 - 1
    plies = torch.randint(0, 60, (n, 1), generator=g).float() / 50.0
    return x, legal, t, z, plies


class TorchStep:
    def __init__(self, info):
        self.info = info
        torch.manual_seed(0)
        self.net = Net(info)
        self.net.train()
        if info["optimizer"] == "adam":
            self.opt = torch.optim.Adam(
                self.net.parameters(),
                lr=info["learning_rate"],
                betas=(0.9, 0.999),
                eps=1e-5,
                weight_decay=info["weight_decay"],
            )
        else:
            self.opt = torch.optim.SGD(
                self.net.parameters(),
                lr=info["learning_rate"],
                momentum=info["momentum"],
                weight_decay=info["weight_decay"],
            )
        self.batch = batch(info)

    def step(self):
        x, legal, t, z, plies = self.batch
        logits, value, ml = self.net(x)
        logp = F.log_softmax(logits.masked_fill(~legal, MASKED_LOGIT), dim=1)
        loss = -(t * logp).sum(1).mean() + self.info["value_weight"] * ((value - z) ** 2).mean()
        if ml is not None:
            loss = loss + self.info["moves_left_weight"] * ((ml - plies) ** 2).mean()
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        return float(loss.detach())

    def rate(self, threads, seconds):
        """(samples per wall-clock second, per CPU-second of this thread)."""
        torch.set_num_threads(threads)
        self.step()  # warm-up at this thread count
        n, t0, c0 = 0, time.perf_counter(), time.thread_time()
        while time.perf_counter() - t0 < seconds or n < 2:
            self.step()
            n += 1
        samples = n * self.info["batch_size"]
        cpu = time.thread_time() - c0
        return samples / (time.perf_counter() - t0), (samples / cpu if cpu > 0 else float("nan"))


class RustServer:
    def __init__(self, exe, config):
        self.proc = subprocess.Popen(
            [exe, "serve", config], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )

    def rate(self, engine, threads, simd, seconds):
        self.proc.stdin.write(f"{engine} {threads} {simd} {seconds}\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("train_bench serve ended early")
        wall, cpu = line.split()
        return float(wall), float(cpu)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def spread(values, digits=0):
    return (
        f"{statistics.median(values):.{digits}f} "
        f"({min(values):.{digits}f}-{max(values):.{digits}f})"
    )


def bench(exe, config, args):
    info = json.loads(subprocess.check_output([exe, "info", config], text=True))
    print(
        f"\n{info['name']}: C{info['channels']}xN{info['blocks']}, {info['planes']} planes, "
        f"heads policy/value{'/moves-left' if info['moves_left_hidden'] else ''}, "
        f"batch {info['batch_size']}, {info['optimizer']}"
    )
    torch_step = TorchStep(info)
    server = RustServer(exe, config)
    sides = [f"fast-{s}" for s in args.simd] + (["burn"] if args.burn else [])
    rates = {}
    for r in range(args.rounds):
        for t in args.threads:
            order = ["torch"] + sides
            if r % 2 == 1:
                order.reverse()
            for side in order:
                if side == "torch":
                    v = torch_step.rate(t, args.seconds)
                elif side == "burn":
                    v = server.rate("burn", t, "scalar", args.seconds)
                else:
                    v = server.rate("fast", t, side.split("-", 1)[1], args.seconds)
                rates.setdefault((side, t), []).append(v[0])
                if t == 1:
                    # With one thread all the work is on the measured thread on both sides:
                    # samples per CPU-second, robust to other load on the machine.
                    rates.setdefault((side, "cpu"), []).append(v[1])
    server.close()
    print(f"  samples/s, median (min-max) of {args.rounds} rounds, each side in turn")
    for t in args.threads:
        line = f"  {t} thread{'s' if t > 1 else ' '}: PyTorch {spread(rates[('torch', t)])}"
        for side in sides:
            line += f" | {side} {spread(rates[(side, t)])}"
        print(line)
    if 1 in args.threads:
        line = f"  1 thread, per CPU-second: PyTorch {spread(rates[('torch', 'cpu')])}"
        for side in sides:
            line += f" | {side} {spread(rates[(side, 'cpu')])}"
        print(line)
    top = max(args.threads)
    base = rates[("torch", top)]
    print(f"  against PyTorch with {top} threads, round by round (median (min-max)):")
    for side in sides:
        for t in args.threads:
            ratios = [a / b for a, b in zip(rates[(side, t)], base)]
            print(f"    {side}, {t} thread{'s' if t > 1 else ''}: {spread(ratios, 2)}x")
    if 1 in args.threads:
        print("  against PyTorch, 1 thread, per CPU-second, round by round:")
        for side in sides:
            ratios = [a / b for a, b in zip(rates[(side, "cpu")], rates[("torch", "cpu")])]
            print(f"    {side}: {spread(ratios, 2)}x")
    return {f"{s}x{t}": v for (s, t), v in rates.items()}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("exe", help="the train_bench example binary")
    p.add_argument("configs", nargs="+", help="run configurations (TOML)")
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--threads", type=lambda s: [int(x) for x in s.split(",")], default=[1, 2])
    p.add_argument("--simd", type=lambda s: s.split(","), default=["avx512", "avx2"])
    p.add_argument("--burn", action="store_true", help="also time burn's step")
    p.add_argument("--json", help="also write every measurement to this file")
    args = p.parse_args()
    print(f"CPU: {cpu_name()}")
    print(
        f"PyTorch {torch.__version__} (CPU, eager, float32; oneDNN {torch.backends.mkldnn.is_available()}; "
        f"kernels {torch.backends.cpu.get_cpu_capability()}, oneDNN ISA limit "
        f"{os.environ.get('ONEDNN_MAX_CPU_ISA', 'none')}), numpy {np.__version__}"
    )
    results = {}
    for config in args.configs:
        results[config] = bench(args.exe, config, args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cpu": cpu_name(), "torch": torch.__version__, "results": results}, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
