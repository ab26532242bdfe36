"""The reproduction reports: docs/reproductions/<paper>.md with PNG plots beside it, an index
(README.md), and the terminal table."""

from __future__ import annotations

import math
import os
import textwrap
from typing import Any

from memtint.api import MemtintError
from memtint.outputs import save_figure, write_text
from memtint.reproduce import figures
from memtint.reproduce import verdict as verdict_rule
from memtint.reproduce.common import Row, summarise

POINT_METRICS = ("ws_change_over", "ms_change_over", "pairs_minus_single_pct", "util_gap_points")
PLAIN_METRICS = ("relative_ipc", "share_not_worse", "share_best", "speedup", "dram_pages", "time_ratio", "slope_ratio",
                 "spread_ratio", "idle_beats_runtime_share", "auto_hits_ratio", "auto_latency_spread",
                 "fgr_not_better_share", "rules_accuracy", "rule_confidence", "cache_hurts_share")
#: Counts shown whole (densities too).
COUNT_METRICS = ("dram_pages", "sharing_pairs", "overflow_pages", "cr_hits_max", "crs_hits_max", "cr_jedec_hits",
                 "auto_infeasible_density")


def sampling_header(settings: Any, experiments: list[Any]) -> str:
    """The set-up line of a paper whose mix experiments ran sampled (``--sample``): units and
    their size, that figures are estimates, and what ran detailed; empty when nothing did."""
    from memtint.sampling import units as sampling_units

    sampling = getattr(settings, "sampling", None)
    if not sampling:
        return ""
    units, detailed, short = [], [], []
    for e in experiments:
        sampled = e.sampled_variants(settings)
        if not sampled:
            if sampling_units(sampling, e.instructions):
                detailed.append(f"{e.name} (all)")
            else:
                short.append(e.name)
            continue
        units.append(sampling_units(sampling, e.instructions))
        detailed += [f"{e.name}: {v.label}" for v in e.variants if v.label not in sampled]
    if not units:
        return ("Sampling (`--sample`) asked for, but no run here was sampled: "
                + (f"too short for two units ({', '.join(short)})" if short else "sampling supports none of them")
                + "; every figure is from detailed runs.")
    count = f"{min(units)}" if min(units) == max(units) else f"{min(units)}-{max(units)}"
    from memtint.sampling import ENGINE_UNIT, ENGINE_WARMING, engine_sampling

    warming = int(sampling.get("warming", ENGINE_WARMING))
    text = (f"Sampled: {count} units of {int(sampling.get('unit', ENGINE_UNIT)):,} instructions per core"
            + (f" (each after {warming:,} of detailed warm-up)" if warming else "")
            + "; figures are estimates with 95 % intervals (SMARTS-style sampling, the alone and shared runs of the "
            "mix experiments; the spread over seeds includes the sampling error). A claim whose figure is a mean of "
            "WS or MS changes shows its own 95 % sampling half-width beside it, `(± h sampling)` (first-order "
            "propagation over its mixes and seeds: a WS change's over both shared runs and their common alone "
            "runs, memtint.sampling.difference_intervals; an MS change's taking the two runs' intervals as "
            "independent, which overstates it).")
    _, matched = engine_sampling(sampling)
    if matched:
        text += (" The sampled variants of a mix and seed measure matched units: the baseline's run (or the first "
                 "sampled variant's) paces them and the others replay its schedule (docs/sampling.md, \"Matched "
                 "units\").")
    if detailed:
        text += f" Run detailed (sampling does not support them): {', '.join(detailed)}."
    if short:
        text += f" Run detailed (too short for two units): {', '.join(short)}."
    return text


def fmt_value(metric: str, v: float, signed: bool = True) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    if metric in COUNT_METRICS:
        return f"{v:,.0f}"
    if metric in PLAIN_METRICS:
        return f"{v:.3f}"
    unit = " pt" if metric in POINT_METRICS else " %"
    return f"{v:+.1f}{unit}" if signed else f"{v:.1f}{unit}"


def fmt_half_width(metric: str, h: float) -> str:
    """A sampling half-width in the unit of ``metric``'s figure (two decimals where the figure's
    one would round it to nothing)."""
    if metric in COUNT_METRICS or metric in PLAIN_METRICS or h >= 0.05:
        return fmt_value(metric, h, signed=False)
    return f"{h:.2f}" + (" pt" if metric in POINT_METRICS else " %")


