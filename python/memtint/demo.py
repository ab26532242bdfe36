"""The memtint demo: the default page-colouring experiment on the workload suite.

Six 4-program mixes drawn by measured class from the workload suite's captured programs and the
built-in profiles (four of four memory-intensive programs, two of two intensive and two light;
configs/sweeps/demo.toml) on the i7-860 under
``buddy`` (the Linux-like baseline), ``bpm``, ``bpm-plus`` and ``bpm-plus-balanced`` (on the
BPM+ BIOS setting, i7-860-bpm-plus; channels split by process order, or balanced by the programs'
alone DRAM traffic), ``cache-only`` and ``a-vp``: a sweep (configs/sweeps/demo.toml) on the process
pool, its summary table, one sentence per policy saying what its result means (computed from the
numbers), a sentence saying which interference dominates under the baseline (LLC pollution,
bank interference or bandwidth, from the programs' statistics shared against alone), and a
report with plots under ``out/demo/``. Run it with
``memtint demo``, ``make demo`` or ``python -m memtint.demo``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from memtint import api

#: The demo's sweep specification, in the source tree (configs/sweeps/demo.toml).
SPEC_PATH = Path(__file__).resolve().parents[2] / "configs" / "sweeps" / "demo.toml"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", default=None, metavar="DIR",
                        help="where the results (DIR/results) and the report (DIR/report) go (default out/demo); "
                        "with --tiering, the report DIR/tiering.md and its plot DIR/tiering.png, nothing else "
                        "(default out/demo-tiering)")
    parser.add_argument("--tiering", action="store_true",
                        help="the tiering demo instead: one bandwidth-bound job on two memory nodes at 2:1, 5:1 and "
                        "10:1 under every node placement policy (docs/numa.md)")
    from memtint import tiering_demo
    from memtint.cli import _at_least, _count_at_least  # one rule for counts everywhere (10M, bounds)

    parser.add_argument("--jobs", type=_at_least(1), metavar="N", help="worker processes (default: the CPU count)")
    parser.add_argument("--instructions", type=_count_at_least(1), metavar="N",
                        help="instructions per core (default: the specification's, 10M); with --tiering, per stream "
                        f"thread (default {tiering_demo.INSTRUCTIONS:,}), and the migration runs take "
                        f"{tiering_demo.MIGRATION_SCALE} times as many (migration acts per millisecond of simulated time)")


def load_demo_spec(instructions: int | None = None) -> dict[str, Any]:
    """The demo's specification as a TOML table (``instructions`` overrides its target)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    if not SPEC_PATH.exists():
        raise api.MemtintError(f"{SPEC_PATH}: the demo specification is missing (the demo runs from a "
                               "source checkout of memtint)")
    table = tomllib.loads(SPEC_PATH.read_text())
    if instructions is not None:
        table["instructions"] = instructions
    return table


