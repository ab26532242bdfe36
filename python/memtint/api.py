"""The memtint Python API: build a run specification, run the engine, return statistics.

Every entry point here is a thin layer over the Rust engine's JSON boundary
(``memtint._engine``): the names of machines, mappings, schedulers and options are the ones used
in the TOML presets and by the ``memtint`` command. The run specification and the statistics
schema are documented in docs/stats.md.
"""

from __future__ import annotations

import contextlib
import functools
import json
import numbers
import os
from typing import Any, Iterator

from memtint import _engine
from memtint._engine import MemtintError
from memtint.messages import escaped

__all__ = [
    "MemtintError", "generate", "presets", "run_dram", "trace", "build_run_spec",
    "build_sim_spec", "run_sim", "run_sim_spec", "mix_metrics", "cpu_trace_stats", "convert_trace",
]

def engine_json(value: Any) -> str:
    """``value`` as the engine's JSON. A number JSON cannot carry (NaN, an infinity: ``nan`` in
    TOML, ``1e400`` on the command line) is refused here with its key, since the engine would
    only see a syntax error at a column of this text; so is an integer beyond 64 bits, which the
    engine would read as a floating-point number and refuse without its bound."""
    value = plain(value)
    if (huge := _beyond_64_bits(value)):
        raise MemtintError(f"invalid configuration: {huge[0]}: {huge[1]} is more than any setting takes "
                           f"(at most {2**64 - 1:,}, 64 bits)")
    try:
        return json.dumps(value, allow_nan=False)
    except TypeError as error:  # an object no setting is (a set, a function...)
        raise MemtintError(f"invalid configuration: {error}") from None
    except ValueError:
        raise MemtintError(f"invalid configuration: {_non_finite(value) or 'a value'} is not a finite number "
                           "(NaN and infinities are not settings)") from None


def plain(value: Any) -> Any:
    """``value`` with the numbers and paths a notebook hands over made the plain ones JSON and
    the settings' checks take: a NumPy integer (``np.arange(3)``'s items) as an int, a NumPy
    float as a float, a NumPy bool as a bool, a ``pathlib.Path`` as its text; tuples as lists."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if type(value).__module__ == "numpy" and type(value).__name__ in ("bool", "bool_"):  # no numbers.Number
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    return value


def _beyond_64_bits(value: Any, path: str = "") -> tuple[str, int] | None:
    """The key path and value of the first integer outside the engine's 64-bit range."""
    if isinstance(value, int) and not isinstance(value, bool):
        return (path or "value", value) if not -2**63 <= value < 2**64 else None
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, (list, tuple)) else ()
    for key, item in items:
        found = _beyond_64_bits(item, f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}" if path else str(key))
        if found:
            return found
    return None


