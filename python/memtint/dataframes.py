"""Results as pandas DataFrames: one row per core per run, with the run's metrics joined.

Works on the dictionaries :func:`memtint.run_sim` and :func:`memtint.compare` return (a sweep's
store has the same shape: :func:`memtint.load_results`).
"""

from __future__ import annotations

from typing import Any

from memtint.api import MemtintError

#: Per-core keys of a ``run_sim`` result copied into the frame.
SIM_CORE_COLUMNS = (
    "core", "program", "instructions", "cycles", "ipc", "l2_hits", "llc_accesses", "llc_misses", "llc_mpki",
    "dram_reads", "dram_writes", "row_hits", "row_misses", "row_conflicts", "row_buffer_miss_rate", "pages",
    "colour_overflow_pages", "banks_used", "channels_used", "row_conflicts_by_self", "row_conflicts_by_other",
    "row_misses_after_self", "row_misses_after_other", "row_misses_after_refresh_or_policy", "llc_lines",
    "llc_lines_mean",
)


def to_frame(result: dict[str, Any] | list[dict[str, Any]]) -> "pandas.DataFrame":
    """A DataFrame of one or more ``run_sim`` or ``compare`` results (not mixed).

    ``run_sim``: one row per core, with ``policy``, ``machine``, ``seed``, ``instructions``, the
    run's ``row_buffer_miss_rate`` (as ``mix_row_buffer_miss_rate``) and the mean DRAM read
    latency in ns per core. ``compare``: one row per (policy, core), as ``memtint compare --csv``.
    """
    import pandas

    results = list(result) if isinstance(result, (list, tuple)) else [result]
    kinds = {r.get("kind") for r in results if isinstance(r, dict)}
    if len(kinds) > 1:  # their rows have different columns: one frame would be mostly empty cells
        raise MemtintError(f"results of different kinds ({', '.join(sorted(map(str, kinds)))}): give run_sim results "
                           "or compare results, one kind per frame")
    rows: list[dict[str, Any]] = []
    for i, r in enumerate(results):
        kind = r.get("kind") if isinstance(r, dict) else None
        try:
            rows.extend(_rows(i, r, kind))
        except (KeyError, TypeError, AttributeError, IndexError) as error:  # a result edited or cut short
            what = f"no key {error}" if isinstance(error, KeyError) else str(error)
            raise MemtintError(f"result {i}: not a whole {_MAKER[kind]} result ({what}): give results as "
                               f"{_MAKER[kind]} returns them") from None
    return pandas.DataFrame(rows)


_MAKER = {"sim": "run_sim", "compare": "compare"}


def _rows(i: int, r: Any, kind: Any) -> list[dict[str, Any]]:
    """Result ``i``'s rows (it has kind ``kind``)."""
    rows: list[dict[str, Any]] = []
    if kind == "sim":
        cfg = r["config"]
        for c in r["cores"]:
            row = {k: c.get(k) for k in SIM_CORE_COLUMNS}
            row.update(
                run=i, policy=r["policy"], machine=cfg["machine"], seed=cfg["seed"],
                mix_row_buffer_miss_rate=r["row_buffer_miss_rate"],
                read_latency_ns_mean=c["read_latency_ns"]["mean"],
                read_latency_ns_p99=c["read_latency_ns"]["p99"],
            )
            rows.append(row)
    elif kind == "compare":
        from memtint.comparison import to_csv_rows

        for row in to_csv_rows(r):
            rows.append({"run": i, "machine": r["machine"], "seed": r["seed"], **row})
    else:
        raise MemtintError(f"result {i}: not a run_sim or compare result (kind {kind!r})")
    return rows
