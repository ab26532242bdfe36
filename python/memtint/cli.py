"""The `memtint` command: a thin layer over :mod:`memtint.api` (parse flags, call the API,
print tables). Every error a user can cause ends as one line, `memtint: error: <message>`, on
stderr with exit status 2."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import re
import sys
import threading
import time
from typing import Any, Callable, NoReturn, Sequence

from memtint import api, stopping
from memtint.linux.errors import LinuxError
from memtint.outputs import check_outputs, write_text
from memtint.toml_files import array_key_line as _array_key_line, array_table_line as _array_table_line, in_its_file, \
    key_line as _key_line
from memtint.messages import escaped
from memtint.stopping import Stopped

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class UsageError(Exception):
    """A user mistake found after parsing (a bad flag combination, an unreadable path)."""


class _Parser(argparse.ArgumentParser):
    """argparse, but its errors are the same one line as every other error."""

    def error(self, message: str, prog: str | None = None) -> NoReturn:
        sys.stderr.write(f"memtint: error: {escaped(message)} (see '{prog or self.prog} --help')\n")
        sys.exit(EXIT_USAGE)

    def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                   namespace: argparse.Namespace | None = None) -> argparse.Namespace:
        """argparse's, but arguments no option takes are blamed on the command they were given
        to, whose --help lists its options (the top-level parser finds them, after the command
        has parsed what it knows, and pointed to 'memtint --help')."""
        parsed, extra = self.parse_known_args(args, namespace)
        if extra:
            command = self._command_parser(parsed)
            message = f"unrecognized arguments: {' '.join(extra)}"
            if command is not None and command.prog.split()[-1] == "sweep" and any(
                    a.startswith(("--sample-", "--target-error")) for a in extra):
                message += ("; a sweep takes its sampling settings from the specification's sampling = {...} table "
                            "or --set sampling.KEY=VALUE (--sample: the defaults)")
            self.error(message, command.prog if command is not None else None)
        return parsed

    def _command_parser(self, parsed: argparse.Namespace) -> argparse.ArgumentParser | None:
        """The subcommand's parser that parsed ``parsed`` (by its handler), if any."""
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    if sub._defaults.get("handler") is getattr(parsed, "handler", None):
                        return sub
        return None

    def _get_option_tuples(self, option_string: str) -> list:
        # A prefix of two spellings of one option (--col: --colors, --colours) is that option, not
        # an ambiguity (Python 3.11's argparse calls it ambiguous).
        seen: set[int] = set()
        return [t for t in super()._get_option_tuples(option_string) if not (id(t[0]) in seen or seen.add(id(t[0])))]


def _at_least(minimum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text, 0)  # 0x... accepted for addresses and sizes
        except ValueError:
            try:
                value = int(text)  # leading zeros
            except ValueError:
                raise argparse.ArgumentTypeError(f"expected an integer, got '{text}'") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        if value >= 2**63:  # the engine's counters and seeds are 64-bit (it read 1e20 as a float)
            raise argparse.ArgumentTypeError(f"'{text}' is more than a signed 64-bit integer holds (at most 2^63-1)")
        return value

    parse.__name__ = "integer"
    return parse


def _size(text: str) -> int:
    """A byte count, optionally with a binary suffix: 32768, 32K, 1M."""
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    m = re.fullmatch(r"\s*(\d+)\s*([KMG]?)(?:i?B)?\s*", text, re.IGNORECASE)
    if not m or int(m.group(1)) == 0:
        raise argparse.ArgumentTypeError(f"expected a positive size like 32768, 32K or 1M, got '{text}'")
    return int(m.group(1)) * units[m.group(2).upper()]


def _count(text: str) -> int:
    """An instruction count, optionally with a decimal suffix: 2000000, 2M, 1.5G."""
    from decimal import Decimal

    units = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9}
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMG]?)\s*", text.replace("_", ""), re.IGNORECASE)
    if not m:
        raise argparse.ArgumentTypeError(f"expected an instruction count like 2000000, 2M or 1.5G, got '{text}'")
    value = Decimal(m.group(1)) * units[m.group(2).upper()]
    if value != value.to_integral_value():  # 0.5 would become 0, which often means "no limit"
        raise argparse.ArgumentTypeError(f"expected a whole number of instructions, got '{text}' ({value})")
    if value >= 2**63:
        raise argparse.ArgumentTypeError(f"'{text}' is more instructions than a 64-bit counter holds")
    return int(value)


def _count_at_least(minimum: int) -> Callable[[str], int]:
    """An instruction count (:func:`_count`: 10M, 1.5G) of at least ``minimum``."""
    def parse(text: str) -> int:
        value = _count(text)
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    parse.__name__ = "count"
    return parse


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got '{text}'") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {value}")
    return value


def _set_value(raw: str) -> Any:
    """A `--set` value as a TOML file would write it (100_000, 'strided', {enabled = true},
    [0, 1]), else as JSON ({"enabled": true}), else the text itself (strided); a TOML date or
    time, which no setting takes, stays text."""
    import datetime

    from memtint.toml_files import tomllib

    def plain(v: Any) -> bool:
        if isinstance(v, dict):
            return all(plain(x) for x in v.values())
        if isinstance(v, list):
            return all(plain(x) for x in v)
        return not isinstance(v, (datetime.date, datetime.time))

    try:
        value = tomllib.loads(f"v = {raw}")["v"]
        if plain(value):
            return value
    except (tomllib.TOMLDecodeError, ValueError):
        pass
    try:
        return json.loads(raw)
    except ValueError:
        return raw


class _SetPath(list):
    """A `--set` key's path, keeping the value as typed (``raw``), which errors echo: 1e4 parses
    as 10000.0, and the user wrote 1e4."""

    raw: str = ""


def _setting(text: str) -> tuple[list[str], Any]:
    """`--set SECTION.KEY=VALUE`: a path into the machine table and a value (:func:`_set_value`:
    TOML, then JSON, else the text as a string)."""
    key, sep, raw = text.partition("=")
    path = _SetPath(part.strip() for part in key.split("."))
    path.raw = raw.strip()
    if not sep or len(path) < 2 or not all(path):
        raise argparse.ArgumentTypeError(
            f"expected SECTION.KEY=VALUE (e.g. controller.write_idle_drain_min=9), got '{text}'"
        )
    value = _set_value(raw)
    if isinstance(value, float) and not math.isfinite(value):  # 1e400 reads as inf; Infinity, NaN too
        raise argparse.ArgumentTypeError(f"{key}={raw}: not a finite number (NaN and infinities are not settings)")
    return path, value


