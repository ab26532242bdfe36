"""The `memtint inspect`, `memtint run` and `memtint run-mix` subcommands: argument parsing and
terminal output only, each over one API function (inspect_process, run_coloured, run_mix)."""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from typing import Any

from memtint.linux.inspect import inspect_process
from memtint.linux.isolation import BUFFER_MB as ISOLATION_BUFFER_MB
from memtint.linux.launch import MODES, command_inputs, no_report_reason
from memtint.linux.maps import CLASSES
from memtint.linux.run import run_coloured
from memtint.linux.run_mix import SEPARATOR, run_mix, split_commands
from memtint.linux.tier_run import POLICIES as TIER_POLICIES
from memtint.outputs import check_outputs, write_text

#: The colour spaces an option can name, besides `vertical:I,J,K` (HVR's B-, C- and O-bits).
SPACES = ("bank", "rank", "channel", "channel-bank", "llc", "dram")
VERTICAL_SPACES = ("cache-only", "bank-only", "bank-only-8", "a-vp", "b-vp", "c-vp")
SPACE_HELP = (f"colour space: {', '.join(SPACES)}, a vertical policy's ({', '.join(VERTICAL_SPACES)}), or "
              "vertical:I,J,K (I B-, J C- and K O-bits, e.g. vertical:1,2,1); default bank")


