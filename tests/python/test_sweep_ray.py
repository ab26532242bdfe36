"""The Ray backend: the same sweep on a local Ray (started here, 2 CPUs) stores exactly what the
local process pool stores; alone runs flow back to the driver and are shipped with the runs.

Ray is optional: without it this module is skipped, with the reason, unless $CI is set (CI
installs Ray, `make venv` with CI=1), where its absence is a failure.
"""

from __future__ import annotations

import math
import os
import re
import signal
import subprocess
import sys
import time

import pytest

try:
    import ray
except ImportError:
    if os.environ.get("CI"):
        pytest.fail("CI is set but Ray is not installed (make test-python installs it when CI is set)", pytrace=False)
    pytest.skip("Ray is not installed (pip install 'memtint[ray]'); CI runs this test", allow_module_level=True)

import memtint as memtint_api
from memtint.sweep import run_sweep
from memtint.sweep.backends import WorkerError
from memtint.sweep.ray_backend import RayBackend

from test_sweep import SPEC_TOML, write

# Timing and bookkeeping columns differ between two executions of the same runs.
VOLATILE = ["elapsed_seconds", "finished_at", "engine_wall_seconds", "batch"]


def stored(out):
    frame = memtint_api.load_results(out)
    frame = frame.drop(columns=[c for c in VOLATILE if c in frame.columns])
    return frame.sort_values(["config_hash", "core"]).reset_index(drop=True)


def unused_port():
    """A local port nothing listens at."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def alone_files(cache):
    directory = cache / "alone"
    return sorted(p.name for p in directory.glob("*.json")) if directory.exists() else []


@pytest.fixture(scope="module")
def local_ray(tmp_path_factory):
    """A local Ray with 2 CPUs whose workers have their own alone cache (as on another machine),
    shared by this module's tests."""
    workers_cache = tmp_path_factory.mktemp("ray") / "workers-cache"
    started = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False,
             runtime_env={"env_vars": {"MEMTINT_CACHE_DIR": str(workers_cache)}})
    print(f"ray started in {time.perf_counter() - started:.1f} s")
    try:
        yield workers_cache
    finally:
        ray.shutdown()


@pytest.mark.engine
def test_ray_sweep_stores_the_same_results_as_the_local_pool(tmp_path, monkeypatch, local_ray):
    workers_cache = local_ray
    spec = write(tmp_path, SPEC_TOML)

    monkeypatch.setenv("MEMTINT_CACHE_DIR", str(tmp_path / "local-cache"))
    local = memtint_api.sweep(spec, out=tmp_path / "local", jobs=2, progress=False)
    assert (local.total, local.done, local.failed) == (12, 12, 0)

    # On Ray, with a cold driver cache: the alone runs are computed by the Ray workers, come back
    # to the driver (its cache), and the runs get them shipped.
    driver_cache = tmp_path / "driver-cache"
    monkeypatch.setenv("MEMTINT_CACHE_DIR", str(driver_cache))
    started = time.perf_counter()
    on_ray = memtint_api.sweep(spec, out=tmp_path / "ray", ray="auto", progress=False)
    print(f"ray sweep of {on_ray.done} runs in {time.perf_counter() - started:.1f} s")
    assert (on_ray.total, on_ray.done, on_ray.failed, on_ray.alone_runs) == (12, 12, 0, local.alone_runs)
    assert ray.is_initialized()  # the sweep used the test's Ray and left it running
    assert len(alone_files(driver_cache)) == on_ray.alone_runs > 0
    assert alone_files(workers_cache) == alone_files(driver_cache)

    local_frame, ray_frame = stored(tmp_path / "local"), stored(tmp_path / "ray")
    assert len(ray_frame) == 48 and (ray_frame["status"] == "ok").all()
    assert list(ray_frame.columns) == list(local_frame.columns)
    assert ray_frame.equals(local_frame)

    # Workers without any alone cache: the runs still need no alone run of their own, since the
    # driver ships the ones it holds (none computed, none written on the workers' side).
    for name in alone_files(workers_cache):
        (workers_cache / "alone" / name).unlink()
    again = run_sweep(spec, tmp_path / "ray-again", backend=RayBackend("auto"), limit=3, progress=False)
    assert (again.done, again.failed, again.alone_runs) == (3, 0, 0)
    assert alone_files(workers_cache) == []
    assert stored(tmp_path / "ray-again").equals(
        ray_frame[ray_frame["config_hash"].isin(set(memtint_api.load_results(tmp_path / "ray-again")["config_hash"]))]
        .reset_index(drop=True))


def test_an_unreachable_cluster_is_a_clean_error_before_anything_is_stored(tmp_path, memtint, clean_error):
    port = unused_port()
    spec = write(tmp_path, SPEC_TOML)
    clean_error(memtint("sweep", spec, "--out", tmp_path / "out", "--ray", f"127.0.0.1:{port}", timeout=60),
                f"cannot reach the Ray cluster at 127.0.0.1:{port}")
    assert not (tmp_path / "out").exists()


def test_an_unreachable_ray_address_in_the_environment_is_a_clean_error(tmp_path, memtint, clean_error, monkeypatch):
    # `--ray auto` follows $RAY_ADDRESS; ray.init() would retry it for minutes, deaf to Ctrl-C.
    port = unused_port()
    monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{port}")
    spec = write(tmp_path, SPEC_TOML)
    clean_error(memtint("sweep", spec, "--out", tmp_path / "out", "--ray", "auto", timeout=60),
                f"cannot reach the Ray cluster at 127.0.0.1:{port} ($RAY_ADDRESS)")
    assert not (tmp_path / "out").exists()


