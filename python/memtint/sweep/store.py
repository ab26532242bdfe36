"""The result store of sweeps: a directory of Parquet files (one per batch) and a manifest.

Layout (docs/sweeps.md)::

    DIR/manifest.json                 format, memtint version, sweeps started, batches written
    DIR/batches/batch-00000-<id>.parquet

One row per core per run, with the run-level metrics repeated on each row. A batch file becomes
part of the store when the manifest lists it; the manifest is replaced atomically after the file
is complete, so an interrupted sweep leaves a consistent store (at worst an unlisted file, which
is ignored). A configuration run several times (a failed run retried) is represented by its
latest batch.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from memtint import stopping
from memtint.api import MemtintError

if TYPE_CHECKING:
    import pandas

__all__ = ["ResultStore", "COLUMNS", "rows_for"]

STORE_FORMAT = 1
#: The file a writing sweep holds locked (ResultStore.writing); not part of the results.
LOCK_NAME = ".sweep.lock"


def _schema():
    import pyarrow as pa

    return pa.schema([
        ("sweep", pa.string()),
        ("config_hash", pa.string()),
        ("memtint_version", pa.string()),
        ("status", pa.string()),
        ("error", pa.string()),
        ("machine", pa.string()),
        ("mix", pa.string()),
        ("mix_name", pa.string()),
        ("programs_in_mix", pa.int32()),
        ("policy", pa.string()),
        ("baseline", pa.string()),
        ("instructions", pa.int64()),
        ("seed", pa.int64()),
        ("os", pa.string()),
        ("weighted_speedup", pa.float64()),
        ("harmonic_speedup", pa.float64()),
        ("maximum_slowdown", pa.float64()),
        ("mix_row_buffer_miss_rate", pa.float64()),
        ("dram_requests", pa.int64()),
        ("dram_energy_nj", pa.float64()),
        ("engine_wall_seconds", pa.float64()),
        ("elapsed_seconds", pa.float64()),
        ("core", pa.int32()),
        ("program", pa.string()),
        ("ipc_alone", pa.float64()),
        ("ipc_shared", pa.float64()),
        ("slowdown", pa.float64()),
        ("row_buffer_miss_rate", pa.float64()),
        ("row_buffer_miss_rate_alone", pa.float64()),
        ("llc_mpki", pa.float64()),
        ("read_latency_ns_mean", pa.float64()),
        ("llc_mpki_alone", pa.float64()),
        ("read_latency_ns_alone", pa.float64()),
        ("banks_used", pa.int64()),
        ("channels_used", pa.int64()),
        ("colour_overflow_pages", pa.int64()),
        ("row_interference_rate", pa.float64()),
        ("user_share", pa.float64()),
        ("memory_share", pa.float64()),
        ("system_share", pa.float64()),
        ("finished_at", pa.float64()),
        ("batch", pa.int32()),
        # Sampled runs (docs/sweeps.md "Sampled sweeps"): the weighted speedup's 95 % interval;
        # null and False for detailed runs and in batches stored before these columns.
        ("weighted_speedup_ci95_low", pa.float64()),
        ("weighted_speedup_ci95_high", pa.float64()),
        ("sampled", pa.bool_()),
        # The run's other settings (setup_text); null in batches stored before the column.
        ("setup", pa.string()),
        # Matched units (docs/sampling.md): the policy whose schedule the run replayed and the 95 %
        # interval of its weighted speedup's relative change against that policy's run of the
        # mix (WS / WS_that - 1); null for the schedule's own run, detailed and self-paced runs.
        ("matched_to", pa.string()),
        ("weighted_speedup_change_ci95_low", pa.float64()),
        ("weighted_speedup_change_ci95_high", pa.float64()),
        # What the run read from files (runs.contents_digest): runs of one mix that read other
        # versions of a file are not one experiment; null in batches stored before the column.
        ("contents", pa.string()),
        # Sampled runs: the 95 % intervals of the run's DRAM energy and of the mix's row-buffer
        # miss rate (docs/sampling.md, Output); null for detailed runs, where unbounded, and in
        # batches stored before these columns.
        ("dram_energy_nj_ci95_low", pa.float64()),
        ("dram_energy_nj_ci95_high", pa.float64()),
        ("mix_row_buffer_miss_rate_ci95_low", pa.float64()),
        ("mix_row_buffer_miss_rate_ci95_high", pa.float64()),
    ])


#: The columns of a stored row, in order.
COLUMNS = ["sweep", "config_hash", "memtint_version", "status", "error", "machine", "mix", "mix_name",
           "programs_in_mix", "policy", "baseline", "instructions", "seed", "os", "weighted_speedup",
           "harmonic_speedup", "maximum_slowdown", "mix_row_buffer_miss_rate", "dram_requests", "dram_energy_nj",
           "engine_wall_seconds", "elapsed_seconds", "core", "program", "ipc_alone", "ipc_shared", "slowdown",
           "row_buffer_miss_rate", "row_buffer_miss_rate_alone", "llc_mpki", "read_latency_ns_mean",
           "llc_mpki_alone", "read_latency_ns_alone", "banks_used", "channels_used", "colour_overflow_pages",
           "row_interference_rate", "user_share", "memory_share", "system_share", "finished_at", "batch",
           "weighted_speedup_ci95_low", "weighted_speedup_ci95_high", "sampled", "setup", "matched_to",
           "weighted_speedup_change_ci95_low", "weighted_speedup_change_ci95_high", "contents",
           "dram_energy_nj_ci95_low", "dram_energy_nj_ci95_high", "mix_row_buffer_miss_rate_ci95_low",
           "mix_row_buffer_miss_rate_ci95_high"]


def setup_text(run: dict[str, Any]) -> str:
    """The settings of a run beside its machine, mix, policy, baseline, length, seed and ``[os]``
    that its configuration hash covers (mapping, scheduler, warm-up, machine overrides, sampling),
    as one line: ``warmup=20000000, cache.prefetcher.kind=none, sampling.unit=5000``. Runs that
    differ in it are different experiments, which a report must not pair or pool."""
    parts = [f"{key}={run[key]}" for key in ("mapping", "scheduler") if run.get(key)]
    parts.append(f"warmup={run.get('warmup') or 0}")

    def flat(table: Any, prefix: str) -> None:
        for key in sorted(table):
            if isinstance(table[key], dict):
                flat(table[key], f"{prefix}{key}.")
            else:
                parts.append(f"{prefix}{key}={json.dumps(table[key]) if not isinstance(table[key], str) else table[key]}")

    flat(run.get("overrides") or {}, "")
    if run.get("sampling") is not None:
        flat({"sampling": run["sampling"]}, "")
    if run.get("schedule_from"):  # matched units: the policy whose schedule the run replayed
        parts.append(f"sampling.matched_to={run['schedule_from']}")
    return ", ".join(parts)


def stale_versions(runs: Any, same: list[str]) -> list[bool]:
    """Per run, whether it read other file contents (store column ``contents``) than its mix's
    newest run on its machine; a run stored before the column, whether a run of all its settings
    (``same``) read recorded contents since: it was run again, so what it read changed."""
    if "contents" not in runs.columns:
        return [False] * len(runs)
    records = runs.to_dict("records")
    recorded = [isinstance(r.get("contents"), str) and bool(r["contents"]) for r in records]
    when = (lambda r: (int(r["batch"]), float(r.get("finished_at") or 0))) if "batch" in runs.columns else \
        (lambda r: (0, float(r.get("finished_at") or 0)))
    newest: dict[tuple, tuple] = {}
    for r, known in zip(records, recorded):
        if known and ((k := (r["machine"], r["mix"])) not in newest or when(r) > newest[k][0]):
            newest[k] = (when(r), r["contents"])
    rerun = {tuple(str(r[c]) for c in same) for r, known in zip(records, recorded) if known}
    return [r["contents"] != newest[(r["machine"], r["mix"])][1] if known
            else tuple(str(r[c]) for c in same) in rerun for r, known in zip(records, recorded)]


def setup_beside_policy(policy: str, setup: str) -> str:
    """A stored run's ``setup`` without what its policy label already names: the scheduler of a
    ``policy+scheduler`` label is part of the compared policy (``buddy+tcm`` against ``buddy``),
    not another experiment's setting."""
    from memtint.comparison import split_policy

    scheduler = split_policy(policy)[1]
    if scheduler is None:
        return setup
    return ", ".join(x for x in setup.split(", ") if x != f"scheduler={scheduler}")