def add_commands(commands: Any) -> None:
    inspect = commands.add_parser(
        "inspect",
        help="histogram a running process's resident pages by bank, channel, rank, LLC colour and NUMA node",
        description="Read /proc/PID/maps and /proc/PID/pagemap (root or CAP_SYS_ADMIN) and count the process's "
        "resident pages by DRAM bank, channel, rank, LLC colour and colour, and by NUMA node (/proc/PID/numa_maps), "
        "split into heap, stack, file-backed and other mappings, with the fraction in its assigned colours (from MEMTINT_COLOR_MASKS/MEMTINT_COLORS in "
        "its environment). JSON schema: docs/linux.md.",
    )
    inspect.add_argument("pid", type=int, help="process ID")
    inspect.add_argument("--machine", default="i7-860", help="machine preset or TOML whose mapping decodes frames "
                         "(default i7-860)")
    inspect.add_argument("--mapping", help="address mapping preset or TOML instead of the machine's")
    inspect.add_argument("--space", help=SPACE_HELP + "; for a process without assigned masks")
    inspect.add_argument("--json", metavar="OUT", help="write the JSON report to OUT ('-' for stdout)")
    inspect.set_defaults(handler=_inspect)

    run = commands.add_parser(
        "run",
        help="run a program with its heap in chosen colours (libmemtint preloaded) and its CPUs set",
        description="Run PROGRAM with libmemtint preloaded so that its heap comes from the frames of --colors, "
        "pinned to --cpus. Exits with the program's exit status. See docs/linux.md.",
    )
    run.add_argument("--machine", help="machine preset or TOML whose colours --colors names (default i7-860)")
    run.add_argument("--mapping", metavar="FILE", help="address mapping preset or TOML instead of the machine's")
    run.add_argument("--colors", "--colours", dest="colors", metavar="SPEC",
                     help="colours of the space, e.g. 0-3,8,10-11 (required unless --tier-policy is given)")
    run.add_argument("--space", help=SPACE_HELP)
    run.add_argument("--cpus", metavar="LIST", help="CPUs to run on, e.g. 0-1,3 (default: unchanged)")
    run.add_argument("--mode", choices=MODES, help="libmemtint's frame source (default auto)")
    run.add_argument("--spill", action="store_true", help="take other colours when the chosen ones run out "
                     "(counted) instead of failing with ENOMEM")
    run.add_argument("--report", metavar="OUT", help="libmemtint's JSON report, written when the program exits")
    run.add_argument("--node", metavar="N", type=int, help="NUMA node the coloured frames come from (libmemtint "
                     "binds its frames there, TintMalloc's node; default or -1: any node); needs --colors")
    run.add_argument("--verify", action="store_true", help="before the program starts, time pairs of loads to check "
                     "that its colours' banks are isolated from the others' on this machine (row conflicts within them, "
                     "none across; root); prints the figures and a verdict to stderr, the run is unchanged. It checks "
                     "bank isolation: a space whose colours share banks (llc, cache-only) is refused")
    run.add_argument("--verify-buffer-mb", metavar="MB", type=int, help="the check's buffer of frames to pair "
                     f"(default {ISOLATION_BUFFER_MB})")
    tier = run.add_argument_group("placement over memory nodes (docs/tiering-linux.md)")
    tier.add_argument("--tier-policy", metavar="NAME", choices=list(TIER_POLICIES),
                      help="place the program's memory over the memory nodes instead of colouring it: "
                      + "; ".join(f"{k}: {v}" for k, v in TIER_POLICIES.items()))
    tier.add_argument("--weights", metavar="auto|D:N[:...]",
                      help="one weight 1-255 per node, in --nodes order (default auto: the kernel's weights for "
                      "weighted-interleave, D:N from the nodes' bandwidths for the bw-* policies)")
    tier.add_argument("--bandwidths", metavar="NODE=GBS,...", help="the nodes' bandwidths, e.g. 0=20,1=4 (from "
                      "memtint numa-probe), when the firmware gives no HMAT/CDAT figures")
    tier.add_argument("--nodes", metavar="LIST", help="memory nodes to place on, fastest first (default: all)")
    tier.add_argument("--migration-limit", metavar="M", type=int,
                      help="bw-migration: the most pages the net flow between two nodes may reach (default 10, "
                      "the thesis's example)")
    tier.add_argument("--period", metavar="S", type=float,
                      help="bw-random/bw-local/bw-migration: seconds between two looks at the program (default 0.1)")
    run.add_argument("command", nargs=argparse.REMAINDER, help="-- PROGRAM ARGS...")
    run.set_defaults(handler=_run)

    probe = commands.add_parser(
        "numa-probe",
        help="measure each memory node's bandwidth (STREAM Copy with the arrays bound to the node)",
        description="Run STREAM's Copy kernel (numpy, one thread per usable CPU) with both arrays bound to each "
        "memory node in turn by mbind(MPOL_BIND), and print each node's best figure in GB/s, the share of the "
        "arrays' pages the kernel reports on that node, and the --bandwidths and D:N weights they give. See "
        "docs/tiering-linux.md.",
    )
    probe.add_argument("--nodes", metavar="LIST", help="nodes to measure (default: every memory node)")
    probe.add_argument("--size", metavar="BYTES", default="256M", help="bytes per array (default 256M)")
    probe.add_argument("--repeats", metavar="N", type=int, default=10, help="passes per node, best kept (default 10)")
    probe.add_argument("--threads", metavar="N", type=int, help="copy threads (default: the CPUs memtint may use)")
    probe.add_argument("--json", metavar="OUT", help="write the figures as JSON to OUT ('-' for stdout)")
    probe.set_defaults(handler=_numa_probe)

    refresh = commands.add_parser(
        "refresh-probe",
        help="measure DRAM refresh interference from user space (timed uncached loads)",
        description="Load one cache line again and again, flushing it with clflush so that every load goes to DRAM, "
        "and time each load with rdtscp. Loads that wait for a refresh recur every tREFI; the command prints the "
        "period the slow loads recur with, the JEDEC interval it is nearest, how long they stall, and the probe's "
        "limits (x86-64; no privilege needed). Hiding refresh needs control of the memory controller, so Colored "
        "Refresh stays in simulation. See docs/refresh.md.",
    )
    refresh.add_argument("--rounds", metavar="N", type=int, default=5, help="runs of the probe (default 5)")
    refresh.add_argument("--samples", metavar="N", type=int, default=1_000_000,
                         help="timed loads per round (default 1000000: about 0.5 s of loads, then a period "
                              "search of a few seconds)")
    refresh.add_argument("--threshold", metavar="X", type=float, default=2.0,
                         help="a load slower than X times the median is a slow load (default 2)")
    refresh.add_argument("--json", metavar="OUT", help="write the figures as JSON to OUT ('-' for stdout)")
    refresh.add_argument("--plot", metavar="PNG", help="write the latency histogram and period scan to PNG")
    refresh.set_defaults(handler=_refresh_probe)

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
    from memtint.cli import _setting  # `--set` reads as in sim and compare

    mix.add_argument("--set", type=_setting, action="append", metavar="os.KEY=VALUE",
                     help="an [os] option of the policy, as in sim and compare (os.colour_split=strided, os.colours=[[0,1],[2,3]], "
                     "os.vertical.bits=[1,2,1] for --policy vertical); repeatable; docs/linux.md")
    mix.add_argument("--cpus", metavar="LIST", help="CPUs, one per program round-robin (default: all available)")
    mix.add_argument("--mode", choices=MODES, default="auto", help="libmemtint's frame source (default auto)")
    mix.add_argument("--spill", action="store_true", help="take other colours when a program's run out")
    mix.add_argument("--json", metavar="OUT", help="write the results as JSON to OUT ('-' for stdout; the programs' "
                     "standard output then goes to standard error)")
    mix.add_argument("command", nargs=argparse.REMAINDER, help=f"-- PROG1 ARGS {SEPARATOR} PROG2 ARGS ...")
    mix.set_defaults(handler=_run_mix)