def whole_number(key: str, value: Any, least: int = 0, most: int | None = None, most_text: str = "") -> int:
    """``value`` as an int, refused naming ``key`` unless a whole number (not a bool, a float or a
    string: int() took "20000" and cut 2.5 to 2 without a word) from ``least`` to ``most``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise MemtintError(f"{key}: expected a whole number, got {value!r}")
    if value < least or (most is not None and value > most):
        bound = f"from {least} to {most_text or f'{most:,}'}" if most is not None else f"of at least {least}"
        raise MemtintError(f"{key}: expected a whole number {bound}, got {value!r}")
    return int(value)


def table_argument(key: str, value: Any, example: str) -> dict[str, Any] | None:
    """A dict parameter (``os_options``, ``sampling``, ``overrides``): None or a dict, else refused
    naming ``key``."""
    if value is not None and not isinstance(value, dict):
        raise MemtintError(f"{key}: expected a table (a dict such as {example}), got {value!r}")
    return value


def names_argument(key: str, value: Any, what: str = "names") -> list[Any]:
    """A list parameter of names or paths: a string is a sequence too, split into characters."""
    if isinstance(value, (str, bytes, os.PathLike)) or not isinstance(value, (list, tuple)):
        raise MemtintError(f"{key}: expected a list of {what}, got {value!r}"
                           + (f" (a string is not a list: [{value!r}])" if isinstance(value, str) else ""))
    return list(value)


def flag_argument(key: str, value: Any, error: type[MemtintError] = MemtintError) -> bool:
    """A bool parameter: ``"no"`` is truthy, so only True and False are taken; else ``error``
    (the Linux commands' own kind of MemtintError) naming ``key``."""
    if not isinstance(value, bool):
        raise error(f"{key}: expected True or False, got {value!r}")
    return value


def function_argument(key: str, value: Any, takes: str, error: type[MemtintError] = MemtintError) -> None:
    """A callback parameter: None or something callable, else ``error`` naming ``key`` (a string
    failed only when first called, after work was done)."""
    if value is not None and not callable(value):
        raise error(f"{key}: expected a function of {takes}, got {value!r}")


def instruction_count(key: str, value: Any, least: int = 1) -> int:
    """An instruction count (a run's, a warm-up's with ``least`` 0): a whole number, within the
    limit every command keeps (memtint.limits.MAX_INSTRUCTIONS), refused naming ``key``."""
    from memtint.limits import check_instructions

    return check_instructions(key, whole_number(key, value, least))


def _seed(key: str, value: Any) -> int:
    from memtint.limits import MAX_SEED

    return whole_number(key, value, 0, MAX_SEED, "2^63-1")


def _non_finite(value: Any, path: str = "") -> str | None:
    """The key path of the first NaN or infinity in ``value`` (``overrides.controller.read_queue``)."""
    import math

    if isinstance(value, float) and not math.isfinite(value):
        return f"{path or 'value'}: {value}"
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        found = _non_finite(item, f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}" if path else str(key))
        if found:
            return found
    return None


GENERATOR_KINDS = ("stream", "random", "strided", "conflict", "mix")
TRACE_FORMATS = ("ramulator", "dramsim3", "ramulator2", "dramsim2")


def trace(path: str | os.PathLike[str], format: str | None = None) -> dict[str, Any]:
    """A workload read from a DRAM trace file (plain or gzip-compressed).

    ``format`` is ``"ramulator"`` (``0x1a2b3c40 R``), ``"dramsim3"`` (``0x1a2b3c40 READ 12``),
    ``"ramulator2"`` (Ramulator 2's LoadStoreTrace: ``LD 0x1a2b3c40``) or ``"dramsim2"``
    (DRAMSim2's k6, mase or misc trace: ``0x1a2b3c40 P_MEM_RD 12``, ``0x1a2b3c40 READ 12``,
    ``0x1a2b3c40 read``; one kind per file). ``None`` (the default) takes it from the file's
    name as ``memtint dram --trace`` does (``memtint.api.trace_format``): ``stream.dramsim3``,
    ``x.ramulator2.gz``, DRAMSim2's ``k6_*.trc``; else ``"ramulator"``.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise MemtintError(f"path: expected a trace file's path, got {path!r}")
    path = os.fspath(path)
    return {"trace": {"path": path, "format": trace_format(path) if format is None else format}}


def _suffix_format(path: str) -> str | None:
    """The DRAM trace format a file's suffix names before any .gz (``stream.dramsim3.gz``), if any."""
    suffix = os.path.splitext(path[:-3] if path.lower().endswith(".gz") else path)[1].lstrip(".").lower()
    return suffix if suffix in TRACE_FORMATS else None


def trace_format(path: str) -> str:
    """A DRAM trace's format from its suffix (``stream.dramsim3``, ``stream.dramsim3.gz``), or
    DRAMSim2's own names (``k6_*.trc``, ``mase_*.trc``, ``misc_*.trc``, as its trace-based
    simulator picks the kind), else ramulator."""
    plain = path[:-3] if path.lower().endswith(".gz") else path
    name = os.path.basename(plain)
    if name.endswith(".trc") and name.split("_", 1)[0] in ("k6", "mase", "misc") and "_" in name:
        return "dramsim2"
    return _suffix_format(path) or "ramulator"


def generate(
    kind: str,
    requests: int,
    seed: int = 1,
    *,
    read_fraction: float | None = None,
    footprint_bytes: int | None = None,
    stride_bytes: int | None = None,
    streams: int | None = None,
    banks: int | None = None,
) -> dict[str, Any]:
    """A workload from one of the engine's seeded generators (``memtint presets`` lists them).

    The same kind, seed and parameters give the same requests on every platform. Parameters
    left as ``None`` take the generator's defaults.
    """
    from memtint.limits import dram_seconds

    if not isinstance(kind, str):
        raise MemtintError(f"kind: expected a generator name ({', '.join(GENERATOR_KINDS)}), got {kind!r}")
    requests = whole_number("requests", requests, 1)
    dram_seconds(requests)  # refuses more than limits.MAX_REQUESTS
    seed = _seed("seed", seed)
    return {  # plain ints: the workload is the caller's to json.dumps (an np.int64 was kept)
        "generate": {
            "kind": kind,
            "requests": requests,
            "seed": seed,
            "read_fraction": read_fraction,
            "footprint_bytes": footprint_bytes,
            "stride_bytes": stride_bytes,
            "streams": streams,
            "banks": banks,
        }
    }


def build_run_spec(
    machine: str | dict[str, Any],
    workload: dict[str, Any],
    *,
    mapping: str | None = None,
    scheduler: str | None = None,
    row_policy: str | None = None,
    refresh: str | None = None,
    read_queue: int | None = None,
    write_queue: int | None = None,
    overrides: dict[str, Any] | None = None,
    outstanding: int | None = None,
    check: bool = False,
    cycle_by_cycle: bool = False,
    sources: int | None = None,
    vector_isa: str | None = None,
    export_drampower: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """The JSON run specification that :func:`run_dram` sends to the engine.

    Raises :class:`MemtintError` for a workload that is not exactly one of ``trace`` and
    ``generate``, or a trace file that does not exist.
    """
    flag_argument("check", check)
    flag_argument("cycle_by_cycle", cycle_by_cycle)
    table_argument("overrides", overrides, '{"dram": {"channels": 2}}')
    for section, table in (overrides or {}).items():
        table_argument(f"overrides.{section}", table, '{"channels": 2}')
    if not isinstance(workload, dict) or len(workload) != 1 or not ({"trace", "generate"} & workload.keys()):
        raise MemtintError(
            "workload must be exactly one of {'trace': {...}} or {'generate': {...}} "
            "(see memtint.trace() and memtint.generate())"
        )
    if "trace" in workload:
        path = workload["trace"].get("path") if isinstance(workload["trace"], dict) else None
        if not path:
            raise MemtintError("workload.trace needs a 'path'")
        if not os.path.exists(path):
            raise MemtintError(f"{path}: no such trace file")
        if os.path.isdir(path):
            raise MemtintError(f"{path}: is a directory, not a trace file")

    merged: dict[str, Any] = {key: dict(value) for key, value in (overrides or {}).items()}
    controller = merged.setdefault("controller", {})
    for key, value in (("read_queue", read_queue), ("write_queue", write_queue)):
        if value is None:
            continue
        # Given twice, differently: the run carried one and the caller read the other.
        if key in controller and controller[key] != value:
            raise MemtintError(f"overrides.controller.{key}: the queue comes from {key} ({value!r}), not from "
                               f"the overrides (which say {controller[key]!r})")
        controller[key] = value
    if not controller:
        del merged["controller"]

    spec: dict[str, Any] = {"machine": machine, "workload": workload}
    optional = {
        "mapping": mapping,
        "scheduler": scheduler,
        "row_policy": row_policy,
        "refresh": refresh,
        "outstanding": outstanding,
        "sources": sources,
        "vector_isa": vector_isa,
        "export_drampower": os.fspath(export_drampower) if export_drampower is not None else None,
    }
    spec.update({key: value for key, value in optional.items() if value is not None})
    if merged:
        spec["overrides"] = merged
    spec["check"] = check
    spec["cycle_by_cycle"] = cycle_by_cycle
    return spec


def run_dram(machine: str | dict[str, Any], workload: dict[str, Any], **options: Any) -> dict[str, Any]:
    """Run a DRAM-level simulation and return its statistics (docs/stats.md).

    ``machine`` is a preset name (``memtint presets``), a path to a machine TOML or a complete
    machine table as a dict (docs/stats.md, "Machine files"); ``workload``
    comes from :func:`trace` or :func:`generate`. Options (all optional): ``mapping`` (a layout
    such as ``"RoBaRaCoCh"``, a mapping preset or a mapping TOML path), ``scheduler``,
    ``row_policy``, ``refresh``, ``read_queue``, ``write_queue``, ``overrides`` (a partial
    machine table, e.g. ``{"dram": {"channels": 2}}``), ``outstanding`` (requests in flight),
    ``check`` (run the independent timing checker), ``cycle_by_cycle`` (no event skipping),
    ``sources`` (request i comes from source i mod ``sources``, for the application-aware schedulers)
    ``vector_isa`` (the driver loop's instruction set: ``"best"``, the default, ``"baseline"``,
    ``"x86-64-v2"`` or ``"x86-64-v3"``; the same results at every level, only the speed differs)
    and ``export_drampower`` (a new or empty directory: the run's commands and device in DRAMPower's
    formats, docs/energy.md).

    The engine runs with the GIL released, so runs in several threads proceed in parallel;
    Ctrl-C stops a run on the main thread (KeyboardInterrupt).
    Raises :class:`MemtintError` with a complete message for any configuration or input error.
    """
    unknown = set(options) - set(build_run_spec.__kwdefaults__ or {})
    if unknown:
        raise TypeError(f"run_dram() got unexpected option(s): {', '.join(sorted(unknown))}")
    if options.get("export_drampower") is not None:  # named by its key, as the command line names its option
        from memtint.outputs import OutputError, check_output_dir

        if not isinstance(options["export_drampower"], (str, os.PathLike)):
            raise MemtintError(f"export_drampower: expected a directory's path, got {options['export_drampower']!r}")

        try:
            check_output_dir("export_drampower", os.fspath(options["export_drampower"]))
        except OutputError as error:
            raise MemtintError(str(error)) from None
    spec = build_run_spec(machine, workload, **options)
    return json.loads(interruptible(_engine.run_dram, engine_json(spec)))


@functools.lru_cache(maxsize=1)
def _catalogue_text() -> str:
    # The catalogue is compiled into the engine (presets and registered components), so one
    # process always gets the same text; building it takes about 10 ms, once per process.
    return _engine.presets_json()


def presets() -> dict[str, Any]:
    """The preset catalogue: machines, devices, mappings, layouts, schedulers, row policies,
    refresh managers, generators and trace formats, as listed by ``memtint presets`` (a new
    dictionary each call: the caller may change it)."""
    return json.loads(_catalogue_text())


# --- CPU-trace runs (multi-programmed simulation with the OS page-allocation model) ---------

# The engine's built-in profiles (one list, the engine's catalogue).
PROFILES = tuple(presets()["profiles"])


def _program(program: str | os.PathLike[str], key: str = "programs", part: str = "") -> str:
    """A mix member: a built-in profile (``stream``, ``light:reads_pki=2``) or a trace path;
    ``key`` names it in errors (``programs[1]``), then ``part`` (``phase 2: ``), so that every
    error begins with its key path."""
    if not isinstance(program, (str, os.PathLike)):
        raise MemtintError(f"{key}: {part}expected a program (profile name or trace path), got {program!r}")
    text = os.fspath(program)
    if text.startswith("phases:"):  # a program in phases (engine: workload/phases.rs): each part resolved
        return "phases:" + "+".join(_program(workload, key, f"phase {k + 1}: ") + length if workload else length
                                    for k, (workload, length) in enumerate(phase_parts(text)))
    if text.split(":", 1)[0] in PROFILES:
        return text
    if not os.path.exists(text):
        from memtint import workloads

        if text in workloads.suite():  # a suite program by name: its committed trace
            return workloads.trace_path(text)
        raise MemtintError(
            f"{key}: {part}{escaped(text)}: no such trace file, not a built-in workload profile ({', '.join(PROFILES)}) and not a "
            f"program of the workload suite ({', '.join(workloads.suite())})"
        )
    if os.path.isdir(text):
        raise MemtintError(f"{key}: {part}{escaped(text)}: is a directory, not a trace file")
    return absolute_path(text)


def phase_parts(program: str) -> list[tuple[str, str]]:
    """The phases of a ``phases:A@N+B@M`` program: each one's workload (a profile or a trace
    path) and its length suffix (``@N``, or "" for the last phase)."""
    out = []
    for part in program[len("phases:"):].split("+"):
        workload, at, length = part.rpartition("@") if "@" in part else (part, "", "")
        out.append((workload, at + length))
    return out


def absolute_path(path: str) -> str:
    """``path`` made absolute, naming the file the kernel opens: abspath folds "dir/.." by name,
    which through a symlinked directory is another place (a run file in a symlinked configs/
    naming ../../workloads/...)."""
    absolute = os.path.abspath(path)
    if os.path.exists(absolute) and os.path.samefile(absolute, path):
        return absolute
    return os.path.realpath(path)


_CHECKOUT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))


