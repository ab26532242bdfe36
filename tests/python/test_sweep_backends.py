"""Backend choice without Ray installed (the error says how to install it), `--ray` against
`--jobs`, and alone runs shipped with a run (what lets Ray workers on other machines skip them)."""

from __future__ import annotations

import contextlib
import re
import sys
from pathlib import Path

import pytest

import memtint as memtint_api
from memtint import cli
from memtint.api import MemtintError
from memtint.sweep import parse_spec
from memtint.sweep.backends import WorkerError
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


class _FakeRay:
    """The part of Ray a RayBackend uses, in this process: tasks run when submitted; ``report``
    is what a worker's probe answers (None: the real one), ``cpus`` the cluster's CPUs."""

    def __init__(self, cpus=2, report=None, init_error=None):
        import types

        self.cpus, self.report, self.init_error = cpus, report, init_error
        self.initialized = init_error is None
        self.in_flight_seen: list[int] = []
        self.results: dict[int, object] = {}
        self.module = types.SimpleNamespace(
            is_initialized=lambda: self.initialized, init=self.init, shutdown=lambda: None,
            cluster_resources=lambda: {"CPU": self.cpus} if self.cpus else {}, remote=self.remote,
            wait=self.wait, get=self.get, cancel=lambda ref, force=False: None, nodes=lambda: [])

    def init(self, **options):
        raise self.init_error

    def remote(self, num_cpus=1):
        fake = self

        def wrap(fn):
            class Remote:
                def remote(self, *args):
                    ref = len(fake.results)
                    try:
                        out = fn(*args)
                        if fn.__name__ == "worker_identity" and fake.report is not None:
                            out = fake.report
                        fake.results[ref] = out
                    except Exception as error:
                        fake.results[ref] = error
                    return ref

                def options(self, **kw):
                    return self

            return Remote()

        return wrap

    def wait(self, refs, num_returns=1, timeout=None):
        self.in_flight_seen.append(len(refs))
        return refs[:num_returns], refs[num_returns:]

    def get(self, ref):
        out = self.results[ref]
        if isinstance(out, Exception):
            raise out
        return out


def _double(x):
    return 2 * x


@pytest.fixture
def fake_ray(monkeypatch):
    def install(**kw):
        fake = _FakeRay(**kw)
        monkeypatch.setitem(sys.modules, "ray", fake.module)
        return fake

    return install


def test_a_ray_node_with_another_memtint_is_refused_before_any_task(fake_ray):
    from memtint.sweep import ray_backend
    from memtint.sweep.runs import memtint_version

    fake_ray(report={"memtint": "0.0.0+other", "host": "node-3"})
    with pytest.raises(MemtintError, match=rf"\(node-3\): memtint 0\.0\.0\+other, not the sweep's {re.escape(memtint_version())}"):
        ray_backend.RayBackend("auto")
    fake_ray()  # this memtint on every node: accepted
    assert dict(ray_backend.RayBackend("auto").map_unordered(_double, [1, 2])) == {1: 2, 2: 4}


def test_a_ray_task_error_is_one_line_naming_what_to_do():
    from memtint.sweep.ray_backend import task_error_text

    class RayTaskError(Exception):
        def __init__(self, cause):
            super().__init__(str(cause))
            self.cause = cause

    # What Ray 2.x raises when the worker cannot unpickle the task's function (memtint not installed there).
    unimportable = RuntimeError(
        "The remote function failed to import on the worker. This may be because needed library dependencies are "
        "not installed in the worker environment or cannot be found from sys.path ['/srv']:\n\nTraceback (most "
        "recent call last):\n  File \"function_manager.py\", line 314, in fetch_and_register_remote_function\n"
        "    function = pickle.loads(serialized_function)\nModuleNotFoundError: No module named 'memtint'\n")
    text = task_error_text(RayTaskError(unimportable))
    assert "\n" not in text and "Traceback" not in text
    assert "cannot import memtint's task (ModuleNotFoundError: No module named 'memtint')" in text
    assert "every node needs memtint installed" in text
    remote = ValueError("bad value\nTraceback (most recent call last):\n  File \"x.py\", line 1\nValueError: bad value")
    assert task_error_text(RayTaskError(remote)) == "ValueError: bad value ... ValueError: bad value"
    assert task_error_text(RayTaskError(ValueError("math domain error"))) == "ValueError: math domain error"


def test_ray_connection_errors_say_why(fake_ray, monkeypatch):
    from memtint.sweep import ray_backend

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    try:
        try:
            raise RuntimeError("Failed to connect to GCS. Last connection error: Traceback (most recent call last):\n"
                               "  File \"node.py\"\nray.exceptions.AuthenticationError: RPC error: InvalidAuthToken: "
                               "Authentication token is missing or incorrect.\n")
        except RuntimeError as inner:
            raise ConnectionError("Failed to connect to Ray cluster at 10.0.0.1:6379") from inner
    except ConnectionError as error:
        outer = error
    fake_ray(init_error=outer)
    with pytest.raises(MemtintError) as raised:
        ray_backend.RayBackend("auto")
    assert str(raised.value).endswith("Failed to connect to Ray cluster at 10.0.0.1:6379: ray.exceptions."
                                      "AuthenticationError: RPC error: InvalidAuthToken: Authentication token is "
                                      "missing or incorrect.")


