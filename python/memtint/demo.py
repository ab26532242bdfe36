"""The memtint demo: the default page-colouring experiment on built-in workloads.

Six 4-program mixes (streaming, random or copy programs with light ones) on the i7-860 under
``buddy`` (the Linux-like baseline), ``bpm``, ``bpm-plus`` (on the BPM+ BIOS setting,
i7-860-bpm-plus), ``cache-only`` and ``a-vp``: a sweep (configs/sweeps/demo.toml) on the process
pool, its summary table, and a report with plots under ``out/demo/``. Run it with
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
    parser.add_argument("--out", default=os.path.join("out", "demo"), metavar="DIR",
                        help="where the results (DIR/results) and the report (DIR/report) go (default out/demo)")
    parser.add_argument("--jobs", type=int, metavar="N", help="worker processes (default: the CPU count)")
    parser.add_argument("--instructions", type=int, metavar="N",
                        help="instructions per core (default: the specification's, 10M)")


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
    from rich.console import Console

    from memtint.report import normalised_table, sweep_table
    from memtint.reports import write_report
    from memtint.sweep import load_results, parse_spec, policy_summary, run_sweep

    if args.instructions is not None and args.instructions < 1:
        raise api.MemtintError(f"--instructions must be at least 1, got {args.instructions}")
    if args.jobs is not None and args.jobs < 1:
        raise api.MemtintError(f"--jobs must be at least 1, got {args.jobs}")
    start = time.perf_counter()
    spec = parse_spec(load_demo_spec(args.instructions), base=SPEC_PATH.parent, source=str(SPEC_PATH))
    results = os.path.join(args.out, "results")
    console = Console()
    n = len(spec)
    console.print(f"Running the demo sweep: {n} runs (6 mixes x 5 policies) on the process pool, "
                  f"results in {results}")
    summary = run_sweep(spec, results, jobs=args.jobs)
    frame = load_results(results)
    console.print(sweep_table(policy_summary(frame, summary.config_hashes),
                              f"demo · {summary.total} runs · {spec.entries[0].instructions:,} instructions per core"))
    report = write_report(results, os.path.join(args.out, "report"))
    console.print(normalised_table(report["rows"], f"normalised to {report['baseline']} on the same mix"))
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