def is_mix_file(name: Any) -> bool:
    """Whether ``name`` is a mix file: a ``.toml`` file (a trace is never one) in the format of
    ``configs/mixes`` (``programs = [...]``, optional ``description``)."""
    return isinstance(name, (str, os.PathLike)) and os.fspath(name).endswith(".toml") and os.path.isfile(name)


def mix_programs(name: str) -> list[str]:
    """The programs of a named mix (``configs/mixes``), or of a mix file (a ``.toml`` file in their
    format: ``programs = [...]``, optional ``description``).
    Trace paths in a named mix are relative to the checkout root (``workloads/traces/...``,
    ``../shared/traces/...``), in a mix file to its directory, so they are resolved here and
    work from any directory; a program of the workload suite named in a mix file (``bfs``) stays
    a name unless a file of that name is beside it, and any other name is refused at its line."""
    if is_mix_file(name):
        return _mix_file_programs(os.fspath(name))
    for mix in presets().get("mixes", []):
        if mix["name"] == name:
            return [
                p if p.split(":", 1)[0] in PROFILES or os.path.isabs(p) else os.path.normpath(os.path.join(_CHECKOUT, p))
                for p in mix["programs"]
            ]
    raise MemtintError(f"unknown mix {name!r}; valid mixes: {', '.join(m['name'] for m in presets().get('mixes', []))}")