def rows_for(run: dict[str, Any], outcome: dict[str, Any], sweep: str, version: str) -> list[dict[str, Any]]:
    """The stored rows of one finished run: one per core (per program when it failed, metrics
    empty). ``run`` is :meth:`Run.describe`, ``outcome`` what :func:`execute_run` returned."""
    from memtint import comparison

    common = {
        "sweep": sweep, "config_hash": run["config_hash"], "memtint_version": version,
        "status": outcome["status"], "error": outcome.get("error"), "machine": run["machine"],
        "mix": "|".join(run["programs"]), "mix_name": run["mix_name"], "programs_in_mix": len(run["programs"]),
        "policy": run.get("label") or run["policy"], "baseline": run["baseline"], "instructions": run["instructions"],
        "seed": run["seed"], "os": json.dumps(run["os"], sort_keys=True),
        "elapsed_seconds": outcome.get("elapsed_seconds"), "finished_at": time.time(),
        "sampled": bool(run.get("sampling")), "setup": setup_text(run), "contents": run.get("contents") or None,
    }
    result = outcome.get("result")
    if outcome["status"] != "ok" or not result:
        return [dict(common, core=i, program=p) for i, p in enumerate(run["programs"])]
    policy = result["policies"][0]
    rows = []
    for row in comparison.to_csv_rows(result):
        row = dict(row)
        del row["policy"]
        rows.append({**common, **row, "dram_requests": policy["dram_requests"],
                     "dram_energy_nj": policy.get("dram_energy_nj"), "engine_wall_seconds": policy["wall_seconds"],
                     "sampled": bool(policy.get("sampled"))})
    return rows


