"""Classes of programs, measured: each program runs alone on a machine under ``buddy`` with the
warm-up and measured window of the experiment that uses it (the alone runs go through
:mod:`memtint.comparison`'s cache), and its statistics there give its classes. The
reproductions draw their pools from these classes, not from names or capture-time numbers.

Classes (docs: workloads/README.md, "Classes"):

* ``intensity``: ``intensive`` when the alone LLC MPKI exceeds 1 (BPM §5, bpm.md §4), else ``light``;
* ``access``: ``streaming`` at a row-buffer hit rate of at least 0.5 alone, else ``random``
  (the threshold of :func:`memtint.trace_analysis.classify`);
* ``write_heavy``: at least one DRAM write per :data:`WRITE_HEAVY_READS` DRAM reads;
* ``cache_sensitive``: alone IPC with a quarter of the LLC (cache-only colours, a quarter of the
  machine's cache colours) below :data:`CACHE_SENSITIVE_IPC` of its IPC with the whole LLC (HVR's
  LLCM/LLCH programs, multipolicy-hvr.md §6 Fig. 4); None on a machine without cache colours.
"""

from __future__ import annotations

import functools
from typing import Any, Iterable

from memtint import api, comparison
from memtint.trace_analysis import INTENSIVE_MPKI

#: A program is write-heavy with at least one DRAM write for this many DRAM reads (chosen: a
#: STREAM triad, one array written for two read, has one write for three reads).
WRITE_HEAVY_READS = 4

#: A program is cache-sensitive when a quarter of the LLC leaves it less than this share of its
#: IPC (chosen: BPM's 10 % line for banks, bpm.md §2.1, applied to the LLC).
CACHE_SENSITIVE_IPC = 0.9


def alone_stats(program: str, machine: str, *, warmup: int, instructions: int, seed: int = 1) -> dict[str, Any]:
    """``program`` (a trace path or profile) alone on ``machine`` under buddy: IPC, LLC MPKI,
    DRAM reads and writes per kilo-instruction, row-buffer hit rate, bank-level parallelism."""
    spec = comparison.build_alone_specs(machine, [program], instructions=instructions, seed=seed,
                                        warmup=warmup)[0]
    core = comparison.alone_run(spec)
    kilo = core["instructions"] / 1000.0 or 1.0
    accesses = core["row_hits"] + core["row_misses"] + core["row_conflicts"]
    return {
        "ipc": core["ipc"],
        "llc_mpki": core["llc_mpki"],
        "dram_reads_pki": core["dram_reads"] / kilo,
        "dram_writes_pki": core["dram_writes"] / kilo,
        "row_hit_rate": core["row_hits"] / accesses if accesses else None,
        "bank_level_parallelism": core["bank_level_parallelism"],
        "footprint_mb": core.get("pages", 0) * 4096 / 2**20,
        "quarter_llc_ipc": quarter_llc_ipc(program, machine, warmup=warmup, instructions=instructions, seed=seed,
                                           full_ipc=core["ipc"]),
    }


def quarter_llc_ipc(program: str, machine: str, *, warmup: int, instructions: int, seed: int = 1,
                    full_ipc: float) -> float | None:
    """``program``'s alone IPC with a quarter of the LLC (the first quarter of the machine's
    cache-only colours) over its IPC with all of it; None when the machine has fewer than 4
    cache colours."""
    spec = comparison.build_alone_specs(machine, [program], instructions=instructions, seed=seed, warmup=warmup)[0]
    colours = _cache_colours(machine)
    if colours < 4:
        return None
    spec["os"] = {**spec.get("os", {}), "policy": "cache-only", "colours": [list(range(colours // 4))]}
    core = comparison.alone_run(spec)
    return core["ipc"] / full_ipc if full_ipc else None


@functools.lru_cache(maxsize=None)
def _cache_colours(machine: str) -> int:
    """The number of cache-only colours on ``machine`` (0 when the policy cannot run there)."""
    try:
        run = api.run_sim_spec(api.build_sim_spec(machine, ["light"], instructions=1000, policy="cache-only"))
    except api.MemtintError:
        return 0
    return int(run["colours"]["colours"])


def classes(stats: dict[str, Any]) -> dict[str, Any]:
    """The classes of :func:`alone_stats` output."""
    reads, writes = stats["dram_reads_pki"], stats["dram_writes_pki"]
    hit = stats["row_hit_rate"]
    return {
        "intensity": "intensive" if stats["llc_mpki"] > INTENSIVE_MPKI else "light",
        "access": None if hit is None else ("streaming" if hit >= 0.5 else "random"),
        "write_heavy": reads > 0 and writes * WRITE_HEAVY_READS >= reads,
        "cache_sensitive": None if stats.get("quarter_llc_ipc") is None
        else stats["quarter_llc_ipc"] < CACHE_SENSITIVE_IPC,
    }


def measure(programs: dict[str, str], machine: str, *, warmup: int, instructions: int,
            seed: int = 1) -> dict[str, dict[str, Any]]:
    """Per name of ``programs`` (name -> trace path or profile): its alone statistics on
    ``machine`` and its ``classes``."""
    out = {}
    for name, program in programs.items():
        stats = alone_stats(program, machine, warmup=warmup, instructions=instructions, seed=seed)
        out[name] = {**stats, "classes": classes(stats)}
    return out


def intensive(measured: dict[str, dict[str, Any]], names: Iterable[str] | None = None) -> list[str]:
    """The names (in ``names`` order, default all) measured memory-intensive."""
    return [n for n in (names or measured) if measured[n]["classes"]["intensity"] == "intensive"]