def _mix_file_programs(path: str) -> list[str]:
    from memtint.toml_files import inline_element_line, key_line, read_toml

    table, text = read_toml(path, "mix file")
    unknown = sorted(set(table) - {"programs", "description"})
    if unknown:
        raise MemtintError(f"{path}{key_line(text, unknown[0])}: unknown key {unknown[0]!r} (a mix file has programs "
                           "and description)")
    programs = table.get("programs")
    if not isinstance(programs, list) or not programs or not all(isinstance(p, str) and p for p in programs):
        raise MemtintError(f"{path}{key_line(text, 'programs')}: programs: expected a non-empty list of program "
                           f"names or trace paths, got {programs!r}")
    from memtint import workloads

    base = os.path.dirname(os.path.abspath(path))
    out = []
    for i, p in enumerate(programs):
        if p.split(":", 1)[0] in PROFILES or p.startswith("phases:") or os.path.isabs(p):
            out.append(p)
            continue
        beside = os.path.normpath(os.path.join(base, p))
        if os.path.exists(beside):
            out.append(beside)
        elif p in workloads.suite():  # a suite program by name, as --mix takes it
            out.append(p)
        else:  # named here, at its line: later it would be a path never written
            raise MemtintError(
                f"{path}{inline_element_line(text, 'programs', [i])}: programs[{i}]: {escaped(p)}: no trace file "
                f"{escaped(beside)} (paths are relative to the mix file), not a built-in workload profile "
                f"({', '.join(PROFILES)}) and not a program of the workload suite ({', '.join(workloads.suite())})")
    return out


