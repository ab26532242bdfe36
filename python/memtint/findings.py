"""What a sweep's numbers mean, in sentences: which interference grew when the programs shared
the machine (LLC pollution, bank interference, bandwidth), and per policy its change against the
baseline with the statistic that explains it. `memtint report` puts them in every report (and
`memtint demo` prints them) when each policy's runs are one series."""

from __future__ import annotations

import functools
from typing import Any


#: Programs that are memory-intensive (LLC MPKI > 1, bpm.md §4) among the built-in profiles.
INTENSIVE_PROFILES = ("stream", "random", "copy")

@functools.lru_cache(maxsize=1)
def _placement_info() -> dict[str, dict[str, Any]]:
    """The engine's placement policies by name, as each declares itself (its ``mechanism``, and
    whether it ``places_nodes`` or ``colours_nodes``)."""
    from memtint import api

    return {p["name"]: p for p in api.presets()["placement_policy_info"]}


def places_by_node(placement: str) -> bool:
    """A node placement policy (docs/numa.md): it chooses each page's node, not its banks, and
    what it changes most is where reads are served (a link's latency, a slower node's bandwidth)."""
    info = _placement_info().get(placement, {})
    return bool(info.get("places_nodes")) and not info.get("colours_nodes")


#: Schedulers by the names their papers use.
SCHEDULERS = {"fcfs": "FCFS", "fr-fcfs": "FR-FCFS", "fr-fcfs-cap": "FR-FCFS-Cap", "par-bs": "PAR-BS",
              "atlas": "ATLAS", "tcm": "TCM", "bliss": "BLISS", "imps": "IMPS", "ccps": "CCPS"}


def mechanism(policy: str) -> str:
    """What a policy changes, for a sentence: its placement's mechanism, and the scheduler a
    ``policy+scheduler`` name gives (``buddy+tcm``: "TCM scheduling")."""
    from memtint.comparison import split_policy

    placement, scheduler = split_policy(policy)
    declared = _placement_info().get(placement, {}).get("mechanism") or placement
    parts = [] if placement == "buddy" and scheduler else [declared]
    if scheduler:
        parts.append(f"{SCHEDULERS.get(scheduler, scheduler)} scheduling")
    return " with ".join(parts)


def _intensive(mix: str) -> bool:
    """A memory-intensive mix by its programs' names (profiles only): at most one is light."""
    programs = [p.split(":", 1)[0] for p in mix.split("|")]
    return sum(p not in INTENSIVE_PROFILES for p in programs) <= 1


def intensive_mixes(frame: Any) -> set[str]:
    """The mixes (``mix`` labels) of a sweep's per-core rows with at most one light program,
    measured: a program is light when its alone LLC MPKI is at most 1 (bpm.md §4)."""
    from memtint.trace_analysis import INTENSIVE_MPKI

    rows = frame[(frame["status"] == "ok") & frame["llc_mpki_alone"].notna()].drop_duplicates(["mix", "core"])
    light = (rows["llc_mpki_alone"] <= INTENSIVE_MPKI).groupby(rows["mix"]).sum()
    return set(light.index[light <= 1])


#: The least relative growth (shared over alone) that a sentence calls interference.
GREW = 0.05

#: A relative change below which a sentence says a figure stayed (0.5 %: what seeds move a
#: mix's mean figures by; shown with more decimals it would read as an effect).
STAYED = 0.005


def signed(x: float, digits: int = 0) -> str:
    """``x`` with its sign and ``digits`` decimals, one more (up to three) while that rounds a
    nonzero value to zero: ``-0.4``, never ``-0`` or ``+0`` (an exact zero is ``0``)."""
    for d in range(digits, digits + 4):
        text = f"{x:+.{d}f}"
        if float(text) != 0:
            return text
    return f"{0:.{digits}f}"


def two_figures(a: float, b: float, digits: int = 0) -> tuple[str, str]:
    """``a`` and ``b`` with ``digits`` decimals, one more (up to three) while they would read
    alike though they differ: "from 3.8 % to 4.0 %", never "from 4 % to 4 %"."""
    for d in range(digits, digits + 4):
        x, y = f"{a:.{d}f}", f"{b:.{d}f}"
        if x != y or a == b:
            break
    return x, y

#: The share of DRAM requests missing the row buffer because of another program below which a
#: sentence says programs do not interfere in the banks (1 %: what seeds move a mix's rate by).
NO_INTERFERENCE = 0.01


