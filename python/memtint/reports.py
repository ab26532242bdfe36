"""Reports of stored sweep results (`memtint report RESULTS_DIR`): an HTML page with PNG plots
(matplotlib, Agg backend) and a Markdown summary (docs/sweeps.md, "Reports").

(:mod:`memtint.tables` renders terminal tables; this module writes files.)

Every number comes from :func:`memtint.load_results`. Runs are grouped by mix — the same
programs, instruction target, seed and os table — and each run's weighted speedup and maximum
slowdown are divided by those of the baseline policy's run of the same mix (on the same machine
when there is one, otherwise on the only machine the baseline ran that mix on: e.g. ``bpm-plus``
runs on ``i7-860-bpm-plus`` are normalised to ``buddy`` on ``i7-860``). Failed runs are counted
and left out of the plots and statistics.
"""

from __future__ import annotations

import html
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from memtint.outputs import save_figure, write_text
from memtint.sampling import mean_half_width

if TYPE_CHECKING:
    import pandas

__all__ = ["run_table", "summary_rows", "summary_markdown", "summary_cell", "summary_columns", "write_report",
           "SUMMARY_COLUMNS"]

#: Mixes shown in a per-mix bar chart; more would be unreadable (the distribution plot shows all).
MAX_BARS = 40

_MIX_KEY = ["mix", "instructions", "seed", "os"]

#: (key of a summary row, column heading, digits; None digits = an integer, "%" = a percentage).
SUMMARY_COLUMNS: list[tuple[str, str, Any]] = [
    ("runs", "runs", None),
    ("failed", "failed", None),
    ("ws_norm_mean", "WS / base, mean", 3),
    ("ws_norm_max", "WS / base, max", 3),
    ("ms_norm_mean", "max slowdown / base, mean", 3),
    ("ms_norm_max", "max slowdown / base, max", 3),
    ("weighted_speedup_mean", "WS mean", 3),
    ("weighted_speedup_max", "WS max", 3),
    ("maximum_slowdown_mean", "max slowdown mean", 3),
    ("maximum_slowdown_max", "max slowdown max", 3),
    ("rb_miss_mean", "RB miss mean (%)", "%"),
    ("rb_miss_max", "RB miss max (%)", "%"),
]


def summary_columns(rows: list[dict[str, Any]]) -> list[tuple[str, str, Any]]:
    """:data:`SUMMARY_COLUMNS`, with ``WS vs <policy>, mean`` after the WS / base columns when
    the runs replayed the units of a policy other than the baseline (``ws_change_vs``)."""
    from memtint.tables import report_pacer

    pacer = report_pacer(rows)
    if not pacer:
        return list(SUMMARY_COLUMNS)
    at = [key for key, _, _ in SUMMARY_COLUMNS].index("ws_norm_max") + 1
    return SUMMARY_COLUMNS[:at] + [("ws_change_mean", f"WS vs {pacer}, mean", "change")] + SUMMARY_COLUMNS[at:]


def _order(series: "pandas.Series", runs: "pandas.DataFrame", base: str) -> list[str]:
    """Policy labels in a stable order (memtint.sweep.summary.baseline_first)."""
    from memtint.sweep.summary import baseline_first

    return baseline_first(series, lambda s: runs.loc[series == s, "policy"].iloc[0], base)


def machine_order(runs: "pandas.DataFrame") -> list[str]:
    """The store's machines, most runs first, then by name: not the order runs finished in, which
    parallel jobs change from one sweep to the next (a report labelled another machine plain)."""
    counts = runs["machine"].value_counts()
    return sorted(counts.index, key=lambda m: (-int(counts[m]), str(m)))


def _series(runs: "pandas.DataFrame") -> "pandas.Series":
    """A policy's label: its name, or ``policy @ machine`` when the results hold several machines
    and the policy ran on a machine other than the first of :func:`machine_order`; ``(sampled)``
    after it when the results hold sampled and detailed runs, which are estimates of different
    precision."""
    machines = machine_order(runs)
    if len(machines) <= 1:
        labels = runs["policy"].copy()
    else:
        common = machines[0]
        labels = runs.apply(lambda r: r["policy"] if r["machine"] == common else f"{r['policy']} @ {r['machine']}", axis=1)
    if runs["_sampled"].nunique() > 1:
        labels = labels.where(~runs["_sampled"], labels + " (sampled)")
    if runs["_setup"].nunique() > 1:  # several experiments in one store: each policy once per setup
        labels = labels + " [" + runs["_setup"].replace("", "setup not recorded") + "]"
    return labels


def _mix_label(mix: str) -> str:
    """``stream|light|light|light`` → ``stream, light×3`` (parameters kept, order of appearance)."""
    counts: dict[str, int] = {}
    for program in mix.split("|"):
        name = os.path.basename(program) if os.sep in program else program
        counts[name] = counts.get(name, 0) + 1
    return ", ".join(p if n == 1 else f"{p}×{n}" for p, n in counts.items())


