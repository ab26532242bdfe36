"""Run a sweep: resume from the store, compute shared alone runs once, run the comparisons on a
backend, write results in batches, show progress, and summarise.

A failed run is recorded (status ``failed`` and its error text) and does not stop the sweep; it
is retried by the next invocation on the same store. Runs whose configuration hash is stored
with status ``ok`` are skipped.
"""

from __future__ import annotations

import os
import re
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from memtint import comparison
from memtint.api import MemtintError
from memtint.sweep import runs as runs_module
from memtint.sweep.backends import Backend, LocalBackend
from memtint.sweep.spec import SweepSpec, load_spec, parse_spec
from memtint.sweep.store import ResultStore, rows_for

__all__ = ["SweepSummary", "run_sweep", "resolve_spec"]


@dataclass
class SweepSummary:
    """What one invocation did: runs ``total`` in the spec, ``done`` now (``failed`` of them
    failed), ``skipped`` because already stored, ``remaining`` left by a ``limit``."""

    name: str
    out: str
    total: int
    done: int = 0
    skipped: int = 0
    failed: int = 0
    remaining: int = 0
    alone_runs: int = 0
    seconds: float = 0.0
    config_hashes: list[str] = field(default_factory=list, repr=False)
    errors: dict[str, str] = field(default_factory=dict, repr=False)
    #: Per failed run's configuration hash, what it ran: ``mix / policy on machine, seed N``.
    failed_runs: dict[str, str] = field(default_factory=dict, repr=False)
    #: Runs that warned (an unmet target error, a core with few units): per warning, the first
    #: run's text and the runs (mix and policy) that gave it. Warnings that differ only in their
    #: figures (each run's core, unit count, instructions) are one warning.
    warnings: dict[str, list[str]] = field(default_factory=dict, repr=False)
    _warning_texts: dict[str, str] = field(default_factory=dict, repr=False)

    @property
    def ok(self) -> bool:
        return self.failed == 0

    def note_warning(self, text: str, run: str) -> None:
        """Count ``text`` from ``run`` under the first warning of its kind."""
        first = self._warning_texts.setdefault(_FIGURES.sub("#", text), text)
        runs = self.warnings.setdefault(first, [])
        if run not in runs:  # two cores of one run warning alike are one run
            runs.append(run)


#: The figures of a warning (numbers, with their separators), which vary from run to run.
_FIGURES = re.compile(r"\d[\d,.]*")


def resolve_spec(spec: SweepSpec | dict[str, Any] | str | os.PathLike[str]) -> SweepSpec:
    """A :class:`SweepSpec` from a spec object, a TOML-like dict, or a TOML path."""
    from memtint.api import plain

    if isinstance(spec, SweepSpec):
        return spec
    if isinstance(spec, dict):  # NumPy integers (seeds=list(np.arange(3))) and Paths as plain values
        return parse_spec(plain(spec))
    if not isinstance(spec, (str, os.PathLike)):
        raise MemtintError(f"spec: expected a sweep specification (a dict in the TOML schema, or a TOML file's path), "
                           f"got {spec!r}")
    return load_spec(spec)


class _Progress:
    """A rich progress bar (done/total, runs/s, time remaining) when stderr is a terminal, a
    plain line every :data:`LINE_EVERY` seconds in a log (a sweep of hours said nothing there),
    and calls to a user callback."""

    #: Seconds between two plain progress lines when stderr is not a terminal.
    LINE_EVERY = 30.0

    def __init__(self, enabled: bool | None, callback: Callable[[str, int, int], None] | None) -> None:
        self.callback = callback
        self.bar = None
        self.lines = False
        self.last_line = time.perf_counter()
        if enabled is not False:
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TaskProgressColumn,
                                       TextColumn, TimeElapsedColumn, TimeRemainingColumn)

            console = Console(stderr=True)
            if enabled or console.is_terminal:
                self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                    TaskProgressColumn(), TextColumn("{task.fields[rate]}"),
                                    TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn(),
                                    console=console, transient=False)
            else:
                self.lines = True
        self.tasks: dict[str, Any] = {}
        self.started: dict[str, float] = {}
        self.counts: dict[str, int] = {}

    def __enter__(self) -> "_Progress":
        if self.bar:
            self.bar.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.bar:
            self.bar.__exit__(*exc)

    def add(self, what: str, total: int) -> None:
        self.started[what] = time.perf_counter()
        self.counts[what] = 0
        if self.bar and total:
            self.tasks[what] = self.bar.add_task(what, total=total, rate="")

    def advance(self, what: str, total: int) -> None:
        self.counts[what] += 1
        if self.bar and what in self.tasks:
            elapsed = max(time.perf_counter() - self.started[what], 1e-9)
            self.bar.update(self.tasks[what], advance=1, rate=f"{self.counts[what] / elapsed:.2f} runs/s")
        now = time.perf_counter()
        if self.lines and (now - self.last_line >= self.LINE_EVERY or self.counts[what] == total):
            self.last_line = now
            done, elapsed = self.counts[what], max(now - self.started[what], 1e-9)
            left = (total - done) * elapsed / done
            sys.stderr.write(f"memtint: {what}: {done:,}/{total:,} runs, {done / elapsed:.2f} runs/s"
                             + (f", about {left:.0f} s left" if done < total else f", {elapsed:.0f} s") + "\n")
            sys.stderr.flush()
        if self.callback:
            self.callback(what, self.counts[what], total)