def interference_sentence(frame: Any, baseline: str) -> str:
    """Which interference dominates under ``baseline``, from its per-core rows shared against
    alone: LLC pollution (LLC misses per kilo-instruction), bank interference (row-buffer miss
    rate, and the share of requests that missed it because of another program) and bandwidth
    (mean DRAM read latency, which queueing for the channels raises). The
    largest relative increase is named, with all three figures."""
    import math

    rows = frame[(frame["policy"] == baseline) & (frame["status"] == "ok")]
    rows = rows[rows["llc_mpki_alone"].notna() & (rows["llc_mpki_alone"] > 0.1)]
    if rows.empty:
        return f"Under {baseline}: no program's alone statistics to compare with (no interference measured)."

    def change(shared: str, alone: str) -> tuple[float, float, float]:
        a, b = rows[alone].mean(), rows[shared].mean()
        return a, b, (b / a - 1) if a and not math.isnan(a) else math.nan

    effects = {
        "LLC pollution": change("llc_mpki", "llc_mpki_alone"),
        "bank interference": change("row_buffer_miss_rate", "row_buffer_miss_rate_alone"),
        "bandwidth": change("read_latency_ns_mean", "read_latency_ns_alone"),
    }
    # The engine's row-buffer causes, where the results carry them: how much of the row-buffer
    # traffic another program's rows caused (none alone, by definition).
    by_other = rows["row_interference_rate"].mean() if "row_interference_rate" in rows else math.nan
    caused = ("" if math.isnan(by_other) else
              f"{100 * by_other:.0f} % of their DRAM requests missed the row buffer because of another "
              "program (its open row or its precharge)")
    # Misses no other program caused (a baseline that partitions banks) are each program's own
    # rows on fewer banks: a cost of the partition, not interference, so never the dominant one.
    own_rows = not math.isnan(by_other) and by_other < NO_INTERFERENCE
    candidates = [k for k in effects if not (own_rows and k == "bank interference")]
    dominant = max(candidates, key=lambda k: -1 if math.isnan(effects[k][2]) else effects[k][2])
    bank_name = "their own rows, not bank interference" if own_rows else "bank interference"
    grew = effects[dominant][2] >= GREW  # NaN compares False
    verdict = (f"[bold]{dominant}[/bold] dominates on these mixes" if grew else
               f"none grew by {100 * GREW:.0f} % or more, so these mixes show little interference")

    def figure(what: str, effect: str, label: str, digits: int, scale: float = 1.0, unit: str = "",
               extra: str = "") -> str:
        """"raised WHAT from A to B (+C %, label)", "lowered ...", or "left WHAT at A" for a change
        under STAYED (seeds move a mean that much; more decimals would show noise): the label only
        for a growth of GREW or more, the figures as precise as it takes to tell them apart."""
        a, b, c = effects[effect]
        notes = extra and f" ({extra})"
        if math.isnan(c) or abs(c) < STAYED:
            return f"left {what} at {scale * b:.{digits}f}{unit}{notes}"
        x, y = two_figures(scale * a, scale * b, digits)
        shown = "; ".join(part for part in (", ".join([f"{signed(100 * c)} %"] + ([label] if c >= GREW else [])),
                                            extra) if part)
        first = unit if unit == " %" else ""  # "from 30 % to 31 %", "from 44 to 78 ns"
        return f"{'raised' if b > a else 'lowered'} {what} from {x}{first} to {y}{unit} ({shown})"

    llc = figure("the programs' LLC misses", "LLC pollution", "LLC pollution", 1, unit=" per kilo-instruction")
    bank = figure("their row-buffer miss rate", "bank interference", bank_name, 0, 100, " %", caused)
    bw = figure("their DRAM read latency", "bandwidth", "queueing for bandwidth and banks", 0, unit=" ns")
    return (f"Under {baseline}, sharing the machine {llc}, {bank} and {bw}: {verdict} (means over the {len(rows)} "
            "programs that reach past their caches alone).")