def choose_baseline(frame: "pandas.DataFrame", baseline: str | None = None) -> str:
    """The policy to normalise to: ``baseline`` if given, else the alone runs' policy (the
    ``baseline`` column) when it was swept, else the first policy by name."""
    from memtint.api import MemtintError

    policies = sorted(set(frame["policy"].dropna().astype(str)))  # not the store's order, which is when runs finished
    if baseline is not None:
        if baseline not in policies:
            raise MemtintError(f"baseline policy {baseline!r} is not in the results "
                               f"(policies: {', '.join(policies) or 'none'})")
        return baseline
    for candidate in dict.fromkeys(frame["baseline"].dropna()):
        if candidate in policies:
            return candidate
    if not policies:
        raise MemtintError("the results hold no runs")
    return policies[0]


def run_table(frame: "pandas.DataFrame", baseline: str | None = None) -> "pandas.DataFrame":
    """One row per run (config hash): the configuration, ``series`` (policy label), ``mix_label``,
    the run-level metrics, and ``ws_norm`` / ``ms_norm``: weighted speedup and maximum slowdown
    divided by the baseline policy's run of the same mix (NaN for failed runs and mixes without a
    successful baseline run). ``attrs["baseline"]`` names the baseline policy."""
    import pandas as pd

    from memtint.sweep.store import setup_beside_policy, stale_versions

    base_policy = choose_baseline(frame, baseline)
    # A canonical order: a parallel sweep stores runs as they finish, and the per-mix table, the
    # plots' mixes and the findings must not change with that.
    runs = (frame.drop_duplicates("config_hash").sort_values(["machine", "mix", "seed", "instructions", "policy", "config_hash"], kind="stable")
            .reset_index(drop=True).copy())
    # A sampled run is normalised by the baseline's sampled run of its mix, a detailed one by the
    # detailed (a store can hold both: a sweep run with and without --sample into one --out).
    runs["_sampled"] = runs["sampled"].fillna(False).astype(bool) if "sampled" in runs.columns else False
    # Runs of other settings (warm-up, overrides, mapping, scheduler) are other experiments: never
    # one another's baseline, and labelled apart when a store holds several.
    runs["_setup"] = runs["setup"].fillna("") if "setup" in runs.columns else ""
    # ... but the scheduler a "buddy+tcm" label names is the compared policy's own.
    runs["_setup"] = [setup_beside_policy(str(p), s) for p, s in zip(runs["policy"], runs["_setup"])]
    # Stored before setup named the sampling settings: sampled runs of other settings look alike.
    unrecorded = runs["_sampled"] & (runs["_setup"] != "") & ~runs["_setup"].str.contains("sampling.", regex=False)
    runs.loc[unrecorded, "_setup"] = runs.loc[unrecorded, "_setup"] + ", sampling settings not recorded"
    # The alone runs' policy sets every run's speedups: runs of other baselines are other experiments.
    if len(runs) and runs.groupby("machine")["baseline"].nunique().max() > 1:
        runs["_setup"] = "baseline=" + runs["baseline"].fillna("?") + runs["_setup"].map(lambda t: t and ", " + t)
    runs["series"] = _series(runs) if len(runs) else pd.Series(dtype=str)
    # A failed run that a later run of the same settings replaced (its trace mended, so another
    # configuration hash) is not a failure of what the store holds: left out, and counted apart.
    same = ["machine", "series", "baseline", "_sampled", "_setup"] + _MIX_KEY
    batch = (lambda r: int(r["batch"])) if "batch" in runs.columns else (lambda r: 0)
    latest_ok: dict[tuple, int] = {}
    records = runs.to_dict("records")  # dicts, not iterrows' Series: a sweep's report reads thousands
    for r in records:
        if r["status"] == "ok":
            k = tuple(str(r[c]) for c in same)
            latest_ok[k] = max(latest_ok.get(k, -1), batch(r))
    superseded = [r["status"] != "ok" and latest_ok.get(tuple(str(r[c]) for c in same), -1) >= batch(r)
                  for r in records]
    runs = runs[[not x for x in superseded]].reset_index(drop=True)
    # Runs of a mix that read an older version of a file (its machine edited, a trace captured
    # again) than the mix's newest run are another experiment than the store's: left out, counted.
    stale = stale_versions(runs, same + (["memtint_version"] if "memtint_version" in runs else []))
    runs = runs[[not x for x in stale]].reset_index(drop=True)
    runs.attrs["superseded"] = sum(superseded)
    runs.attrs["stale"] = sum(stale)
    runs["mix_label"] = runs["mix"].map(_mix_label)
    if "mix_name" in runs.columns:  # a spec's own label for a mix first ("sl (stream, light)")
        runs["mix_label"] = [f"{name} ({label})" if isinstance(name, str) and name and name != mix else label
                             for name, mix, label in zip(runs["mix_name"], runs["mix"], runs["mix_label"])]
    seeds = runs.groupby("mix")["seed"].transform("nunique") > 1
    instr = runs.groupby("mix")["instructions"].transform("nunique") > 1
    runs["mix_label"] = [
        label + (f" · seed {seed}" if s else "") + (f" · {n:,} instr" if i else "")
        for label, seed, n, s, i in zip(runs["mix_label"], runs["seed"], runs["instructions"], seeds, instr)]

    records = runs.to_dict("records")
    base = [r for r in records if r["status"] == "ok" and r["policy"] == base_policy]
    # Everything a configuration hash covers is in the key (the engine version too), so a run has
    # at most one baseline run per machine; where several still match (a store written before
    # setup named all settings), none is taken: another setup's run would be a wrong baseline.
    key = _MIX_KEY + ["baseline", "_sampled", "_setup"] + (["memtint_version"] if "memtint_version" in runs else [])
    same_machine: dict[tuple, list] = {}
    by_mix: dict[tuple, list] = {}
    for r in base:
        same_machine.setdefault(tuple(r[k] for k in key + ["machine"]), []).append(r)
        by_mix.setdefault(tuple(r[k] for k in key), []).append(r)

    ws_norm, ms_norm, ws_half = [], [], []
    for r in records:
        candidates = same_machine.get(tuple(r[k] for k in key + ["machine"]))
        if candidates is None:
            candidates = by_mix.get(tuple(r[k] for k in key), [])
        ref = candidates[0] if len(candidates) == 1 else None
        if r["status"] != "ok" or ref is None:
            ws_norm.append(math.nan)
            ms_norm.append(math.nan)
            ws_half.append(math.nan)
        else:
            ws_norm.append(_ratio(r["weighted_speedup"], ref["weighted_speedup"]))
            ms_norm.append(_ratio(r["maximum_slowdown"], ref["maximum_slowdown"]))
            ws_half.append(_matched_half_width(r, base_policy))
    runs["ws_norm"] = ws_norm
    runs["ms_norm"] = ms_norm
    runs["ws_norm_ci95_halfwidth"] = ws_half
    runs.attrs["baseline"] = base_policy
    runs.attrs["series"] = _order(runs["series"], runs, base_policy) if len(runs) else []
    return runs


