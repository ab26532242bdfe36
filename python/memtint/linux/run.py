"""`memtint run`: one unmodified program with its heap in chosen colours (libmemtint preloaded)
and its CPU affinity set; returns the program's exit status."""

from __future__ import annotations

import os
import time
from typing import Any, Callable, Sequence

from memtint.linux.colour_spec import parse_list
from memtint.linux.launch import (CommandRun, check_can_colour, coloured_environment, exit_status, forward_signals,
                                  parse_cpus, start)
from memtint.linux.layout import colour_layout
from memtint.linux.errors import LinuxError


def check_report_path(report: str | None) -> None:
    """The report must be writable where it is asked for: checked before the program runs, since
    libmemtint can only warn at the program's exit."""
    if not report:
        return
    path = report.replace("%p", "0")
    if os.path.isdir(path):
        raise LinuxError(f"--report {report}: is a directory; give a file name")
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise LinuxError(f"--report {report}: directory {directory} does not exist")
    if not os.access(directory, os.W_OK):
        raise LinuxError(f"--report {report}: directory {directory} is not writable")


def run_coloured(argv: Sequence[str], colours: str | Sequence[int], *, machine: str | dict[str, Any] = "i7-860",
                 mapping: str | None = None, space: str = "bank", cpus: str | Sequence[int] | None = None,
                 mode: str = "auto", spill: bool = False, report: str | None = None,
                 on_start: Callable[[CommandRun], None] | None = None) -> CommandRun:
    """Run `argv` with libmemtint preloaded so its heap comes from `colours` ("0-3,8" or a list)
    of colour space `space` on `machine` (or `mapping`), pinned to `cpus`; wait for it.

    ``mode`` is libmemtint's auto, pagemap or hugepage; ``spill`` lets it take other colours
    when the chosen ones run out (counted in its report) instead of failing with ENOMEM;
    ``report`` is where libmemtint writes its JSON report at exit. Checks before starting: the
    library exists, the colours exist in the space, and this host can colour (frame numbers
    readable, or hugepage mode with low colour bits); each failure raises with what to do.
    Returns the run, with ``exit_code`` as a shell reports it (128 + N for signal N).
    """
    check_report_path(report)
    layout = colour_layout(machine, space, mapping=mapping)
    chosen = (parse_list(colours, count=layout.colours, where=layout.described) if isinstance(colours, str)
              else sorted(set(colours)))
    cpu_list = parse_cpus(cpus) if isinstance(cpus, str) else (list(cpus) if cpus else None)
    env = coloured_environment(layout, chosen, mode=mode, spill=spill, report=report)
    check_can_colour(layout, mode)
    run = CommandRun(list(argv), chosen, cpu_list, report)
    run.started = time.monotonic()
    run.process = start(argv, env, cpu_list)
    if on_start:
        on_start(run)
    restore = forward_signals([run.process])
    try:
        run.exit_code = exit_status(run.process.wait())
    finally:
        restore()
    run.wall_seconds = time.monotonic() - run.started
    return run
