"""The `memtint inspect`, `memtint run` and `memtint run-mix` subcommands: argument parsing and
terminal output only, each over one API function (inspect_process, run_coloured, run_mix)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

from memtint.linux.hypervisor import vm_warning
from memtint.linux.inspect import inspect_process
from memtint.linux.launch import MODES, command_inputs, map_count_warning
from memtint.linux.maps import CLASSES
from memtint.linux.run import run_coloured
from memtint.linux.run_mix import SEPARATOR, run_mix, split_commands
from memtint.outputs import check_outputs, write_text

SPACE_HELP = ("colour space: bank, rank, channel, channel-bank, llc, dram, or a vertical policy's "
              "(cache-only, bank-only, bank-only-8, a-vp, b-vp, c-vp); default bank")


def add_commands(commands: Any) -> None:
    inspect = commands.add_parser(
        "inspect",
        help="histogram a running process's resident pages by bank, channel, rank and LLC colour",
        description="Read /proc/PID/maps and /proc/PID/pagemap (root or CAP_SYS_ADMIN) and count the process's "
        "resident pages by DRAM bank, channel, rank, LLC colour and colour, split into heap, stack, file-backed "
        "and other mappings, with the fraction in its assigned colours (from MEMTINT_COLOR_MASKS/MEMTINT_COLORS in "
        "its environment). JSON schema: docs/linux.md.",
    )
    inspect.add_argument("pid", type=int, help="process ID")
    inspect.add_argument("--machine", default="i7-860", help="machine preset or TOML whose mapping decodes frames "
                         "(default i7-860)")
    inspect.add_argument("--mapping", help="address mapping preset or TOML instead of the machine's")
    inspect.add_argument("--space", default="bank", help=SPACE_HELP + " (when the process has no assigned masks)")
    inspect.add_argument("--json", metavar="OUT", help="write the JSON report to OUT ('-' for stdout)")
    inspect.set_defaults(handler=_inspect)

    run = commands.add_parser(
        "run",
        help="run a program with its heap in chosen colours (libmemtint preloaded) and its CPUs set",
        description="Run PROGRAM with libmemtint preloaded so that its heap comes from the frames of --colors, "
        "pinned to --cpus. Exits with the program's exit status. See docs/linux.md.",
    )
    run.add_argument("--machine", default="i7-860", help="machine preset or TOML (default i7-860)")
    run.add_argument("--mapping", metavar="FILE", help="address mapping preset or TOML instead of the machine's")
    run.add_argument("--colors", "--colours", dest="colors", required=True, metavar="SPEC",
                     help="colours of the space, e.g. 0-3,8,10-11")
    run.add_argument("--space", default="bank", help=SPACE_HELP)
    run.add_argument("--cpus", metavar="LIST", help="CPUs to run on, e.g. 0-1,3 (default: unchanged)")
    run.add_argument("--mode", choices=MODES, default="auto", help="libmemtint's frame source (default auto)")
    run.add_argument("--spill", action="store_true", help="take other colours when the chosen ones run out "
                     "(counted) instead of failing with ENOMEM")
    run.add_argument("--report", metavar="OUT", help="libmemtint's JSON report, written when the program exits")
    run.add_argument("command", nargs=argparse.REMAINDER, help="-- PROGRAM ARGS...")
    run.set_defaults(handler=_run)

    mix = commands.add_parser(
        "run-mix",
        help="run several programs at once with disjoint colour sets from a placement policy",
        description="Run the programs at once, each with the colours process i gets under --policy in the "
        f"simulator (the same policy code), each pinned to one CPU. Separate programs with '{SEPARATOR}'. Reports "
        "each program's wall time, exit status and colours.",
    )
    mix.add_argument("--machine", default="i7-860", help="machine preset or TOML (default i7-860)")
    mix.add_argument("--mapping", metavar="FILE", help="address mapping preset or TOML instead of the machine's")
    mix.add_argument("--policy", default="bpm", help="placement policy: bpm, bpm-plus, cache-only, a-vp, ... "
                     "(default bpm)")
    mix.add_argument("--cpus", metavar="LIST", help="CPUs, one per program round-robin (default: all available)")
    mix.add_argument("--mode", choices=MODES, default="auto", help="libmemtint's frame source (default auto)")
    mix.add_argument("--spill", action="store_true", help="take other colours when a program's run out")
    mix.add_argument("--json", metavar="OUT", help="write the results as JSON to OUT ('-' for stdout)")
    mix.add_argument("command", nargs=argparse.REMAINDER, help=f"-- PROG1 ARGS {SEPARATOR} PROG2 ARGS ...")
    mix.set_defaults(handler=_run_mix)


def _argv(words: list[str]) -> list[str]:
    return words[1:] if words and words[0] == "--" else words


def _warn(text: str | None) -> None:
    if text:
        sys.stderr.write(f"memtint: warning: {text}\n")


def _write_json(path: str, value: Any) -> None:
    text = json.dumps(value, indent=2) + "\n"
    if path == "-":
        sys.stdout.write(text)
    else:
        write_text("--json", path, text)


def _config_files(args: argparse.Namespace) -> list[str]:
    """The machine and mapping TOML files the command reads (preset names are not files)."""
    return [p for p in (args.machine, args.mapping) if p and os.path.isfile(p)]


def _histogram_table(title: str, rows: list[dict[str, Any]], key: str):
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for column in [key, *CLASSES, "total"]:
        table.add_column(column, justify="right")
    for row in rows:
        table.add_row(row["label"], *(str(row[c]) for c in CLASSES), str(row["total"]))
    return table


def _inspect(args: argparse.Namespace) -> int:
    from rich.console import Console

    check_outputs({"--json": args.json}, _config_files(args))
    report = inspect_process(args.pid, args.machine, mapping=args.mapping, space=args.space)
    for w in report["warnings"]:
        _warn(w)
    if args.json:
        _write_json(args.json, report)
        if args.json == "-":
            return 0
    console = Console()
    space = report["space"]
    console.print(f"[bold]PID {report['pid']}[/bold] {report['command'][:100]}")
    console.print(f"machine {report['machine']} (mapping {report['mapping']}); colours: {space['name']}, "
                  f"{space['colours']} colours from masks {', '.join(space['masks_hex'])} ({space['source']})")
    pages = report["pages"]
    console.print(f"resident pages: {report['resident_pages']} ("
                  + ", ".join(f"{c} {pages[c]}" for c in CLASSES) + f"); swapped: {report['swapped_pages']}")
    if report["assigned_colours"] is None:
        console.print("assigned colours: none (the environment sets no MEMTINT_COLOR_MASKS/MEMTINT_COLORS)")
    else:
        frac = report["heap_fraction_in_colours"]
        console.print(f"assigned colours: {report['assigned_colours_text']}; heap pages in them: "
                      + (f"{100 * frac:.1f} % ({report['heap_pages_outside_colours']} outside)" if frac is not None
                         else "n/a (no heap pages)")
                      + f"; all pages: {100 * (report['fraction_in_colours'] or 0):.1f} %")
    org = report["organisation"]
    heap_banks = sorted({b for row in report["by_bank"] if row["heap"] for b in row["ids"]})
    console.print(f"heap pages lie in {len(heap_banks)} of the {org['banks']} banks "
                  f"({org['channels']} channels, {org['ranks']} ranks per channel)")
    for note in report["notes"]:
        console.print(f"note: {note}")
    for title, key, name in [("by colour", "by_colour", "colour"), ("by bank", "by_bank", "bank"),
                             ("by channel", "by_channel", "channel"), ("by rank", "by_rank", "rank"),
                             ("by LLC colour", "by_llc_colour", "LLC colour")]:
        console.print(_histogram_table(f"Resident pages {title}", report[key], name))
    return 0


def _cost(args: argparse.Namespace) -> str | None:
    """The colour fraction's cost in kernel frames (`cost_note`); None when it cannot be told yet
    (a bad colour list is reported by the run itself)."""
    from memtint.linux.colour_spec import parse_list
    from memtint.linux.launch import cost_note
    from memtint.linux.layout import colour_layout

    try:
        layout = colour_layout(args.machine, args.space, mapping=args.mapping)
        chosen = parse_list(args.colors, count=layout.colours, where=layout.described)
    except Exception:  # noqa: BLE001 - the run reports these errors properly
        return None
    return cost_note(len(chosen), layout.colours, args.mode)


def _run(args: argparse.Namespace) -> int:
    argv = _argv(args.command)
    if not argv:
        from memtint.linux.errors import LinuxError

        raise LinuxError("no program given: memtint run --colors SPEC -- PROGRAM ARGS...")
    _warn(vm_warning())
    _warn(map_count_warning(args.mode))
    _warn(_cost(args))
    run = run_coloured(argv, args.colors, machine=args.machine, mapping=args.mapping, space=args.space,
                       cpus=args.cpus, mode=args.mode, spill=args.spill, report=args.report)
    return run.exit_code if run.exit_code is not None else 1


def _run_mix(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    commands = split_commands(_argv(args.command))
    # before any program runs: a JSON that cannot be written would lose the whole run
    env = dict(os.environ)
    check_outputs({"--json": args.json}, [*(p for c in commands for p in command_inputs(c, env)), *_config_files(args)])
    _warn(map_count_warning(args.mode))
    err = Console(stderr=True)
    status = None
    finished: set[int] = set()

    def progress(runs) -> None:
        nonlocal status
        for i, r in enumerate(runs):
            if r.exit_code is not None and i not in finished:
                finished.add(i)
                err.print(f"program {i} ({r.argv[0]}) finished: exit {r.exit_code} after {r.wall_seconds:.2f} s")
        running = sum(r.exit_code is None for r in runs)
        if err.is_terminal:
            text = f"{running} of {len(runs)} programs running, {time.monotonic() - runs[0].started:.1f} s"
            if status is None:
                status = err.status(text)
                status.start()
            else:
                status.update(text)

    try:
        result = run_mix(commands, args.policy, machine=args.machine, mapping=args.mapping, cpus=args.cpus,
                         mode=args.mode, spill=args.spill, on_progress=progress, on_warning=_warn)
    finally:
        if status is not None:
            status.stop()
    if args.json:
        _write_json(args.json, result)
    if args.json != "-":
        table = Table(title=f"run-mix: policy {result['policy']} on {result['machine']} ({result['space']} colours, "
                      f"{result['colours']} in all)", title_justify="left")
        for column in ["#", "program", "colours", "banks", "CPU", "exit", "wall s"]:
            table.add_column(column, justify="right" if column in ("#", "banks", "exit", "wall s") else "left")
        for i, p in enumerate(result["programs"]):
            table.add_row(str(i), " ".join(p["command"])[:40], p["colours_text"], str(len(p["banks"])),
                          ",".join(map(str, p["cpus"])), str(p["exit_code"]), f"{p['wall_seconds']:.2f}")
        Console().print(table)
    return max((p["exit_code"] for p in result["programs"]), default=0)
