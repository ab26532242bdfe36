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
    from memtint.reports import write_report
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
    # Its store and its report are said to be unwritable before the sweep, not after it.
    from memtint.reports import REPORT_FILES
    from memtint.sweep.store import ResultStore

    ResultStore(results).check_writable("--out")
    check_output_dir("--out", os.path.join(args.out, "report"), files=REPORT_FILES)
    from memtint.tables import output_console
    console = output_console()
    n = len(spec)
    console.print(f"Running the demo sweep: {n} runs ({len({e.mix for e in spec.entries})} mixes drawn from the "
                  f"suite by measured class x {len({e.policy for e in spec.entries})} policies) on the process pool, "
                  f"results in {results}")
    summary = run_sweep(spec, results, out_option="--out", jobs=args.jobs)
    # This sweep's runs only: the store keeps those of earlier demos too (another engine version
    # or instruction count gives other configuration hashes).
    frame = load_results(results)
    frame = frame[frame["config_hash"].isin(set(summary.config_hashes))]
    console.print(sweep_table(policy_summary(frame),
                              f"demo · {summary.total} runs · {spec.entries[0].instructions:,} instructions per core"))
    report = write_report(results, os.path.join(args.out, "report"), config_hashes=summary.config_hashes)
    console.print(normalised_table(report["rows"], f"normalised to {report['baseline']} on the same mix"))
    for sentence in report["findings_markup"]:
        console.print(sentence, soft_wrap=True)
    console.print(f"{summary.done} run(s) done ({summary.failed} failed), {summary.skipped} already stored, "
                  f"{summary.alone_runs} alone run(s); {time.perf_counter() - start:.1f} s")
    console.print(f"Report: {os.path.abspath(report['index'])} (summary: {os.path.abspath(report['summary'])})",
                  soft_wrap=True)
    return 1 if summary.failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    from memtint.cli import main as cli_main

    return cli_main(["demo", *(argv if argv is not None else sys.argv[1:])])


if __name__ == "__main__":
    sys.exit(main())
