"""Sweeps: many comparisons (machines × mixes × policies × instructions × seeds) on a process
pool or a Ray cluster, with a resumable result store on disk (docs/sweeps.md).

Modules: :mod:`~memtint.sweep.spec` (the TOML specification and its validation),
:mod:`~memtint.sweep.runs` (concrete runs, configuration hashes, the worker functions),
:mod:`~memtint.sweep.store` (Parquet batches and manifest), :mod:`~memtint.sweep.backends`
and :mod:`~memtint.sweep.ray_backend` (where tasks run; Ray is imported only when used), :mod:`~memtint.sweep.runner` (resume, progress, batching) and
:mod:`~memtint.sweep.summary` (per-policy tables).
"""

from __future__ import annotations

import os
from typing import Any

from memtint.sweep.backends import Backend, LocalBackend
from memtint.sweep.runner import SweepSummary, run_sweep
from memtint.sweep.spec import SweepSpec, SweepSpecError, load_spec, parse_spec
from memtint.sweep.store import ResultStore, load_results
from memtint.sweep.summary import policy_summary

__all__ = ["Backend", "LocalBackend", "ResultStore", "SweepSpec", "SweepSpecError", "SweepSummary",
           "load_results", "load_spec", "parse_spec", "policy_summary", "run_sweep", "sweep"]


def sweep(spec: SweepSpec | dict[str, Any] | str | os.PathLike[str], out: str | os.PathLike[str], *,
          jobs: int | None = None, ray: str | None = None, **options: Any) -> SweepSummary:
    """Run a sweep (a TOML path, a dict in the same schema, or a :class:`SweepSpec`) into the
    result directory ``out`` on a local process pool of ``jobs`` workers, or on Ray with
    ``ray="auto"`` or ``ray="ADDRESS"`` (needs ``pip install 'memtint[ray]'``); see
    :func:`run_sweep` (``from memtint.sweep import run_sweep``) for the options."""
    return run_sweep(spec, out, jobs=jobs, ray=ray, **options)