def _process(p: dict[str, Any], i: int = 0) -> dict[str, Any]:
    """A process table with its thread programs resolved like ``programs``."""
    if not isinstance(p, dict) or "threads" not in p:
        raise MemtintError(f"processes[{i}]: a process is a table with 'threads', got {p!r}")
    if not isinstance(p["threads"], list):
        raise MemtintError(f"processes[{i}].threads: expected a list of programs, got {p['threads']!r}")
    out = dict(p)
    out["threads"] = [
        _program(t, f"processes[{i}].threads[{k}]") if isinstance(t, str)
        else {**t, "program": _program(t["program"], f"processes[{i}].threads[{k}]")}
        if isinstance(t, dict) and "program" in t else t
        for k, t in enumerate(p["threads"])
    ]
    return out


def build_sim_spec(
    machine: str | dict[str, Any],
    programs: list[str],
    *,
    instructions: int,
    policy: str | None = None,
    seed: int = 1,
    os_options: dict[str, Any] | None = None,
    mapping: str | None = None,
    scheduler: str | None = None,
    overrides: dict[str, Any] | None = None,
    processes: list[dict[str, Any]] | None = None,
    warmup: int = 0,
    sampling: dict[str, Any] | None = None,
    at_end: str | None = None,
    barrier_every: int | None = None,
) -> dict[str, Any]:
    """The JSON specification :func:`run_sim` sends to the engine (docs/stats.md).

    ``policy``: the placement policy; None takes ``os_options``' ``policy``, else ``buddy``. Both
    given and different is refused: the run would carry the other's name.

    ``warmup``: instructions each thread runs through the page tables and caches, without DRAM
    timing, before statistics start (0: none).

    ``sampling``: SMARTS-style sampled simulation, ``{"mode": "periodic", "unit": N,
    "period": N, "warming": N, "functional": N, "min_units": N, "target_error": x}`` (docs/stats.md; the engine
    checks the values and names the key). None (the default) puts no ``sampling`` key, so a
    detailed run's spec is unchanged.

    ``processes`` replaces ``programs`` (give ``[]``) with processes of several threads:
    ``[{"name": .., "threads": ["stream", {"program": "light", "affinity": [0], "nice": 0}],
    "affinity": [..], "nice": 0}, ...]`` (docs/threads.md).

    ``at_end`` (``"continue"``, the default, ``"wait"`` or ``"exit"``) and ``barrier_every`` (a
    barrier every N instructions over all the run's threads) are the run file's keys of those
    names, for every thread (docs/threads.md); a process's own ``at_end`` or ``barrier_every``
    overrides them for its threads."""
    programs = names_argument("programs", programs, "programs (profile names or trace paths)")
    if processes is not None:
        processes = names_argument("processes", processes, "processes (tables with 'threads')")
        if programs:
            raise MemtintError("programs: give either programs (one per core) or processes, not both")
        if not processes:
            raise MemtintError("processes: give at least one process")
    elif not programs:
        raise MemtintError("programs: a mix needs at least one program")
    instruction_count("instructions", instructions)
    _seed("seed", seed)
    instruction_count("warmup", warmup, 0)
    table_argument("os_options", os_options, '{"strict": True}')
    table_argument("overrides", overrides, '{"dram": {"channels": 2}}')
    table_argument("sampling", sampling, '{"unit": 100000, "warming": 100000}')
    os_table = dict(os_options or {})
    # Asked for twice, differently: whichever ran, the caller would read the other's name on it.
    if policy is not None and "policy" in os_table and os_table["policy"] != policy:
        raise MemtintError(f"os_options.policy: the policy comes from policy ({policy!r}), not from the os table "
                           f"(which says {os_table['policy']!r})")
    os_table["policy"] = policy if policy is not None else os_table.get("policy", "buddy")
    spec: dict[str, Any] = {
        "machine": machine,
        "programs": [_program(p, f"programs[{i}]") for i, p in enumerate(programs)],
        "instructions": int(instructions),
        "seed": int(seed),
        "os": os_table,
    }
    if processes is not None:
        spec["processes"] = [_process(p, i) for i, p in enumerate(processes)]
    if warmup:
        spec["warmup"] = int(warmup)
    for key, value in (("mapping", mapping), ("scheduler", scheduler), ("overrides", overrides)):
        if value is not None:
            spec[key] = value
    if sampling is not None:
        spec["sampling"] = dict(sampling)
    if at_end is not None:
        if at_end not in ("continue", "wait", "exit"):
            raise MemtintError(f'at_end: expected "continue", "wait" or "exit", got {at_end!r}')
        spec["at_end"] = at_end
    if barrier_every is not None:
        spec["barrier_every"] = whole_number("barrier_every", barrier_every, 1)
    return spec


