"""Concrete runs of a sweep, their configuration hashes, and the work a worker does for each.

The unit of work is one comparison: a mix under one policy on one machine, for an instruction
target and a seed, against each program's alone run (:func:`memtint.comparison.compare` with one
policy). Alone runs are shared work: :func:`alone_tasks` lists each distinct one once (program,
machine, instructions, seed, baseline), the runner computes them first (each worker also keeps
them in its on-disk alone cache of :mod:`memtint.comparison`), gets them back, stores them in the
driver's cache, and ships the ones each comparison needs with it: a worker on another machine
neither recomputes them nor needs a shared filesystem.

Everything a worker receives or returns is plain data (dicts, strings, numbers), so the same
tasks can go to a process pool or to another backend such as Ray.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import socket
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

from memtint import comparison
from memtint.sweep.spec import SweepSpec

__all__ = ["Run", "AloneTask", "expand", "alone_keys", "alone_tasks", "execute_run", "execute_alone", "execute_schedule",
           "schedule_spec", "memtint_version", "inputs_identity", "check_inputs", "check_version", "file_digests",
           "check_files"]

#: Version of the run description hashed into every configuration hash; bump it when what a run
#: means changes (so stored results of the old meaning are not taken for the new one).
RUN_FORMAT = 1


def memtint_version() -> str:
    from memtint import __version__

    return __version__


@dataclass(frozen=True)
class Run:
    """One run of a sweep: everything needed to execute it, and its configuration hash."""

    config_hash: str
    machine: str
    programs: tuple[str, ...]
    mix_name: str
    policy: str
    instructions: int
    seed: int
    baseline: str
    os: dict[str, Any]
    mapping: str | None
    scheduler: str | None
    use_cache: bool
    warmup: int = 0
    overrides: dict[str, Any] | None = None
    #: The policy column of the results: the policy, with "+scheduler" when the run chose its own.
    label: str = ""
    #: Sampled simulation (the engine's ``sampling`` table), or None for detailed runs.
    sampling: dict[str, Any] | None = None
    #: Where the alone runs run when not on ``machine`` (a policy's machine variant: its base).
    alone_machine: str | None = None
    #: Matched units (``sampling.matched``, the default in periodic mode): the policy whose run of
    #: this mix paces the units every policy replays (the baseline); None for self-paced runs.
    schedule_from: str | None = None
    #: :func:`contents_digest` of the files the run reads, when it was expanded.
    contents: str = ""
    #: What its configuration hash was computed from (:func:`inputs_identity`, when it was
    #: expanded): a worker checks it reads the same before it runs.
    identity: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def mix(self) -> str:
        return "|".join(self.programs)

    def describe(self) -> dict[str, Any]:
        """The run as plain data (what is shipped to a worker); ``sampling`` only when set."""
        out = {
            "config_hash": self.config_hash, "machine": self.machine, "programs": list(self.programs),
            "mix_name": self.mix_name, "policy": self.policy, "instructions": self.instructions,
            "seed": self.seed, "baseline": self.baseline, "os": self.os, "mapping": self.mapping,
            "scheduler": self.scheduler, "use_cache": self.use_cache, "label": self.label or self.policy,
            "warmup": self.warmup, "overrides": self.overrides, "contents": self.contents,
        }
        if self.sampling is not None:
            out["sampling"] = self.sampling
        if self.alone_machine is not None:
            out["alone_machine"] = self.alone_machine
        if self.schedule_from is not None:
            out["schedule_from"] = self.schedule_from
        if self.identity:
            out["identity"] = self.identity
        return out

    @functools.cached_property
    def schedule_key(self) -> str | None:
        """The configuration hash of the mix's schedule run this run replays (None: it paces
        itself): this run under ``schedule_from`` with the OS defaults."""
        if self.schedule_from is None:
            return None
        return config_hash(dict(self.describe(), policy=self.schedule_from, os={}), memtint_version())

    @property
    def paces_schedule(self) -> bool:
        """Whether this run is its mix's schedule run itself."""
        return self.schedule_key == self.config_hash