def _argv(words: list[str]) -> list[str]:
    return words[1:] if words and words[0] == "--" else words


def _warn(text: str | None) -> bool:
    if text:
        sys.stderr.write(f"memtint: warning: {text}\n")
    return bool(text)


def _write_json(path: str, value: Any) -> None:
    from memtint.outputs import write_json

    write_json("--json", path, value)


#: `memtint run`'s defaults, set once the flags given have been checked against the way of running.
RUN_DEFAULTS = {"machine": "i7-860", "space": "bank", "mode": "auto", "period": 0.1, "migration_limit": 10}
#: The tier daemon's shortest period between looks (s): each look reads the process's pages.
MIN_PERIOD_S = 0.001
#: Its longest (s): a day between looks places nothing (and 10^19 s overflowed the clock's wait).
MAX_PERIOD_S = 86_400.0


def escape(text: str) -> str:
    """A program's or process's own text as rich prints it: literal, never markup ("[/x]" in a
    command line would be a closing tag, and fail)."""
    from rich.markup import escape as rich_escape

    return rich_escape(text)


def _config_files(args: argparse.Namespace) -> list[str]:
    """The files the command reads behind its machine and mapping (`run._config_files`)."""
    from memtint.linux.run import _config_files as files

    return files(args.machine, args.mapping)


def _histogram_table(title: str, rows: list[dict[str, Any]], key: str):
    from memtint.tables import _Table as Table

    table = Table(title=title, title_justify="left")
    for column in [key, *CLASSES, "total"]:
        table.add_column(column, justify="right")
    for row in rows:
        table.add_row(row["label"], *(str(row[c]) for c in CLASSES), str(row["total"]))
    return table


def _check_space(space: str | None) -> None:
    """A space this option names; `vertical` with its bits (`colour_layout` checks them)."""
    from memtint.linux.errors import LinuxError

    if space == "vertical":
        raise LinuxError("--space vertical: the general vertical space needs its (i, j, k), the numbers of B-, C- and "
                         f"O-bits: give vertical:I,J,K (e.g. vertical:1,2,1), or a named one: {', '.join(VERTICAL_SPACES)}")
    if space is not None and space.startswith("vertical:"):
        return
    if space is not None and space not in SPACES + VERTICAL_SPACES:  # the names this option takes, not the API's
        raise LinuxError(f"--space {space}: unknown colour space; give one of {', '.join(SPACES + VERTICAL_SPACES)}, "
                         "or vertical:I,J,K (I B-, J C- and K O-bits, e.g. vertical:1,2,1)")


def _inspect(args: argparse.Namespace) -> int:
    _check_space(args.space)
    check_outputs({"--json": args.json}, _config_files(args))
    report = inspect_process(args.pid, args.machine, mapping=args.mapping, space=args.space)
    for w in report["warnings"]:
        _warn(w)
    if args.json:
        _write_json(args.json, report)
        if args.json == "-":
            return 0
    from memtint.tables import output_console
    console = output_console()
    space = report["space"]
    console.print(f"[bold]PID {report['pid']}[/bold] {escape(report['command'][:100])}")  # a process's own text
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
                             ("by LLC colour", "by_llc_colour", "LLC colour"), ("by NUMA node", "by_node", "node")]:
        console.print(_histogram_table(f"Resident pages {title}", report[key], name))
    policies = report["numa_policies"]
    console.print("memory policies of its mappings (numa_maps): "
                  + (", ".join(f"{p} {c}" for p, c in sorted(policies.items())) or "none read"))
    return 0


