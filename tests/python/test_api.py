"""The Python API: run specifications, results as dictionaries, errors as MemtintError, and
simulations that run in parallel threads (the engine releases the GIL)."""

from __future__ import annotations

import os
import pathlib
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


def test_the_clis_trace_formats_and_generators_are_the_engines():
    # The CLI's --format, --export-format and --generate choices, against the engine's own lists.
    from memtint import api

    assert list(api.TRACE_FORMATS) == memtint.presets()["trace_formats"]
    assert list(api.GENERATOR_KINDS) == memtint.presets()["generators"]


def test_a_traces_format_comes_from_its_name_as_on_the_command_line(tmp_path):
    # memtint.trace("stream.dramsim3") read the file as Ramulator's and refused its cycles, while
    # `memtint dram --trace stream.dramsim3` took the format from the suffix.
    timed = tmp_path / "stream.dramsim3"
    timed.write_text("0x40 READ 0\n0x80 WRITE 90\n")
    stats = memtint.run_dram("ddr4-2400", memtint.trace(timed))
    assert stats["config"]["timestamped"] and stats["requests"] == 2 and stats["dram_cycles"] > 90
    for name, fmt in (("x.ramulator2.gz", "ramulator2"), ("k6_a.trc", "dramsim2"), ("plain.txt", "ramulator")):
        assert memtint.trace(tmp_path / name)["trace"]["format"] == fmt
    assert memtint.trace(timed, "ramulator")["trace"]["format"] == "ramulator"  # a given format wins


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


# ---- a researcher's script: what a notebook hands over, and its mistakes ---------------------------------

REPO_ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]


@pytest.mark.engine
def test_numpy_numbers_and_paths_are_taken_as_plain_values():
    # Each was a bare "TypeError: Object of type int64 (PosixPath) is not JSON serializable".
    import pathlib

    import numpy as np

    dram = memtint.run_dram("ddr4-2400", memtint.generate("random", 200, seed=1), read_queue=np.int64(32))
    assert dram == memtint.run_dram("ddr4-2400", memtint.generate("random", 200, seed=1), read_queue=32) | {
        k: dram[k] for k in ("wall_seconds", "requests_per_second", "dram_cycles_per_second")}
    machine = pathlib.Path(REPO_ROOT / "configs" / "machines" / "i7-860.toml")
    a = memtint.run_sim(machine, ["stream"], instructions=np.int64(20_000), os_options={"strict": np.bool_(False)})
    b = memtint.run_sim(str(machine), ["stream"], instructions=20_000, os_options={"strict": False})
    assert a["cores"] == b["cores"]
    from memtint.sweep.runner import resolve_spec

    spec = resolve_spec({"machines": [machine], "mixes": [["stream", "light"]], "policies": ["buddy"],
                         "instructions": [np.int64(1000)], "seeds": list(np.arange(1, 3))})
    assert sorted({e.seed for e in spec.entries}) == [1, 2] and all(type(e.seed) is int for e in spec.entries)
    assert {e.machine for e in spec.entries} == {str(machine)}
    with pytest.raises(memtint.MemtintError, match="Object of type set"):
        memtint.run_sim("i7-860", ["stream"], instructions=1000, os_options={"x": {1, 2}})


@pytest.mark.engine
def test_run_sim_names_its_own_mistakes():
    with pytest.raises(TypeError, match=r"run_sim\(\) got unexpected option\(s\): polcy; its options: instructions"):
        memtint.run_sim("i7-860", ["stream"], instructions=1000, polcy="bpm")
    with pytest.raises(TypeError, match=r"run_sim\(\) needs instructions="):
        memtint.run_sim("i7-860", ["stream"])
    for bad in (-5, 0):  # the command line's bound, not "at least 0" for one and an engine message for the other
        with pytest.raises(memtint.MemtintError, match=f"instructions: expected a whole number of at least 1, got {bad}"):
            memtint.run_sim("i7-860", ["stream"], instructions=bad)


