"""The application-aware memory schedulers (PAR-BS, ATLAS, TCM, BLISS, IMPS, CCPS) from Python:
listed in the preset catalogue, usable wherever a scheduler name is (run_dram, run_sim, compare,
the CLI), their per-source counters in the statistics, their parameters validated."""

from __future__ import annotations

import json

import pytest

import memtint as mt

APP_AWARE = ["par-bs", "atlas", "tcm", "bliss", "imps", "ccps"]


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMTINT_CACHE_DIR", str(tmp_path / "cache"))


@pytest.mark.engine
def test_the_catalogue_lists_every_scheduler():
    assert set(APP_AWARE) | {"fcfs", "fr-fcfs", "fr-fcfs-cap"} <= set(mt.presets()["schedulers"])


@pytest.mark.engine
@pytest.mark.parametrize("scheduler", APP_AWARE)
def test_run_sim_under_each_scheduler_reports_per_source_counters(scheduler):
    stats = mt.run_sim("ddr4-2400", ["stream", "light"], instructions=100_000, scheduler=scheduler,
                            overrides={"controller": {"atlas": {"quantum": 20_000}, "tcm": {"quantum": 20_000},
                                                      "imps": {"epoch": 20_000}, "ccps": {"epoch": 20_000}}})
    assert stats["config"]["scheduler"] == scheduler
    sources = stats["dram"]["channels"][0]["scheduler_sources"]
    assert [s["source"] for s in sources] == [0, 1]
    assert all(len(s) > 1 for s in sources), sources


@pytest.mark.engine
def test_counters_follow_the_scheduler():
    # BLISS blacklists the streaming core (source 0), never the light one.
    stats = mt.run_sim("ddr4-2400", ["stream", "light"], instructions=200_000, scheduler="bliss")
    by_source = {s["source"]: s for s in stats["dram"]["channels"][0]["scheduler_sources"]}
    assert by_source[0]["times_blacklisted"] > 0
    assert by_source[0]["times_blacklisted"] > by_source[1]["times_blacklisted"]
    # FR-FCFS keeps no per-source state: an empty list, same schema.
    stats = mt.run_sim("ddr4-2400", ["stream", "light"], instructions=50_000, scheduler="fr-fcfs")
    assert stats["dram"]["channels"][0]["scheduler_sources"] == []


@pytest.mark.engine
def test_compare_and_the_cli_accept_the_new_schedulers(memtint, tmp_path):
    cmp = mt.compare("ddr4-2400", ["stream", "light"], ["buddy"], instructions=100_000, scheduler="tcm")
    assert cmp["policies"][0]["weighted_speedup"] > 0
    code, out, err = memtint("dram", "--machine", "ddr4-2400", "--generate", "mix", "--requests", "2000",
                             "--scheduler", "ccps", "--json", tmp_path / "d.json")
    assert code == 0, err
    assert json.loads((tmp_path / "d.json").read_text())["config"]["scheduler"] == "ccps"


@pytest.mark.engine
def test_compare_runs_a_policy_under_the_scheduler_its_name_gives(memtint, clean_error):
    # "buddy+bliss", as sweeps name it: the shared run under BLISS, divided by the same alone runs
    # (the machine's scheduler) as buddy's, so the two sit side by side in one table.
    mix, n = ["stream", "random", "copy", "light"], 200_000
    both = mt.compare("i7-860", mix, ["buddy", "buddy+bliss"], instructions=n, warmup=0)
    alone_bliss = mt.compare("i7-860", mix, ["buddy"], instructions=n, warmup=0, scheduler="bliss")
    plain, own = both["policies"]
    assert own["policy"] == "buddy+bliss" and both["alone_scheduler"] == "fr-fcfs"
    assert [c["ipc_shared"] for c in own["cores"]] == [c["ipc_shared"] for c in alone_bliss["policies"][0]["cores"]]
    assert [c["ipc_alone"] for c in own["cores"]] == [c["ipc_alone"] for c in plain["cores"]]
    assert own["weighted_speedup"] != plain["weighted_speedup"]  # BLISS changes this mix's schedule
    with pytest.raises(mt.MemtintError, match=r"policies: unknown scheduler 'stfm' in 'buddy\+stfm'"):
        mt.compare("i7-860", mix, ["buddy+stfm"], instructions=n)
    code, out, err = memtint("compare", "--machine", "i7-860", "--mix", ",".join(mix), "--policies",
                             "buddy,buddy+bliss", "--instructions", str(n), "--warmup", "0")
    assert code == 0, err
    assert "buddy+bliss" in out and "alone runs under buddy and fr-fcfs" in " ".join(out.split())
    clean_error(memtint("compare", "--machine", "i7-860", "--mix", "stream,light", "--policies", "bdy+tcm"),
                "unknown placement policy 'bdy'")


@pytest.mark.engine
@pytest.mark.parametrize("overrides, needle", [
    ({"bliss": {"threshold": 0}}, "controller.bliss.threshold"),
    ({"atlas": {"alpha": 1.5}}, "controller.atlas.alpha"),
    ({"ccps": {"low_intensity": -1.0}}, "controller.ccps.low_intensity"),
    ({"tcm": {"quantum": 0}}, "controller.tcm.quantum"),
    ({"tcm": {"quantm": 1}}, "controller.tcm: unknown field `quantm`"),
    ({"tcm_quantum": 0}, "controller.tcm.quantum"),
])
def test_bad_scheduler_parameters_are_named(overrides, needle):
    with pytest.raises(mt.MemtintError, match=needle):
        mt.run_sim("ddr4-2400", ["light"], instructions=1000, scheduler="tcm",
                        overrides={"controller": overrides})


@pytest.mark.engine
def test_unknown_scheduler_lists_the_new_ones(memtint, clean_error):
    line = clean_error(memtint("dram", "--machine", "ddr4-2400", "--generate", "random", "--requests", "10",
                               "--scheduler", "stfm"), "stfm")
    for name in APP_AWARE:
        assert name in line


@pytest.mark.engine
def test_dram_runs_attribute_requests_to_several_sources():
    stats = mt.run_dram("ddr4-2400", mt.generate("mix", requests=3000), scheduler="bliss", sources=4)
    assert stats["config"]["sources"] == 4
    assert [s["source"] for s in stats["channels"][0]["scheduler_sources"]] == [0, 1, 2, 3]
    with pytest.raises(mt.MemtintError, match="sources"):
        mt.run_dram("ddr4-2400", mt.generate("mix", requests=10), sources=0)


@pytest.mark.engine
def test_a_sweep_runs_under_an_application_aware_scheduler(tmp_path):
    spec = tmp_path / "spec.toml"
    spec.write_text('name = "s"\nmachines = ["ddr4-2400"]\npolicies = ["buddy"]\ninstructions = 50000\n'
                    'scheduler = "bliss"\n[[mixes]]\nprograms = ["stream", "light"]\n')
    summary = mt.sweep(spec, out=tmp_path / "out", jobs=1, progress=False)
    assert (summary.total, summary.done, summary.failed) == (1, 1, 0)
    frame = mt.load_results(tmp_path / "out")
    assert (frame["status"] == "ok").all()
    # Sweeps warm up first (DEFAULT_WARMUP instructions per core), so the direct run does too.
    from memtint.comparison import DEFAULT_WARMUP

    stats = mt.run_sim("ddr4-2400", ["stream", "light"], instructions=50000, scheduler="bliss", warmup=DEFAULT_WARMUP)
    assert sorted(frame["ipc_shared"]) == sorted(c["ipc"] for c in stats["cores"])
