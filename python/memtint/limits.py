"""How long a run will take, and how large one may be: estimated before it starts, so a mistyped
count is refused or announced instead of running for days in silence.

Speeds are the engine's usual ones on one CPU (`make bench`: about 40 M instructions per second
for a 4-core CPU-trace run, 4 M DRAM requests per second; functional warming, the warm-up's and a
sampled run's between its units, 200-560 M: a billion instructions of bfs sampled, a 4-program
sampled run's gaps, and 1/14 of a detailed instruction's cost in the reproductions' runs), so an
estimate is right within a factor of a few; it is a warning, not a promise.
"""

from __future__ import annotations

from typing import Any

from memtint.api import MemtintError

INSTRUCTIONS_PER_SECOND = 40e6
WARMUP_INSTRUCTIONS_PER_SECOND = 300e6
REQUESTS_PER_SECOND = 4e6

#: Largest instruction count per core and request count a run takes: about a week at the speeds
#: above. Beyond it a run is refused, naming the key.
MAX_INSTRUCTIONS = 10**13
MAX_REQUESTS = 10**12

#: Latest arrival a process may have, ns (the engine's bound, sim_spec.rs).
MAX_ARRIVE_NS = 1e12

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


def announce(seconds: float, what: str = "run", why: str = "") -> None:
    """Say on stderr, before it starts, that a run will take long (above :data:`ANNOUNCE_SECONDS`),
    and ``why`` when the reason is not its size alone."""
    import sys

    if seconds > ANNOUNCE_SECONDS:
        sys.stderr.write(f"memtint: this {what} will take about {duration_text(seconds)} "
                         f"({why or 'estimated from its size'}; Ctrl-C stops it)\n")
        sys.stderr.flush()


def sim_reason(spec: dict[str, Any]) -> str:
    """Why a CPU-trace run takes long when a late arrival, not its size, makes it so."""
    late = late_arrival(spec)
    if not late or late[1] * INSTRUCTIONS_PER_NS < max(spec.get("instructions") or 0, 1):
        return ""
    key, ns, threads = late
    return (f"{key} = {ns:g} ns: {threads} thread(s) that run on past their targets (at_end = \"continue\") "
            f"are simulated in detail until it arrives; at_end = \"wait\" or \"exit\" skips that time")


def duration_text(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def sim_seconds(spec: dict[str, Any]) -> float:
    """Estimated CPU seconds of a CPU-trace run specification (`build_sim_spec`); a sampled one
    (its ``sampling`` table) simulates its units in detail and warms the rest functionally."""
    from memtint.sampling import detailed_instructions

    targets = instruction_targets(spec)
    sampling = spec.get("sampling") if isinstance(spec.get("sampling"), dict) else None
    warmup = spec.get("warmup", 0) if isinstance(spec.get("warmup", 0), int) else 0

    def thread(n: int) -> float:
        detailed = detailed_instructions(sampling, n)
        return detailed / INSTRUCTIONS_PER_SECOND + (n - detailed + warmup) / WARMUP_INSTRUCTIONS_PER_SECOND

    seconds = sum(thread(n) for n in targets)
    late = late_arrival(spec)
    return seconds + (late[2] * late[1] * INSTRUCTIONS_PER_NS / INSTRUCTIONS_PER_SECOND if late else 0.0)


def instruction_targets(spec: dict[str, Any]) -> list[int]:
    """Each thread's instruction target in a run specification, every count in it (the run's,
    its warm-up, each process's and thread's) checked against :data:`MAX_INSTRUCTIONS` first."""
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
    return targets or [run]


#: Instructions a running core retires per nanosecond, for the time a late arrival adds: IPC 1 at
#: 3 GHz (a rough figure: the estimate is right within a factor of a few).
INSTRUCTIONS_PER_NS = 3.0


def late_arrival(spec: dict[str, Any]) -> tuple[str, float, int] | None:
    """The latest arrival of a run whose threads run on past their targets (``at_end =
    "continue"``, the default): those threads run in detail until it comes, so its time is work
    (idle time, with every thread waiting or gone, is skipped and costs nothing). Returns the
    key, its nanoseconds and the number of threads that run on; None without such an arrival."""
    procs = [p for p in spec.get("processes") or [] if isinstance(p, dict)]
    run_at_end = spec.get("at_end", "continue")
    # Beyond the engine's bound an arrival is refused before anything runs: nothing to announce.
    arrivals = [(f"processes[{i}].arrive_ns", p["arrive_ns"]) for i, p in enumerate(procs)
                if isinstance(p.get("arrive_ns"), (int, float)) and 0 < p["arrive_ns"] <= MAX_ARRIVE_NS]
    if not arrivals:
        return None
    key, latest = max(arrivals, key=lambda a: a[1])
    running_on = sum(len(p.get("threads") or []) for p in procs
                     if p.get("at_end", run_at_end) == "continue" and not p.get("arrive_ns"))
    running_on += len(spec.get("programs") or []) if run_at_end == "continue" else 0
    return (key, float(latest), running_on) if running_on else None


def sweep_seconds(runs: list[tuple[Any, ...]], jobs: int) -> float:
    """Estimated wall seconds of ``runs`` given as (programs, instructions, warm-up[, sampling
    table]) on ``jobs`` workers (alone runs not counted: they are a few per mix and often cached)."""
    cpu = sum(sim_seconds({"programs": [""] * r[0], "instructions": r[1], "warmup": r[2],
                           "sampling": r[3] if len(r) > 3 else None}) for r in runs)
    return cpu / max(1, jobs)


def dram_seconds(requests: int) -> float:
    """Estimated CPU seconds of a DRAM-trace run of `requests` generated requests."""
    if requests > MAX_REQUESTS:
        raise MemtintError(f"requests: {requests:,} is more than memtint takes ({MAX_REQUESTS:,}, about three days "
                           "of simulation)")
    return requests / REQUESTS_PER_SECOND