def run(args: argparse.Namespace) -> int:
    """The `memtint demo` command; returns the exit status."""

    from memtint.tables import normalised_table, sweep_table
    from memtint.reports import run_table, write_report
    from memtint.sweep import load_results, parse_spec, policy_summary, run_sweep

    if args.instructions is not None and args.instructions < 1:
        raise api.MemtintError(f"--instructions must be at least 1, got {args.instructions}")
    if args.jobs is not None and args.jobs < 1:
        raise api.MemtintError(f"--jobs must be at least 1, got {args.jobs}")
    if args.instructions is not None:
        from memtint.limits import check_instructions

        check_instructions("--instructions", args.instructions)
    if args.tiering:
        from memtint import tiering_demo

        return tiering_demo.run(args.out or os.path.join("out", "demo-tiering"), instructions=args.instructions,
                                jobs_count=args.jobs)
    args.out = args.out or os.path.join("out", "demo")
    from memtint.outputs import check_output_dir

    check_output_dir("--out", args.out)
    start = time.perf_counter()
    spec = parse_spec(load_demo_spec(args.instructions), base=SPEC_PATH.parent, source=str(SPEC_PATH))
    results = os.path.join(args.out, "results")
    from memtint.tables import output_console
    console = output_console()
    n = len(spec)
    console.print(f"Running the demo sweep: {n} runs ({len({e.mix for e in spec.entries})} mixes drawn from the "
                  f"suite by measured class x {len({e.policy for e in spec.entries})} policies) on the process pool, "
                  f"results in {results}")
    summary = run_sweep(spec, results, jobs=args.jobs)
    # This sweep's runs only: the store keeps those of earlier demos too (another engine version
    # or instruction count gives other configuration hashes).
    frame = load_results(results)
    frame = frame[frame["config_hash"].isin(set(summary.config_hashes))]
    console.print(sweep_table(policy_summary(frame),
                              f"demo · {summary.total} runs · {spec.entries[0].instructions:,} instructions per core"))
    runs = run_table(frame)
    runs.attrs["intensive_mixes"] = intensive_mixes(frame)
    # The sentences go into the report too: a reader of the report has not seen the terminal.
    findings = [interference_sentence(frame, runs.attrs["baseline"])] + policy_sentences(runs)
    from rich.text import Text

    report = write_report(results, os.path.join(args.out, "report"), config_hashes=summary.config_hashes,
                          findings=[Text.from_markup(f).plain for f in findings])
    console.print(normalised_table(report["rows"], f"normalised to {report['baseline']} on the same mix"))
    for sentence in findings:
        console.print(sentence, soft_wrap=True)
    console.print(f"{summary.done} run(s) done ({summary.failed} failed), {summary.skipped} already stored, "
                  f"{summary.alone_runs} alone run(s); {time.perf_counter() - start:.1f} s")
    console.print(f"Report: {os.path.abspath(report['index'])} (summary: {os.path.abspath(report['summary'])})",
                  soft_wrap=True)
    return 1 if summary.failed else 0


#: Programs that are memory-intensive (LLC MPKI > 1, bpm.md §4) among the built-in profiles.
INTENSIVE_PROFILES = ("stream", "random", "copy")

#: What each policy partitions: the mechanism a sentence names when the numbers show its effect.
MECHANISM = {
    "bpm": "bank partitioning",
    "bpm-plus": "bank + channel partitioning",
    "bpm-plus-balanced": "bank + channel partitioning",
    "cache-only": "LLC colouring",
    "bank-only": "bank partitioning",
    "a-vp": "LLC + bank colouring",
    "b-vp": "LLC + bank colouring",
    "c-vp": "LLC + bank colouring",
}


def _intensive(mix: str) -> bool:
    """A memory-intensive mix by its programs' names (profiles only): at most one is light."""
    programs = [p.split(":", 1)[0] for p in mix.split("|")]
    return sum(p not in INTENSIVE_PROFILES for p in programs) <= 1


def intensive_mixes(frame: Any) -> set[str]:
    """The mixes (``mix`` labels) of a sweep's per-core rows with at most one light program,
    measured: a program is light when its alone LLC MPKI is at most 1 (bpm.md §4)."""
    from memtint.trace_analysis import INTENSIVE_MPKI

    rows = frame[(frame["status"] == "ok") & frame["llc_mpki_alone"].notna()]
    out = set()
    for mix, group in rows.groupby("mix"):
        per_program = group.drop_duplicates("core")
        if (per_program["llc_mpki_alone"] <= INTENSIVE_MPKI).sum() <= 1:
            out.add(mix)
    return out


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
    dominant = max(effects, key=lambda k: -1 if math.isnan(effects[k][2]) else effects[k][2])
    llc, bank, bw = effects["LLC pollution"], effects["bank interference"], effects["bandwidth"]
    # The engine's row-buffer causes, where the results carry them: how much of the row-buffer
    # traffic another program's rows caused (none alone, by definition).
    by_other = rows["row_interference_rate"].mean() if "row_interference_rate" in rows else math.nan
    caused = ("" if math.isnan(by_other) else
              f"; {100 * by_other:.0f} % of their DRAM requests missed the row buffer because of another "
              "program (its open row or its precharge)")
    return (f"Under {baseline}, sharing the machine raised the programs' LLC misses from {llc[0]:.1f} to {llc[1]:.1f} "
            f"per kilo-instruction ({100 * llc[2]:+.0f} %, LLC pollution), their row-buffer miss rate from "
            f"{100 * bank[0]:.0f} % to {100 * bank[1]:.0f} % ({100 * bank[2]:+.0f} %, bank interference{caused}) and their "
            f"DRAM read latency from {bw[0]:.0f} to {bw[1]:.0f} ns ({100 * bw[2]:+.0f} %, queueing for bandwidth and "
            f"banks): [bold]{dominant}[/bold] dominates on these mixes (means over the {len(rows)} programs that "
            "reach past their caches alone).")


