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

#: Runs estimated above this many seconds are announced before they start.
ANNOUNCE_SECONDS = 600.0


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
    for key, limit in (("instructions", MAX_INSTRUCTIONS), ("warmup", MAX_INSTRUCTIONS)):
        n = spec.get(key, 0)
        if isinstance(n, int) and n > limit:
            raise MemtintError(f"{key}: {n:,} per core is more than memtint takes ({limit:,}, about a week of "
                               "simulation); a measured window of 10-100 M instructions is usual")
    threads = len(spec.get("programs") or []) or sum(len(p.get("threads", [])) for p in spec.get("processes") or [])
    threads = max(1, threads)
    return threads * (spec.get("instructions", 0) / INSTRUCTIONS_PER_SECOND
                      + spec.get("warmup", 0) / WARMUP_INSTRUCTIONS_PER_SECOND)


def dram_seconds(requests: int) -> float:
    """Estimated CPU seconds of a DRAM-trace run of `requests` generated requests."""
    if requests > MAX_REQUESTS:
        raise MemtintError(f"requests: {requests:,} is more than memtint takes ({MAX_REQUESTS:,}, about three days "
                           "of simulation)")
    return requests / REQUESTS_PER_SECOND