@pytest.mark.engine
def test_run_sim_spec_has_run_sims_checks():
    from memtint import api

    spec = api.build_sim_spec("i7-860", ["stream"], instructions=1000)
    spec["instructions"] = 10**14  # started, and ran on
    with pytest.raises(memtint.MemtintError, match="more than memtint takes"):
        api.run_sim_spec(spec)
    # A suite program by name, as a run file names it.
    by_name = api.run_sim_spec({"machine": "i7-860", "programs": ["bfs"], "instructions": 20_000})
    by_path = api.run_sim_spec({"machine": "i7-860", "programs": [str(REPO_ROOT / "workloads" / "traces" /
                                                                      "bfs.t1.mtt.gz")], "instructions": 20_000})
    assert by_name["cores"] == by_path["cores"]
    with pytest.raises(memtint.MemtintError, match="spec: expected a run specification"):
        api.run_sim_spec(None)
    for f in (lambda: memtint.trace_stats("stream", instructions=10**14), lambda: api.cpu_trace_stats("stream", 10**14)):
        with pytest.raises(memtint.MemtintError, match="more than memtint takes"):
            f()


@pytest.mark.engine
def test_compare_checks_its_policies_and_alone_results_before_any_run():
    done = []
    with pytest.raises(memtint.MemtintError, match="^policies: unknown placement policy 'bmp'; valid"):
        memtint.compare("i7-860", ["stream", "light"], ["bpm", "bmp"], instructions=1000, warmup=0,
                        progress=done.append)
    with pytest.raises(memtint.MemtintError, match="^baseline: unknown placement policy 'nope'"):
        memtint.compare("i7-860", ["stream", "light"], ["bpm"], baseline="nope", instructions=1000, warmup=0,
                        progress=done.append)
    assert done == []  # it used to run the alone runs and the first policies first
    for bad in ([1], {"k": {"cores": []}}, {"k": "text"}):
        with pytest.raises(memtint.MemtintError, match="^alone_results: expected a dict of alone runs"):
            memtint.compare("i7-860", ["stream", "light"], ["bpm"], instructions=1000, warmup=0, alone_results=bad)
    import pathlib

    trace = REPO_ROOT / "workloads" / "traces" / "bfs.t1.mtt.gz"
    r = memtint.compare("i7-860", [pathlib.Path(trace), "light"], ["buddy"], instructions=2000, warmup=0,
                        use_cache=False)
    assert r["policies"][0]["cores"][0]["program"] == str(trace)


def test_a_drampower_export_into_a_file_is_named_by_its_key(tmp_path):
    target = tmp_path / "file"
    target.write_text("x")
    with pytest.raises(memtint.MemtintError, match=f"^export_drampower {target}: exists and is not a directory"):
        memtint.run_dram("ddr4-2400", memtint.generate("random", 10), export_drampower=target)


@pytest.mark.parametrize("spec, out, words", [(None, "r", "spec: expected a sweep specification"),
                                              (3, "r", "spec: expected a sweep specification"),
                                              ({}, None, "out: expected the result directory's path")])
def test_sweep_arguments_of_the_wrong_kind_are_named(tmp_path, spec, out, words):
    with pytest.raises(memtint.MemtintError, match=words):
        memtint.sweep(spec, out=None if out is None else tmp_path / out)


def test_a_sweep_from_a_script_on_standard_input_is_refused_before_it_starts(tmp_path):
    # Every run failed, blamed on a missing __main__ guard the script had.
    import subprocess
    import sys

    script = ("import memtint\nif __name__ == '__main__':\n    try:\n        memtint.sweep({'machines': ['i7-860'], "
              "'mixes': [['light']], 'policies': ['buddy'], 'instructions': 1000, 'warmup': 0}, out='r', jobs=1)\n"
              "    except memtint.MemtintError as e:\n        print('refused:', e)\n")
    done = subprocess.run([sys.executable, "-"], input=script, capture_output=True, text=True, cwd=tmp_path,
                          timeout=120)
    assert "refused: memtint.sweep's local workers start by importing the calling script, and this one has no file" \
        in done.stdout, (done.stdout, done.stderr)
    assert not (tmp_path / "r").exists()