def _ratio(value: float, reference: float) -> float:
    """``value / reference``, NaN (no figure) where the baseline's figure is 0 or not finite, or
    the ratio is not: a stored 0 (a run that retired nothing, a hand-edited cell) stopped the report."""
    try:
        ratio = value / reference if reference and math.isfinite(reference) else math.nan
    except TypeError:  # None: stored without the figure
        return math.nan
    return ratio if math.isfinite(ratio) else math.nan


def _matched_half_width(run: Any, base_policy: str) -> float:
    """The half-width of a run's ``ws_norm`` 95 % interval when it replayed the baseline's
    schedule of its mix (matched units: the stored change interval against that run, whose
    width ``ws_norm`` shares); 0 for the baseline's own run; NaN otherwise, infinite when the
    interval is unbounded."""
    if run.get("policy") == base_policy:
        return 0.0
    if run.get("matched_to") != base_policy:
        return math.nan
    low, high = run.get("weighted_speedup_change_ci95_low"), run.get("weighted_speedup_change_ci95_high")
    if any(v is None or v != v for v in (low, high)):  # stored without bounds: unbounded
        return math.inf
    return (high - low) / 2


def population_note(ok: "pandas.DataFrame", series: list[str]) -> str:
    """A sentence when the policies' means rest on different mixes (several sweeps in one
    store): averaged side by side they would compare populations, not policies."""
    counts = {s: int(ok.loc[ok["series"] == s, _MIX_KEY].drop_duplicates().shape[0]) for s in series}
    if len(set(counts.values())) <= 1:
        return ""
    listed = ", ".join(f"{s} {n}" for s, n in counts.items())
    return (f"The policies ran on different mixes ({listed}): their means are over different populations; "
            "compare them mix by mix (the table per mix below).")


def summary_rows(frame: "pandas.DataFrame", baseline: str | None = None) -> list[dict[str, Any]]:
    """Per policy label (the baseline first, then alphabetical): runs, failures, and the mean and maximum over
    its successful runs of the normalised weighted speedup and maximum slowdown, the raw ones and
    the mix row-buffer miss rate (a fraction). Absent values are None."""
    runs = frame if "ws_norm" in frame.columns else run_table(frame, baseline)
    out = []
    for series in runs.attrs.get("series") or dict.fromkeys(runs["series"]):
        group = runs[runs["series"] == series]
        ok = group[group["status"] == "ok"]

        def stat(column: str, how: str) -> float | None:
            values = ok[column].dropna()
            return None if values.empty else float(getattr(values, how)())

        row: dict[str, Any] = {"policy": series, "runs": int(len(group)),
                               "failed": int((group["status"] != "ok").sum())}
        # Sampled runs: how many, and the mean half-width of their WS intervals (None: none).
        sampled = ok[ok["sampled"].fillna(False).astype(bool)] if "sampled" in ok.columns else ok.iloc[0:0]
        row["sampled_runs"] = int(len(sampled))
        from memtint.sweep.summary import change_mean, halfwidth_mean

        row["weighted_speedup_ci95_halfwidth_mean"] = halfwidth_mean(sampled)
        # Matched units: the 95 % sampling interval of the mean WS / base, sqrt(sum h^2) / k over
        # its k runs (independent mixes); None unless every one of them replayed the baseline's.
        halves = ok.loc[ok["ws_norm"].notna(), "ws_norm_ci95_halfwidth"] if "ws_norm_ci95_halfwidth" in ok else None
        row["ws_norm_ci95_halfwidth"] = (None if halves is None or halves.isna().any() or not (halves > 0).any()
                                         else mean_half_width(list(halves)))
        # Matched to a policy other than the report's baseline (`--baseline`, or one the store
        # lacks: the sweep ran it for its schedules alone): the stored changes against it, as the
        # sweep's table shows them.
        pacer, change, change_half = change_mean(sampled)
        outside = pacer is not None and pacer != runs.attrs.get("baseline")
        row["ws_change_vs"] = pacer if outside else None
        row["ws_change_mean"] = change if outside else None
        row["ws_change_ci95_halfwidth"] = change_half if outside else None
        for key, column in (("ws_norm", "ws_norm"), ("ms_norm", "ms_norm"),
                            ("weighted_speedup", "weighted_speedup"), ("maximum_slowdown", "maximum_slowdown"),
                            ("rb_miss", "mix_row_buffer_miss_rate")):
            row[f"{key}_mean"] = stat(column, "mean")
            row[f"{key}_max"] = stat(column, "max")
        out.append(row)
    return out


