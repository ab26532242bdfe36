"""The tiering demo (`memtint demo --tiering`, `make demo-tiering`): one bandwidth-bound job of 8
streams on two memory nodes whose second is 1/2, 1/5 and 1/10 as fast (the tiering presets,
docs/numa.md), under every node placement policy: Linux's local, interleave and weighted
interleave, DRAM-only, and the thesis's BW-INTERLEAVE, BW-RANDOM and BW-LOCAL. It prints the run
time per policy and ratio against Local, a sentence per policy saying what it means (computed
from the numbers, against the ideal bandwidth model), and writes a plot and a Markdown summary.

A second table runs the migration baselines a user would pick today (Linux's tiering mode, DAMON,
Colloid; docs/numa.md, Migration) beside Local and BW-LOCAL on a job whose hot set does not fit
the fast tier, at 2:1, and says which moved the hot set and what the moves cost.
"""

from __future__ import annotations

import os
import statistics
import time
from typing import Any

from memtint.api import MemtintError
from memtint.outputs import save_figure, write_text

RATIOS = (2, 5, 10)
POLICIES = ("local", "interleave", "weighted-interleave", "dram-only", "bw-interleave", "bw-random", "bw-local")
#: Eight streams (4 per node), each over its own 32 MB at 300 reads per kilo-instruction: demand
#: far above the slow node's bandwidth, so where the pages lie decides the run time.
STREAM = "stream:reads_pki=300,writes_pki=0,footprint_bytes=33554432"
THREADS = 8
INSTRUCTIONS = 100_000

#: The migration baselines' job (the tiering report's "Today's baselines"): 4 threads whose 16 MiB
#: hot sets, in 64 MiB, exceed the 24 MiB the OS may use of the fast node, so first touch leaves
#: most of the hot data on the slow node.
HOT = "hotset:hot_bytes=16777216"
FAST_TIER_MB = 24
#: The report's files in --out: its Markdown and its plot.
REPORT_MD, REPORT_PNG = "tiering.md", "tiering.png"
MIGRATION_THREADS = 4
#: Names from memtint.reproduce.tiering.MODERN_SETUPS (placement + migration).
MIGRATION_SETUPS = ("Local", "BW-L", "Tiering mode (TPP)", "DAMON", "Colloid")
#: Migration acts per millisecond of simulated time: these runs are this many times as long as
#: the streams' (2,000,000 instructions per thread by default).
MIGRATION_SCALE = 20
#: Simulated time of the migration runs at the default length, in which every baseline moves
#: pages: the NUMA-balancing scan behind tiering mode comes each 1 ms (os.numa_scan.period_ns),
#: and DAMON's and Colloid's first moves on this job came within 1.5 ms.
MIGRATION_NEEDS_MS = 2.0


def ideal(policy: str, r: int) -> float:
    """Speedup over Local of a purely bandwidth-bound job under the bandwidth model (thesis §2.2):
    time is max_i(bytes_i / B_i); Local and interleave put half the pages on each node."""
    half = max(0.5 / 1.0, 0.5 / (1.0 / r))  # Local: each node half the bytes
    share = {"local": 0.5, "interleave": 0.5, "dram-only": 1.0}.get(policy, r / (r + 1))
    return half / max(share / 1.0, (1 - share) / (1.0 / r))


def jobs(instructions: int, seeds: list[int]) -> list[dict[str, Any]]:
    from memtint.reproduce.runner import spec_key
    from memtint.reproduce.tiering import MODERN_SETUPS

    out = []
    for r in RATIOS:
        for p in POLICIES:
            for s in seeds:
                spec = {"machine": f"tiering-{r}to1", "programs": [STREAM] * THREADS, "instructions": instructions,
                        "os": {"policy": p}, "at_end": "wait", "seed": s}
                out.append({"key": spec_key(spec), "phase": "shared", "spec": spec, "point": (r, p, s)})
    for label in MIGRATION_SETUPS:
        placement, migration = MODERN_SETUPS[label]
        for s in seeds:
            threads = [{"program": f"{HOT},seed={s * 10 + t}", "affinity": [t]} for t in range(MIGRATION_THREADS)]
            spec = {"machine": "tiering-2to1", "programs": [], "processes": [{"threads": threads}],
                    "instructions": instructions * MIGRATION_SCALE, "at_end": "wait", "seed": s,
                    "os": {"policy": placement, "migration": migration, "node_memory_mb": [FAST_TIER_MB, 0]}}
            out.append({"key": spec_key(spec), "phase": "shared", "spec": spec, "point": ("migration", label, s)})
    return out


