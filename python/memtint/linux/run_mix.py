"""`memtint run-mix`: several unmodified programs at once, each with the colour set a placement
policy gives it, computed by the simulator's own policy code (BPM §2.3-2.5: exclusive bank sets;
BPM+ channels; HVR's vertical policies), each pinned to its CPU; reports every program's wall
time, exit status and colours."""

from __future__ import annotations

import os as _os  # run_mix's `os` parameter is its [os] options, as policy_partition's
import shutil
import tempfile
import time
from typing import Any, Callable, Sequence

from memtint.linux import arguments
from memtint.linux.errors import LinuxError
from memtint.linux.hypervisor import NOTED, vm_warning
from memtint.linux.launch import (CommandRun, check_can_colour, check_cpus_available, check_library_starts,
                                  check_preloadable, check_startable, coloured_environment, cost_note, exit_status,
                                  kill_tree, library_mode, map_count_warning, no_report_reason, pymalloc_warning,
                                  start, SignalRelay)
from memtint.linux.layout import ColourLayout, MemtintError, policy_partition

SEPARATOR = ":::"


def split_commands(words: Sequence[str]) -> list[list[str]]:
    """["a", "1", ":::", "b"] -> [["a", "1"], ["b"]]; an error for an empty command."""
    commands: list[list[str]] = [[]]
    for w in words:
        if w == SEPARATOR:
            commands.append([])
        else:
            commands[-1].append(w)
    if any(not c for c in commands):
        raise LinuxError(f"empty program in the list: separate programs with '{SEPARATOR}', e.g. "
                         f"-- prog1 args {SEPARATOR} prog2 args")
    return commands


