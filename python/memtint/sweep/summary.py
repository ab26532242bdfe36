"""Summaries of stored sweep results (the table `memtint sweep` prints; reports build on it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable

if TYPE_CHECKING:
    import pandas

__all__ = ["baseline_first", "policy_summary", "sampled_note"]


def _sampled(frame: "pandas.DataFrame") -> "pandas.Series":
    """Which rows are sampled runs (False where the store predates the column)."""
    import pandas as pd

    if "sampled" not in frame.columns:
        return pd.Series(False, index=frame.index)
    return frame["sampled"].fillna(False).astype(bool)


def sampled_note(rows: list[dict[str, Any]]) -> str:
    """A line saying that some of the summarised runs are sampled estimates (empty when none)."""
    sampled = sum(r.get("sampled_runs") or 0 for r in rows)
    if not sampled:
        return ""
    total = sum(r["runs"] - r["failed"] for r in rows)
    which = "all" if sampled == total else f"{sampled} of {total}"
    unbounded = any(r.get("weighted_speedup_ci95_halfwidth_mean") == float("inf") for r in rows)
    return (f"sampled simulation: {which} successful runs are estimates; WS ± is the mean half-width of "
            "their weighted speedups' 95 % intervals" + (
                "; ± ?: a run measured a program in fewer than two units, or in units that all gave one CPI (or, "
                "sampled by phases, no phase in two), so its interval is unbounded (longer runs or a shorter sampling "
                "period give more units, units of 1,000 instructions or more a spread; by phases, a larger "
                "sampling.min_units or fewer sampling.clusters)" if unbounded else ""))


def halfwidth_mean(sampled: "pandas.DataFrame") -> float | None:
    """The mean half-width of sampled runs' weighted-speedup intervals (None without sampled
    runs; infinite when a run was stored without bounds: a core of one unit)."""
    if sampled.empty or "weighted_speedup_ci95_low" not in sampled.columns:
        return None
    widths = (sampled["weighted_speedup_ci95_high"] - sampled["weighted_speedup_ci95_low"]) / 2
    return float("inf") if widths.isna().any() else float(widths.mean())


def change_mean(runs: "pandas.DataFrame") -> tuple[str | None, float | None, float | None]:
    """Over runs that replayed their mix's schedule (matched units, ``matched_to``): the policy
    they were matched to, the mean relative change of their weighted speedup against its runs
    (each interval's centre: the delta method's intervals are symmetric) and the half-width of
    that mean's 95 % interval, sqrt(sum h_i^2) / k over the k runs (the mixes are independent
    samples; infinite when a run's interval is unbounded). ``(None, None, None)`` without such runs."""
    if "matched_to" not in runs.columns:
        return None, None, None
    matched = runs[runs["matched_to"].notna() & (runs["matched_to"] != "")]
    if matched.empty:
        return None, None, None
    from memtint.sampling import mean_half_width

    low, high = matched["weighted_speedup_change_ci95_low"], matched["weighted_speedup_change_ci95_high"]
    half = ((high - low) / 2).fillna(float("inf"))  # no bounds stored: an unbounded interval
    return str(matched["matched_to"].iloc[0]), float(((low + high) / 2).mean()), mean_half_width(list(half))


def baseline_first(labels: Iterable[str], policy_of: Callable[[str], str], base: str | None) -> list[str]:
    """Policy labels in the order tables list them: the baseline's first (its detailed and its
    sampled series), then alphabetical; a store's own order is the order its runs finished in."""
    ordered = sorted(set(labels))
    first = [label for label in ordered if policy_of(label) == base]
    return first + [label for label in ordered if label not in first]


def policy_summary(frame: "pandas.DataFrame", config_hashes: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """Per policy (the baseline first, then alphabetical): runs, failures, mean and max weighted speedup,
    mean maximum slowdown and mean row-buffer miss rate over its successful runs; for sampled
    runs, ``sampled_runs`` and ``weighted_speedup_ci95_halfwidth_mean`` (the mean half-width of
    their weighted speedups' 95 % intervals; None without sampled runs); for runs that replayed
    their mix's schedule (matched units), ``matched_to``, ``weighted_speedup_change_mean`` and
    ``weighted_speedup_change_ci95_halfwidth`` (:func:`change_mean`; None otherwise).

    ``frame`` is :func:`memtint.load_results`; ``config_hashes`` restricts it to some runs (one
    sweep's)."""
    if config_hashes is not None:
        frame = frame[frame["config_hash"].isin(set(config_hashes))]
    runs = frame.drop_duplicates("config_hash")  # run-level metrics are repeated on each core's row
    # Sampled and detailed runs of a policy are summarised apart (estimates of different precision).
    both = not runs.empty and _sampled(runs).nunique() > 1
    labels = runs["policy"].where(~_sampled(runs), runs["policy"] + " (sampled)") if both else runs["policy"]
    # The baseline is the alone runs' policy, as `memtint report` takes it.
    base = next(iter(dict.fromkeys(runs["baseline"].dropna())), None) if "baseline" in runs else None
    out = []
    for policy in baseline_first(labels, lambda label: label.removesuffix(" (sampled)"), base):
        group = runs[labels == policy]
        ok = group[group["status"] == "ok"]

        def stat(column: str, how: str) -> float | None:
            return None if ok.empty else float(getattr(ok[column], how)())

        sampled = ok[_sampled(ok)]
        halves = halfwidth_mean(sampled)
        matched_to, change, change_half = change_mean(sampled)
        out.append({
            "policy": policy,
            "runs": int(len(group)),
            "failed": int((group["status"] != "ok").sum()),
            "weighted_speedup_mean": stat("weighted_speedup", "mean"),
            "weighted_speedup_max": stat("weighted_speedup", "max"),
            "maximum_slowdown_mean": stat("maximum_slowdown", "mean"),
            "row_buffer_miss_rate_mean": stat("mix_row_buffer_miss_rate", "mean"),
            "sampled_runs": int(len(sampled)),
            "weighted_speedup_ci95_halfwidth_mean": halves,
            "matched_to": matched_to,
            "weighted_speedup_change_mean": change,
            "weighted_speedup_change_ci95_halfwidth": change_half,
        })
    return out
