"""Summaries of stored sweep results (the table `memtint sweep` prints; reports build on it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

if TYPE_CHECKING:
    import pandas

__all__ = ["policy_summary"]


def policy_summary(frame: "pandas.DataFrame", config_hashes: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """Per policy (in order of first appearance): runs, failures, mean and max weighted speedup,
    mean maximum slowdown and mean row-buffer miss rate over its successful runs.

    ``frame`` is :func:`memtint.load_results`; ``config_hashes`` restricts it to some runs (one
    sweep's)."""
    if config_hashes is not None:
        frame = frame[frame["config_hash"].isin(set(config_hashes))]
    runs = frame.drop_duplicates("config_hash")  # run-level metrics are repeated on each core's row
    out = []
    for policy in dict.fromkeys(runs["policy"]):
        group = runs[runs["policy"] == policy]
        ok = group[group["status"] == "ok"]

        def stat(column: str, how: str) -> float | None:
            return None if ok.empty else float(getattr(ok[column], how)())

        out.append({
            "policy": policy,
            "runs": int(len(group)),
            "failed": int((group["status"] != "ok").sum()),
            "weighted_speedup_mean": stat("weighted_speedup", "mean"),
            "weighted_speedup_max": stat("weighted_speedup", "max"),
            "maximum_slowdown_mean": stat("maximum_slowdown", "mean"),
            "row_buffer_miss_rate_mean": stat("mix_row_buffer_miss_rate", "mean"),
        })
    return out