def _run(args: argparse.Namespace) -> int:
    from memtint.linux.errors import LinuxError

    _check_space(args.space)
    argv = _argv(args.command)
    # Flags of the other way of running are refused, not ignored (RUN_DEFAULTS: their defaults).
    colouring = [f for f, v in (("--machine", args.machine), ("--mapping", args.mapping), ("--space", args.space),
                                ("--mode", args.mode), ("--spill", args.spill or None), ("--report", args.report),
                                ("--verify-buffer-mb", args.verify_buffer_mb)) if v is not None]
    tiering = [f for f, v in (("--period", args.period), ("--migration-limit", args.migration_limit)) if v is not None]
    if args.tier_policy and colouring:
        raise LinuxError(f"{', '.join(colouring)} {'apply' if len(colouring) > 1 else 'applies'} to colouring "
                         "(--colors), not to --tier-policy, which places pages on nodes with the kernel's policies")
    if not args.tier_policy and tiering:
        raise LinuxError(f"{', '.join(tiering)} only {'apply' if len(tiering) > 1 else 'applies'} with --tier-policy")
    if args.tier_policy:
        from memtint.linux.tier_policies import POLICIES

        declared = POLICIES[args.tier_policy]
        for flag, value, needed, who in (
                ("--period", args.period, declared.daemon, "a daemon (" + ", ".join(
                    p.name for p in POLICIES.values() if p.daemon) + ")"),
                ("--migration-limit", args.migration_limit, declared.migration_gate, "the migration gate (" + ", ".join(
                    p.name for p in POLICIES.values() if p.migration_gate) + ")")):
            if value is not None and not needed:
                raise LinuxError(f"{flag} {value}: {args.tier_policy} has no use for it; only the policies with "
                                 f"{who} read it")
    for key, value in RUN_DEFAULTS.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if args.tier_policy:
        if args.colors:
            raise LinuxError("--colors and --tier-policy cannot be combined: moving a page to another node gives it "
                             "another frame, and so another colour")
        if args.node is not None:
            raise LinuxError("--node applies to coloured frames (with --colors); --tier-policy places memory with "
                             "--nodes")
        if args.verify:
            raise LinuxError("--verify checks the isolation of colours (--colors); --tier-policy colours nothing")
        return _run_tiered(args, argv)
    if args.verify_buffer_mb is not None and not args.verify:
        raise LinuxError("--verify-buffer-mb only applies with --verify")
    given = [f for f, v in (("--weights", args.weights), ("--bandwidths", args.bandwidths), ("--nodes", args.nodes))
             if v is not None]
    if given:
        raise LinuxError(f"{', '.join(given)} only apply with --tier-policy")
    if args.colors is None:
        raise LinuxError("memtint run needs --colors SPEC (colour the heap) or --tier-policy NAME (place it over "
                         "memory nodes)")
    if not argv:
        raise LinuxError("no program given: memtint run --colors SPEC -- PROGRAM ARGS...")
    _check_run_arguments(args, argv)
    if args.verify:  # its refusals, like run_coloured's, come before run_coloured's warnings
        _verify(args)
    started = time.time()
    run = run_coloured(argv, args.colors, machine=args.machine, mapping=args.mapping, space=args.space,
                       cpus=args.cpus, mode=args.mode, spill=args.spill, report=args.report, node=args.node,
                       on_warning=_warn)
    _warn(_report_not_written(args.report, started, run.exit_code, run.process.pid))
    return run.exit_code if run.exit_code is not None else 1


def _check_run_arguments(args: argparse.Namespace, argv: list[str]) -> None:
    """The arguments `run_coloured` checks, checked first, so that a mistake is the one line said;
    with --verify everything it refuses, so that nothing is refused after the timing (run_coloured
    checks them again, then warns)."""
    from memtint.linux.colour_spec import parse_list
    from memtint.linux.launch import check_can_colour, check_node, parse_cpus
    from memtint.linux.layout import colour_layout
    from memtint.linux.errors import LinuxError
    from memtint.linux.run import check_report_path, check_run

    layout = colour_layout(args.machine, args.space, mapping=args.mapping)
    parse_list(args.colors, count=layout.colours, where=layout.described)
    if args.cpus is not None:
        parse_cpus(args.cpus)
    check_node(args.node)
    check_report_path(args.report)
    check_can_colour(layout, args.mode)
    if args.verify:
        from memtint.linux import pagemap
        from memtint.linux.errors import PrivilegeError

        if pagemap.frame_access_error() is not None:  # the timer's own text names `memtint probe`, not this flag
            raise PrivilegeError("--verify needs root or CAP_SYS_ADMIN: it times loads to frames it finds through "
                                 "/proc/self/pagemap; without --verify this run needs no privilege (its colours lie "
                                 "inside a 2 MiB hugepage)")
        if args.verify_buffer_mb is not None and args.verify_buffer_mb < 1:
            # the timer's own message names its --buffer-mb, a flag of probe, not of run
            raise LinuxError(f"--verify-buffer-mb {args.verify_buffer_mb}: give at least 1 MiB")
        check_run(argv, args.colors, machine=args.machine, mapping=args.mapping, space=args.space, cpus=args.cpus,
                  mode=args.mode, spill=args.spill, report=args.report, node=args.node)