def measure_migration(results: dict[str, Any], planned: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per migration setup: speedup over Local (makespan), DRAM's share of reads, pages moved and
    the system time the moves cost (share of the threads' cycles), mean over seeds."""
    def makespan(run: dict[str, Any]) -> float:
        return float(max(c["finished_at"] for c in run["cores"]))

    keys = {j["point"]: j["key"] for j in planned if j["point"][0] == "migration"}
    seeds = sorted({s for (_, _, s) in keys})
    out = {}
    for label in MIGRATION_SETUPS:
        runs = [results[keys[("migration", label, s)]] for s in seeds]
        base = [makespan(results[keys[("migration", "Local", s)]]) for s in seeds]
        pm = [r.get("page_migration") or {} for r in runs]
        out[label] = {
            "simulated_ms": statistics.fmean(r["simulated_ns"] / 1e6 for r in runs),
            "speedup": statistics.fmean(b / makespan(r) for b, r in zip(base, runs)),
            "dram_reads": statistics.fmean(r["nodes"][0]["reads"] / max(1, r["nodes"][0]["reads"] + r["nodes"][1]["reads"])
                                           for r in runs),
            "moved": statistics.fmean(x.get("pages_moved", 0) for x in pm),
            # The engine's cause when nothing moved (too short, a gate, full nodes, no move chosen).
            "why_none": next((w.split("): ", 1)[-1] for r in runs for w in r.get("warnings") or []
                              if "moved no page in this run" in w), None),
            "system": statistics.fmean(sum((c.get("page_migration") or {}).get("system_cycles", 0) for c in r["cores"])
                                       / max(1, sum(c["cycles"] for c in r["cores"])) for r in runs),
        }
    return out


def migration_sentences(m: dict[str, dict[str, float]], instructions: int | None = None) -> list[str]:
    """What the migration baselines' numbers mean (``instructions``: the streams' per thread,
    from which the migration runs' length follows)."""
    from memtint.reproduce.tiering import SIZES

    local = m["Local"]
    movers = [k for k in MIGRATION_SETUPS if k not in ("Local", "BW-L")]
    acted = [k for k in movers if m[k]["moved"] > 0]
    out = [f"With {FAST_TIER_MB} MiB of the fast node for {MIGRATION_THREADS} threads' 64 MiB, first touch leaves the "
           f"hot sets mostly on the slow node: DRAM serves {local['dram_reads']:.0%} of reads under Local, and BW-LOCAL, "
           f"a placement, cannot do better once the fast tier is full ({m['BW-L']['speedup'] - 1:+.1%})."]
    if not acted:
        ms = statistics.fmean(m[k]["simulated_ms"] for k in movers)
        out.append(f"No migration policy moved a page, so these rows are first-touch placement alone: each run lasted "
                   f"{ms:.2f} ms of simulated time, and the first moves come after about 1 ms (tiering mode's scan "
                   "period, os.numa_scan.period_ns) to 1.5 ms (DAMON's).")
        if instructions is not None and instructions < INSTRUCTIONS:
            out[-1] += (f" The default --instructions, {INSTRUCTIONS:,} ({INSTRUCTIONS * MIGRATION_SCALE:,} per "
                        f"migration thread, about {MIGRATION_NEEDS_MS:.0f} ms), gives every one of them time to act.")
        return out
    for k in movers:
        x = m[k]
        if x["moved"] == 0:
            why = x.get("why_none") or "its scan or sampling did not act"
            out.append(f"{k} moved no page in {x['simulated_ms']:.2f} ms of simulated time: {why}.")
            continue
        verb = "gains" if x["speedup"] > 1.005 else ("loses" if x["speedup"] < 0.995 else "changes nothing,")
        out.append(f"{k} {verb} {abs(x['speedup'] - 1):.1%} against Local: it moved {x['moved']:,.0f} pages, DRAM "
                   f"now serves {x['dram_reads']:.0%} of reads, and the moves cost {x['system']:.1%} of the threads' "
                   "time in copies, faults and shootdowns.")
    best = max(acted, key=lambda k: m[k]["speedup"])
    if m[best]["speedup"] > 1.005:
        out.append(f"Most useful here: {best}. A short run counts the moves' cost before they pay back in full; "
                   f"docs/reproductions/tiering.md runs the same job at {SIZES['full']['modern']:,} instructions per thread.")
    else:
        out.append(f"None pays back within this run (the least costly: {best}): each move's copy traffic lands on the "
                   "busy slow node before its page serves a read from DRAM; docs/reproductions/tiering.md runs the same "
                   f"job at {SIZES['full']['modern']:,} instructions per thread.")
    return out


def measure(results: dict[str, Any], planned: list[dict[str, Any]]) -> dict[tuple[int, str], dict[str, float]]:
    """Per (ratio, policy): run time (core cycles), speedup over Local and node bandwidths, mean over seeds."""
    def run_time(k: str) -> float:
        return float(max(c["finished_at"] for c in results[k]["cores"]))

    keys = {j["point"]: j["key"] for j in planned}
    seeds = sorted({s for (_, _, s) in keys})
    out = {}
    for r in RATIOS:
        for p in POLICIES:
            t = [run_time(keys[(r, p, s)]) for s in seeds]
            base = [run_time(keys[(r, "local", s)]) for s in seeds]
            nodes = [results[keys[(r, p, s)]]["nodes"] for s in seeds]
            out[(r, p)] = {"time": statistics.fmean(t), "speedup": statistics.fmean(b / x for b, x in zip(base, t)),
                           "fast_gbps": statistics.fmean(n[0]["bandwidth_gbps"] for n in nodes),
                           "slow_gbps": statistics.fmean(n[1]["bandwidth_gbps"] for n in nodes),
                           "dram_share": statistics.fmean(n[0]["pages"] / max(1, n[0]["pages"] + n[1]["pages"])
                                                          for n in nodes)}
    return out


def sentences(m: dict[tuple[int, str], dict[str, float]]) -> list[str]:
    """What each policy's numbers mean, against the ideal bandwidth model."""
    out = []
    best = {r: max(POLICIES, key=lambda p: m[(r, p)]["speedup"]) for r in RATIOS}
    out.append("Fastest per ratio: " + "; ".join(f"{r}:1 {best[r]} ({m[(r, best[r])]['speedup']:.2f}x Local, ideal "
                                                  f"{ideal(best[r], r):.2f}x)" for r in RATIOS) + ".")
    bw = [m[(r, "bw-interleave")]["speedup"] for r in RATIOS]
    out.append(f"BW-INTERLEAVE puts {m[(2, 'bw-interleave')]['dram_share']:.0%} / "
               f"{m[(5, 'bw-interleave')]['dram_share']:.0%} / {m[(10, 'bw-interleave')]['dram_share']:.0%} of the "
               f"pages on DRAM and runs {bw[0]:.2f}x / {bw[1]:.2f}x / {bw[2]:.2f}x faster than Local (ideal "
               + " / ".join(f"{ideal('bw-interleave', r):.2f}x" for r in RATIOS)
               + "): the gain grows with the ratio, as the slow node holds Local's half of the pages ever longer.")
    d = [m[(r, "bw-interleave")]["time"] / m[(r, "dram-only")]["time"] for r in RATIOS]
    out.append("Over DRAM-only it gains " + " / ".join(f"{1 / x:.2f}x" for x in d) + " (ideal "
               + " / ".join(f"{ideal('bw-interleave', r) / ideal('dram-only', r):.2f}x" for r in RATIOS)
               + "): the slow node adds less bandwidth as it gets slower, so using it matters less.")
    w = [m[(r, "weighted-interleave")]["speedup"] / m[(r, "bw-interleave")]["speedup"] for r in RATIOS]
    out.append("Linux's weighted interleave (weights from the nodes' bandwidths, as its auto mode derives them) "
               "comes within " + " / ".join(f"{abs(1 - x):.0%}" for x in w) + " of BW-INTERLEAVE: both split the "
               "pages by bandwidth; the thesis's policies differ in which node a thread's pages start on.")
    short = [m[(r, "bw-interleave")]["speedup"] / ideal("bw-interleave", r) for r in RATIOS]
    out.append("Every BW-aware gain stays " + " / ".join(f"{1 - x:.0%}" for x in short) + " short of the ideal: "
               f"the fast node runs at {m[(10, 'bw-interleave')]['fast_gbps']:.1f} GB/s and the slow one at "
               f"{m[(10, 'bw-interleave')]['slow_gbps']:.2f} GB/s at 10:1, below their peaks, because each thread's "
               "misses wait behind its slow-node reads (docs/numa.md, Bandwidth binds).")
    return out


def table_caption(instructions: int, seeds: int) -> str:
    """What the Markdown table's cells are (the terminal table has it as its title)."""
    return (f"Speedup of the job's run time over Local ({THREADS} streams, {instructions:,} instructions each"
            + (f"; mean over {seeds} seeds" if seeds > 1 else "")
            + "), and in brackets the ideal bandwidth model's, per DRAM : slow-node bandwidth ratio.")


def plot(path: str, m: dict[tuple[int, str], dict[str, float]]) -> None:
    """The speedups over Local per ratio, drawn as the reproduction's tiering figure is (policies
    that coincide, such as Interleave on Local's line, as one line naming both)."""
    import matplotlib.pyplot as plt

    from memtint.reproduce.report import lines_figure

    series = {p: [m[(r, p)]["speedup"] for r in RATIOS] for p in POLICIES}
    reference = {"ideal BW-aware (r+1)/2": [ideal("bw-interleave", r) for r in RATIOS]}
    fig = lines_figure({"x": list(RATIOS), "series": series, "reference": reference, "xscale": "linear",
                        "xlabel": "DRAM : slow-node bandwidth ratio r", "ylabel": "speedup over local (run time)",
                        "title": f"One bandwidth-bound job of {THREADS} streams on two memory nodes"})
    save_figure(fig, path, dpi=80)
    plt.close(fig)


def run(out: str, *, instructions: int | None = None, jobs_count: int | None = None, seeds: int = 1) -> int:
    from memtint.tables import _Table as Table

    from memtint.outputs import check_output_dir
    from memtint.reproduce import runner

    instructions = INSTRUCTIONS if instructions is None else instructions
    if instructions < 1:
        raise MemtintError(f"--instructions must be at least 1, got {instructions}")
    check_output_dir("--out", out, files=[REPORT_MD, REPORT_PNG])  # before the runs, not after them
    from memtint.tables import output_console
    console = output_console()
    start = time.perf_counter()
    planned = jobs(instructions, list(range(1, seeds + 1)))
    console.print(f"Running the tiering demo: {len(planned)} runs (3 bandwidth ratios x {len(POLICIES)} placement "
                  f"policies; {THREADS} streams, {instructions:,} instructions each, on tiering-2to1/5to1/10to1; and "
                  f"{len(MIGRATION_SETUPS)} migration baselines on a {MIGRATION_THREADS}-thread hot-set job)")
    results = runner.run_jobs(planned, jobs_count=jobs_count, label="tiering demo")
    m = measure(results, planned)
    mig = measure_migration(results, planned)
    table = Table(title="Run time of one bandwidth-bound job: speedup over local (ideal in brackets)")
    table.add_column("policy")
    for r in RATIOS:
        table.add_column(f"{r}:1", justify="right")
    rows = []
    for p in POLICIES:
        cells = [f"{m[(r, p)]['speedup']:.2f}x ({ideal(p, r):.2f})" for r in RATIOS]
        table.add_row(p, *cells)
        rows.append([p, *cells])
    console.print(table)
    said = sentences(m)
    for s in said:
        console.print(s, soft_wrap=True)
    from memtint.reproduce.tiering import MODERN_SETUPS

    mig_table = Table(title=f"Migration baselines at 2:1: a hot set beyond a {FAST_TIER_MB} MiB fast tier "
                            f"({MIGRATION_THREADS} threads, {instructions * MIGRATION_SCALE:,} instructions each)")
    mig_rows = []
    for col in ("policy", "placement + migration", "speedup over local", "reads served by DRAM", "pages moved",
                "system time"):
        mig_table.add_column(col, justify="left" if col in ("policy", "placement + migration") else "right")
    for label in MIGRATION_SETUPS:
        x = mig[label]
        cells = [label, " + ".join(MODERN_SETUPS[label]), f"{x['speedup']:.3f}x", f"{x['dram_reads']:.0%}",
                 f"{x['moved']:,.0f}", f"{x['system']:.1%}"]
        mig_table.add_row(*cells)
        mig_rows.append(cells)
    console.print(mig_table)
    mig_said = migration_sentences(mig, instructions)
    for s in mig_said:
        console.print(s, soft_wrap=True)
    os.makedirs(out, exist_ok=True)
    png = os.path.join(out, REPORT_PNG)
    plot(png, m)
    md = os.path.join(out, REPORT_MD)
    write_text("--out", md, "# Tiering demo: one bandwidth-bound job on two memory nodes\n\n"
                + table_caption(instructions, seeds) + "\n\n"
                "| policy | " + " | ".join(f"{r}:1" for r in RATIOS) + " |\n| --- |" + " --- |" * len(RATIOS) + "\n"
                + "".join("| " + " | ".join(row) + " |\n" for row in rows) + "\n"
                + "\n".join(f"- {s}" for s in said) + f"\n\n![speedup over local per ratio]({REPORT_PNG})\n\n"
                + f"## Migration baselines: a hot set beyond a {FAST_TIER_MB} MiB fast tier (2:1)\n\n"
                + "| policy | placement + migration | speedup over local | reads served by DRAM | pages moved | system time |\n"
                + "| --- | --- | --- | --- | --- | --- |\n"
                + "".join("| " + " | ".join(row) + " |\n" for row in mig_rows) + "\n"
                + "\n".join(f"- {s}" for s in mig_said) + "\n")
    console.print(f"Report: {os.path.abspath(md)} and {os.path.abspath(png)} ({time.perf_counter() - start:.0f} s)",
                  soft_wrap=True)
    return 0
