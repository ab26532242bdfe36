"""The Linux commands (`memtint run`, `run-mix`, `inspect`) against bad or unusual input: reports
into devices, FIFOs and symlinks, outputs that cannot be written, colour and CPU ranges far
beyond the machine, statically linked programs, pages the kernel moved, zombies. Each refusal is
one line, exits 2, happens before any program runs, and leaves every input as it was (content,
file type and inode)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import threading
import time

import pytest

from memtint.linux import native
from memtint.linux.errors import LinuxError

ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not ROOT, reason="reading frame numbers needs root or CAP_SYS_ADMIN (CI runs as root)")
PYTHON = shutil.which("python3") or sys.executable
CLI = [sys.executable, "-m", "memtint.cli"]


def _library_built() -> bool:
    try:
        native.library_path()
        return True
    except LinuxError:
        return False


needs_library = pytest.mark.skipif(not _library_built(), reason="libmemtint is not built (make build)")


def cli(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "COLUMNS": "200", **(env or {})}, stdin=subprocess.DEVNULL)


def snapshot(path) -> tuple:
    """What an input must keep: its type, inode, device number and content (through a symlink)."""
    st = os.stat(path)
    content = open(path, "rb").read() if stat.S_ISREG(st.st_mode) else None
    return stat.S_IFMT(os.lstat(path).st_mode), stat.S_IFMT(st.st_mode), st.st_ino, st.st_rdev, content


def refused(r: subprocess.CompletedProcess, message: str) -> None:
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert message in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    errors = [line for line in r.stderr.splitlines() if line.startswith("memtint: error:")]
    assert len(errors) == 1 and errors[0] == r.stderr.strip().splitlines()[-1], r.stderr


# ---- 2. colour and CPU ranges are checked before they are expanded ----------------------------

@pytest.mark.parametrize("args, message", [
    (["run", "--colors", "0-4294967296", "--", "true"],
     "colours 32-4294967296 do not exist: the bank colour space of i7-860 has 32 colours (0-31)"),
    (["run", "--colors", "7,4294967296", "--", "true"],
     "colour 4294967296 does not exist: the bank colour space of i7-860 has 32 colours (0-31)"),
    (["run", "--colors", "0-3", "--cpus", "0-4294967296", "--", "true"], "CPUs "),
    (["run-mix", "--cpus", "0-4294967296", "--", "true", ":::", "true"], "CPUs "),
])
def test_huge_ranges_are_refused_at_once(args, message):
    started = time.monotonic()
    r = cli(*args, timeout=60)  # it used to run until memory ran out
    refused(r, message)
    assert time.monotonic() - started < 30
    if "--cpus" in args:
        assert f"-4294967296 do not exist: this machine has {os.sysconf('SC_NPROCESSORS_CONF')} CPUs" in r.stderr