def _report_not_written(report: str | None, started: float, exit_code: int | None, pid: int) -> str | None:
    """libmemtint writes ``--report`` from the exit handlers of each process it is loaded in,
    which ``_exit`` or a signal skip, and a process it never loaded in writes none
    (`launch.no_report_reason`): said when the program (process ``pid``) left no report of its
    own, so that no report, an older one or a child's does not pass for the program's."""
    import glob
    import json
    import stat

    if not report:
        return None
    why = no_report_reason(pid, exit_code)
    own = report.replace("%p", str(pid))
    try:
        st = os.stat(own)
    except OSError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        return None  # a device or FIFO cannot tell
    if st is not None and st.st_mtime >= started - 0.05:  # file times are a tick (up to 10 ms) coarse
        try:
            with open(own, encoding="utf-8") as f:
                writer = json.load(f)
        except (OSError, ValueError, RecursionError):
            return None
        if not isinstance(writer, dict) or writer.get("pid") in (None, pid):
            return None
        return (f"--report {own} is the report of PID {writer['pid']} ({writer.get('comm') or '?'}), a process the "
                f"program started, not the program's: {why}; with %p in the path each process writes its own")
    others = glob.glob(glob.escape(report).replace("%p", "*")) if "%p" in report else []
    beside = f" (the reports beside it are of the processes it started: {len(others)})" if others else ""
    older = " (the file there is older: it is not this run's)" if st is not None else ""
    return f"--report {own} was not written{older}{beside}: {why}"


def _verify(args: argparse.Namespace) -> None:
    """`run --verify`: the isolation check's figures and verdict, on stderr."""
    from rich.console import Console
    from memtint.tables import _Table as Table

    from memtint.linux.colour_spec import format_list
    from memtint.linux.isolation import ISOLATED, NOT_ISOLATED, verify_isolation

    err = Console(stderr=True)
    buffer_mb = ISOLATION_BUFFER_MB if args.verify_buffer_mb is None else args.verify_buffer_mb
    with err.status("checking isolation: timing pairs of loads"):
        report = verify_isolation(args.machine, args.mapping, args.space, args.colors, buffer_mb=buffer_mb)
    table = Table(title=f"Isolation of colours {format_list(report.colours)} from {format_list(report.other_colours)} "
                  f"({report.space} colours of {report.machine}, {report.frames} frames, {report.seconds:.1f} s)",
                  title_justify="left")
    table.add_column("pairs of lines", no_wrap=True)
    for column in ("n", "median ns", "spread", "slow", "one bank by mapping"):
        table.add_column(column, justify="right")
    banks = {"control": "same bank", "across": "nearest bank", "baseline": "other banks"}
    for p in report.populations.values():
        table.add_row(f"{p.name} ({banks[p.name]})", str(p.count), f"{p.median_ns:.1f}", f"{p.spread_ns:.1f}",
                      f"{100 * p.slow_share:.1f} %", str(p.same_bank_by_mapping))
    err.print(table)
    style = {ISOLATED: "green", NOT_ISOLATED: "red"}.get(report.verdict, "yellow")
    err.print(f"[bold {style}]{report.verdict}[/]: {report.reason} (slow: over {report.threshold_ns:.1f} ns, twice)",
              highlight=False)


def _mix_os_options(settings: list[tuple[list[str], Any]] | None) -> dict[str, Any] | None:
    """run-mix's `--set`: the policy's [os] options; a program's machine is its --machine file."""
    from memtint.cli import _os_settings
    from memtint.linux.errors import LinuxError

    for path, _ in settings or []:
        if path[0] != "os":
            raise LinuxError(f"--set {'.'.join(path)}: run-mix takes only [os] options (os.KEY=VALUE), which shape the "
                             "policy's colours; a machine's settings come from its --machine TOML")
    return _os_settings(settings, policies_from="--policy")