class ResultStore:
    """A sweep result directory (created on first write)."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        if not isinstance(directory, (str, os.PathLike)):  # Path(None) is a bare TypeError
            raise MemtintError(f"expected a result directory's path, got {directory!r}")
        self.directory = Path(directory)
        self.manifest_path = self.directory / "manifest.json"

    # --- manifest -------------------------------------------------------------------------
    def manifest(self) -> dict[str, Any]:
        if not self.manifest_path.exists():
            return {"format": STORE_FORMAT, "batches": [], "sweeps": []}
        try:
            manifest = json.loads(self.manifest_path.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
            raise MemtintError(f"{self.manifest_path}: not a readable sweep manifest ({error})") from None
        if not isinstance(manifest, dict):
            raise MemtintError(f"{self.manifest_path}: not a sweep manifest (a JSON object with \"format\", "
                               "\"batches\" and \"sweeps\")")
        if "format" not in manifest:
            raise MemtintError(f"{self.manifest_path}: \"format\" is missing; not a sweep manifest (this memtint "
                               f"reads format {STORE_FORMAT})")
        if manifest.get("format") != STORE_FORMAT:
            raise MemtintError(f"{self.manifest_path}: store format {manifest.get('format')!r}, "
                               f"this memtint reads format {STORE_FORMAT}")
        # The shape every reader relies on, checked once here (a hand-edited manifest gave KeyErrors).
        for key in ("batches", "sweeps"):
            if not isinstance(manifest.get(key), list):
                raise MemtintError(f"{self.manifest_path}: \"{key}\" is " + ("missing" if key not in manifest else
                                   "not a list") + "; not a sweep manifest")
        for i, batch in enumerate(manifest["batches"]):
            if not isinstance(batch, dict) or not isinstance(batch.get("file"), str):
                raise MemtintError(f"{self.manifest_path}: batches[{i}] has no \"file\"; remove the entry (its runs "
                                   "are run again when the sweep is resumed) or run the sweep into a new directory")
        # A batch listed twice would count each of its runs twice in every table and finding.
        seen: dict[str, int] = {}
        for i, batch in enumerate(manifest["batches"]):
            j = seen.setdefault(os.path.normpath(batch["file"]), i)
            if j != i:
                raise MemtintError(f"{self.manifest_path}: batches[{i}] lists {batch['file']!r} as batches[{j}] does; "
                                   "remove one of the two entries")
        return manifest

    def _write_manifest(self, manifest: dict[str, Any]) -> None:
        tmp = self.manifest_path.with_suffix(f".tmp{os.getpid()}")
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            with stopping.temporary(str(tmp)):  # a stop while writing it leaves no .tmp file
                tmp.write_text(json.dumps(manifest, indent=2) + "\n")
                tmp.replace(self.manifest_path)
        except OSError as error:
            tmp.unlink(missing_ok=True)
            raise MemtintError(f"{self.manifest_path}: cannot write the store's manifest: {error.strerror or error}") \
                from None

    def check_writable(self, option: str = "out") -> None:
        """Raise a clear error now, rather than after the first batch, if DIR cannot be written;
        ``option`` names it (the API's ``out``, the command's ``--out``)."""
        from memtint.outputs import check_output_dir

        check_output_dir(option, os.fspath(self.directory))  # a file, or nowhere to create it
        if self.manifest_path.exists():
            self.manifest()  # a store of another format is refused up front
        elif self.directory.exists() and any(p.name != LOCK_NAME for p in self.directory.iterdir()):
            raise MemtintError(f"{option} {self.directory}: exists, is not empty and is not a sweep result store")

    @contextlib.contextmanager
    def writing(self, option: str = "out") -> Iterator[None]:
        """Hold the store for one writer: a second sweep into it is refused while this one runs
        (both would rewrite the manifest, and one's batches would drop out of it). An advisory
        lock (``flock``) on ``LOCK_NAME`` in the store, released when the process ends however it ends."""
        import fcntl

        created = not self.directory.exists()
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.directory / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as error:
            raise MemtintError(f"{option} {self.directory}: cannot write: {error.strerror or error}") from None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip()
                raise MemtintError(f"{option} {self.directory}: another sweep is writing this store"
                                   + (f" (process {holder})" if holder.isdigit() else "")
                                   + "; wait for it to end (then run again to resume), or give another directory") \
                    from None
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            yield
        except BaseException:
            # A sweep that failed before storing anything (an unreachable cluster, a bad spec)
            # leaves no store behind it if it made the directory.
            if created and [p.name for p in self.directory.iterdir()] == [LOCK_NAME]:
                with contextlib.suppress(OSError):
                    (self.directory / LOCK_NAME).unlink()
                    self.directory.rmdir()
            raise
        finally:
            os.close(fd)  # releases the lock

    def start_sweep(self, name: str, spec_source: str | None, runs: int, version: str) -> None:
        manifest = self.manifest()
        manifest["memtint_version"] = version
        manifest["sweeps"].append({"name": name, "spec": spec_source, "runs": runs, "started_at": time.time(),
                                   "memtint_version": version})
        self._write_manifest(manifest)

    # --- batches --------------------------------------------------------------------------
    def write_batch(self, rows: list[dict[str, Any]]) -> Path:
        """Write one batch of rows as a Parquet file and list it in the manifest."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        manifest = self.manifest()
        index = _next_index(manifest["batches"])
        batch_dir = self.directory / "batches"
        batch_dir.mkdir(parents=True, exist_ok=True)
        name = f"batch-{index:05d}-{uuid.uuid4().hex[:8]}.parquet"
        columns = {c: [r.get(c) for r in rows] for c in COLUMNS}
        columns["batch"] = [index] * len(rows)
        table = pa.table(columns, schema=_schema())
        tmp = batch_dir / (name + ".tmp")
        try:
            with stopping.temporary(str(tmp)):
                pq.write_table(table, tmp)
                tmp.replace(batch_dir / name)
        except OSError as error:
            tmp.unlink(missing_ok=True)
            raise MemtintError(f"{batch_dir / name}: cannot write a result batch: {error.strerror or error} (the runs "
                               "stored before it are kept; free space or raise the limit, then run the sweep again "
                               "to resume)") from None
        hashes = sorted({r["config_hash"] for r in rows})
        manifest["batches"].append({"file": f"batches/{name}", "rows": len(rows), "runs": len(hashes),
                                    "failed": len({r["config_hash"] for r in rows if r["status"] != "ok"}),
                                    "written_at": time.time()})
        self._write_manifest(manifest)
        return batch_dir / name

    def _tables(self, columns: list[str] | None = None):
        import pyarrow as pa
        import pyarrow.parquet as pq

        remedy = ("remove its entry from manifest.json's \"batches\" (its runs are then run again when the sweep is "
                  "resumed), or run the sweep into a new directory")
        # The columns asked for and those every stored row must fill, which are checked whatever
        # is read (a resume refuses a damaged store before its runs, not at its summary after them).
        wanted = None if columns is None else list(dict.fromkeys([*columns, *REQUIRED]))
        for batch in self.manifest()["batches"]:
            path = self.directory / batch["file"]
            try:
                table = pq.read_table(path, columns=wanted, schema=_schema())
            except FileNotFoundError:
                raise MemtintError(f"{path}: listed in {self.manifest_path} but missing (deleted or not copied with "
                                   f"the store); {remedy}") from None
            except OSError as error:
                raise MemtintError(f"{path}: cannot read this result batch: {error.strerror or error}") from None
            except (pa.ArrowInvalid, pa.ArrowException) as error:
                raise MemtintError(f"{path}: a damaged result batch (truncated or not Parquet: {error}); "
                                   f"{remedy}") from None
            # What identifies a run and its place in the tables: a batch edited by another tool
            # (pandas, a Parquet editor) may hold nulls there, which every reader took for values.
            for name in REQUIRED:
                if name in table.column_names and table.column(name).null_count:
                    raise MemtintError(f"{path}: column {name!r} is empty in {table.column(name).null_count} of "
                                       f"{table.num_rows} row(s); every stored run has one; {remedy}")
            # One row per core of a run: two would count the core (and its run) twice.
            seen: set[tuple[str, int]] = set()
            for run_core in zip(table.column("config_hash").to_pylist(), table.column("core").to_pylist()):
                if run_core in seen:
                    raise MemtintError(f"{path}: run {run_core[0]!r} has two rows for core {run_core[1]}; a run has "
                                       f"one row per core; {remedy}")
                seen.add(run_core)
            yield table

    def completed_hashes(self) -> set[str]:
        """Configuration hashes whose latest stored outcome is a success (resume skips them)."""
        latest: dict[str, tuple[int, str]] = {}
        for table in self._tables(["config_hash", "status", "batch"]):
            for h, s, b in zip(*(table.column(c).to_pylist() for c in ("config_hash", "status", "batch"))):
                if h not in latest or b >= latest[h][0]:
                    latest[h] = (b, s)
        return {h for h, (_, s) in latest.items() if s == "ok"}

    def load(self) -> "pandas.DataFrame":
        """All stored rows as a DataFrame (columns :data:`COLUMNS`), each configuration from its
        latest batch."""
        import pandas as pd
        import pyarrow as pa

        if not self.manifest_path.exists():
            d = str(self.directory)
            why = ("no such directory" if not os.path.exists(d) else
                   "a file, not a result directory" if not os.path.isdir(d) else "no manifest.json")
            raise MemtintError(f"{d}: no sweep results here ({why})")
        tables = list(self._tables())
        if not tables:
            return _schema().empty_table().to_pandas()
        frame = pa.concat_tables(tables).to_pandas()
        # Batches stored before the column have it null: their runs were detailed.
        frame["sampled"] = frame["sampled"].astype("boolean").fillna(False).astype(bool)
        frame["setup"] = frame["setup"].fillna("")  # "": stored before the column, setup unknown
        # Each configuration from its latest batch: the highest index, and of two with one index
        # (a manifest edited by hand, then a resume) the one listed later, as completed_hashes
        # decides; one run's rows never come from two batches.
        position = [i for i, t in enumerate(tables) for _ in range(t.num_rows)]
        order = frame["batch"].astype("int64") * (len(tables) + 1) + pd.Series(position, index=frame.index)
        latest = order.groupby(frame["config_hash"]).transform("max")
        return frame[order == latest].reset_index(drop=True)


#: Columns no stored row may leave empty: a run's identity, what a report groups it by, its batch.
REQUIRED = ("config_hash", "status", "machine", "mix", "policy", "core", "batch")


def _next_index(batches: list[dict[str, Any]]) -> int:
    """The index of the next batch: past every listed one's (``batch-NNNNN-``), not only their
    count, which falls when an entry is removed by hand (as a damaged batch's error says to do);
    a reused index would make a retried run's failed and successful rows both its latest."""
    import re

    indices = [int(m.group(1)) for b in batches if (m := re.match(r"batch-(\d{1,9})-", os.path.basename(b["file"])))]
    return max([len(batches), *(i + 1 for i in indices)])


def load_results(directory: str | os.PathLike[str]) -> "pandas.DataFrame":
    """The results of the sweeps stored in ``directory``: one row per core per run."""
    return ResultStore(directory).load()