def per_mix_rows(ok: "pandas.DataFrame", series: list[str]) -> list[tuple[str, list[str]]]:
    """The per-mix table of ``ws_norm`` (mean over a mix label's runs), one row per mix in the
    plots' order, a cell per series: with ``± h`` where the weighted-speedup plot draws that
    bar's 95 % sampling interval (runs that replayed the baseline's units; ``± ?`` unbounded)."""
    table = ok.pivot_table(index="mix_label", columns="series", values="ws_norm", aggfunc="mean")
    halves = None
    if "ws_norm_ci95_halfwidth" in ok.columns:
        halves = ok.pivot_table(index="mix_label", columns="series", values="ws_norm_ci95_halfwidth",
                                aggfunc=lambda h: mean_half_width(list(h)))
    out = []
    for mix in dict.fromkeys(ok["mix_label"]):
        cells = []
        for s in series:
            value = table.at[mix, s] if s in table.columns and mix in table.index else None
            text = format_cell(value, 3)
            h = halves.at[mix, s] if halves is not None and s in halves.columns and mix in halves.index else None
            if text != "—" and h is not None and h == h and h > 0:
                text += " ± ?" if h == math.inf else f" ± {h:.3f}"
            cells.append(text)
        out.append((mix, cells))
    return out


def format_cell(value: Any, digits: Any) -> str:
    """A summary table cell as written in summary.md and index.html."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if digits is None:
        return str(int(value))
    if digits == "%":
        return f"{100 * value:.1f}"
    return f"{value:.{digits}f}"


def summary_cell(row: dict[str, Any], key: str, digits: Any) -> str:
    """A summary row's cell: :func:`format_cell`, with ``± h`` after the mean weighted speedup
    of sampled runs (h: the mean half-width of their 95 % intervals) and after the mean WS / base
    of runs that replayed the baseline's schedules (h: the half-width of that mean's interval)."""
    if digits == "change":
        from memtint.tables import change_cell

        return change_cell(row.get(key), row.get(key.replace("_mean", "_ci95_halfwidth")))
    text = format_cell(row[key], digits)
    half = row.get({"weighted_speedup_mean": "weighted_speedup_ci95_halfwidth_mean",
                    "ws_norm_mean": "ws_norm_ci95_halfwidth"}.get(key, ""))
    if half is not None and text != "—":
        text += " ± ?" if half == float("inf") else f" ± {format_cell(half, digits)}"
    return text


def summary_markdown(rows: list[dict[str, Any]]) -> str:
    """The summary table as Markdown (one row per policy)."""
    columns = summary_columns(rows)
    head = ["policy"] + [label for _, label, _ in columns]
    lines = ["| " + " | ".join(head) + " |", "| --- |" + " ---: |" * len(columns)]
    for r in rows:
        cells = [r["policy"]] + [summary_cell(r, key, digits) for key, _, digits in columns]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


# --- plots ---------------------------------------------------------------------------------------

def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _tight(fig: Any, **kw: Any) -> None:
    """``fig.tight_layout``, without matplotlib's warning when long labels leave it no room (the
    figure is still written, with the default layout)."""
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Tight layout not applied", category=UserWarning)
        fig.tight_layout(**kw)


def _colours(series: list[str]) -> dict[str, Any]:
    plt = _pyplot()
    cmap = plt.get_cmap("tab10")
    return {s: cmap(i % 10) for i, s in enumerate(series)}


# Grouped-bar plots wrap into rows of at most this wide (inches), so a sweep of 40 mixes or a
# suite of a dozen programs stays readable instead of becoming one strip tens of inches wide.
MAX_PLOT_WIDTH = 15.0


def _bar_rows(plt, groups: int, per_group: float, height: float = 3.6):
    """A figure of ``groups`` bar groups, each ``per_group`` inches wide, wrapped into rows of
    balanced length. Returns ``(fig, axes, per_row)``; the rows share their y axis."""
    fit = max(1, int((MAX_PLOT_WIDTH - 2) // per_group))
    rows = max(1, math.ceil(groups / fit))
    per_row = max(1, math.ceil(groups / rows))
    width = max(6.0, min(MAX_PLOT_WIDTH, per_group * per_row + 2))
    fig, axes = plt.subplots(rows, 1, figsize=(width, height * rows + 0.9), sharey=True, squeeze=False)
    return fig, [a[0] for a in axes], per_row


def _grouped_bars(runs, column: str, ylabel: str, title: str, path: Path, series: list[str], note: str) -> None:
    plt = _pyplot()
    # The first MAX_BARS mixes with a value: only their runs are pivoted (a sweep has thousands).
    total = runs["mix_label"].nunique()
    shown = list(dict.fromkeys(runs.loc[runs[column].notna(), "mix_label"]))[:MAX_BARS]
    runs = runs[runs["mix_label"].isin(set(shown))]
    table = runs.pivot_table(index="mix_label", columns="series", values=column, aggfunc="mean")
    table = table.reindex(index=shown, columns=[s for s in series if s in table.columns])
    if (barless := [s for s in series if s not in table.columns]):  # else gone from the legend without a word
        note += f"; no bars for {', '.join(barless)}: no successful run of a mix with a baseline run"
    width = 0.8 / max(1, len(table.columns))
    # Slanted mix labels take height from the bars: each row gets room for its longest.
    labels = max((len(m) for m in shown), default=0)
    fig, axes, per_row = _bar_rows(plt, len(shown), 0.32 * max(1, len(table.columns)),
                                   height=3.6 + min(3.0, 0.035 * labels))
    colours = _colours(series)
    # Matched units: each bar's 95 % sampling interval (a mean of several runs: sqrt(sum h^2) / n).
    halves = None
    if column == "ws_norm" and "ws_norm_ci95_halfwidth" in runs.columns:
        halves = runs.pivot_table(index="mix_label", columns="series", values="ws_norm_ci95_halfwidth",
                                  aggfunc=lambda h: mean_half_width(list(h)), dropna=False)
        halves = halves.reindex(index=shown, columns=table.columns)
        finite = halves.to_numpy(dtype=float)
        if not ((finite > 0) & (finite < math.inf)).any():
            halves = None
        else:
            note += "; error bars: 95 % sampling interval (runs that replayed the baseline's units)"
    for r, ax in enumerate(axes):
        part = slice(r * per_row, min(len(shown), (r + 1) * per_row))
        for i, s in enumerate(table.columns):
            xs = [j + (i - (len(table.columns) - 1) / 2) * width for j in range(part.stop - part.start)]
            yerr = None
            if halves is not None:  # none drawn where a run has no bounded interval
                yerr = [h if 0 < h < math.inf else 0.0 for h in halves[s].fillna(0.0).values[part]]
                yerr = yerr if any(yerr) else None  # the baseline's own runs: exactly 1, no bar
            ax.bar(xs, table[s].values[part], width=width, label=s, color=colours[s], yerr=yerr,
                   error_kw={"elinewidth": 0.8, "capsize": 2})
        ax.axhline(1.0, color="black", linewidth=1, linestyle="--", label="baseline (1.0)")
        ax.set_xticks(range(part.stop - part.start))
        ax.set_xticklabels(shown[part], rotation=30, ha="right", fontsize=8)
        ax.set_xlim(-0.6, per_row - 0.4)
        ax.set_ylabel(ylabel)
        ax.grid(axis="y", alpha=0.3)
    values = table.to_numpy(dtype=float)
    # The axis holds each bar's error bar too: zoomed to the bars alone, it cut them off.
    reach = 0.0
    if halves is not None:
        import numpy as np

        h = halves.to_numpy(dtype=float)
        reach = np.where((h > 0) & (h < math.inf), h, 0.0)  # as drawn: none where unbounded or absent
    tops, bottoms = values + reach, values - reach
    tops, bottoms, values = (a[~(values != values)] for a in (tops, bottoms, values))  # without NaN
    if values.size and bottoms.min() > 0.5:
        # Differences between policies are a few per cent: zoom in around 1.0, as the papers do.
        low = math.floor((min(bottoms.min(), 1.0) - 0.02) * 20) / 20
        high = math.ceil((max(tops.max(), 1.0) + 0.02) * 20) / 20
        axes[0].set_ylim(low, high)
        note += f"; the y axis starts at {low:g}"
    axes[-1].set_xlabel("workload mix")
    axes[0].set_title(title + (f" (first {len(shown)} of {total} mixes)" if total > len(shown) else ""))
    axes[0].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.text(0.01, 0.01, note, fontsize=7, alpha=0.7)
    _tight(fig, rect=(0, 0.03, 1, 1))
    save_figure(fig, str(path), dpi=110, bbox_inches="tight")  # long titles and labels are not clipped
    plt.close(fig)


def _distribution(runs, series: list[str], base: str, path: Path) -> None:
    plt = _pyplot()
    width = max(8.0, 1.6 * len(series) + 4)
    if width <= MAX_PLOT_WIDTH:
        fig, axes = plt.subplots(1, 2, figsize=(width, 4.5))
    else:  # many policies: one panel above the other
        fig, axes = plt.subplots(2, 1, figsize=(max(6.0, min(MAX_PLOT_WIDTH, 0.8 * len(series) + 2)), 9.0))
    for ax, column, label in ((axes[0], "ws_norm", "weighted speedup / baseline's (×)"),
                              (axes[1], "ms_norm", "maximum slowdown / baseline's (×)")):
        data = [runs.loc[runs["series"] == s, column].dropna().values for s in series]
        ax.boxplot(data, showmeans=True)
        ax.set_xticks(range(1, len(series) + 1))
        ax.set_xticklabels(series, rotation=20, ha="right", fontsize=8)
        ax.axhline(1.0, color="black", linewidth=1, linestyle="--")
        ax.set_xlabel("policy")
        ax.set_ylabel(label)
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_title("over mixes: weighted speedup (higher is better)", fontsize=10)
    axes[1].set_title("over mixes: maximum slowdown (lower is better)", fontsize=10)
    fig.text(0.01, 0.01, f"box: quartiles, whiskers 1.5 IQR, triangle: mean; dashed line: {base}",
             fontsize=7, alpha=0.7)
    _tight(fig, rect=(0, 0.03, 1, 1))
    save_figure(fig, str(path), dpi=110, bbox_inches="tight")  # long titles and labels are not clipped
    plt.close(fig)


def _row_buffer(runs, series: list[str], path: Path) -> None:
    plt = _pyplot()
    colours = _colours(series)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(series) + 2), 4.5))
    for i, s in enumerate(series):
        values = 100 * runs.loc[runs["series"] == s, "mix_row_buffer_miss_rate"].dropna()
        if values.empty:
            continue
        ax.bar(i, values.mean(), color=colours[s], alpha=0.8, label=s)
        ax.scatter([i] * len(values), values, color="black", s=10, zorder=3)
    ax.set_xticks(range(len(series)))
    ax.set_xticklabels(series, rotation=20, ha="right", fontsize=8)
    ax.set_xlabel("policy")
    ax.set_ylabel("row-buffer miss rate of the shared run (%)")
    ax.set_title("Row-buffer miss rate (bar: mean over mixes, dots: each mix)")
    ax.grid(axis="y", alpha=0.3)
    _tight(fig)
    save_figure(fig, str(path), dpi=110, bbox_inches="tight")  # long titles and labels are not clipped
    plt.close(fig)


def program_labels(programs: Iterable[str]) -> dict[str, str]:
    """Each program's label for a plot: a trace by its file name, a profile with its parameters
    (``light:reads_pki=2`` is another program than ``light``); the whole text where two programs
    would share a label (two ``bfs.mtt`` in different directories)."""
    programs = set(programs)
    label = {p: p if p.startswith("phases:") else os.path.basename(p) for p in programs}
    taken = [label[p] for p in programs]
    return {p: label[p] if taken.count(label[p]) == 1 else p for p in programs}


def _per_core(frame, runs, series: list[str], path: Path) -> None:
    plt = _pyplot()
    ok = runs[runs["status"] == "ok"][["config_hash", "series"]]
    cores = frame[frame["status"] == "ok"].merge(ok, on="config_hash")
    labels = program_labels(cores["program"].astype(str))
    cores = cores.assign(profile=cores["program"].astype(str).map(labels))
    profiles = sorted(set(cores["profile"]))
    colours = _colours(series)
    width = 0.8 / max(1, len(series))
    fig, axes, per_row = _bar_rows(plt, len(profiles), 0.25 * max(1, len(series)) + 0.4)
    for r, ax in enumerate(axes):
        row = profiles[r * per_row:(r + 1) * per_row]
        for i, s in enumerate(series):
            sub = cores[cores["series"] == s]
            for j, p in enumerate(row):
                values = sub.loc[sub["profile"] == p, "slowdown"]
                values = values[values.map(math.isfinite)]  # an infinite slowdown has no bar
                if values.empty:
                    continue
                x = j + (i - (len(series) - 1) / 2) * width
                ax.bar(x, values.mean(), width=width, color=colours[s], label=s if r == 0 and j == 0 else None)
                ax.plot([x, x], [values.min(), values.max()], color="black", linewidth=1)
        ax.axhline(1.0, color="black", linewidth=1, linestyle=":", label="no slowdown" if r == 0 else None)
        ax.set_xticks(range(len(row)))
        ax.set_xticklabels(row, fontsize=9)
        ax.set_xlim(-0.6, per_row - 0.4)
        ax.set_ylabel("slowdown = IPC alone /\nIPC shared (×)")
        ax.grid(axis="y", alpha=0.3)
    axes[-1].set_xlabel("program (per core)")
    axes[0].set_title("Per-core slowdowns (bar: mean over cores and mixes, line: min–max)")
    axes[0].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    _tight(fig)
    save_figure(fig, str(path), dpi=110, bbox_inches="tight")  # long titles and labels are not clipped
    plt.close(fig)


# --- the report ----------------------------------------------------------------------------------

PLOTS = [
    ("weighted_speedup.png", "Weighted speedup per mix, normalised to the baseline"),
    ("maximum_slowdown.png", "Maximum slowdown per mix, normalised to the baseline"),
    ("distribution.png", "Distribution over mixes"),
    ("row_buffer_miss_rate.png", "Row-buffer miss rates"),
    ("per_core_slowdown.png", "Per-core slowdowns"),
]

#: Every file a report writes in its directory (checked before a sweep's runs, not after them).
REPORT_FILES = [name for name, _ in PLOTS] + ["summary.md", "index.html"]


def store_inputs(results: str | os.PathLike[str]) -> list[str]:
    """What a report reads: the store's directory, its manifest and its listed batches."""
    from memtint.sweep.store import ResultStore

    store = ResultStore(results)
    return [os.fspath(results), os.fspath(store.manifest_path)] + [
        os.fspath(store.directory / b["file"]) for b in store.manifest()["batches"]]


