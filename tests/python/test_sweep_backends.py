"""Backend choice without Ray installed (the error says how to install it), `--ray` against
`--jobs`, and alone runs shipped with a run (what lets Ray workers on other machines skip them)."""

from __future__ import annotations

import sys

import pytest

import memtint as memtint_api
from memtint import cli
from memtint.api import MemtintError
from memtint.sweep import parse_spec
from memtint.sweep.runs import alone_keys, execute_run, expand

from test_sweep import SPEC_TOML, write

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
