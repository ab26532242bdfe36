"""The memtint Python API: build a run specification, run the engine, return statistics.

Every entry point here is a thin layer over the Rust engine's JSON boundary
(``memtint._engine``): the names of machines, mappings, schedulers and options are the ones used
in the TOML presets and by the ``memtint`` command. The run specification and the statistics
schema are documented in docs/stats.md.
"""

from __future__ import annotations

import json
import os
from typing import Any

from memtint import _engine
from memtint._engine import MemtintError

__all__ = ["MemtintError", "generate", "presets", "run_dram", "trace", "build_run_spec"]

GENERATOR_KINDS = ("stream", "random", "strided", "conflict", "mix")
TRACE_FORMATS = ("ramulator", "dramsim3")


def trace(path: str | os.PathLike[str], format: str = "ramulator") -> dict[str, Any]:
    """A workload read from a DRAM trace file (plain or gzip-compressed).

    ``format`` is ``"ramulator"`` (``0x1a2b3c40 R``) or ``"dramsim3"`` (``0x1a2b3c40 READ 12``).
    """
    return {"trace": {"path": os.fspath(path), "format": format}}


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
    return {
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
    machine: str,
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
) -> dict[str, Any]:
    """The JSON run specification that :func:`run_dram` sends to the engine.

    Raises :class:`MemtintError` for a workload that is not exactly one of ``trace`` and
    ``generate``, or a trace file that does not exist.
    """
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
    if read_queue is not None:
        controller["read_queue"] = read_queue
    if write_queue is not None:
        controller["write_queue"] = write_queue
    if not controller:
        del merged["controller"]

    spec: dict[str, Any] = {"machine": machine, "workload": workload}
    optional = {
        "mapping": mapping,
        "scheduler": scheduler,
        "row_policy": row_policy,
        "refresh": refresh,
        "outstanding": outstanding,
    }
    spec.update({key: value for key, value in optional.items() if value is not None})
    if merged:
        spec["overrides"] = merged
    spec["check"] = bool(check)
    spec["cycle_by_cycle"] = bool(cycle_by_cycle)
    return spec


def run_dram(machine: str, workload: dict[str, Any], **options: Any) -> dict[str, Any]:
    """Run a DRAM-level simulation and return its statistics (docs/stats.md).

    ``machine`` is a preset name (``memtint presets``) or a path to a machine TOML; ``workload``
    comes from :func:`trace` or :func:`generate`. Options (all optional): ``mapping`` (a layout
    such as ``"RoBaRaCoCh"``, a mapping preset or a mapping TOML path), ``scheduler``,
    ``row_policy``, ``refresh``, ``read_queue``, ``write_queue``, ``overrides`` (a partial
    machine table, e.g. ``{"dram": {"channels": 2}}``), ``outstanding`` (requests in flight),
    ``check`` (run the independent timing checker) and ``cycle_by_cycle`` (no event skipping).

    The engine runs with the GIL released, so runs in several threads proceed in parallel.
    Raises :class:`MemtintError` with a complete message for any configuration or input error.
    """
    unknown = set(options) - set(build_run_spec.__kwdefaults__ or {})
    if unknown:
        raise TypeError(f"run_dram() got unexpected option(s): {', '.join(sorted(unknown))}")
    spec = build_run_spec(machine, workload, **options)
    return json.loads(_engine.run_dram(json.dumps(spec)))


def presets() -> dict[str, Any]:
    """The preset catalogue: machines, devices, mappings, layouts, schedulers, row policies,
    refresh managers, generators and trace formats, as listed by ``memtint presets``."""
    return json.loads(_engine.presets_json())
