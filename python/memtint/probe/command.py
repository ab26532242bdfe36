"""`memtint probe`: find a machine's DRAM address mapping by timing, on this machine or in the
simulator (--simulate MACHINE, where the true mapping is known and the result is checked
against it), and write it as a mapping file and a machine preset (docs/probe.md)."""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import time
from typing import Any

from memtint.api import MemtintError
from memtint.outputs import OutputError, check_outputs, produced_file


def add_command(commands: Any) -> None:
    from memtint.cli import _at_least  # the command line's one integer rule (bounds named)

    p = commands.add_parser(
        "probe",
        help="discover the DRAM address mapping by timing (this machine, or --simulate MACHINE)",
        description="Time pairs of uncached loads to find row conflicts, solve for the bank functions over GF(2) "
        "(XOR functions included), tell channels, ranks and bank groups apart by their timing, and find row and "
        "column bits by single-bit flips (the BPM paper's Algorithm 1). On Linux it needs root (physical addresses "
        "from /proc/self/pagemap). --simulate MACHINE runs the same search in the simulator and checks it against "
        "the machine's true mapping. --write-preset writes a machine preset for --machine. See docs/probe.md.",
    )
    p.add_argument("--simulate", metavar="MACHINE", help="probe this machine preset or TOML in the simulator")
    p.add_argument("--node", type=int, metavar="N",
                   help="probe memory node N only: with --simulate, the machine's node N (default: every node); on "
                   "Linux, the buffer bound to node N (set_mempolicy MPOL_BIND), read and written as --like's node N "
                   "(needed with --write-preset when --like has several memory nodes)")
    p.add_argument("--like", metavar="MACHINE",
                   help="on Linux: the machine preset whose organisation (channels, ranks, bank groups, banks, rows, "
                   "columns) and settings the result is read and written with (default: counts from the options)")
    for flag, what in (("channels", "channels"), ("ranks", "ranks per channel"), ("bank-groups", "bank groups per rank"),
                       ("banks", "banks per bank group"), ("rows", "rows per bank"), ("columns", "columns per row")):
        p.add_argument(f"--{flag}", type=int, metavar="N", help=f"{what} (overrides --like and the simulated machine)")
    p.add_argument("--write-preset", metavar="FILE",
                   help="write a machine preset using the found mapping (the mapping beside it, FILE's stem + "
                   ".mapping.toml)")
    p.add_argument("--json", metavar="OUT", help="write the result and raw measurements as JSON to OUT ('-' for stdout)")
    p.add_argument("--seed", type=_at_least(0), default=1, help="seed of the search's random choices (default 1)")
    p.add_argument("--repetitions", type=int, default=None, metavar="N",
                   help="timed rounds per measurement (default 8 simulated, 50 on Linux)")
    p.add_argument("--jitter-ns", type=float, default=None, metavar="NS",
                   help="with --simulate: normal timer noise on every sample, ns")
    p.add_argument("--spike-rate", type=float, default=None, metavar="P",
                   help="with --simulate: share of samples hit by an interrupt (1-3 µs)")
    p.add_argument("--corunner-gbps", type=float, default=None, metavar="GBPS",
                   help="with --simulate: another core's random reads, GB/s")
    p.add_argument("--buffer-mb", type=int, default=None, metavar="MB", help="on Linux: the probe's buffer (default 1024)")
    p.add_argument("--hugepages", action="store_true", help="on Linux: a buffer of 2 MiB hugepages")
    p.add_argument("--pair-span-mb", type=int, metavar="MB",
                   help="time pairs within aligned blocks of MB MiB only (a power of two; in a VM backed by 2 MiB host "
                   "pages, 2 with --hugepages finds the host's functions of the bits below 21)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(handler=run_command)


def _counts(args: argparse.Namespace, base: dict | None) -> Any:
    from memtint.probe.search import Organisation

    org = Organisation.from_engine(base) if base else Organisation()
    for flag, attr in (("channels", "channels"), ("ranks", "ranks"), ("bank_groups", "bank_groups"),
                       ("banks", "banks_per_group"), ("rows", "rows"), ("columns", "columns")):
        v = getattr(args, flag)
        if v is not None:
            if v < 1 or v & (v - 1):
                raise MemtintError(f"--{flag.replace('_', '-')} {v}: must be a power of two")
            setattr(org, attr, v)
    return org


def _describe(name: str) -> dict:
    """`describe(name)`, an error about a key of the machine file at the file's line (as
    --machine's are)."""
    from memtint.probe.simulated import describe

    try:
        return describe(name)
    except MemtintError as error:
        if not name.endswith(".toml"):
            raise
        from memtint.cli import _at_config_line

        raise MemtintError(_at_config_line("", str(error), machine_file=name)) from None


def _machine_input(name: str | None) -> list[str]:
    """A machine file and the files it names (its mapping and device files)."""
    from memtint.outputs import referenced_files

    return referenced_files(name) if name else []


#: Flags of one way of probing only: (flag, attribute, "--simulate" or "Linux").
_ONE_WAY = (("--jitter-ns", "jitter_ns", "--simulate"),
            ("--spike-rate", "spike_rate", "--simulate"), ("--corunner-gbps", "corunner_gbps", "--simulate"),
            ("--like", "like", "Linux"), ("--buffer-mb", "buffer_mb", "Linux"), ("--hugepages", "hugepages", "Linux"))


def run_command(args: argparse.Namespace) -> int:
    from rich.console import Console

    from memtint.probe.linux import MAX_REPETITIONS
    from memtint.probe.search import Search, Settings

    # A flag of the other way of probing is refused, not ignored.
    wrong = [flag for flag, attr, way in _ONE_WAY
             if getattr(args, attr) is not None and getattr(args, attr) is not False  # --node 0 is given
             and (way == "--simulate") != bool(args.simulate)]
    if wrong:
        where = "with --simulate" if not args.simulate else "on Linux (without --simulate)"
        raise MemtintError(f"{', '.join(wrong)} only {'apply' if len(wrong) > 1 else 'applies'} {where}")
    for attr in ("jitter_ns", "spike_rate", "corunner_gbps"):
        if getattr(args, attr) is None:
            setattr(args, attr, 0.0)
    if args.buffer_mb is None:
        args.buffer_mb = 1024

    node_count = 1
    if args.simulate:
        info = _describe(args.simulate)
        node_count = len(info["nodes"]) if args.node is None else 1
    outputs = {"--write-preset": args.write_preset, "--json": args.json}
    if args.write_preset and re.search(r"\.(node\d+\.)?mapping\.toml$", args.write_preset):
        # It would write a machine file where another preset keeps its mapping, breaking that preset.
        raise MemtintError(f"--write-preset {args.write_preset}: names a preset's mapping file (a preset NAME.toml "
                           "keeps its mapping beside it in NAME.mapping.toml, which this would replace with a machine "
                           "file); give the machine file's name, NAME.toml")
    if args.write_preset and os.path.exists(args.write_preset) and not (os.path.isfile(args.write_preset)
                                                                          or os.path.isdir(args.write_preset)):
        # The preset is read back as --machine FILE, its mapping beside it: /dev/null kept neither, and left
        # null.mapping.toml in /dev.
        raise MemtintError(f"--write-preset {args.write_preset}: is not a regular file (a device, FIFO or socket); the "
                           "preset is read back as --machine FILE with its mapping file beside it: give a file name")
    if args.write_preset:
        from memtint.probe.preset import mapping_file_name

        directory = os.path.dirname(os.path.abspath(args.write_preset))
        for i in range(node_count):
            outputs[f"--write-preset (mapping {i})"] = os.path.join(directory, mapping_file_name(args.write_preset, i, node_count))
    check_outputs(outputs, _machine_input(args.simulate) + _machine_input(args.like))
    if args.write_preset and not args.simulate and not args.like:
        raise MemtintError(f"--write-preset on Linux needs --like MACHINE: the preset whose device, cores "
                         "and caches the found mapping is written with")
    if args.repetitions is not None and not 1 <= args.repetitions <= MAX_REPETITIONS:
        raise MemtintError(f"--repetitions {args.repetitions}: must be from 1 to {MAX_REPETITIONS:,}")
    err = Console(stderr=True)
    settings = Settings(seed=args.seed)
    failures: list[dict] = []
    if args.pair_span_mb is not None:
        mb = args.pair_span_mb
        if mb < 1 or mb & (mb - 1):
            raise MemtintError(f"--pair-span-mb {mb}: must be a power of two")
        settings.span_bits = 20 + mb.bit_length() - 1
    results: list[tuple[int, Any, Any, dict | None]] = []  # (node, result, organisation, truth)
    started = time.monotonic()
    if args.simulate:
        from memtint.probe.simulated import MAX_CORUNNER_GBPS, MAX_JITTER_NS, Noise, SimulatedTimer

        for flag, value, top in (("--jitter-ns", args.jitter_ns, MAX_JITTER_NS),
                                 ("--corunner-gbps", args.corunner_gbps, MAX_CORUNNER_GBPS), ("--spike-rate", args.spike_rate, 1)):
            if not 0 <= value <= top:  # nan and inf fail it too
                raise MemtintError(f"{flag} {value}: give a finite number from 0 to {top:,}")
        nodes = range(len(info["nodes"])) if args.node is None else [args.node]
        if args.node is not None and not 0 <= args.node < len(info["nodes"]):
            raise MemtintError(f"--node {args.node}: {args.simulate} has {len(info['nodes'])} memory node(s)")
        noise = Noise(jitter_ns=args.jitter_ns, spike_rate=args.spike_rate, corunner_gbps=args.corunner_gbps)
        for node in nodes:
            timer = SimulatedTimer(args.simulate, node=node, noise=noise, repetitions=args.repetitions or 8, seed=args.seed,
                                   info=info)
            org = _counts(args, timer.truth()["organisation"])
            result = _search(Search, timer, org, settings, err, args, f"node {node}" if len(info["nodes"]) > 1 else "", failures)
            results.append((node, result, org, timer.truth()))
        config = info["config"]
        source = f"simulated {info['name']}" + (f", jitter {args.jitter_ns:g} ns" if args.jitter_ns else "") + (
            f", co-runner {args.corunner_gbps:g} GB/s" if args.corunner_gbps else "")
    else:
        from memtint.linux.errors import LinuxError
        from memtint.probe.linux import LinuxTimer, vm_note

        base = None
        config = None
        node = args.node or 0
        if args.like:
            like = _describe(args.like)
            count = len(like["nodes"])
            if args.node is None and count > 1 and args.write_preset:
                raise MemtintError(f"--write-preset with --like {args.like} ({count} memory nodes) needs --node N: the "
                                   "node whose mapping this probe measures (its buffer is bound there); the other "
                                   "nodes keep the preset's mappings")
            if not 0 <= node < count:
                raise MemtintError(f"--node {node}: --like {args.like} has {count} memory node(s)")
            base, config = like["nodes"][node]["organisation"], like["config"]
        bind = _bound_node(args.node)
        org = _counts(args, base)
        try:
            timer = LinuxTimer(buffer_mb=args.buffer_mb, hugepages=args.hugepages, repetitions=args.repetitions or 50,
                               bind=bind)
        except LinuxError as e:
            raise MemtintError(str(e)) from None
        note = vm_note()
        if note:
            err.print(f"[yellow]note:[/] {note}")
        with timer:
            result = _search(Search, timer, org, settings, err, args, "", failures)
        if note:  # the JSON of a failed probe says it too, as the terminal did
            for failure in failures:
                failure["warnings"] = [note, *failure["warnings"]]
        results.append((node, result, org, None))
        source = f"this machine ({os.uname().nodename}), buffer {args.buffer_mb} MiB" + (
            f" on node {args.node}" if args.node is not None else "")
    elapsed = time.monotonic() - started
    if any(r is None for _, r, _, _ in results):
        _json_out(args.json, {"kind": "probe", "source": source, "seconds": round(elapsed, 2), "failed": failures})
        return 1
    matched = _print(results, source, elapsed, stderr=args.json == "-")  # stdout holds the JSON alone
    _json_out(args.json, _summary(results, source, elapsed))
    if any(r.problems for _, r, _, _ in results):
        if args.write_preset:
            print("memtint probe: no preset written: the search could not vouch for the mapping (errors above)",
                  file=sys.stderr)
        return 1
    if args.write_preset:
        _write_preset(args, results, config, source)
    if args.simulate and not all(matched):
        return 1
    return 0


def _bound_node(node: int | None):
    """On Linux, ``--node N``: the memory policy binding the probe's buffer to node N, checked
    (a node without memory, or one the kernel refuses, is named before the probe starts)."""
    if node is None:
        return None
    from memtint.linux.errors import LinuxError
    from memtint.linux.numa import MPOL_BIND, check_policy, node_text, numa_system

    try:
        system = numa_system()
        nodes = system.memory_nodes()
        if node not in nodes:
            raise MemtintError(f"--node {node}: this machine's memory nodes are {node_text(nodes)}")
        check_policy(system, MPOL_BIND, [node])
    except LinuxError as error:
        raise MemtintError(f"--node {node}: {error}") from None
    return system, node


def _json_out(path: str | None, value: dict) -> None:
    from memtint.outputs import write_json

    write_json("--json", path, value)


def _search(search_cls, timer, org, settings, err, args, label: str, failures: list[dict]):
    from rich.markup import escape
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from memtint.probe.search import ProbeError

    with Progress(TextColumn("[progress.description]{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), console=err, transient=False, disable=args.no_progress) as progress:
        tasks: dict[str, Any] = {}

        def update(phase: str, done: int, total: int) -> None:
            name = f"{label}: {phase}" if label else phase
            if name not in tasks:
                tasks[name] = progress.add_task(name, total=total)
            progress.update(tasks[name], completed=done, total=total)

        search = search_cls(timer, org, settings, progress=update)
        try:
            return search.run()
        except ProbeError as e:
            for w in search.warnings:  # what the search had to leave out, which may be why
                err.print(f"note: {escape(w)}")
            err.print(f"memtint probe: {escape(str(e))}")
            # What was measured before the search gave up, for --json.
            failures.append({"label": label, "error": str(e), "warnings": search.warnings,
                             "measurements": timer.measurements, "pairs_timed": search.pairs_timed,
                             "raw": search.raw})
            return None


def _print(results, source: str, elapsed: float, stderr: bool = False) -> list[bool]:
    """Print each node's result; per node with a truth (simulated), whether it matches it."""
    from memtint.tables import _Table as Table

    matched = []
    from memtint.tables import output_console
    console = output_console(stderr=stderr)
    out = sys.stderr if stderr else sys.stdout
    for node, r, org, truth in results:
        # A result with problems is refused below (no preset): its table is what was measured.
        what = "DRAM mapping measured, not consistent (errors below)" if r.problems else "DRAM mapping found"
        title = f"{what} ({source}{', node ' + str(node) if len(results) > 1 else ''})"
        table = Table(title=title, title_justify="left")
        for col in ("field", "bits", "consistency", "margin", "timing"):
            table.add_column(col)
        for f in sorted(r.functions, key=lambda f: ("channel", "rank", "bank_group", "bank").index(f.field)):
            # an infinite margin: the field took every candidate left, so timing did not choose it
            table.add_row(f.field, "^".join(f"b{x}" for x in f.bits()), f"{f.consistency:.3f}",
                          "by elimination" if f.margin == float("inf") else f"{f.margin:.1f}",
                          ", ".join(f"{k} {v:.1f}" for k, v in f.signature.items()))
        fields = r.fields()
        for name, bits, count in (("row", r.row_bits, org.rows if org else None),
                                  ("column", r.column_bits, org.columns if org else None)):
            agreement = min((r.bit_confidence[b] for b in bits if b in r.bit_confidence), default=1)
            # Each bit's agreement says how it timed, not that the field is right: a count at odds
            # with the organisation is said beside it.
            wanted = count.bit_length() - 1 if count else None
            miscount = f" ({len(bits)} bits; the organisation's {wanted})" if wanted is not None and \
                len(bits) != wanted else ""
            table.add_row(name, _bits(fields[name]) + miscount, f"{agreement:.2f}", "", "")
        console.print(table)
        print(f"row conflict {r.slow_ns:.1f} ns against {r.fast_ns:.1f} ns; {r.measurements:,} measurements "
              f"({r.pairs_timed:,} pairs, {r.conflicts} conflicts verified), {elapsed:.1f} s", file=out)
        for w in r.warnings:
            print(f"warning: {w}", file=out)
        for w in r.problems:
            print(f"error: {w}", file=out)
        if truth is not None:
            from memtint.probe.simulated import mapping_differences, true_fields

            want = true_fields(truth)
            wrong = mapping_differences(fields, want)
            matched.append(not wrong)
            if not wrong and r.problems:  # the bits are right; the organisation given is not the machine's
                print("the bits match the simulated machine's mapping, but not the organisation given (the error "
                      "above): check --channels, --ranks, --bank-groups and --banks", file=out)
            elif fields == want:
                print("matches the simulated machine's mapping exactly", file=out)
            elif not wrong:
                # The same banks and rows, written otherwise: what timing cannot tell apart.
                print("matches the simulated machine's mapping up to what timing cannot tell (the order of a field's "
                      "functions, which bit of a bank XOR is the row's); the machine writes "
                      + "; ".join(f"{k} {_bits(want[k])}" for k in want if want[k] != fields[k]), file=out)
            else:
                for k in wrong:
                    print(f"MISMATCH {k}: found {_bits(fields[k])}, true {_bits(want[k])}", file=out)
    return matched


def _bits(items: list) -> str:
    return ", ".join("^".join(f"b{x}" for x in i) if isinstance(i, list) else f"b{i}" for i in items) or "(none)"


def _summary(results, source: str, elapsed: float) -> dict:
    from memtint.probe.simulated import mapping_differences, true_fields

    out = {"kind": "probe", "source": source, "seconds": round(elapsed, 2), "nodes": []}
    for node, r, org, truth in results:
        out["nodes"].append({
            "node": node,
            "fields": r.fields(),
            "functions": [{"bits": f.bits(), "field": f.field, "consistency": f.consistency,
                           "margin": None if f.margin == float("inf") else f.margin, "timing_ns": f.signature} for f in r.functions],
            "bit_confidence": {str(k): v for k, v in sorted(r.bit_confidence.items())},
            "row_conflict_ns": r.slow_ns, "other_pair_ns": r.fast_ns, "threshold_ns": r.threshold_ns,
            "measurements": r.measurements, "pairs_timed": r.pairs_timed, "conflicts": r.conflicts,
            "confidence": r.confidence(), "warnings": r.warnings, "problems": r.problems,
            # The machine's own fields, and the same mapping up to what timing cannot tell.
            "exact": None if truth is None else r.fields() == true_fields(truth),
            "matches": None if truth is None else not mapping_differences(r.fields(), true_fields(truth)),
            "raw": r.raw,
        })
    return out


def _write_preset(args, results, config: dict, source: str) -> None:
    from memtint.probe.preset import dumps, machine_with_mappings, mapping_file_name, mapping_toml, organisation_table

    stem = os.path.splitext(os.path.basename(args.write_preset))[0]
    directory = os.path.dirname(os.path.abspath(args.write_preset))
    mappings: dict[int, str] = {}
    files: list[tuple[str, str]] = []  # (path, text)
    nodes = len(results)
    for node, r, org, truth in results:
        file = mapping_file_name(args.write_preset, node, nodes)
        files.append((os.path.join(directory, file),
                      mapping_toml(r, f"{stem}-node{node}" if nodes > 1 else stem, organisation_table(org), source)))
        mappings[node] = file
    machine = machine_with_mappings(config, mappings, stem, f"{config.get('description') or config['name']} (mapping probed: {source})")
    memory_nodes = sum(1 for n in config.get("nodes") or [{}] if n.get("memory", True))
    kept = [i for i in range(memory_nodes) if i not in mappings]
    kept_text = (f"memory node(s) {', '.join(map(str, kept))} keep {config['name']}'s mapping (not probed)" if kept else "")
    header = (f"# Written by memtint probe ({source}); the mapping file(s) beside it: {', '.join(mappings.values())}.\n"
              + (f"# Probed: memory node(s) {', '.join(map(str, mappings))}; {kept_text}.\n" if kept else "")
              + f"# The other settings are {config['name']}'s"
              + (f", but for its [variants] (machines of its mapping, not this one)" if config.get("variants") else "")
              + ".\n")
    files.append((args.write_preset, header + dumps(machine)))
    # All or none: each file is written beside its place first, and renamed into place only once
    # every one is written, so a failed write leaves no new mapping beside an old preset.
    with contextlib.ExitStack() as stack:
        for path, text in files:
            made = stack.enter_context(produced_file("--write-preset", path, suffix=".toml"))
            try:
                with open(made, "w", encoding="utf-8") as out:
                    out.write(text)
            except OSError as error:
                raise OutputError(f"--write-preset {path}: cannot write: {error.strerror or error}") from None
    print(f"preset: {args.write_preset} (mapping {', '.join(mappings.values())}); use it as --machine {args.write_preset}",
          file=sys.stderr if args.json == "-" else sys.stdout)
    if kept:
        print(f"note: {args.write_preset}: {kept_text}", file=sys.stderr)