def run_sim(machine: str | dict[str, Any], programs: list[str], **options: Any) -> dict[str, Any]:
    """Run programs (one per core, each a process) on a machine under a page-placement policy,
    until each core retires ``instructions``; return the statistics (docs/stats.md).

    ``machine`` is a preset name, a machine TOML path, or a complete machine table as a dict
    (the TOML schema: ``{"name": ..., "dram": {...}, "controller": {...}, "cpu": {...},
    "cache": {...}}``).

    Options: ``instructions`` (required), ``policy`` (``buddy``, ``bpm``, ``bpm-plus``,
    ``cache-only``, ``bank-only``, ``a-vp``, ``b-vp``, ``c-vp``, ``random-interleave``...),
    ``seed``, ``os_options`` (the ``[os]`` table: ``strict``, ``colours``, ``groups``, ``sched``,
    ``ccps``, ``mcp``, ``profiles``...), ``mapping``, ``scheduler``, ``overrides``, and
    ``processes`` (processes with several threads instead of ``programs``; docs/threads.md),
    ``at_end`` and ``barrier_every`` (one SPMD program: threads wait at its end, or at a barrier
    every N instructions; docs/threads.md), ``warmup`` (instructions per core run through page
    tables and caches first; default 0) and ``sampling`` (a sampled run's settings; see
    :func:`build_sim_spec`).
    Policies include ``ccps`` (CCPS core regions and binding), ``mcp`` and ``imps`` (channel
    partitioning from ``os_options["profiles"]``).

    A run estimated above 10 minutes warns before it starts (``warnings``). Ctrl-C (a notebook's
    stop) ends the run within about a million simulated core cycles and raises
    KeyboardInterrupt. NumPy numbers and ``pathlib`` paths are taken as plain ones.
    """
    import inspect

    known = [k for k in inspect.signature(build_sim_spec).parameters if k not in ("machine", "programs")]
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise TypeError(f"run_sim() got unexpected option(s): {', '.join(unknown)}; its options: {', '.join(known)}")
    if "instructions" not in options:
        raise TypeError("run_sim() needs instructions= (instructions per core)")
    spec = build_sim_spec(machine, programs, **options)
    _warn_if_long(spec)
    _check_rules_files(spec.get("os"))
    return json.loads(interruptible(_engine.run_sim, engine_json(spec)))


