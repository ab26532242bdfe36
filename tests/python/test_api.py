"""The Python API: run specifications, results as dictionaries, errors as MemtintError, and
simulations that run in parallel threads (the engine releases the GIL)."""

from __future__ import annotations

import threading
import time

import pytest

import memtint
from memtint.api import build_run_spec

VOLATILE = {"wall_seconds", "requests_per_second", "dram_cycles_per_second", "vector_isa"}


def without_volatile(stats: dict) -> dict:
    return {k: v for k, v in stats.items() if k not in VOLATILE}


def test_run_spec_carries_every_option():
    spec = build_run_spec(
        "ddr4-2400",
        memtint.generate("mix", requests=10, seed=3, read_fraction=0.5),
        mapping="RoRaBaChCo",
        scheduler="fcfs",
        row_policy="closed",
        refresh="none",
        read_queue=8,
        write_queue=16,
        overrides={"dram": {"channels": 2}},
        outstanding=4,
        check=True,
    )
    assert spec == {
        "machine": "ddr4-2400",
        "workload": {"generate": {"kind": "mix", "requests": 10, "seed": 3, "read_fraction": 0.5,
                                  "footprint_bytes": None, "stride_bytes": None, "streams": None, "banks": None}},
        "mapping": "RoRaBaChCo",
        "scheduler": "fcfs",
        "row_policy": "closed",
        "refresh": "none",
        "outstanding": 4,
        "overrides": {"dram": {"channels": 2}, "controller": {"read_queue": 8, "write_queue": 16}},
        "check": True,
        "cycle_by_cycle": False,
    }


def test_the_clis_trace_formats_are_the_engines():
    # The CLI's --format and --export-format choices, against the engine's own list.
    from memtint import api

    assert list(api.TRACE_FORMATS) == memtint.presets()["trace_formats"]


def test_workload_must_be_a_trace_or_a_generator():
    with pytest.raises(memtint.MemtintError, match="exactly one"):
        memtint.run_dram("ddr4-2400", {"trace": {"path": "x"}, "generate": {"kind": "random"}})


def test_unknown_option_is_a_type_error():
    with pytest.raises(TypeError, match="schedular"):
        memtint.run_dram("ddr4-2400", memtint.generate("random", requests=10), schedular="fcfs")


@pytest.mark.parametrize("option, value", [("instructions", "20000"), ("instructions", 2.5), ("seed", True),
                                           ("warmup", 1e6)])
def test_a_sim_count_that_is_not_a_whole_number_is_refused(option, value):
    # int() took "20000" and cut 2.5 to 2 without a word; a run file and a sweep spec refuse them.
    options = {"instructions": 20_000, option: value}
    with pytest.raises(memtint.MemtintError, match=f"{option}: expected a whole number, got {value!r}"):
        memtint.api.build_sim_spec("i7-860", ["light"], **options)
    import numpy

    assert memtint.api.build_sim_spec("i7-860", ["light"], instructions=numpy.int64(20_000))["instructions"] == 20_000


def test_memtint_error_is_an_exception():
    assert issubclass(memtint.MemtintError, Exception)


@pytest.mark.engine
def test_api_zero_sized_queue_is_rejected_by_the_engine():
    with pytest.raises(memtint.MemtintError, match="read_queue"):
        memtint.run_dram("ddr4-2400", memtint.generate("random", requests=100), read_queue=0)


@pytest.mark.engine
def test_api_run_dram_returns_dict_and_releases_gil():
    # Size the run so one simulation takes long enough (>= 0.2 s) to see whether Python threads
    # keep running while it does.
    requests, elapsed = 50_000, 0.0
    while True:
        workload = memtint.generate("random", requests=requests, seed=7)
        start = time.perf_counter()
        sequential = memtint.run_dram("ddr4-2400", workload, check=True)
        elapsed = time.perf_counter() - start
        if elapsed >= 0.2 or requests >= 3_200_000:
            break
        requests *= 4
    assert isinstance(sequential, dict) and sequential["requests"] == requests

    results: list[dict | None] = [None, None]
    ticks: list[float] = []
    done = threading.Event()

    def simulate(slot: int) -> None:
        results[slot] = memtint.run_dram("ddr4-2400", workload, check=True)

    def tick() -> None:
        while not done.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    ticker = threading.Thread(target=tick)
    workers = [threading.Thread(target=simulate, args=(i,)) for i in range(2)]
    ticker.start()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    done.set()
    ticker.join()

    assert all(r is not None for r in results)
    for result in results:
        assert without_volatile(result) == without_volatile(sequential)
    gaps = [b - a for a, b in zip(ticks, ticks[1:])]
    # Holding the GIL through a simulation would stall the ticker for the whole run.
    assert max(gaps) < elapsed / 2, f"ticker stalled {max(gaps):.3f} s during {elapsed:.3f} s runs"


def test_api_reference_lists_every_public_function():
    import inspect
    import pathlib

    import memtint

    text = (pathlib.Path(__file__).parents[2] / "docs" / "api.md").read_text()
    for name in memtint.__all__:
        if inspect.isfunction(getattr(memtint, name)):
            assert f"`memtint.{name}(" in text, f"docs/api.md does not document memtint.{name}"
    # ...with today's signatures and docstrings (inspect_process's `space` default had gone stale).
    import importlib.util

    spec = importlib.util.spec_from_file_location("gen_api", pathlib.Path(__file__).parents[2] / "docs" / "gen_api.py")
    gen_api = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen_api)
    assert gen_api.render() == text, "docs/api.md is not what the code says: run make api-docs"