def unresolved_text(row: Row) -> str:
    """Why a sampled figure has no verdict: the verdicts its sampling interval reaches, and the
    verdicts on its population without and with the mixes its sampling leaves in doubt."""
    h, mean = row.sampling_half_width, row.stats["mean"]
    here = verdict_rule.verdict(row.claim, mean, row.not_applicable, row.per_seed)
    interval = ""
    if h is not None and math.isfinite(h):
        ends = [verdict_rule.verdict(row.claim, mean + d, row.not_applicable, [x + d for x in row.per_seed])
                for d in (-h, h)]
        if any(e != here for e in ends):
            interval = (f"the sampling interval ± {fmt_half_width(row.claim['metric'], h)} reaches {ends[0]} at its low "
                        f"end and {ends[1]} at its high end (the mean alone: {here}); longer runs or more units narrow it")
    elif h is not None or not row.sampling_unsettled:
        interval = "a core measured fewer than two units, so the figure's sampling error is unknown"
    return "; ".join(t for t in (row.sampling_unsettled, interval) if t)


def sampled_text(row: Row) -> str:
    """`` (± h sampling)`` after a figure that has a sampling half-width, else nothing (so a
    detailed row reads as before)."""
    h = row.sampling_half_width
    mean = row.stats["mean"]
    if h is None or mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return ""
    if math.isinf(h):
        return " (± ? sampling: a core measured fewer than two units, or units of one CPI)"
    return f" (± {fmt_half_width(row.claim['metric'], h)} sampling)"


def paper_text(claim: dict[str, Any]) -> str:
    kind = claim["kind"]
    if kind == "info":
        return "none"
    v = fmt_value(claim["metric"], float(claim["value"]))
    tol = verdict_rule.tolerance(claim)
    t = fmt_value(claim["metric"], tol, signed=False)
    if kind == "at_least":
        return f"≥ {v}"
    if kind == "at_most":
        return f"≤ {v}"
    return f"{v} (± {t})"


