"""`make`'s toolchain check: a Rust older than the locked dependencies need is refused with the
version memtint needs, before cargo fails on the lock file with a message about its format."""

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _env_without_make():
    # Run make as a user would, not as a child of the `make test` that runs pytest.
    return {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS", "MAKEOVERRIDES")}


def _make_with_rustc(tmp_path, version_line):
    """`make toolchain` with a stand-in `rustc` that prints `version_line` first on PATH."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "rustc").write_text(f"#!/bin/sh\necho '{version_line}'\n")
    (fake / "rustc").chmod(0o755)
    env = _env_without_make()
    env["PATH"] = f"{fake}{os.pathsep}{env['PATH']}"
    return subprocess.run(["make", "--no-print-directory", "toolchain"], cwd=ROOT, capture_output=True,
                          text=True, env=env, timeout=60)


def test_an_old_rust_is_refused_with_the_version_it_needs(tmp_path):
    done = _make_with_rustc(tmp_path, "rustc 1.75.0 (82e1608df 2023-12-21)")
    assert done.returncode != 0
    assert "memtint needs Rust >= 1.88, found rustc 1.75.0" in done.stdout + done.stderr


def test_a_new_enough_rust_passes_the_toolchain_check(tmp_path):
    # 1.100 sorts after 1.88 as a version, not as text.
    done = _make_with_rustc(tmp_path, "rustc 1.100.0 (0000000 2030-01-01)")
    assert done.returncode == 0, done.stdout + done.stderr
