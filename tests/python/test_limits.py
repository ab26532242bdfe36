"""Sizes with a bound, long runs announced with an estimate (issue: robustness)."""

from __future__ import annotations

import pytest

from memtint import limits
from memtint.cli import run_with_status


def test_huge_counts_are_refused_naming_the_key(memtint, clean_error):
    # 10^15 instructions or requests used to be accepted and run for ever, silently.
    clean_error(memtint("compare", "--machine", "i7-860", "--mix", "stream", "--instructions", str(10**15)),
                "instructions:", "more than memtint takes")
    clean_error(memtint("dram", "--machine", "ddr4-2400", "--generate", "random", "--requests", str(10**15)),
                "--requests (generate.requests):", "more than memtint takes")


def test_a_long_run_is_announced_with_its_estimate(capsys):
    assert run_with_status("Simulating…", lambda: 7, estimate=3 * 86400) == 7
    err = capsys.readouterr().err
    assert "this run will take about 3.0 days" in err and "Ctrl-C" in err
    run_with_status("Simulating…", lambda: 7, estimate=5)
    assert capsys.readouterr().err == ""


def test_estimates_scale_with_threads_and_warmup():
    one = limits.sim_seconds({"programs": ["stream"], "instructions": 40_000_000})
    four = limits.sim_seconds({"programs": ["stream"] * 4, "instructions": 40_000_000, "warmup": 300_000_000})
    assert one == pytest.approx(1.0) and four == pytest.approx(8.0)
    assert limits.duration_text(90) == "90 s" and limits.duration_text(3 * 3600) == "3.0 h"


def test_a_sampled_run_is_priced_as_its_units_in_detail_and_the_rest_warmed():
    # A sampled sweep of issue 34's size was announced at 18 h, as if every instruction ran in
    # detail; it takes about 3 h.
    from memtint.sampling import DEFAULT_SAMPLING

    spec = {"programs": ["stream"] * 4, "instructions": 100_000_000, "warmup": 20_000_000}
    detailed = limits.sim_seconds(spec)
    sampled = limits.sim_seconds({**spec, "sampling": dict(DEFAULT_SAMPLING)})
    # 100 periods of 20 000 + 30 000 instructions in detail, the other 95 M and the warm-up warmed.
    assert sampled == pytest.approx(4 * (5e6 / limits.INSTRUCTIONS_PER_SECOND
                                         + 115e6 / limits.WARMUP_INSTRUCTIONS_PER_SECOND))
    assert detailed > 5 * sampled
    # Settings the engine refuses (a unit longer than the run) are priced as a detailed run.
    refused = {**spec, "instructions": 10_000, "sampling": {"unit": 20_000}}
    assert limits.sim_seconds(refused) == limits.sim_seconds({**refused, "sampling": None})
    runs = [(4, 100_000_000, 20_000_000)] * 12_000
    assert limits.sweep_seconds([(*r, dict(DEFAULT_SAMPLING)) for r in runs], 2) == pytest.approx(
        12_000 * sampled / 2)
    assert limits.sweep_seconds(runs, 2) == pytest.approx(12_000 * detailed / 2)


def test_a_process_or_thread_target_counts_and_is_bounded_naming_its_key():
    spec = {"programs": [], "instructions": 40_000_000,
            "processes": [{"threads": ["stream"], "instructions": 80_000_000},
                          {"threads": [{"program": "stream", "instructions": 40_000_000}, "light"]}]}
    assert limits.sim_seconds(spec) == pytest.approx(2.0 + 1.0 + 1.0)
    spec["processes"][1]["threads"][0]["instructions"] = 10**15
    with pytest.raises(limits.MemtintError, match=r"processes\[1\]\.threads\[0\]\.instructions"):
        limits.sim_seconds(spec)


def test_a_late_arrival_beside_threads_that_run_on_is_work_and_is_announced_with_its_key(tmp_path):
    # A process arriving at 1000 s beside two threads that run on used to start in silence and
    # run for days: they are simulated in detail until it arrives.
    procs = [{"threads": ["light"]}, {"threads": ["stream"], "at_end": "exit"},
             {"threads": ["random"], "arrive_ns": 1e12}]
    spec = {"instructions": 40_000_000, "processes": procs}
    assert limits.late_arrival(spec) == ("processes[2].arrive_ns", 1e12, 1)
    assert limits.sim_seconds(spec) == pytest.approx(3.0 + 1e12 * limits.INSTRUCTIONS_PER_NS / 40e6)
    assert "processes[2].arrive_ns = 1e+12 ns" in limits.sim_reason(spec)
    # With every earlier thread waiting or gone, the time until it is skipped: no cost, no reason.
    procs[0]["at_end"] = "wait"
    assert limits.late_arrival(spec) is None and limits.sim_seconds(spec) == pytest.approx(3.0)
    spec["at_end"] = "wait"
    del procs[0]["at_end"]
    assert limits.late_arrival(spec) is None
    # The command says so before it starts, and Ctrl-C (here: the test's timeout) stops it.
    run = tmp_path / "late.toml"
    run.write_text('machine = "i7-860"\ninstructions = 1000\n[[processes]]\nthreads = ["light"]\n'
                   '[[processes]]\nthreads = ["stream"]\narrive_ns = 1e12\n')
    import subprocess
    import sys
    cli = "import sys; from memtint.cli import main; sys.argv[0] = 'memtint'; sys.exit(main())"
    proc = subprocess.Popen([sys.executable, "-c", cli, "sim", str(run)], stderr=subprocess.PIPE, text=True)
    line = proc.stderr.readline()
    proc.kill()
    proc.wait()
    assert "this run will take about" in line and "processes[1].arrive_ns = 1e+12 ns" in line, line
    # Beyond the engine's bound the arrival is refused at once, without announcing a run of years.
    run.write_text(run.read_text().replace("1e12", "1e15"))
    proc = subprocess.run([sys.executable, "-c", cli, "sim", str(run)], stderr=subprocess.PIPE, text=True, timeout=120)
    assert proc.returncode == 2 and "will take about" not in proc.stderr and "arrive_ns" in proc.stderr, proc.stderr
