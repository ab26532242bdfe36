"""`memtint rt` and `memtint.run_rt` (rt_sim): real-time tasks through the simulated DRAM under
EDF with auto-refresh and under Colored Refresh (docs/refresh.md)."""

from __future__ import annotations

import json
import os

import pytest

import memtint

run_rt = memtint.run_rt  # the tests' `memtint` is the command line

CONFIG = os.path.join(os.path.dirname(__file__), "..", "..", "configs", "runs", "colored-refresh.toml")

TASKS = [
    {"name": "a", "period": 16, "wcet": 4, "compute": 3.0, "loads": 500},
    {"name": "b", "period": 32, "wcet": 12, "compute": 10.0, "loads": 1000, "pattern": "stream"},
    {"name": "c", "period": 64, "wcet": 16, "compute": 12.0, "loads": 2000},
]


@pytest.mark.engine
def test_colored_refresh_keeps_every_load_off_refreshing_ranks_and_auto_refresh_does_not():
    spec = {"machine": "ddr4-2400-8r", "tasks": TASKS, "overrides": {"dram": {"refresh_density_gbit": 16}}}
    cr = memtint.run_rt({**spec, "schedule": "colored"})
    auto = memtint.run_rt({**spec, "schedule": "edf"})
    assert cr["refresh_met"] == 0 and auto["refresh_met"] > 0
    assert [t["name"] for t in cr["tasks"]] == ["a", "b", "c"]
    # Table 4.2's colours (0-based) for Example 1's task set: each task in one of them.
    allowed = {"a": {1, 3, 5, 7}, "b": {2, 3, 6, 7}, "c": {0, 1, 4, 5, 7}}
    for t in cr["tasks"]:
        assert set(t["colours"]) <= allowed[t["name"]], t
    assert cr["deadline_misses"] == 0 and cr["utilisation"] < auto["utilisation"]


@pytest.mark.engine
def test_colored_refresh_on_one_rank_is_refused_not_run_with_no_task_ever_eligible():
    # One rank is one colour, refreshing in every frame: no job could ever run.
    with pytest.raises(memtint.MemtintError, match=r"machine: colored .* 1 rank \(at least 2"):
        memtint.run_rt({"machine": "ddr4-2400", "tasks": TASKS[:1], "schedule": "colored"})


@pytest.mark.engine
def test_memtint_rt_prints_each_task_and_writes_json(memtint, tmp_path):
    out = tmp_path / "rt.json"
    code, text, err = memtint("rt", CONFIG, "--json", out)
    assert code == 0, err
    stats = json.loads(out.read_text())
    assert stats["config"]["schedule"] == "colored" and stats["refresh_met"] == 0
    code, text, err = memtint("rt", CONFIG, "--schedule", "edf", "--refresh", "fgr4")
    assert code == 0, err
    for word in ("lms", "matmult", "utilisation", "deadline misses", "met"):
        assert word in text


