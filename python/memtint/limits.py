"""How long a run will take, and how large one may be: estimated before it starts, so a mistyped
count is refused or announced instead of running for days in silence.

Speeds are the engine's usual ones on one CPU (`make bench`: about 40 M instructions per second
for a 4-core CPU-trace run, 60 M for the functional warm-up, 4 M DRAM requests per second), so an
estimate is right within a factor of a few; it is a warning, not a promise.
"""

from __future__ import annotations

from typing import Any

from memtint.api import MemtintError

INSTRUCTIONS_PER_SECOND = 40e6
WARMUP_INSTRUCTIONS_PER_SECOND = 60e6
REQUESTS_PER_SECOND = 4e6

#: Largest instruction count per core and request count a run takes: about a week at the speeds
#: above. Beyond it a run is refused, naming the key.
MAX_INSTRUCTIONS = 10**13
MAX_REQUESTS = 10**12

#: Most runs one sweep takes: each is described in memory before the first starts, and a million
#: 4-program runs of 10 M instructions are about ten CPU-weeks.
MAX_RUNS = 1_000_000

#: Largest seed: the result store keeps seeds in 64-bit signed columns (Parquet int64).
MAX_SEED = 2**63 - 1

#: Runs estimated above this many seconds are announced before they start.
ANNOUNCE_SECONDS = 600.0


def check_instructions(key: str, n: int) -> int:
    """``n`` instructions per core, refused (naming ``key``) above :data:`MAX_INSTRUCTIONS`."""
    if n > MAX_INSTRUCTIONS:
        raise MemtintError(f"{key}: {n:,} per core is more than memtint takes ({MAX_INSTRUCTIONS:,}, about a week "
                           "of simulation); a measured window of 10-100 M instructions is usual")
    return n


def announce(seconds: float, what: str = "run") -> None:
    """Say on stderr, before it starts, that a run will take long (above :data:`ANNOUNCE_SECONDS`)."""
    import sys

    if seconds > ANNOUNCE_SECONDS:
        sys.stderr.write(f"memtint: this {what} will take about {duration_text(seconds)} (estimated from its size; "
                         "Ctrl-C stops it)\n")
        sys.stderr.flush()


def duration_text(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def sim_seconds(spec: dict[str, Any]) -> float:
    """Estimated CPU seconds of a CPU-trace run specification (`build_sim_spec`)."""
    for key in ("instructions", "warmup"):
        n = spec.get(key, 0)
        if isinstance(n, int):
            check_instructions(key, n)
    run = spec.get("instructions", 0) if isinstance(spec.get("instructions", 0), int) else 0
    # Per thread: its own target (a thread's, else its process's), else the run's.
    targets = [run] * len(spec.get("programs") or [])
    for i, p in enumerate(spec.get("processes") or []):
        if not isinstance(p, dict):
            continue
        for j, t in enumerate(p.get("threads") or []):
            own = t.get("instructions") if isinstance(t, dict) else None
            own = own if own is not None else p.get("instructions")
            if isinstance(own, int):
                key = f"processes[{i}].threads[{j}].instructions" if isinstance(t, dict) and "instructions" in t \
                    else f"processes[{i}].instructions"
                check_instructions(key, own)
            targets.append(own if isinstance(own, int) else run)
    targets = targets or [run]
    return sum(n / INSTRUCTIONS_PER_SECOND + spec.get("warmup", 0) / WARMUP_INSTRUCTIONS_PER_SECOND for n in targets)


def sweep_seconds(runs: list[tuple[int, int, int]], jobs: int) -> float:
    """Estimated wall seconds of ``runs`` given as (programs, instructions, warm-up) on ``jobs``
    workers (alone runs not counted: they are a few per mix and often cached)."""
    cpu = sum(sim_seconds({"programs": [""] * p, "instructions": n, "warmup": w}) for p, n, w in runs)
    return cpu / max(1, jobs)


def dram_seconds(requests: int) -> float:
    """Estimated CPU seconds of a DRAM-trace run of `requests` generated requests."""
    if requests > MAX_REQUESTS:
        raise MemtintError(f"requests: {requests:,} is more than memtint takes ({MAX_REQUESTS:,}, about three days "
                           "of simulation)")
    return requests / REQUESTS_PER_SECOND
