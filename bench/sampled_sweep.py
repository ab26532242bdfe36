"""Sampled simulation at the papers' scale (`make bench`; docs/sampling.md).

1. A scaled-down sweep: ``--mixes`` 4-program mixes of the captured suite x 6 policies at an
   effective ``--instructions`` per core (default 100 M), sampled with the default settings, each
   after the sweeps' 20 M warm-up; the CPU seconds per shared run, and from them the hours 2,000
   random mixes x 6 policies take on 2 cores (the alone runs, one per program of the pool, are
   left out: a few dozen runs), against the target of 1 hour. The same runs in detail are
   estimated from one detailed run of 10 M instructions per core per mix, scaled by 10.
   A run's cost follows its programs (0.3 s to 6 s among random mixes: a memory-intensive trace
   has many more records to warm), so the mixes hold every program of the suite once (a seeded
   shuffle in fours, the last four filled by draws): their mean is a random mix's expected cost,
   which two random mixes put 20-30 % low.
2. One program for a billion instructions, sampled, against 10 M in detail: the ratio of CPU
   times (target: at most 10).

    .venv/bin/python bench/sampled_sweep.py [--mixes 3] [--instructions 100000000] [--jobs 2]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))

from memtint import api, sampling, workloads  # noqa: E402

POLICIES = ["buddy", "bpm", "cache-only", "bank-only", "a-vp", "random-interleave"]
WARMUP = 20_000_000
TARGET_HOURS = 1.0
TARGET_RATIO = 10.0


def cpu_seconds(spec: dict) -> float:
    t = time.process_time()
    api.run_sim_spec(spec)
    return time.process_time() - t


def shared(mix: list[str], policy: str, instructions: int, samp: dict | None) -> dict:
    spec = api.build_sim_spec("i7-860", mix, instructions=instructions, policy=policy, seed=1, warmup=WARMUP)
    if samp:
        spec["sampling"] = samp
    return spec


def covering_mixes(suite: list[str], count: int, rng: random.Random) -> list[list[str]]:
    """``count`` 4-program mixes (0: as many as hold each program once) whose programs are the
    suite's in a shuffled order, each once before any twice; a mix short of four is filled by draws."""
    count = count or -(-len(suite) // 4)
    order: list[str] = []
    while len(order) < 4 * count:
        order += rng.sample(suite, len(suite))
    return [order[4 * i:4 * i + 4] for i in range(count)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mixes", type=int, default=int(os.environ.get("MEMTINT_BENCH_SAMPLED_MIXES", 0)),
                    help="mixes (default: enough to hold every program of the suite once)")
    ap.add_argument("--instructions", type=int, default=100_000_000)
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--seed", type=int, default=11)
    args = ap.parse_args()
    suite = [workloads.trace_path(name) for name in workloads.suite()]  # as a sweep's pool names them
    mixes = covering_mixes(suite, args.mixes, random.Random(args.seed))
    samp = dict(sampling.DEFAULT_SAMPLING)
    bounded = {**samp, "period": 2_000_000, "functional": 500_000}
    sampled_specs = [shared(m, p, args.instructions, samp) for m in mixes for p in POLICIES]
    bounded_specs = [shared(m, p, args.instructions, bounded) for m in mixes for p in POLICIES]
    detailed_specs = [shared(m, "buddy", 10_000_000, None) for m in mixes]
    warmup_specs = [shared(m, "buddy", 1_000, None) for m in mixes]
    start = time.time()
    with ProcessPoolExecutor(args.jobs) as pool:
        sampled_cpu = list(pool.map(cpu_seconds, sampled_specs))
        wall = time.time() - start
        bounded_cpu = list(pool.map(cpu_seconds, bounded_specs))
        detailed_cpu = list(pool.map(cpu_seconds, detailed_specs))
        warmup_cpu = list(pool.map(cpu_seconds, warmup_specs))
    per_run = sum(sampled_cpu) / len(sampled_cpu)
    per_bounded = sum(bounded_cpu) / len(bounded_cpu)
    # The warm-up once, the 10 M window ten times.
    warm = sum(warmup_cpu) / len(warmup_cpu)
    per_detailed = warm + 10 * (sum(detailed_cpu) / len(detailed_cpu) - warm)
    runs = 2000 * len(POLICIES)
    hours = runs * per_run / 2 / 3600
    hours_detailed = runs * per_detailed / 2 / 3600
    print(f"sampled sweep: {len(sampled_specs)} runs ({len(mixes)} mixes x {len(POLICIES)} policies, "
          f"{args.instructions / 1e6:.0f} M instructions per core effective, {samp}) in {wall:.1f} s wall")
    print(f"  CPU per sampled run {per_run:.2f} s (of which the 20 M warm-up {warm:.2f} s); detailed at the same "
          f"length (the 10 M window x 10) {per_detailed:.2f} s: {per_detailed / per_run:.1f}x")
    print(f"  2,000 mixes x 6 policies on 2 cores: sampled {hours:.2f} h (target {TARGET_HOURS:.0f} h: "
          f"{'met' if hours <= TARGET_HOURS else 'not met'}), detailed {hours_detailed:.1f} h")
    print(f"  with 50 periods and functional warming bounded to the last 500 000 instructions of each gap (the rest "
          f"read, not warmed): {per_bounded:.2f} s per run, {runs * per_bounded / 2 / 3600:.2f} h")

    program = str(ROOT / "workloads" / "traces" / "bfs.t1.mtt.gz")
    one = lambda n, s: {**api.build_sim_spec("i7-860", [program], instructions=n, policy="buddy", seed=1,  # noqa: E731
                                             warmup=WARMUP), **({"sampling": s} if s else {})}
    detailed = cpu_seconds(one(10_000_000, None))
    billion = cpu_seconds(one(1_000_000_000, samp))
    ratio = billion / detailed
    print(f"one program (bfs): 1 G instructions sampled {billion:.2f} s CPU, 10 M detailed {detailed:.2f} s: "
          f"{ratio:.1f}x (target at most {TARGET_RATIO:.0f}x: {'met' if ratio <= TARGET_RATIO else 'not met'})")


if __name__ == "__main__":
    main()
