"""A child forked without exec runs on under the Valgrind tool: it must run untraced and write
nothing into its parent's traces (it once wrote its records and header there), and the capture
says so. Needs valgrind and the tool: skipped with the reason without them."""
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


def test_a_child_forked_without_exec_runs_untraced_and_the_parents_trace_reads_back(forker: str, tmp_path: Path) -> None:
    from memtint import api

    forked = capture_trace([forker, "fork"], tmp_path / "f", stdout=subprocess.DEVNULL)
    alone = capture_trace([forker], tmp_path / "h", stdout=subprocess.DEVNULL)
    # The parent's own work: its records the same with or without the child, and in its file.
    assert forked["threads"][0]["records"] > 2 * (2 << 20) // 64
    assert abs(forked["threads"][0]["records"] - alone["threads"][0]["records"]) < 1000, (forked, alone)
    assert api.cpu_trace_stats(forked["files"][0])["records"] == forked["threads"][0]["records"]
    assert len(forked["untraced_children"]) == 1 and alone["untraced_children"] == []
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("f.")) == \
        ["f.summary.json", "f.t1.mtt", "f.valgrind.log"]
    # The command: the trace kept, a warning naming the child.
    run = subprocess.run([sys.executable, "-m", "memtint.cli", "trace", "-o", str(tmp_path / "g"), "--", forker, "fork"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert f"memtint: warning: {forker} forked 1 child process(es) without exec (pid " in run.stderr, run.stderr
    assert "they ran untraced" in run.stderr


def test_a_trace_that_does_not_read_back_fails_the_capture_with_the_traces_removed(tmp_path: Path) -> None:
    from memtint import capture

    trace = tmp_path / "f.t1.mtt"
    (tmp_path / "f.summary.json").write_text("{}")
    capture_trace_check = capture._check_traces_read_back
    trace.write_bytes(b"MTT1" + bytes(28) + b"garbage")  # a header and bytes that decode to nothing
    with pytest.raises(MemtintError) as raised:
        capture_trace_check({"threads": [{"file": str(trace), "records": 5}]}, str(tmp_path / "f"),
                            "==1== x\n==2== y\n", str(tmp_path / "f.summary.json"))
    message = str(raised.value)
    assert message.startswith("capture failed: a trace does not read back: ") and str(trace) in message, message
    assert "the log shows 2 processes (pids 1, 2)" in message and message.endswith("the traces were removed")
    assert not trace.exists() and not (tmp_path / "f.summary.json").exists()
