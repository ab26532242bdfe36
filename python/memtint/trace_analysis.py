"""Trace statistics for classifying programs: what a CPU trace is on its own (instructions,
reads and writebacks per kilo-instruction, footprint, reuse distances) and, on a machine, the
row-buffer locality and bank-level parallelism it shows when it runs alone there.

The labels follow the papers' axes: memory intensity (BPM §5: memory-intensive when the LLC
misses exceed 1 per kilo-instruction), row-buffer locality and bank-level parallelism (BPM §5.5,
TCM), and LLC sensitivity (the HVR classes of §3.2, estimated here from reuse distances where the
paper measured slowdowns under cache quotas; the estimate is labelled as such)."""

from __future__ import annotations

import json
import os
import re
from typing import Any

from memtint import _engine
from memtint.api import MemtintError, _program, engine_json, interruptible, run_sim

__all__ = ["trace_stats", "classify", "ALONE_INSTRUCTIONS", "INTENSIVE_MPKI"]

#: Instructions of the alone run when neither the caller nor the trace's length bounds it.
ALONE_INSTRUCTIONS = 10_000_000
#: BPM §5: memory-intensive means more than 1 LLC miss per kilo-instruction.
INTENSIVE_MPKI = 1.0
#: Cache-sensitivity estimate: a program whose reads hit a fully associative LRU cache of the
#: LLC's size this much more often than one of 1/8 of it is "hungry" (HVR's LLCH); one that
#: gains this much only above half the LLC is "middle" (LLCM). Chosen, not from the paper.
SENSITIVE_GAIN = 0.2
#: Labels need this many instructions behind them (the alone run's, or the trace's for its own
#: counts and reuse): below it the first touch of each line, a miss whatever the program, is
#: most of what is counted. Chosen, not from a paper.
MIN_LABEL_INSTRUCTIONS = 100_000


def trace_stats(
    workload: str | os.PathLike[str],
    *,
    machine: str | dict[str, Any] | None = None,
    instructions: int | None = None,
    reuse: bool = True,
    policy: str = "buddy",
    seed: int = 1,
) -> dict[str, Any]:
    """Statistics of one CPU trace (or profile, given ``instructions``), as one dict.

    Keys: the trace counts of :func:`memtint.api.cpu_trace_stats` plus ``reads_pki``,
    ``writebacks_pki``, ``footprint_bytes``; ``reuse`` (reuse-distance summary, when ``reuse``);
    ``alone`` (when ``machine`` is given: the program run alone on core 0 of the machine under
    ``policy`` for ``instructions``, or the trace's length capped at :data:`ALONE_INSTRUCTIONS`:
    ``ipc``, ``llc_mpki``, ``row_hit_rate``, ``row_buffer_miss_rate``,
    ``bank_level_parallelism``, ``read_latency_ns_mean``); ``classes`` (see
    :func:`memtint.trace_analysis.classify`).
    docs/stats.md documents every field."""
    from memtint.api import _seed, flag_argument, instruction_count

    flag_argument("reuse", reuse)
    if instructions is not None:
        instruction_count("instructions", instructions)
    _seed("seed", seed)  # None reached the engine as its default seed
    if not isinstance(policy, str):  # None ran buddy and labelled the alone figures None
        raise MemtintError(f"policy: expected a placement policy's name, got {policy!r}")
    try:
        program = _program(workload)
        request = {"workload": program, "instructions": instructions, "seed": seed, "reuse": reuse}
        stats: dict[str, Any] = json.loads(interruptible(_engine.cpu_trace_stats, engine_json(request)))
    except MemtintError as error:  # the keys are this request's, not the user's: the file is named
        raise MemtintError(re.sub(r"^(invalid configuration: workload: |programs(\[\d+\])?: )", "", str(error))) \
            from None
    kilo = stats["instructions"] / 1000.0 if stats["instructions"] else None
    stats["workload"] = str(workload)
    stats["reads_pki"] = stats["reads"] / kilo if kilo else 0.0
    stats["writebacks_pki"] = stats["writebacks"] / kilo if kilo else 0.0
    stats["footprint_bytes"] = stats["footprint_lines"] * 64
    stats.setdefault("reuse", None)
    stats["alone"] = None
    if machine is not None:
        budget = instructions or min(max(stats["instructions"], 1), ALONE_INSTRUCTIONS)
        result = run_sim(machine, [program], instructions=budget, policy=policy, seed=seed)
        core = result["cores"][0]
        accesses = core["row_hits"] + core["row_misses"] + core["row_conflicts"]
        stats["alone"] = {
            "machine": result["config"]["machine"],
            "policy": policy,
            "instructions": core["instructions"],
            "ipc": core["ipc"],
            "llc_mpki": core["llc_mpki"],
            "dram_requests": accesses,
            "row_hit_rate": core["row_hits"] / accesses if accesses else None,
            "row_buffer_miss_rate": core["row_buffer_miss_rate"],
            "bank_level_parallelism": core["bank_level_parallelism"],
            "read_latency_ns_mean": core["read_latency_ns"]["mean"],
            "llc_bytes": _llc_bytes(result),
        }
    stats["classes"] = classify(stats)
    return stats


