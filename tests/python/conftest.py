"""Fixtures for the memtint command and API tests.

Tests marked `engine` need the DRAM simulation (`memtint_engine::dram_sim::run_json`); they are
real tests, not skipped: they fail when the engine is missing or broken. `-m "not engine"`
selects the rest.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Callable

import pytest

CliResult = tuple[int, str, str]


@pytest.fixture
def memtint(tmp_path) -> Callable[..., CliResult]:
    """Run the `memtint` command as a subprocess; returns (exit code, stdout, stderr)."""

    def run(*args: str, timeout: float = 300) -> CliResult:
        env = dict(os.environ, COLUMNS="200", PYTHONIOENCODING="utf-8")
        env.pop("MEMTINT_DEBUG", None)
        completed = subprocess.run(
            [sys.executable, "-m", "memtint.cli", *map(str, args)],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
        )
        return completed.returncode, completed.stdout, completed.stderr

    return run


def assert_clean_error(result: CliResult, *needles: str) -> str:
    """Exit status 2, one `memtint: error:` line naming the problem, no traceback or panic."""
    code, _, stderr = result
    assert "Traceback" not in stderr, stderr
    assert "panicked" not in stderr, stderr
    assert code == 2, f"exit status {code}, stderr: {stderr}"
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("memtint: error: "), stderr
    for needle in needles:
        assert needle in lines[0], f"{needle!r} not in {lines[0]!r}"
    return lines[0]


@pytest.fixture
def clean_error() -> Callable[..., str]:
    return assert_clean_error


@pytest.fixture
def make(tmp_path) -> Callable[..., subprocess.CompletedProcess]:
    """Run `make` in the repository as a user would (not as a child of the `make test` that runs
    pytest); `rustc=` lines make a stand-in `rustc -vV` that prints them, first on PATH."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

    def run(*args: str, rustc: list[str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
        env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS", "MAKEOVERRIDES")}
        if rustc is not None:
            fake = tmp_path / "bin"
            fake.mkdir(exist_ok=True)
            (fake / "rustc").write_text("#!/bin/sh\n" + "".join(f"echo '{line}'\n" for line in rustc))
            (fake / "rustc").chmod(0o755)
            env["PATH"] = f"{fake}{os.pathsep}{env['PATH']}"
        return subprocess.run(["make", "--no-print-directory", *args], cwd=root, capture_output=True, text=True,
                              env=env, timeout=timeout)

    return run
