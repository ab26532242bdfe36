"""Sweep orchestration overhead (`make bench`): 200 short comparisons on the process pool.

Phases, on a private alone cache (a temporary directory):

1. Alone runs (shared work): each distinct (program, machine, instructions, seed) once, on the pool.
   Reported, not part of the overhead figure (its engine time is not recorded per run).
2. The sweep proper: 200 comparisons (10 random 4-program mixes x 5 policies x 4 seeds on the
   i7-860) through :func:`memtint.sweep.run_sweep` on a fresh pool of ``--jobs`` workers,
   including pool start-up, pickling, the alone-cache reads, result batches and the Parquet store.

Overhead = 1 - (engine time) / (jobs x wall time), where engine time is the sum over runs of the
stored ``engine_wall_seconds`` (the engine's own timing of each shared run): the fraction of the
pool's capacity not spent simulating. Target: below 10 %. The per-task split (time a worker spends
in a task outside the engine, from ``elapsed_seconds``) is printed too. On a machine shared with
other work the figure includes the time the workers wait for a core.

    .venv/bin/python bench/sweep_overhead.py [--jobs N] [--instructions N] [--check]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

TARGET = 0.10


def spec(instructions: int) -> dict:
    return {
        "name": "bench-sweep-overhead",
        "machines": ["i7-860"],
        "policies": ["buddy", "bpm", "cache-only", "bank-only", "a-vp"],
        "instructions": instructions,
        "seeds": [1, 2, 3, 4],
        "mixes": [{"random": ["stream", "random", "copy", "light"], "size": 4, "count": 10, "seed": 11}],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--instructions", type=int, default=1_000_000, help="per core (default 1M)")
    parser.add_argument("--check", action="store_true", help="exit 1 if the overhead is above 10 %%")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="memtint-bench-") as tmp:
        os.environ["MEMTINT_CACHE_DIR"] = os.path.join(tmp, "cache")  # inherited by the workers
        from memtint.sweep import LocalBackend, load_results, parse_spec, run_sweep
        from memtint.sweep.runs import alone_tasks, execute_alone, expand

        sweep = parse_spec(spec(args.instructions))
        runs = expand(sweep)
        tasks = alone_tasks(runs)
        start = time.perf_counter()
        with LocalBackend(args.jobs) as pool:
            failed = sum(out["status"] != "ok" for _, out in pool.map_unordered(
                execute_alone, [{"key": t.key, "spec": t.spec} for t in tasks]))
        alone_seconds = time.perf_counter() - start

        start = time.perf_counter()
        summary = run_sweep(sweep, os.path.join(tmp, "results"), jobs=args.jobs, progress=False)
        wall = time.perf_counter() - start
        frame = load_results(os.path.join(tmp, "results")).drop_duplicates("config_hash")

    engine = float(frame["engine_wall_seconds"].sum())
    task = float(frame["elapsed_seconds"].sum())
    overhead = 1.0 - engine / (args.jobs * wall)
    print(f"sweep overhead: {len(runs)} runs of {args.instructions:,} instructions per core "
          f"(4 programs), {args.jobs} worker process(es)")
    print(f"  alone runs (shared work, first): {len(tasks)} in {alone_seconds:.1f} s ({failed} failed)")
    print(f"  sweep: {summary.done} runs ({summary.failed} failed) in {wall:.1f} s = {summary.done / wall:.2f} runs/s")
    print(f"  engine time {engine:.1f} s of {args.jobs} x {wall:.1f} s pool capacity; "
          f"mean engine time per run {engine / max(1, len(frame)):.3f} s")
    print(f"  time outside the engine: {100 * overhead:.1f} % of the pool's time (target < {100 * TARGET:.0f} %); "
          f"inside tasks {100 * (task - engine) / task:.1f} % of task time")
    if overhead >= TARGET:
        print(f"  ABOVE TARGET: {100 * overhead:.1f} % >= {100 * TARGET:.0f} %")
        return 1 if args.check else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