@pytest.mark.engine
def test_a_wrapped_engine_error_says_its_kind_once_and_names_the_key_written():
    # "invalid configuration: nice: thread 0: invalid configuration: nice: must be ..."
    with pytest.raises(memtint.MemtintError) as error:
        memtint.run_sim("i7-860", [], instructions=1000, processes=[{"threads": ["light"], "nice": 40}])
    assert str(error.value) == "invalid configuration: processes[0].nice: must be between -20 and 19, got 40"
    with pytest.raises(memtint.MemtintError) as error:
        memtint.run_sim("i7-860", [], instructions=1000,
                        processes=[{"threads": ["light", {"program": "light", "nice": -21}]}])
    assert str(error.value).startswith("invalid configuration: processes[0].threads[1].nice: must be between")
    for policy in ("mcp", "ccps"):
        with pytest.raises(memtint.MemtintError) as error:
            memtint.run_sim("i7-860", ["light"], instructions=1000, policy=policy)
        assert str(error.value).count("invalid configuration") == 1, str(error.value)
    with pytest.raises(memtint.MemtintError, match="sampling.unit: must be at least 1 instruction, got 0"):
        memtint.run_sim("i7-860", ["light"], instructions=100_000, sampling={"unit": 0})


def _interrupt_python(tmp_path, body: str, after: float) -> tuple[int, str, str, float]:
    """Run ``body`` (indented lines, after printing 'started') in a Python process, send it SIGINT
    ``after`` seconds later; its status, output, errors and the seconds it took to end after it."""
    import signal
    import subprocess
    import sys

    script = tmp_path / "long.py"
    script.write_text("import memtint, sys\nprint('started', flush=True)\n" + body)
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=tmp_path)
    try:
        assert proc.stdout.readline().strip() == "started"
        time.sleep(after)
        proc.send_signal(signal.SIGINT)
        sent = time.monotonic()
        out, err = proc.communicate(timeout=300)
        return proc.returncode, out, err, time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()


@pytest.mark.engine
@pytest.mark.parametrize("call", [
    'memtint.run_sim("i7-860", ["stream", "random"], instructions=10**10)',
    'memtint.compare("i7-860", ["stream", "random"], ["buddy", "bpm"], instructions=10**10, use_cache=False)',
    'memtint.run_dram("ddr4-2400", memtint.generate("random", 10**9))',
    'memtint.run_rt({"machine": "ddr4-2400-8r", "schedule": "edf", "horizon": 2_000_000, "tasks": ['
    '{"name": "a", "period": 16, "wcet": 4, "compute": 3.0, "loads": 500}]})',
])
def test_ctrl_c_stops_a_run_started_from_python(tmp_path, call):
    # The engine runs with the GIL released: Ctrl-C waited for the end of a run of hours.
    code, out, err, _ = _interrupt_python(tmp_path, "try:\n    " + call + "\n"
                                          "except KeyboardInterrupt:\n    print('interrupted', flush=True)\n"
                                          "    r = memtint.run_sim('i7-860', ['light'], instructions=10_000)\n"
                                          "    print('next run', r['cores'][0]['instructions'] > 0)\n", after=3)
    assert code == 0 and out.split() == ["interrupted", "next", "run", "True"], (out, err)


@pytest.mark.parametrize("call, message", [
    # The argument won over overrides.controller without a word: the run had 16 where the caller wrote 8.
    (lambda: build_run_spec("ddr4-2400", memtint.generate("random", 10), read_queue=16,
                            overrides={"controller": {"read_queue": 8}}),
     "overrides.controller.read_queue: the queue comes from read_queue (16), not from the overrides (which say 8)"),
    (lambda: build_run_spec("ddr4-2400", memtint.generate("random", 10), write_queue=16,
                            overrides={"controller": {"write_queue": 64}}), "overrides.controller.write_queue"),
    # Bare TypeErrors from os.fspath, naming no argument.
    (lambda: memtint.trace(None), "path: expected a trace file's path, got None"),
    (lambda: memtint.api.convert_trace(None, "out.mtt"), "input: expected a trace file's path, got None"),
    (lambda: memtint.api.convert_trace("in.txt", 3), "output: expected a trace file's path, got 3"),
    # The engine said "rt spec: invalid type: string ..., expected struct RtRunSpec".
    (lambda: memtint.run_rt("configs/runs/colored-refresh.toml"), "spec: expected a real-time run specification"),
    # cpu_trace_stats named a "programs" argument it does not have.
    (lambda: memtint.api.cpu_trace_stats("/no/such.mtt"), "workload: /no/such.mtt: no such trace file"),
    (lambda: memtint.api.cpu_trace_stats("stream", 1000, seed=1.5), "seed: expected a whole number, got 1.5"),
    (lambda: memtint.api.mix_programs("intensive4"), "unknown mix 'intensive4'; valid mixes: "),
])
def test_api_arguments_given_twice_or_of_no_kind_are_named(call, message):
    with pytest.raises(memtint.MemtintError) as error:
        call()
    assert str(error.value).startswith(message), str(error.value)