def interruptible(call: Any, *args: Any) -> Any:
    """``call(*args)`` (an engine call, which holds no GIL) such that Ctrl-C stops it: on the main
    thread it runs on a worker thread while this one waits, and an interrupt asks the engine to
    stop (``_engine.request_stop``), waits for the run to return, and is raised again. Elsewhere
    (a pool's worker) it is called as it is: whoever waits on the pool stops it
    (:func:`stop_engine_runs`)."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        return call(*args)
    box: dict[str, Any] = {}
    # Waited for by an Event, not Thread.join: a join that a KeyboardInterrupt cuts short can mark
    # the thread as ended while it runs (CPython before 3.13), and the next join returned at
    # once: the stop was cleared before the engine read it, and the run went on to its end.
    done = threading.Event()

    def work() -> None:
        try:
            box["value"] = call(*args)
        except BaseException as error:  # noqa: BLE001 - handed to the caller's thread
            box["error"] = error
        finally:
            done.set()

    threading.Thread(target=work, name="memtint-engine", daemon=True).start()
    try:
        while not done.wait(0.1):
            pass
    except KeyboardInterrupt:
        with stop_engine_runs():
            while not done.wait(0.1):
                pass
        raise
    if "error" in box:
        raise box["error"]
    return box["value"]


@contextlib.contextmanager
def stop_engine_runs() -> Iterator[None]:
    """Ask every engine run in progress to stop (they end with MemtintError "interrupted") while
    the block waits for them; runs start normally again after it."""
    _engine.request_stop()
    try:
        yield
    finally:
        _engine.clear_stop()


def _warn_if_long(spec: dict[str, Any]) -> None:
    """A run estimated above 10 minutes is said before it starts, as the command line says it."""
    import warnings

    from memtint.limits import ANNOUNCE_SECONDS, duration_text, sim_seconds

    seconds = sim_seconds(spec)
    if seconds > ANNOUNCE_SECONDS:
        warnings.warn(f"this run will take about {duration_text(seconds)} (estimated from its size; Ctrl-C stops it)",
                      stacklevel=3)


def run_sim_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """Run a complete specification (as written by :func:`build_sim_spec` or a ``sim`` TOML),
    with :func:`run_sim`'s checks: the instruction limits, and programs named as a run file
    names them (a profile, a trace path, a program of the workload suite by name)."""
    from memtint.limits import instruction_targets

    if not isinstance(spec, dict):
        raise MemtintError(f"spec: expected a run specification (a dict, as build_sim_spec gives), got {spec!r}")
    spec = plain(spec)
    instruction_targets(spec)  # every instruction count checked against the limit
    if isinstance(spec.get("programs"), list):
        spec["programs"] = [_program(p, f"programs[{i}]") if isinstance(p, str) else p
                            for i, p in enumerate(spec["programs"])]
    _check_rules_files(spec.get("os"))
    return json.loads(interruptible(_engine.run_sim, engine_json(spec)))


def _check_rules_files(os_table: Any) -> None:
    """The rules file an ``[os.*]`` table names (hvr-online's ``rules``), checked as ``advise``
    checks it: a rule no mix can reach is refused at its line (the engine reads the file too,
    but parses it only)."""
    from memtint.toml_files import TomlFileError

    if not isinstance(os_table, dict):
        return
    for name, sub in os_table.items():
        rules = sub.get("rules") if isinstance(sub, dict) else None
        if isinstance(rules, str) and rules != "paper":
            try:
                info = os.stat(rules)
            except OSError:
                continue  # the engine names a missing file with its key
            try:
                _checked_rules(os.path.abspath(rules), info.st_mtime_ns, info.st_size)
            except TomlFileError as e:
                # Unreadable (a directory, which an empty path is beside the run file): named by its key.
                raise MemtintError(f"invalid configuration: os.{name}.rules: {e}") from None


@functools.lru_cache(maxsize=32)
def _checked_rules(path: str, mtime_ns: int, size: int) -> None:
    """One check per version of a rules file: a sweep's runs name the same file."""
    from memtint import hvr_rules

    hvr_rules.load(path)


def run_rt(spec: dict[str, Any]) -> dict[str, Any]:
    """Run periodic real-time tasks on one core with their loads through the simulated DRAM,
    under ``schedule`` ``edf``, ``rm`` (rate monotonic), ``colored`` (Colored Refresh) or ``crs``
    (its server), and
    ``refresh`` ``scheme``, ``none``, ``all-bank``, ``fgr2`` or ``fgr4``; return per-task run
    times, load latencies, deadline misses and loads that met refresh (docs/refresh.md). Ctrl-C
    stops it (KeyboardInterrupt)."""
    if not isinstance(spec, dict):  # a TOML path is memtint rt's argument; the engine said "expected struct RtRunSpec"
        raise MemtintError(f"spec: expected a real-time run specification (a dict in the schema of memtint rt's TOML; "
                           f"tomllib reads such a file), got {spec!r}")
    return json.loads(interruptible(_engine.run_rt, engine_json(spec)))


def mix_metrics(programs: list[dict[str, float]]) -> dict[str, Any]:
    """Weighted speedup, harmonic speedup, maximum slowdown and per-program slowdowns of
    ``[{"ipc_alone": .., "ipc_shared": ..}, ...]`` (computed by the engine)."""
    if not isinstance(programs, (list, tuple)):  # the engine's words were "metrics: invalid type"
        raise MemtintError(f"programs: expected a list of {{\"ipc_alone\": .., \"ipc_shared\": ..}}, got {programs!r}")
    return json.loads(_engine.mix_metrics(engine_json(programs)))


def cpu_trace_stats(workload: str, instructions: int | None = None, seed: int = 1) -> dict[str, Any]:
    """``records``, ``instructions``, ``reads``, ``writebacks``, ``footprint_lines`` and
    ``footprint_pages`` of a CPU trace (or of a profile, up to ``instructions``); per
    kilo-instruction figures and reuse distances are :func:`memtint.trace_stats`'."""
    if instructions is not None:
        instruction_count("instructions", instructions)
    _seed("seed", seed)
    request = {"workload": _program(workload, "workload"), "instructions": instructions, "seed": seed}
    return json.loads(interruptible(_engine.cpu_trace_stats, engine_json(request)))


def convert_trace(
    input: str | os.PathLike[str], output: str | os.PathLike[str], to: str = "mtt"
) -> dict[str, Any]:
    """Convert a Ramulator CPU trace to memtint's binary ``.mtt`` format (gzip body if the output
    name ends in ``.gz``), or with ``to="ramulator"`` a ``.mtt`` (or text) trace to Ramulator text
    (gzip if the name ends in ``.gz``); returns the counts written.

    ``output`` is replaced whole or not at all: a conversion that fails, or an input of no
    records, leaves it as it was; an output that is the input is refused."""
    from memtint import stopping
    from memtint.outputs import check_outputs, produced_file

    for key, value in (("input", input), ("output", output)):
        if not isinstance(value, (str, os.PathLike)):
            raise MemtintError(f"{key}: expected a trace file's path, got {value!r}")
    if to not in ("mtt", "ramulator"):  # the engine took None as its default
        raise MemtintError(f"to: expected 'mtt' or 'ramulator', got {to!r}")
    input, output = os.fspath(input), os.fspath(output)
    check_outputs({"output": output}, [input])
    if to == "mtt" and os.path.exists(output) and not os.path.isfile(output):
        raise MemtintError(f"output {output}: is not a regular file, and a .mtt is written with a seek back to its "
                           "header; write a file, or to='ramulator' for a pipe or device")
    # Written beside ``output`` and renamed over it only when whole and not empty: an input of no
    # records made a trace every reader refuses, in place of whatever ``output`` held.
    with produced_file("output", output, suffix=".tmp.gz" if output.endswith(".gz") else ".tmp") as made, \
            stopping.temporary(os.path.join(os.path.dirname(os.path.abspath(made)),
                                            f".{os.path.basename(made)}.{os.getpid()}-"), any_suffix=".part"):
        # The engine writes into its own .NAME.PID-N.part beside ``made``: removed by a stop too.
        request = {"input": input, "output": made, "to": to}
        try:
            header = json.loads(interruptible(_engine.convert_cpu_trace, engine_json(request)))
        except MemtintError as error:  # the engine names the file it writes: the one beside output
            raise MemtintError(str(error).replace(made, output)) from None
        if header["records"] == 0:
            raise MemtintError(f"input {input}: has no records, and a trace of none is one every reader refuses; "
                               "nothing written")
    return header