def test_ray_backend_completion_order_errors_and_cancellation(local_ray):
    def root(x):
        return math.sqrt(x)

    def sleep(seconds):
        time.sleep(seconds)

    backend = RayBackend("auto", max_in_flight=3)
    assert backend.slots == 2
    results = dict(backend.map_unordered(root, [4.0, -1.0, 9.0]))
    assert results[4.0] == 2.0 and results[9.0] == 3.0
    assert isinstance(results[-1.0], WorkerError) and "math domain error" in str(results[-1.0])

    # Stopping early cancels what is in flight: the two slow tasks holding both CPUs are stopped,
    # so the next tasks start at once.
    slow = backend.map_unordered(sleep, [0, 60, 60])
    assert next(slow) == (0, None)
    slow.close()
    started = time.perf_counter()
    assert sorted(backend.map_unordered(root, [1.0, 16.0])) == [(1.0, 1.0), (16.0, 4.0)]
    assert time.perf_counter() - started < 30
    backend.close()
    assert ray.is_initialized()  # not started by the backend, so not shut down by it


@pytest.mark.engine
def test_cli_on_a_running_cluster_leaves_it_running(local_ray, tmp_path, monkeypatch, memtint):
    # `--ray auto` with $RAY_ADDRESS: the command connects to that cluster (this test's Ray) as
    # another driver, runs there, and does not shut it down.
    monkeypatch.setenv("RAY_ADDRESS", ray.get_runtime_context().gcs_address)
    monkeypatch.setenv("MEMTINT_CACHE_DIR", str(tmp_path / "cache"))
    spec = write(tmp_path, SPEC_TOML)
    code, out, err = memtint("sweep", spec, "--out", tmp_path / "out", "--ray", "auto", "--limit", "2")
    assert code == 0, err
    assert "2 run(s) done (0 failed)" in out
    assert (memtint_api.load_results(tmp_path / "out")["status"] == "ok").sum() == 2 * 4
    assert ray.get(ray.remote(lambda: "alive").remote(), timeout=60) == "alive"


@pytest.mark.engine
def test_reproduce_on_ray_gives_the_local_pools_results(local_ray, tmp_path):
    # `memtint reproduce --ray`: the same jobs as Ray tasks, so the same figures and verdicts.
    from memtint.reproduce import common, reproduce

    settings = common.Settings(seeds=1, quick=True)
    local = reproduce(["camc"], str(tmp_path / "local"), settings, jobs=2, progress=False)
    on_ray = reproduce(["camc"], str(tmp_path / "ray"), settings, ray="auto", progress=False)
    measured = lambda papers: [(r.claim["id"], r.per_seed, r.verdict) for r in papers[0]["rows"]]  # noqa: E731
    assert measured(on_ray) == measured(local) and len(measured(local)) > 5
    assert "on Ray (2 CPUs)" in (tmp_path / "ray" / "camc.md").read_text()
    assert ray.is_initialized()  # the test's Ray, used and left running


def test_reproduce_on_an_unreachable_cluster_is_a_clean_error_before_any_report(tmp_path, memtint, clean_error):
    port = unused_port()
    clean_error(memtint("reproduce", "camc", "--quick", "--out", tmp_path / "out", "--ray", f"127.0.0.1:{port}",
                        timeout=60), f"cannot reach the Ray cluster at 127.0.0.1:{port}")
    assert not (tmp_path / "out").exists()
    clean_error(memtint("reproduce", "camc", "--jobs", "2", "--ray", "auto"), "--ray", "--jobs")


@pytest.mark.engine
def test_a_killed_worker_is_told_on_stderr_in_plain_text_and_the_run_fails_with_its_cause(tmp_path):
    # Ray's driver prints the raylet's "(raylet) A worker died ..." on stdout, coloured, whatever
    # log_to_driver says: the command's stdout is its table, a pipe here as in CI.
    from test_signals import process_group

    write(tmp_path, 'name = "s"\nmachines = ["ddr4-2400"]\npolicies = ["buddy"]\ninstructions = 1000000000\n'
                    'warmup = 0\ncache = false\n[[mixes]]\nprograms = ["stream"]\n', "s.toml")
    # Its own local Ray (RAY_ADDRESS=local), so the workers killed are this command's.
    proc = subprocess.Popen([sys.executable, "-m", "memtint.cli", "sweep", "s.toml", "--out", "out", "--ray", "auto"],
                            cwd=tmp_path, start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ, RAY_ADDRESS="local", COLUMNS="200"))
    kills, deadline = 0, time.monotonic() + 240
    try:
        # The run's worker killed each time Ray starts it again, as a machine short of memory would.
        while proc.poll() is None and time.monotonic() < deadline:
            for pid in process_group(proc.pid, 3):
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                        if cmdline.read().startswith(b"ray::execute_run"):
                            os.kill(pid, signal.SIGKILL)
                            kills += 1
                except (FileNotFoundError, ProcessLookupError):
                    pass
            time.sleep(0.1)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 1 and kills >= 2, (proc.returncode, kills, err[-3000:])
    assert "sweep s" in out and "1 run(s) done (1 failed)" in out, out
    assert "(raylet)" not in out and "(pid=" not in out and "\x1b" not in out, out
    assert "(raylet) A worker died" in err and "\x1b" not in err, err[-3000:]
    assert "Started a local Ray instance" not in err, err[-3000:]  # Ray's INFO lines
    # The run's own failure, with Ray's cause, as memtint reports a failed run.
    assert re.search(r"memtint: run \w+ \(stream / buddy on ddr4-2400, seed 1\) failed: WorkerCrashedError: ", err), err