def _overrides(settings: list[tuple[list[str], Any]] | None, base: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """A partial machine table from the `--set` settings that are not `os.*`, on top of `base`
    (the settings win)."""
    machine = [(path, value) for path, value in settings or [] if path[0] not in ("os", "sampling")]
    return _nested(machine, base)


def _os_settings(settings: list[tuple[list[str], Any]] | None, base: dict[str, Any] | None = None,
                 policies_from: str = "") -> dict[str, Any] | None:
    """The `os.*` settings of `--set` as an [os] table (without the `os.` prefix), on top of
    `base`; the engine checks the keys and names an unknown one. `policies_from` forbids
    `os.policy` where the policies come from elsewhere (and says where)."""
    os_settings = [(path[1:], value) for path, value in settings or [] if path[0] == "os"]
    if policies_from and any(path == ["policy"] for path, _ in os_settings):
        raise UsageError(f"--set os.policy: the policies come from {policies_from}, not from --set")
    return _nested(os_settings, base, "os.")


def _nested(settings: list[tuple[list[str], Any]], base: dict[str, Any] | None,
            prefix: str = "") -> dict[str, Any] | None:
    """``settings`` (paths below ``prefix``) set into a copy of ``base``; errors name the key as
    the user gave it (``--set os.policy.x``), prefix and all."""
    if not settings:
        return base
    table: dict[str, Any] = json.loads(json.dumps(base or {}))
    for path, value in settings:
        node = table
        for depth, part in enumerate(path[:-1], 1):
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise UsageError(f"--set {prefix}{'.'.join(path)}: '{prefix}{'.'.join(path[:depth])}' is a value, not "
                                 "a section")
            node = child
        node[path[-1]] = value
    return table


_MACHINE_SET_HELP = ("override one machine setting of the run (controller.*, cache.*, dram.*, cpu.*, e.g. "
                     "controller.write_idle_drain_min=9 or dram.channels=2; sections, keys and values as in machine TOMLs: "
                     "100_000, 'text', [0, 1], {key = 1}; a bare word is text); repeatable; docs/stats.md")
_SET_HELP = ("override one setting of the run: a machine setting (controller.*, cache.*, dram.*, cpu.*, e.g. "
             "controller.write_idle_drain_min=9 or dram.channels=2; sections and keys as in machine TOMLs) or an OS "
             "setting (os.*, e.g. os.colour_split=strided or os.ccps.delta=5; the [os] table of run files) or a "
             "sampling setting (sampling.*, e.g. sampling.unit=10000, which compare and sim also take as --sample-unit; implies sampling); "
             "values as TOML writes them (100_000, 'text', [0, 1], {key = 1}; a bare word is text); repeatable; docs/stats.md")


def add_sampling_arguments(parser: argparse.ArgumentParser, what: str = "every run") -> None:
    """The sampled-simulation flags (docs/stats.md, "Sampled comparisons"): ``--sample`` and the
    settings, any of which implies sampling. argparse checks only that counts are whole numbers;
    the engine checks the values against each other and the run, naming the key."""
    group = parser.add_argument_group("sampled simulation (SMARTS-style: estimates with 95 % intervals)")
    group.add_argument("--sample", action="store_true",
                       help=f"simulate {what} sampled: detailed units of instructions at a regular period, the "
                       "rest warmed functionally; results are estimates with 95 %% intervals (default: units of "
                       "20000 instructions after 30000 of detailed warm-up, every instructions/100 or unit + warming, whichever "
                       "is longer; docs/sampling.md)")
    group.add_argument("--sample-unit", type=_count_at_least(1), metavar="N",
                       help="instructions per measured unit of the slowest program (implies --sample; default 20000)")
    group.add_argument("--sample-period", type=_count_at_least(1), metavar="N",
                       help="instructions from one unit's start to the next (implies --sample; default instructions/100, at "
                       "least unit + warming)")
    group.add_argument("--sample-warming", type=_count_at_least(0), metavar="N",
                       help="instructions of detailed warm-up before each unit, not measured (implies --sample; "
                       "default 30000)")
    group.add_argument("--sample-functional", type=_count_at_least(0), metavar="N",
                       help="instructions of functional warming (caches, page tables) before each unit's detailed "
                       "warm-up; the rest of the gap is skipped (implies --sample; default: the whole gap)")
    group.add_argument("--sample-min-units", type=_at_least(1), metavar="N",
                       help="the fewest units a program faster than the slowest gets over its instructions: while it "
                       "measures, the periods shorten so that it has them (implies --sample; default 30)")
    group.add_argument("--sample-mode", choices=["periodic", "phases"],
                       help="periodic (SMARTS: a unit every period; several programs keep their relative progress) or "
                       "phases (SimPoint's phases as strata: the program's intervals clustered, units drawn in every "
                       "phase; one program per run) (implies --sample; default periodic)")
    group.add_argument("--sample-clusters", type=_at_least(1), metavar="K",
                       help="with --sample-mode phases: the most phases tried; the BIC picks how many are kept "
                       "(default 10)")
    group.add_argument("--sample-warm-prefetchers", action="store_const", const=True, default=None,
                       help="functional warming also trains the LLC prefetchers and installs their lines (implies "
                       "--sample; default off: docs/sampling.md has what it changes)")
    group.add_argument("--target-error", type=float, metavar="X",
                       help="relative error of each core's IPC to reach at 95 %% confidence (e.g. 0.02); when the first "
                       "pass misses it, the engine runs once more with the units its variation asks for, or warns that "
                       "the run is too short (implies --sample)")


def sampling_from_args(args: argparse.Namespace, base: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """The ``sampling`` table of the sampling flags (:func:`add_sampling_arguments`), over ``base``
    (a run file's or specification's table) or else :data:`memtint.sampling.DEFAULT_SAMPLING`;
    ``base`` as it is when no flag is given (None: a detailed run)."""
    from memtint.sampling import DEFAULT_SAMPLING

    given = {key: getattr(args, attr, None) for key, attr in (
        ("unit", "sample_unit"), ("period", "sample_period"), ("warming", "sample_warming"),
        ("functional", "sample_functional"), ("min_units", "sample_min_units"), ("target_error", "target_error"),
        ("mode", "sample_mode"), ("clusters", "sample_clusters"), ("warm_prefetchers", "sample_warm_prefetchers"))}
    given = {key: value for key, value in given.items() if value is not None}
    given = {**_sampling_settings(getattr(args, "set", None)), **given}
    if not given and not getattr(args, "sample", False):
        return base
    table = dict(base if base is not None else DEFAULT_SAMPLING)
    table.update(given)
    return table


def _sampling_settings(settings: list[tuple[list[str], Any]] | None) -> dict[str, Any]:
    """The `sampling.*` settings of `--set` (`--set sampling.unit=10000`, as `--sample-unit`); the
    engine checks the keys and names an unknown one."""
    out = {}
    for path, value in settings or []:
        if path[0] == "sampling":
            if len(path) != 2:
                raise UsageError(f"--set {'.'.join(path)}: the sampling table has no sections (sampling.KEY=VALUE)")
            out[path[1]] = value
    return out


def _registered_names() -> Callable[[str], str]:
    """For help texts: the names the engine registers for a kind of component (its catalogue,
    read once)."""
    try:
        catalogue = api.presets()
    except Exception:  # the help still works without the engine; `memtint presets` says why
        catalogue = {}
    return lambda kind: ", ".join(catalogue[kind]) if kind in catalogue else "see 'memtint presets'"


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="memtint",
        description="memtint: a memory-system simulator (DRAM timing, address mapping, page colouring).",
    )
    parser.add_argument("--version", action="version", version=f"memtint {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True

    dram = commands.add_parser(
        "dram",
        help="simulate a DRAM system on a trace or a generated workload",
        description="Simulate a DRAM system on a trace or a generated workload: closed loop (--outstanding "
        "requests in flight), or for a timed trace (dramsim3, dramsim2) each request at its cycle; "
        "print a summary and optionally write the full statistics as JSON (docs/stats.md).",
    )
    dram.add_argument("--machine", required=True, metavar="PRESET", help="machine preset or machine TOML file")
    dram.add_argument("--mapping", metavar="NAME|FILE", help="layout (e.g. RoBaRaCoCh), mapping preset or mapping TOML")
    _registered = _registered_names()
    dram.add_argument("--scheduler", metavar="NAME", help=f"{_registered('schedulers')} (see 'memtint presets')")
    dram.add_argument("--row-policy", metavar="NAME", help=_registered("row_policies"))
    dram.add_argument("--refresh", metavar="NAME", help=f"refresh manager: {_registered('refresh')}")
    workload = dram.add_mutually_exclusive_group(required=True)
    workload.add_argument("--trace", metavar="FILE", help="DRAM trace file (may be gzip-compressed)")
    workload.add_argument("--generate", metavar="KIND", choices=api.GENERATOR_KINDS,
                          help="generated workload: " + ", ".join(api.GENERATOR_KINDS))
    dram.add_argument("--format", choices=api.TRACE_FORMATS,
                      help=f"trace format (default: from a {_suffixes()} suffix, before any .gz, as `memtint sim "
                      "--export-dram` writes them, or dramsim2 for DRAMSim2's k6_*.trc, mase_*.trc and misc_*.trc; "
                      "else ramulator)")
    dram.add_argument("--requests", type=_at_least(1), metavar="N", help="requests to generate")
    dram.add_argument("--seed", type=_at_least(0), metavar="S", help="generator seed (default 1)")
    dram.add_argument("--read-fraction", type=_fraction, metavar="F", help="fraction of reads (0..1)")
    dram.add_argument("--footprint", type=_at_least(1), metavar="BYTES", help="generated footprint in bytes")
    dram.add_argument("--stride", type=_at_least(1), metavar="BYTES", help="stride in bytes (strided)")
    dram.add_argument("--streams", type=_at_least(1), metavar="N", help="concurrent sequential streams (stream only)")
    dram.add_argument("--banks", type=_at_least(1), metavar="N",
                      help="banks the row conflicts rotate over (conflict only; default 1)")
    dram.add_argument("--outstanding", type=_at_least(1), metavar="N", help="requests in flight (closed loop)")
    dram.add_argument("--read-queue", type=_at_least(1), metavar="N", help="controller read queue entries")
    dram.add_argument("--write-queue", type=_at_least(1), metavar="N", help="controller write queue entries")
    dram.add_argument("--sources", type=_at_least(1), metavar="N",
                      help="attribute request i to source i mod N, so that the application-aware schedulers "
                      "(par-bs, atlas, tcm, bliss, imps, ccps) see N applications (default 1)")
    dram.add_argument("--set", type=_setting, action="append", metavar="SECTION.KEY=VALUE", help=_MACHINE_SET_HELP)
    dram.add_argument("--check", action="store_true", help="run the independent timing checker")
    dram.add_argument("--cycle-by-cycle", action="store_true", help="disable event skipping (validation)")
    dram.add_argument(
        "--vector-isa",
        metavar="LEVEL",
        help="instruction set of the simulation loop: best (default), baseline, x86-64-v2, x86-64-v3; same results, other speed",
    )
    dram.add_argument("--json", metavar="OUT", help="write the full statistics JSON to OUT ('-' for stdout)")
    dram.add_argument("--export-drampower", metavar="DIR",
                      help="write the run's commands and device in DRAMPower's formats into DIR (new or empty), "
                           "to check the energy with DRAMPower (docs/energy.md)")
    dram.set_defaults(handler=_dram)

    presets = commands.add_parser(
        "presets",
        help="list machines, devices, mappings and components",
        description="List the presets and registered components the engine knows.",
    )
    presets.add_argument("--json", action="store_true", help="print the raw catalogue as JSON")
    presets.add_argument("--same-placement", metavar="MACHINE",
                         help="which placement policies place every page alike on MACHINE (one program per core; "
                         "measured by a short probe run under each)")
    presets.set_defaults(handler=_presets)

    sim = commands.add_parser(
        "sim",
        help="run one multi-programmed configuration (TOML)",
        description="Run the programs of a configuration file (one per core) under its page-placement "
        "policy; print per-core results and optionally write the statistics JSON (docs/stats.md).",
    )
    sim.add_argument("config", metavar="CONFIG", help="run configuration TOML (e.g. configs/runs/example.toml; schema in docs/stats.md)")
    sim.add_argument("--set", type=_setting, action="append", metavar="SECTION.KEY=VALUE",
                     help=_SET_HELP + "; applied over the configuration's [overrides]")
    sim.add_argument("--json", metavar="OUT", help="write the full statistics JSON to OUT ('-' for stdout)")
    sim.add_argument("--export-dram", metavar="FILE",
                     help="write the DRAM request stream the run generated to FILE (physical address, read or write, "
                     "the DRAM cycle it entered a controller), as `memtint dram --trace` reads it")
    sim.add_argument("--export-format", choices=api.TRACE_FORMATS, default=None,
                     help="the export's format: dramsim3 (timed: '0xADDR READ|WRITE CYCLE'; default, or from a "
                     f"{_suffixes()} suffix), ramulator (untimed: '0xADDR R|W'), ramulator2 (untimed: "
                     "'LD|ST 0xADDR', Ramulator 2's LoadStoreTrace) or dramsim2 (timed: '0xADDR P_MEM_RD|P_MEM_WR "
                     "CYCLE', DRAMSim2's k6 trace)")
    add_sampling_arguments(sim, "the run")
    sim.set_defaults(handler=_sim)

    rt = commands.add_parser(
        "rt",
        help="run periodic real-time tasks through the simulated DRAM (EDF, Colored Refresh, its server)",
        description="Run a real-time task set (TOML: machine, schedule, refresh, [[tasks]] with period, wcet, compute and "
        "loads per job, [[servers]] for crs) on one core with each job's loads through the simulated DRAM; print each "
        "task's run time, load latency, deadline misses and loads that met a refreshing rank. Schedules: edf (pages "
        "over every rank), rm (rate monotonic, pages as under edf), colored (Colored Refresh: cyclic-executive "
        "frames and rank colours the refresh never touches while the task runs) and crs (the Colored Refresh "
        "Server). See docs/refresh.md.",
    )
    rt.add_argument("config", metavar="CONFIG", help="task-set TOML (e.g. configs/runs/colored-refresh.toml)")
    rt.add_argument("--set", type=_setting, action="append", metavar="SECTION.KEY=VALUE",
                    help=_MACHINE_SET_HELP + "; applied over the configuration's [overrides]")
    rt.add_argument("--schedule", choices=("edf", "rm", "colored", "crs"), help="override the configuration's schedule")
    rt.add_argument("--refresh", choices=("scheme", "none", "all-bank", "fgr2", "fgr4"),
                    help="override the configuration's refresh")
    rt.add_argument("--json", metavar="OUT", help="write the results JSON to OUT ('-' for stdout)")
    rt.set_defaults(handler=_rt)

    compare = commands.add_parser(
        "compare",
        help="compare page-placement policies on a mix (weighted speedup, slowdowns)",
        description="Run a mix under several policies and each program alone; print weighted speedup, "
        "harmonic speedup, maximum slowdown, row-buffer miss rate and per-program slowdowns.",
    )
    compare.add_argument("--machine", required=True, metavar="PRESET", help="machine preset or machine TOML file")
    compare.add_argument("--mix", required=True, metavar="P1,P2,...",
                         help="programs: built-in profiles (stream, random, copy, light; with parameters as "
                         "light:reads_pki=2), programs of the workload suite by name (triad, bfs, chase, ...; "
                         "workloads/README.md) or CPU trace files; or a named mix from configs/mixes, or a mix file "
                         "in their format (a .toml with programs = [...])")
    compare.add_argument("--policies", default="buddy,bpm", metavar="P1,P2,...",
                         help="placement policies (default buddy,bpm; see 'memtint presets'); policy+scheduler runs one under "
                              "that controller scheduler (buddy,buddy+tcm), divided by the same alone runs")
    compare.add_argument("--instructions", type=_count_at_least(1), default=10_000_000, metavar="N",
                         help="instructions per core (default 10M)")
    compare.add_argument("--warmup", type=_count_at_least(0), default=None, metavar="N",
                         help="instructions per core run before statistics start, through page tables and caches "
                         "without DRAM timing (default 20M; 0: none)")
    compare.add_argument("--seed", type=_at_least(0), default=1, metavar="S", help="seed (default 1)")
    compare.add_argument("--baseline", default=None, metavar="POLICY",
                         help="policy of the alone runs (default buddy; local on a machine with several memory nodes)")
    compare.add_argument("--mapping", metavar="NAME|FILE", help="address mapping (default: the machine's)")
    compare.add_argument("--scheduler", metavar="NAME", help="memory scheduler (default: the machine's)")
    compare.add_argument("--set", type=_setting, action="append", metavar="SECTION.KEY=VALUE",
                         help=_SET_HELP + "; machine and sampling settings are used by the alone runs too, os.* "
                              "settings by the policies' runs only (each alone run is its program alone under the "
                              "baseline with the OS defaults)")
    compare.add_argument("--strict", action="store_true", help="running out of a process's colours is an error")
    compare.add_argument("--no-cache", action="store_true", help="do not reuse or store alone runs")
    compare.add_argument("--json", metavar="OUT", help="write the comparison JSON to OUT ('-' for stdout)")
    compare.add_argument("--csv", metavar="OUT", help="write one row per policy and program to OUT")
    add_sampling_arguments(compare, "every run (alone and shared)")
    compare.set_defaults(handler=_compare)

    sweep = commands.add_parser(
        "sweep",
        help="run many comparisons (machines x mixes x policies x seeds) into a result store",
        description="Run the comparisons of a sweep specification (docs/sweeps.md) on a process pool or Ray, "
        "storing one row per core per run as Parquet under --out. Runs already stored are skipped, so an "
        "interrupted sweep resumes. Ends with the summary table and a report of this sweep's runs (plots, what "
        "the numbers mean) in DIR/report, as memtint report writes it. Exits 1 if any run failed (failures are "
        "recorded with their error).",
    )
    sweep.add_argument("spec", metavar="SPEC.toml", help="sweep specification")
    sweep.add_argument("--out", required=True, metavar="DIR", help="result directory (created; reused to resume)")
    where = sweep.add_mutually_exclusive_group()
    where.add_argument("--jobs", type=_at_least(1), metavar="N", help="worker processes (default: CPU count)")
    where.add_argument("--ray", metavar="auto|ADDRESS",
                       help="run on Ray: 'auto' (the cluster in $RAY_ADDRESS, else a Ray started here, else a local "
                       "one) or a cluster address; needs pip install 'memtint[ray]'")
    sweep.add_argument("--limit", type=_at_least(1), metavar="N", help="run at most N of the pending runs")
    sweep.add_argument("--batch-size", type=_at_least(1), default=32, metavar="N",
                       help="runs per stored batch (default 32; a batch is also written every 30 s)")
    sweep.add_argument("--set", type=_setting, action="append", metavar="SECTION.KEY=VALUE",
                       help=_SET_HELP + "; over the specification's [overrides] and [os], for every run")
    sweep.add_argument("--no-report", action="store_true",
                       help="leave out the report (DIR/report); memtint report DIR writes it later")
    sweep.add_argument("--sample", action="store_true",
                       help="simulate every run sampled (estimates with 95 %% intervals): the specification's "
                       "sampling table, else memtint.sampling.DEFAULT_SAMPLING: units of 20000 instructions after 30000 "
                       "of detailed warm-up (docs/sampling.md)")
    sweep.set_defaults(handler=_sweep)

    advise = commands.add_parser(
        "advise",
        help="which policy for a mix: classify each program (HVR's classes) and pick by rules",
        description="Run each program alone with HVR's accessed-bit sampling, classify it (CCF, LLCT, LLCM, "
        "LLCH; docs/advisor.md), and pick the policy and the coalescing for the mix from HVR's rules "
        "(configs/rules/hvr-paper.toml) or mined ones (memtint mine-rules). --verify runs the candidates.",
    )
    advise.add_argument("programs", nargs="+", metavar="PROGRAM",
                        help="trace files or workload profiles, one per core (or one named mix, or a mix file: a .toml "
                        "with programs = [...])")
    advise.add_argument("--machine", default="i7-860", metavar="PRESET",
                        help="machine preset or TOML file (default i7-860, HVR's)")
    advise.add_argument("--rules", metavar="FILE", help="rules file (default: the paper's R1-R6)")
    advise.add_argument("--multithreaded", action="store_true",
                        help="the programs are the threads of one multi-threaded workload (the paper's R4)")
    advise.add_argument("--classify-instructions", type=_count_at_least(1), default=None, metavar="N",
                        help="instructions of each program's classification run (default 10,000,000: "
                        "several sampling windows)")
    advise.add_argument("--instructions", type=_count_at_least(1), default=None, metavar="N",
                        help="with --verify: instructions per core of each run (default 10,000,000)")
    advise.add_argument("--warmup", type=_count_at_least(0), default=None, metavar="N",
                        help="functional warm-up per core before each run (default 20,000,000)")
    advise.add_argument("--verify", action="store_true",
                        help="run the mix under buddy, every policy the rules can pick and the pick with its "
                        "coalescing, and show the measured weighted speedups")
    advise.add_argument("--json", metavar="OUT", help="write the recommendation as JSON to OUT ('-' for stdout)")
    advise.set_defaults(handler=_advise)

    mine = commands.add_parser(
        "mine-rules",
        help="mine HVR-style rules (classes -> best policy) from a sweep's results and measure them",
        description="Classify every program of a sweep result store (each alone, HVR's classes), split the "
        "mixes into training and held-out halves, mine rules in the paper's decision order from the training "
        "half (support, confidence), write them as a rules file for memtint advise --rules, and measure them "
        "and the paper's rules on the held-out mixes: how often the pick is the best policy, and the weighted "
        "speedup it loses (docs/advisor.md).",
    )
    mine.add_argument("results", metavar="RESULTS_DIR", help="sweep result directory (memtint sweep --out)")
    mine.add_argument("--out", required=True, metavar="RULES.toml", help="where to write the mined rules")
    mine.add_argument("--holdout", type=float, default=None, metavar="F",
                      help="share of the mixes held out for measuring (default 0.5; not with --folds)")
    mine.add_argument("--folds", type=_at_least(2), metavar="K",
                      help="instead of one held-out share: mine from every mix and measure the mined rules by K-fold "
                      "cross-validation (each mix judged by rules mined from the other folds); the paper's rules and "
                      "the fixed policies are measured on every mix")
    mine.add_argument("--seed", type=_at_least(0), default=1, metavar="S", help="seed of the split (default 1)")
    mine.add_argument("--rules", metavar="FILE", help="rules to measure beside the mined ones (default: the paper's)")
    mine.add_argument("--classify-instructions", type=_count_at_least(1), default=None, metavar="N",
                      help="instructions of each program's classification run, as advise's (default 10,000,000: "
                      "several sampling windows)")
    mine.add_argument("--json", metavar="OUT", help="write the study (leaves, measures) as JSON to OUT")
    mine.set_defaults(handler=_mine_rules)

    report = commands.add_parser(
        "report",
        help="write an HTML report with plots and a Markdown summary of sweep results",
        description="Read a sweep result directory and write index.html (PNG plots: per-mix weighted speedup "
        "and maximum slowdown normalised to the baseline policy, their distribution over mixes, row-buffer "
        "miss rates, per-core slowdowns) and summary.md (averages and maxima per policy).",
    )
    report.add_argument("results", metavar="RESULTS_DIR", help="sweep result directory (memtint sweep --out)")
    report.add_argument("--out", metavar="DIR", help="where to write the report (default RESULTS_DIR/report)")
    report.add_argument("--baseline", metavar="POLICY",
                        help="policy to normalise to (default: the alone runs' policy, usually buddy)")
    report.set_defaults(handler=_report)

    convert = commands.add_parser(
        "convert",
        help="convert a CPU trace between Ramulator text and memtint's binary format",
        description="Convert a Ramulator CPU trace (text, plain or gzip) to memtint's compact binary .mtt "
        "format (the records are gzip-compressed too when OUT ends in .gz), or, with --to ramulator, "
        "a .mtt (or text) trace to Ramulator text (gzip when OUT ends in .gz).",
    )
    convert.add_argument("--to", choices=("mtt", "ramulator"), default="mtt", help="output format (default mtt)")
    convert.add_argument("input", metavar="IN")
    convert.add_argument("output", metavar="OUT")
    convert.set_defaults(handler=_convert)

    trace_stats = commands.add_parser(
        "trace-stats",
        help="classify CPU traces: intensity, footprint, reuse distances, row locality and BLP alone",
        description="Statistics of CPU traces (Ramulator text or .mtt; or profiles with --instructions): "
        "reads and writebacks per kilo-instruction, footprint, reuse-distance summary and, with --machine, "
        "the row-buffer hit rate and bank-level parallelism each shows running alone there; with labels "
        "(memory intensity, row locality, estimated LLC sensitivity). Fields: docs/stats.md.",
    )
    trace_stats.add_argument("files", nargs="+", metavar="FILE", help="CPU trace files or built-in profiles")
    trace_stats.add_argument("--machine", metavar="PRESET", help="also run each alone on this machine")
    trace_stats.add_argument("--instructions", type=_count_at_least(1), metavar="N",
                             help="count the first N instructions (and run N alone; default: the trace, "
                             "at most 10 M for the alone run)")
    trace_stats.add_argument("--policy", metavar="NAME",
                             help="placement policy of the alone run (default: the machine's Linux-like one, buddy or "
                             "local on several nodes; needs --machine)")
    trace_stats.add_argument("--no-reuse", action="store_true", help="skip the reuse-distance analysis")
    trace_stats.add_argument("--seed", type=_at_least(0), default=None,
                             help="seed of the built-in profiles and of the alone run (default 1)")
    trace_stats.add_argument("--json", metavar="OUT", help="write the statistics as JSON ('-' for stdout)")
    trace_stats.set_defaults(handler=_trace_stats)

    trace = commands.add_parser(
        "trace",
        help="capture cache-filtered CPU traces of a real program (Valgrind)",
        description="Run PROGRAM under memtint's Valgrind tool: its data accesses go through a private "
        "L1/L2 per thread inside the traced process, and each L2 miss is written as a Ramulator-style record "
        "to PREFIX.t<N>.mtt (-o; one file per thread, N = 1 for the main thread, then in creation order). "
        "Exit status: 0, 2 on errors, 3 when the program itself exited non-zero or was killed (the traces "
        "are kept and flagged in the summary). See docs/tracing.md.",
    )
    trace.add_argument("-o", "--output", metavar="PREFIX",
                       help="output prefix (default: the program's name in the current directory)")
    trace.add_argument("--warmup", type=_count, default=0, metavar="N",
                       help="instructions (all threads; 100M = 10^8) that fill the caches before anything is written")
    trace.add_argument("--limit", type=_count, default=0, metavar="N",
                       help="instructions (all threads) to trace after the warm-up; 0 = to the end")
    trace.add_argument("--at-limit", choices=("exit", "continue"), default="exit",
                       help="at the limit: end the program (default) or let it run on untraced")
    trace.add_argument("--l1-size", type=_size, default=32 * 1024, metavar="BYTES", help="L1D size (default 32K)")
    trace.add_argument("--l1-ways", type=_at_least(1), default=8, metavar="N", help="L1D associativity (default 8)")
    trace.add_argument("--l2-size", type=_size, default=1024 * 1024, metavar="BYTES", help="L2 size (default 1M)")
    trace.add_argument("--l2-ways", type=_at_least(1), default=16, metavar="N", help="L2 associativity (default 16)")
    trace.add_argument("--line-size", type=_size, default=64, metavar="BYTES", help="line size (default 64)")
    trace.add_argument("--json", metavar="FILE",
                       help="also write the summary as JSON ('-' for stdout, after anything the program printed there)")
    trace.add_argument("command", nargs=argparse.REMAINDER, metavar="-- PROGRAM ARGS",
                       help="the program to trace and its arguments")
    trace.set_defaults(handler=_trace)

    demo = commands.add_parser(
        "demo",
        help="the default experiment: 6 mixes x 6 placement policies on the i7-860, with a report",
        description="Run the demo sweep (configs/sweeps/demo.toml: six 4-program mixes drawn by measured "
        "class from the captured workload suite and the built-in profiles, on the i7-860 under buddy, bpm, bpm-plus, bpm-plus-balanced, cache-only and a-vp), print the summary table and write "
        "the report under --out. With --tiering: one bandwidth-bound job on the two-node tiering machines "
        "under every node placement policy, with its table, sentences and plot.",
    )
    from memtint import demo as demo_module

    demo_module.add_arguments(demo)
    demo.set_defaults(handler=lambda args: demo_module.run(args))

    reproduce = commands.add_parser(
        "reproduce",
        help="regenerate the papers' reproduction reports (docs/reproductions/): paper vs memtint, verdicts, causes",
        description="Run the papers' experiments (BPM, HVR, schedulers, CCPS, tiering, CAMC, refresh) on the process "
        "pool or Ray with the machine presets' defaults, and write docs/reproductions/<paper>.md (paper figure, memtint's mean and spread over "
        "seeds, verdict, measured cause of every miss) with PNG plots; figures from configs/reproductions/.",
    )
    from memtint import reproduce as reproduce_module

    reproduce_module.add_arguments(reproduce)
    reproduce.set_defaults(handler=lambda args: reproduce_module.run(args))

    # Colouring on real Linux: inspect, run, run-mix (memtint.linux.commands).
    from memtint.linux import commands as linux_commands

    linux_commands.add_commands(commands)

    # Mapping discovery by timing, on this machine or simulated (memtint.probe.command).
    from memtint.probe import command as probe_command

    probe_command.add_command(commands)
    return parser


def _version() -> str:
    try:
        from memtint import __version__

        return __version__
    except Exception:  # the version flag must work even if the extension is broken
        return "unknown"


def workload_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """The API workload for `memtint dram`, refusing flags that do not apply to it."""
    generator_flags = {
        "--requests": args.requests,
        "--seed": args.seed,
        "--read-fraction": args.read_fraction,
        "--footprint": args.footprint,
        "--stride": args.stride,
        "--streams": args.streams,
        "--banks": args.banks,
    }
    if args.trace is not None:
        given = [flag for flag, value in generator_flags.items() if value is not None]
        if given:
            raise UsageError(f"{', '.join(given)} only appl{'y' if len(given) > 1 else 'ies'} to --generate, "
                             "not to --trace")
        return api.trace(args.trace, args.format)  # None: from the file's name
    if args.format is not None:
        raise UsageError("--format only applies to --trace")
    if args.requests is None:
        raise UsageError(f"--generate {args.generate} needs --requests N")
    return api.generate(
        args.generate,
        requests=args.requests,
        seed=1 if args.seed is None else args.seed,
        read_fraction=args.read_fraction,
        footprint_bytes=args.footprint,
        stride_bytes=args.stride,
        streams=args.streams,
        banks=args.banks,
    )


def run_with_status(message: str, work: Callable[[], Any], estimate: float | None = None, why: str = "") -> Any:
    """Run `work` (engine calls, which release the GIL) in a worker thread, so that Ctrl-C is
    handled at once: with a spinner (elapsed time, and the estimate of `estimate` seconds) on an
    interactive terminal, and a line every 30 s elsewhere (logs)."""
    from memtint.limits import announce, duration_text

    result: dict[str, Any] = {}
    if estimate is not None:
        announce(estimate, why=why)

    def target() -> None:
        try:
            result["value"] = work()
        except BaseException as error:  # re-raised in the calling thread
            result["error"] = error

    worker = threading.Thread(target=target, name="memtint-engine", daemon=True)
    start = time.monotonic()
    of = f" of about {duration_text(estimate)}" if estimate is not None and estimate >= 1 else ""
    if sys.stderr.isatty():
        from rich.console import Console

        with Console(stderr=True).status(message) as status:
            worker.start()
            while worker.is_alive():
                worker.join(0.2)
                status.update(f"{message} {duration_text(time.monotonic() - start)}{of}")
    else:
        worker.start()
        last = start
        while worker.is_alive():
            worker.join(0.2)
            if time.monotonic() - last >= 30:
                last = time.monotonic()
                sys.stderr.write(f"memtint: simulating, {duration_text(last - start)} elapsed{of}\n")
                sys.stderr.flush()
    if "error" in result:
        raise result["error"]
    return result["value"]


# The generator's keys as `memtint dram` spells them: an error of the engine's names the flag given.
_GENERATOR_FLAGS = {"kind": "--generate", "requests": "--requests", "seed": "--seed", "read_fraction": "--read-fraction",
                    "footprint_bytes": "--footprint", "stride_bytes": "--stride", "streams": "--streams",
                    "banks": "--banks"}


def _dram(args: argparse.Namespace) -> int:
    try:
        return _dram_run(args)
    except api.MemtintError as error:
        match = re.match(r"(?:invalid configuration: generate\.)?(\w+): ", str(error))
        if args.generate is None or not match or match.group(1) not in _GENERATOR_FLAGS:
            raise
        flag = _GENERATOR_FLAGS[match.group(1)]
        raise api.MemtintError(f"{flag} ({'generate.' + match.group(1)}): {str(error)[match.end():]}") from None


def _dram_run(args: argparse.Namespace) -> int:
    workload = workload_from_args(args)
    unused = _settings_without_effect(args.set, "memtint dram runs DRAM requests")
    out_dir = args.export_drampower
    if out_dir is not None:  # "new or empty", as its help says: never files among a user's own
        from memtint.outputs import check_output_dir

        check_output_dir("--export-drampower", out_dir)  # a directory, or somewhere one can be made and written
        if os.path.isdir(out_dir) and os.listdir(out_dir):
            raise UsageError(f"--export-drampower {out_dir}: is not empty; give a new or empty directory")
        # The export's files are the engine's to name (memspec.json, config.json, trace-ch0.csv...):
        # --json among them replaced the DRAMPower memspec with the statistics, and said nothing.
        if args.json not in (None, "", "-") and os.path.realpath(os.path.dirname(os.path.abspath(args.json))) == \
                os.path.realpath(out_dir):
            raise UsageError(f"--json {args.json}: is inside --export-drampower {out_dir}, whose files the export "
                             "writes (memspec.json, config.json, the command traces); give a file outside it")
    check_outputs({"--json": args.json},
                  [args.trace, *_machine_inputs(args.machine, args.mapping), *_set_inputs(getattr(args, "set", None))])
    requests = workload.get("generate", {}).get("requests") if isinstance(workload, dict) else None
    # A stop ends memtint at once (stopping.exit_now), before the engine can remove the export
    # directory it made: removed then if still empty (a directory that was the user's stays).
    made = out_dir is not None and not os.path.lexists(out_dir)
    with stopping.temporary_files(lambda: [out_dir] if made else []):
        stats = _run_dram(args, workload, requests)
    _warn_stderr(unused)
    # Timing violations make the run fail whatever the output mode.
    status = 1 if stats.get("violations") else 0
    if _write_json(args.json, stats):
        _warn_stderr(stats.get("warnings"))
        return status
    from memtint.tables import dram_summary, read_latency_table

    from memtint.tables import output_console
    console = output_console()
    console.print(dram_summary(stats))
    console.print(read_latency_table(stats))
    _print_warnings(console, stats.get("warnings"))
    return status


def _run_dram(args: argparse.Namespace, workload: Any, requests: Any) -> dict[str, Any]:
    from memtint.limits import dram_seconds

    return run_with_status(
        "Simulating…",
        lambda: api.run_dram(
            args.machine,
            workload,
            mapping=args.mapping,
            scheduler=args.scheduler,
            row_policy=args.row_policy,
            refresh=args.refresh,
            read_queue=args.read_queue,
            write_queue=args.write_queue,
            overrides=_overrides(args.set),
            outstanding=args.outstanding,
            sources=args.sources,
            check=args.check,
            cycle_by_cycle=args.cycle_by_cycle,
            vector_isa=args.vector_isa,
            export_drampower=args.export_drampower,
        ),
        estimate=dram_seconds(requests) if isinstance(requests, int) else None,
    )


def _print_warnings(console: Any, warnings: list[str] | None) -> None:
    """Print a run's warnings (statistics key ``warnings``), in yellow, after its tables."""
    for w in warnings or []:
        console.print(f"warning: {w}", style="yellow", markup=False, highlight=False)


def _settings_without_effect(settings: list[tuple[list[str], Any]] | None, what: str) -> list[str]:
    """--set keys a command without cores, caches or an OS model cannot use (dram, rt): os.* and
    sampling.* are refused (they would be dropped unseen); cpu.* and cache.* are valid machine
    settings that nothing of this run reads: the warnings to print once the run has succeeded
    (an invalid value is still an error of one line)."""
    warnings = []
    for path, _ in settings or []:
        key = ".".join(path)
        if path[0] in ("os", "sampling"):
            raise UsageError(f"--set {key}: {what} without an OS model or sampling; {path[0]}.* settings apply to sim, "
                             "compare and sweeps")
        if path[0] in ("cpu", "cache"):
            warnings.append(f"--set {key}: {what} without cores or caches; the setting has no effect on this run")
    return warnings


def _warn_stderr(warnings: list[str] | None) -> None:
    """The warnings of a run whose JSON went to stdout."""
    for w in warnings or []:
        sys.stderr.write(f"memtint: warning: {w}\n")


def is_profile(name: str, profiles: set[str]) -> bool:
    """Whether ``name`` is a generated workload: a built-in profile (``random:reads_pki=3``) or
    phases of them; such a name is the profile even beside a file of that name."""
    return name.split(":")[0] in profiles or name.startswith("phases:")


def split_mix(text: str) -> list[str]:
    """The programs of a comma-separated mix. A piece ``key=value`` with no ``:`` that is not a
    file continues the profile before it (``random:footprint_bytes=65536,reads_pki=30`` is one
    program, as a profile's parameters are written)."""
    out: list[str] = []
    for piece in (p.strip() for p in text.split(",")):
        if out and ":" in out[-1] and re.match(r"[A-Za-z_][A-Za-z0-9_]*=", piece) and not os.path.exists(piece):
            out[-1] += "," + piece
        else:
            out.append(piece)
    return out


def _no_empty(option: str, text: str, items: list[str], what: str, give: str) -> list[str]:
    """``items`` of a comma-separated option, refusing an empty one ("stream,,light" used to run two
    programs, "buddy,,bpm" two policies)."""
    if "" in items:
        raise UsageError(f"{option} {text}: {what} {items.index('') + 1} is empty; give {give} separated by commas")
    return items


def _check_mix_name(name: str, mixes: set[str], profiles: set[str], option: str = "--mix",
                    others: bool = False) -> None:
    """A --mix word that is no mix, profile, suite program or file: name the closest. ``name``
    may hold several programs separated by commas (each checked; every unknown one named)."""
    import difflib

    from memtint import workloads

    suite = set(workloads.suite())
    names = split_mix(name)
    for n in names:
        if (n in mixes or api.is_mix_file(n)) and (others or len(names) > 1):
            raise UsageError(f"{option} {n}: a named mix stands alone, not among other programs; give its programs "
                             f"({', '.join(os.path.basename(p) for p in api.mix_programs(n))}) instead")
    bad = [n for n in names if not (is_profile(n, profiles) or os.path.exists(n)
                                    or n in suite or (n in mixes and len(names) == 1))]
    if not bad:
        return
    parts = []
    for n in bad:
        close = difflib.get_close_matches(n, sorted((mixes if len(names) == 1 else set()) | profiles | suite), n=3,
                                          cutoff=0.5)
        parts.append(f"{n} (did you mean {', '.join(close)}?)" if close else n)
    what = ("not a named mix, a built-in profile, a program of the workload suite or a trace file" if len(names) == 1
            else "not built-in profiles, programs of the workload suite or trace files" if len(bad) > 1
            else "not a built-in profile, a program of the workload suite or a trace file")
    raise UsageError(f"{option} {', '.join(parts)}: {what}; mixes: {', '.join(sorted(mixes))}; "
                     f"profiles: {', '.join(sorted(profiles))}; suite: {', '.join(sorted(suite))}")


def _spec_inputs(spec: dict[str, Any], base: str | None = None) -> list[str]:
    """The files a run specification reads: traces, machine, device and mapping files, rules
    files, wherever in it they are named (`outputs.referenced_files`)."""
    from memtint.outputs import referenced_files

    return referenced_files(spec, base=base)


def _machine_inputs(*names: str | None) -> list[str]:
    """The files behind machine, mapping and device arguments: a machine TOML and every file
    it names (its device and mapping files). Preset names are not files and drop out."""
    from memtint.outputs import referenced_files

    return referenced_files(*[n for n in names if n])


def _set_inputs(settings: list[tuple[list[str], Any]] | None) -> list[str]:
    """Files named by ``--set KEY=VALUE`` values (``os.hvr-online.rules=mine.toml``)."""
    from memtint.outputs import referenced_files

    return referenced_files(*[value for _, value in settings or []])


def _shown(setting: list[str], value: Any) -> str:
    """A `--set` value as the user typed it (as its parsed value when the path lost the text)."""
    return getattr(setting, "raw", "") or (value if isinstance(value, str) else json.dumps(value))


def _at_config_line(path: str, message: str, settings: list[tuple[list[str], Any]] | None = None,
                    machine_file: str | None = None) -> str:
    """An engine error naming a key (``invalid configuration: os.colours: ...``) with the run
    file's line that sets it, when the file sets it, or with the `--set` of ``settings`` that
    gave its value (which wins over the file's line), or else with the line of the machine file
    the run names (``links.latency_ns``, ``nodes[1].bandwidth_gbps``)."""
    def related_set() -> str:
        """A --set the error is about though it names another key: a sibling in the same table
        (distance against the degree set), or the key's own word in the message (channels x ranks
        x banks), the last given first. Without one, the error is the file's."""
        for setting, value in reversed(settings or []):
            name, parent = ".".join(setting), ".".join(setting[:-1])
            sibling = m is not None and bool(parent) and m.group(1).removeprefix("overrides.").startswith(parent + ".")
            if sibling or name in message or re.search(rf"(?<![\w.]){re.escape(setting[-1])}(?![\w])", message):
                return f"--set {name}={_shown(setting, value)}: {message}"
        return ""

    placed = in_its_file(message)
    if placed != message:  # a key of a device or mapping file the engine read: that file's line
        return placed
    # The key may go on past its table's key (os.tintmalloc.threads[0].banks[0]): the table's key
    # (banks) is what its line sets.
    m = re.match(r"invalid configuration: ([A-Za-z_][\w.-]*)((?:\[\d+\])*)(?:\.([A-Za-z_][\w-]*)(?:\[\d+\]|\.[\w-]+)*)?:",
                 message)
    if not m:
        return related_set() or message
    key = m.group(1)
    unknown = re.search(r"unknown field `([^`]+)`", message)
    if unknown and not m.group(2):
        key = f"{key}.{unknown.group(1)}"  # the unknown key's own line, not its table's

    # "invalid type: floating point `1e+20`, expected a whole number ...": TOML reads 1e20 as a float.
    def whole(found: re.Match[str]) -> str:
        hint = " (TOML reads an exponent or a decimal point as a float: write the digits, e.g. 100_000)"
        try:
            integral = float(found.group(1)).is_integer()
        except ValueError:
            integral = False
        return f"expected a whole number, got {found.group(1)}{hint if integral else ''}"

    message = re.sub(r"invalid type: floating point `([^`]+)`, expected a whole number(?: of at least 0| from 0 to \d+)",
                     whole, message)
    # A key of the i-th [[array]] table (tasks[0].period), or a key it does not take (tasks[1]:
    # unknown field `lods`): that table's line for it, not the first table's.
    array_key = m.group(3).split(".")[0] if m.group(3) else unknown.group(1) if unknown else None
    in_array = array_key and re.fullmatch(r"\[\d+\]", m.group(2) or "")

    def line_in(file: str) -> str:
        try:
            with open(file, encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError):
            return ""
        if in_array:  # (nodes[1].dram.mapping: the line of its `dram = {...}`)
            return _array_key_line(text, m.group(1), int(m.group(2)[1:-1]), array_key)
        if re.fullmatch(r"\[\d+\]", m.group(2) or ""):  # tasks[1]: missing field `period`: that table's header
            return _array_table_line(text, m.group(1), int(m.group(2)[1:-1])) or _key_line(text, key)
        return _key_line(text, key)

    if not in_array:
        bare = key.removeprefix("overrides.")  # a --set of a machine key reaches the run's overrides
        for setting, value in reversed(settings or []):  # the last --set of a key is the one in force
            name = ".".join(setting)
            if bare != key and setting[0] in ("os", "sampling"):
                continue  # the run's own tables, never its overrides: not what [overrides.os] is about
            if name == bare or bare.startswith(name + ".") or name.startswith(bare + "."):
                return f"--set {name}={_shown(setting, value)}: {message}"
    for file in (path, machine_file):
        line = line_in(file) if file else ""
        if line:
            return f"{file}{line}: {message}"
    blamed = related_set()
    if blamed:
        return blamed
    if machine_file and key.split(".")[0] in MACHINE_TABLES:  # a machine key the file lacks: the file, no line
        return f"{machine_file}: {message}"
    return message


#: The tables of a machine file (configs/machines): a key of theirs is the machine file's.
MACHINE_TABLES = ("cpu", "cache", "dram", "controller", "nodes", "links", "variants")


#: What a thread does after its target (`at_end`, for the run or per process).
AT_END = ("continue", "wait", "exit")


def _process_key_line(text: str, index: int, key: str) -> str:
    """":N" for the line that sets ``key`` in the ``index``-th [[processes]] table, else ""."""
    return _array_key_line(text, "processes", index, key)


def _check_sim_types(path: str, text: str, table: dict[str, Any]) -> None:
    """Each top-level key of a run file has the kind the engine expects; a wrong one is an error
    naming the file, the line and the key (the engine would name a column of its own JSON)."""

    def shown(v: Any) -> str:  # as the file spells it (true, "text"), not as Python does (True, 'text')
        return json.dumps(v, default=str)

    def fail(key: str, expected: str) -> None:
        raise UsageError(f"{path}{_key_line(text, key)}: {key}: expected {expected}, got {shown(table[key])}")

    def is_int(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool)

    checks = {
        "machine": (lambda v: isinstance(v, (str, dict)), "a preset name, a machine TOML path or a table"),
        "programs": (lambda v: isinstance(v, list) and all(isinstance(p, str) for p in v),
                     'a list of programs, e.g. ["stream", "light"]'),
        "processes": (lambda v: isinstance(v, list) and all(isinstance(p, dict) for p in v), "[[processes]] tables"),
        "instructions": (lambda v: is_int(v) and v >= 1, "a whole number of instructions >= 1"),
        "warmup": (lambda v: is_int(v) and v >= 0, "a whole number of instructions >= 0"),
        "seed": (lambda v: is_int(v) and 0 <= v < 2**63, "a whole number from 0 to 2^63-1 (every command's seed range)"),
        "os": (lambda v: isinstance(v, dict), "an [os] table"),
        "mapping": (lambda v: isinstance(v, str), "a mapping name or path"),
        "scheduler": (lambda v: isinstance(v, str), "a scheduler name"),
        "overrides": (lambda v: isinstance(v, dict), "an [overrides] table"),
        "check": (lambda v: isinstance(v, bool), "true or false"),
        "at_end": (lambda v: v in AT_END, '"continue", "wait" or "exit"'),
        "barrier_every": (lambda v: is_int(v) and v >= 1, "a whole number of instructions >= 1"),
        "sampling": (lambda v: isinstance(v, dict), "a [sampling] table (unit, period, warming, ...)"),
    }
    for key, (ok, expected) in checks.items():
        if key in table and not ok(table[key]):
            fail(key, expected)
    for i, proc in enumerate(table.get("processes", [])):
        if not isinstance(proc.get("threads"), list):
            raise UsageError(f"{path}{_key_line(text, 'threads')}: processes[{i}].threads: expected a list of programs, "
                             f"got {shown(proc.get('threads'))}")
        per_process = {
            "at_end": (lambda v: v in AT_END, '"continue", "wait" or "exit"'),
            "arrive_ns": (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool), "a number of nanoseconds"),
            "instructions": (lambda v: is_int(v) and v >= 1, "a whole number of instructions >= 1"),
            "name": (lambda v: isinstance(v, str), "a name in quotes"),
        }
        for key, (ok, expected) in per_process.items():
            if key in proc and not ok(proc[key]):
                raise UsageError(f"{path}{_process_key_line(text, i, key)}: processes[{i}].{key}: expected {expected}, "
                                 f"got {shown(proc[key])}")
    policy = table.get("os", {}).get("policy", "buddy")
    if not isinstance(policy, str):
        raise UsageError(f"{path}{_key_line(text, 'os')}: os.policy: expected a policy name, got {shown(policy)}")


def machine_beside(machine: Any, base: str) -> Any:
    """A configuration's ``machine``: a relative machine TOML path is relative to the
    configuration's directory ``base``; a preset name or anything else is left as it is."""
    if isinstance(machine, str) and machine.endswith(".toml") and not os.path.isabs(machine):
        return os.path.join(base, machine)
    return machine


def load_sim_config(path: str) -> dict[str, Any]:
    """A run configuration TOML as an engine specification; the files it names (traces, a machine,
    a mapping, rules) are relative to it."""
    from memtint.toml_files import read_toml

    table, text = read_toml(path, "run configuration")
    allowed = {"machine", "programs", "processes", "instructions", "warmup", "seed", "os", "mapping", "scheduler",
               "overrides", "check", "at_end", "barrier_every", "sampling", "export_dram"}
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise UsageError(f"{path}: unknown key(s) {', '.join(unknown)} (expected: {', '.join(sorted(allowed))})")
    for key in ("machine", "instructions"):
        if key not in table:
            raise UsageError(f"{path}: missing key '{key}'")
    if "programs" not in table and "processes" not in table:
        raise UsageError(f"{path}: missing key 'programs' (one per core) or 'processes' ([[processes]] with threads)")
    _check_sim_types(path, text, table)
    base = os.path.dirname(os.path.abspath(path))

    def relative(p: str) -> str:
        candidate = os.path.join(base, p)
        return candidate if not os.path.isabs(p) and os.path.exists(candidate) else p

    programs = [relative(p) for p in table.get("programs", [])]
    processes = None
    if "processes" in table:
        processes = []
        for proc in table["processes"]:
            threads = [relative(t) if isinstance(t, str) else {**t, "program": relative(t["program"])}
                       if isinstance(t, dict) and "program" in t else t for t in proc.get("threads", [])]
            processes.append({**proc, "threads": threads})
    machine = machine_beside(table["machine"], base)
    os_table = dict(table.get("os", {}))
    policy = os_table.pop("policy", "buddy")
    # Files an [os.*] table names (hvr-online's rules) are relative to this file, as traces are.
    for name, sub in list(os_table.items()):
        if isinstance(sub, dict) and isinstance(sub.get("rules"), str):
            os_table[name] = {**sub, "rules": relative(sub["rules"])}
    mapping = table.get("mapping")
    if isinstance(mapping, str) and mapping.endswith(".toml"):
        mapping = relative(mapping)
    if isinstance(machine, str) and machine.endswith(".toml") and not os.path.exists(machine):
        raise UsageError(f"{path}{_key_line(text, 'machine')}: machine: {machine}: no such machine file")
    try:
        spec = api.build_sim_spec(
            machine, programs, instructions=table["instructions"], policy=policy, seed=table.get("seed", 1),
            os_options=os_table, mapping=mapping, scheduler=table.get("scheduler"),
            overrides=table.get("overrides"), processes=processes, warmup=table.get("warmup", 0),
        )
    except api.MemtintError as error:
        raise api.MemtintError(_in_run_file(path, text, str(error))) from None
    for key in ("check", "at_end", "barrier_every", "sampling"):
        if key in table:
            spec[key] = table[key]
    if "export_dram" in table:
        spec[EXPORT_KEY] = _export_table(path, text, table["export_dram"], base)
    return spec


def _at_named_value(path: str, message: str) -> str:
    """An engine error about a name the run file ``path`` gives (``unknown machine 'x'``), with
    the file and the line of the first quoted value equal to it; the file alone when none is."""
    m = re.search(r"'([^']*)'", message)
    line = ""
    if m:
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except (OSError, UnicodeDecodeError):
            lines = []
        quoted = re.compile(r"""(?:^|[=\[,\s])["']""" + re.escape(m.group(1)) + r"""["']""")
        line = next((f":{n}" for n, text in enumerate(lines, 1) if quoted.search(text.split("#")[0])), "")
    return f"{path}{line}: {message}"


def _in_run_file(path: str, text: str, message: str) -> str:
    """An error about a key of the run file ``path`` (``programs[0]: ...``, ``invalid
    configuration: processes[0].threads[0]: ...``) with the file and the key's line."""
    if message.startswith(f"{path}:"):
        return message
    m = re.match(r"(?:invalid configuration: )?([A-Za-z_]\w*)(?:\[(\d+)\])?", message)
    line = ""
    if m:
        line = (_array_key_line(text, m.group(1), int(m.group(2)), "threads") if m.group(2) and m.group(1) == "processes"
                else "") or _key_line(text, m.group(1))
    return f"{path}{line}: {message}"


#: Where `load_sim_config` leaves a run file's `export_dram` for `sim` (which writes the file
#: through a temporary one): not an engine key.
EXPORT_KEY = "_export_dram"


def _quoted_formats() -> str:
    """The DRAM trace formats as a run file writes them: "dramsim3", "ramulator", ... or "dramsim2"."""
    names = [f'"{f}"' for f in sorted(api.TRACE_FORMATS, key=lambda f: f != "dramsim3")]
    return ", ".join(names[:-1]) + " or " + names[-1]


def _suffixes() -> str:
    """The export file suffixes that pick a format: .ramulator, .dramsim3, ... or .dramsim2."""
    return ", ".join(f".{f}" for f in api.TRACE_FORMATS[:-1]) + f" or .{api.TRACE_FORMATS[-1]}"


def _export_table(path: str, text: str, export: Any, base: str) -> dict[str, str]:
    """A run file's ``export_dram = { path, format }``: its path relative to the file."""
    where = f"{path}{_key_line(text, 'export_dram')}: export_dram"
    if not isinstance(export, dict) or not isinstance(export.get("path"), str) or not export["path"]:
        raise UsageError(f"{where}: expected a table {{ path = \"FILE\", format = {_quoted_formats()} }}, got "
                         f"{json.dumps(export, default=str)}")
    unknown = sorted(set(export) - {"path", "format"})
    if unknown:
        raise UsageError(f"{where}: unknown key(s) {', '.join(unknown)} (expected: format, path)")
    fmt = export.get("format")
    if fmt is not None and fmt not in api.TRACE_FORMATS:
        raise UsageError(f"{where}.format: expected {_quoted_formats()}, got {json.dumps(fmt, default=str)}")
    return {"path": os.path.join(base, export["path"]), **({"format": fmt} if fmt else {})}


def _write_json(path: str | None, value: Any, option: str = "--json") -> bool:
    """Write JSON to a file or stdout ('-'); True if it went to stdout. A file is written whole or
    not at all, and a write error names it (memtint.outputs)."""
    from memtint.outputs import write_json

    return write_json(option, path, value)


def _sim(args: argparse.Namespace) -> int:

    from memtint.tables import sim_table

    spec = load_sim_config(args.config)
    # The run file's export_dram, unless the command line gives one (--export-format still applies).
    from_file = spec.pop(EXPORT_KEY, None)
    export_option = "--export-dram"
    if from_file and not args.export_dram:
        args.export_dram, args.export_format = from_file["path"], args.export_format or from_file.get("format")
        export_option = f"{args.config}: export_dram.path"
    if args.export_format and not args.export_dram:
        raise UsageError(f"--export-format {args.export_format}: there is no export to format without "
                         "--export-dram FILE (or export_dram in the run file); give --export-dram FILE too (a "
                         f"{_suffixes()} suffix also picks the format)")
    if args.set:
        spec["overrides"] = _overrides(args.set, spec.get("overrides"))
        spec["os"] = _os_settings(args.set, spec.get("os"))
    sampling = sampling_from_args(args, spec.get("sampling"))
    if sampling is not None:
        spec["sampling"] = sampling
        if "matched" in sampling:  # a comparison's setting: said so, with the line or --set that gave it
            raise api.MemtintError(_at_config_line(args.config, (
                "invalid configuration: sampling.matched: matches the units of the policies a comparison runs "
                "(memtint compare, sweeps, memtint reproduce --sample); a run of one configuration has none to "
                "match, so leave it out"), args.set))
    # After --set, which may name files too (os.hvr-online.rules=mine.toml).
    check_outputs({"--json": args.json, export_option: args.export_dram},
                  [args.config, *_spec_inputs(spec, base=os.path.dirname(os.path.abspath(args.config)))])
    from memtint.limits import sim_reason, sim_seconds
    from memtint.outputs import produced_file

    def simulate() -> dict:
        if not args.export_dram:
            return api.run_sim_spec(spec)
        with produced_file(export_option, args.export_dram) as path:
            spec["export_dram"] = {"path": path, "format": export_format(args.export_dram, args.export_format),
                                   "gzip": args.export_dram.lower().endswith(".gz")}
            stats = api.run_sim_spec(spec)
        stats["export_dram"]["path"] = args.export_dram
        return stats

    try:
        stats = run_with_status("Simulating…", simulate, estimate=sim_seconds(spec), why=sim_reason(spec))
    except api.MemtintError as error:
        machine = spec.get("machine")
        machine_file = machine if isinstance(machine, str) and machine.endswith(".toml") else None
        text = _at_config_line(args.config, str(error), args.set, machine_file)
        if text.startswith("invalid configuration: "):  # a key _at_config_line could not place (threads[0])
            with open(args.config, encoding="utf-8") as f:
                text = _in_run_file(args.config, f.read(), text)
        elif not text.startswith((f"{args.config}:", "--set ", f"{machine_file}:" if machine_file else "--set ")):
            # "unknown machine ''": a name the run file gave, at the line that gives it
            text = _at_named_value(args.config, text)
        raise api.MemtintError(text) from None
    # Timing violations (check = true) make the run fail whatever the output mode, as in dram.
    status = 1 if (stats.get("dram") or {}).get("violations") else 0
    if _write_json(args.json, stats):
        _warn_stderr(stats.get("warnings"))
        return status
    from memtint.tables import output_console
    console = output_console()
    console.print(sim_table(stats))
    if stats.get("export_dram"):
        console.print(export_note(spec, stats), markup=False, highlight=False, soft_wrap=True)  # a command to copy
    _print_warnings(console, stats.get("warnings"))
    return status


def export_note(spec: dict[str, Any], stats: dict[str, Any]) -> str:
    """What `sim --export-dram` wrote, and the `memtint dram` command that replays it on the run's
    system: the file holds requests only, and a replay on another mapping, scheduler or controller
    setting gives other outcomes without a word."""
    import shlex

    export = stats["export_dram"]
    timed = export["format"] in ("dramsim3", "dramsim2")
    text = (f"DRAM request stream: {export['requests']:,} requests in {export['path']} ({export['format']}, "
            + ("timed" if timed else "untimed: a replay issues them as fast as the queues allow") + ")")
    if "nodes" in stats:
        return text + "; memtint dram drives one memory, so it does not replay a multi-node machine's stream"
    if not isinstance(spec.get("machine"), str) or not os.path.isfile(export["path"]):  # /dev/null: nothing to replay
        return text
    command = ["memtint", "dram", "--machine", spec["machine"]]
    for key in ("mapping", "scheduler"):
        if isinstance(spec.get(key), str):
            command += [f"--{key}", spec[key]]

    def settings(prefix: str, table: dict[str, Any]) -> list[str]:
        out = []
        for key, value in table.items():
            if isinstance(value, dict):
                out += settings(f"{prefix}{key}.", value)
            else:  # as --set reads it: a bare word when it reads back as that text, else TOML or JSON
                shown = value if isinstance(value, str) and _set_value(value) == value else \
                    ("true" if value else "false") if isinstance(value, bool) else json.dumps(value)
                out += ["--set", f"{prefix}{key}={shown}"]
        return out

    for section in ("dram", "controller"):  # what a DRAM run reads of the overrides
        command += settings(f"{section}.", (spec.get("overrides") or {}).get(section) or {})
    command += ["--trace", export["path"]]
    sources = {entry.get("source") for channel in (stats.get("dram") or {}).get("channels") or []
               for entry in channel.get("scheduler_sources") or []}  # empty under a scheduler blind to them
    if len(sources) > 1:
        return (f"{text}; its scheduler told {len(sources)} sources' requests apart, and the file does not say whose "
                f"each is, so a replay ({shlex.join(command)}) gives other outcomes")
    return f"{text}; replayed on the run's memory system by: {shlex.join(command)}"


def _rt(args: argparse.Namespace) -> int:

    from memtint.tables import rt_table
    from memtint.toml_files import read_toml

    spec, source = read_toml(args.config, "task-set TOML")
    for key, what in (("machine", "a machine name or TOML"), ("tasks", "[[tasks]] tables")):
        if key not in spec:
            raise UsageError(f"{args.config}: missing key '{key}' ({what})")
    # A machine file is relative to the task set, as in a run file (load_sim_config).
    base = os.path.dirname(os.path.abspath(args.config))
    spec["machine"] = machine_beside(spec["machine"], base)
    machine = spec["machine"]
    if isinstance(machine, str) and machine.endswith(".toml") and not os.path.isfile(machine):
        raise UsageError(f"{args.config}{_key_line(source, 'machine')}: machine: {machine}: no such machine file")
    # The machine file and the device and mapping files it names are inputs too.
    check_outputs({"--json": args.json}, [args.config, *_spec_inputs(spec, base=base), *_set_inputs(args.set)])
    unused = _settings_without_effect(args.set, "memtint rt runs its tasks' loads through the DRAM")
    if args.set:
        spec["overrides"] = _overrides(args.set, spec.get("overrides"))
    # A job that computes longer than the WCET its schedule plans with overruns by construction:
    # a valid overrun experiment, so said, not refused.
    for i, task in enumerate(spec.get("tasks") or []):
        if isinstance(task, dict) and isinstance(task.get("compute"), (int, float)) \
                and isinstance(task.get("wcet"), (int, float)) and task["compute"] > task["wcet"]:
            unused.append(f"{args.config}: tasks[{i}].compute = {task['compute']} is more than its wcet = "
                          f"{task['wcet']}: the schedule plans with less than each job computes, so its jobs overrun by "
                          "construction")
    for key in ("schedule", "refresh"):
        if getattr(args, key):
            spec[key] = getattr(args, key)
    try:
        stats = run_with_status("Simulating…", lambda: api.run_rt(spec))
    except api.MemtintError as error:
        text = _at_config_line(args.config, str(error), args.set)
        unknown = re.match(r"invalid configuration: rt spec: unknown field `([^`]+)`", text)
        if unknown:  # a top-level key the task set does not have: its own line
            text = f"{args.config}{_key_line(source, unknown.group(1))}: {text}"
        elif not text.startswith((f"{args.config}:", "--set")):
            # "unknown schedule 'RM'": the line that gives the name; else a key the file leaves
            # out (crs's servers): the file
            text = _at_named_value(args.config, text)
        raise api.MemtintError(text) from None
    _warn_stderr(unused)
    if _write_json(args.json, stats):
        return 0
    from memtint.tables import output_console
    output_console().print(rt_table(stats))
    return 0


def export_format(path: str, given: str | None) -> str:
    """The DRAM-stream export's format: as given, else from the file's suffix before any .gz, else
    dramsim3 (as ``dram --trace`` reads the file back). A suffix naming another format than the
    one given is refused: ``dram --trace`` would read the file by its suffix and refuse it."""
    by_suffix = api._suffix_format(path)
    if given and by_suffix and given != by_suffix:
        raise UsageError(f"export format {given} (--export-format, or the run file's export_dram): the export {path} "
                         f"has the suffix of the {by_suffix} format, which is how it is read back (dram --trace); give "
                         f"a .{given} name or leave the format out")
    return given or by_suffix or "dramsim3"


def _compare(args: argparse.Namespace) -> int:
    import csv

    from rich.console import Console

    from memtint import comparison as compare_module
    from memtint.tables import compare_tables, dynamic_line

    mix = _no_empty("--mix", args.mix, split_mix(args.mix), "program", "one program per core")
    catalogue = api.presets()
    named = {m["name"] for m in catalogue.get("mixes", [])}
    if len(mix) == 1 and (mix[0] in named or api.is_mix_file(mix[0])):
        mix = api.mix_programs(mix[0])
    else:
        _check_mix_name(",".join(mix), named, set(catalogue.get("profiles", [])))
    # The mix file itself is an input too, beside the programs it names.
    check_outputs({"--json": args.json, "--csv": args.csv},
                  [*split_mix(args.mix), *mix, *_machine_inputs(args.machine, args.mapping), *_set_inputs(args.set)])
    policies = _no_empty("--policies", args.policies, [p.strip() for p in args.policies.split(",")], "policy",
                         "policies")
    repeated = sorted({p for p in policies if policies.count(p) > 1})
    if repeated:
        raise UsageError(f"--policies {args.policies}: {', '.join(repeated)} given more than once; each policy runs once")
    compare_module.check_policy_names([(f"--policies {args.policies}", policies),
                                       (f"--baseline {args.baseline}", [args.baseline] if args.baseline else [])])
    from memtint.limits import announce, sim_seconds

    warmup = compare_module.DEFAULT_WARMUP if args.warmup is None else args.warmup
    sampling = sampling_from_args(args)
    estimate = sim_seconds({"programs": mix, "instructions": args.instructions, "warmup": warmup,
                            "sampling": sampling}) * (len(policies) + 1) / min(os.cpu_count() or 1, len(mix) + len(policies))
    announce(estimate, "comparison")
    console = Console(stderr=True)
    total = len(mix) + len(policies)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True, disable=not console.is_terminal) as bar:
        task = bar.add_task("Simulating", total=total)
        try:
            result = compare_module.compare(
                args.machine, mix, policies, instructions=args.instructions, seed=args.seed, baseline=args.baseline,
                mapping=args.mapping, scheduler=args.scheduler, overrides=_overrides(args.set),
                os_options=_os_settings(args.set, {"strict": True} if args.strict else None, "--policies"),
                use_cache=not args.no_cache,
                progress=lambda what: bar.update(task, advance=1, description=what),
                warmup=warmup, sampling=sampling,
            )
        except api.MemtintError as error:
            # An engine error about a key a --set gave: name the --set, as sim does; an os.* one
            # is in every policy's run, which the user may not expect.
            text = _at_config_line("", str(error), args.set)
            if text.startswith("--set os."):
                text += f" (--set os.* applies to every policy compared: {', '.join(policies)})"
            if text.startswith("baseline: "):  # the alone runs' policy, refused by the machine
                text = f"--baseline {args.baseline or '(not given: the machine default)'}: {text[len('baseline: '):]}"
            # "os.policy: policy 'x' ..." (the machine refused it), "os: policy x gives ..." (the mix)
            refused = re.match(r"invalid configuration: os(?:\.policy)?: (policy '?([\w+.-]+?)'?[: ].*)", text)
            if refused and any(p.split("+", 1)[0] == refused.group(2) for p in policies):
                text = f"--policies {','.join(policies)}: {refused.group(1)}"  # the option, not a key of no file
            raise api.MemtintError(text) from None
    if args.csv:
        import io

        rows = compare_module.to_csv_rows(result)
        text = io.StringIO(newline="")
        writer = csv.DictWriter(text, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
        write_text("--csv", args.csv, text.getvalue())
    if _write_json(args.json, result):
        return 0
    from memtint.tables import output_console
    out = output_console()
    for table in compare_tables(result):
        out.print(table)
    out.print(f"warm-up: {result['warmup']:,} instructions per core before statistics")
    for p in result["policies"]:
        if p.get("dynamic"):
            out.print(f"{p['policy']} + {dynamic_line(p).strip()}", highlight=False, markup=False)
    for note in result.get("notes", []):
        out.print(f"[yellow]note:[/yellow] {note}")
    os_set = [".".join(path) for path, _ in args.set or [] if path[0] == "os"]
    if os_set:
        out.print(f"[yellow]note:[/yellow] --set {', '.join(os_set)}: applied to the policies' runs; the alone runs, "
                  "against which slowdowns are measured, use the OS defaults")
    # Per policy, where the comparison carries its shared run's warnings; then the alone runs'.
    read_by_some = _tables_read_by_some(result.get("policies", []))
    for p in result.get("policies", []):
        _print_warnings(out, [f"{p['policy']}: {w}" for w in p.get("warnings") or []
                              if _unread_table(w) not in read_by_some])
    _print_warnings(out, result.get("alone_warnings"))
    _print_warnings(out, result.get("warnings"))  # the comparison's own: a trace shorter than the runs
    return 0


def _unread_table(warning: str) -> str | None:
    """The table or key of a "nothing reads it" warning (:func:`comparison.unread_table`)."""
    from memtint.comparison import unread_table

    return unread_table(warning)


def _tables_read_by_some(policies: list[dict[str, Any]]) -> set[str]:
    """Tables set for every policy of a comparison (a --set, [overrides]) that some of them read:
    `--set controller.tcm.quantum=...` beside buddy+tcm is meant for tcm, and saying that buddy's
    FR-FCFS does not read it is noise. A table no policy reads is still warned of, per policy."""
    unread = [{t for w in p.get("warnings") or [] if (t := _unread_table(w))} for p in policies]
    return set().union(*unread) - set.intersection(*unread) if unread else set()


def _one_memory_for_advise(machine: str) -> None:
    """advise chooses among HVR's colouring policies of one memory: a machine of several memory
    nodes is refused by its option, before any run (the engine would suggest a node policy,
    which advise cannot take). A machine that does not load is left to advise's own error."""
    from memtint.probe.simulated import describe

    try:
        nodes = len(describe(machine)["nodes"])
    except api.MemtintError:
        return
    if nodes > 1:
        raise UsageError(f"--machine {machine}: has {nodes} memory nodes, and advise chooses among HVR's colouring "
                         "policies of one memory (classifying each program under buddy); give a machine of one node, "
                         "e.g. i7-860 (memtint presets lists them)")


def _advise(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.markup import escape
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from memtint import advisor, comparison, hvr_rules
    from memtint.tables import _Table  # cells printed as text: a program may be named "[x]"

    if args.instructions is not None and not args.verify:  # it sizes the verifying runs only
        raise UsageError(f"--instructions {args.instructions}: sizes the runs of --verify, and there are none; add "
                         "--verify, or --classify-instructions for the classifying runs")
    if args.instructions is None:
        args.instructions = 10_000_000
    programs = list(args.programs)
    catalogue = api.presets()
    named = {m["name"] for m in catalogue.get("mixes", [])}
    if len(programs) == 1 and (programs[0] in named or api.is_mix_file(programs[0])):
        programs = api.mix_programs(programs[0])
    for p in programs:
        _check_mix_name(p, named, set(catalogue.get("profiles", [])), option="program", others=len(programs) > 1)
    # The mix file itself is an input too, beside the programs it names.
    check_outputs({"--json": args.json}, [*args.programs, *programs, *_machine_inputs(args.machine),
                                          *([args.rules] if args.rules else [])])
    rules = hvr_rules.load(args.rules)  # a rules file that does not parse fails before anything runs
    instructions = args.classify_instructions or advisor.CLASSIFY_INSTRUCTIONS
    warmup = comparison.DEFAULT_WARMUP if args.warmup is None else args.warmup
    _one_memory_for_advise(args.machine)
    console = Console(stderr=True)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True, disable=not console.is_terminal) as bar:
        task = bar.add_task("Classifying", total=len(programs))
        rec = advisor.advise(programs, args.machine, rules=rules, multithreaded=args.multithreaded,
                             instructions=instructions, warmup=warmup,
                             progress=lambda what: bar.update(task, advance=1, description=what))
    verified = None
    if args.verify:
        runs = len(advisor.candidates(rules, len(programs))) + 2 + len(programs)
        with Progress(*columns, console=console, transient=True, disable=not console.is_terminal) as bar:
            task = bar.add_task("Verifying", total=runs)
            verified = advisor.verify(rec, instructions=args.instructions, warmup=warmup,
                                      progress=lambda what: bar.update(task, advance=1, description=what))
    out_json = {**rec.to_json(), "verified": verified}
    if _write_json(args.json, out_json):
        _warn_stderr(rec.advice.warnings)
        return 0
    from memtint.tables import output_console
    out = output_console()
    table = _Table(title=f"Programs on {args.machine}: HVR classes")
    for col in ("program", "class", "why"):
        table.add_column(col)
    for p in rec.programs:
        table.add_row(os.path.basename(p.program), p.hvr_class or "-", p.reason)
    out.print(table)
    a = rec.advice
    rule = f"rule {a.rule}" if a.rule else "no rule"
    # Support and confidence are the rules file's, measured where it was mined (the paper's
    # machine for the paper's file), not on this mix or machine: say whose they are.
    whose = "the paper's" if os.path.abspath(rec.rules_path) == os.path.abspath(hvr_rules.PAPER_RULES) else \
        f"{os.path.basename(rec.rules_path)}'s"
    figures = [f"support {a.support:.1%}" if a.support is not None else "",
               f"confidence {a.confidence:.1%}" if a.confidence is not None else ""]
    stats = f" ({whose} {', '.join(f for f in figures if f)})" if any(figures) else ""
    out.print(f"[bold]{a.policy}[/bold] by {rule}{stats}: {a.reason}.", highlight=False)
    if rec.os_options is not None:
        sets = rec.os_options["colours"]
        total = sum(len(c) for c in sets)
        for members, name, colours in zip(a.groups, a.group_rules, sets):
            names = ", ".join(os.path.basename(rec.programs[i].program) for i in members)
            out.print(escape(f"  {name or 'own set'}: {names} -> {len(colours)} of {total} colours {colours}"),
                      highlight=False)
    if verified:
        t = _Table(title="Measured (weighted speedup against buddy)",
                   caption="best: of these runs; policies the rules cannot pick are not run (memtint compare runs them)")
        for col in ("policy", "WS", "WS vs buddy %", "MS", ""):
            t.add_column(col)
        for r in verified:
            mark = " ".join(m for m, on in (("pick", r["pick"]), ("best", r["best"])) if on)
            t.add_row(r["policy"], f"{r['ws']:.3f}", f"{r['ws_vs_buddy_pct']:+.1f}", f"{r['ms']:.2f}", mark)
        out.print(t)
    _print_warnings(out, a.warnings)
    return 0


def _mine_rules(args: argparse.Namespace) -> int:
    from rich.console import Console

    from memtint.tables import _Table  # cells printed as text

    from memtint import advisor, hvr_rules, rule_mining
    from memtint.sweep import load_results

    if args.holdout is not None and args.folds:  # two ways of holding mixes out: one would be ignored
        raise UsageError(f"--holdout {args.holdout} and --folds {args.folds}: give one (--folds measures every mix "
                         "by cross-validation, --holdout one held-out share)")
    if args.holdout is None:
        args.holdout = 0.5
    if not 0.0 < args.holdout < 1.0:
        raise UsageError(f"--holdout must be between 0 and 1 (exclusive), got {args.holdout}")
    check_outputs({"--out": args.out, "--json": args.json}, [*([args.rules] if args.rules else [])],
                  stores=[args.results])
    paper = hvr_rules.load(args.rules)
    frame = load_results(args.results)
    # Classification runs the store's programs on its machines: their files are inputs too.
    if not frame.empty:
        check_outputs({"--out": args.out, "--json": args.json},
                      [*([args.rules] if args.rules else []),
                       *_machine_inputs(*sorted(set(frame["machine"].dropna().astype(str)))),
                       *sorted(set(frame["program"].dropna().astype(str)))],
                      stores=[args.results])
    if frame.empty:
        raise api.MemtintError(f"{args.results}: no stored runs")
    try:
        ok = rule_mining.runs(frame)
    except api.MemtintError as error:
        raise api.MemtintError(f"{args.results}: {error}") from None
    if ok.empty:  # every run failed: say so, with why, as report does
        errors = [e for e in frame.loc[frame["status"] != "ok", "error"] if isinstance(e, str)] \
            if "error" in frame else []
        runs = frame["config_hash"].nunique() if "config_hash" in frame else len(frame)
        raise api.MemtintError(f"{args.results}: none of its {runs} run(s) succeeded, so there is nothing to mine"
                               + (f"; the first error: {errors[0]}" if errors else ""))
    if ok.attrs.get("stale"):
        print(f"memtint: note: {ok.attrs['stale']} run(s) in {args.results} read files since changed (a machine or "
              "trace edited, the mix run again); left out", file=sys.stderr)
    mixes = ok[["_machine", "mix"]].drop_duplicates().shape[0]
    if args.folds and mixes < args.folds:  # before classifying every program
        raise api.MemtintError(f"{args.results}: {mixes} mix(es) cannot fill --folds {args.folds}")
    policies, left_out = rule_mining.rule_policies(sorted(set(ok["policy"].astype(str))))
    if not policies:
        raise api.MemtintError(f"{args.results}: no policy a rules file can name ({', '.join(left_out)} set a "
                               "scheduler too); mine from a sweep of placement policies")
    classes: dict[tuple[str, str], str] = {}
    several_machines = ok["_machine"].nunique() > 1
    console = Console(stderr=True)

    def classify(program: str, machine: str) -> str:
        if (program, machine) not in classes:
            c = advisor.classify(program, machine,
                                 instructions=args.classify_instructions or advisor.CLASSIFY_INSTRUCTIONS)
            if c.hvr_class is None:
                raise api.MemtintError(f"cannot classify {program}: {c.reason}")
            classes[(program, machine)] = c.hvr_class
            where = f" on {machine}" if several_machines else ""  # one program, a class per machine
            console.print(f"{os.path.basename(program)}{where}: {c.hvr_class}", style="dim", highlight=False)
            for warning in c.warnings:
                console.print(f"warning: {warning}", style="yellow", markup=False, highlight=False)
        return classes[(program, machine)]

    recs = rule_mining.records(ok, classify)
    warnings = [f"{'policies' if len(left_out) > 1 else 'policy'} {', '.join(left_out)} "
                f"{'are' if len(left_out) > 1 else 'is'} left out of the mined rules (a rules file names placement "
                "policies only; a policy+scheduler entry sets the scheduler too); the \"always\" rows still measure them"] \
        if left_out else []
    if args.folds:
        train, test = recs, recs
    else:
        train, test = rule_mining.split(recs, args.holdout, args.seed)
    if not train or not test:
        raise api.MemtintError(f"{args.results}: {len(recs)} mix(es) leave an empty training or held-out half; "
                               "give a sweep with more mixes")
    mined, leaves = rule_mining.mine(train, policies, source=args.out)
    measuring = (f"measured by {args.folds}-fold cross-validation (seed {args.seed})" if args.folds else
                 f"held out for measuring: {len(test)} mixes (seed {args.seed})")
    header = (f"Rules mined by memtint mine-rules from {args.results}: {len(train)} training mixes, "
              f"policies {', '.join(policies)}.\n{measuring[0].upper()}{measuring[1:]}.")
    write_text("--out", args.out, rule_mining.to_toml(mined, header) + "\n")
    measured = {"paper": rule_mining.evaluate(paper, test),
                "mined": (rule_mining.cross_validate(recs, policies, args.folds, args.seed) if args.folds
                          else rule_mining.evaluate(mined, test))}
    measured.update({f"always {p}": rule_mining.fixed_policy(p, test) for p in policies + left_out})
    study = {"results": args.results, "training": len(train), "held_out": len(test), "folds": args.folds,
             "policies": policies,
             "classes": {f"{m}:{p}": c for (p, m), c in classes.items()}, "leaves": leaves,
             "measured": measured, "association_rules": rule_mining.association_rules(train, policies),
             "coalescing": rule_mining.coalescing_observations(recs), "warnings": warnings}
    if _write_json(args.json, study):
        _warn_stderr(warnings)
        return 0
    from memtint.tables import output_console
    out = output_console()
    t = _Table(title=f"Mined from {len(train)} training mixes (paper's decision order)")
    for col in ("leaf", "paper", "support", "best policy", "confidence", "runner-up"):
        t.add_column(col)
    for row in leaves:
        t.add_row(row["leaf"], row["paper_rule"] or "-", f"{row['support']:.1%}", row.get("policy", "-"),
                  f"{row['confidence']:.0%}" if "confidence" in row else "-",
                  f"{row['runner_up']} ({row['runner_up_confidence']:.0%})" if row.get("runner_up") else "-")
    out.print(t)
    t = _Table(title=f"Measured on {len(test)} mixes, the mined rules by {args.folds}-fold cross-validation" if args.folds
              else f"Measured on {len(test)} held-out mixes")
    for col in ("rules", "judged", "pick is best", "within 1 % of best", "WS lost, mean %", "worst %", "uncovered"):
        t.add_column(col)

    def shown(x: float, form: str) -> str:  # NaN: no mix judged
        return format(x, form) if math.isfinite(x) else "-"

    for name, m in measured.items():
        t.add_row(name, f"{m['judged']} of {m['mixes']}", shown(m["accuracy"], ".1%"), shown(m["within_1pct"], ".1%"),
                  shown(m["mean_loss_pct"], ".2f"), shown(m["worst_loss_pct"], ".2f"), str(m["uncovered"]))
    out.print(t)
    if any(m["judged"] < m["mixes"] for m in measured.values()):
        out.print("judged: mixes whose pick was run in the store; a pick the sweep did not run is not judged, so rows "
                  "may rest on different mixes", style="dim")
    out.print(f"rules written to {args.out}")
    online = _hvr_online_refusal(args.out)
    if online:
        out.print(f"[yellow]note:[/yellow] advise reads these rules; hvr-online cannot: {online}")
    _print_warnings(out, warnings)
    return 0


def _hvr_online_refusal(rules: str) -> str:
    """Why ``os.hvr-online.rules`` would refuse a rules file (a pick outside the vertical colour
    sets it moves between, such as buddy), tried on a tiny run; "" when it takes them."""
    from memtint.advisor import try_run

    try:
        try_run("i7-860", 1, "hvr", {"dynamic": "hvr-online", "hvr-online": {"rules": os.path.abspath(rules)}})
    except api.MemtintError as error:
        return str(error).split("os.hvr-online.rules: ", 1)[-1]
    return ""


def _sweep(args: argparse.Namespace) -> int:

    from memtint.tables import sweep_table
    from memtint.sweep import load_results, policy_summary, run_sweep

    if args.ray is not None:
        from memtint.sweep.ray_backend import import_ray

        import_ray()  # "Ray is not installed: ..." before anything else
    spec = _sweep_spec(args.spec, args.set, args.sample)  # every specification error, before anything runs
    from memtint.sweep.store import ResultStore

    ResultStore(args.out).check_writable("--out")  # named as the command's option, not run_sweep's parameter
    report_dir = os.path.join(args.out, "report")
    programs = {p for e in spec.entries for p in e.mix.programs}  # each file once, of thousands of runs
    check_outputs({}, [args.spec, *sorted(programs)])  # a pipe among them would be read once and then hang
    if not args.no_report:  # a report the sweep could not write is said before it runs, not after
        from memtint.outputs import OutputError, check_output_dir

        try:
            from memtint.reports import REPORT_FILES

            check_output_dir("--out", report_dir, [args.spec, *sorted(p for p in programs if os.path.isfile(p))],
                             files=REPORT_FILES)
        except OutputError as error:
            raise OutputError(f"{error} (the sweep's report goes to DIR/report; --no-report leaves it out)") from None
    from memtint import stopping
    from memtint.sweep.ray_backend import ray_prints_on_stderr

    # A signal ends the sweep after storing what completed (it resumes); Ray's own lines go to stderr.
    with stopping.raising(), ray_prints_on_stderr(args.ray):
        summary = run_sweep(spec, args.out, out_option="--out", jobs=args.jobs, ray=args.ray, limit=args.limit,
                            batch_size=args.batch_size)
    rows = policy_summary(load_results(args.out), summary.config_hashes)
    from memtint.tables import output_console
    out = output_console()
    # The table is of this invocation's runs (policy_summary of its hashes): a --limit runs fewer.
    shown = summary.total - summary.remaining
    of = f"{shown} of {summary.total} runs" if summary.remaining else f"{summary.total} runs"
    out.print(sweep_table(rows, f"sweep {summary.name} · {of} · results in {summary.out}"))
    out.print(f"{summary.done} run(s) done ({summary.failed} failed), {summary.skipped} already stored, "
              f"{summary.remaining} left by --limit; {summary.alone_runs} alone run(s); {summary.seconds:.1f} s")
    # Each kind of warning once, with how many runs gave it (an unmet target error, few units);
    # the figures shown are the first run's.
    for w, runs in list(summary.warnings.items())[:5]:
        more = f" (and {len(runs) - 1} more run(s), with their own figures)" if len(runs) > 1 else ""
        _print_warnings(out, [f"{runs[0]}{more}: {w}"])
    if len(summary.warnings) > 5:
        _print_warnings(out, [f"... and {len(summary.warnings) - 5} more kind(s) of warning"])
    if not args.no_report and rows:
        from memtint.reports import write_report

        try:
            report = write_report(args.out, report_dir, config_hashes=summary.config_hashes)
        except api.MemtintError as error:  # the runs are stored: a report can be written later
            _print_warnings(out, [f"no report: {error}"])
        else:
            for sentence in report["findings_markup"]:
                out.print(sentence, soft_wrap=True)
            out.print(f"Report: {report['index']} (summary: {report['summary']})", soft_wrap=True)
    if summary.failed:
        for config_hash, error in list(summary.errors.items())[:5]:
            what = summary.failed_runs.get(config_hash)
            sys.stderr.write(f"memtint: run {config_hash[:12]}{f' ({what})' if what else ''} failed: {error}\n")
        if summary.failed > 5:
            sys.stderr.write(f"memtint: ... and {summary.failed - 5} more (status and error columns in the store)\n")
        return 1
    return 0


def _sweep_spec(path: str, settings: list[tuple[list[str], Any]] | None, sample: bool = False) -> Any:
    """The sweep specification at `path`, with `--set` settings over its [overrides] and [os],
    and with `--sample` its `sampling` table (the default one when it has none)."""
    from memtint.sampling import DEFAULT_SAMPLING
    from memtint.sweep import load_spec, parse_spec
    from memtint.sweep.spec import SweepSpecError
    from memtint.toml_files import TomlFileError, read_toml

    if not settings and not sample:
        return load_spec(path)
    try:
        table, _ = read_toml(path, "sweep specification")
    except TomlFileError as error:
        raise SweepSpecError(str(error)) from None
    for key, value in (("overrides", _overrides(settings, table.get("overrides"))),
                       ("os", _os_settings(settings, table.get("os"), "the specification's policies"))):
        if value is not None:
            table[key] = value
    if sample:
        table.setdefault("sampling", dict(DEFAULT_SAMPLING))
    if (from_set := _sampling_settings(settings)):
        table["sampling"] = {**(table.get("sampling") or DEFAULT_SAMPLING), **from_set}
    try:
        return parse_spec(table, base=os.path.dirname(os.path.abspath(path)), source=path)
    except SweepSpecError as error:  # a value --set gave is blamed on the --set, not on the file
        text = str(error)
        at = text.find("invalid configuration: ")
        if at < 0 and text.startswith(f"{path}: "):  # the spec's own check: "SPEC: key: reason"
            at, text = 0, "invalid configuration: " + text[len(path) + 2:]
        blamed = _at_config_line(path, text[at:], settings) if at >= 0 else text
        raise SweepSpecError(blamed if blamed.startswith("--set ") else str(error)) from None


def _report(args: argparse.Namespace) -> int:

    from memtint.tables import normalised_table
    from memtint.reports import write_report

    from memtint.outputs import check_output_dir

    if os.path.exists(args.results) and not os.path.isdir(args.results):  # before blaming a default --out in it
        raise UsageError(f"{args.results}: is a file, not a sweep's result directory (memtint sweep SPEC --out DIR "
                         "writes one)")
    from memtint.reports import REPORT_FILES, store_inputs

    inputs = store_inputs(args.results) if os.path.isfile(os.path.join(args.results, "manifest.json")) else []
    check_output_dir("--out", args.out or os.path.join(args.results, "report"), inputs, files=REPORT_FILES)
    report = write_report(args.results, args.out, baseline=args.baseline)
    from memtint.tables import output_console
    out = output_console()
    failed = f" ({report['failed']} failed)" if report["failed"] else ""
    out.print(normalised_table(report["rows"], f"{report['runs']} runs{failed} of {report['mixes']} mixes, "
                                               f"normalised to {report['baseline']}"))
    for note in report.get("notes", []):
        out.print(f"note: {note}", style="yellow", markup=False, highlight=False, soft_wrap=True)
    for sentence in report["findings_markup"]:
        out.print(sentence, soft_wrap=True)
    out.print(f"Report: {report['index']} (summary: {report['summary']})", soft_wrap=True)
    if report["failed"] == report["runs"]:  # a report of nothing but dashes, said plainly
        sys.stderr.write(f"memtint: warning: none of the {report['runs']} runs succeeded, so the report has no "
                         f"figures; the first error: {report['first_error']}\n")
    return 0


def _convert(args: argparse.Namespace) -> int:
    for name, path in (("IN", args.input), ("OUT", args.output)):
        if path == "-":  # not stdin or stdout here: a file of that name would be read or written
            raise UsageError(f"{name} -: convert reads and writes files, not stdin or stdout; give a file name (a text "
                             "trace may go to a pipe: --to ramulator IN /dev/stdout | ...)")
    if os.path.exists(args.input) and not os.path.isfile(args.input) and not os.path.isdir(args.input):
        raise UsageError(f"IN {args.input}: is not a regular file (a pipe or device); convert reads its input "
                         "twice (its format, then its records): give a file")
    check_outputs({"OUT": args.output}, [args.input])
    if args.to == "mtt" and os.path.exists(args.output) and not os.path.isfile(args.output):
        # A .mtt's header takes its counts at the end (a seek back): a pipe or device would get a
        # whole file that every reader refuses as unfinished.
        raise UsageError(f"OUT {args.output}: is not a regular file, and a .mtt is written with a seek back to its "
                         "header; write a file, or --to ramulator for a pipe or device")
    # convert_trace writes beside OUT and renames into place only a whole trace with records, so a
    # failure or a stop leaves OUT as it was.
    try:
        header = run_with_status("Converting…", lambda: api.convert_trace(args.input, args.output, to=args.to))
    except api.MemtintError as error:  # the engine names the file it cannot write: OUT
        if not str(error).startswith(f"{args.output}: "):
            raise
        raise api.MemtintError(f"OUT {args.output}: cannot write: {str(error)[len(args.output) + 2:]}") from None
    # A pipe or device has no size to read back: its bytes are not counted.
    size_in, size_out = os.path.getsize(args.input), os.path.getsize(args.output)
    size = (f"{size_out} bytes ({size_out / max(size_in, 1):.2f}x the input)" if os.path.isfile(args.output)
            else "written to a pipe or device")
    sys.stdout.write(f"{args.output}: {header['records']} records, {header['instructions']} instructions, {size}\n")
    return 0


EXIT_PROGRAM_FAILED = 3


def _trace(args: argparse.Namespace) -> int:
    from memtint.capture import capture_trace

    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        raise UsageError("no program to trace: memtint trace [options] -- PROGRAM ARGS...")
    output = args.output or os.path.basename(command[0])
    import shutil

    if args.at_limit == "continue" and not args.limit:
        raise UsageError("--at-limit continue: there is no limit to continue past without --limit N (0 traces to the "
                         "program's end); give --limit N too")
    if os.path.isdir(output) or output.endswith(os.sep):
        raise UsageError(f"-o {output}: is a directory, and the outputs are files named PREFIX.t1.mtt...; give a "
                         f"prefix such as {os.path.join(output, os.path.basename(command[0]))}")
    from memtint.capture import trace_files
    from memtint.outputs import argument_paths

    program = shutil.which(command[0]) or command[0]
    # Every file the capture writes or removes (an earlier capture's threads) is an output.
    # Named as the option that makes them (-o PREFIX, the program's name without it).
    made = "-o" if args.output else "the default prefix"
    outputs = {"--json": args.json, f"{made}'s trace": f"{output}.t1.mtt", f"{made}'s summary": f"{output}.summary.json",
               f"{made}'s log": f"{output}.valgrind.log"}
    outputs.update({f"{made}'s earlier capture's {os.path.basename(f)} (removed first)": f for f in trace_files(output)
                    if f != outputs[f"{made}'s trace"]})
    check_outputs(outputs, [program, *argument_paths(command[1:])], inputs_are_files=False)
    interactive = sys.stderr.isatty()
    last = [0.0]

    def progress(instructions: int, seconds: float) -> None:
        # a line every 10 s in logs; a refreshed line on a terminal
        if interactive:
            sys.stderr.write(f"\rTracing {command[0]}: {instructions / 1e6:,.0f} M instructions, {seconds:.0f} s ")
            sys.stderr.flush()
        elif seconds - last[0] >= 10:
            last[0] = seconds
            sys.stderr.write(f"tracing {command[0]}: {instructions / 1e6:,.0f} M instructions, {seconds:.0f} s\n")

    summary = capture_trace(
        command, output, warmup=args.warmup, limit=args.limit, at_limit=args.at_limit,
        l1_size=args.l1_size, l1_ways=args.l1_ways, l2_size=args.l2_size, l2_ways=args.l2_ways,
        line_size=args.line_size, progress=progress,
    )
    if interactive:
        sys.stderr.write("\r\033[K")
    to_stdout = _write_json(args.json, summary)
    out = sys.stderr if to_stdout else sys.stdout
    stopped = " (stopped at the instruction limit)" if summary["stopped_at_limit"] else ""
    out.write(
        f"{summary['executed_instructions']:,} instructions executed, {summary['traced_instructions']:,} traced"
        f"{stopped}, in {summary['seconds']:.1f} s ({summary['instructions_per_second'] / 1e6:.1f} M instructions/s)\n"
    )
    for t in summary["threads"]:
        out.write(
            f"  thread {t['ordinal']} (lwp {t['lwp']}): {t['file']}: {t['records']:,} records, "
            f"{t['writebacks']:,} writebacks, {t['traced_instructions']:,} instructions\n"
        )
    if summary["untraced_children"]:
        pids = summary["untraced_children"]
        sys.stderr.write(f"memtint: warning: {command[0]} forked {len(pids)} child process(es) without exec (pid "
                         f"{', '.join(map(str, pids))}): they ran untraced, so their memory accesses are not in the "
                         "traces (only the program's own threads are)\n")
    if summary["traced_instructions"] == 0:
        sys.stderr.write(f"memtint: warning: nothing was traced: {command[0]} ran "
                         f"{summary['executed_instructions']:,} instructions"
                         + (f", all within --warmup {args.warmup:,}" if args.warmup else "")
                         + "; its trace has no records, which memtint's readers refuse\n")
    if summary["program_failed"]:
        status = summary["program_exit_status"]
        how = f"was killed by signal {-status}" if status < 0 else f"exited with status {status}"
        sys.stderr.write(f"memtint: warning: {command[0]} {how}; the traces are kept (flagged in the summary)\n")
        return EXIT_PROGRAM_FAILED
    return 0


def _trace_stats(args: argparse.Namespace) -> int:

    from memtint import trace_analysis
    from memtint.comparison import default_baseline  # the machine's Linux-like placement, as compare's alone runs

    if args.seed is not None and not args.machine and all(os.path.isfile(f) for f in args.files):
        raise UsageError(f"--seed {args.seed}: trace files are read as they are; it seeds the built-in profiles and "
                         "the alone run of --machine, and there are neither")
    if args.seed is None:
        args.seed = 1
    if args.policy and not args.machine:  # the policy places the alone run's pages; there is none
        raise UsageError(f"--policy {args.policy}: there is no alone run to place without --machine; give "
                         "--machine PRESET too, or leave --policy out")
    check_outputs({"--json": args.json}, [*args.files, *_machine_inputs(args.machine)])
    from memtint.limits import announce, check_instructions, sim_seconds

    if args.instructions is not None:
        check_instructions("--instructions", args.instructions)
        if args.machine:
            announce(len(args.files) * sim_seconds({"programs": [""], "instructions": args.instructions}))
    else:
        profiles = set(api.presets().get("profiles", []))
        generated = [n for n in args.files if is_profile(n, profiles)]
        if generated:  # a profile's name is the profile, even beside a file of that name
            shadow = next((n for n in generated if os.path.isfile(n)), None)
            raise UsageError(f"{generated[0]}: a built-in profile is generated and never ends; give --instructions N"
                             + (f" (for the file named {shadow}, write ./{shadow})" if shadow else ""))
    results = []
    for i, name in enumerate(args.files, 1):
        results.append(run_with_status(
            f"[{i}/{len(args.files)}] {name}…",
            lambda name=name: trace_analysis.trace_stats(
                name, machine=args.machine, instructions=args.instructions, reuse=not args.no_reuse,
                policy=args.policy or (default_baseline(args.machine) if args.machine else "buddy"), seed=args.seed),
        ))
    if _write_json(args.json, results):
        return 0
    from memtint.tables import trace_stats_tables

    from memtint.tables import output_console
    console = output_console()
    for table in trace_stats_tables(results):
        console.print(table)
    return 0


def _presets(args: argparse.Namespace) -> int:
    if args.same_placement:
        from memtint import placement_equivalence

        machine = args.same_placement
        processes = None
        if os.path.isfile(machine):  # a machine TOML, as compare and sweep take
            from memtint.probe.simulated import describe

            processes = describe(machine)["config"]["cpu"]["cores"]
        elif machine not in {m["name"] for m in api.presets()["machines"]}:
            raise api.MemtintError(f"--same-placement: unknown machine '{machine}' (a preset, see 'memtint presets', "
                                   "or a machine TOML file)")
        groups = placement_equivalence.groups(machine, processes=processes, jobs=os.cpu_count() or 1)
        if args.json:
            sys.stdout.write(json.dumps({"machine": machine, "same_placement": groups}) + "\n")
            return 0
        if not groups:
            print(f"{machine}: every placement policy that runs here places pages its own way")
        for g in groups:
            print(f"{machine}: {', '.join(g[:-1])} and {g[-1]} place every page alike (one result under several names)")
        return 0
    if args.json:
        sys.stdout.write(json.dumps(api.presets(), indent=2) + "\n")
        return 0

    from memtint.tables import presets_tables

    from memtint.tables import output_console
    console = output_console()
    for table in presets_tables(api.presets()):
        console.print(table)
    return 0


def _fail(message: str, status: int = EXIT_USAGE) -> int:
    sys.stderr.write(f"memtint: error: {escaped(message)}\n")  # one line, whatever the message quotes
    return status


class _NamedStdout:
    """Standard output whose write errors name it (a full disk behind `>` gave only "No space
    left on device"); everything else is the stream's own."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def _named(self, call: Callable[[], Any]) -> Any:
        try:
            return call()
        except OSError as error:
            if error.filename is None and not isinstance(error, BrokenPipeError):
                error.filename = "standard output"
                # Leaving flushes stdout again: let what is left in its buffer go nowhere.
                with contextlib.suppress(OSError, ValueError):
                    os.dup2(os.open(os.devnull, os.O_WRONLY), self._stream.fileno())
            raise

    def write(self, text: str) -> int:
        return self._named(lambda: self._stream.write(text))

    def flush(self) -> None:
        self._named(self._stream.flush)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _refuse_empty_values(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """An option given an empty value (a shell's unset variable: ``--report "$OUT"``) is refused
    by name: taken as not given, it silently did nothing (no report written, no check made)."""
    actions = list(parser._actions)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):  # the command's parser, known by its handler
            actions += [a for sub in action.choices.values() if sub._defaults.get("handler") is args.handler
                        for a in sub._actions]
    for action in actions:
        if not action.option_strings or not hasattr(args, action.dest):
            continue
        value = getattr(args, action.dest)
        if value == "" or (isinstance(value, list) and "" in value):
            raise UsageError(f"{max(action.option_strings, key=len)}: the value is empty; give one "
                             "(or leave the option out)")


#: Options that name a machine or a mapping, by their destination: a preset's name or a TOML file.
NAMED_FILES = {"machine": ("--machine", "machine"), "mapping": ("--mapping", "mapping"),
               "simulate": ("--simulate", "machine"), "like": ("--like", "machine")}


def _refuse_missing_files(args: argparse.Namespace) -> None:
    """A machine or mapping option naming a file that is not there is refused by the option and
    the kind of file, before any work: the engine's or a reader's "F: No such file or directory"
    named neither. A name that is no preset and no path is left to the engine's "unknown
    machine", which lists the presets. (The Linux commands, run, run-mix and inspect, name their
    own: ``dram.mapping: F: No such file or directory``.)"""
    if getattr(getattr(args, "handler", None), "__module__", "").startswith("memtint.linux"):
        return
    for dest, (option, kind) in NAMED_FILES.items():
        value = getattr(args, dest, None)
        # (a directory without either: the engine's "D: Is a directory" named no option)
        if not isinstance(value, str) or not (value.endswith(".toml") or os.sep in value or os.path.isdir(value)):
            continue
        presets = api.presets()
        names = ({m["name"] for m in presets.get("machines", [])} if kind == "machine" else
                 {m["name"] for m in presets.get("mappings", [])} | set(presets.get("layouts", [])))
        if value in names or os.path.isfile(value):
            continue
        what = "a directory, not a" if os.path.isdir(value) else "no such"
        named = "a machine preset's name" if kind == "machine" else "a mapping preset's or layout's name (RoBaRaCoCh)"
        raise UsageError(f"{option} {value}: {what} {kind} file (give {named}, which 'memtint presets' lists, or a "
                         f"{kind} TOML file)")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `memtint` command; returns the exit status."""
    from memtint import stopping

    stopping.install()
    if sys.stderr is None:  # started with 2>&-: errors go nowhere, but must not crash
        sys.stderr = open(os.devnull, "w")
    if sys.stdout is None:  # started with >&-: say so, as other tools do, instead of failing at the first print
        return _fail("standard output is closed (started with >&-); send it to a file or /dev/null instead")
    args = None
    stdout = sys.stdout
    if isinstance(stdout, io.TextIOWrapper):  # the real one (not a test's capture)
        sys.stdout = _NamedStdout(stdout)
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        _refuse_empty_values(parser, args)
        _refuse_missing_files(args)
        status = args.handler(args)
        sys.stdout.flush()
        return status
    except api.MemtintError as error:
        text = str(error)
        machine = getattr(args, "machine", None)
        machine_file = machine if isinstance(machine, str) and machine.endswith(".toml") else ""
        if text.startswith("invalid configuration: ") and (machine_file or getattr(args, "set", None)):
            # A key of the --machine file: its line there, unless a --set gave the value.
            text = _at_config_line(machine_file, text, getattr(args, "set", None))
        return _fail(in_its_file(text))
    except UsageError as error:
        return _fail(str(error))
    except LinuxError as error:
        return _fail(str(error))
    except OSError as error:
        if isinstance(error, BrokenPipeError):
            # The reader went away (`memtint presets | head`): stop quietly, as other tools do.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            return 1
        where = f"{error.filename}: " if error.filename else ""
        return _fail(f"{where}{error.strerror or error}")
    except Stopped as stop:
        stopping.exit_now(stop.signum)
    except KeyboardInterrupt:
        # Simulations still running in worker threads cannot be stopped from Python; leave now
        # rather than wait for them at interpreter exit.
        stopping.exit_now(EXIT_INTERRUPTED - 128)
    except Exception as error:  # a bug: still one line, with a way to see the traceback
        # A signal that arrived inside a C extension's call (Ray's wait) comes back wrapped.
        cause = error.__cause__ or error.__context__
        if isinstance(cause, Stopped):
            stopping.exit_now(cause.signum)
        if os.environ.get("MEMTINT_DEBUG"):
            raise
        return _fail(f"internal error: {type(error).__name__}: {error} (set MEMTINT_DEBUG=1 for a traceback)", 1)
    finally:
        sys.stdout = stdout


if __name__ == "__main__":
    sys.exit(main())