@pytest.mark.engine
def test_each_schedule_judges_its_task_set_at_the_declared_wcets_beside_the_run(memtint, tmp_path):
    spec = {"machine": "ddr4-2400-8r", "tasks": TASKS, "horizon": 64}
    for schedule, test in (("edf", "EDF processor demand"), ("rm", "RM response times"),
                           ("colored", "cyclic frame table")):
        (verdict,) = run_rt({**spec, "schedule": schedule})["analysis"]
        assert verdict["test"] == test and verdict["schedulable"] is True, verdict
    # RM: c answers at 56 of its 64 (4 + 12 above it, twice and once more).
    (verdict,) = run_rt({**spec, "schedule": "rm"})["analysis"]
    assert verdict["detail"] == "longest response 56 of deadline 64 (c)", verdict
    # Declared WCETs above the processor: refused by the analysis, whatever the jobs compute.
    heavy = [{**t, "wcet": t["period"] // 2 + 1} for t in TASKS]
    (verdict,) = run_rt({**spec, "tasks": heavy, "schedule": "edf"})["analysis"]
    assert verdict["schedulable"] is False and verdict["detail"] == "utilisation 1.609 is above 1", verdict
    code, text, err = memtint("rt", CONFIG, "--schedule", "rm")
    assert code == 0, err
    assert "Analysis at the declared WCETs (refresh not counted): every task: " in " ".join(text.split()), text


@pytest.mark.engine
def test_bad_task_sets_are_refused_naming_the_key(memtint, tmp_path, clean_error):
    bad = tmp_path / "bad.toml"
    bad.write_text('machine = "ddr4-2400-8r"\nschedule = "crs"\n[[tasks]]\nname = "a"\nperiod = 10\nwcet = 2\n'
                   'compute = 1.0\nloads = 10\n')
    code, _, err = memtint("rt", bad)
    assert code != 0 and "servers" in err and "Traceback" not in err
    bad.write_text('machine = "ddr4-2400-8r"\n[[tasks]]\nname = "a"\nperiod = 10\nwcet = 20\ncompute = 1.0\nloads = 10\n')
    code, _, err = memtint("rt", bad)
    assert code != 0 and "tasks[0].wcet" in err
    # A task's key is named with its line in the file; a period of 0 is the period's fault.
    two = 'machine = "ddr4-2400-8r"\n[[tasks]]\nname = "a"\nperiod = 10\nwcet = 2\ncompute = 1.0\nloads = 10\n'
    bad.write_text(two + '[[tasks]]\nname = "b"\nperiod = "20"\nwcet = 2\ncompute = 1.0\nloads = 10\n')
    clean_error(memtint("rt", bad), "bad.toml:10: ", "tasks[1].period")
    bad.write_text(two.replace("period = 10", "period = 0"))
    clean_error(memtint("rt", bad), "bad.toml:4: ", "tasks[0].period: a: must be above 0")
    # Two tasks of one name: servers and results would take them for one.
    bad.write_text(two + '[[tasks]]\nname = "a"\nperiod = 20\nwcet = 2\ncompute = 1.0\nloads = 10\n')
    clean_error(memtint("rt", bad), "bad.toml:9: ", "tasks[1].name: 'a' is also tasks[0]'s name")
    bad.write_text(two.replace('name = "a"', 'name = ""'))
    clean_error(memtint("rt", bad), "bad.toml:3: ", "tasks[0].name: is empty")
    # A key the second task does not take: its own line, not the first [[tasks]] line.
    bad.write_text(two + '[[tasks]]\nname = "b"\nperiod = 20\nwcet = 2\ncompute = 1.0\nlods = 10\n')
    clean_error(memtint("rt", bad), "bad.toml:13: ", "tasks[1]: unknown field `lods`")
    # A key the second task lacks: that task's [[tasks]] line, not the first task's.
    bad.write_text(two + '[[tasks]]\nname = "b"\nwcet = 2\ncompute = 1.0\nloads = 10\n')
    clean_error(memtint("rt", bad), "bad.toml:8: ", "tasks[1]: missing field `period`")
    # The density given twice: the run's key and an override (or --set) of the machine's.
    bad.write_text('refresh_density_gbit = 16\n' + two + '[overrides.dram]\nrefresh_density_gbit = 32\n')
    clean_error(memtint("rt", bad), "bad.toml:", "overrides.dram.refresh_density_gbit: 32 has no effect")
    bad.write_text('refresh_density_gbit = 16\n' + two)
    clean_error(memtint("rt", bad, "--set", "dram.refresh_density_gbit=32"), "--set dram.refresh_density_gbit=32: ",
                "has no effect: the run's refresh_density_gbit = 16 sets it")
    bad.write_text('machine = "ddr4-2400-8r"\n')
    clean_error(memtint("rt", bad), "bad.toml: missing key 'tasks'")
    # A name the file gives that the engine does not know: the line that gives it.
    bad.write_text(two.replace('"ddr4-2400-8r"', '"ddr9"'))
    clean_error(memtint("rt", bad), "bad.toml:1: ", "unknown machine 'ddr9'")
    bad.write_text('schedule = "RM"\n' + two)
    clean_error(memtint("rt", bad), "bad.toml:1: ", "unknown schedule 'RM'")
    # A unit that does not divide the retention window (64 ms by default): the unit's line.
    bad.write_text('unit_us = 0.7\nhorizon = 40\n' + two)
    clean_error(memtint("rt", bad), "bad.toml:1: ", "unit_us: the retention window (retention_ms = 64 ms)",
                "choose a unit that divides 64000 µs")
    # Units a tenth of a microsecond divide it, rounding aside.
    bad.write_text('unit_us = 0.1\nhorizon = 40\n' + two)
    code, out, err = memtint("rt", bad)
    assert code == 0, err


@pytest.mark.engine
def test_the_rate_monotonic_example_shows_attackers_in_the_tasks_bank(memtint, tmp_path):
    example = os.path.join(os.path.dirname(CONFIG), "camc-rate-monotonic.toml")
    out = tmp_path / "rm.json"
    code, text, err = memtint("rt", example, "--json", out)
    assert code == 0, err
    stats = json.loads(out.read_text())
    is_ser = next(t for t in stats["tasks"] if t["name"] == "IS_SER")
    assert stats["config"]["schedule"] == "rm" and is_ser["deadline_misses"] > 0
    assert len(stats["attackers"]) == 3 and "Attackers: colours 0" in " ".join(text.split())
    # Without the attackers the same tasks meet every deadline.
    alone = memtint_run_rt_without_attackers(example)
    assert alone["deadline_misses"] == 0


def memtint_run_rt_without_attackers(path: str) -> dict:
    from memtint.toml_files import read_toml

    spec, _ = read_toml(path)
    spec.pop("attackers")
    return memtint.run_rt(spec)


@pytest.mark.engine
def test_rt_says_what_it_cannot_use_and_warns_of_a_job_longer_than_its_wcet(memtint, clean_error, tmp_path):
    # --set os.* and sampling.* used to be dropped unseen, and compute > wcet to run without a word.
    with open(CONFIG, encoding="utf-8") as f:
        text = f.read()
    assert "compute = 3.2" in text
    run = tmp_path / "t.toml"
    run.write_text(text.replace("compute = 3.2", "compute = 5.0", 1))
    clean_error(memtint("rt", run, "--set", "os.policy=bpm"), "--set os.policy", "without an OS model")
    clean_error(memtint("rt", run, "--set", "sampling.unit=5"), "--set sampling.unit")
    code, _, err = memtint("rt", run, "--set", "cache.llc=none", "--json", tmp_path / "o.json")
    assert code == 0, err
    assert "--set cache.llc" in err and "no effect" in err
    assert "compute = 5.0 is more than its wcet = 4" in err
    # Unread, but still checked: an invalid machine is one whatever the run reads of it.
    clean_error(memtint("rt", run, "--set", "cpu.cores=0"), "cpu.cores")
    clean_error(memtint("dram", "--machine", "ddr4-2400", "--generate", "random", "--requests", "100",
                        "--set", "cpu.frequency_ghz=-1"), "cpu.frequency_ghz")


def test_a_machine_file_is_relative_to_the_task_set_and_never_an_output(memtint, tmp_path):
    """As in a run file, the machine file a task set names is found beside it, whatever the working
    directory; it and the mapping it names are inputs, so --json may not write over them."""
    root = os.path.join(os.path.dirname(__file__), "..", "..", "configs")
    sub = tmp_path / "sub"
    sub.mkdir()
    with open(os.path.join(root, "machines", "i7-860.toml")) as f:
        machine = f.read().replace('mapping = "i7-860"', 'mapping = "mm.toml"')
    (sub / "m.toml").write_text(machine)
    with open(os.path.join(root, "mappings", "i7-860.toml")) as f:
        (sub / "mm.toml").write_text(f.read())
    (sub / "rt.toml").write_text('machine = "m.toml"\nhorizon = 40\n[[tasks]]\nname = "a"\nperiod = 10\nwcet = 2\n'
                                 'compute = 1\nloads = 10\n')
    code, out, err = memtint("rt", "sub/rt.toml", "--json", "-")  # run from tmp_path, not sub
    assert code == 0, err
    assert json.loads(out)["tasks"][0]["jobs"] == 4
    before = {p: p.read_bytes() for p in (sub / "m.toml", sub / "mm.toml")}
    for target in ("sub/m.toml", "sub/mm.toml"):
        code, out, err = memtint("rt", "sub/rt.toml", "--json", target)
        assert code == 2 and "is an input of this command" in err, (target, err)
    assert {p: p.read_bytes() for p in before} == before


@pytest.mark.engine
def test_the_rt_table_names_tasks_left_out_of_the_utilisation(memtint, tmp_path):
    # Rate monotonic on an overloaded set: the longest-period task never runs, so the measured
    # utilisation is over the others; the table says so rather than reading as the whole demand.
    config = tmp_path / "over.toml"
    config.write_text('machine = "ddr4-2400-8r"\nschedule = "rm"\nrefresh = "none"\nhorizon = 64\n'
                      '[[tasks]]\nname = "fast"\nperiod = 8\nwcet = 8\ncompute = 7.5\nloads = 0\n'
                      '[[tasks]]\nname = "starved"\nperiod = 16\nwcet = 8\ncompute = 8.0\nloads = 0\n')
    code, text, err = memtint("rt", config, "--json", tmp_path / "over.json")
    assert code == 0, err
    stats = json.loads((tmp_path / "over.json").read_text())
    assert [t["finished"] for t in stats["tasks"]] == [8, 0]
    assert stats["utilisation"] == pytest.approx(7.5 / 8, rel=1e-6)
    assert "without starved, which finished no job" in " ".join(text.split())
    assert stats["tasks"][0]["response_max"] == pytest.approx(7.5, rel=1e-6)


@pytest.mark.engine
def test_the_rt_table_title_names_the_refresh_mode_that_ran(memtint, tmp_path):
    # fgr2 and fgr4 run the controller's all-bank refresh at 2x or 4x: the title said "all-bank"
    # alone, and "none refresh, tRFC ..." for a run without refresh.
    config = tmp_path / "t.toml"
    config.write_text('machine = "ddr4-2400-8r"\nschedule = "edf"\nhorizon = 64\n'
                      '[[tasks]]\nname = "a"\nperiod = 8\nwcet = 4\ncompute = 2.0\nloads = 10\n')
    titles = {}
    for refresh in ("fgr4", "none", "all-bank"):
        code, text, err = memtint("rt", config, "--refresh", refresh)
        assert code == 0, err
        titles[refresh] = text.strip().splitlines()[0].strip()
    assert "all-bank refresh (fgr4), tRFC" in titles["fgr4"]
    assert titles["none"].endswith("edf · no refresh") and "tRFC" not in titles["none"]
    assert "all-bank refresh, tRFC" in titles["all-bank"]