def _with_alone(run: runs_module.Run, known: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The plain-data run shipped to a worker, with the alone runs it needs (computed by this
    sweep or read from this machine's cache; a missing one the worker computes itself)."""
    item = run.describe()
    if run.use_cache:
        alone = {}
        for key, spec in runs_module.alone_keys(run).items():
            core = known.get(key)
            if core is None:
                core = comparison.alone_lookup(spec)
                if core is not None:
                    known[key] = core
            if core is not None:
                alone[key] = core
        item["alone"] = alone
    return item


def _error_of(outcome: Any) -> str:
    """A failed task's error: the worker's text, or the exception the backend gave instead."""
    return outcome["error"] if isinstance(outcome, dict) else str(outcome)


def _schedules(pending: list[runs_module.Run], alone_results: dict[str, dict[str, Any]], backend: Backend,
               bar: _Progress, record: Callable[[dict[str, Any], Any], None]
               ) -> tuple[dict[str, Any], dict[str, str], set[str]]:
    """The schedules the pending runs replay, by :attr:`Run.schedule_key`, each with the units of
    the run that paced it (``(schedule, units)``); the schedule runs that failed, with their
    errors; and the runs that paced a schedule (run and recorded here)."""
    needed = {r.schedule_key for r in pending if r.schedule_key is not None and not r.paces_schedule}
    if not needed:
        return {}, {}, set()
    pacers: dict[str, runs_module.Run] = {}
    for r in pending:
        if r.paces_schedule and r.schedule_key in needed:
            pacers.setdefault(r.schedule_key, r)
    schedules: dict[str, Any] = {}
    failed: dict[str, str] = {}
    items = []
    for r in pacers.values():
        item = _with_alone(r, alone_results)
        item["paces"] = True
        items.append(item)
    keys = {r.config_hash: r.schedule_key for r in pacers.values()}
    for item, outcome in backend.map_unordered(runs_module.execute_run, items):
        key = keys[item["config_hash"]]
        if isinstance(outcome, dict) and outcome.get("status") == "ok":
            schedules[key] = (outcome.pop("schedule"), outcome.pop("schedule_units"))
        else:
            failed[key] = _error_of(outcome)
        record(item, outcome)
    # Mixes whose schedule run is not a pending run of this sweep (another policy's sweep, or
    # stored by an earlier invocation): run for the schedule alone.
    alone_keys = {}
    for r in pending:
        if r.schedule_key in needed and r.schedule_key not in pacers:
            alone_keys.setdefault(r.schedule_key, r)
    if alone_keys:
        bar.add("schedule runs", len(alone_keys))
        tasks = [{"key": k, "spec": runs_module.schedule_spec(r), "inputs": r.describe(), "identity": r.identity}
                 for k, r in alone_keys.items()]
        for task, outcome in backend.map_unordered(runs_module.execute_schedule, tasks):
            if isinstance(outcome, dict) and outcome.get("status") == "ok":
                schedules[task["key"]] = (outcome["schedule"], outcome["schedule_units"])
            else:
                failed[task["key"]] = _error_of(outcome)
            bar.advance("schedule runs", len(alone_keys))
    return schedules, failed, set(keys)


def _refuse_in_a_starting_worker() -> None:
    """A pool worker starts by importing the script that made the pool (spawn): a script whose
    sweep call is not under ``if __name__ == "__main__":`` calls it again there, and every run
    failed with a dead worker and a multiprocessing traceback. Say what to do instead."""
    import multiprocessing.process

    if getattr(multiprocessing.process.current_process(), "_inheriting", False):
        raise MemtintError("memtint.sweep was called while a sweep worker was starting: its workers import the "
                           "script that calls it, so put the call under 'if __name__ == \"__main__\":'")


def _refuse_a_main_without_a_file(local: bool) -> None:
    """A local pool's workers import the script that made it (spawn), by its file: a script
    read from standard input (``python - <<EOF``) has none, and every run failed, blamed on a
    missing ``__main__`` guard it had."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if local and path and not os.path.exists(path):
        raise MemtintError(f"memtint.sweep's local workers start by importing the calling script, and this one has no "
                           f"file ({path}: a script read from standard input); save it to a file and run that, or "
                           "pass a Ray backend")


def run_sweep(
    spec: SweepSpec | dict[str, Any] | str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    jobs: int | None = None,
    ray: str | None = None,
    backend: Backend | None = None,
    limit: int | None = None,
    batch_size: int = 32,
    batch_seconds: float = 30.0,
    progress: bool | None = None,
    on_progress: Callable[[str, int, int], None] | None = None,
    out_option: str = "out",
) -> SweepSummary:
    """Run the sweep ``spec`` (a :class:`SweepSpec`, a dict in the TOML schema, or a TOML path),
    storing results under ``out``; return a :class:`SweepSummary`. ``out_option`` is how errors
    name ``out`` (the command's ``--out``).

    Runs already stored with status ``ok`` are skipped (resume). ``limit`` runs at most that
    many of the pending runs (the rest is left for a later call). Results are written every
    ``batch_size`` runs or ``batch_seconds`` seconds, whichever comes first, and at the end.
    ``backend`` defaults to ``LocalBackend(jobs)``, or with ``ray`` (``"auto"`` or a cluster
    address) to a :class:`~memtint.sweep.ray_backend.RayBackend` (``jobs`` must not be given
    then). ``progress``: ``None`` shows a bar on a
    terminal, ``True`` always, ``False`` never; ``on_progress(phase, done, total)`` is called
    after each finished task (phase ``"alone runs"`` or ``"runs"``).
    """
    _refuse_in_a_starting_worker()
    start = time.perf_counter()
    # The command line's bounds, for scripts too (jobs=0 ran, limit=-1 gave a contradictory summary).
    import numbers

    for name, value in (("jobs", jobs), ("limit", limit), ("batch_size", batch_size)):
        if (value is not None or name == "batch_size") and (isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1):
            raise MemtintError(f"{name}: expected a whole number of at least 1, got {value!r}")
    jobs, limit, batch_size = (None if v is None else int(v) for v in (jobs, limit, batch_size))
    if not isinstance(out, (str, os.PathLike)):
        raise MemtintError(f"out: expected the result directory's path, got {out!r}")
    if not isinstance(out_option, str):
        raise MemtintError(f"out_option: expected how errors name out (a string such as '--out'), got {out_option!r}")
    # Each found only after the first runs had finished and been stored (a str on_progress, a
    # batch_seconds of "30" compared with a float).
    from memtint.api import function_argument

    function_argument("on_progress", on_progress, "(phase, done, total)")
    if (isinstance(batch_seconds, bool) or not isinstance(batch_seconds, numbers.Real)
            or not 0 <= batch_seconds < float("inf")):
        raise MemtintError(f"batch_seconds: expected a number of seconds of at least 0, got {batch_seconds!r}")
    if backend is not None and not isinstance(backend, Backend):
        raise MemtintError(f"backend: expected a memtint.sweep.Backend (LocalBackend(jobs), RayBackend), got {backend!r}")
    _refuse_a_main_without_a_file(ray is None and backend is None)
    if progress is not None:
        from memtint.api import flag_argument

        flag_argument("progress", progress)
    if ray is not None:
        if jobs is not None or backend is not None:
            raise MemtintError("give either ray or jobs/backend, not both")
        from memtint.sweep.ray_backend import import_ray

        import_ray()  # a missing Ray is reported before anything runs
    sweep = resolve_spec(spec)
    store = ResultStore(out)
    store.check_writable(out_option)
    with store.writing(out_option):  # one sweep at a time writes a store
        return _run_into(store, sweep, out, jobs=jobs, ray=ray, backend=backend, limit=limit, batch_size=batch_size,
                         batch_seconds=batch_seconds, progress=progress, on_progress=on_progress, start=start)


def _run_into(store: ResultStore, sweep: SweepSpec, out: str | os.PathLike[str], *, jobs: int | None, ray: str | None,
              backend: Backend | None, limit: int | None, batch_size: int, batch_seconds: float,
              progress: bool | None, on_progress: Callable[[str, int, int], None] | None, start: float) -> SweepSummary:
    """:func:`run_sweep`'s work, with the store held."""
    all_runs = runs_module.expand(sweep)
    version = runs_module.memtint_version()
    summary = SweepSummary(name=sweep.name, out=os.fspath(out), total=len(all_runs),
                           config_hashes=[r.config_hash for r in all_runs])

    stored = store.completed_hashes()
    pending = [r for r in all_runs if r.config_hash not in stored]
    summary.skipped = len(all_runs) - len(pending)
    if limit is not None:
        summary.remaining = max(0, len(pending) - limit)
        pending = pending[:limit]
    alone = runs_module.alone_tasks(pending)
    summary.alone_runs = len(alone)
    from memtint.limits import announce, sweep_seconds

    own_backend = backend is None
    if backend is None and pending:
        if ray is not None:  # started or reached before the store records anything
            from memtint.sweep.ray_backend import RayBackend

            backend = RayBackend(ray)
        else:
            backend = LocalBackend(jobs)
    # On the backend's slots: a Ray cluster's CPUs, not this machine's.
    announce(sweep_seconds([(len(r.programs), r.instructions, r.warmup, r.sampling) for r in pending],
                           backend.slots if backend is not None else 1), "sweep")
    try:
        store.start_sweep(sweep.name, os.path.abspath(sweep.source) if sweep.source else None, len(all_runs),
                          version)
    except BaseException:
        if own_backend and backend is not None:
            backend.close()
        raise
    if not pending:
        summary.seconds = time.perf_counter() - start
        return summary
    assert backend is not None
    rows: list[dict[str, Any]] = []
    batch_runs = 0
    last_write = time.perf_counter()

    def flush() -> None:
        nonlocal rows, batch_runs, last_write
        if rows:
            store.write_batch(rows)
        rows, batch_runs, last_write = [], 0, time.perf_counter()

    completed = False
    try:
        with _Progress(progress, on_progress) as bar:
            bar.add("alone runs", len(alone))
            bar.add("runs", len(pending))
            # Shared work first: each distinct alone run once. The results come back here, are
            # stored in this machine's alone cache, and are shipped with the runs that need them.
            alone_results: dict[str, dict[str, Any]] = {}
            specs = {t.key: t.spec for t in alone}
            for task, outcome in backend.map_unordered(
                    runs_module.execute_alone, [{"key": t.key, "spec": t.spec, "identity": t.identity} for t in alone]):
                if isinstance(outcome, dict) and outcome.get("status") == "ok":
                    alone_results[task["key"]] = outcome["core"]
                    if not comparison.alone_cached(specs[task["key"]]):
                        comparison.alone_store(specs[task["key"]], outcome["core"])
                bar.advance("alone runs", len(alone))

            def record(item: dict[str, Any], outcome: Any) -> None:
                nonlocal batch_runs
                if isinstance(outcome, BaseException):
                    outcome = {"config_hash": item["config_hash"], "status": "failed",
                               "error": str(outcome), "result": None}
                mix = item.get("mix_name") or "|".join(item["programs"])
                mix = mix if len(mix) <= 80 else mix[:77] + "..."
                # The run's own label (compare knows `buddy+tcm` as `buddy` under scheduler tcm),
                # machine and seed: runs of two seeds are two runs.
                run = f"{mix} / {item.get('label') or item['policy']} on {item['machine']}, seed {item['seed']}"
                if outcome["status"] != "ok":
                    summary.failed += 1
                    summary.errors[item["config_hash"]] = outcome["error"]
                    summary.failed_runs[item["config_hash"]] = run
                summary.done += 1
                result = outcome.get("result") or {}
                for p in result.get("policies") or []:
                    for w in (p.get("warnings") or []) + (result.get("alone_warnings") or []) + (result.get("warnings") or []):
                        summary.note_warning(w, run)
                rows.extend(rows_for(item, outcome, sweep.name, version))
                batch_runs += 1
                bar.advance("runs", len(pending))
                if batch_runs >= batch_size or time.perf_counter() - last_write >= batch_seconds:
                    flush()

            # Matched units (docs/sampling.md): each mix's schedule run first, then the other
            # policies of the mix replay its schedule. The schedule run is the baseline policy's
            # own run of the mix when this sweep has it pending, else a run made for it alone.
            schedules, failed_schedules, paced = _schedules(pending, alone_results, backend, bar, record)
            rest = [r for r in pending if r.config_hash not in paced]
            items = []
            for r in rest:
                item = _with_alone(r, alone_results)
                key = r.schedule_key
                if key is not None and key in failed_schedules:
                    record(item, {"config_hash": r.config_hash, "status": "failed", "result": None,
                                  "error": f"its mix's schedule run (policy {r.schedule_from}) failed: "
                                           f"{failed_schedules[key]}"})
                    continue
                if key is not None and key in schedules:
                    item["schedule"], units = schedules[key]
                    item["paced_by"] = {"policy": r.schedule_from, "cores": units}
                items.append(item)
            for item, outcome in backend.map_unordered(runs_module.execute_run, items):
                record(item, outcome)
            flush()
        completed = True
    finally:
        # Whatever finished before an interrupt is kept; the workers still running are ended.
        try:
            flush()
        finally:
            if own_backend:
                backend.close(kill=not completed)
    summary.seconds = time.perf_counter() - start
    return summary
