"""Finished reproduction runs kept on disk, so that `memtint reproduce` stopped part-way (Ctrl-C, a
closed terminal, a lost machine) resumes where it stopped, and a change that touches only the
reports (their analysis, wording, figure files) re-analyses the runs without simulating them again.

A run is reused only when everything that determines its result is the same: its engine
specification (the job's key, with the keys of the runs it takes profiles or units from), the
content of every file it reads (traces, machine, mapping and rules files: by digest, not by name),
the engine's model identity (``memtint._engine.version()``: a digest of the engine's sources and
built-in presets, so a changed engine reuses nothing), and the Python between the specification
and what is kept (``memtint.api``'s functions that make the engine's input, and ``runner.slim``,
which keeps part of its statistics: by their source, so a report that needs a statistic kept from
now on gets runs that keep it). Runs are deterministic for these, so a
reused result is the one a new run would give. Entries live in
``$MEMTINT_CACHE_DIR/reproduce/<model>/`` (default ``~/.cache/memtint``), one small JSON file per
run, written atomically and carrying the digest of their result: a damaged one is run again.
Failed runs are not kept. ``memtint reproduce --no-cache`` neither reads nor writes them.
"""

from __future__ import annotations

import functools
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from memtint import _engine, comparison

#: The entry layout; an entry of another layout is run again.
FORMAT = 1


def directory() -> Path:
    """Where this engine's runs are kept."""
    return comparison.cache_dir() / "reproduce" / _engine.version()


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


@functools.lru_cache(maxsize=1)
def _python_identity() -> str:
    """The source of the functions that make a run's engine input and its kept statistics (not
    their whole modules: an edit elsewhere in them changes no result, and would make a rerun
    simulate everything again)."""
    import inspect

    from memtint import api
    from memtint.reproduce import runner

    parts = [inspect.getsource(f) for f in (api.engine_json, api.plain, api._program, api.run_sim_spec, api.run_rt,
                                            runner.execute, runner.slim)]
    return _digest(parts + [runner.CORE_KEYS, runner.RUN_KEYS])


class RunCache:
    """The kept runs of one engine; counts the runs it gave back (``reused``)."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root or directory()
        self.reused = 0
        self._keys: dict[str, str] = {}
        self._warned = False

    def keys(self, jobs: dict[str, dict[str, Any]]) -> None:
        """Compute each job's entry name (``jobs``: by job key): its key, its files' content and
        the entry names of the runs it depends on (``profiles_from``, ``schedule_from``)."""
        def key_of(job_key: str) -> str:
            if job_key in self._keys:
                return self._keys[job_key]
            job = jobs[job_key]
            needs = list(job.get("profiles_from") or []) + ([job["schedule_from"]] if job.get("schedule_from") else [])
            self._keys[job_key] = _digest({
                "job": job_key, "files": comparison.files_identity(job["spec"]), "engine": _engine.version(),
                "python": _python_identity(),
                "needs": [key_of(k) if k in jobs else k for k in needs]})
            return self._keys[job_key]

        for k in jobs:
            key_of(k)

    def _path(self, job_key: str) -> Path:
        return self.root / f"{self._keys[job_key]}.json"

    def lookup(self, job_key: str) -> tuple[dict[str, Any], float] | None:
        """The kept result of a job and the CPU seconds it took when it ran, or None if absent or
        damaged (an entry whose result does not match its digest, or of another layout)."""
        entry = comparison.read_entry(self._path(job_key), FORMAT, "result")
        if entry is None or not isinstance(entry.get("seconds"), (int, float)):
            return None
        self.reused += 1
        return entry["result"], float(entry["seconds"])

    def store(self, job_key: str, result: dict[str, Any], seconds: float) -> None:
        """Keep a finished run (atomically; with a warning, once, if the cache cannot hold it:
        the reproduction is still right, only a rerun is not shortened)."""
        try:
            comparison.write_entry(self._path(job_key), FORMAT, "result", result, seconds=seconds)
        except OSError as error:
            if not self._warned:
                self._warned = True
                sys.stderr.write(f"memtint: warning: reproduction runs are not kept: {self.root} cannot hold them "
                                 f"({error.strerror or error}); a rerun simulates them again. Point MEMTINT_CACHE_DIR "
                                 "at a writable directory\n")