def test_the_same_queue_given_twice_is_taken():
    spec = build_run_spec("ddr4-2400", memtint.generate("random", 10), read_queue=16,
                          overrides={"controller": {"read_queue": 16}})
    assert spec["overrides"] == {"controller": {"read_queue": 16}}


@pytest.mark.engine
def test_compare_names_its_own_mistakes_before_any_run():
    done = []
    bad = [({"baseline": 3}, "baseline: expected a placement policy's name, got 3"),  # AttributeError 'partition'
           ({"progress": "yes"}, "progress: expected a function"),  # TypeError after the first run
           ({"keep_schedule": "no"}, "keep_schedule: expected True or False"),  # taken as true
           ({"sampling": [("unit", 5000)]}, "sampling: expected a table"),  # dict() of the pairs, silently
           ({"sampling": {"unit": 5000}, "schedule": {"at": []}, "paced_by": {"policy": "buddy", "cores": [{}, {}]}},
            "paced_by: expected")]  # KeyError 'ipc' once every run had finished
    for options, message in bad:
        with pytest.raises(memtint.MemtintError) as error:
            memtint.compare("i7-860", ["stream", "light"], ["bpm"], instructions=1000, warmup=0, use_cache=False,
                            **{"progress": done.append, **options})
        assert str(error.value).startswith(message), str(error.value)
    assert done == []


@pytest.mark.engine
def test_a_comparison_that_fails_runs_none_of_its_queued_policies(monkeypatch):
    # bank-only cannot give 8 programs their own colours: its error used to come after every
    # other policy had been simulated (minutes of runs whose results were then thrown away).
    import time

    from memtint import api, comparison

    ran = []
    real = api.run_sim_spec

    def run(spec):
        ran.append(spec["os"]["policy"])
        time.sleep(0.2)  # long enough that the queue is still full when the error comes
        return real(spec)

    monkeypatch.setattr(comparison.api, "run_sim_spec", run)
    with pytest.raises(api.MemtintError, match="bank-only gives each of 8 processes"):
        comparison.compare("i7-860-8t", ["light"] * 8, ["buddy", "bank-only", "bpm", "cache-only", "c-vp", "b-vp"],
                           instructions=1000, warmup=0, use_cache=False, workers=1)
    assert "b-vp" not in ran and "c-vp" not in ran, ran


@pytest.mark.engine
def test_a_policy_the_engine_refuses_stops_a_comparison_before_any_run(monkeypatch):
    # The refusal came when the policy's turn came, after the alone runs and the policies before it.
    from memtint import api, comparison

    lengths = []
    real = api.run_sim_spec
    monkeypatch.setattr(comparison.api, "run_sim_spec", lambda spec: lengths.append(spec["instructions"]) or real(spec))
    for machine, policies, said in [("i7-860-8t", ["buddy", "bpm", "bank-only"], "bank-only gives each of 8 processes"),
                                    ("i7-860", ["buddy", "bpm-plus"], "policy 'bpm-plus': mapping i7-860 selects")]:
        lengths.clear()
        with pytest.raises(api.MemtintError, match=said):
            comparison.compare(machine, ["light"] * (8 if machine.endswith("8t") else 2), policies,
                               instructions=100_000, warmup=0, use_cache=False, workers=1)
        assert lengths and set(lengths) == {1}, lengths  # one-instruction probes only


def test_compare_takes_paths_and_numpy_numbers_as_plain_ones(tmp_path, monkeypatch):
    # A Path mapping was a TypeError from the cache key; a Path machine or an np.int64 count went into
    # the result, which json.dumps then refused.
    import json
    import pathlib

    import numpy as np

    monkeypatch.setenv("MEMTINT_CACHE_DIR", str(tmp_path))
    machine = pathlib.Path(REPO_ROOT / "configs" / "machines" / "i7-860.toml")
    r = memtint.compare(machine, ["stream"], ["bpm"], instructions=np.int64(2000), seed=np.int64(2), warmup=0,
                        mapping=pathlib.Path(REPO_ROOT / "configs" / "mappings" / "i7-860.toml"),
                        overrides={"controller": {"read_queue": np.int64(32)}})
    assert json.loads(json.dumps(r))["machine"] == str(machine)
    assert type(r["instructions"]) is int and type(r["seed"]) is int


