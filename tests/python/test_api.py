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


@pytest.mark.parametrize("call, message", [
    # A string is a sequence: "stream" ran as programs s, t, r...
    (lambda: memtint.api.build_sim_spec("i7-860", "stream", instructions=1000),
     "programs: expected a list of programs (profile names or trace paths), got 'stream' (a string is not a list"),
    (lambda: memtint.api.build_sim_spec("i7-860", [], instructions=1000, processes={"threads": ["light"]}),
     "processes: expected a list of processes"),
    (lambda: memtint.compare("i7-860", "stream", ["buddy"], instructions=1000), "mix: expected a list of names"),
    # Dict parameters: a bare ValueError / TypeError from dict().
    (lambda: memtint.api.build_sim_spec("i7-860", ["light"], instructions=1000, os_options="strict"),
     "os_options: expected a table"),
    (lambda: memtint.api.build_sim_spec("i7-860", ["light"], instructions=1000, sampling=[1, 2]),
     "sampling: expected a table"),
    (lambda: memtint.api.build_sim_spec("i7-860", ["light"], instructions=1000, overrides=["dram"]),
     "overrides: expected a table"),
    (lambda: build_run_spec("ddr4-2400", memtint.generate("random", 10), overrides={"dram": 5}),
     "overrides.dram: expected a table"),
    # Another policy in the os table ran under the label of `policy`.
    (lambda: memtint.api.build_sim_spec("i7-860", ["light"], instructions=1000, policy="bpm",
                                        os_options={"policy": "buddy"}), "os_options.policy: the policy comes from"),
    (lambda: memtint.compare("i7-860", ["light"], ["buddy", "bpm"], instructions=1000, os_options={"policy": "buddy"}),
     "os_options.policy: the policy comes from policies"),
    (lambda: memtint.compare("i7-860", ["light"], ["bpm", "bpm"], instructions=1000),
     "policies: 'bpm' given more than once"),
    # "no" is truthy: the checker ran.
    (lambda: build_run_spec("ddr4-2400", memtint.generate("random", 10), check="no"), "check: expected True or False"),
    (lambda: build_run_spec("ddr4-2400", memtint.generate("random", 10), cycle_by_cycle=1),
     "cycle_by_cycle: expected True or False"),
    (lambda: memtint.compare("i7-860", ["light"], ["bpm"], instructions=1000, use_cache="no"),
     "use_cache: expected True or False"),
    (lambda: memtint.trace_stats("light", instructions=1000, reuse="no"), "reuse: expected True or False"),
    # Integers beyond 64 bits reached the engine as floats.
    (lambda: memtint.api.build_sim_spec("i7-860", ["light"], instructions=1000, seed=2**64),
     "seed: expected a whole number from 0 to 2^63-1, got 18446744073709551616"),
    (lambda: memtint.api.build_sim_spec("i7-860", ["light"], instructions=10**30),
     "instructions: 1,000,000,000,000,000,000,000,000,000,000 per core is more than memtint takes (10,000,000,000,000"),
    (lambda: memtint.compare("i7-860", ["light"], ["bpm"], instructions=1000, seed=2**63),
     "seed: expected a whole number from 0 to 2^63-1"),
    (lambda: memtint.generate("random", 10**30), "requests: 1,000,000,000,000,000,000,000,000,000,000 is more than memtint takes (1,000,000,000,000"),
    (lambda: memtint.generate("random", 10, seed=-1), "seed: expected a whole number from 0 to 2^63-1"),
    (lambda: memtint.api.engine_json({"workload": {"generate": {"footprint_bytes": 2**70}}}),
     "workload.generate.footprint_bytes: 1180591620717411303424 is more than any setting takes"),
    # An integer kind was a JSON syntax error at a column.
    (lambda: memtint.generate(3, 100), "kind: expected a generator name (stream, random"),
])
def test_api_arguments_of_the_wrong_kind_are_refused_by_name(call, message):
    with pytest.raises(memtint.MemtintError) as error:
        call()
    assert message in str(error.value)


def test_the_os_table_may_repeat_the_policy():
    spec = memtint.api.build_sim_spec("i7-860", ["light"], instructions=1000, policy="bpm", os_options={"policy": "bpm"})
    assert spec["os"] == {"policy": "bpm"}