def policy_sentences(runs: Any, intensive: set[str] | None = None,
                     interference: dict[str, float] | None = None) -> list[str]:
    """One sentence per non-baseline policy (per series, ``bpm @ machine``, as the report labels
    them, where ``runs`` has them) saying what its result means, computed from the runs (``memtint.reports.run_table``):
    mean weighted-speedup and maximum-slowdown change against the baseline on the same mix and
    machine, how many mixes improved, the memory-intensive mixes apart, and the row-buffer miss
    rate that explains it. ``intensive``: the memory-intensive mixes (:func:`intensive_mixes`;
    default ``runs.attrs["intensive_mixes"]``, else by the programs' names). ``interference``: per
    run (configuration hash), the mean over its cores of ``row_interference_rate``, the share of
    requests that missed the row buffer because of another program; where given, the sentence
    says how a policy changed it beside the miss rate."""
    import math

    base = runs.attrs["baseline"]
    ok = runs[runs["status"] == "ok"]
    # Each series as the report's tables and plots label it (``bpm-plus @ i7-860-bpm-plus`` for a
    # policy run on its machine variant), so a sentence is found by its row.
    label = ok["series"] if "series" in ok else ok["policy"]
    machine = ok["machine"] if "machine" in ok else ""
    ok = ok.assign(_label=label, _machine=machine)
    interference = interference or {}
    ok = ok.assign(_by_other=[interference.get(h, math.nan) for h in ok["config_hash"]] if "config_hash" in ok
                   else math.nan)
    base_rb = {(r["_machine"], r["mix"]): (r["mix_row_buffer_miss_rate"], r["_by_other"])
               for _, r in ok[ok["policy"] == base].iterrows()}
    if len({m for m, _ in base_rb}) == 1:  # one machine's baseline: a policy on its variant machine compares with it
        base_rb = {("", mix): v for (_, mix), v in base_rb.items()}
        ok = ok.assign(_machine="")
    sentences = []
    # In the summary table's order (runs.attrs["series"]: the baseline, then alphabetical), not
    # the store's, which follows the order in which parallel runs finished.
    rank = {s: i for i, s in enumerate(runs.attrs.get("series") or ())}

    def position(label: Any) -> tuple[int, str]:
        series = ok.loc[ok["_label"] == label, "series"] if "series" in ok else ()
        return min((rank.get(s, len(rank)) for s in series), default=len(rank)), str(label)

    for series in sorted(dict.fromkeys(ok["_label"]), key=position):
        rows = ok[(ok["_label"] == series) & ok["ws_norm"].notna()]
        if rows.empty or rows["policy"].iloc[0] == base:
            continue
        policy = rows["policy"].iloc[0]
        ws = 100 * (rows["ws_norm"].mean() - 1)
        ms = 100 * (rows["ms_norm"].mean() - 1)
        better = int((rows["ws_norm"] > 1.0).sum())
        measured = intensive if intensive is not None else runs.attrs.get("intensive_mixes")
        heavy = rows[rows["mix"].isin(measured)] if measured is not None else rows[rows["mix"].map(_intensive)]
        keys = list(zip(rows["_machine"], rows["mix"]))
        rb_pairs = [(base_rb[k][0], r) for k, r in zip(keys, rows["mix_row_buffer_miss_rate"])
                    if k in base_rb and not math.isnan(r)]
        rb_base = sum(a for a, _ in rb_pairs) / len(rb_pairs) if rb_pairs else math.nan
        rb_pol = sum(b for _, b in rb_pairs) / len(rb_pairs) if rb_pairs else math.nan
        other_pairs = [(base_rb[k][1], r) for k, r in zip(keys, rows["_by_other"])
                       if k in base_rb and not (math.isnan(r) or math.isnan(base_rb[k][1]))]
        other_base = sum(a for a, _ in other_pairs) / len(other_pairs) if other_pairs else math.nan
        other_pol = sum(b for _, b in other_pairs) / len(other_pairs) if other_pairs else math.nan
        # Sampled runs: the mean change is an estimate, a verdict only where its 95 % interval
        # (matched units: each run's change interval, over the mixes) excludes no change.
        sampled = "_sampled" in rows and bool(rows["_sampled"].all())
        ws_half = None
        if sampled and "ws_norm_ci95_halfwidth" in rows and not rows["ws_norm_ci95_halfwidth"].isna().any():
            from memtint.sampling import mean_half_width

            ws_half = mean_half_width(list(rows["ws_norm_ci95_halfwidth"]))
            ws_half = None if ws_half is None else 100 * ws_half
        ws_text = f"{signed(ws, 1)} %"
        if sampled:
            ws_text = (f"{signed(ws, 1)} ± ? %" if ws_half is not None and math.isinf(ws_half) else
                       f"{signed(ws, 1)} ± {ws_half:.1f} %" if ws_half is not None else f"{signed(ws, 1)} % (sampled)")
        if sampled and (ws_half is None or abs(ws) <= ws_half):
            meaning = (f"not resolved from {base} (the change is within its 95 % sampling interval; more units or "
                       "mixes would tell)" if ws_half is not None else
                       f"not resolved from {base} (sampled runs that paced themselves give no interval of the "
                       "change; matched units, sampling.matched = true, do)")
        elif ws > 0.5 and ms < -0.5:
            meaning = "more throughput and fairer"
        elif ws > 0.5:
            meaning = "more throughput, at a cost in fairness" if ms > 0.5 else "more throughput, fairness unchanged"
        elif ws < -0.5:
            meaning = "fairer but slower" if ms < -0.5 else "a loss on these mixes"
        else:
            meaning = "fairer at the same throughput" if ms < -0.5 else (
                "less fair at the same throughput" if ms > 0.5 else "no measurable effect")
        mech = mechanism(policy)
        # Whether the policy moved the misses other programs' rows caused (by a point or more).
        other_moved = not math.isnan(other_base) and abs(other_pol - other_base) >= NO_INTERFERENCE
        other = ("{} % to {} % of requests".format(*two_figures(100 * other_base, 100 * other_pol))
                 if other_moved else "")
        rb_from, rb_to = two_figures(100 * rb_base, 100 * rb_pol)
        from memtint.comparison import split_policy

        by_node = places_by_node(split_policy(policy)[0])
        # A colour policy's own rows share fewer banks; a node policy leaves every bank to them.
        fewer, aside = ("", "") if by_node else (" on its fewer banks", ", on fewer banks,")
        if rb_pol < rb_base * 0.95:
            cause = f"{mech} cut the row-buffer miss rate from {rb_from} % to {rb_to} %"
            cause += f" (misses another program caused: {other})" if other else ""
        elif rb_pol > rb_base * 1.05:
            cause = f"{mech} raised the row-buffer miss rate from {rb_from} % to {rb_to} %"
            cause += (f": it took the misses another program caused from {other}, but each program's own rows "
                      f"conflicted more{fewer}" if other and other_pol < other_base
                      else f" (misses another program caused: {other})" if other else "")
        elif other and other_pol < other_base:
            cause = (f"the row-buffer miss rate stayed at {100 * rb_pol:.0f} %: {mech} took the misses another "
                     f"program caused from {other}, and each program's own rows{aside} "
                     "missed about as often instead")
        elif other:
            cause = (f"the row-buffer miss rate stayed at {100 * rb_pol:.0f} %: {mech} raised the misses another "
                     f"program caused from {other}, in place of misses of each program's own rows")
        else:
            cause = f"the row-buffer miss rate stayed at {100 * rb_pol:.0f} %, so {mech} changed little in DRAM"
        if by_node:
            cause += (" (on a machine of several nodes, the node a page is on also sets its reads' link latency and "
                      "bandwidth, which the row-buffer figures do not show)")
        heavy_text = ""
        if not heavy.empty and len(heavy) < len(rows):
            n = len(heavy)
            heavy_text = (f"; on the {n} memory-intensive mix{'es' if n != 1 else ''} "
                          f"{signed(100 * (heavy['ws_norm'].mean() - 1), 1)} % "
                          f"(maximum slowdown {signed(100 * (heavy['ms_norm'].mean() - 1), 1)} %)")
        sentences.append(
            f"[bold]{series}[/bold]: weighted speedup {ws_text} over {base} on average ({better} of "
            f"{len(rows)} mix{'es' if len(rows) != 1 else ''} better), maximum slowdown {signed(ms, 1)} %{heavy_text}: "
            f"{meaning}; {cause}.")
    return sentences