def run_mix(commands: Sequence[Sequence[str]], policy: str = "bpm", *, machine: str | dict[str, Any] = "i7-860",
            mapping: str | None = None, os: dict[str, Any] | None = None,
            cpus: str | Sequence[int] | None = None, mode: str = "auto",
            spill: bool = False, on_progress: Callable[[list[CommandRun]], None] | None = None,
            on_warning: Callable[[str], None] | None = None, stdout: int | None = None) -> dict[str, Any]:
    """Run `commands` at once, program i with process i's colours under placement policy `policy`
    (bpm, bpm-plus, cache-only, a-vp, ... as in the simulator) on `machine`, pinned to one CPU of
    `cpus` each (round-robin; default: the CPUs this process may use, in order). ``os`` adds
    `[os]` options of the simulator's run files (``colours``, ``exclude_bits``, ``vertical`` with
    its ``bits`` for policy vertical), as :func:`policy_partition` takes them.

    ``stdout``: the file descriptor the programs' standard output goes to (None: this process's;
    `memtint run-mix --json -` gives its standard error, so its standard output is the JSON alone).
    ``on_progress`` is called about twenty times a second with the runs while any is running;
    ``on_warning`` with each warning (virtual machine, vm.max_map_count, shared CPUs, the colours'
    cost in kernel frames, a CPython program without PYTHONMALLOC=malloc) once the checks
    passed, before anything starts, and after the run for a library report a program's child
    left in its place.
    Returns ``{"machine", "mapping", "policy", "space", "masks_hex", "wall_seconds", "programs":
    [{"command", "pid", "colours", "colours_text", "banks", "channels", "cpus", "exit_code",
    "wall_seconds", "library_report"}], "warnings"}``; a program that left no library report of its
    own has ``library_report`` null and a warning that says why it may have. Raises before
    starting anything, and before any warning, when the policy does not partition colours, the
    machine cannot give every program colours, this host cannot colour, a program is missing or
    statically linked (LD_PRELOAD cannot reach it), a CPU is not this process's, or the library
    refuses its settings.
    """
    commands = arguments.commands("commands", commands)
    arguments.flag("spill", spill)
    arguments.callback("on_progress", on_progress, "the runs")
    arguments.callback("on_warning", on_warning, "one warning's text")
    if stdout is not None and (isinstance(stdout, bool) or not isinstance(stdout, int) or stdout < 0):
        raise LinuxError(f"stdout: expected a file descriptor (such as 2) or None, got {stdout!r}")
    if not commands:
        raise LinuxError("no programs given: write them after '--', separated by ':::'")
    if isinstance(os, dict):  # anything else is policy_partition's error
        if "policy" in os:
            raise LinuxError("os.policy: the policy is run-mix's own argument (--policy), not an [os] option")
        if "groups" in os:
            raise LinuxError("os.groups: run-mix gives each program its own colour set, so processes cannot share "
                             "one; leave os.groups out")
    try:
        partition = policy_partition(machine, policy, len(commands), mapping=mapping, os=os)
    except MemtintError as error:
        if "os.groups" not in str(error):
            raise
        # The simulator's ways out name os.groups (processes sharing a colour set), which run-mix
        # does not have: the engine's reason, run-mix's ways out.
        reason = str(error).removeprefix("invalid configuration: os: ").split("; ")[0]
        raise LinuxError(f"--policy {policy} on {machine}: {reason}; run-mix gives each program its own colour set: "
                         "run fewer programs or pick a policy with more colours") from None
    # Known keys (the engine named an unknown one); the engine says which shape this policy's sets:
    # the others (dynamic policies, migration, swap, scheduling, frame order, CAT) act in the
    # simulator over a run, which run-mix does not model.
    shaping = [k for k in partition["shaped_by"] if k != "groups"]  # refused above: one set each
    for key in os if isinstance(os, dict) else ():
        if key not in shaping:
            raise LinuxError(f"os.{key}: run-mix applies the policy's colour sets once, at the start; only the "
                             f"options that shape {policy}'s apply (os.{', os.'.join(shaping)}); os.{key} is the "
                             "simulator's")
    if not partition["partitioned"]:
        # A policy that partitions gives a lone program every colour: which one this is, two tell.
        if len(commands) == 1 and policy_partition(machine, policy, 2, mapping=mapping, os=os)["partitioned"]:
            raise LinuxError(f"one program: policy '{policy}' partitions memory between programs, so one program gets "
                             "every colour; give two or more (separated by ':::'), or colour one with memtint run "
                             "--colors")
        raise LinuxError(f"policy '{policy}' gives every process every colour (it does not partition memory); "
                         "use bpm, bpm-plus, cache-only, a-vp or another colour-set policy")
    layout = ColourLayout(partition["layout"])
    check_can_colour(layout, mode, option="--policy")
    for argv in commands:
        check_startable(argv, dict(_os.environ))
        check_preloadable(argv, dict(_os.environ))
    available = sorted(_os.sched_getaffinity(0))
    cpu_list = arguments.cpus(cpus) or available
    check_cpus_available([cpu_list[i % len(cpu_list)] for i in range(len(commands))])  # the CPUs used
    # The library and its settings (every program has them but its colours and report) too: a
    # refusal is the one line said, with no warning before it and no program started.
    check_library_starts(coloured_environment(layout, partition["processes"][0]["colours"], mode=mode, spill=spill))
    vm = vm_warning()
    used = library_mode(mode)
    warnings = [w for w in [vm, map_count_warning(used)] if w]  # after the checks: none before a refusal
    warnings += partition.get("warnings", [])  # [os] options that change nothing, as sim says them
    if len(cpu_list) < len(commands):
        warnings.append(f"{len(commands)} programs share {len(cpu_list)} CPUs: they also compete for CPU time")
    warnings += _cost_notes(commands, partition, layout, used)
    warnings += [f"program {i}: {w}" for i, argv in enumerate(commands)
                 if (w := pymalloc_warning(argv, _os.environ.copy()))]
    for w in warnings:
        if on_warning:
            on_warning(w)
    with SignalRelay() as relay:  # from here a stop removes the reports' directory on its way out
        reports = tempfile.mkdtemp(prefix="memtint-run-mix-")
        try:
            started_all, started = _start_and_wait(commands, partition, layout, cpu_list, reports, mode, spill, vm,
                                                   relay, on_progress, stdout)
            programs = []
            for i, r in enumerate(started):
                report = r.library_report()
                if report is not None and report.get("pid") != r.process.pid:
                    # Every process of a program shares its report's path: this one is a child's
                    # (a shell that ran a command and ended with _exit), not the program's.
                    warnings.append(f"program {i} ({r.argv[0]}): the library report left is PID {report.get('pid')}'s "
                                    f"({report.get('comm') or '?'}), a process it started, not the program's (it "
                                    "ended without its exit handlers: _exit, a signal, an exec); its library_report "
                                    "is null")
                    if on_warning:
                        on_warning(warnings[-1])
                    report = None
                elif report is None:
                    warnings.append(f"program {i} ({r.argv[0]}): left no library report: "
                                    f"{no_report_reason(r.process.pid, r.exit_code)}; its library_report is null")
                    if on_warning:
                        on_warning(warnings[-1])
                programs.append({
                    "command": r.argv, "pid": r.process.pid, "colours": r.colours,
                    "colours_text": r.extra["colours_text"], "banks": r.extra["banks"],
                    "channels": r.extra["channels"], "cpus": r.cpus, "exit_code": r.exit_code,
                    "wall_seconds": r.wall_seconds, "library_report": report,
                })
        finally:
            shutil.rmtree(reports, ignore_errors=True)
    return {
        "schema_version": 1,
        "kind": "run-mix",
        "machine": layout.data["machine"],
        "mapping": layout.data["mapping"],
        "policy": partition["policy"],
        "space": layout.space,
        "masks_hex": layout.data["space"]["masks_hex"],
        "colours": layout.colours,
        "wall_seconds": time.monotonic() - started_all,
        "programs": programs,
        "warnings": warnings,
    }