def _run_mix(args: argparse.Namespace) -> int:
    from rich.console import Console
    from memtint.tables import _Table as Table

    commands = split_commands(_argv(args.command))
    os_options = _mix_os_options(args.set)
    # before any program runs: a JSON that cannot be written would lose the whole run
    env = dict(os.environ)
    check_outputs({"--json": args.json}, [*(p for c in commands for p in command_inputs(c, env)), *_config_files(args)],
                  inputs_are_files=False)
    err = Console(stderr=True)
    status = None
    finished: set[int] = set()

    def progress(runs) -> None:
        nonlocal status
        for i, r in enumerate(runs):
            if r.exit_code is not None and i not in finished:
                finished.add(i)
                err.print(f"program {i} ({escape(r.argv[0])}) finished: exit {r.exit_code} after {r.wall_seconds:.2f} s")
        running = sum(r.exit_code is None for r in runs)
        if err.is_terminal:
            text = f"{running} of {len(runs)} programs running, {time.monotonic() - runs[0].started:.1f} s"
            if status is None:
                status = err.status(text)
                status.start()
            else:
                status.update(text)

    try:
        result = run_mix(commands, args.policy, machine=args.machine, mapping=args.mapping, os=os_options, cpus=args.cpus,
                         mode=args.mode, spill=args.spill, on_progress=progress, on_warning=_warn,
                         stdout=sys.stderr.fileno() if args.json == "-" else None)
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
        from memtint.tables import output_console
        output_console().print(table)
    return max((p["exit_code"] for p in result["programs"]), default=0)


def _run_tiered(args: argparse.Namespace, argv: list[str]) -> int:
    from memtint.linux.errors import LinuxError
    from memtint.linux.launch import parse_cpus
    from memtint.linux.numa import numa_system
    from memtint.linux.tier_run import plan_tiering, run_tiered

    if not argv:
        raise LinuxError("no program given: memtint run --tier-policy NAME -- PROGRAM ARGS...")
    if not MIN_PERIOD_S <= args.period <= MAX_PERIOD_S:  # nan never looked; 1e-9 spun a core
        raise LinuxError(f"--period {args.period}: give a number of seconds between {MIN_PERIOD_S} and "
                         f"{MAX_PERIOD_S:.0f} (a day)")
    if args.migration_limit < 0:
        raise LinuxError(f"--migration-limit {args.migration_limit}: must be 0 or more pages")
    system = numa_system()
    plan = plan_tiering(system, args.tier_policy, weights=args.weights, bandwidths=args.bandwidths,
                        nodes=args.nodes, limit=args.migration_limit)
    cpus = parse_cpus(args.cpus) if args.cpus else None
    say = lambda text: sys.stderr.write(f"memtint: {text}\n")  # noqa: E731
    run = run_tiered(argv, plan, system, cpus=cpus, period=args.period, on_message=say)
    from memtint.linux.tier_policies import NO_WEIGHTS, POLICIES

    weighted = POLICIES[plan.policy].weights != NO_WEIGHTS  # 1:1 or local policies take none
    say(f"{plan.policy} over {', '.join(f'node{n}' for n in plan.nodes)}"
        + (f" (weights {':'.join(map(str, plan.weights))}, {plan.weights_source})" if weighted else "")
        + f"; program exit {run.exit_code} after {run.wall_seconds:.2f} s")
    if run.daemon is not None:
        d = run.daemon
        failed = ", ".join(f"{k} {v}" for k, v in sorted(d.pages_failed.items())) or "none"
        say(f"daemon: {d.periods} looks, {d.chunks} chunks placed, {d.pages_moved} pages moved (refused by the "
            f"kernel: {failed}); gate admitted {d.gate_admitted}, refused {d.gate_refused}; pages at the last look: "
            + (", ".join(f"node{n} {c}" for n, c in d.pages_per_node.items()) or "none"))
    if run.changed:
        say("restored " + ", ".join(system.path(c) for c in run.changed)
            + (" except: " + "; ".join(run.restore_failures) if run.restore_failures else ""))
    if run.restore_failures:
        _warn("could not restore: " + "; ".join(run.restore_failures))
        return run.exit_code or 1
    return run.exit_code if run.exit_code is not None else 1