@pytest.mark.engine
def test_to_frame_takes_a_tuple_and_names_what_an_edited_result_lacks():
    import copy

    run = memtint.run_sim("i7-860", ["stream", "light"], instructions=2000)
    assert len(memtint.to_frame((run, run))) == 4  # "result 0: not a run_sim or compare result"
    edited = copy.deepcopy(run)
    del edited["cores"][1]["read_latency_ns"]  # a bare KeyError from inside to_frame
    with pytest.raises(memtint.MemtintError, match=r"^result 1: not a whole run_sim result \(no key 'read_latency_ns'\)"):
        memtint.to_frame([run, edited])


@pytest.mark.parametrize("call, message", [
    # Taken as the engine's default seed, without a word.
    (lambda: memtint.trace_stats("stream", instructions=1000, seed=None), "seed: expected a whole number, got None"),
    # Ran buddy and reported the alone figures under policy None.
    (lambda: memtint.trace_stats("stream", instructions=1000, machine="i7-860", policy=None),
     "policy: expected a placement policy's name, got None"),
    (lambda: memtint.trace_analysis.classify(None), "stats: expected trace_stats' result"),  # AttributeError
])
def test_trace_stats_names_a_missing_value(call, message):
    import memtint.trace_analysis  # noqa: F401

    with pytest.raises(memtint.MemtintError) as error:
        call()
    assert str(error.value).startswith(message), str(error.value)


def test_intervals_of_a_mix_need_a_core_per_program_on_every_side():
    # A shorter side was zipped away: an interval over the first program(s) only, without a word.
    from memtint import sampling

    def core(ipc):
        return {"ipc": ipc, "sampling": {"unit_cpi": [1 / ipc, 1.1 / ipc, 0.9 / ipc]}}

    alone = [core(1.0), core(0.5)]
    two, three = {"cores": [core(0.5), core(0.25)]}, {"cores": [core(0.5), core(0.25), core(0.4)]}
    assert sampling.mix_intervals(alone, two)["weighted_speedup"][0] > 0
    for call, message in [
        (lambda: sampling.mix_intervals(alone[:1], two), "shared: 2 cores and 1 alone runs"),
        (lambda: sampling.difference_intervals(alone, two, three), "other: 3 cores and 2 alone runs"),
        (lambda: sampling.mix_intervals([{"cores": [core(1.0)]}, core(0.5)], two),  # KeyError 'ipc'
         "alone[0]: expected a core's statistics (with its ipc), got a whole run: give its cores[0]"),
        (lambda: sampling.mix_intervals(alone, two["cores"]), "shared: expected a run"),  # TypeError
    ]:
        with pytest.raises(memtint.MemtintError) as error:
            call()
        assert str(error.value).startswith(message), str(error.value)


def test_a_generated_workload_holds_plain_numbers_and_an_export_needs_a_path():
    import json

    import numpy as np

    workload = memtint.generate("random", np.int64(100), seed=np.int64(3))
    assert json.loads(json.dumps(workload))["generate"]["requests"] == 100  # np.int64 was kept: json.dumps refused it
    with pytest.raises(memtint.MemtintError, match="^export_drampower: expected a directory's path, got 3.0"):
        memtint.run_dram("ddr4-2400", workload, export_drampower=3.0)  # a bare TypeError from os.fspath


@pytest.mark.engine
def test_converting_an_empty_trace_leaves_the_output_as_it_was(tmp_path):
    # The engine wrote a .mtt of no records over the output, which every reader then refused.
    (tmp_path / "empty.txt").write_text("# nothing\n")
    old = tmp_path / "old.mtt"
    old.write_bytes(b"the user's file")
    for output in (old, tmp_path / "new.mtt"):
        with pytest.raises(memtint.MemtintError, match="has no records.*nothing written"):
            memtint.api.convert_trace(tmp_path / "empty.txt", output)
    assert old.read_bytes() == b"the user's file"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.txt", "old.mtt"]
    (tmp_path / "one.txt").write_text("3 0x1000\n")
    assert memtint.api.convert_trace(tmp_path / "one.txt", old)["records"] == 1


