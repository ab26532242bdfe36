"""Terminal rendering of memtint results (rich tables). Reads the statistics schema of
docs/stats.md; computes nothing the engine does not report except ratios for display."""

from __future__ import annotations

import json
import os
from typing import Any, Iterable

from rich import box
from rich.markup import escape
from rich.console import Console
from rich.table import Table
from rich.text import Text

from memtint import sampling

#: Columns for results written to a pipe or a file: rich would take 80 and cut the cells.
PIPE_WIDTH = 220


def output_console(**kwargs: Any) -> Console:
    """The console results are printed on: a terminal's own width (`COLUMNS` if set), else
    `PIPE_WIDTH`, so a redirected table keeps every column and digit."""
    console = Console(**kwargs)
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console = Console(width=PIPE_WIDTH, **kwargs)
    return console


class _Table(Table):
    """A rich table whose cells wrap on a narrow terminal instead of being cut to "0.…", and whose
    title, caption and cells are printed as text, never read as markup. Every command's tables are
    these."""

    def __init__(self, *headers: Any, **kwargs: Any) -> None:
        for key in ("title", "caption"):
            if isinstance(kwargs.get(key), str):
                kwargs[key] = escape(kwargs[key])
        super().__init__(*headers, **kwargs)

    def add_column(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("overflow", "fold")
        super().add_column(*args, **kwargs)

    def add_row(self, *cells: Any, **kwargs: Any) -> None:
        # A cell's text is printed as it is: a policy label "bpm [warmup=0]" or a program named
        # "[x]" is not markup (it vanished, or "[/x]" failed). Styled cells are rich Text.
        super().add_row(*(escape(c) if isinstance(c, str) else c for c in cells), **kwargs)

MISSING = "—"


def count(value: Any) -> str:
    """An integer with thousands separators, or a dash when absent."""
    return f"{value:,}" if isinstance(value, (int, float)) else MISSING


def number(value: Any, digits: int = 1) -> str:
    return f"{value:,.{digits}f}" if isinstance(value, (int, float)) else MISSING


def plus_minus(half: float | None, digits: int = 3) -> str:
    """`` ± 0.012`` after an estimate with a 95 % half-width, `` ± ?`` when it is unbounded, ``""``
    without one (a detailed figure)."""
    if half is None:
        return ""
    return " ± ?" if half == float("inf") else f" ± {number(half, digits)}"


def change_cell(change: float | None, half: float | None) -> str:
    """``+0.8 ± 1.5 %``: a relative change with the half-width of its 95 % interval (``± ?`` when
    unbounded, none without one); ``—`` without a change."""
    if change is None or change != change:
        return MISSING
    return f"{100 * change:+.1f}" + ("" if half is None else " ± ?" if half == float("inf") else f" ± {100 * half:.1f}") + " %"


def matched_change_text(pacer: str) -> str:
    """What a ``WS vs <pacer>`` column of a sweep or report is."""
    return (f"the mean change of each run's WS against {pacer}'s run of its mix, whose units it replayed "
            "(matched units), ± the 95 % sampling interval of that mean")


def report_pacer(rows: list[dict[str, Any]]) -> str | None:
    """The policy a report's ``WS vs`` column compares against (rows of
    :func:`memtint.reports.summary_rows`: ``ws_change_vs``), or None when it has none."""
    return next((r["ws_change_vs"] for r in rows if r.get("ws_change_vs")), None)


def with_interval(value: Any, interval: Any, digits: int = 3) -> str:
    """``1.234 ± 0.012`` (half the 95 % interval's width) for a sampled estimate; ``1.234 ± ?``
    for one whose interval is unbounded (fewer than two units, or units of one CPI); the number alone without an
    interval."""
    if not interval or not isinstance(value, (int, float)):
        return number(value, digits)
    return number(value, digits) + plus_minus(sampling.half_width(interval), digits)


def _scaled(interval: Any, factor: float) -> Any:
    """An interval in another unit (``[null, null]``, unbounded, stays so)."""
    if not interval:
        return interval
    return [x * factor if isinstance(x, (int, float)) else x for x in interval]


def _units_text(units: list[Any]) -> str:
    units = [u for u in units if isinstance(u, int)]
    if not units:
        return "?"
    lo, hi = min(units), max(units)
    return count(lo) if lo == hi else f"{count(lo)}-{count(hi)}"


def sampling_text(settings: dict[str, Any] | None, units: list[Any]) -> str:
    """What a sampled run measured, for a caption: its units and their size (empty when detailed)."""
    if not settings:
        return ""
    warming = settings.get("warming")
    after = f" after {count(warming)} of detailed warm-up" if warming else ""
    phases = (settings.get("phases") or {}).get("phases") if settings.get("mode") == "phases" else None
    how = f", stratified by the program's {count(phases)} phase(s)" if phases else ""
    return (f"sampled: {_units_text(units)} units of {count(settings.get('unit'))} instructions per core{after}{how}; "
            "figures are estimates, ± half the 95 % interval")


def sampled_line(result: dict[str, Any]) -> str:
    """The line under a sampled comparison's tables (empty for a detailed one)."""
    sampled = [p for p in result.get("policies", []) if p.get("sampled")]
    if not sampled:
        return ""
    settings = sampled[0].get("sampling") or result.get("sampling")
    units = [c.get("sampling_units") for p in sampled for c in p["cores"]]
    return sampling_text(settings, units)


def resolved_line(policies: list[dict[str, Any]], differences: list[dict[str, Any]] | None = None) -> str:
    """Whether a sampled comparison resolves its best policy by weighted speedup. With matched
    units (``differences``: each pair's 95 % interval on its WS difference, and on its change,
    which holds 0 exactly when the difference's does, whichever policy divides: one verdict per
    pair, the one the table's ``WS vs`` column shows), the policies whose interval against the
    best one holds 0; otherwise those whose own interval overlaps the best one's. In the
    validation of docs/sampling.md every pair either way tells apart is ordered as detailed runs
    order it; closer pairs often are not."""
    with_ci = [p for p in policies if p.get("weighted_speedup_ci95")]
    if len(with_ci) < 2:
        return ""
    unbounded = [p["policy"] for p in with_ci if sampling.half_width(p["weighted_speedup_ci95"]) == float("inf")]
    if unbounded:
        phases = any((p.get("sampling") or {}).get("mode") == "phases" for p in with_ci)
        why = ("measured no phase of a program in two units of different CPIs, so its interval is unbounded (± ?); "
               "a larger --sample-min-units or a smaller --sample-clusters gives a phase two" if phases else
               "measured a program in fewer than two units, or in units that all gave one CPI, so its interval is "
               "unbounded (± ?); more units (a longer run or a shorter --sample-period), or units of 1,000 "
               "instructions or more, give one (the warnings say which)")
        return f"best WS not resolved: {', '.join(unbounded)} {why}"
    best = max(with_ci, key=lambda p: p["weighted_speedup"])
    more = "more units would tell them apart: a longer run, a shorter --sample-period or a smaller --target-error"
    if differences:
        def ahead(q: str) -> bool:
            for d in differences:
                low, high = d.get("weighted_speedup_difference_ci95") or d["weighted_speedup_change_ci95"]
                if low is None or high is None:
                    continue
                if (d["policy"], d["against"]) == (best["policy"], q):
                    return low > 0
                if (d["policy"], d["against"]) == (q, best["policy"]):
                    return high < 0
            return False
        close = [p["policy"] for p in with_ci if p is not best and not ahead(p["policy"])]
        if not close:
            return f"best WS: {best['policy']}, ahead of every other policy (95 % intervals of the matched differences)"
        return (f"best WS: {best['policy']}, not resolved from {', '.join(close)} (the 95 % interval of the matched "
                f"difference holds 0; {more})")
    low, high = best["weighted_speedup_ci95"]
    close = [p["policy"] for p in with_ci if p is not best
             and p["weighted_speedup_ci95"][1] >= low and p["weighted_speedup_ci95"][0] <= high]
    if not close:
        return f"best WS: {best['policy']}, its 95 % interval clear of every other policy's"
    return f"best WS: {best['policy']}, not resolved from {', '.join(close)} (their 95 % intervals overlap; {more})"


def percent(part: Any, whole: Any) -> str:
    if not isinstance(part, (int, float)) or not isinstance(whole, (int, float)) or whole <= 0:
        return MISSING
    return f"{100.0 * part / whole:.1f} %"


def size(nbytes: Any) -> str:
    """A byte count in binary units: 8 GiB, 512 MiB."""
    if not isinstance(nbytes, (int, float)) or nbytes <= 0:
        return MISSING
    value = float(nbytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{value:g} {unit}" if value == int(value) else f"{value:.1f} {unit}"
        value /= 1024
    return MISSING


def duration_ns(ns: Any) -> str:
    """Simulated time in the most readable unit."""
    if not isinstance(ns, (int, float)):
        return MISSING
    for scale, unit in ((1e9, "s"), (1e6, "ms"), (1e3, "µs")):
        if ns >= scale:
            return f"{ns / scale:.3f} {unit}"
    return f"{ns:.1f} ns"


def row_buffer_accesses(stats: dict[str, Any]) -> Any:
    """Requests classified by row-buffer outcome (hits + misses + conflicts)."""
    parts = [stats.get(k) for k in ("row_hits", "row_misses", "row_conflicts")]
    if all(isinstance(p, (int, float)) for p in parts):
        return sum(parts)  # type: ignore[arg-type]
    return stats.get("requests")


def row_hit_rate(stats: dict[str, Any]) -> float | None:
    total = row_buffer_accesses(stats)
    hits = stats.get("row_hits")
    if isinstance(hits, (int, float)) and isinstance(total, (int, float)) and total > 0:
        return hits / total
    return None


def compact(value: Any) -> str:
    """A large rate in k/M/G: 1.23 M."""
    if not isinstance(value, (int, float)):
        return MISSING
    for scale, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value:.0f}"


LATENCY_COLUMNS = (("mean", "mean"), ("p50", "p50"), ("p90", "p90"), ("p99", "p99"), ("p999", "p99.9"), ("max", "max"))


def read_latency_table(stats: dict[str, Any]) -> Table:
    """Read latency percentiles in DRAM cycles and in nanoseconds."""
    table = _Table(title="Read latency", box=box.SIMPLE_HEAD)
    table.add_column("")
    for _, label in LATENCY_COLUMNS:
        table.add_column(label, justify="right")
    for key, unit in (("read_latency", "cycles"), ("read_latency_ns", "ns")):
        latency = stats.get(key) or {}
        table.add_row(unit, *(_short(latency.get(k)) for k, _ in LATENCY_COLUMNS))
    return table


def _short(value: Any) -> str:
    """Whole numbers without decimals, others with one; thousands separated in both."""
    if isinstance(value, float) and value != int(value):
        return f"{value:,.1f}"
    return count(int(value)) if isinstance(value, (int, float)) else MISSING


def energy_text(energy: dict[str, Any] | None) -> str:
    """A run's DRAM energy in one line (docs/energy.md), or why there is none."""
    if not energy:
        return "-"
    if "unavailable" in energy:
        return f"unavailable: {energy['unavailable']}"
    total = energy.get("total_nj") or 0.0
    parts = (("act_pre_nj", "ACT/PRE"), ("read_nj", "read"), ("write_nj", "write"), ("refresh_nj", "refresh"),
             ("background_active_nj", "active standby"), ("background_precharged_nj", "precharged standby"))
    split = ", ".join(f"{label} {percent(energy.get(k), total)}" for k, label in parts)
    return (f"{number(total / 1000.0, 2)} µJ, {number(energy.get('per_access_nj'), 2)} nJ per access, "
            f"{number(energy.get('average_power_mw'), 0)} mW ({split})")


def refresh_text(stats: dict[str, Any]) -> str:
    """REFs (and per-bank REFPBs) issued, the run's tREFI/tRFC, and the requests that met a refresh."""
    config = stats.get("config", {}) or {}
    met = stats.get("refresh_interference") or {}
    per_bank = stats.get("bank_refreshes") or 0
    # Bank refreshes: LPDDR4's per-bank REFPB, or DDR5's same-bank REFSB.
    kind = "sb" if config.get("tRFCsb_ns") is not None else "pb"
    text = f"{count(per_bank)} REF{kind.upper()}" if per_bank else count(stats.get("refreshes"))
    if config.get("tREFI_ns") is not None:
        trfc = (f"tRFC{kind} {duration_ns(config.get(f'tRFC{kind}_ns'))}" if per_bank
                else f"tRFC {duration_ns(config.get('tRFC_ns'))}")
        text += f" (tREFI {duration_ns(config.get('tREFI_ns'))}, {trfc})"
    if met:
        where = "bank" if per_bank else "rank"
        text += (f"; {count(met.get('requests'))} requests met a refreshing {where} "
                 f"({percent(met.get('requests'), stats.get('requests'))})")
    return text


def significant(value: Any, digits: int = 4) -> str:
    """``value`` to ``digits`` significant digits (a run time of 3.272 or 106.7 units)."""
    if not isinstance(value, (int, float)) or value != value:
        return "-"
    text = f"{value:.{digits}g}"
    return f"{value:,.0f}" if "e" in text and abs(value) >= 1 else text


def rt_table(stats: dict[str, Any]) -> Table:
    """The table `memtint rt` prints: each task's jobs, run time, load latency and refresh."""
    config = stats.get("config", {}) or {}
    # The run's refresh as given (fgr4 runs the controller's all-bank refresh at 4x): no tRFC without refresh.
    refresh, kind = config.get("refresh"), config.get("controller_refresh")
    refresh = ("no refresh" if kind == "none" else f"{kind} refresh" + (f" ({refresh})" if refresh in ("fgr2", "fgr4") else "")
               + f", tRFC {duration_ns(config.get('tRFC_ns'))}")
    title = f"{config.get('machine')} · {config.get('schedule')} · {refresh}"
    # Latencies to 0.1 ns and run times to four digits (refresh moves them by fractions of a %)
    # keep the usual 80 columns whole; the JSON keeps every digit.
    table = _Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    coloured = config.get("schedule") not in ("edf", "rm")
    columns = ("task", "p", "e", "jobs", "miss", "run", "max", "resp", "lat", "p99", "max", "met") + (("ranks",) if coloured else ())
    for column in columns:  # names fold; numbers stay whole (the names give way first)
        text = column in ("task", "ranks")
        table.add_column(column, justify="left" if text else "right", no_wrap=not text)
    ranks_all = None
    for t in stats.get("tasks", []):
        lat = t.get("latency_ns") or {}
        ranks = " | ".join(",".join(map(str, r)) for r in t.get("ranks", []))
        if not coloured:
            ranks_all = ranks
        table.add_row(
            str(t.get("name")), str(t.get("period")), str(t.get("wcet")), count(t.get("jobs")), count(t.get("deadline_misses")),
            significant(t.get("exec_mean")), significant(t.get("exec_max")), significant(t.get("response_max")),
            *((number(lat.get(k), 1) for k in ("mean", "p99", "max")) if t.get("loads") else ("-",) * 3),
            compact(t.get("refresh_met")), *((ranks,) if coloured else ()),
        )
    unmeasured = [str(t.get("name")) for t in stats.get("tasks", []) if not t.get("finished")]
    table.caption = (f"utilisation {number(stats.get('utilisation'), 4)} (mean run time / period"
                     + (f"; without {', '.join(unmeasured)}, which finished no job" if unmeasured else "") + "), "
                     f"{count(stats.get('deadline_misses'))} deadline misses, {count(stats.get('refresh_met'))} loads met "
                     f"a refreshing rank. p, e, run, max, resp: units of {config.get('unit_us')} µs (resp: the longest "
                     f"response, release to finish); lat, p99, max: load latency, ns"
                     + (f"; ranks {ranks_all}" if ranks_all else "; ranks per instance (a copy task has two)"))
    verdicts = stats.get("analysis") or []
    if verdicts:
        said = {True: "schedulable", False: "not schedulable", None: "undecided"}
        table.caption += ". Analysis at the declared WCETs (refresh not counted): " + "; ".join(
            f"{v.get('tasks')}: {said.get(v.get('schedulable'), 'undecided')} by {v.get('test')} ({v.get('detail')})"
            for v in verdicts)
    attackers = stats.get("attackers") or []
    if attackers:
        table.caption += ". Attackers: " + "; ".join(
            f"colours {','.join(map(str, a.get('colours', [])))} {number(a.get('bandwidth_gbps'), 2)} GB/s, "
            f"read latency {number((a.get('latency_ns') or {}).get('mean'), 0)} ns" for a in attackers)
    return table


def dram_summary(stats: dict[str, Any]) -> Table:
    """The short summary table `memtint dram` prints (followed by :func:`read_latency_table`)."""
    config = stats.get("config", {}) or {}
    title = " · ".join(
        str(config[k]) for k in ("machine", "mapping", "scheduler", "row_policy", "refresh") if config.get(k)
    )
    table = _Table(title=title or None, box=box.SIMPLE, show_header=False)
    table.add_column("metric", style="bold")
    table.add_column("value")

    table.add_row(
        "Requests",
        f"{count(stats.get('requests'))} ({count(stats.get('reads'))} reads, {count(stats.get('writes'))} writes)",
    )
    classified = row_buffer_accesses(stats)
    for key, label in (("row_hits", "Row hits"), ("row_misses", "Row misses"), ("row_conflicts", "Row conflicts")):
        table.add_row(label, f"{count(stats.get(key))} ({percent(stats.get(key), classified)})")

    bandwidth = stats.get("bandwidth_gbps", {}) or {}
    peak = stats.get("peak_bandwidth_gbps")
    table.add_row(
        "Bandwidth",
        f"{number(bandwidth.get('total'), 2)} GB/s of {number(peak, 2)} GB/s peak ({percent(bandwidth.get('total'), peak)})",
    )
    table.add_row("", f"read {number(bandwidth.get('read'), 2)} GB/s, write {number(bandwidth.get('write'), 2)} GB/s")
    table.add_row("Refreshes", refresh_text(stats))
    commands = stats.get("commands") or {}
    if commands:  # the counts Ramulator's and DRAMSim3's reports lead with; zero ones left out
        order = ("ACT", "PRE", "PREA", "RD", "RDA", "WR", "WRA", "REF", "REFPB", "REFSB")
        names = [*order, *(name for name in commands if name not in order)]
        table.add_row("Commands", " · ".join(f"{name} {count(commands[name])}" for name in names
                                             if commands.get(name)) or "none")
    table.add_row("Energy", energy_text(stats.get("energy")))
    table.add_row("Simulated time", f"{duration_ns(stats.get('simulated_ns'))} ({count(stats.get('dram_cycles'))} DRAM cycles)")
    table.add_row(
        "Wall time",
        f"{number(stats.get('wall_seconds'), 3)} s ({compact(stats.get('requests_per_second'))} requests/s)",
    )
    if "violations" in stats:
        violations = stats["violations"]
        style = "green" if violations == 0 else "bold red"
        table.add_row("Timing violations", Text.assemble((count(violations), style), " (independent checker)"))
        for example in (stats.get("violation_examples") or [])[:5]:
            table.add_row("", Text(str(example), style="red"))
    return table


def presets_tables(catalogue: dict[str, Any]) -> Iterable[Table]:
    """The tables `memtint presets` prints: machines, devices, mappings, then components."""
    machines = _Table(title="Machines (or a machine TOML file)", box=box.SIMPLE_HEAD)
    machines.add_column("name", no_wrap=True)
    machines.add_column("capacity", no_wrap=True, justify="right")
    machines.add_column("mapping", no_wrap=True)
    machines.add_column("description", ratio=1, min_width=24)
    for m in catalogue.get("machines", []):
        machines.add_row(
            m.get("name", MISSING),
            size(m.get("capacity_bytes")),
            str(m.get("mapping", MISSING)),
            m.get("description", ""),
        )
    yield machines

    devices = _Table(title="Devices", box=box.SIMPLE_HEAD)
    for column in ("name", "standard", "speed bin", "MT/s", "densities (Gb)"):
        devices.add_column(column)
    for d in catalogue.get("devices", []):
        devices.add_row(
            d.get("name", MISSING),
            str(d.get("standard", MISSING)),
            str(d.get("speed_bin", MISSING)),
            count(d.get("data_rate_mts")),
            ", ".join(str(x) for x in d.get("densities_gbit", [])),
        )
    yield devices

    mappings = _Table(title="Mappings (also any layout such as RoBaRaCoCh, or a mapping TOML)", box=box.SIMPLE_HEAD)
    mappings.add_column("name")
    mappings.add_column("description", overflow="fold")
    for m in catalogue.get("mappings", []):
        mappings.add_row(m.get("name", MISSING), m.get("description", ""))
    yield mappings

    components = _Table(title="Components", box=box.SIMPLE_HEAD)
    components.add_column("kind")
    components.add_column("names", overflow="fold")
    for key, label in (
        ("layouts", "layouts"),
        ("schedulers", "schedulers"),
        ("row_policies", "row policies"),
        ("refresh", "refresh managers"),
        ("generators", "generators"),
        ("trace_formats", "trace formats"),
        ("placement_policies", "placement policies"),
        ("profiles", "workload profiles"),
        ("prefetchers", "LLC prefetchers ([cache.prefetcher] kind)"),
    ):
        components.add_row(label, ", ".join(str(x) for x in catalogue.get(key, [])))
    yield components

    described = _Table(title="Schedulers, row policies, refresh managers, placement, migration and dynamic policies, "
                            "resctrl partitioning (os.resctrl), real-time schedules (memtint rt)",
                      box=box.SIMPLE_HEAD)
    for column in ("kind", "name"):
        described.add_column(column, no_wrap=True)
    described.add_column("what it is", ratio=2, overflow="fold")
    described.add_column("parameters (defaults)", ratio=1, overflow="fold")
    for key, label, section in (
        ("scheduler_info", "scheduler", "controller"),
        ("row_policy_info", "row policy", "controller"),
        ("refresh_info", "refresh", "controller"),
        ("placement_policy_info", "placement", "os"),
        ("migration_policy_info", "migration", "os"),
        ("dynamic_policy_info", "dynamic", "os"),
        ("resctrl_info", "resctrl", "os"),
        ("rt_schedule_info", "rt schedule", "schedule"),
    ):
        for c in catalogue.get(key, []):
            params = c.get("params") or {}
            table = (f"[{section}.{c.get('name')}] " + ", ".join(f"{k} {_param(v)}" for k, v in params.items())
                     if params else "")
            notes = [c.get("summary", "")]
            if c.get("fast_path"):
                notes.append("lane controller")
            if c.get("needs_profiles"):
                notes.append("needs profiles (compare runs programs alone first)")
            if c.get("binds_threads"):
                notes.append(f"binds threads ({c['binds_threads']})")
            if c.get("needs"):
                notes.append(f"needs {c['needs']}")
            if c.get("moves_pages_of"):
                notes.append(f"moves pages placed by {', '.join(c['moves_pages_of'])} (os.migration)")
            if c.get("adapts"):
                notes.append(f"adapts the colours of {', '.join(c['adapts'])} (os.dynamic)")
            if c.get("machine_variant"):
                notes.append(f"sweeps run it on a machine's {c['machine_variant']} variant")
            described.add_row(label, c.get("name", MISSING), "; ".join(n for n in notes if n), table)
    yield described

    mixes = _Table(title="Mixes (memtint compare --mix NAME)", box=box.SIMPLE_HEAD)
    mixes.add_column("name")
    mixes.add_column("programs", overflow="fold")
    for m in catalogue.get("mixes", []):
        mixes.add_row(m.get("name", MISSING), ", ".join(m.get("programs") or []))
    yield mixes


def _param(value: Any) -> str:
    """A parameter's default as written in TOML, so it can be copied into a table (none: no
    default). A long fraction is cut to 4 significant digits; every other value is exact."""
    if value is None:
        return "(none)"
    if isinstance(value, bool) or isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return f"{int(value):_}.0"
    if isinstance(value, float):
        return repr(value) if len(repr(value)) <= 8 else f"{value:.4g}"
    if isinstance(value, int) and value >= 10_000:
        return f"{value:_}"
    return json.dumps(value)


def sim_table(stats: dict[str, Any]) -> Table:
    """Per-core results of one CPU-trace run."""
    cfg = stats["config"]
    # Threads with targets of their own ([[processes]] instructions) ran other lengths.
    ran = set() if stats.get("sampling") else {c.get("instructions") for c in stats.get("cores", [])} - {None}
    length = (f"{count(min(ran))} to {count(max(ran))}" if ran and max(ran) > 1.01 * min(ran)
              else count(cfg["instructions"]))
    table = _Table(
        title=f"{cfg['machine']} · policy {stats['policy']} · {length} instructions per core",
        box=box.SIMPLE,
        pad_edge=False,
        collapse_padding=True,
    )
    # Time-shared runs (processes with threads) get thread, process and switch columns.
    threads = stats.get("processes") is not None and cfg.get("processes") is not None
    columns = ["core", "program", "IPC", "MPKI", "RB miss", "lat ns", "p99 ns", "banks", "ch", "borrowed"]
    if threads:
        columns = ["thread", "proc", "cores", "switches"] + columns[1:]
    for name in columns:
        table.add_column(name, justify="left" if name == "program" else "right", no_wrap=True, min_width=len(name))
    for c in stats["cores"]:
        lead = [str(c["core"])]
        if threads:
            lead = [str(c["thread"]), str(c["process"]), f"{c['first_core']}→{c['last_core']}", count(c["context_switches"])]
        table.add_row(
            *lead, c["program"], with_interval(c["ipc"], (c.get("sampling") or {}).get("ipc_ci95"), 3),
            number(c["llc_mpki"], 2),
            with_interval(100 * c["row_buffer_miss_rate"],
                          _scaled((c.get("sampling") or {}).get("row_buffer_miss_rate_ci95"), 100), 1) + "%",
            number(c["read_latency_ns"]["mean"], 1),
            number(c["read_latency_ns"]["p99"], 1), str(c["banks_used"]), str(c["channels_used"]),
            count(c["colour_overflow_pages"]),
        )
    sched = stats.get("scheduling") or {}
    switches = (f"{count(sched['context_switches'])} context switches "
                f"({100 * sched['same_process_switch_ratio']:.0f} % within a process) · ") if threads else ""
    nodes = ""
    if stats.get("nodes"):  # multi-node machines (docs/numa.md): numastat's view, and the run time
        nodes = " · ".join(f"node {n['node']} {n['name']}: {number(n['bandwidth_gbps'], 1)} of "
                           f"{number(n['peak_gbps'], 1)} GB/s, {count(n['pages'])} pages" for n in stats["nodes"])
        run_time = max((p.get("run_time_cycles") or 0) for p in stats.get("processes") or [{}])
        nodes += f" · run time {count(run_time)} core cycles\n"
    if stats.get("page_migration"):  # os.migration moved pages (docs/numa.md, "Migration")
        nodes += migration_line(stats["page_migration"]) + "\n"
    nodes += time_line(stats["cores"])
    nodes += resctrl_line(stats) + dynamic_line(stats) + open_mix_line(stats) + hvr_class_line(stats)
    if stats.get("sampling"):
        nodes += sampling_text(stats["sampling"], [(c.get("sampling") or {}).get("units") for c in stats["cores"]]) + "\n"
    checked = stats.get("dram") or {}
    if "violations" in checked:  # check = true: the independent checker's verdict
        nodes += (f"timing checker: {count(checked['violations'])} violation{'' if checked['violations'] == 1 else 's'} "
                  f"in {count(checked.get('commands_checked') or 0)} DRAM commands\n")
    table.caption = (
        nodes + switches +
        f"row-buffer miss rate "
        f"{with_interval(100 * stats['row_buffer_miss_rate'], _scaled((stats.get('sampling') or {}).get('row_buffer_miss_rate_ci95'), 100), 1)} % · "
        f"{number(stats['requests_per_second'] / 1e6, 2)} M DRAM requests/s · "
        f"{number(stats['instructions_per_second'] / 1e6, 1)} M instructions/s simulated"
    )
    return table


def channel_balance_text(c: dict[str, Any] | None) -> str:
    """What a channel-balancing policy's channel step decided over its epochs (empty for
    other policies): why its channels moved or stayed."""
    if not c:
        return ""
    decisions = [f"{count(c[k])} {label}" for k, label in (("changed", "changed"), ("kept", "kept"),
                 ("held", "held (hold_epochs)"), ("low_traffic", "below the traffic floor"),
                 ("unmeasured", "not yet measured")) if c.get(k)]
    uf = ("" if not any(c.get(k) for k in ("changed", "kept", "held", "low_traffic"))
          else ", UF read unbounded (a channel idle)" if c.get("uf_max") is None
          else f", UF read at most {c['uf_max']:.2f}")
    return f"; channels {', '.join(decisions) or 'never decided'}{uf} (threshold {c['uf_threshold']:g})"


def dynamic_line(stats: dict[str, Any]) -> str:
    """What a dynamic policy (os.dynamic) and swapping (os.overflow = "swap") did in a run
    (empty without either)."""
    parts = []
    d = stats.get("dynamic")
    if d:
        def n(value: Any, noun: str) -> str:  # "1 epoch", "4 epochs"
            return f"{count(value)} {noun}{'' if value == 1 else 's'}"

        parts.append(f"{d['policy']}: {n(d['epochs'], 'epoch')}, {n(d['repartitions'], 'repartition')} "
                     f"({n(d['colours_lent'], 'colour')} lent, {n(d['sets_shared'], 'set')} shared), "
                     f"{n(d['pages_recoloured'], 'page')} re-coloured"
                     + (f", {count(d['recolour_pending'])} waiting to be copied" if d.get("recolour_pending") else "")
                     + channel_balance_text(d.get("channel_balance")))
    s = stats.get("swap")
    if s:
        parts.append(f"swap: {count(s['swap_outs'])} pages out, {count(s['swap_ins'])} major faults, "
                     f"{count(s['swapped'])} in swap at the end")
    return " · ".join(parts) + "\n" if parts else ""


def open_mix_line(stats: dict[str, Any]) -> str:
    """An open mix's timing (processes arriving later): makespan and each process's turnaround
    (empty when every process starts at 0)."""
    procs = stats.get("processes") or []
    if not any((p.get("arrive_ns") or 0) > 0 for p in procs):
        return ""
    parts = [f"{os.path.basename(str(p.get('name') or p['process']))} {p['arrive_ns'] / 1e6:.2f}+{p['turnaround_ns'] / 1e6:.2f}"
             for p in procs]
    return (f"open mix: makespan {stats['makespan_ns'] / 1e6:.2f} ms; arrival+turnaround, ms: " + ", ".join(parts) + "\n")


def hvr_class_line(stats: dict[str, Any]) -> str:
    """Each process's HVR class ([os.hot_pages] enabled; empty otherwise)."""
    procs = [p for p in stats.get("processes") or [] if p.get("hot_pages") is not None]
    if not procs:
        return ""
    parts = [f"{os.path.basename(str(p.get('name') or p['process']))} "
             f"{((p['hot_pages'] or {}).get('hvr') or {}).get('class', 'unclassified')}" for p in procs]
    return "HVR classes (accessed-bit sampling): " + ", ".join(parts) + "\n"


def resctrl_line(stats: dict[str, Any]) -> str:
    """The hardware partitioning of a run (os.resctrl): CAT's ways and MBA's caps, with what
    they did (empty without)."""
    r = stats.get("resctrl") or {}
    schemes = r.get("schemes") or []
    if not schemes:
        return ""
    params = ((stats.get("config") or {}).get("params") or {}).get("os") or {}
    parts = []
    if "cat" in schemes:
        cat = params.get("cat") or {}
        ways = r.get("ucp_ways") or cat.get("ways") or "even split"
        ucp = f", UCP, {count(r.get('ucp_repartitions'))} repartitions" if cat.get("allocation") == "ucp" else ""
        parts.append(f"CAT ways {ways}{ucp}")
    if "mba" in schemes:
        held = sum(c.get("throttled_requests", 0) for c in stats["cores"])
        parts.append(f"MBA {(params.get('mba') or {}).get('percent')} % of peak, {count(held)} requests held")
    return "resctrl: " + " · ".join(parts) + "\n"


def time_line(cores: list[dict[str, Any]]) -> str:
    """The threads' cycles together as user, idle on memory and system time (docs/stats.md)."""
    parts = [c["time_breakdown"] for c in cores if c.get("time_breakdown")]
    total = sum(t["user_cycles"] + t["memory_cycles"] + t["system_cycles"] for t in parts)
    if not total:
        return ""
    share = {k: 100 * sum(t[f"{k}_cycles"] for t in parts) / total for k in ("user", "memory", "system")}
    return (f"time: user {share['user']:.0f} % · idle on memory {share['memory']:.0f} % · "
            f"system {share['system']:.1f} %\n")


def migration_line(m: dict[str, Any]) -> str:
    """One line on a run's page migration: pages moved per direction, by whom, and its faults."""
    moves = m.get("moves") or []
    flows = ", ".join(f"{a}→{b} {count(n)}" for a, row in enumerate(moves) for b, n in enumerate(row) if n)
    daemon = f", {count(m['daemon_moves'])} by the daemon" if m.get("daemon_moves") else ""
    return (f"migration {m['policy']}: {count(m['pages_moved'])} pages moved ({flows or 'none'}{daemon}) · "
            f"{count(m['hint_faults'])} hinting faults · {number(m['copy_bytes'] / 2**20, 1)} MiB copied")


def trace_stats_tables(results: list[dict[str, Any]]) -> list[Table]:
    """`memtint trace-stats`: what each trace is, then how it behaves alone and its labels."""
    from memtint.trace_analysis import MIN_LABEL_INSTRUCTIONS

    traces = _Table(title="CPU traces", box=box.SIMPLE, pad_edge=False, collapse_padding=True)
    for name in ("trace", "instr", "RPKI", "WPKI", "footprint", "reuse p50", "p90", "LRU@LLC"):
        traces.add_column(name, justify="left" if name == "trace" else "right", no_wrap=name != "trace")
    alone = next((r["alone"] for r in results if r.get("alone")), None)
    # Without --machine no alone run is made: the labels come from the trace's own statistics.
    title = (f"Alone on {alone['machine']} ({alone['policy']}), and labels" if alone
             else "Labels (from the traces' statistics; --machine adds an alone run)")
    labels = _Table(title=title, box=box.SIMPLE, pad_edge=False, collapse_padding=True)
    for name in ["trace"] + (["IPC", "MPKI", "RB hit", "BLP"] if alone else []) + ["class"]:
        labels.add_column(name, justify="left" if name in ("trace", "class") else "right", no_wrap=name != "trace")
    for r in results:
        name = os.path.basename(r["workload"]) or r["workload"]
        reuse = r.get("reuse") or {}
        classes = r["classes"]
        at_llc = (classes.get("lru_hit_fraction_at_llc") or {}).get("full")
        traces.add_row(
            name, compact(r["instructions"]), number(r["reads_pki"], 2), number(r["writebacks_pki"], 2),
            size(r["footprint_bytes"]), _lines(reuse.get("median_lines")), _lines(reuse.get("p90_lines")),
            f"{100 * at_llc:.1f} %" if at_llc is not None else MISSING,
        )
        row = [name]
        a = r.get("alone")
        if alone:
            # A run shorter than labels need counts the misses of loads fetched past its end (the
            # core's window): its figures are not the program's, so they are not shown.
            shown = a and a.get("instructions", 0) >= MIN_LABEL_INSTRUCTIONS
            row += [
                number(a["ipc"], 3), number(a["llc_mpki"], 2),
                f"{100 * a['row_hit_rate']:.1f} %" if a["row_hit_rate"] is not None else MISSING,
                number(a["bank_level_parallelism"], 2),
            ] if shown else [MISSING] * 4
        label = [classes["intensity"] or f"unlabelled: {classes.get('unlabelled')}"]
        if classes.get("row_locality"):
            label.append(f"{classes['row_locality']} RBL")
        if classes.get("llc_sensitivity_estimate"):
            label.append(f"LLC {classes['llc_sensitivity_estimate']}")
        row.append(", ".join(label))
        labels.add_row(*row)
    traces.caption = "reuse: LRU stack distance of reads · LRU@LLC: hits in a fully associative LRU of the LLC's size"
    labels.caption = "intensive: LLC MPKI > 1 (BPM) · high RBL: row hits >= 50 % · LLC class estimated from reuse"
    return [traces, labels]


def _lines(value: Any) -> str:
    return size(value * 64) if isinstance(value, (int, float)) else MISSING


def compare_tables(result: dict[str, Any]) -> list[Table]:
    """The policy summary and the per-program slowdowns of a comparison."""
    summary = _Table(
        title=f"{result['machine']} · mix {', '.join(map(_program_name, result['mix']))} · "
              f"{count(result['instructions'])} instructions per core",
        box=box.SIMPLE_HEAVY,
    )
    energy = all(p.get("dram_energy_nj") is not None for p in result["policies"])
    # Matched units: each policy's WS change against the policy whose schedule it replayed.
    source = next((p["matched_to"] for p in result["policies"] if p.get("matched_to")), None)
    names = ["policy", "weighted speedup"] + ([f"WS vs {source}"] if source else []) + [
        "harmonic speedup", "max slowdown", "RB miss rate"]
    for name in names + (["DRAM µJ", "nJ/access"] if energy else []):
        summary.add_column(name, justify="left" if name == "policy" else "right", no_wrap=True)
    best = max(p["weighted_speedup"] for p in result["policies"])
    for p in result["policies"]:
        ws = with_interval(p["weighted_speedup"], p.get("weighted_speedup_ci95"), 3)
        cells = [p.get("label") or p["policy"], Text(ws, style="bold") if p["weighted_speedup"] == best else ws]
        if source:
            base = next(q["weighted_speedup"] for q in result["policies"] if q["policy"] == source)
            cells.append("-" if p["policy"] == source else change_cell(
                p["weighted_speedup"] / base - 1, sampling.half_width(p.get("weighted_speedup_change_ci95"))))
        cells += [
            with_interval(p["harmonic_speedup"], p.get("harmonic_speedup_ci95"), 3),
            with_interval(p["maximum_slowdown"], p.get("maximum_slowdown_ci95"), 3),
            with_interval(100 * p["row_buffer_miss_rate"], _scaled(p.get("row_buffer_miss_rate_ci95"), 100), 1) + " %",
        ]
        if energy:
            cells += [with_interval(p["dram_energy_nj"] / 1000.0, _scaled(p.get("dram_energy_nj_ci95"), 1e-3), 1),
                      number(p["dram_energy_per_access_nj"], 2)]
        summary.add_row(*cells)
    own = any("+" in str(r.get("policy")) for r in result.get("policies", []))
    scheduler = result.get("alone_scheduler") or "the machine's scheduler"
    summary.caption = (f"alone runs under {result['baseline']}"
                       + (f" and {scheduler}, whichever scheduler a policy+scheduler's shared run used" if own else "")
                       + "; WS = Σ IPC_shared / IPC_alone")
    if (line := sampled_line(result)):
        summary.caption += "\n" + line
        if (resolved := resolved_line(result["policies"], result.get("differences"))):
            summary.caption += "\n" + resolved
    detail = _Table(title="slowdown per program (IPC_alone / IPC_shared) and its row-buffer miss rate", box=box.SIMPLE)
    detail.add_column("program", no_wrap=True)
    detail.add_column("IPC alone", justify="right", no_wrap=True)
    for p in result["policies"]:
        detail.add_column(p.get("label") or p["policy"], justify="right", no_wrap=True)
    for i, program in enumerate(result["mix"]):
        alone = result["policies"][0]["cores"][i]
        cells = [f"{i}: {_program_name(program)}", with_interval(alone["ipc_alone"], alone.get("ipc_alone_ci95"), 3)]
        for p in result["policies"]:
            c = p["cores"][i]
            cells.append(f"{with_interval(c['slowdown'], c.get('slowdown_ci95'))} "
                         f"({100 * c['row_buffer_miss_rate']:.0f}%)")
        detail.add_row(*cells)
    return [summary, detail]


def _program_name(program: str) -> str:
    """A mix member for display: a profile as given, a trace file by its name (the JSON keeps the path)."""
    return os.path.basename(program) if os.sep in program else program


def sweep_table(rows: list[dict[str, Any]], title: str) -> Table:
    """Per-policy summary of a sweep (rows of :func:`memtint.sweep.policy_summary`)."""
    table = _Table(title=title, box=box.SIMPLE_HEAVY)
    # Matched units: the mean WS change against the policy whose schedules the others replayed.
    source = next((r["matched_to"] for r in rows if r.get("matched_to")), None)
    for name in ("policy", "runs", "WS mean") + ((f"WS vs {source}",) if source else ()) + (
            "WS max", "max slowdown mean", "RB miss", "failed"):
        table.add_column(name, justify="left" if name == "policy" else "right", no_wrap=True)
    for r in rows:
        rb = r["row_buffer_miss_rate_mean"]
        ws_mean = number(r["weighted_speedup_mean"], 3) + plus_minus(r.get("weighted_speedup_ci95_halfwidth_mean"))
        vs = change_cell(r.get("weighted_speedup_change_mean"), r.get("weighted_speedup_change_ci95_halfwidth"))
        table.add_row(
            r["policy"], count(r["runs"]), ws_mean, *((vs,) if source else ()), number(r["weighted_speedup_max"], 3),
            number(r["maximum_slowdown_mean"], 3), MISSING if rb is None else number(100 * rb, 1) + " %",
            Text(str(r["failed"]), style="red") if r["failed"] else "0",
        )
    table.caption = "WS = weighted speedup (Σ IPC_shared / IPC_alone), over the successful runs"
    if source:
        table.caption += f"\nWS vs {source}: " + matched_change_text(source)
    from memtint.sweep.summary import sampled_note

    if (note := sampled_note(rows)):
        table.caption += "\n" + note
    return table


def normalised_table(rows: list[dict[str, Any]], title: str) -> Table:
    """The per-policy summary of `memtint report` (rows of :func:`memtint.reports.summary_rows`):
    weighted speedup and maximum slowdown divided by the baseline's on the same mix; when runs
    are sampled, also the mean weighted speedup with ± the mean half-width of their intervals."""
    table = _Table(title=title, box=box.SIMPLE_HEAVY)
    failures = any(r["failed"] for r in rows)
    sampled = any(r.get("sampled_runs") for r in rows)
    # Matched units paced by a policy other than the report's baseline (or one the store lacks).
    pacer = report_pacer(rows)
    table.add_column("policy", overflow="fold", min_width=10)
    for name in ("WS/base\nmean", "WS/base\nmax", "MS/base\nmean", "MS/base\nmax", "MS\nmax",
                 "RB miss\nmean") + (("WS mean\n± 95 %",) if sampled else ()) + (
                 (f"WS vs\n{pacer}",) if pacer else ()) + (("failed",) if failures else ()):
        table.add_column(name, justify="right", no_wrap=True)
    for r in rows:
        rb = r["rb_miss_mean"]
        ws_mean, ws_norm = (number(r[key], 3) + ("" if r[key] is None else plus_minus(r.get(half)))
                            for key, half in (("weighted_speedup_mean", "weighted_speedup_ci95_halfwidth_mean"),
                                              ("ws_norm_mean", "ws_norm_ci95_halfwidth")))
        table.add_row(
            r["policy"], ws_norm, number(r["ws_norm_max"], 3),
            number(r["ms_norm_mean"], 3), number(r["ms_norm_max"], 3), number(r["maximum_slowdown_max"], 3),
            MISSING if rb is None else number(100 * rb, 1) + " %",
            *((ws_mean,) if sampled else ()),
            *((change_cell(r.get("ws_change_mean"), r.get("ws_change_ci95_halfwidth")),) if pacer else ()),
            *((Text(str(r["failed"]), style="red") if r["failed"] else "0",) if failures else ()),
        )
    table.caption = ("WS = weighted speedup, MS = maximum slowdown; /base = divided by the baseline policy's "
                     "value on the same mix (WS/base > 1 and MS/base < 1 are better)")
    if pacer:
        table.caption += f"\nWS vs {pacer}: " + matched_change_text(pacer)
    if any(r.get("ws_norm_ci95_halfwidth") is not None for r in rows):
        table.caption += ("\nWS/base mean ± h: runs that replayed the baseline's units of their mix (matched units); "
                          "h is the 95 % sampling interval of the mean")
    from memtint.sweep.summary import sampled_note

    if (note := sampled_note(rows)):
        table.caption += "\n" + note
    return table