def _check_probe_memory(system: Any, nodes: list[int], size: int, given: str) -> None:
    """Two arrays of ``size`` bytes bound to each node in turn must fit in what the node has free
    and in the memory cgroup's room: beyond, mbind's strict binding ends in an allocation error or
    the OOM killer (exit 137 and no word)."""
    from memtint.linux.errors import LinuxError
    from memtint.probe.linux import read_meminfo

    need = 2 * size
    meminfo = read_meminfo()
    available = meminfo.get("MemAvailable")
    if available is not None and need > available:
        raise LinuxError(f"--size {given}: the two arrays need {need >> 20} MiB, more than the {available >> 20} MiB "
                         f"available (MemAvailable in /proc/meminfo): give a smaller --size, e.g. "
                         f"{max(available // 4 >> 20, 1)}M")
    # A node's own figures, where the nodes account for the machine's memory (a VM's hot-plugged
    # memory can sit outside every node's meminfo).
    totals = [system.node_memory_bytes(n) for n in system.memory_nodes()]
    if None in totals or abs(sum(totals) - meminfo.get("MemTotal", 0)) > 0.1 * meminfo.get("MemTotal", 0):
        nodes = []
    for node in nodes:
        free = system.node_free_bytes(node)
        if free is not None and need > free:
            raise LinuxError(f"--size {given}: the two arrays need {need >> 20} MiB on node {node}, which has "
                             f"{free >> 20} MiB free (MemFree + Inactive(file) in its meminfo): give a smaller --size, "
                             f"e.g. {max(free // 4 >> 20, 1)}M")
    room = _cgroup_room()
    if room is not None and need > room:
        raise LinuxError(f"--size {given}: the two arrays need {need >> 20} MiB, and this process's memory cgroup has "
                         f"{room >> 20} MiB left under memory.max: give a smaller --size, e.g. {max(room // 4 >> 20, 1)}M")


def _cgroup_room() -> int | None:
    """Bytes left under this process's cgroup v2 memory.max (None: no limit, or not cgroup v2)."""
    try:
        with open("/proc/self/cgroup", encoding="utf-8") as f:
            path = next((line.split(":", 2)[2].strip() for line in f if line.startswith("0::")), None)
        if path is None:
            return None
        base = os.path.join("/sys/fs/cgroup", path.lstrip("/"))
        with open(os.path.join(base, "memory.max"), encoding="utf-8") as f:
            limit = f.read().strip()
        if limit == "max":
            return None
        with open(os.path.join(base, "memory.current"), encoding="utf-8") as f:
            return max(int(limit) - int(f.read().strip()), 0)
    except (OSError, ValueError):
        return None