def ours_text(row: Row) -> tuple[str, str]:
    s = row.stats
    m = row.claim["metric"]
    if s["n"] == 1:  # one seed has no spread over seeds; a mean over mixes has one over its mixes
        if row.per_mix:
            x = summarise(row.per_mix)
            return fmt_value(m, s["mean"]), (f"one seed; over its {x['n']} mixes sd {fmt_value(m, x['sd'], False)}; "
                                             f"{fmt_value(m, x['min'])} … {fmt_value(m, x['max'])}")
        return fmt_value(m, s["mean"]), "one seed"
    return fmt_value(m, s["mean"]), f"sd {fmt_value(m, s['sd'], False)}; {fmt_value(m, s['min'])} … {fmt_value(m, s['max'])}"


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def table_md(header: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    out += ["| " + " | ".join(_cell(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def verdict_text(r: Row) -> str:
    """The verdict as the tables show it: "direction only" with its ratio ours/paper (effects,
    measured from no change: for a speedup, (ours - 1) / (paper - 1))."""
    v = r.verdict
    if v == verdict_rule.DIRECTION_ONLY and r.ratio is not None:
        return f"{v} ({r.ratio:.2f}x the paper)"
    if v == verdict_rule.NOT_REPRODUCED and r.claim.get("kind", "change") == "change" and \
            not verdict_rule.settled(r.claim, r.per_seed):
        n = verdict_rule.neutral(r.claim)
        side = sum((x - n) * (float(r.claim["value"]) - n) > 0 for x in r.per_seed)
        return f"{v} (the paper's direction on {side} of {len(r.per_seed)} seeds)"
    return v


def counts_text(rows: list[Row]) -> str:
    """"3 reproduced, 2 direction only, ..." over the verdicts that occur."""
    counts = {v: sum(r.verdict == v for r in rows) for v in verdict_rule.VERDICTS}
    return ", ".join(f"{n} {v}" for v, n in counts.items() if n) or "no claims"


#: Metrics whose figures are continuous measurements: two claims with the same figure on every
#: seed measured one thing (a share of mixes or a count can agree by chance).
CONTINUOUS = ("ws_change", "ws_change_over", "ws_ratio", "ms_change", "ms_change_over", "ms_ratio", "rbmiss_change",
              "vp_over_horizontal", "bestvp_over_horizontal", "ws_vs_best", "speedup", "speedup_pct", "ipc_change")


def _same_as(label: str, what: str) -> str:
    return f"{what} «{label}»"


def claim_rows(rows: list[Row]) -> list[list[str]]:
    """The table's rows. A cause already given word for word by an earlier row, and a figure
    equal on every seed to an earlier row's on the same population, refer to that row instead
    of repeating it as if it were new evidence."""
    out = []
    causes: dict[str, str] = {}
    figures: dict[tuple, str] = {}
    for r in rows:
        mean, spread = ours_text(r)
        v = r.verdict
        cause = r.detail if (verdict_rule.is_miss(v) or v == verdict_rule.MEASURED_ONLY) else \
            r.not_applicable if v == verdict_rule.NOT_APPLICABLE else unresolved_text(r) if v == verdict_rule.UNRESOLVED \
            else "—"
        name = r.claim["text"] + (f" — {r.subject}" if r.subject else "")
        if cause != "—" and v != verdict_rule.NOT_APPLICABLE:
            if cause in causes:
                cause = _same_as(causes[cause], "the same runs and comparison, so the same measured cause, as")
            else:
                causes[cause] = name
        if r.claim["metric"] in CONTINUOUS and v != verdict_rule.NOT_APPLICABLE \
                and all(math.isfinite(x) for x in r.per_seed):
            key = (tuple(round(x, 9) for x in r.per_seed), r.population, r.subject)
            if key in figures:
                note = _same_as(figures[key], "one measurement with") + ": the same figure on every seed"
                cause = note if cause == "—" else f"{cause} ({note})"
            else:
                figures[key] = name
        label = r.claim["text"] + (f" — **{r.subject}**" if r.subject else "") + (
            f" (measured on: {r.population})" if r.population and r.population != r.subject else "")
        # The figure's name as the claims plot labels its row, so a row there is found here.
        out.append([r.claim["figure"] + (f" `{claim_name(r)}`" if claim_name(r) else ""), label, r.claim["source"], paper_text(r.claim),
                    mean + sampled_text(r), spread,
                    f"**{verdict_text(r)}**", cause])
    return out


#: The claims plot colours memtint's bar by its verdict, so the picture says what the table does
#: (each colour far enough from the others to tell apart: near miss was a second orange).
VERDICT_COLOURS = {
    verdict_rule.REPRODUCED: "#2e8b57",
    verdict_rule.DIRECTION_ONLY: "#e0a030",
    verdict_rule.NEAR_MISS: "#8e5bb5",
    verdict_rule.NOT_REPRODUCED: "#c0392b",
    verdict_rule.MEASURED_ONLY: "#3b75af",
    verdict_rule.UNRESOLVED: "#8c8c8c",
}


def _verdict_tag(r: Row) -> str:
    """The verdict as a plot label shows it: the word, and a direction-only row's ratio."""
    if r.verdict == verdict_rule.DIRECTION_ONLY and r.ratio is not None:
        return f"{r.verdict}, {r.ratio:.2f}x"
    return r.verdict


def claim_name(r: Row) -> str:
    """A claim's short name, as the plot and the table's figure column show it: its id, and its
    subject where the id does not already end with it."""
    cid = r.claim.get("id", "")
    return cid if not r.subject or cid.endswith(r.subject) else f"{cid} {r.subject}".strip()


def plotted(r: Row) -> bool:
    """Whether the claims plot draws ``r``: a change in % or points with a paper figure. Counts,
    densities, ratios and shares are in the table only (on the plot's % axis they read as
    percentages), and a not-applicable claim's subject has no effect to draw."""
    m = r.claim["metric"]
    return (r.claim["kind"] != "info" and r.verdict != verdict_rule.NOT_APPLICABLE
            and m not in PLAIN_METRICS and m not in COUNT_METRICS)


def _spread(r: Row) -> tuple[float, bool]:
    """The error bar of memtint's figure, as the table's spread column gives it: the sd over
    seeds, or with one seed the sd over the figure's mixes (True when it is that)."""
    if r.stats["n"] == 1 and r.per_mix and len(r.per_mix) > 1:
        return summarise(r.per_mix)["sd"], True
    return r.stats["sd"], False


def _paper_short(r: Row) -> str:
    """The paper's figure as the plot's value column gives it: a value, or a bound."""
    v = fmt_value(r.claim["metric"], float(r.claim["value"]))
    return {"at_least": "≥ ", "at_most": "≤ "}.get(r.claim["kind"], "") + v


def claims_figure(title: str, rows: list[Row]) -> Any:
    """Paper vs ours for the claims :func:`plotted` draws: the paper's figure a grey bar, or a
    triangle where it is a bound (a bar to a bound read as a measured value, and a bound of 0 drew
    nothing); ours coloured by verdict, with the table's spread as its error bar; each row's two
    figures written beside it in the table's units (% or points, and a bar too short to see is
    still read); the claims left out named under the plot. None when no claim is drawn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    left_out = [r for r in rows if r.claim["kind"] != "info" and r.verdict != verdict_rule.NOT_APPLICABLE
                and not plotted(r)]
    rows = [r for r in rows if plotted(r)]
    if not rows:
        return None
    spreads = [_spread(r) for r in rows]
    labels = [f"{claim_name(r)} ({_verdict_tag(r)})" + (" †" if over_mixes else "")
              for r, (_, over_mixes) in zip(rows, spreads)]
    shown = [v for v in verdict_rule.VERDICTS if any(r.verdict == v for r in rows)]
    bounds = [r.claim["kind"] in ("at_least", "at_most") for r in rows]
    notes = []
    if any(over_mixes for _, over_mixes in spreads):
        notes.append("† one seed: the error bar is the sd over its mixes, as the table's spread column.")
    if left_out:
        notes.append("In the table only (a count, density, ratio or share, not a change in % or points): "
                     + ", ".join(claim_name(r) for r in left_out) + ".")
    note_lines = [line for n in notes for line in textwrap.wrap(n, 130, break_on_hyphens=False)]
    # The legend and notes go below the bars (inside, the legend covered the top rows' bars), and the
    # title is the figure's, wrapped (over the axes, beside long labels, it ran off the figure's edge).
    entries = 1 + any(bounds) + len(shown)
    legend_in = 0.1 + 0.17 * math.ceil(entries / 2)
    notes_in = 0.13 * len(note_lines) + (0.05 if note_lines else 0)
    height = max(2.5, 0.28 * len(rows) + 1.4) + legend_in + notes_in
    fig, ax = plt.subplots(figsize=(10.5, height))
    ys = list(range(len(rows)))
    # A change's figure is a bar; a bound's is a triangle pointing the way the claim allows.
    ax.barh([y + 0.2 for y in ys], [0.0 if b else float(r.claim["value"]) for r, b in zip(rows, bounds)],
            height=0.4, color="#999999")
    for kind, marker in (("at_least", ">"), ("at_most", "<")):
        at = [(y, float(r.claim["value"])) for y, r in zip(ys, rows) if r.claim["kind"] == kind]
        if at:
            ax.scatter([v for _, v in at], [y + 0.2 for y, _ in at], marker=marker, s=36, color="#666666",
                       edgecolor="black", linewidth=0.6, zorder=3)
    ax.barh([y - 0.2 for y in ys], [r.stats["mean"] for r in rows], height=0.4,
            xerr=[sd for sd, _ in spreads], color=[VERDICT_COLOURS[r.verdict] for r in rows])
    ax.set_yticks(ys)
    ax.set_yticklabels(labels, fontsize=7)
    ax.invert_yaxis()
    ax.axvline(0, color="black", linewidth=0.6)
    ax.set_xlabel("the claim's figure, % (points where the value column says pt)")
    for y, r in zip(ys, rows):
        ax.annotate(f"{fmt_value(r.claim['metric'], r.stats['mean'])}  (paper {_paper_short(r)})", (1, y),
                    xycoords=("axes fraction", "data"), xytext=(4, 0), textcoords="offset points",
                    va="center", fontsize=6.5)
    ax.text(1, -0.75, " memtint (paper)", transform=ax.get_yaxis_transform(), fontsize=6.5, va="center",
            style="italic")
    fig.suptitle("\n".join(textwrap.wrap(title, 110)), fontsize=9)
    handles = [Patch(color="#999999")] + ([Line2D([], [], marker=">", linestyle="", color="#666666",
                                                  markeredgecolor="black")] if any(bounds) else [])
    names = ["paper"] + (["paper's bound (▶ at least, ◀ at most)"] if any(bounds) else [])
    fig.legend(handles + [Patch(color=VERDICT_COLOURS[v]) for v in shown],
               names + [f"memtint, {v} (mean ± sd over seeds)" for v in shown], fontsize=7,
               loc="lower center", ncol=2, frameon=False, bbox_to_anchor=(0.5, notes_in / height))
    for i, line in enumerate(note_lines):
        fig.text(0.01, (notes_in - 0.05 - 0.13 * i) / height, line, fontsize=6.5, va="top")
    fig.tight_layout(rect=(0, (legend_in + notes_in) / height, 1, 1))
    return fig


def claims_plot(path: str, title: str, rows: list[Row]) -> bool:
    """:func:`claims_figure` written to ``path``; False when there is nothing to draw."""
    import matplotlib.pyplot as plt

    fig = claims_figure(title, rows)
    if fig is None:
        return False
    save_figure(fig, path, dpi=100)
    plt.close(fig)
    return True


def line_style(i: int) -> tuple[str, str, str]:
    """The i-th series' colour, line style and marker: the ten colours of matplotlib's cycle, then
    again dashed with squares, then dotted with triangles, so no two of 30 series look alike (with
    one marker, the 11th series was drawn as the first)."""
    colours = [f"C{k}" for k in range(10)]
    return colours[i % 10], ("-", "--", ":")[(i // 10) % 3], ("o", "s", "^")[(i // 10) % 3]


def marker_size(i: int, n: int) -> float:
    """The i-th of n series' marker size: smaller for each later series, drawn over the earlier, so
    that where two series meet at a point the earlier still shows as a ring around the later."""
    return 7.0 - 3.5 * i / max(1, n - 1)


def coincident(series: dict[str, list[float]], share: float = 0.005) -> dict[str, list[float]]:
    """``series`` with those that lie on one another at every point (within ``share`` of the
    values' span, where a line hides the other) drawn as one, named ``a = b`` (equal) or ``a ≈ b``:
    drawn apart, the later hid the earlier, whose legend entry pointed at no line."""
    values = [v for ys in series.values() for v in ys if v == v]
    tolerance = share * ((max(values) - min(values)) if values else 0.0)

    def close(a: list[float], b: list[float], tol: float) -> bool:
        return len(a) == len(b) and all((x != x and y != y) or abs(x - y) <= tol for x, y in zip(a, b))

    groups: list[list[str]] = []
    for name, ys in series.items():
        group = next((g for g in groups if close(series[g[0]], ys, tolerance)), None)
        if group is None:
            groups.append([name])
        else:
            group.append(name)
    out = {}
    for g in groups:
        exact = all(close(series[g[0]], series[n], 1e-12 * max(1.0, *map(abs, values))) for n in g[1:])
        out[(" = " if exact else " ≈ ").join(g)] = series[g[0]]
    return out


def lines_plot(path: str, spec: dict[str, Any]) -> None:
    """:func:`lines_figure` written to ``path``."""
    import matplotlib.pyplot as plt

    fig = lines_figure(spec)
    save_figure(fig, path, dpi=80)
    plt.close(fig)


def lines_figure(spec: dict[str, Any]) -> Any:
    """One line per series of ``spec`` (series that coincide as one, :func:`coincident`), and
    ``spec["reference"]``'s lines (a model's, such as an ideal) dashed grey."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8.5, 3.8))
    series = coincident(spec["series"])
    for i, (name, ys) in enumerate(series.items()):
        colour, style, marker = line_style(i)
        ax.plot(spec["x"], ys, marker=marker, linestyle=style, color=colour, label=name, linewidth=1,
                markersize=marker_size(i, len(series)))
    for name, ys in spec.get("reference", {}).items():  # a model's line, not a measurement
        ax.plot(spec["x"], ys, linestyle="--", color="grey", linewidth=0.8, label=name)
    if spec.get("hline") is not None:
        ax.axhline(spec["hline"], color="grey", linestyle="--", linewidth=0.8, label="paper: 90 % watershed")
    if spec.get("xscale", "log2") == "log2":  # HVR's shrinking shares, largest first
        ax.set_xscale("log", base=2)
        ax.invert_xaxis()
    elif spec.get("xscale") == "log2-up":  # densities, smallest first
        ax.set_xscale("log", base=2)
    ax.set_xticks(spec["x"])
    ax.set_xticklabels([str(x) for x in spec["x"]])
    ax.set_xlabel(spec["xlabel"])
    ax.set_ylabel(spec["ylabel"])
    ax.set_title(spec["title"], fontsize=9)
    # Beside the axes: inside, it covered the top of the steepest lines.
    ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.tight_layout()
    return fig


def _links(out: str, text: str) -> str:
    """The reports' links as seen from ``out``: they are written for docs/reproductions, and
    `memtint reproduce --out DIR` puts them elsewhere (the paper figures and the cross-check
    then live in the source tree, not beside them)."""
    from memtint.reproduce.figures import FIGURES_DIR

    figures = os.path.relpath(FIGURES_DIR, os.path.abspath(out))
    text = text.replace("](../../configs/reproductions/", f"]({figures}/")
    if not os.path.exists(os.path.join(out, "crosscheck.md")):
        shipped = FIGURES_DIR.parents[1] / "docs" / "reproductions" / "crosscheck.md"
        text = text.replace("](crosscheck.md)", f"]({os.path.relpath(shipped, os.path.abspath(out))})")
    return text


def write_paper(out: str, name: str, title: str, figures: dict[str, Any], header: list[str], analysis: dict[str, Any],
                command: str, meta: dict[str, Any] | None = None) -> str:
    os.makedirs(out, exist_ok=True)
    rows: list[Row] = analysis["rows"]
    tested = [r for r in rows if r.verdict != verdict_rule.NOT_APPLICABLE]
    untested = [r for r in rows if r.verdict == verdict_rule.NOT_APPLICABLE]
    lines = [f"# Reproduction: {title}", "",
             f"Generated by `{command}`; do not edit, regenerate. Paper figures: "
             f"[`configs/reproductions/{name}.toml`](../../configs/reproductions/{name}.toml), taken from the "
             f"paper summary `{figures.get('summary', '')}` (../shared/papers) with the section each comes from.", "",
             "## Set-up", ""]
    lines += [f"- {h}" for h in header]
    if analysis.get("calibration"):
        lines += ["", "## Calibration: the paper's machine against memtint's", "",
                  "Baseline figures the paper reports, beside memtint's for the same program class or population "
                  "(mean and range): how far the simulated machine is from the paper's before any verdict is read. "
                  "A paper column marked \"memtint sim\" is a reference memtint measured where the paper gives none.", "",
                  table_md(["quantity", "paper", "memtint", "memtint's figure is over", "source"],
                           analysis["calibration"])]
    lines += ["", "## Verdict rule", "", verdict_rule.RULE, "",
              "The measured cause of a miss: the diagnostics gathered from the same runs (row-buffer miss rate, LLC MPKI, "
              "DRAM reads and writes per kilo-instruction, read latency, bank-level parallelism, banks and channels "
              "used, slowdowns by class) whose mean changed most between the two configurations the claim compares, "
              "with their values (mean over mixes and seeds); the diagnostics the claim's mechanism names come "
              "first. A maximum-slowdown claim's cause first names the program most often the most slowed on each "
              "side, and a channel-balance claim's the UF of its mixes. A row whose cause or figure repeats an "
              "earlier row's (the same runs compared) names that row instead.", "",
              "## Paper against memtint", "",
              counts_text(rows) + ".", "",
              table_md(["figure", "claim", "source", "paper", "memtint (mean)", "spread over seeds", "verdict",
                        "measured cause"], claim_rows(tested)), ""]
    if untested:
        lines += ["### Not applicable: subjects without the effect", "",
                  "These claims' subjects have no memory-system effect to measure in memtint's runs (the measured "
                  "reason is in the last column); their numbers are shown, and counted as no verdict.", "",
                  table_md(["figure", "claim", "source", "paper", "memtint (mean)", "spread over seeds", "verdict",
                            "why"], claim_rows(untested)), ""]
    png = f"{name}-claims.png"
    if claims_plot(os.path.join(out, png), f"{title}: paper vs memtint", rows):
        lines += [f"![paper vs memtint]({png})", ""]
    for p in analysis.get("plots", []):
        lines_plot(os.path.join(out, p["file"]), p)
        lines += [f"![{p['title']}]({p['file']})", ""]
    lines += ["## Detail", ""]
    for caption, head, body in analysis.get("tables", []):
        lines += [f"### {caption}", "", table_md(head, body), ""]
    path = os.path.join(out, f"{name}.md")
    write_text("--out", path, _links(out, "\n".join(lines)))
    write_rows(os.path.join(out, f"{name}.json"), rows, meta)
    return path


def read_paper(out: str, name: str) -> dict[str, Any] | None:
    """A paper's index entry from its rows' data in ``out`` (written by an earlier run), or None
    when there is none or it lacks the title, wall time and run count."""
    import json

    try:
        with open(os.path.join(out, f"{name}.json")) as f:
            data = json.load(f)
    except (OSError, ValueError, RecursionError):
        return None
    meta = data.get("meta") or {}
    if not all(k in meta for k in ("title", "seconds", "runs")):
        return None
    return {"name": name, "title": meta["title"], "seconds": meta["seconds"], "runs": meta["runs"],
            "reused": meta.get("reused", 0),
            "verdicts": [r["verdict"] for r in data.get("rows", [])],
            "derived": _derived_rows(name, data.get("rows", []))}


def _derived_rows(name: str, rows: list[dict[str, Any]]) -> list[bool]:
    """Whether each stored row rests on a derived figure, by today's claim definitions (a row
    stored before the flag existed, or before a figure was re-tagged, is judged as now)."""
    try:
        claims = {c["id"]: c for c in figures.load(name)["claim"]}
    except MemtintError:  # no figure file for it any more: what the row stored
        return [bool(r.get("derived")) for r in rows]
    return [figures.derived(claims[r["id"]]) if r.get("id") in claims else bool(r.get("derived")) for r in rows]


def write_rows(path: str, rows: list[Row], meta: dict[str, Any] | None = None) -> None:
    """The claims' rows as data beside the report (what tests check the verdicts against): per
    row its claim id, subject, verdict, our mean and seeds, the subject's measured DRAM requests
    per kilo-instruction, when not applicable, why, with one seed its value on each mix of a mean
    over mixes (``per_mix``), and, when its figure was sampled, the half-width of its 95 % sampling
    interval (``sampling_half_width``; absent for detailed runs) and why its population is not
    settled (``sampling_unsettled``, when it is not)."""
    import json

    data = [{"id": r.claim["id"], "subject": r.subject, "verdict": r.verdict, "paper": r.claim.get("value"),
             "kind": r.claim.get("kind", "change"), "derived": figures.derived(r.claim), "mean": _finite(r.stats["mean"]),
             "per_seed": [_finite(v) for v in r.per_seed], "dram_pki": _finite(r.dram_pki),
             **({"per_mix": [_finite(v) for v in r.per_mix]} if r.per_mix else {}),
             "population": r.population, "not_applicable": r.not_applicable,
             **({"placed_pages": r.placed_pages} if r.placed_pages is not None else {}),
             **({"met_loads": r.met_loads} if r.met_loads is not None else {}),
             **({"rt_loads": r.rt_loads} if r.rt_loads is not None else {}),
             **({"displaced_pages": r.displaced_pages} if r.displaced_pages is not None else {}),
             **({"sampling_half_width": _finite(r.sampling_half_width)}
                if r.sampling_half_width is not None else {}),
             **({"sampling_unsettled": r.sampling_unsettled} if r.sampling_unsettled else {})} for r in rows]
    out = {"rows": data, "min_dram_pki": verdict_rule.MIN_DRAM_PKI}
    if meta:
        out["meta"] = meta
    write_text("--out", path, json.dumps(out, indent=1) + "\n")


def _finite(v: float | None) -> float | None:
    return None if v is None or (isinstance(v, float) and not math.isfinite(v)) else v


def write_index(out: str, papers: list[dict[str, Any]], header: list[str], command: str) -> str:
    lines = ["# Reproductions", "", f"Regenerated from nothing by `make reproduce` (here: `{command}`). "
             "Each paper's file has the set-up, the paper's figures against memtint's (mean and spread over seeds), "
             "the verdict and, for every miss, the measured cause.", ""]
    lines += [f"- {h}" for h in header] + [""]
    body = []
    of = {p["name"]: p["verdicts"] if "verdicts" in p else [r.verdict for r in p["rows"]] for p in papers}
    # Detailed runs are never unresolved by sampling: no column for it then.
    columns = [v for v in verdict_rule.VERDICTS
               if v != verdict_rule.UNRESOLVED or any(v in verdicts for verdicts in of.values())]
    for p in papers:
        verdicts = of[p["name"]]
        derived = p.get("derived", []) if "verdicts" in p else [figures.derived(r.claim) for r in p["rows"]]
        earlier = " (an earlier run's report)" if "verdicts" in p else ""
        body.append([f"[{p['title']}]({p['name']}.md){earlier}"] + [_count(verdicts, derived, v) for v in columns]
                    + [f"{p['seconds']:.0f} s" + (f" ({p['reused']} runs reused)" if p.get("reused") else ""),
                       str(p["runs"])])
    lines += [table_md(["paper", *columns, "wall time", "runs"], body), "",
              "A count with \"derived\" beside it includes claims whose figure the paper did not measure: the "
              "paper summary's arithmetic on the paper's model or its reading of the paper's words (tagged [inferred] in "
              "the claim's source, e.g. the tiering thesis's ideal-model speedups and CCPS's implied gains). Such a "
              "verdict says that memtint agrees with that reading, not with the paper's machine.", "",
              "A paper's runs and wall time count every simulation it uses, so a run two papers share (the same run "
              "spec) counts in each of them; the totals above count it once, so the rows add up to more"
              + ("; and the totals are this run's only: a paper marked as an earlier run's report keeps that run's "
                 "runs and wall time" if any("verdicts" in p for p in papers) else "") + ".", "",
              "The BPM mechanism in a reference simulator: [crosscheck.md](crosscheck.md) replays the DRAM request "
              "streams of buddy and BPM runs in memtint and in Ramulator 2.1 and sets their row-buffer miss rates side "
              "by side (`make reproduce` writes it after these reports; `python -m memtint.reproduce.crosscheck`).", ""]
    path = os.path.join(out, "README.md")
    write_text("--out", path, _links(out, "\n".join(lines)))
    return path


def _count(verdicts: list[str], derived: list[bool], v: str) -> str:
    """How many rows have verdict ``v``, and of them how many rest on a derived figure."""
    n = verdicts.count(v)
    d = sum(1 for x, dv in zip(verdicts, derived) if x == v and dv)
    return f"{n} ({d} derived)" if d and v != verdict_rule.MEASURED_ONLY else str(n)


def terminal_table(papers: list[dict[str, Any]]):
    from rich.text import Text

    from memtint.tables import _Table as Table

    t = Table(title="memtint reproduce: paper vs memtint")
    for col in ("paper", "claim", "paper value", "memtint (mean ± sd)", "verdict"):
        t.add_column(col)
    colour = {verdict_rule.REPRODUCED: "green", verdict_rule.DIRECTION_ONLY: "yellow", verdict_rule.NEAR_MISS: "yellow",
              verdict_rule.NOT_REPRODUCED: "red", verdict_rule.NOT_APPLICABLE: "bright_black"}
    for p in papers:
        for r in p["rows"]:
            s = r.stats
            m = r.claim["metric"]
            v = r.verdict
            t.add_row(p["name"], r.claim["id"] + (f" ({r.subject})" if r.subject else ""), paper_text(r.claim),
                      f"{fmt_value(m, s['mean'])}"
                      + (f" ± {fmt_value(m, s['sd'], False)}" if s["n"] != 1 else " (one seed)") + sampled_text(r),
                      Text(verdict_text(r), style=colour.get(v, "white")))
    return t