def config_hash(description: dict[str, Any], version: str, contents: dict[str, Any] | None = None) -> str:
    """sha256 of the canonical JSON of what determines a run's result, memtint version included.

    Programs, machines and every file they or the OS settings name (device, mapping, rules,
    ``phases:`` traces) are hashed by content, as the alone cache does (``contents``: their
    identities, :func:`_contents`, when the caller has them)."""
    contents = contents or _contents(description)
    canonical = {
        "format": RUN_FORMAT,
        "memtint": version,
        "machine": contents["machine"],
        "programs": contents["programs"],
        "policy": description["policy"],
        "instructions": description["instructions"],
        "seed": description["seed"],
        "baseline": description["baseline"],
        "os": description["os"],
        "mapping": description["mapping"],
        "scheduler": description["scheduler"],
        "warmup": description.get("warmup", 0),
    }
    if description.get("overrides"):  # absent when none, so earlier stores keep their hashes
        canonical["overrides"] = description["overrides"]
    if description.get("sampling") is not None:  # likewise: detailed runs keep their hashes
        canonical["sampling"] = description["sampling"]
    if description.get("schedule_from") is not None:  # matched units: the schedule's source policy
        canonical["schedule_from"] = description["schedule_from"]
    if "alone_machine" in contents:  # a variant's run against its base's alone runs
        canonical["alone_machine"] = contents["alone_machine"]
    if "files" in contents:  # a mapping or rules file by content, not by name (absent without one: hashes unchanged)
        canonical["files"] = contents["files"]
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _contents(description: dict[str, Any]) -> dict[str, Any]:
    """The identities of what a run reads from files: its machine (and the files it names), its
    programs' traces, its base machine, its mapping and rules files; presets and profiles by name."""
    out: dict[str, Any] = {
        "machine": comparison._machine_identity(description["machine"]),
        "programs": [comparison._identity(p) for p in description["programs"]],
    }
    if description.get("alone_machine") is not None:
        out["alone_machine"] = comparison._machine_identity(description["alone_machine"])
    files = comparison.files_identity(description.get("mapping"), description.get("os") or {},
                                      description.get("overrides"))
    if files:
        out["files"] = files
    return out


def inputs_identity(description: dict[str, Any], contents: dict[str, Any] | None = None) -> dict[str, Any]:
    """The memtint version and the file contents (:func:`_contents`) a task's result depends on,
    as the sweep saw them; ``description`` needs ``machine``, ``programs`` and optionally
    ``alone_machine``, ``mapping``, ``os`` and ``overrides``."""
    return {"memtint": memtint_version(), **(contents if contents is not None else _contents(description))}


def check_inputs(description: dict[str, Any], expected: dict[str, Any] | None) -> None:
    """Worker side, before a task runs: refuse (MemtintError naming the file or the version)
    when this worker would not read what the sweep hashed, since its result would be stored
    under a configuration it did not run: another memtint on a Ray node, a trace missing there
    or another copy of it, a file edited since the sweep started."""
    if not expected:
        return
    actual = inputs_identity(description)
    if actual == expected:
        return
    host = socket.gethostname()
    check_version(expected.get("memtint"), "the sweep")
    named = [(f"programs[{i}]", p, e, a) for i, (p, e, a) in
             enumerate(zip(description["programs"], expected.get("programs") or [], actual["programs"]))]
    named += [(key, description.get(key), expected.get(key), actual.get(key)) for key in ("machine", "alone_machine")]
    for key, path, want, have in named:
        if want != have:
            break
    else:
        key, path = "files", "a mapping, rules or device file its machine, mapping, os or overrides name"
    if isinstance(path, str) and os.path.isabs(path) and not os.path.exists(path):
        raise comparison.MemtintError(f"{key}: {path}: no such file on this worker ({host}); every Ray node needs the "
                                      "sweep's trace and machine files at the same path")
    named = " (or a file it names)" if key in ("machine", "alone_machine") else ""
    raise comparison.MemtintError(
        f"{key}: {path}{named} on this worker ({host}) is not what the sweep read: changed since the sweep started, "
        "or another copy on this Ray node; every node needs the same files at the same path")


def check_version(expected: str | None, what: str) -> None:
    """Worker side: refuse (MemtintError) when this worker's memtint is not the one ``what``
    (the sweep, the reproduction) planned with: its results would be stored as that version's."""
    actual = memtint_version()
    if expected is not None and actual != expected:
        raise comparison.MemtintError(
            f"this worker ({socket.gethostname()}) runs memtint {actual}, {what} memtint {expected}: every Ray node "
            f"needs {what}'s memtint (results are kept under its version)")