@pytest.mark.engine
@pytest.mark.parametrize("call", ['memtint.api.cpu_trace_stats("big.trace.gz")',
                                  'memtint.trace_stats("big.trace.gz", reuse=False)',
                                  'memtint.api.convert_trace("big.trace.gz", "out.mtt.gz")',
                                  'memtint.api.convert_trace("big.trace.gz", "out.txt.gz", to="ramulator")'])
def test_ctrl_c_stops_a_pass_over_a_long_trace(tmp_path, call):
    # A trace's statistics and conversions ran to the end of the file whatever Ctrl-C said. The
    # input: a billion records as concatenated gzip members of one compressed chunk (25 MB).
    import gzip

    chunk = gzip.compress(b"3 64\n5 128 192\n" * 70_000)
    with open(tmp_path / "big.trace.gz", "wb") as f:
        for _ in range(8_000):
            f.write(chunk)
    code, out, err, took = _interrupt_python(tmp_path, "try:\n    " + call + "\n    print('finished', flush=True)\n"
                                             "except KeyboardInterrupt:\n    print('interrupted', flush=True)\n", after=1.5)
    assert code == 0 and out.split() == ["interrupted"], (out, err)
    assert took < 10, took  # the whole pass takes minutes
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.trace.gz", "long.py"]  # no partial output


@pytest.mark.engine
def test_a_core_without_dram_reads_has_no_read_latency_rather_than_zero():
    # Its mean was 0.0 ns, which a DataFrame's mean over cores counted as a read at no cost.
    r = memtint.run_sim("i7-860", ["light:reads_pki=0.00001,writes_pki=0", "stream"], instructions=100_000)
    quiet, busy = r["cores"]
    assert quiet["dram_reads"] == 0 and set(quiet["read_latency_ns"].values()) == {None}, quiet["read_latency_ns"]
    assert busy["dram_reads"] > 0 and busy["read_latency_ns"]["mean"] > 0
    frame = memtint.to_frame(r)
    assert frame["read_latency_ns_mean"].mean() == pytest.approx(busy["read_latency_ns"]["mean"])


def test_a_cache_write_removes_the_temporaries_killed_writers_left():
    # A worker killed between writing an entry's temporary and renaming it left NAME.json.tmpPID
    # in the cache for good.
    import tempfile

    from memtint import comparison

    with tempfile.TemporaryDirectory() as root:
        cache = pathlib.Path(root) / "alone"
        cache.mkdir()
        stale, young, other = cache / "a.json.tmp123", cache / "b.json.tmp456", cache / "notes.tmp1"
        for f in (stale, young, other):
            f.write_text("{")
        old = time.time() - comparison.STALE_TEMPORARY_SECONDS - 60
        os.utime(stale, (old, old))
        os.utime(other, (old, old))
        comparison.write_entry(cache / "c.json", 1, "core", {"ipc": 1.0})
        assert sorted(p.name for p in cache.iterdir()) == ["b.json.tmp456", "c.json", "notes.tmp1"]


@pytest.mark.engine
def test_run_dram_takes_a_whole_machine_table_as_run_sim_does():
    table = {"name": "mine", "dram": {"device": "ddr4-2400", "density_gbit": 8, "channels": 2, "mapping": "RoBaRaCoCh"}}
    stats = memtint.run_dram(table, memtint.generate("random", requests=200))
    assert stats["config"]["machine"] == "mine" and stats["config"]["channels"] == 2 and stats["requests"] == 200


@pytest.mark.engine
def test_a_machine_whose_bus_makes_another_line_size_names_the_bus_width_and_a_bad_sources_its_key():
    # The LLC's 64-byte lines against a 32-bit bus's 32-byte bursts: the message named only
    # cache.llc.line_bytes, which the machine never set; sources was "run spec sources".
    table = {"name": "narrow", "dram": {"device": "ddr4-2400", "density_gbit": 8, "bus_width_bits": 32,
                                        "mapping": "RoBaRaCoCh"}}
    with pytest.raises(memtint.MemtintError, match=r"cache\.llc\.line_bytes: must equal the DRAM burst \(32 bytes: "
                                                   r"dram\.bus_width_bits 32 / 8 x burst length 8\), got 64"):
        memtint.run_sim(table, ["light"], instructions=1000)
    with pytest.raises(memtint.MemtintError, match=r"^invalid configuration: sources: must be at least 1"):
        memtint.run_dram("ddr4-2400", memtint.generate("random", requests=10), sources=0)