def _cost_notes(commands: Sequence[Sequence[str]], partition: dict[str, Any], layout: ColourLayout,
                mode: str) -> list[str]:
    """`run`'s note of what each program's colour set costs in kernel frames (`cost_note`),
    once for the programs whose sets cost alike."""
    by_note: dict[str, list[int]] = {}
    for i in range(len(commands)):
        note = cost_note(partition["processes"][i]["colours"], layout.colours, mode, layout.masks)
        if note:
            by_note.setdefault(note, []).append(i)
    return [(f"program {ids[0]} ({commands[ids[0]][0]})" if len(ids) == 1 else
             f"programs {', '.join(map(str, ids))}") + f": {note}" for note, ids in by_note.items()]


def _start_and_wait(commands: Sequence[Sequence[str]], partition: dict[str, Any], layout: ColourLayout,
                    cpu_list: list[int], reports: str, mode: str, spill: bool, vm: str | None, relay: SignalRelay,
                    on_progress: Callable[[list[CommandRun]], None] | None,
                    stdout: int | None) -> tuple[float, list[CommandRun]]:
    """Start the programs (none more once a signal came; all killed when one cannot start) and
    wait for every one, passing signals on; the start time and the programs started."""
    runs = []
    for i, argv in enumerate(commands):
        proc = partition["processes"][i]
        run = CommandRun(list(argv), list(proc["colours"]), [cpu_list[i % len(cpu_list)]],
                         _os.path.join(reports, f"program-{i}.json"),
                         extra={"banks": proc["banks"], "channels": proc["channels"], "colours_text": proc["colours_text"]})
        env = coloured_environment(layout, run.colours, mode=mode, spill=spill, report=run.report_path)
        if vm:
            env[NOTED] = "1"  # said once above, not again by libmemtint in every program
        runs.append((run, env))
    started_all = time.monotonic()
    started: list[CommandRun] = []
    try:
        with relay.starting():
            for run, env in runs:
                if relay.stopping:
                    break
                run.started = time.monotonic()
                run.process = start(run.argv, env, run.cpus, stdout)
                relay.add(run.process)
                started.append(run)
    except BaseException:  # one program cannot start (or memtint fails): the others must not run on alone
        for run in started:
            kill_tree(run.process)
        raise
    with relay.waiting() as pause:
        while any(r.exit_code is None for r in started):
            for r in started:
                if r.exit_code is None and r.process.poll() is not None:
                    r.exit_code = exit_status(r.process.returncode)
                    r.wall_seconds = time.monotonic() - r.started
            if on_progress:
                on_progress(started)
            if any(r.exit_code is None for r in started):
                pause(0.05)
    return started_all, started