def _llc_bytes(result: dict[str, Any]) -> int | None:
    llc = (result["config"].get("cache") or {}).get("llc")
    return int(llc["size_bytes"]) if isinstance(llc, dict) else None


def classify(stats: dict[str, Any]) -> dict[str, Any]:
    """Labels from :func:`trace_stats` output: ``intensity`` (``intensive`` or ``light``, from
    the alone run's LLC MPKI, or the trace's reads per kilo-instruction without a machine: the
    trace's reads are already misses of the hierarchy it was captured with),
    ``row_locality`` (``high`` at a row-hit rate of at least 0.5 alone, else ``low``; None
    without a machine) and ``llc_sensitivity_estimate`` (``thrashing``, ``hungry``,
    ``middle`` or ``fitting``, from reuse distances; None without them). Fewer than
    :data:`MIN_LABEL_INSTRUCTIONS` measured give no labels: ``intensity`` None and
    ``unlabelled`` says why."""
    if not isinstance(stats, dict):
        raise MemtintError(f"stats: expected trace_stats' result (a dict), got {stats!r}")
    alone = stats.get("alone")
    mpki = alone["llc_mpki"] if alone else stats.get("reads_pki", 0.0)
    classes: dict[str, Any] = {
        "intensity": "intensive" if mpki > INTENSIVE_MPKI else "light",
        "intensity_mpki": mpki,
        "row_locality": None,
        "llc_sensitivity_estimate": None,
        "unlabelled": None,
    }
    measured = (alone or stats).get("instructions", 0)
    if measured < MIN_LABEL_INSTRUCTIONS:  # a handful of cold misses is not a class
        classes["intensity"] = None
        classes["unlabelled"] = (f"{measured:,} instructions; labels need at least {MIN_LABEL_INSTRUCTIONS:,}"
                                 + (" (and the alone figures: a shorter run counts the misses of loads the core "
                                    "fetched past its end)" if alone else ""))
        return classes
    if alone and alone.get("row_hit_rate") is not None:
        classes["row_locality"] = "high" if alone["row_hit_rate"] >= 0.5 else "low"
    reuse = stats.get("reuse")
    if reuse and reuse.get("reads") and stats.get("instructions", 0) >= MIN_LABEL_INSTRUCTIONS:
        llc = (alone or {}).get("llc_bytes") or 8 << 20
        hits = {h["cache_bytes"]: h["hit_fraction"] for h in reuse["lru_hit_fraction"]}

        def hit_at(size: int) -> float:
            # The largest reported size not above `size` (sizes are powers of two from 256 KiB).
            fitting = [s for s in hits if s <= size]
            return hits[max(fitting)] if fitting else 0.0

        full, half, eighth = hit_at(llc), hit_at(llc // 2), hit_at(llc // 8)
        if classes["intensity"] == "light":
            label = "fitting"
        elif full - eighth < SENSITIVE_GAIN and full < 0.5:
            label = "thrashing"
        elif full - half >= SENSITIVE_GAIN:
            label = "hungry"
        elif half - eighth >= SENSITIVE_GAIN:
            label = "middle"
        else:
            label = "fitting"
        classes["llc_sensitivity_estimate"] = label
        classes["lru_hit_fraction_at_llc"] = {"eighth": eighth, "half": half, "full": full}
    return classes