def write_report(results: str | os.PathLike[str], out: str | os.PathLike[str] | None = None, *,
                 baseline: str | None = None, config_hashes: Iterable[str] | None = None,
                 findings: Sequence[str] | None = None) -> dict[str, Any]:
    """Write ``index.html``, ``summary.md`` and the PNG plots of the results in ``results`` into
    ``out`` (default ``RESULTS/report``). ``config_hashes`` restricts the report to those runs
    (one sweep's, when the store also holds others, e.g. from an earlier engine version);
    ``findings``: sentences under the header saying what the numbers mean (rich markup allowed);
    by default :func:`memtint.findings.sweep_findings`'s. Returns
    ``{"out", "index", "summary", "plots", "rows", "baseline", "runs", "mixes", "failed", "superseded", "stale",
    "notes", "first_error", "findings", "findings_markup"}`` (``rows``: :func:`summary_rows`; ``notes``: sentences the
    table needs beside it, such as policies whose means rest on different mixes; ``findings``: the sentences as plain
    text, as the files have them; ``findings_markup``: the same with their rich markup, for a terminal)."""
    import numpy as np

    # A stored figure at an edge (an infinite slowdown, 1e308 summed) is shown as no figure or an
    # infinity, not announced by numpy as a RuntimeWarning on the user's terminal.
    with np.errstate(all="ignore"):
        return _write_report(results, out, baseline=baseline, config_hashes=config_hashes, findings=findings)


