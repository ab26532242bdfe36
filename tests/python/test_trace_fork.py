"""A capture whose traces do not read back fails with them removed (a child forked without exec
runs on under the Valgrind tool and writes into its parent's traces). Needs valgrind and the tool:
skipped with the reason without them."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memtint.api import MemtintError
from memtint.capture import TOOL_FILE, capture_trace, tool_lib_dir

try:
    tool_lib_dir()
    HAVE_TOOL = shutil.which("valgrind") is not None and shutil.which(os.environ.get("CC", "gcc")) is not None
except MemtintError:
    HAVE_TOOL = False
pytestmark = pytest.mark.skipif(not HAVE_TOOL, reason=f"valgrind, gcc or the memtint-trace tool ({TOOL_FILE}) is "
                                                      "missing: apt-get install valgrind gcc; make build")

FORKER = r"""
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>
int main(int argc, char **argv) {
    size_t n = 2 << 20;
    volatile char *p = malloc(n);
    for (size_t i = 0; i < n; i += 64) p[i] = 1;
    if (argc > 1) {  /* a worker process that does not exec */
        pid_t c = fork();
        if (c == 0) { for (size_t i = 0; i < n; i += 64) p[i] += 1; _exit(0); }
        waitpid(c, 0, 0);
    }
    for (size_t i = 0; i < n; i += 64) p[i] += 2;
    return 0;
}
"""


@pytest.fixture(scope="module")
def forker(tmp_path_factory) -> str:
    directory = tmp_path_factory.mktemp("forker")
    (directory / "forker.c").write_text(FORKER)
    out = str(directory / "forker")
    subprocess.run([os.environ.get("CC", "gcc"), "-O1", "-o", out, str(directory / "forker.c")], check=True)
    return out


def test_a_child_forked_without_exec_fails_the_capture_and_leaves_no_trace(forker: str, tmp_path: Path) -> None:
    with pytest.raises(MemtintError) as raised:
        capture_trace([forker, "fork"], tmp_path / "f", stdout=subprocess.DEVNULL)
    message = str(raised.value)
    assert message.startswith("capture failed: a trace does not read back: ") and str(tmp_path / "f.t1.mtt") in message
    assert "forked without exec" in message and "the traces were removed" in message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.valgrind.log"]
    # The command: one error line, exit 2.
    run = subprocess.run([sys.executable, "-m", "memtint.cli", "trace", "-o", str(tmp_path / "g"), "--", forker, "fork"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and run.stderr.startswith("memtint: error: capture failed") and run.stderr.count("\n") == 1
    # Without the fork, the same program captures and reads back.
    summary = capture_trace([forker], tmp_path / "h", stdout=subprocess.DEVNULL)
    assert summary["threads"][0]["records"] > 2 * (2 << 20) // 64
