"""The workload suite's captures live under the cache root the alone-run and reproduce caches share
($MEMTINT_CACHE_DIR, default ~/.cache/memtint), in its own ``workloads`` directory."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from memtint import api, comparison, workloads
from memtint.api import MemtintError


def test_the_suite_cache_is_a_directory_of_the_cache_root(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MEMTINT_CACHE_DIR", str(tmp_path))
    assert workloads.cache_dir() == os.path.join(str(tmp_path), "workloads")
    assert Path(workloads.cache_dir()).parent == comparison.cache_dir()
    monkeypatch.delenv("MEMTINT_CACHE_DIR")
    assert workloads.cache_dir() == os.path.join(os.path.expanduser("~"), ".cache", "memtint", "workloads")


def test_a_suite_program_without_a_committed_trace_is_looked_for_there(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MEMTINT_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(workloads, "committed_traces", lambda name: [])
    with pytest.raises(MemtintError, match=f"none captured in {tmp_path / 'workloads'}"):
        workloads.trace_path("bfs")
    (tmp_path / "workloads" / "bfs").mkdir(parents=True)
    text = tmp_path / "t.txt"
    text.write_text("3 4096\n3 8192\n")
    api.convert_trace(text, tmp_path / "workloads" / "bfs" / "trace.t1.mtt")
    assert workloads.trace_path("bfs") == str(tmp_path / "workloads" / "bfs" / "trace.t1.mtt")