def pooled(runs: Any) -> str | None:
    """Why sentences per policy would pool different experiments in ``runs`` (several setups, or
    sampled and detailed runs), as a sentence for the report; None when they would not."""
    ok = runs[runs["status"] == "ok"]
    if ok["_setup"].nunique() > 1:
        return (f"The store holds {ok['_setup'].nunique()} setups, so no sentences say what its numbers mean (they "
                "would pool them); sweep each setup into its own --out for them.")
    if ok["_sampled"].nunique() > 1:
        return ("The store holds sampled and detailed runs, so no sentences say what its numbers mean (they would "
                "pool them); sweep each into its own --out for them.")
    return None


def sweep_findings(frame: Any, runs: Any) -> list[str]:
    """The sentences for a report of ``frame`` (per-core rows) and ``runs``
    (:func:`memtint.reports.run_table`), with rich markup: a sentence per series (a policy on a
    machine); none when the store holds several setups or sampled and detailed runs, whose runs
    the interference sentence would pool."""
    ok = runs[runs["status"] == "ok"]
    if ok.empty or pooled(runs):
        return []
    # Not in runs.attrs: pandas deep-copies attrs into every frame derived from runs.
    intensive = intensive_mixes(frame[frame["config_hash"].isin(set(runs["config_hash"]))])
    interference = None
    if "row_interference_rate" in frame:
        interference = frame.groupby("config_hash")["row_interference_rate"].mean().dropna().to_dict()
    return [interference_sentence(frame[frame["config_hash"].isin(set(ok["config_hash"]))], runs.attrs["baseline"]),
            *policy_sentences(runs, intensive, interference)]