def test_ray_in_flight_tasks_follow_the_clusters_cpus(fake_ray, monkeypatch, capsys):
    from memtint.sweep import ray_backend

    monkeypatch.setattr(ray_backend, "RESIZE_EVERY", 0.0)
    fake = fake_ray(cpus=0)
    backend = ray_backend.RayBackend("auto")
    assert "the Ray cluster has no CPUs now" in capsys.readouterr().err
    assert (backend.slots, backend.max_in_flight) == (1, 2)

    def grow(x):
        fake.cpus = 8  # an autoscaler's nodes joined
        return x

    fake.in_flight_seen.clear()
    assert sorted(r for _, r in backend.map_unordered(grow, range(40))) == list(range(40))
    assert (backend.slots, backend.max_in_flight) == (8, 16)
    assert max(fake.in_flight_seen) == 16


class _Refusing:
    """A backend of ``slots`` workers that fails every task at once."""

    name = "refusing"

    def __init__(self, slots):
        self.slots = slots

    def map_unordered(self, fn, items):
        for item in items:
            yield item, WorkerError("not run")

    def close(self, kill=False):
        pass


def test_a_long_sweeps_estimate_is_over_the_backends_slots(tmp_path, monkeypatch, capsys):
    # A Ray cluster's CPUs, not the CPUs of the machine running the sweep.
    from memtint.limits import ANNOUNCE_SECONDS, sweep_seconds

    monkeypatch.setenv("MEMTINT_CACHE_DIR", str(tmp_path / "cache"))
    spec = {"machines": ["i7-860"], "policies": ["buddy", "bpm"], "instructions": 10_000_000_000, "warmup": 0,
            "mixes": [["stream", "light"]]}
    runs = [(2, 10_000_000_000, 0)] * 2
    assert sweep_seconds(runs, 1) > ANNOUNCE_SECONDS > sweep_seconds(runs, 1000)
    for slots, announced in ((1, True), (1000, False)):
        summary = memtint_api.sweep(spec, out=tmp_path / f"out-{slots}", backend=_Refusing(slots), progress=False)
        assert summary.failed == 2
        assert ("this sweep will take about" in capsys.readouterr().err) is announced


def _serve_once(reply: bytes):
    """A local port whose first connection gets ``reply`` (after reading what the client sends)."""
    import socket
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)

    def answer():
        connection, _ = server.accept()
        with connection:
            connection.recv(1024)
            connection.sendall(reply)
        server.close()

    threading.Thread(target=answer, daemon=True).start()
    return server.getsockname()[1]


def test_an_address_where_something_else_than_ray_answers_is_refused_at_once(fake_ray, monkeypatch):
    # ray.init retried such an address for minutes, with Ctrl-C unheard for half a minute at a time.
    import time

    from memtint.sweep import ray_backend

    monkeypatch.delenv("RAY_USE_TLS", raising=False)
    fake_ray(init_error=ConnectionError("ray.init was called"))
    port = _serve_once(b"HTTP/1.0 400 Bad request version\r\n\r\n")  # the dashboard, a web server
    started = time.perf_counter()
    with pytest.raises(MemtintError, match=rf"^cannot reach the Ray cluster at 127\.0\.0\.1:{port}: something answers "
                                           "there, but not as a Ray cluster does"):
        ray_backend.RayBackend(f"127.0.0.1:{port}")
    assert time.perf_counter() - started < 5
    with pytest.raises(MemtintError, match=r"http:// is not a cluster address .*head:6379"):
        ray_backend.RayBackend("http://127.0.0.1:8265")
    # A gRPC server (a cluster's GCS) answers with a SETTINGS frame: then Ray connects.
    port = _serve_once(bytes([0, 0, 0, 4, 0, 0, 0, 0, 0]))
    with pytest.raises(MemtintError, match=r"cannot start or reach Ray .*ray.init was called"):
        ray_backend.RayBackend(f"127.0.0.1:{port}")


@pytest.mark.engine
def test_a_reproduction_worker_that_reads_other_files_fails_the_run(tmp_path, monkeypatch):
    # `memtint reproduce --ray`: a node's other copy of a trace gave its figures (and entered the
    # run cache) under the planned files' key.
    from memtint import api
    from memtint.reproduce.runner import run_jobs

    trace, _ = _trace_sweep(tmp_path)
    spec = api.build_sim_spec("i7-860", [str(trace), "light"], instructions=20_000, policy="buddy", warmup=0)
    job = {"key": "k", "phase": "shared", "spec": spec}
    original = trace.read_bytes()

    @contextlib.contextmanager
    def other_copy():
        trace.write_bytes((REPO / "workloads/traces/bzip2.t1.mtt.gz").read_bytes())
        try:
            yield
        finally:
            trace.write_bytes(original)

    with pytest.raises(MemtintError, match=rf"1 run\(s\) failed; first: .*{re.escape(str(trace))} on this worker "
                                           r"\(.*\) is not what the reproduction read"):
        run_jobs([job], backend=_InProcess(other_copy), progress=False)
    assert run_jobs([job], backend=_InProcess(contextlib.nullcontext), progress=False)["k"]["cores"]