def file_digests(*items: Any) -> dict[str, str]:
    """Each file ``items`` read (:func:`memtint.outputs.referenced_files`: traces, machine, mapping and
    rules files), by absolute path, with its content digest: what :func:`check_files` compares."""
    from memtint import outputs

    return {os.path.abspath(f): comparison._digest(f) for f in outputs.referenced_files(*items)}


def check_files(expected: dict[str, str] | None, what: str) -> None:
    """Worker side: refuse (MemtintError naming the file) when a file of ``expected``
    (:func:`file_digests` where the work was planned, by ``what``) is missing here or differs."""
    host = socket.gethostname()
    for path, digest in (expected or {}).items():
        if not os.path.isfile(path):
            raise comparison.MemtintError(f"{path}: no such file on this worker ({host}); every Ray node needs "
                                          f"{what}'s files at the same path")
        if comparison._digest(path) != digest:
            raise comparison.MemtintError(f"{path} on this worker ({host}) is not what {what} read: changed since it "
                                          "started, or another copy on this Ray node; every node needs the same "
                                          "files at the same path")


def alone_inputs(spec: dict[str, Any]) -> dict[str, Any]:
    """What :func:`inputs_identity` reads of an alone run's engine specification."""
    return {k: spec.get(k) for k in ("machine", "programs", "mapping", "os", "overrides")}


