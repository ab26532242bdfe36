"""Backend choice without Ray installed (the error says how to install it), `--ray` against
`--jobs`, and alone runs shipped with a run (what lets Ray workers on other machines skip them)."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import pytest

import memtint as memtint_api
from memtint import cli
from memtint.api import MemtintError
from memtint.sweep import parse_spec
from memtint.sweep.runs import alone_keys, execute_run, expand

from test_sweep import SPEC_TOML, write

REPO = Path(__file__).resolve().parents[2]
HINT = "Ray is not installed: pip install 'memtint[ray]'"


@pytest.fixture
def no_ray(monkeypatch):
    """As if Ray were not installed: `import ray` raises ImportError."""
    monkeypatch.setitem(sys.modules, "ray", None)


def test_missing_ray_is_a_one_line_error_before_anything_runs(no_ray, tmp_path, capsys, clean_error):
    spec = write(tmp_path, SPEC_TOML)
    code = cli.main(["sweep", str(spec), "--out", str(tmp_path / "out"), "--ray", "auto"])
    captured = capsys.readouterr()
    assert clean_error((code, captured.out, captured.err), HINT) == f"memtint: error: {HINT}"
    assert not (tmp_path / "out").exists()

    with pytest.raises(MemtintError, match=r"^Ray is not installed: pip install 'memtint\[ray\]'$"):
        memtint_api.sweep(spec, out=tmp_path / "out", ray="10.0.0.1:6379", progress=False)
    assert not (tmp_path / "out").exists()


def test_ray_and_jobs_are_exclusive(memtint, tmp_path):
    spec = write(tmp_path, SPEC_TOML)
    code, _, err = memtint("sweep", spec, "--out", tmp_path / "out", "--jobs", "2", "--ray", "auto")
    assert code == 2 and "not allowed with argument" in err and "Traceback" not in err
    with pytest.raises(MemtintError, match="either ray or jobs"):
        memtint_api.sweep(spec, out=tmp_path / "out", jobs=2, ray="auto", progress=False)
    assert not (tmp_path / "out").exists()


@pytest.mark.engine
def test_shipped_alone_runs_are_used_as_they_are(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMTINT_CACHE_DIR", str(tmp_path / "cache"))
    run = expand(parse_spec({"machines": ["i7-860"], "policies": ["bpm"], "instructions": 20_000,
                             "mixes": [["stream", "light"]]}))[0]
    keys = list(alone_keys(run))
    fake = {"ipc": 0.5, "row_buffer_miss_rate": 0.25}
    item = dict(run.describe(), alone={key: dict(fake, ipc=0.5 + i) for i, key in enumerate(keys)})
    outcome = execute_run(item)
    assert outcome["status"] == "ok", outcome["error"]
    cores = outcome["result"]["policies"][0]["cores"]
    assert [c["ipc_alone"] for c in cores] == [0.5, 1.5]
    assert [c["row_buffer_miss_rate_alone"] for c in cores] == [0.25, 0.25]
    assert not (tmp_path / "cache").exists()  # no alone run computed or stored by the worker


class _LossyRay:
    """Ray's cancel and wait, where the first cancel of a task that a worker is about to start
    is lost (Ray issues #24359, #52703); `stuck` tasks never end."""

    def __init__(self, lost: set[str], stuck: set[str] = frozenset()) -> None:
        self.lost, self.stuck = set(lost), set(stuck)
        self.cancels: list[str] = []
        self.ended: set[str] = set()

    def cancel(self, ref: str, force: bool) -> None:
        assert force
        self.cancels.append(ref)
        if ref in self.lost:
            self.lost.discard(ref)
        elif ref not in self.stuck:
            self.ended.add(ref)

    def wait(self, refs: list[str], num_returns: int, timeout: float):
        assert num_returns == len(refs) and timeout <= 1
        return [r for r in refs if r in self.ended], [r for r in refs if r not in self.ended]


def test_a_lost_ray_cancel_is_sent_again_within_a_bounded_time():
    from memtint.sweep import ray_backend

    backend = ray_backend.RayBackend.__new__(ray_backend.RayBackend)
    backend._ray = fake = _LossyRay(lost={"b"})
    pending = {"a": 1, "b": 2}
    backend._cancel(pending)
    assert not pending and fake.ended == {"a", "b"} and fake.cancels == ["a", "b", "b"]
    # A task that never ends: the rounds are bounded (a signal's handling stays within the second).
    backend._ray = fake = _LossyRay(lost=set(), stuck={"c"})
    backend._cancel({"c": 3})
    assert fake.cancels == ["c"] * ray_backend.CANCEL_ROUNDS
    assert ray_backend.CANCEL_ROUNDS * ray_backend.CANCEL_WAIT <= 1.0
    backend._ray = fake = _LossyRay(lost=set())
    backend._cancel({})
    assert fake.cancels == []


class _InProcess:
    """A backend running each task in this process with ``on_worker`` entered around it: what a
    Ray node whose files differ from the sweep machine's looks like to the runner."""

    name = "in-process"
    slots = 1

    def __init__(self, on_worker):
        self.on_worker = on_worker

    def map_unordered(self, fn, items):
        for item in items:
            with self.on_worker():
                result = fn(item)
            yield item, result

    def close(self, kill=False):
        pass


def _trace_sweep(tmp_path):
    trace = tmp_path / "trace.mtt.gz"
    trace.write_bytes((REPO / "workloads/traces/chase.t1.mtt.gz").read_bytes())
    spec = {"name": "files", "machines": ["i7-860"], "policies": ["buddy"], "instructions": 20_000, "warmup": 0,
            "mixes": [[str(trace), "light"]]}
    return trace, spec


@pytest.mark.engine
@pytest.mark.parametrize("change", ["other copy", "missing"])
def test_a_worker_that_reads_other_files_than_the_sweep_fails_its_runs(tmp_path, monkeypatch, change):
    # A Ray node with another copy of a trace at the same path (or none) simulated it and stored
    # its result under the configuration hash of the sweep machine's file, and its alone runs
    # entered the sweep machine's alone cache under the other file's key.
    monkeypatch.setenv("MEMTINT_CACHE_DIR", str(tmp_path / "cache"))
    trace, spec = _trace_sweep(tmp_path)

    original = trace.read_bytes()

    @contextlib.contextmanager
    def worker_files():
        if change == "missing":
            trace.unlink()
        else:
            trace.write_bytes((REPO / "workloads/traces/bzip2.t1.mtt.gz").read_bytes())
        try:
            yield
        finally:
            trace.write_bytes(original)

    trace_key, light_key = alone_keys(expand(parse_spec(spec))[0])
    summary = memtint_api.sweep(spec, out=tmp_path / "out", backend=_InProcess(worker_files), progress=False)
    assert (summary.done, summary.failed, summary.alone_runs) == (1, 1, 2)
    error = next(iter(summary.errors.values()))
    expected = "no such file on this worker" if change == "missing" else "is not what the sweep read"
    assert error.startswith(f"programs[0]: {trace}") and expected in error, error
    # The trace's alone run failed too, so the sweep machine's cache holds only the profile's.
    assert {p.stem for p in (tmp_path / "cache").glob("alone/*.json")} == {light_key}
    assert trace_key != light_key
    frame = memtint_api.load_results(tmp_path / "out")
    assert (frame["status"] == "failed").all()


@pytest.mark.engine
def test_a_worker_with_another_memtint_fails_its_runs(tmp_path, monkeypatch):
    from memtint.sweep import runs

    monkeypatch.setenv("MEMTINT_CACHE_DIR", str(tmp_path / "cache"))
    run = expand(parse_spec({"machines": ["i7-860"], "policies": ["bpm"], "instructions": 20_000,
                             "mixes": [["stream", "light"]]}))[0]
    sweep_version = runs.memtint_version()
    task = runs.alone_tasks([run])[0]
    monkeypatch.setattr(runs, "memtint_version", lambda: "0.0.0+other")
    message = f"runs memtint 0.0.0+other, the sweep memtint {sweep_version}"
    outcome = execute_run(run.describe())
    assert outcome["status"] == "failed" and outcome["result"] is None and message in outcome["error"]
    alone = runs.execute_alone({"key": task.key, "spec": task.spec, "identity": task.identity})
    assert alone["status"] == "failed" and message in alone["error"]
    assert not (tmp_path / "cache").exists()  # nothing simulated