@pytest.mark.engine
def test_a_reproduction_worker_with_another_memtint_fails_the_run(tmp_path, monkeypatch):
    # `memtint reproduce --ray`: a node with another memtint ran its jobs and its results were kept
    # under the planner's version.
    from memtint import api
    from memtint.reproduce.runner import run_jobs
    from memtint.sweep import runs

    spec = api.build_sim_spec("i7-860", ["stream", "light"], instructions=20_000, policy="buddy", warmup=0)
    planned = runs.memtint_version()

    @contextlib.contextmanager
    def other_memtint():
        with monkeypatch.context() as m:
            m.setattr(runs, "memtint_version", lambda: "0.0.0+other")
            yield

    with pytest.raises(MemtintError, match=rf"runs memtint 0\.0\.0\+other, the reproduction memtint {re.escape(planned)}"):
        run_jobs([{"key": "k", "phase": "shared", "spec": spec}], backend=_InProcess(other_memtint), progress=False)


# Ray's driver prints the raylet's error messages on sys.stdout, from a thread of its own, with
# colour codes whatever stdout is (ray._private.worker.listen_error_messages).
RAYLET_LINE = ("\x1b[33m(raylet)\x1b[0m A worker died or was killed while executing a task by an unexpected system "
               "error.\n\x1b[33m(raylet)\x1b[0m Task execute_run failed. Error: \x1b[32m [repeated 2x across cluster]"
               "\x1b[0m")


def _printing_as_ray_does():
    """Print RAYLET_LINE as Ray's driver does: from another thread, on sys.stdout as it is then."""
    import threading

    printer = threading.Thread(target=lambda: print(RAYLET_LINE, file=sys.stdout))
    printer.start()
    printer.join()


@pytest.mark.engine
def test_what_ray_prints_in_a_sweep_goes_to_stderr_in_plain_text_and_stdout_keeps_the_table(fake_ray, tmp_path,
                                                                                             capsys):
    fake = fake_ray()
    wait = fake.module.wait

    def wait_while_ray_prints(refs, **kw):
        _printing_as_ray_does()
        return wait(refs, **kw)

    fake.module.wait = wait_while_ray_prints
    spec = write(tmp_path, 'name = "s"\nmachines = ["ddr4-2400"]\npolicies = ["buddy"]\ninstructions = 20000\n'
                           'warmup = 0\ncache = false\n[[mixes]]\nprograms = ["stream"]\n')
    code = cli.main(["sweep", str(spec), "--out", str(tmp_path / "out"), "--no-report", "--ray", "auto"])
    print("after the command")
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "sweep s" in out and "1 run(s) done (0 failed)" in out and "after the command" in out
    assert "(raylet)" not in out and "\x1b" not in out, out
    assert "(raylet) A worker died" in err and "[repeated 2x across cluster]" in err and "\x1b" not in err, err


def test_what_ray_prints_in_a_reproduction_goes_to_stderr_in_plain_text(tmp_path, capsys, monkeypatch):
    import memtint.reproduce as reproduce_module

    def reproduce(*args, ray=None, **kw):
        assert ray == "auto"
        _printing_as_ray_does()
        return []

    monkeypatch.setattr(reproduce_module, "reproduce", reproduce)
    monkeypatch.setitem(sys.modules, "ray", type(sys)("ray"))  # importable: the command checks for Ray first
    code = cli.main(["reproduce", "camc", "--quick", "--out", str(tmp_path / "out"), "--no-cache", "--ray", "auto"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "paper vs memtint" in out and "(raylet)" not in out and "\x1b" not in out, out
    assert "(raylet) A worker died" in err and "\x1b" not in err, err


def test_ray_is_started_with_its_warnings_but_not_its_info_lines(fake_ray):
    import logging

    from memtint.sweep import ray_backend

    fake = fake_ray()
    fake.initialized, seen = False, []

    def init(**options):
        seen.append(options)
        fake.initialized = True

    fake.module.init = init
    ray_backend.RayBackend("auto").close()
    assert seen[-1] == {"log_to_driver": False, "logging_level": logging.WARNING}
    fake.initialized = False
    ray_backend.RayBackend("auto", init_options={"logging_level": logging.DEBUG, "log_to_driver": True}).close()
    assert seen[-1] == {"log_to_driver": True, "logging_level": logging.DEBUG}  # the caller's choice
