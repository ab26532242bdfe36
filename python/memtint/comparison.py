"""Compare page-placement policies on one mix: alone runs, shared runs, and the BPM/HVR metrics.

Each program's alone IPC comes from a run of that program alone on the whole machine under the
baseline policy (``buddy`` unless told otherwise; ``local`` on a machine with several memory nodes). Alone runs are cached on disk by everything
that determines them (program and its content, machine, instruction target, seed, baseline,
engine version), so comparing more policies on the same mix does not redo them. The cache lives
in ``$MEMTINT_CACHE_DIR`` (default ``~/.cache/memtint``).

Runs are independent and the engine releases the GIL, so they go to a thread pool.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable

from memtint import _engine, api
from memtint import sampling as sampling_module
from memtint.api import MemtintError

#: Version of the compare result schema (docs/stats.md, "memtint compare").
SCHEMA_VERSION = 1


def cache_dir() -> Path:
    return Path(os.environ.get("MEMTINT_CACHE_DIR") or Path.home() / ".cache" / "memtint")


def _digest(path: str) -> str:
    """sha256 of a file's content, once per version of the file (a sweep keys each run's alone
    runs several times; a trace may be gigabytes)."""
    from memtint.outputs import file_version

    return _digest_of(file_version(path) or (path,))


@functools.lru_cache(maxsize=1024)
def _digest_of(version: tuple) -> str:
    digest = hashlib.sha256()
    with open(version[0], "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _identity(program: str) -> str:
    """A program's identity for caching: the profile text, or the trace file's content hash (a
    ``phases:`` program's traces by content too, each beside its phase's length)."""
    program = os.fspath(program)
    if program.startswith("phases:"):
        parts = api.phase_parts(program)
        if any(os.path.isfile(w) for w, _ in parts):
            return "phases:" + "+".join(_identity(w) + length for w, length in parts)
    if os.path.exists(program):
        return f"file:{_digest(program)}"
    return f"profile:{program}"


def files_identity(*items: object, skip: int = 0) -> str:
    """The content of every file ``items`` read (outputs.referenced_files: a machine's device and
    mapping files, a mapping file, a rules file named in the OS settings), as one digest after
    the first ``skip`` files; "" when there is none, so keys without files are unchanged."""
    from memtint import outputs

    files = outputs.referenced_files(*items)[skip:]
    if not files:
        return ""
    return "+files:" + hashlib.sha256("".join(_digest(f) for f in files).encode()).hexdigest()


def _machine_identity(machine: str | dict[str, Any]) -> str:
    """A machine's identity for caching: its table or file by content, and the files it names."""
    if isinstance(machine, dict):
        return ("table:" + hashlib.sha256(json.dumps(machine, sort_keys=True).encode()).hexdigest()
                + files_identity(machine))
    if os.path.exists(machine):
        return "file:" + _digest(machine) + files_identity(machine, skip=1)
    return f"preset:{machine}"


def _alone_key(spec: dict[str, Any]) -> str:
    key = {
        "program": _identity(spec["programs"][0]),
        "machine": _machine_identity(spec["machine"]),
        "mapping": spec.get("mapping"),
        "scheduler": spec.get("scheduler"),
        "overrides": spec.get("overrides"),
        "instructions": spec["instructions"],
        "warmup": spec.get("warmup", 0),
        "seed": spec["seed"],
        "os": spec["os"],
        "engine": _engine.version(),
    }
    if spec.get("sampling") is not None:  # only when present: a detailed run's key is unchanged
        key["sampling"] = spec["sampling"]
    files = files_identity(spec.get("mapping"), spec["os"], spec.get("overrides"))
    if files:  # a mapping or rules file by content, not by name (absent without one: keys unchanged)
        key["files"] = files
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()


def alone_cached(spec: dict[str, Any]) -> bool:
    """Whether the alone run of ``spec`` is already in the cache, undamaged."""
    return alone_lookup(spec) is not None


#: The alone cache's entry layout; an entry of another layout is recomputed (2: the core carries
#: the run's ``warnings``).
ALONE_ENTRY_FORMAT = 2


def _entry_digest(core: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(core, sort_keys=True).encode()).hexdigest()


def read_entry(path: Path, layout: int, body: str) -> dict[str, Any] | None:
    """A cache entry (JSON) of ``layout`` whose ``body`` table matches the digest it carries, or
    None if absent or damaged: a truncated, edited or foreign file that still parses as JSON is
    damaged too (one such gave a run an alone IPC of 0)."""
    try:
        entry = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return None
    if not (isinstance(entry, dict) and entry.get("format") == layout and isinstance(entry.get(body), dict)
            and entry.get("sha256") == _entry_digest(entry[body])):
        return None
    return entry


#: A cache entry's temporary older than this was left by a writer that was killed (SIGKILL, a
#: lost machine) between writing it and renaming it: an entry takes milliseconds to write.
STALE_TEMPORARY_SECONDS = 600

_SWEPT: set[Path] = set()


