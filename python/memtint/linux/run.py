"""`memtint run`: one unmodified program with its heap in chosen colours (libmemtint preloaded)
and its CPU affinity set; returns the program's exit status."""

from __future__ import annotations

import os
import time
from typing import Any, Callable, Sequence

from memtint.linux import arguments
from memtint.linux.colour_spec import parse_list
from memtint.linux.errors import LinuxError
from memtint.linux.hypervisor import NOTED, vm_warning
from memtint.linux.launch import (CommandRun, check_can_colour, check_cpus_available, check_library_starts, check_node,
                                  check_preloadable, check_startable, coloured_environment, command_inputs, cost_note,
                                  exit_status, library_mode, map_count_warning, pymalloc_warning, start,
                                  SignalRelay)
from memtint.linux.layout import colour_layout
from memtint.linux.numa import NumaSystem
from memtint.outputs import OutputError, check_outputs


#: The longest MEMTINT_REPORT libmemtint takes (native/libmemtint/src/config.c: 512 bytes with the NUL).
REPORT_PATH_MAX = 511


def check_report_path(report: str | None, inputs: Sequence[str] = ()) -> None:
    """The report must be writable where it is asked for, and not be one of the command's
    `inputs`: checked before the program runs, since libmemtint can only warn at the program's
    exit. The rules are libmemtint's: a device or FIFO is written into, a symlink followed, a
    directory or a place where no file can be created (/proc/x) refused."""
    if report is None:
        return
    absolute = os.path.abspath(report)  # what the library is given (MEMTINT_REPORT)
    if len(os.fsencode(absolute)) > REPORT_PATH_MAX:
        # the library would refuse it at the program's start, with status 2 (the program's own?)
        raise LinuxError(f"--report {report}: libmemtint takes a report path of at most {REPORT_PATH_MAX} bytes "
                         f"(this one is {len(os.fsencode(absolute))} as an absolute path); give a shorter one")
    try:
        # "%p" becomes each process's id; any id stands for them in the check
        check_outputs({"--report": report.replace("%p", "0")}, inputs, inputs_are_files=False)
    except OutputError as error:
        raise LinuxError(str(error).replace(report.replace("%p", "0"), report, 1)) from None


def run_coloured(argv: Sequence[str], colours: str | Sequence[int], *, machine: str | dict[str, Any] = "i7-860",
                 mapping: str | None = None, space: str = "bank", cpus: str | Sequence[int] | None = None,
                 mode: str = "auto", spill: bool = False, report: str | None = None, node: int | None = None,
                 numa: NumaSystem | None = None, on_start: Callable[[CommandRun], None] | None = None,
                 on_warning: Callable[[str], None] | None = None) -> CommandRun:
    """Run `argv` with libmemtint preloaded so its heap comes from `colours` ("0-3,8" or a list)
    of colour space `space` on `machine` (or `mapping`), pinned to `cpus`; wait for it.

    ``mode`` is libmemtint's auto, pagemap or hugepage; ``spill`` lets it take other colours
    when the chosen ones run out (counted in its report) instead of failing with ENOMEM;
    ``report`` is where libmemtint writes its JSON report at exit. ``node`` (None or -1: any)
    is the NUMA node the coloured frames come from: libmemtint binds its frame source to it
    (MEMTINT_NODE); it must have memory in ``numa`` (the running system by default).
    Checks before starting: the library exists, the colours exist in the space, the node has
    memory, the report can be written and is not an input, this host can colour (frame numbers
    readable, or hugepage mode with low colour bits), the program exists and is dynamically
    linked (LD_PRELOAD reaches it), and the CPUs are this process's; each failure raises with
    what to do. ``on_warning`` is called with each warning (virtual machine, vm.max_map_count,
    the colours' cost in kernel frames, a CPython program without PYTHONMALLOC=malloc) once
    every check passed, before the program starts; the run's ``warnings`` holds them too.
    Returns the run, with ``exit_code`` as a shell reports it (128 + N for signal N).
    """
    arguments.callback("on_start", on_start, "the started run")
    arguments.callback("on_warning", on_warning, "one warning's text")
    argv, layout, chosen, cpu_list, env, report = _checked(argv, colours, machine, mapping, space, cpus, mode, spill,
                                                           report, node, numa)
    run = CommandRun(list(argv), chosen, cpu_list, report)
    # Said after the checks: a refusal is the one line said.
    vm = vm_warning()
    used = library_mode(mode)
    run.warnings = [w for w in [vm, map_count_warning(used), cost_note(chosen, layout.colours, used, layout.masks),
                                pymalloc_warning(argv, env)] if w]
    if on_warning:
        for w in run.warnings:
            on_warning(w)
        if vm:
            env[NOTED] = "1"  # said once here, not again by libmemtint in every process of the program
    with SignalRelay() as relay:  # SIGINT, SIGTERM, SIGHUP go to the program from its start
        with relay.starting():
            run.started = time.monotonic()
            run.process = start(argv, env, cpu_list)
            relay.add(run.process)
        if on_start:
            on_start(run)
        run.exit_code = exit_status(relay.wait(run.process))
    run.wall_seconds = time.monotonic() - run.started
    return run


def check_run(argv: Sequence[str], colours: str | Sequence[int], *, machine: str | dict[str, Any] = "i7-860",
              mapping: str | None = None, space: str = "bank", cpus: str | Sequence[int] | None = None,
              mode: str = "auto", spill: bool = False, report: str | None = None, node: int | None = None) -> None:
    """Raise what `run_coloured` with these arguments would refuse, without starting anything:
    for a caller with work to do between its checks and the start (`run --verify` times the
    colours first, and refuses before any of it)."""
    _checked(argv, colours, machine, mapping, space, cpus, mode, spill, report, node, None)


def _checked(argv: Sequence[str], colours: str | Sequence[int], machine: str | dict[str, Any], mapping: str | None,
             space: str, cpus: str | Sequence[int] | None, mode: str, spill: bool, report: str | None,
             node: int | None, numa: NumaSystem | None) -> tuple:
    """`run_coloured`'s checks, in order; the program, layout, colours, CPUs, environment and report."""
    argv = arguments.command("argv", argv)
    if not isinstance(colours, str):
        colours = arguments.whole_numbers("colours", colours)
    cpu_list = arguments.cpus(cpus)
    arguments.flag("spill", spill)
    report = arguments.path_or_none("report", report, "the library report's path")
    if numa is not None and not isinstance(numa, NumaSystem):
        raise LinuxError(f"numa: expected a memtint.linux.numa.NumaSystem, got {numa!r}")
    layout = colour_layout(machine, space, mapping=mapping)
    chosen = (parse_list(colours, count=layout.colours, where=layout.described) if isinstance(colours, str)
              else sorted(set(colours)))
    check_node(node, numa)
    env = coloured_environment(layout, chosen, mode=mode, spill=spill, report=report, node=node)
    check_report_path(report, [*command_inputs(argv, env), *_config_files(machine, mapping)])
    check_can_colour(layout, mode)
    check_startable(argv, env)
    check_preloadable(argv, env)
    check_cpus_available(cpu_list)
    check_library_starts(env)
    return argv, layout, chosen, cpu_list, env, report


def _config_files(machine: str | dict[str, Any], mapping: str | None) -> list[str]:
    """The files a command reads behind its machine and mapping: the TOML files and every file
    they name (a machine's device and mapping files); preset names are not files."""
    from memtint.outputs import referenced_files

    return referenced_files(*[p for p in (machine, mapping) if isinstance(p, str)])