def contents_digest(contents: dict[str, Any]) -> str:
    """A short digest of what a run reads from files (:func:`_contents`): runs of one mix whose
    digests differ read different versions of a file (a machine edited between two sweeps), so
    a report must not pair them."""
    text = json.dumps(contents, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def expand(spec: SweepSpec) -> list[Run]:
    """The sweep's runs, one per distinct configuration (duplicates, e.g. two random draws that
    happen to be equal, are run once), in specification order."""
    from memtint.sampling import engine_sampling

    version = memtint_version()
    runs: list[Run] = []
    seen: set[str] = set()
    sampling, matched = engine_sampling(spec.sampling)
    for e in spec.entries:
        baseline = spec.baseline or comparison.default_baseline(e.alone_machine or e.machine)
        description = {
            "machine": e.machine, "programs": list(e.mix.programs), "policy": e.policy,
            "instructions": e.instructions, "seed": e.seed, "baseline": baseline, "os": e.os,
            "mapping": spec.mapping, "scheduler": e.scheduler or spec.scheduler, "warmup": spec.warmup,
            "overrides": spec.overrides,
        }
        if sampling is not None:
            description["sampling"] = sampling
        if matched:
            description["schedule_from"] = baseline
        if e.alone_machine is not None:
            description["alone_machine"] = e.alone_machine
        contents = _contents(description)
        digest = config_hash(description, version, contents)
        if digest in seen:
            continue
        seen.add(digest)
        runs.append(Run(digest, e.machine, e.mix.programs, e.mix.name, e.policy, e.instructions, e.seed,
                        baseline, dict(e.os), spec.mapping, e.scheduler or spec.scheduler, spec.use_cache,
                        spec.warmup, overrides=spec.overrides,
                        label=f"{e.policy}+{e.scheduler}" if e.scheduler else e.policy,
                        sampling=sampling, alone_machine=e.alone_machine,
                        schedule_from=baseline if matched else None, contents=contents_digest(contents),
                        identity=inputs_identity(description, contents)))
    return runs


@dataclass(frozen=True)
class AloneTask:
    """One distinct alone run (its cache key and its engine specification, and what its key was
    computed from: :func:`inputs_identity`)."""

    key: str
    program: str
    spec: dict[str, Any]
    identity: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


def alone_keys(run: Run) -> dict[str, dict[str, Any]]:
    """The alone runs a run needs: their cache keys and engine specifications, in mix order."""
    specs = comparison.build_alone_specs(run.alone_machine or run.machine, list(run.programs), instructions=run.instructions,
                                         seed=run.seed, baseline=run.baseline, mapping=run.mapping,
                                         scheduler=run.scheduler, warmup=run.warmup, overrides=run.overrides,
                                         sampling=run.sampling)
    return {comparison.alone_key(spec): spec for spec in specs}


def alone_tasks(runs: list[Run]) -> list[AloneTask]:
    """Each distinct alone run the given runs need and the alone cache does not hold yet, once
    (none when the cache is off: then each comparison runs its own)."""
    tasks: dict[str, AloneTask] = {}
    for run in runs:
        if not run.use_cache:
            continue
        for program, (key, spec) in zip(run.programs, alone_keys(run).items()):
            if key not in tasks and not comparison.alone_cached(spec):
                tasks[key] = AloneTask(key, program, spec, inputs_identity(alone_inputs(spec)))
    return list(tasks.values())


def _error_text(error: BaseException) -> str:
    text = str(error) or type(error).__name__
    if not isinstance(error, comparison.MemtintError):
        text = f"{type(error).__name__}: {text}"
    return text


def execute_alone(task: dict[str, Any]) -> dict[str, Any]:
    """Worker side: compute one alone run (into the worker's cache too) and return it as
    ``{"key", "status", "error", "core"}``: the runner keeps ``core`` and ships it with the runs
    that need it, so workers on other machines need no shared cache. Never raises: a failure is
    returned (the comparisons that need the run will fail with the same error and be recorded)."""
    try:
        check_inputs(alone_inputs(task["spec"]), task.get("identity"))
        core = comparison.alone_run(task["spec"], use_cache=True)
        return {"key": task["key"], "status": "ok", "error": None, "core": core}
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as error:  # the engine's panics are BaseException
        return {"key": task["key"], "status": "failed", "error": _error_text(error)}


def execute_schedule(task: dict[str, Any]) -> dict[str, Any]:
    """Worker side: the mix's schedule run (``task["spec"]``, the mix under the schedule's policy)
    when no run of the sweep is that run: ``{"key", "status", "error", "schedule", "schedule_units"}``
    (its units: :func:`memtint.sampling.units_of`); never raises."""
    from memtint import api
    from memtint.sampling import units_of

    try:
        check_inputs(task.get("inputs") or {}, task.get("identity"))
        result = api.run_sim_spec(task["spec"])
        return {"key": task["key"], "status": "ok", "error": None, "schedule": result["sampling"]["schedule"],
                "schedule_units": units_of(result)}
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as error:
        return {"key": task["key"], "status": "failed", "error": _error_text(error)}


def schedule_spec(run: Run) -> dict[str, Any]:
    """The engine spec of a run's schedule run (:attr:`Run.schedule_key`)."""
    from memtint import api

    return api.build_sim_spec(run.machine, list(run.programs), instructions=run.instructions, policy=run.schedule_from,
                              seed=run.seed, warmup=run.warmup, mapping=run.mapping, scheduler=run.scheduler,
                              overrides=run.overrides, sampling=run.sampling)


def execute_run(run: dict[str, Any]) -> dict[str, Any]:
    """Worker side: run one comparison (a plain-data run from :meth:`Run.describe`, optionally
    with ``"alone"``: alone runs by cache key, computed earlier and shipped with the run; with
    ``"schedule"`` and ``"paced_by"``: the mix's schedule and the units of the run that paced it).

    Returns ``{"config_hash", "status": "ok"|"failed", "error", "result", "elapsed_seconds"}``
    where ``result`` is the :func:`memtint.comparison.compare` result (docs/stats.md). Never
    raises for a failing simulation: the error text is returned and recorded by the runner."""
    start = time.perf_counter()
    out: dict[str, Any] = {"config_hash": run["config_hash"], "status": "ok", "error": None, "result": None}
    try:
        check_inputs(run, run.get("identity"))
        out["result"] = comparison.compare(
            run["machine"], list(run["programs"]), [run["policy"]], instructions=run["instructions"],
            seed=run["seed"], baseline=run["baseline"], mapping=run["mapping"], scheduler=run["scheduler"],
            os_options=run["os"] or None, use_cache=run["use_cache"], workers=1, overrides=run.get("overrides"),
            alone_results=run.get("alone"), warmup=run.get("warmup", 0),
            sampling=run.get("sampling"), alone_machine=run.get("alone_machine"), schedule=run.get("schedule"),
            keep_schedule=run.get("paces", False), paced_by=run.get("paced_by"),
            probed=True,  # the sweep probed each combination when it read its specification
        )
        if run.get("paces"):  # the mix's schedule run: its schedule and units go to the runner for the others
            policy = out["result"]["policies"][0]
            out["schedule"], out["schedule_units"] = policy.pop("schedule"), policy.pop("schedule_units")
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as error:
        out["status"] = "failed"
        out["error"] = _error_text(error)
        if not isinstance(error, comparison.MemtintError):
            out["traceback"] = traceback.format_exc()
    out["elapsed_seconds"] = time.perf_counter() - start
    return out