def _numa_probe(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    from memtint.tables import _Table as Table

    from memtint.cli import _size
    from memtint.linux.errors import LinuxError
    from memtint.linux.numa import kernel_nodes_text, numa_system
    from memtint.linux.numa_probe import probe
    from memtint.linux.tier_run import _nodes
    from memtint.linux.tiering import kernel_auto_weights, weights_from_bandwidths

    try:
        size = _size(args.size)
    except argparse.ArgumentTypeError as error:
        raise LinuxError(f"--size {args.size}: {error}") from None
    from memtint.linux.numa_probe import PAGE_BYTES

    # Every value checked before the banner and the progress bar (0 threads used to mean "all").
    from memtint.linux.numa_probe import REPEATS_MAX, host_llc_bytes, size_warnings

    if not 1 <= args.repeats <= REPEATS_MAX:
        raise LinuxError(f"--repeats {args.repeats}: give 1 to {REPEATS_MAX} passes per node (the figure is the best "
                         "pass)")
    if args.threads is not None and args.threads < 1:
        raise LinuxError(f"--threads {args.threads}: give at least 1 copy thread")
    threads = args.threads or len(os.sched_getaffinity(0))
    if size < PAGE_BYTES * threads:
        raise LinuxError(f"--size {args.size}: each of the {threads} copy threads needs a page of each array: give at "
                         f"least {PAGE_BYTES * threads} bytes")
    check_outputs({"--json": args.json}, [])
    for warning in size_warnings(size, threads, len(os.sched_getaffinity(0)), host_llc_bytes()):
        _warn(warning)
    from memtint.linux.hypervisor import detect_hypervisor

    if (why := detect_hypervisor()):  # the figures are the guest's nodes, on whatever memory the host gives
        _warn(f"running in a virtual machine ({why}): the memory nodes are the guest's and their bandwidth is what "
              "the host lets through; the figures need not match the machine's own nodes")
    system = numa_system()
    nodes = _nodes(system, args.nodes)
    _check_probe_memory(system, nodes, size, args.size)
    err = Console(stderr=True)
    err.print(f"measuring {kernel_nodes_text(nodes)}: STREAM Copy, 2 arrays of {size >> 20} MiB bound to each node, "
              f"best of {args.repeats}")
    with Progress(TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=err, transient=False) as progress:
        task = progress.add_task("numa-probe", total=len(nodes) * args.repeats)
        results = probe(system, nodes, size=size, repeats=args.repeats, threads=args.threads,
                        advance=lambda: progress.advance(task))
    figures = [r.gbs for r in results]
    summary = {
        "kind": "numa-probe",
        "kernel": "STREAM Copy (numpy copyto), 16 bytes per element, best pass",
        "nodes": [{"node": r.node, "gbs": r.gbs, "bytes_per_pass": r.bytes_per_pass, "repeats": r.repeats,
                   "threads": r.threads, "pages_on_node": r.on_node_fraction} for r in results],
        "bandwidths_option": ",".join(f"{r.node}={r.gbs:.1f}" for r in results),
        "thesis_weights": weights_from_bandwidths(figures) if len(results) > 1 else [1],
        "kernel_auto_weights": kernel_auto_weights(figures) if len(results) > 1 else [1],
    }
    if args.json:
        _write_json(args.json, summary)
        if args.json == "-":
            return 0
    table = Table(title="Memory bandwidth per node (STREAM Copy)", title_justify="left")
    for column in ("node", "GB/s", "threads", "pages on the node"):
        table.add_column(column, justify="right")
    for r in results:
        table.add_row(f"node{r.node}", f"{r.gbs:.1f}", str(r.threads), f"{100 * r.on_node_fraction:.0f} %")
    from memtint.tables import output_console
    output_console().print(table)
    for r in results:
        if r.on_node_fraction < 0.99:
            _warn(f"only {100 * r.on_node_fraction:.0f} % of the arrays' pages are on node{r.node}: its figure mixes "
                  "nodes")
    if len(results) < 2:
        print(f"node{results[0].node}: {results[0].gbs:.1f} GB/s. One memory node: no bandwidth ratio, nothing to "
              "place.")
    else:
        print(f"--bandwidths {summary['bandwidths_option']}  (the thesis's D:N "
              f"{':'.join(map(str, summary['thesis_weights']))}; Linux's auto weights would be "
              f"{':'.join(map(str, summary['kernel_auto_weights']))})")
    return 0


def _refresh_probe(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    from memtint.tables import _Table as Table

    from memtint.linux import refresh_probe

    from memtint.linux.errors import LinuxError

    if args.plot:  # before the measurement, not after it: matplotlib picks the format by the suffix
        suffix = os.path.splitext(args.plot)[1].lstrip(".").lower()
        if suffix not in refresh_probe.PLOT_FORMATS:
            raise LinuxError(f"--plot {args.plot}: give a file name ending in one of "
                             + ", ".join(f".{f}" for f in refresh_probe.PLOT_FORMATS) + " (the suffix is the format)")
    check_outputs({"--json": args.json, "--plot": args.plot}, [])
    refresh_probe.check_arguments(args.rounds, args.samples, args.threshold)
    err = Console(stderr=True)
    with Progress(TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=err, transient=False) as progress:
        task = progress.add_task("refresh-probe", total=args.rounds)
        result = refresh_probe.probe(args.rounds, args.samples, args.threshold, advance=lambda: progress.advance(task))
    summary = result.summary()
    if args.plot:
        refresh_probe.plot(result, args.plot)
    if args.json:
        _write_json(args.json, summary)
        if args.json == "-":
            return 0
    table = Table(title="DRAM refresh seen from user space", title_justify="left", show_header=False)
    table.add_column("metric", style="bold")
    table.add_column("value")
    table.add_row("Loads", f"{result.loads:,} in {len(result.rounds)} rounds, median {result.median_ns:.0f} ns")
    table.add_row("Slow loads", f"{result.slow_loads:,} (over {args.threshold:g} x the median)")
    if result.period_ns:
        table.add_row("Period", f"{result.period_ns / 1000:.3f} µs (strength {result.strength:.2f} of 1); nearest: "
                                f"{result.nearest}")
        others = [f"{p / 1000:.3f} µs ({v:.2f})" for p, v in result.peaks if abs(p - result.period_ns) > 20]
        if others:
            table.add_row("", "other peaks: " + ", ".join(others))
    else:
        table.add_row("Period", f"none found: {result.no_period}")
    table.add_row("Stall", f"median {result.stall_median_ns:.0f} ns, p90 {result.stall_p90_ns:.0f} ns above the median load")
    from memtint.tables import output_console
    output_console().print(table)
    print("limits of the probe:")
    for limit in result.limits:
        print(f"  - {limit}")
    if args.plot:
        print(f"plot: {args.plot}")
    return 0