def _remove_stale_temporaries(directory: Path) -> None:
    """Remove the entry temporaries (``NAME.json.tmpPID``) killed writers left in ``directory``,
    once per process and directory; one being written now is young and stays."""
    if directory in _SWEPT:
        return
    _SWEPT.add(directory)
    import re
    import time

    now = time.time()
    with contextlib.suppress(OSError):
        for entry in os.scandir(directory):
            if re.fullmatch(r".+\.json\.tmp\d+", entry.name) and entry.is_file(follow_symlinks=False):
                with contextlib.suppress(OSError):
                    if now - entry.stat(follow_symlinks=False).st_mtime > STALE_TEMPORARY_SECONDS:
                        os.unlink(entry.path)


def write_entry(path: Path, layout: int, body: str, value: dict[str, Any], **extra: Any) -> None:
    """Write a cache entry for :func:`read_entry` atomically (a reader never sees half of one);
    raises OSError when the cache cannot hold it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_temporaries(path.parent)
    tmp = path.with_name(f"{path.name}.tmp{os.getpid()}")
    try:
        tmp.write_text(json.dumps({"format": layout, "sha256": _entry_digest(value), **extra, body: value}))
        tmp.replace(path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise


def alone_lookup(spec: dict[str, Any]) -> dict[str, Any] | None:
    """The cached alone run of ``spec`` (its core's statistics), or None if absent or damaged
    (:func:`read_entry`), and then recomputed."""
    entry = read_entry(cache_dir() / "alone" / f"{_alone_key(spec)}.json", ALONE_ENTRY_FORMAT, "core")
    return entry["core"] if entry else None


def alone_store(spec: dict[str, Any], core: dict[str, Any]) -> None:
    """Store an alone run's statistics in the cache (atomically; silently not if unwritable)."""
    path = cache_dir() / "alone" / f"{_alone_key(spec)}.json"
    try:
        write_entry(path, ALONE_ENTRY_FORMAT, "core", core)
    except OSError as error:
        _warn_cache_unwritable(path.parent, error)  # still correct, only slower next time


_WARNED_CACHES: set[str] = set()


def _warn_cache_unwritable(directory: Path, error: OSError) -> None:
    """Say once per process and directory that the alone-run cache is off, and why."""
    import sys

    if str(directory) in _WARNED_CACHES:
        return
    _WARNED_CACHES.add(str(directory))
    where = "$MEMTINT_CACHE_DIR" if os.environ.get("MEMTINT_CACHE_DIR") else "the default cache"
    sys.stderr.write(f"memtint: warning: alone runs are not cached: {where} ({cache_dir()}) cannot hold {directory} "
                     f"({error.strerror or error}); every comparison recomputes them. Point MEMTINT_CACHE_DIR at a "
                     "writable directory\n")


def alone_run(spec: dict[str, Any], use_cache: bool = True) -> dict[str, Any]:
    """Run (or fetch from the cache) one program alone; returns its core's statistics, with the
    run's ``warnings`` (a comparison's ``alone_warnings``)."""
    if use_cache:
        cached = alone_lookup(spec)
        if cached is not None:
            return cached
    run = api.run_sim_spec(spec)
    core = {**run["cores"][0], "warnings": run.get("warnings") or []}
    if use_cache:
        alone_store(spec, core)
    return core


def _alone_under_baseline(spec: dict[str, Any], use_cache: bool) -> dict[str, Any]:
    """:func:`alone_run` for a comparison, its policy refused by the machine named as the
    ``baseline`` it comes from (``os.policy`` is the alone runs' policy, not one compared)."""
    try:
        return alone_run(spec, use_cache)
    except MemtintError as error:
        prefix = "invalid configuration: os.policy: "
        if not str(error).startswith(prefix):
            raise
        raise MemtintError(f"baseline: {str(error)[len(prefix):]} (the alone runs' policy)") from None


#: Instructions per core run before statistics start in comparisons and sweeps (a functional
#: warm-up: page tables and caches, no DRAM timing). An 8 MiB LLC holds 131 072 lines; a
#: streaming program with write-backs dirties it in a few million instructions, a light one
#: takes longer; 20 M leaves the measured window in the steady state for the suite's programs.
DEFAULT_WARMUP = 20_000_000


def _trace_instructions(path: str, enough: int) -> int | None:
    """The instructions a trace file holds, or ``enough`` if it holds at least that many; None
    when it cannot be read here (the engine then names the defect). A ``.mtt``'s header has the
    count; a text trace is read only up to ``enough``."""
    import gzip
    import struct

    try:
        with open(path, "rb") as f:
            head = f.read(2)
        with (gzip.open(path, "rb") if head == b"\x1f\x8b" else open(path, "rb")) as f:
            header = f.read(32)
        if len(header) == 32 and header[:4] == b"MTT1":
            records, held = struct.unpack_from("<QQ", header, 8)
            return None if records == 2**64 - 1 else held
        return api.cpu_trace_stats(path, instructions=enough)["instructions"]
    except (OSError, EOFError, MemtintError):
        return None


def short_trace_warnings(mix: list[str], instructions: int, warmup: int) -> list[str]:
    """One warning per trace file of ``mix`` holding fewer instructions than ``warmup`` plus
    ``instructions``: a core replays its trace from the start at its end, so the measured window
    would repeat instructions (their lines already cached)."""
    return list(_short_traces(mix, instructions, warmup).values())


def _short_traces(mix: list[str], instructions: int, warmup: int) -> dict[str, str]:
    """``short_trace_warnings``' warnings by the trace's path, as the engine names the program."""
    needed = warmup + instructions
    out = {}
    for name in dict.fromkeys(mix):
        program = api._program(name)
        if program.startswith("phases:") or program.split(":", 1)[0] in api.PROFILES:
            continue
        held = _trace_instructions(program, needed)
        if held is not None and held < needed:
            out[program] = (f"{name}: the trace holds {held:,} instructions, fewer than the warm-up and run "
                            f"({warmup:,} + {instructions:,} per core): it is replayed from its start "
                            f"({needed / max(held, 1):.1f} passes), so the run measures repeated instructions; "
                            "capture a longer trace or run fewer instructions")
    return out


# The engine's warning for a trace that ended and started again (sim_spec.rs, `REPLAYED`).
_ENGINE_REPLAYED = "its trace ended and was replayed from its start"


def unread_table(warning: str) -> str | None:
    """The table or key of a "[TABLE] is set but ...: nothing reads it" warning (or "os.KEY is
    set but ...": --strict, --set os.colour_split), else None."""
    m = re.match(r"(\[[^\]]+\]|os\.\w+) is set but .*: nothing reads it$", warning)
    return m.group(1) if m else None


def _alone_warnings(run: dict[str, Any], short: dict[str, str]) -> list[str]:
    """An alone run's warnings, less what a setting meant for the policies' runs makes it say: an
    alone run uses the baseline's scheduler, so "[controller.tcm] is set but ...: nothing reads
    it" is by design there, and the policies' own runs say it where it matters."""
    return [w for w in _run_warnings(run, short) if unread_table(w) is None]


def _run_warnings(run: dict[str, Any], short: dict[str, str]) -> list[str]:
    """A run's warnings, without the engine's replay warnings for the traces the comparison
    warns of once itself (``short``), which every run of the mix would repeat."""
    return [w for w in run.get("warnings") or []
            if not (_ENGINE_REPLAYED in w and any(f"({program}): " in w for program in short))]


def default_baseline(machine: str | dict[str, Any]) -> str:
    """The alone runs' policy when none is given: Linux's default placement on the machine,
    ``buddy`` on one memory and ``local`` (first touch) on a machine with several nodes, where
    colour policies do not apply (docs/numa.md)."""
    if isinstance(machine, dict):
        nodes = len(machine.get("nodes") or [])
    else:
        info = next((m for m in api.presets()["machines"] if m["name"] == machine), None)
        if info is not None:
            nodes = info.get("nodes", 1)
        else:  # a machine file: its [[nodes]]
            from memtint.toml_files import read_toml

            try:
                nodes = len(read_toml(machine, "machine")[0].get("nodes") or [])
            except Exception:  # noqa: BLE001 - the engine reports a broken file with its place
                nodes = 1
    return "local" if nodes > 1 else "buddy"


def build_alone_specs(
    machine: str,
    mix: list[str],
    *,
    instructions: int,
    seed: int = 1,
    baseline: str | None = None,
    mapping: str | None = None,
    scheduler: str | None = None,
    overrides: dict[str, Any] | None = None,
    warmup: int = DEFAULT_WARMUP,
    sampling: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The specifications of the alone runs of ``mix`` (one per program), as :func:`compare`
    runs them: program i alone on the whole machine under ``baseline``, with the seed it has in
    the mix (seed + i). Sweeps use it to compute shared alone runs once, ahead of the mixes.
    ``sampling``: the sampled-simulation settings (``api.build_sim_spec``), or None."""
    common = dict(mapping=mapping, scheduler=scheduler, overrides=overrides, sampling=sampling)
    baseline = baseline or default_baseline(machine)
    return [
        api.build_sim_spec(machine, [prog], instructions=instructions, policy=baseline, seed=seed + i,
                           warmup=warmup, **common)
        for i, prog in enumerate(mix)
    ]


def alone_key(spec: dict[str, Any]) -> str:
    """The cache key of an alone run (everything that determines it)."""
    return _alone_key(spec)


@functools.lru_cache(maxsize=1)
def profiled_policies() -> frozenset[str]:
    """Policies that need each program's profile (``os.profiles``), as the engine's catalogue
    declares them; ``compare`` takes it from the alone runs (LLC MPKI and row-buffer hit rate over
    the whole measured window, baseline placement)."""
    return frozenset(p["name"] for p in api.presets()["placement_policy_info"] if p["needs_profiles"])


def probe_run(machine: str | dict[str, Any], size: int, policy: str, *, os_options: dict[str, Any] | None = None,
              mapping: str | None = None, scheduler: str | None = None, overrides: dict[str, Any] | None = None,
              sampling: dict[str, Any] | None = None) -> None:
    """Raise the engine's error, if any, for a run of ``size`` programs under ``policy`` with these
    settings, from a one-instruction run of light programs (about 20 ms): what only the engine
    sees (a mix larger than the machine's cores, colour sets that do not exist, what sampling
    does not support) stops a comparison or a sweep before its first run. A sampled probe is
    sampled too (two units of one instruction, with the settings that do not depend on a run's
    length: mode, clusters, warm_prefetchers); the sizes' relations to a run's instructions are
    checked when it starts."""
    if policy in profiled_policies():  # compare profiles these from the alone runs; a probe needs their shape
        os_options = {"profiles": [{"mpki": 0.0, "rbh": 0.0, "bandwidth": 0.0}] * size, **(os_options or {})}
    sampled = None if sampling is None else {
        **{k: v for k, v in sampling.items() if k in ("mode", "clusters", "warm_prefetchers")},
        "unit": 1, "warming": 0, "period": 1}
    probe = api.build_sim_spec(machine, ["light"] * size, instructions=1 if sampled is None else 2, policy=policy,
                               os_options=os_options, mapping=mapping, scheduler=scheduler, overrides=overrides,
                               sampling=sampled)
    api.run_sim_spec(probe)


def dram_traffic(core: dict[str, Any]) -> float:
    """A core's DRAM traffic: lines read and written per 1000 CPU cycles (its load on the channels)."""
    return 1000.0 * (core["dram_reads"] + core["dram_writes"]) / max(1, core["cycles"])


def alone_profiles(alone: list[dict[str, Any]]) -> list[dict[str, float]]:
    """``os.profiles`` from alone runs: LLC MPKI and row-buffer hit rate (MCP/IMPS), and DRAM
    traffic (``bpm-plus-balanced``)."""
    return [{"mpki": float(a["llc_mpki"]), "rbh": 1.0 - float(a["row_buffer_miss_rate"]), "bandwidth": dram_traffic(a)}
            for a in alone]


def split_policy(name: str) -> tuple[str, str | None]:
    """``"policy"`` or ``"policy+scheduler"`` (a placement policy run with its own controller
    scheduler, as sweeps name it) as ``(policy, scheduler or None)``."""
    policy, plus, scheduler = name.partition("+")
    return policy, scheduler if plus else None


def check_policy_names(given: list[tuple[str, list[str]]]) -> None:
    """Each ``(label, names)``: every name a registered placement policy, or one with a
    registered scheduler after a ``+``, else refused naming ``label`` (the argument or option
    that gave it) before any run, not a run's os.policy key."""
    catalogue = api.presets()
    known, schedulers = catalogue["placement_policies"], catalogue["schedulers"]
    for label, names in given:
        for name in names:
            policy, scheduler = split_policy(name)
            if policy not in known:
                raise MemtintError(f"{label}: unknown placement policy {policy!r}; valid placement policies: "
                                   + ", ".join(known) + " (each may name a scheduler: buddy+tcm)")
            if scheduler is not None and scheduler not in schedulers:
                raise MemtintError(f"{label}: unknown scheduler {scheduler!r} in {name!r}; valid schedulers: "
                                   + ", ".join(schedulers))


def compare(
    machine: str | dict[str, Any],
    mix: list[str],
    policies: list[str],
    *,
    instructions: int,
    seed: int = 1,
    baseline: str | None = None,
    mapping: str | None = None,
    scheduler: str | None = None,
    overrides: dict[str, Any] | None = None,
    os_options: dict[str, Any] | None = None,
    use_cache: bool = True,
    workers: int | None = None,
    progress: Callable[[str], None] | None = None,
    alone_results: dict[str, dict[str, Any]] | None = None,
    warmup: int = DEFAULT_WARMUP,
    sampling: dict[str, Any] | None = None,
    alone_machine: str | dict[str, Any] | None = None,
    schedule: dict[str, Any] | None = None,
    keep_schedule: bool = False,
    paced_by: dict[str, Any] | None = None,
    probed: bool = False,
) -> dict[str, Any]:
    """Run ``mix`` under each policy and alone; return the comparison (docs/stats.md).

    A policy named ``policy+scheduler`` (``buddy+tcm``) runs under that controller scheduler;
    the alone runs stay under ``scheduler`` (the machine's when None, ``alone_scheduler`` in the
    result), so every policy's speedups divide by the same alone performance.

    The alone runs run on ``alone_machine`` when given (a sweep runs bpm-plus on the machine's
    page-channel variant and divides by the base machine's alone runs, as the other policies of
    the mix do), else on ``machine``.

    Every run (alone and shared) first executes ``warmup`` instructions per core functionally.

    ``sampling`` (``{"unit": .., "warming": .., ...}``, docs/stats.md) makes every run, alone
    and shared, a sampled one; each policy's result then carries 95 % intervals of its metrics
    (``weighted_speedup_ci95`` and the others, :func:`memtint.sampling.mix_intervals`).

    Sampled policies measure matched units (``sampling["matched"]``, default true; periodic
    sampling): the baseline policy's run (or the first policy's, when the baseline is not among
    them) paces itself, and the others replay its schedule, so every policy measures the same
    stretches of each program and their differences carry little of the sampling error; each
    policy's result then has ``weighted_speedup_change_ci95`` against it
    (:func:`memtint.sampling.difference_intervals`). ``schedule``: a schedule every policy
    replays (a sweep's, from its mix's baseline run); ``keep_schedule`` keeps each sampled
    policy's own schedule in its result (``schedule``), with its units (``schedule_units``,
    :func:`memtint.sampling.units_of`), for other runs to replay. ``paced_by``: the run that
    paced ``schedule``, against the same alone runs (``{"policy": name, "cores": units}``): each
    other policy's result then has ``matched_to`` and ``weighted_speedup_change_ci95`` against it.

    The alone runs are cached on disk (``$MEMTINT_CACHE_DIR``, default ``~/.cache/memtint``, one
    small JSON file per run), keyed by everything that determines them; ``use_cache=False``
    neither reads nor writes the cache. Nothing else is written.

    ``progress`` is called with a short description after each finished run. ``alone_results``
    maps alone-run keys (:func:`alone_key`) to alone runs computed elsewhere (a sweep ships them
    to its workers); those are used as they are, the others are run or taken from the cache.

    Before the first run, each policy's settings go through :func:`probe_run` (about 20 ms a
    policy), so that what only the engine refuses stops the comparison before any simulation;
    ``probed=True`` leaves that out where the caller has already probed these settings (a sweep
    probes each of its combinations once, when its specification is read).
    """
    # The command line checks these before it calls; a script gets the same checks here.
    from memtint.limits import MAX_SEED

    mix = [os.fspath(v) if isinstance(v, os.PathLike) else v for v in api.names_argument("mix", mix)]
    policies = api.names_argument("policies", policies)
    for name, value in (("mix", mix), ("policies", policies)):
        if value and not all(isinstance(v, str) for v in value):
            raise MemtintError(f"{name}: expected a list of names, got {value!r}")
    instructions = api.instruction_count("instructions", instructions)
    warmup = api.instruction_count("warmup", warmup, 0)
    seed = api.whole_number("seed", seed, 0, MAX_SEED, "2^63-1")
    if workers is not None:
        api.whole_number("workers", workers, 1)
    api.flag_argument("use_cache", use_cache)
    api.flag_argument("keep_schedule", keep_schedule)
    api.flag_argument("probed", probed)
    if baseline is not None and not isinstance(baseline, str):
        raise MemtintError(f"baseline: expected a placement policy's name, got {baseline!r}")
    api.function_argument("progress", progress, "one description")
    for key, value, example in (("sampling", sampling, '{"unit": 20000}'), ("schedule", schedule, "a run's schedule"),
                                ("paced_by", paced_by, '{"policy": "buddy", "cores": [...]}')):
        api.table_argument(key, value, example)
    # A Path or a NumPy number went into the result (which json.dumps then refused) and the
    # alone runs' cache keys (a TypeError before any run).
    machine, alone_machine, mapping, scheduler, overrides, os_options, sampling, schedule, paced_by = api.plain(
        [machine, alone_machine, mapping, scheduler, overrides, os_options, sampling, schedule, paced_by])
    for key, value in (("machine", machine), ("alone_machine", alone_machine)):
        if not isinstance(value, (str, dict)) and not (key == "alone_machine" and value is None):
            # The alone runs' engine said "machine:" of an alone_machine.
            raise MemtintError(f"{key}: expected a machine preset's name, TOML path or table, got {value!r}")
    if not policies:
        raise MemtintError("give at least one policy")
    if (twice := sorted({p for p in policies if policies.count(p) > 1})):
        raise MemtintError(f"policies: {', '.join(map(repr, twice))} given more than once (each policy is run once)")
    if isinstance(os_options, dict) and "policy" in os_options:
        raise MemtintError("os_options.policy: the policy comes from policies, not from the os table")
    check_policy_names([("policies", policies), ("baseline", [baseline] if baseline else [])])
    if alone_results is not None and (not isinstance(alone_results, dict) or not all(
            isinstance(r, dict) and isinstance(r.get("ipc"), (int, float)) for r in alone_results.values())):
        raise MemtintError("alone_results: expected a dict of alone runs by alone_key (each as alone_run returns it, "
                           f"with its ipc), got {str(alone_results)[:200]}")
    baseline = baseline or default_baseline(alone_machine or machine)
    # "buddy+tcm": the shared run under its own scheduler; the alone runs stay under `scheduler`
    # (the machine's when None): each program's one alone performance, which every policy's
    # speedups divide by, as the scheduler papers measure it.
    placement = {p: split_policy(p)[0] for p in policies}
    own_scheduler = {p: split_policy(p)[1] or scheduler for p in policies}
    sampling, matched = sampling_module.engine_sampling(sampling)
    if schedule is not None:
        if sampling is None or sampling.get("mode", "periodic") != "periodic":
            raise MemtintError("schedule: replays a periodic sampled run's segments; give periodic sampling")
        matched = False  # every policy replays the given one
    if paced_by is not None:
        if schedule is None:
            raise MemtintError("paced_by: the run that paced a schedule; give the schedule too")
        cores = paced_by.get("cores") if isinstance(paced_by, dict) else None
        # Each core as units_of gives it; anything else failed after every run (KeyError 'ipc').
        if (not isinstance(paced_by, dict) or not isinstance(paced_by.get("policy"), str)
                or not isinstance(cores, list) or len(cores) != len(mix)
                or not all(isinstance(c, dict) and isinstance(c.get("ipc"), (int, float))
                           and isinstance(c.get("sampling"), dict) for c in cores)):
            raise MemtintError(f"paced_by: expected {{\"policy\": name, \"cores\": one entry per program "
                               f"({len(mix)})}}, as compare(keep_schedule=True) keeps them in schedule_units")
    common = dict(mapping=mapping, scheduler=scheduler, overrides=overrides, sampling=sampling)
    shared_specs = {
        p: api.build_sim_spec(machine, mix, instructions=instructions, policy=placement[p], seed=seed,
                              os_options=os_options, warmup=warmup, **{**common, "scheduler": own_scheduler[p]})
        for p in policies
    }
    if schedule is not None:
        for s in shared_specs.values():
            s["sampling"]["schedule"] = schedule
    # Every policy's run is one the engine takes, before the first run (one that cannot run, such as
    # bank-only for 8 programs on 4 colours, was refused after the others had been simulated).
    for p in [] if probed else policies:
        try:
            probe_run(machine, len(mix), placement[p], os_options=os_options, mapping=mapping,
                      scheduler=own_scheduler[p], overrides=overrides, sampling=sampling)
        except MemtintError as error:
            text, refused = str(error), "invalid configuration: os.policy: "
            named = re.search(rf"\bpolicy '?{re.escape(placement[p])}'?[: ]", text)
            if text.startswith(refused) and not named:  # which of the policies the machine refused
                raise MemtintError(f"{refused}policy '{placement[p]}': {text[len(refused):]}") from None
            raise
    # Matched units: the source policy paces itself, the others replay its schedule.
    source = (baseline if baseline in policies else policies[0]) if matched and len(policies) > 1 else None
    alone_specs = build_alone_specs(alone_machine or machine, mix, instructions=instructions, seed=seed,
                                    baseline=split_policy(baseline)[0], warmup=warmup, **common)
    workers = workers or min(len(alone_specs) + len(policies), os.cpu_count() or 1)
    pool = ThreadPoolExecutor(max_workers=workers)
    try:
        given = alone_results or {}
        alone_futures = []
        for s in alone_specs:
            known = given.get(_alone_key(s)) if given else None
            if known is not None:
                done: Future = Future()
                done.set_result(known)
                alone_futures.append(done)
            else:
                alone_futures.append(pool.submit(_alone_under_baseline, s, use_cache))
        def replays(p: str) -> bool:
            return source is not None and p != source
        shared_futures = {p: pool.submit(api.run_sim_spec, s) for p, s in shared_specs.items()
                          if placement[p] not in profiled_policies() and not replays(p)}
        if source is not None:
            if source not in shared_futures:  # a profiled source waits for the alone runs
                alone_profile = [f.result() for f in alone_futures]
                shared_specs[source]["os"].setdefault("profiles", alone_profiles(alone_profile))
                shared_futures[source] = pool.submit(api.run_sim_spec, shared_specs[source])
            paced = shared_futures[source].result()
            for p, s in shared_specs.items():
                if replays(p):
                    s["sampling"]["schedule"] = paced["sampling"]["schedule"]
                    if placement[p] not in profiled_policies():
                        shared_futures[p] = pool.submit(api.run_sim_spec, s)
        alone = []
        for i, f in enumerate(alone_futures):
            alone.append(f.result())
            if progress:
                progress(f"alone: {mix[i]}")
        # MCP and IMPS place pages by each program's profile: taken from its alone run.
        for p, s in shared_specs.items():
            if placement[p] in profiled_policies() and p not in shared_futures:
                s["os"].setdefault("profiles", alone_profiles(alone))
                shared_futures[p] = pool.submit(api.run_sim_spec, s)
        shared_futures = {p: shared_futures[p] for p in policies}
        shared = {}
        for p, f in shared_futures.items():
            shared[p] = f.result()
            if progress:
                progress(f"shared: {p}")
    except KeyboardInterrupt:  # the runs hold no GIL: the engine is asked to stop them, then waited for
        with api.stop_engine_runs():
            pool.shutdown(wait=True, cancel_futures=True)
        raise
    except BaseException:  # a failed run fails the comparison: the queued runs would be simulated for nothing
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    finally:
        pool.shutdown(wait=True)

    # What the machine asks a comparison on it to be read with (its baseline, say).
    notes = sorted({n for r in shared.values() if (n := r.get("config", {}).get("comparison_note"))})
    short = _short_traces(mix, instructions, warmup)
    results = []
    for p in policies:
        run = shared[p]
        energy = (run.get("dram") or {}).get("energy") or {}
        whole = run.get("sampling") or {}  # a sampled run: its estimates for the whole run
        speeds = [{"ipc_alone": a["ipc"], "ipc_shared": c["ipc"]} for a, c in zip(alone, run["cores"])]
        metrics = api.mix_metrics(speeds)
        sampled = sampling_module.is_sampled(run)
        intervals = sampling_module.mix_intervals(alone, run) if sampled else None
        cores = []
        for i, (a, c) in enumerate(zip(alone, run["cores"])):
            cores.append({
                "program": mix[i],
                "ipc_alone": a["ipc"],
                "ipc_shared": c["ipc"],
                "slowdown": metrics["slowdowns"][i],
                "row_buffer_miss_rate": c["row_buffer_miss_rate"],
                "row_buffer_miss_rate_alone": a["row_buffer_miss_rate"],
                "llc_mpki": c["llc_mpki"],
                "read_latency_ns_mean": c["read_latency_ns"]["mean"],
                "llc_mpki_alone": a.get("llc_mpki"),
                "read_latency_ns_alone": (a.get("read_latency_ns") or {}).get("mean"),
                "banks_used": c["banks_used"],
                "channels_used": c["channels_used"],
                "colour_overflow_pages": c["colour_overflow_pages"],
                "row_interference_rate": _interference_rate(c),
                **_time_shares(c),
            })
            if intervals is not None:
                cores[-1]["ipc_shared_ci95"] = (c.get("sampling") or {}).get("ipc_ci95")
                if (alone_ci := (a.get("sampling") or {}).get("ipc_ci95")) is not None:  # a sampled alone run
                    cores[-1]["ipc_alone_ci95"] = alone_ci
                cores[-1]["slowdown_ci95"] = intervals["slowdowns"][i]
                cores[-1]["sampling_units"] = (c.get("sampling") or {}).get("units")
        results.append({
            "policy": p,
            "weighted_speedup": metrics["weighted_speedup"],
            "harmonic_speedup": metrics["harmonic_speedup"],
            "maximum_slowdown": metrics["maximum_slowdown"],
            "row_buffer_miss_rate": run["row_buffer_miss_rate"],
            "cores": cores,
            "wall_seconds": run["wall_seconds"],
            # A sampled run's memory system ran in its detailed segments only: its requests and
            # energy scaled to the run (docs/sampling.md, Output).
            "dram_requests": whole.get("estimated_dram_requests", run["dram_requests"]),
            # DRAM energy (docs/energy.md); None where the device has no datasheet currents.
            "dram_energy_nj": whole.get("estimated_dram_energy_nj", energy.get("total_nj")),
            "dram_energy_per_access_nj": energy.get("per_access_nj"),
            "warnings": _run_warnings(run, short),
        })
        if run.get("dynamic"):  # os.dynamic adapted this policy's colour sets: its run's statistics, and said so
            results[-1]["label"] = f"{p} + {run['dynamic']['policy']}"
            results[-1]["dynamic"] = run["dynamic"]
        if intervals is not None:
            results[-1].update({
                "sampled": True,
                "weighted_speedup_ci95": intervals["weighted_speedup"],
                "harmonic_speedup_ci95": intervals["harmonic_speedup"],
                "maximum_slowdown_ci95": intervals["maximum_slowdown"],
                # The run's DRAM energy's interval (the segments' energy rate over the estimated
                # length); None where unbounded or the device has no power figures.
                "dram_energy_nj_ci95": whole.get("estimated_dram_energy_nj_ci95"),
                # The mix's row-buffer miss rate's interval (the engine's combined ratio estimator
                # over each core's units, or a phases run's stratified one).
                "row_buffer_miss_rate_ci95": whole.get("row_buffer_miss_rate_ci95"),
                # The engine's summary of the shared run's sampling (segments, passes, worst error);
                # its schedule is the engine's to replay, not a result.
                "sampling": {k: v for k, v in run["sampling"].items() if k != "schedule"},
            })
            if keep_schedule:
                results[-1]["schedule"] = run["sampling"].get("schedule")
                results[-1]["schedule_units"] = sampling_module.units_of(run)
            against = ((source, shared.get(source)) if source is not None
                       else (paced_by["policy"], paced_by) if paced_by is not None else (None, None))
            if against[0] is not None and p != against[0]:
                diff = sampling_module.difference_intervals(alone, run, against[1])
                results[-1].update({"matched_to": against[0],
                                    "weighted_speedup_change_ci95": diff["weighted_speedup_change"]})
    out = {
        "schema_version": SCHEMA_VERSION,
        "kind": "compare",
        "machine": machine,
        "mix": list(mix),
        "instructions": instructions,
        "warmup": warmup,
        "seed": seed,
        "baseline": baseline,
        # The alone runs' controller scheduler (a policy+scheduler's shared run has its own).
        "alone_scheduler": scheduler or next((shared[p]["config"].get("scheduler") for p in policies
                                              if split_policy(p)[1] is None), None),
        "policies": results,
        "notes": notes,
        # The alone runs' warnings (a sampled alone run's few units, say), by program.
        "alone_warnings": [f"alone {mix[i]}: {w}" for i, a in enumerate(alone) for w in _alone_warnings(a, short)],
        "warnings": list(short.values()),
    }
    if sampling is not None:
        out["sampling"] = {k: v for k, v in sampling.items() if k != "schedule"}
        out["sampling"]["matched"] = source is not None or schedule is not None
    if source is not None:
        # Each pair of policies' WS difference and change, from their matched units (tighter than
        # two intervals); the change's interval holds 0 exactly when the difference's does.
        out["differences"] = []
        for i, p in enumerate(policies):
            for q in policies[i + 1:]:
                diff = sampling_module.difference_intervals(alone, shared[p], shared[q])
                out["differences"].append({"policy": p, "against": q,
                                           "weighted_speedup_difference_ci95": diff["weighted_speedup"],
                                           "weighted_speedup_change_ci95": diff["weighted_speedup_change"]})
    return out


def _time_shares(core: dict[str, Any]) -> dict[str, float | None]:
    """A thread's cycles as shares: user, idle on memory, system (the engine's ``time_breakdown``;
    None for results without it)."""
    t = core.get("time_breakdown")
    if not t:
        return {"user_share": None, "memory_share": None, "system_share": None}
    total = (t["user_cycles"] + t["memory_cycles"] + t["system_cycles"]) or 1
    return {"user_share": t["user_cycles"] / total, "memory_share": t["memory_cycles"] / total,
            "system_share": t["system_cycles"] / total}


def _interference_rate(core: dict[str, Any]) -> float | None:
    """The share of a program's DRAM requests that missed the row buffer because of another
    program (a row it opened, or its precharge: ``row_conflicts_by_other + row_misses_after_other``,
    the inter-program interference bank partitioning removes); None for results without
    row-buffer causes."""
    if core.get("row_conflicts_by_other") is None:
        return None
    requests = core["row_hits"] + core["row_misses"] + core["row_conflicts"]
    return (core["row_conflicts_by_other"] + core["row_misses_after_other"]) / requests if requests else 0.0


def to_csv_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per (policy, program), with the policy's mix metrics repeated on each row (its DRAM
    requests and energy in the last columns); when
    ``os.dynamic`` adapted a policy's colour sets, a ``dynamic_policy`` column names it (empty
    for the static rows), as the table's label does."""
    rows = []
    any_dynamic = any(p.get("dynamic") for p in result["policies"])
    # Matched units: each replaying policy's change against the pacing one (columns on every row).
    any_matched = any(p.get("matched_to") for p in result["policies"])
    for p in result["policies"]:
        ws_ci = p.get("weighted_speedup_ci95")
        for i, c in enumerate(p["cores"]):
            row: dict[str, Any] = {"policy": p["policy"]}
            if any_dynamic:
                row["dynamic_policy"] = (p.get("dynamic") or {}).get("policy", "")
            row |= {
                "weighted_speedup": p["weighted_speedup"],
                "harmonic_speedup": p["harmonic_speedup"],
                "maximum_slowdown": p["maximum_slowdown"],
                "mix_row_buffer_miss_rate": p["row_buffer_miss_rate"],
            }
            if ws_ci:  # a sampled comparison: the interval's bounds (no extra columns otherwise)
                row["weighted_speedup_ci95_low"], row["weighted_speedup_ci95_high"] = ws_ci
            if any_matched:
                change = p.get("weighted_speedup_change_ci95") or [None, None]
                row["matched_to"] = p.get("matched_to") or ""
                row["weighted_speedup_change_ci95_low"], row["weighted_speedup_change_ci95_high"] = change
            row["core"] = i
            for key, value in c.items():
                if key.endswith("_ci95") and isinstance(value, (list, tuple)):  # CSV cells hold one number
                    row[f"{key}_low"], row[f"{key}_high"] = value
                else:
                    row[key] = value
            # The policy's DRAM requests and energy, as the table and the JSON give them (a sampled
            # run's estimates for the whole run), after the columns that came before them.
            row |= {key: p.get(key) for key in ("dram_requests", "dram_energy_nj", "dram_energy_per_access_nj")}
            if p.get("sampled"):
                row["dram_energy_nj_ci95_low"], row["dram_energy_nj_ci95_high"] = p.get("dram_energy_nj_ci95") or (None, None)
                row["mix_row_buffer_miss_rate_ci95_low"], row["mix_row_buffer_miss_rate_ci95_high"] = (
                    p.get("row_buffer_miss_rate_ci95") or (None, None))
            rows.append(row)
    return rows