def policy_sentences(runs: Any) -> list[str]:
    """One sentence per non-baseline policy saying what its result means, computed from the runs
    (``memtint.reports.run_table``): mean weighted-speedup and maximum-slowdown change against the
    baseline on the same mix, how many mixes improved, the memory-intensive mixes apart, and the
    row-buffer miss rate that explains it."""
    import math

    base = runs.attrs["baseline"]
    ok = runs[runs["status"] == "ok"]
    base_rb = {r["mix"]: r["mix_row_buffer_miss_rate"] for _, r in ok[ok["policy"] == base].iterrows()}
    sentences = []
    for policy in dict.fromkeys(ok["policy"]):
        if policy == base:
            continue
        rows = ok[(ok["policy"] == policy) & ok["ws_norm"].notna()]
        if rows.empty:
            continue
        ws = 100 * (rows["ws_norm"].mean() - 1)
        ms = 100 * (rows["ms_norm"].mean() - 1)
        better = int((rows["ws_norm"] > 1.0).sum())
        measured = runs.attrs.get("intensive_mixes")
        heavy = rows[rows["mix"].isin(measured)] if measured is not None else rows[rows["mix"].map(_intensive)]
        rb_pairs = [(base_rb[m], r) for m, r in zip(rows["mix"], rows["mix_row_buffer_miss_rate"])
                    if m in base_rb and not math.isnan(r)]
        rb_base = sum(a for a, _ in rb_pairs) / len(rb_pairs) if rb_pairs else math.nan
        rb_pol = sum(b for _, b in rb_pairs) / len(rb_pairs) if rb_pairs else math.nan
        if ws > 0.5 and ms < -0.5:
            meaning = "more throughput and fairer"
        elif ws > 0.5:
            meaning = "more throughput, at a cost in fairness" if ms > 0.5 else "more throughput, fairness unchanged"
        elif ws < -0.5:
            meaning = "fairer but slower" if ms < -0.5 else "a loss on these mixes"
        else:
            meaning = "fairer at the same throughput" if ms < -0.5 else (
                "less fair at the same throughput" if ms > 0.5 else "no measurable effect")
        mech = MECHANISM.get(policy, policy)
        if rb_pol < rb_base * 0.95:
            cause = f"{mech} cut the row-buffer miss rate from {100 * rb_base:.0f} % to {100 * rb_pol:.0f} %"
        elif rb_pol > rb_base * 1.05:
            cause = f"{mech} raised the row-buffer miss rate from {100 * rb_base:.0f} % to {100 * rb_pol:.0f} %"
        else:
            cause = f"the row-buffer miss rate stayed at {100 * rb_pol:.0f} %, so {mech} changed little in DRAM"
        heavy_text = ""
        if not heavy.empty and len(heavy) < len(rows):
            n = len(heavy)
            heavy_text = (f"; on the {n} memory-intensive mix{'es' if n != 1 else ''} "
                          f"{100 * (heavy['ws_norm'].mean() - 1):+.1f} % "
                          f"(maximum slowdown {100 * (heavy['ms_norm'].mean() - 1):+.1f} %)")
        sentences.append(
            f"[bold]{policy}[/bold]: weighted speedup {ws:+.1f} % over {base} on average ({better} of {len(rows)} "
            f"mixes better), maximum slowdown {ms:+.1f} %{heavy_text}: {meaning}; {cause}.")
    return sentences


def main(argv: Sequence[str] | None = None) -> int:
    from memtint.cli import main as cli_main

    return cli_main(["demo", *(argv if argv is not None else sys.argv[1:])])


if __name__ == "__main__":
    sys.exit(main())