def _write_report(results: str | os.PathLike[str], out: str | os.PathLike[str] | None, *, baseline: str | None,
                  config_hashes: Iterable[str] | None, findings: Sequence[str] | None) -> dict[str, Any]:
    from memtint.api import MemtintError
    from memtint.outputs import check_output_dir
    from memtint.sweep.store import load_results

    frame = load_results(results)
    check_output_dir("out", os.fspath(out) if out is not None else os.path.join(results, "report"),
                     store_inputs(results), files=REPORT_FILES)
    if config_hashes is not None:
        frame = frame[frame["config_hash"].isin(set(config_hashes))]
    if frame.empty:
        raise MemtintError(f"{results}: the store holds no runs" + (" of this sweep" if config_hashes is not None else ""))
    runs = run_table(frame, baseline)
    base = runs.attrs["baseline"]
    rows = summary_rows(runs)
    from memtint.findings import pooled, sweep_findings

    if findings is None:
        findings = sweep_findings(frame, runs)
    from rich.text import Text

    plain = [Text.from_markup(f).plain for f in findings]  # the files get the words, not the terminal's markup
    series = list(runs.attrs["series"])
    out_dir = Path(out) if out is not None else Path(results) / "report"
    out_dir.mkdir(parents=True, exist_ok=True)
    ok = runs[runs["status"] == "ok"]
    base_series = [s for s in series if runs.loc[runs["series"] == s, "policy"].iloc[0] == base]
    note = f"1.0 = the {base} run of the same mix; alone runs under {', '.join(dict.fromkeys(runs['baseline'].dropna()))}"

    _grouped_bars(ok, "ws_norm", "weighted speedup / baseline's (×)",
                  f"Weighted speedup normalised to {base} (higher is better)",
                  out_dir / PLOTS[0][0], series, note)
    _grouped_bars(ok, "ms_norm", "maximum slowdown / baseline's (×)",
                  f"Maximum slowdown normalised to {base} (lower is better)",
                  out_dir / PLOTS[1][0], series, note)
    _distribution(ok, series, base, out_dir / PLOTS[2][0])
    _row_buffer(ok, series, out_dir / PLOTS[3][0])
    _per_core(frame, runs, series, out_dir / PLOTS[4][0])

    machines = ", ".join(machine_order(runs))
    instructions = ", ".join(f"{n:,}" for n in sorted(set(runs["instructions"])))
    # A mix is its programs, length, seed and [os]; the same mix run in several setups is one mix.
    mixes = int(runs[_MIX_KEY].drop_duplicates().shape[0])
    setups = int(runs["_setup"].nunique())
    failed = int((runs["status"] != "ok").sum())
    superseded = runs.attrs.get("superseded", 0)
    stale = runs.attrs.get("stale", 0)
    header = (f"{len(runs)} runs ({failed} failed"
              + (f"; {superseded} earlier failure(s) replaced by later runs of the same settings not counted"
                 if superseded else "")
              + (f"; {stale} run(s) of files since changed (a machine or trace edited, the mix run again) not counted"
                 if stale else "") + f") of {mixes} mix{'es' if mixes != 1 else ''}" + (f" in {setups} setups" if setups > 1 else "")
              + f" on {machines}; "
              f"{instructions} instructions per core; normalised to `{base}`"
              + (f" ({', '.join(base_series)})" if base_series and base_series != [base] else "") + ".")
    legend = ("WS = weighted speedup (Σ IPC_shared / IPC_alone); max slowdown = max over cores of "
              "IPC_alone / IPC_shared; `/ base` = divided by the baseline policy's value on the same mix; "
              "RB miss = row-buffer miss rate of the shared run. Means and maxima over successful runs.")
    from memtint.sweep.summary import sampled_note

    if (sampled := sampled_note(rows)):
        header += " " + sampled[0].upper() + sampled[1:] + " (per run in the store's weighted_speedup_ci95_low/high)."
    if any(r.get("ws_norm_ci95_halfwidth") is not None for r in rows):
        header += (" `WS / base, mean` ± h: the runs replayed the baseline's units of their mix (matched units, "
                   "docs/sampling.md); h is the 95 % sampling interval of the mean (each run's in the store's "
                   "weighted_speedup_change_ci95_low/high).")
    from memtint.tables import matched_change_text, report_pacer

    if (pacer := report_pacer(rows)):
        header += (f" `WS vs {pacer}, mean`: " + matched_change_text(pacer)
                   + " (each run's in the store's weighted_speedup_change_ci95_low/high)"
                   + ("" if pacer in set(runs["policy"]) else f"; {pacer}'s runs paced the sweep but are not in this store")
                   + ".")
    notes = []  # what a reader of the terminal table needs too
    first_error = next((str(e) for e in runs.loc[runs["status"] != "ok", "error"] if isinstance(e, str)), None)
    if failed == len(runs):  # a report of nothing but dashes, said plainly in it
        header += (f" None of the {len(runs)} run{'s' if len(runs) != 1 else ''} succeeded, so this report has no "
                   f"figures; the first error: {first_error}")
    if (populations := population_note(ok, series)):
        header += " " + populations
        notes.append(populations)
    if not findings and (why := pooled(runs)):
        header += " " + why
        notes.append(why)

    summary_path = out_dir / "summary.md"
    mix_rows = per_mix_rows(ok, series)
    per_mix = ["| mix | " + " | ".join(series) + " |", "| --- |" + " ---: |" * len(series)]
    per_mix += [f"| {mix} | " + " | ".join(cells) + " |" for mix, cells in mix_rows]
    mix_note = ("± h: the 95 % sampling interval of the mix's WS / base, the error bar of its plot (runs that "
                "replayed the baseline's units)." if any(" ± " in c for _, cells in mix_rows for c in cells) else "")
    write_text("--out", str(summary_path),
        f"# Sweep report: {results}\n\n{header}\n\n"
        + ("## Findings\n\n" + "".join(f"{f}\n\n" for f in plain) if plain else "")
        + "## Averages and maxima per policy\n\n"
        f"{summary_markdown(rows)}\n{legend}\n\n## Weighted speedup / {base} per mix\n\n"
        + "\n".join(per_mix) + "\n\n" + (mix_note + "\n\n" if mix_note else "") + "## Plots\n\n"
        + "".join(f"- [{title}]({name})\n" for name, title in PLOTS))

    esc = html.escape
    columns = summary_columns(rows)
    head_cells = "".join(f"<th>{esc(label)}</th>" for _, label, _ in columns)
    body = "".join(
        f"<tr><td>{esc(r['policy'])}</td>"
        + "".join(f"<td>{esc(summary_cell(r, k, d))}</td>" for k, _, d in columns) + "</tr>\n"
        for r in rows)
    figures = "".join(f'<h2>{esc(title)}</h2>\n<img src="{name}" alt="{esc(title)}">\n' for name, title in PLOTS)
    index_path = out_dir / "index.html"
    write_text("--out", str(index_path),
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>memtint sweep report</title>\n"
        "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:right}"
        "td:first-child{text-align:left}img{max-width:100%}</style></head><body>\n"
        f"<h1>Sweep report: {esc(str(results))}</h1>\n<p>{esc(header.replace('`', ''))}</p>\n"
        + ("<h2>Findings</h2>\n" + "".join(f"<p>{esc(f)}</p>\n" for f in plain) if plain else "")
        + f"<h2>Averages and maxima per policy</h2>\n<table><tr><th>policy</th>{head_cells}</tr>\n{body}</table>\n"
        f"<p><small>{esc(legend.replace('`', ''))} Also in <a href=\"summary.md\">summary.md</a>.</small></p>\n"
        f"<h2>Weighted speedup / {esc(base)} per mix</h2>\n<table><tr><th>mix</th>"
        + "".join(f"<th>{esc(s)}</th>" for s in series) + "</tr>\n"
        + "".join(f"<tr><td>{esc(mix)}</td>" + "".join(f"<td>{esc(c)}</td>" for c in cells) + "</tr>\n"
                  for mix, cells in mix_rows)
        + "</table>\n" + (f"<p><small>{esc(mix_note)}</small></p>\n" if mix_note else "")
        + f"{figures}</body></html>\n")
    return {"out": str(out_dir), "index": str(index_path), "summary": str(summary_path),
            "plots": [str(out_dir / name) for name, _ in PLOTS], "rows": rows, "baseline": base,
            "runs": len(runs), "mixes": mixes, "failed": failed, "superseded": superseded, "stale": stale, "notes": notes,
            "first_error": first_error, "findings": plain, "findings_markup": list(findings)}
