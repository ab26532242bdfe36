"""Ctrl-C and SIGTERM stop every long command within a second or two, kill its workers, keep
what was complete (a sweep's store resumes) and exit 130 / 143 (issue: robustness)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest


def process_group(pgid: int, field: int = 2) -> list[int]:
    """Processes still in process group `pgid` (or session, `field` 3; zombies not counted)."""
    from memtint.linux.inspect import process_stats

    return [pid for pid, fields in process_stats() if fields[0] != "Z" and int(fields[field]) == pgid]


def interrupt(args: list[str], signum: int, cwd, after: float = 3.0, env: dict | None = None,
              settle: float = 3.0, group: bool = False, when=None) -> tuple[int, float, str]:
    """Start `memtint ARGS` in its own process group, send `signum` to memtint alone (or, with
    ``group``, to the whole group, as a terminal's Ctrl-C does) after `after` seconds, or as soon
    as ``when()`` holds (a state the run reaches, so a fast host does not finish first); return
    its exit status, seconds from the signal to its exit, and stderr."""
    proc = subprocess.Popen([sys.executable, "-m", "memtint.cli", *args], cwd=cwd, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, **(env or {})))
    if when is None:
        time.sleep(after)
    else:
        deadline = time.monotonic() + 60
        while not when() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
    assert proc.poll() is None, f"memtint ended before the signal: {proc.stderr.read()}"
    sent = time.monotonic()
    if group:
        os.killpg(proc.pid, signum)
    else:
        proc.send_signal(signum)
    try:
        code = proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    took = time.monotonic() - sent
    # Nothing of memtint's is left behind: no worker, no tracker, no child (Ray puts its workers
    # in process groups of their own, within memtint's session).
    deadline = time.monotonic() + settle
    while process_group(proc.pid, 3) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert process_group(proc.pid, 3) == [], f"left behind: {process_group(proc.pid, 3)}"
    return code, took, proc.stderr.read()


@pytest.mark.engine
@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_compare_stops_at_once(tmp_path, signum, status):
    # It used to ignore Ctrl-C until its simulations ended.
    code, took, err = interrupt(["compare", "--machine", "i7-860", "--mix", "stream,copy", "--instructions",
                                 "2000000000", "--warmup", "0", "--no-cache"], signum, tmp_path)
    assert code == status and took < 2.5, (code, took, err)
    assert "memtint: " in err and ("interrupted" in err or "terminated" in err)


@pytest.mark.engine
def test_dram_stops_at_once(tmp_path):
    code, took, err = interrupt(["dram", "--machine", "ddr4-2400", "--generate", "random", "--requests",
                                 "100000000000"], signal.SIGINT, tmp_path)
    assert code == 130 and took < 2.5, (code, took, err)


@pytest.mark.engine
@pytest.mark.parametrize("existed", [False, True])
def test_dram_stopped_leaves_no_export_directory_it_made(tmp_path, existed):
    # The export's files went with a stop, but the directory memtint made was left, empty.
    export = tmp_path / "dp"
    if existed:
        export.mkdir()  # the user's own empty directory stays
    code, took, err = interrupt(["dram", "--machine", "ddr4-2400", "--generate", "random", "--requests",
                                 "100000000000", "--export-drampower", "dp"], signal.SIGINT, tmp_path,
                                when=None if existed else export.is_dir)
    assert code == 130, (code, took, err)
    assert export.is_dir() == existed and (not existed or not any(export.iterdir())), list(tmp_path.iterdir())


@pytest.mark.engine
def test_sim_stops_at_once_and_leaves_no_temporary_output(tmp_path):
    run = tmp_path / "run.toml"
    run.write_text('machine = "i7-860"\nprograms = ["stream", "copy"]\ninstructions = 2000000000\n')
    code, took, err = interrupt(["sim", str(run), "--export-dram", "stream.txt", "--export-format", "ramulator"],
                                signal.SIGTERM, tmp_path)
    assert code == 143 and took < 2.5, (code, took, err)
    # The export was being written into a temporary file beside it: removed, not left half-full.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.toml"]


@pytest.mark.engine
def test_convert_stopped_leaves_no_temporary_output(tmp_path):
    # The engine writes the conversion into .NAME.PID-N.part beside it; a stop removes that too.
    trace = os.path.join(os.path.dirname(__file__), "..", "..", "workloads", "traces", "bfs.t1.mtt.gz")
    code, took, err = interrupt(["convert", "--to", "ramulator", trace, "bfs.txt.gz"], signal.SIGINT, tmp_path,
                                when=lambda: any(p.name.endswith(".part") for p in tmp_path.iterdir()))
    assert code == 130, (code, took, err)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.engine
@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_sweep_stops_kills_its_workers_and_resumes(tmp_path, signum, status):
    # It used to leave its pool workers and the resource tracker running.
    spec = tmp_path / "s.toml"
    spec.write_text('name = "s"\nmachines = ["ddr4-2400"]\npolicies = ["buddy"]\ninstructions = [20000, 3000000000]\n'
                    "warmup = 0\ncache = false\n[[mixes]]\nprograms = [\"stream\"]\n")
    code, took, err = interrupt(["sweep", str(spec), "--out", str(tmp_path / "out"), "--jobs", "2",
                                 "--batch-size", "1"], signum, tmp_path, after=8.0)
    assert code == status and took < 2.5, (code, took, err)
    import memtint

    # The short run finished before the signal and is kept; the long one is left to resume.
    stored = memtint.load_results(tmp_path / "out")
    assert set(stored["instructions"]) == {20000}, stored[["instructions", "status"]]


@pytest.mark.engine
def test_a_ctrl_c_to_the_whole_group_ends_a_sweep_with_one_line(tmp_path):
    # Its pool workers printed KeyboardInterrupt tracebacks, and the resource tracker a warning
    # of leaked semaphores, after "memtint: interrupted".
    spec = tmp_path / "s.toml"
    spec.write_text('name = "s"\nmachines = ["ddr4-2400"]\npolicies = ["buddy"]\ninstructions = [20000, 3000000000]\n'
                    "warmup = 0\ncache = false\nmixes = [[\"stream\"]]\n")  # the short run's worker then waits
    code, took, err = interrupt(["sweep", str(spec), "--out", str(tmp_path / "out"), "--jobs", "2"], signal.SIGINT,
                                tmp_path, after=6.0, group=True)
    assert code == 130 and took < 2.5, (code, took, err)
    assert [line for line in err.splitlines() if not line.startswith("memtint: ")] == [], err
    assert err.rstrip().endswith("memtint: interrupted"), err


@pytest.mark.skipif(os.geteuid() != 0, reason="colouring a program's heap needs root (CI runs as root)")
@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_run_passes_the_signal_to_its_program_and_leaves_nothing(tmp_path, signum, status):
    code, took, err = interrupt(["run", "--colors", "0-31", "--", "sleep", "60"], signum, tmp_path, after=2.0)
    assert code == status and took < 2.5, (code, took, err)


@pytest.mark.parametrize("step", ["probe", "write"])
def test_a_stop_as_an_output_file_is_made_leaves_no_file(tmp_path, monkeypatch, step):
    # check_outputs creates each new output and removes it, and write_text makes a file beside
    # its output before registering it for removal; a stop that came as the create returned ran
    # before the removal or the registration and left a file behind (`memtint trace`'s thread
    # trace by its own name, 1 time in 30 under load). The stop now waits for both.
    from memtint import outputs, stopping

    for name in ("_installed", "_stopping", "_pending"):
        monkeypatch.setattr(stopping, name, getattr(stopping, name))
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    if step == "probe":
        close = os.close

        def stop_then_close(fd: int) -> None:  # the stop lands between the create and the unlink
            signal.raise_signal(signal.SIGTERM)
            close(fd)
        monkeypatch.setattr(outputs.os, "close", stop_then_close)
        act = lambda: outputs._probe_creatable("-o", str(tmp_path / "t.t1.mtt"))  # noqa: E731
    else:
        mkstemp = outputs.tempfile.mkstemp

        def make_then_stop(*args, **kwargs):  # the stop lands as the file beside exists
            made = mkstemp(*args, **kwargs)
            signal.raise_signal(signal.SIGTERM)
            return made
        monkeypatch.setattr(outputs.tempfile, "mkstemp", make_then_stop)
        act = lambda: outputs.write_text("--out", str(tmp_path / "report.md"), "text")  # noqa: E731
    try:
        stopping.install()
        with pytest.raises(stopping.Stopped) as stop, stopping.raising():
            act()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    assert stop.value.signum == signal.SIGTERM
    assert list(tmp_path.iterdir()) == []


def _can_trace() -> bool:
    import shutil

    try:
        from memtint.capture import tool_lib_dir

        tool_lib_dir()
    except Exception:
        return False
    return shutil.which("valgrind") is not None


@pytest.mark.skipif(not _can_trace(), reason="valgrind or the memtint-trace tool is missing (apt-get install valgrind)")
@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_trace_kills_the_traced_program(tmp_path, signum, status):
    # The traced program runs under Valgrind, a child of memtint: it must not outlive it.
    # Its thread trace, begun, is removed: a trace is whole or absent.
    code, took, err = interrupt(["trace", "-o", str(tmp_path / "t"), "--", "sleep", "60"], signum, tmp_path,
                                when=lambda: list(tmp_path.glob("t.t*.mtt")))
    assert code == status and took < 2.5, (code, took, err)
    assert not list(tmp_path.glob("t.t*.mtt")), list(tmp_path.glob("*"))


@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_ray_sweep_stops_and_takes_its_local_cluster_down(tmp_path, signum, status):
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'memtint[ray]'); CI runs this test")
    spec = tmp_path / "s.toml"
    spec.write_text('name = "s"\nmachines = ["ddr4-2400"]\npolicies = ["buddy"]\ninstructions = [20000, 3000000000]\n'
                    "warmup = 0\ncache = false\n[[mixes]]\nprograms = [\"stream\"]\n")
    # Ray's own start-up takes seconds; shutting its local cluster down takes a few more.
    code, took, err = interrupt(["sweep", str(spec), "--out", str(tmp_path / "out"), "--ray", "auto", "--batch-size", "1"],
                                signum, tmp_path, after=25.0, env={"RAY_ADDRESS": ""}, settle=10.0)
    assert code == status and took < 10, (code, took, err[-2000:])
    # memtint's own message last; of Ray's, no INFO line and nothing its workers' ends made it print.
    own = "memtint: interrupted" if signum == signal.SIGINT else "memtint: terminated"
    assert err.rstrip().endswith(own), err[-2000:]
    assert " INFO " not in err and "(raylet)" not in err and "\x1b" not in err, err[-2000:]
