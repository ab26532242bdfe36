"""`memtint sim`, `memtint compare` and `memtint convert`, and their Python API."""

from __future__ import annotations

import csv
import json
import re
import os
from pathlib import Path

import pytest

import memtint
from memtint import api, comparison

SPEC_TRACES = os.environ.get("MEMTINT_SPEC_TRACES") or os.path.join(
    os.path.dirname(__file__), "..", "..", "..", "shared", "traces", "spec2006"
)


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMTINT_CACHE_DIR", str(tmp_path / "cache"))


def write_config(tmp_path, text: str):
    path = tmp_path / "run.toml"
    path.write_text(text)
    return path


@pytest.mark.engine
def test_sim_with_check_prints_the_checkers_verdict_and_fails_on_a_violation(memtint, tmp_path, monkeypatch, capsys):
    # check = true ran the checker and kept its verdict to the JSON; and a violation exited 0.
    from memtint import api, cli

    cfg = write_config(tmp_path, 'machine = "i7-860"\nprograms = ["stream", "light"]\ninstructions = 200000\n'
                                 'check = true\n')
    code, out, err = memtint("sim", cfg)
    assert code == 0, err
    assert re.search(r"timing checker: 0 violations in [0-9,]+ DRAM commands", " ".join(out.split())), out
    real = api.run_sim_spec
    monkeypatch.setattr(api, "run_sim_spec", lambda spec: (lambda s: {**s, "dram": {**s["dram"], "violations": 1}})(real(spec)))
    assert cli.main(["sim", str(cfg)]) == 1
    assert "timing checker: 1 violation in" in " ".join(capsys.readouterr().out.split())
    assert cli.main(["sim", str(cfg), "--json", str(tmp_path / "s.json")]) == 1


@pytest.mark.engine
def test_sim_config_prints_a_table_and_writes_the_documented_json(memtint, tmp_path):
    cfg = write_config(tmp_path, 'machine = "i7-860"\nprograms = ["stream", "light"]\ninstructions = 200000\n'
                                 '[os]\npolicy = "bpm"\n')
    code, out, err = memtint("sim", cfg, "--json", tmp_path / "out.json")
    assert code == 0, err
    assert "stream" in out and "light" in out and "IPC" in out
    stats = json.loads((tmp_path / "out.json").read_text())
    assert stats["kind"] == "sim" and stats["policy"] == "bpm" and stats["schema_version"] == 2
    for core in stats["cores"]:
        for key in ("program", "ipc", "llc_mpki", "dram_reads", "dram_writes", "row_buffer_miss_rate",
                    "read_latency", "read_latency_ns", "banks_used", "channels_used", "colour_overflow_pages"):
            assert key in core, key
        assert core["instructions"] == 200000
    # Each thread's time as user, idle on memory and system, in the JSON and under the table.
    t = {c["program"]: c["time_breakdown"] for c in stats["cores"]}
    for c in stats["cores"]:
        tb = c["time_breakdown"]
        assert tb["user_cycles"] + tb["memory_cycles"] + tb["system_cycles"] == c["cycles"] and tb["system_cycles"] == 0
    assert t["stream"]["memory_cycles"] / sum(t["stream"].values()) > t["light"]["memory_cycles"] / sum(t["light"].values())
    assert "time: user" in out and "idle on memory" in out


@pytest.mark.engine
def test_compare_reports_dram_energy_per_policy_where_the_device_has_currents(memtint, tmp_path):
    code, out, err = memtint("compare", "--machine", "ddr4-2400", "--mix", "stream,random", "--policies", "buddy,bpm",
                             "--instructions", "100000", "--warmup", "0", "--json", tmp_path / "c.json")
    assert code == 0, err
    assert "nJ/access" in out
    result = json.loads((tmp_path / "c.json").read_text())
    for p in result["policies"]:
        assert p["dram_energy_nj"] > 0
        for c in p["cores"]:  # the time breakdown's shares, as the sweep store keeps them
            assert c["user_share"] + c["memory_share"] + c["system_share"] == pytest.approx(1.0)
        assert p["dram_energy_per_access_nj"] == pytest.approx(p["dram_energy_nj"] / p["dram_requests"], rel=0.05)


@pytest.mark.engine
def test_compare_prints_metrics_and_writes_json_and_csv(memtint, tmp_path):
    code, out, err = memtint("compare", "--machine", "i7-860", "--mix", "stream,light,light,light",
                             "--policies", "buddy,bpm", "--instructions", "300000",
                             "--json", tmp_path / "c.json", "--csv", tmp_path / "c.csv")
    assert code == 0, err
    assert "weighted" in out and "bpm" in out
    result = json.loads((tmp_path / "c.json").read_text())
    assert [p["policy"] for p in result["policies"]] == ["buddy", "bpm"]
    for p in result["policies"]:
        for key in ("weighted_speedup", "harmonic_speedup", "maximum_slowdown", "row_buffer_miss_rate"):
            assert isinstance(p[key], float), key
        assert len(p["cores"]) == 4
        for c in p["cores"]:
            for key in ("program", "ipc_alone", "ipc_shared", "slowdown", "row_buffer_miss_rate", "banks_used",
                        "channels_used"):
                assert key in c, key
            assert c["slowdown"] == pytest.approx(c["ipc_alone"] / c["ipc_shared"])
        assert p["weighted_speedup"] == pytest.approx(sum(c["ipc_shared"] / c["ipc_alone"] for c in p["cores"]))
    bpm = result["policies"][1]
    assert all(c["banks_used"] == 16 for c in bpm["cores"])
    rows = list(csv.DictReader((tmp_path / "c.csv").open()))
    assert len(rows) == 8 and rows[0]["policy"] == "buddy"
    # The DRAM requests and energy of the table and the JSON, in the last columns (earlier ones keep their places).
    header = (tmp_path / "c.csv").read_text().splitlines()[0].split(",")
    assert header[:5] == ["policy", "weighted_speedup", "harmonic_speedup", "maximum_slowdown", "mix_row_buffer_miss_rate"]
    assert header[-3:] == ["dram_requests", "dram_energy_nj", "dram_energy_per_access_nj"]
    for row in rows:
        p = next(p for p in result["policies"] if p["policy"] == row["policy"])
        assert int(row["dram_requests"]) == p["dram_requests"] > 0
        assert float(row["dram_energy_nj"]) == pytest.approx(p["dram_energy_nj"])
        assert float(row["dram_energy_per_access_nj"]) == pytest.approx(p["dram_energy_per_access_nj"])


@pytest.mark.engine
def test_named_mix_is_expanded(memtint, tmp_path):
    code, out, err = memtint("compare", "--machine", "i7-860", "--mix", "stream-light-4", "--policies", "bpm",
                             "--instructions", "100000", "--json", "-")
    assert code == 0, err
    assert json.loads(out)["mix"] == ["stream", "light", "light", "light"]


@pytest.mark.engine
def test_alone_runs_are_cached_and_reused(tmp_path, monkeypatch):
    spec = api.build_sim_spec("i7-860", ["light"], instructions=100000, seed=3)
    first = comparison.alone_run(spec)
    cached = list((tmp_path / "cache" / "alone").glob("*.json"))
    assert len(cached) == 1
    # An entry rewritten with its digest is what comes back: proof the run was not redone.
    entry = json.loads(cached[0].read_text())
    entry["core"]["ipc"] = 123.0
    entry["sha256"] = comparison._entry_digest(entry["core"])
    cached[0].write_text(json.dumps(entry))
    assert comparison.alone_run(spec)["ipc"] == 123.0
    # A damaged entry that still parses is recomputed, not used (an alone IPC of 0, a KeyError).
    entry["core"]["ipc"] = 0
    for damaged in (json.dumps(entry).encode(), b"{}", b"[]", b'{"ipc": 0, "instructions": 5}', b"\xff\xfe",
                    b"[" * 100_000):
        cached[0].write_bytes(damaged)
        assert comparison.alone_run(spec)["ipc"] == pytest.approx(first["ipc"])
    # Another instruction target is another entry.
    other = comparison.alone_run(api.build_sim_spec("i7-860", ["light"], instructions=100001, seed=3))
    assert other["ipc"] == pytest.approx(first["ipc"], rel=0.05)
    assert len(list((tmp_path / "cache" / "alone").glob("*.json"))) == 2


def test_alone_cache_keys_follow_every_file_a_run_reads(tmp_path):
    """A device file the machine file names, a mapping file and a trace inside a phases: program
    are keyed by content: editing one used to reuse the stale alone run (a WS of 6.4 on two programs)."""
    (tmp_path / "dev.toml").write_text((Path(api.__file__).parents[2] / "configs/devices/ddr4-2400.toml").read_text())
    (tmp_path / "m.toml").write_text('[dram]\ndevice = "dev.toml"\nmapping = "RoBaRaCoCh"\n')
    (tmp_path / "map.toml").write_text((Path(api.__file__).parents[2] / "configs/mappings/i7-860.toml").read_text())
    (tmp_path / "t.txt").write_text("10 0x1000\n")
    spec = {"programs": [f"phases:light@1000+{tmp_path / 't.txt'}"], "machine": str(tmp_path / "m.toml"),
            "mapping": str(tmp_path / "map.toml"), "instructions": 1000, "seed": 1, "os": {"policy": "buddy"}}
    keys = [comparison._alone_key(spec)]
    for name, extra in (("dev.toml", "\n# edited\n"), ("map.toml", "\n# edited\n"), ("t.txt", "20 0x2000\n")):
        with open(tmp_path / name, "a") as f:
            f.write(extra)
        keys.append(comparison._alone_key(spec))
    assert len(set(keys)) == 4, keys
    assert comparison._alone_key(spec) == keys[-1]  # and the same files give the same key


def test_metric_formulas_match_hand_computed_values():
    m = api.mix_metrics([{"ipc_alone": 2.0, "ipc_shared": 1.0}, {"ipc_alone": 1.0, "ipc_shared": 0.8},
                         {"ipc_alone": 0.5, "ipc_shared": 0.25}, {"ipc_alone": 1.5, "ipc_shared": 1.5}])
    assert m["weighted_speedup"] == pytest.approx(2.8)
    assert m["harmonic_speedup"] == pytest.approx(0.64)
    assert m["maximum_slowdown"] == pytest.approx(2.0)


@pytest.mark.engine
@pytest.mark.parametrize(
    "args,needles",
    [
        (["--mix", "stream", "--policies", "bmp"], ["unknown placement policy 'bmp'", "bpm-plus"]),
        (["--mix", "stream,nosuch.trace"], ["--mix nosuch.trace", "not a built-in profile"]),
        # Every unknown program of a mix at once, each with the closest names.
        (["--mix", "tirad,bfs,lite,light"], ["--mix tirad (did you mean triad", "lite (did you mean sqlite, light?)"]),
        (["--mix", "triad,real-intensive-4"], ["real-intensive-4: a named mix stands alone"]),
        (["--mix", "light,light,light,light,light"], ["5 programs", "4 cores"]),
        # An unknown mix name suggests the mix presets too.
        (["--mix", "intensive4"], ["not a named mix", "did you mean intensive-4", "real-intensive-4"]),
        # An empty entry used to be dropped: two programs ran where three were written.
        (["--mix", "stream,,light"], ["--mix stream,,light", "program 2 is empty"]),
        (["--mix", "light", "--policies", "buddy,,bpm"], ["--policies buddy,,bpm", "policy 2 is empty"]),
        (["--mix", "light", "--warmup", "-1"], ["--warmup", "expected an instruction count"]),
        (["--mix", "light", "--warmup", "lots"], ["--warmup", "like 2000000, 2M or 1.5G"]),
    ],
)
def test_compare_errors_are_one_clear_line(memtint, clean_error, args, needles):
    clean_error(memtint("compare", "--machine", "i7-860", "--instructions", "1000", *args), *needles)


@pytest.mark.engine
@pytest.mark.engine
def test_a_run_file_in_a_symlinked_directory_names_traces_as_the_kernel_finds_them(memtint, tmp_path):
    # view/cfg -> real/a: "../../t.mtt.gz" from view/cfg/runs/ is real/t.mtt.gz, not view/t.mtt.gz
    # (folding ".." by name gave "no such file"); the inputs of the run are found the same way.
    import shutil

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    (tmp_path / "real" / "a" / "runs").mkdir(parents=True)
    shutil.copy(os.path.join(root, "workloads", "traces", "bfs.t1.mtt.gz"), tmp_path / "real" / "t.mtt.gz")
    (tmp_path / "real" / "a" / "runs" / "run.toml").write_text(
        'machine = "i7-860"\nprograms = ["../../t.mtt.gz", "light"]\ninstructions = 20000\nwarmup = 0\n')
    (tmp_path / "view").mkdir()
    os.symlink(tmp_path / "real" / "a", tmp_path / "view" / "cfg")
    code, _, err = memtint("sim", "view/cfg/runs/run.toml", "--json", "out.json")
    assert code == 0, err
    assert json.loads((tmp_path / "out.json").read_text())["cores"][0]["program"] == str(tmp_path / "real" / "t.mtt.gz")
    code, _, err = memtint("sim", "view/cfg/runs/run.toml", "--json", "real/t.mtt.gz")
    assert code == 2 and "is an input of this command" in err, err


def test_sim_config_errors(memtint, clean_error, tmp_path):
    clean_error(memtint("sim", tmp_path / "missing.toml"), "missing.toml")
    cfg = write_config(tmp_path, 'machine = "i7-860"\nprograms = ["stream"]\n')
    clean_error(memtint("sim", cfg), "missing key 'instructions'")
    cfg = write_config(tmp_path, 'machine = "i7-860"\nprograms = ["stream"]\ninstructions = 10\nturbo = true\n')
    clean_error(memtint("sim", cfg), "unknown key(s) turbo")
    cfg = write_config(tmp_path, 'machine = "i7-860"\nprograms = ["stream"]\ninstructions = 1000\n'
                                 '[os]\npolicy = "bpm"\ncolours = [[0, 99]]\n')
    clean_error(memtint("sim", cfg), "colour 99 does not exist")
    bad = tmp_path / "bad.trace"
    bad.write_text("1 0x40\n2 oops\n")
    cfg = write_config(tmp_path, f'machine = "ddr4-2400"\nprograms = ["{bad}"]\ninstructions = 1000\n')
    clean_error(memtint("sim", cfg), "bad.trace:2")


@pytest.mark.engine
def test_convert_round_trips_through_the_binary_format(memtint, tmp_path):
    text = tmp_path / "t.trace"
    text.write_text("".join(f"{i % 7} {0x1000 + 64 * i}{' 0x9000' if i % 5 == 0 else ''}\n" for i in range(1000)))
    code, out, err = memtint("convert", text, tmp_path / "t.mtt")
    assert code == 0, err
    assert "1000 records" in out
    assert api.cpu_trace_stats(str(tmp_path / "t.mtt")) == api.cpu_trace_stats(str(text))


@pytest.mark.engine
@pytest.mark.skipif(not os.path.isdir(SPEC_TRACES), reason="SPEC traces not available")
def test_spec_trace_runs_from_the_api():
    trace = os.path.join(SPEC_TRACES, "456.hmmer.gz")
    stats = memtint.run_sim("ddr4-2400", [trace, "stream"], instructions=500000)
    assert stats["cores"][0]["instructions"] == 500000 and stats["cores"][0]["ipc"] > 0


@pytest.mark.engine
def test_results_as_dataframes_have_one_row_per_core_with_run_metrics():
    sim = memtint.run_sim("i7-860", ["stream", "light"], instructions=100000, policy="bpm")
    df = memtint.to_frame(sim)
    assert len(df) == 2 and list(df["program"]) == ["stream", "light"]
    assert (df["policy"] == "bpm").all() and (df["mix_row_buffer_miss_rate"] == sim["row_buffer_miss_rate"]).all()
    assert df["ipc"].tolist() == [c["ipc"] for c in sim["cores"]]
    cmp = memtint.compare("i7-860", ["stream", "light"], ["buddy", "bpm"], instructions=100000)
    df = memtint.to_frame(cmp)
    assert len(df) == 4 and set(df["policy"]) == {"buddy", "bpm"}
    assert df.groupby("policy")["weighted_speedup"].nunique().eq(1).all()
    with pytest.raises(memtint.MemtintError, match="not a run_sim or compare result"):
        memtint.to_frame({"kind": "dram"})


@pytest.mark.engine
def test_a_machine_given_as_a_dictionary_runs_and_compares():
    machine = {"name": "small", "dram": {"device": "ddr4-2400", "density_gbit": 8, "mapping": "RoBaRaCoCh"},
               "cpu": {"cores": 2}, "cache": {"llc": {"size_bytes": 1 << 20, "ways": 8, "latency": 20, "mshrs": 16}}}
    stats = memtint.run_sim(machine, ["stream", "light"], instructions=100000)
    assert stats["config"]["machine"] == "small"
    cmp = memtint.compare(machine, ["stream", "light"], ["buddy", "random-interleave"], instructions=100000)
    assert len(cmp["policies"]) == 2
    with pytest.raises(memtint.MemtintError, match="chanels"):
        memtint.run_sim({**machine, "dram": {**machine["dram"], "chanels": 2}}, ["stream"], instructions=10)


@pytest.mark.engine
def test_sim_and_compare_take_set_overrides(memtint, clean_error, tmp_path):
    cfg = write_config(tmp_path, 'machine = "i7-860"\nprograms = ["stream", "light"]\ninstructions = 100000\n'
                                 '[overrides.controller]\nscheduler = "fcfs"\n')
    code, out, err = memtint("sim", cfg, "--json", "-")
    assert code == 0, err
    assert json.loads(out)["config"]["scheduler"] == "fcfs"
    # --set wins over the file's [overrides].
    code, out, err = memtint("sim", cfg, "--set", "controller.scheduler=fr-fcfs", "--json", "-")
    assert code == 0, err
    assert json.loads(out)["config"]["scheduler"] == "fr-fcfs"
    code, _, err = memtint("compare", "--machine", "i7-860", "--mix", "stream,light", "--instructions", "100000",
                           "--set", "controller.write_idle_drain_min=9", "--no-cache")
    assert code == 0, err
    clean_error(memtint("compare", "--machine", "i7-860", "--mix", "stream,light", "--instructions", "1000",
                        "--set", "controller.turbo=1"), "turbo")


@pytest.mark.engine
def test_sim_with_the_stream_prefetcher_reports_prefetches_and_passes_the_timing_checker(memtint, tmp_path):
    cfg = write_config(tmp_path, 'machine = "i7-860"\nprograms = ["stream", "light"]\ninstructions = 200000\n'
                                 'check = true\n[overrides.cache.prefetcher]\nkind = "stream"\n')
    code, out, err = memtint("sim", cfg, "--json", "-")
    assert code == 0, err
    stats = json.loads(out)
    assert stats["config"]["cache"]["prefetcher"]["kind"] == "stream"
    assert stats["dram"]["violations"] == 0 and stats["dram"]["commands_checked"] > 0
    stream = stats["cores"][0]["prefetch"]
    assert set(stream) == {"issued", "useful", "late", "useless", "dropped", "redundant"}
    assert stream["issued"] > 1000 and stream["useful"] + stream["late"] > stream["issued"] // 2
    # Off (the default), there is no prefetch key at all.
    code, out, err = memtint("sim", cfg, "--set", "cache.prefetcher.kind=none", "--json", "-")
    assert code == 0, err
    assert all("prefetch" not in c for c in json.loads(out)["cores"])


@pytest.mark.engine
@pytest.mark.parametrize(
    "setting, needles",
    [
        ("cache.prefetcher.kind=ip-stride", ["cache.prefetcher.kind", "none", "next-line", "stream"]),
        ("cache.prefetcher.degree=0", ["cache.prefetcher.degree", "at least 1"]),
        ("cache.prefetcher.distance=1", ["cache.prefetcher.distance", "at least degree"]),
        ("cache.prefetcher.trackers=0", ["cache.prefetcher.trackers"]),
    ],
)
def test_sim_prefetcher_errors_are_one_clear_line(memtint, clean_error, tmp_path, setting, needles):
    cfg = write_config(tmp_path, 'machine = "i7-860"\nprograms = ["stream"]\ninstructions = 1000\n'
                                 '[overrides.cache.prefetcher]\nkind = "stream"\n')
    clean_error(memtint("sim", cfg, "--set", setting), *needles)


@pytest.mark.engine
def test_compare_warms_up_by_default_and_says_so(memtint, tmp_path):
    code, out, err = memtint("compare", "--machine", "ddr4-2400", "--mix", "copy,light", "--policies", "buddy",
                             "--instructions", "100000", "--json", tmp_path / "warm.json")
    assert code == 0, err
    warm = json.loads((tmp_path / "warm.json").read_text())
    assert warm["warmup"] == comparison.DEFAULT_WARMUP
    code, out, err = memtint("compare", "--machine", "ddr4-2400", "--mix", "copy,light", "--policies", "buddy",
                             "--instructions", "100000", "--warmup", "0")
    assert code == 0, err
    assert "warm-up: 0 instructions per core" in out
    cold = comparison.compare("ddr4-2400", ["copy", "light"], ["buddy"], instructions=100000, warmup=0)
    # Warm, the copy's dirty lines fill the LLC and its victims reach DRAM.
    writes = lambda r: r["policies"][0]["cores"][0]["ipc_shared"]  # noqa: E731
    assert writes(warm) != writes(cold)


@pytest.mark.engine
def test_compare_on_the_bpm_plus_machine_says_its_baseline_differs(memtint):
    code, out, err = memtint("compare", "--machine", "i7-860-bpm-plus", "--mix", "light,light", "--policies",
                             "buddy,bpm", "--instructions", "20000", "--warmup", "0")
    assert code == 0, err
    assert "note:" in out and "weaker" in out and "i7-860" in out


def test_compare_refuses_a_directory_as_output_before_simulating(memtint, clean_error, tmp_path):
    # It used to fail only after the whole simulation, losing the results.
    for option in ("--csv", "--json"):
        clean_error(memtint("compare", "--machine", "i7-860", "--mix", "light", "--instructions", "1000000000",
                            option, tmp_path), option, "is a directory")


@pytest.mark.engine
def test_convert_refuses_to_overwrite_its_input(memtint, clean_error, tmp_path):
    trace = tmp_path / "t.txt"
    trace.write_text("3 4096\n0 8192 12288\n")
    mtt = tmp_path / "t.mtt"
    assert memtint("convert", trace, mtt)[0] == 0
    before = mtt.read_bytes()
    for extra in ([], ["--to", "ramulator"]):
        clean_error(memtint("convert", mtt, mtt, *extra), "is an input of this command")
        assert mtt.read_bytes() == before
    # An .mtt input is read as .mtt, whatever the output format.
    code, out, err = memtint("convert", mtt, tmp_path / "copy.mtt")
    assert code == 0 and "2 records" in out, err
    # A .mtt cannot go to a device or pipe (its header is written last, by a seek): refused before
    # anything is written; Ramulator text can, and its size is not read back from the device.
    clean_error(memtint("convert", trace, "/dev/null"), "OUT /dev/null: is not a regular file", "--to ramulator")
    code, out, err = memtint("convert", mtt, "/dev/null", "--to", "ramulator")
    assert code == 0 and "2 records" in out and "written to a pipe or device" in out and "0 bytes" not in out, out + err


@pytest.mark.engine
def test_the_example_run_file_runs(memtint, tmp_path):
    example = os.path.join(os.path.dirname(__file__), "..", "..", "configs", "runs", "example.toml")
    code, out, err = memtint("sim", example, "--set", "controller.write_handling=ramulator", "--json", tmp_path / "r.json")
    assert code == 0, err
    stats = json.loads((tmp_path / "r.json").read_text())
    assert stats["policy"] == "bpm" and stats["config"]["warmup"] == 20_000_000
    assert stats["config"]["writes"]["handling"] == "ramulator"


@pytest.mark.engine
def test_the_cat_and_mba_run_file_partitions_the_llc_and_bandwidth(memtint, tmp_path):
    run = os.path.join(os.path.dirname(__file__), "..", "..", "configs", "runs", "cat-and-mba.toml")
    code, out, err = memtint("sim", run, "--json", tmp_path / "r.json")
    assert code == 0, err
    assert "resctrl: CAT ways [4, 12]" in out and "MBA [50, 100] % of peak" in out
    stats = json.loads((tmp_path / "r.json").read_text())
    assert stats["resctrl"]["schemes"] == ["cat", "mba"]
    assert stats["cores"][0]["throttled_requests"] > 0 and stats["cores"][1]["throttled_requests"] == 0
    code, _, err = memtint("sim", run, "--set", "os.mba.percent=[55, 100]")
    assert code != 0 and "os.mba.percent" in err and "55" in err


@pytest.mark.engine
def test_the_dynamic_bpm_run_file_lends_colours_instead_of_swapping(memtint, tmp_path):
    run = os.path.join(os.path.dirname(__file__), "..", "..", "configs", "runs", "dynamic-bpm.toml")
    code, out, err = memtint("sim", run, "--json", tmp_path / "dynamic.json")
    assert code == 0, err
    assert "dynamic-bpm:" in out and "colours lent" in out and "swap:" in out
    dynamic = json.loads((tmp_path / "dynamic.json").read_text())
    code, out, err = memtint("sim", run, "--set", "os.dynamic=none", "--json", tmp_path / "static.json")
    assert code == 0, err
    assert "dynamic-bpm:" not in out
    static = json.loads((tmp_path / "static.json").read_text())
    assert dynamic["dynamic"]["colours_lent"] >= 4 and "dynamic" not in static
    assert dynamic["swap"]["swap_outs"] * 100 < static["swap"]["swap_outs"]
    code, _, err = memtint("sim", run, "--set", "os.dynamic-bpm.epoch_ns=5")
    assert code != 0 and "os.dynamic-bpm.epoch_ns" in err


@pytest.mark.engine
def test_dynamic_bpm_plus_says_what_its_channel_step_read_and_decided(memtint, tmp_path):
    # Four equal streams are balanced: no repartition, and the line says every measured epoch
    # kept the channels, at a UF under the threshold.
    run = tmp_path / "run.toml"
    streams = ", ".join(['"stream:footprint_bytes=12582912"'] * 4)
    run.write_text(f'machine = "i7-860-bpm-plus"\nprograms = [{streams}]\ninstructions = 200_000\n'
                   '[os]\npolicy = "bpm-plus"\ndynamic = "dynamic-bpm-plus"\n[os.dynamic-bpm-plus]\nepoch_ns = 20_000\n')
    code, out, err = memtint("sim", run, "--json", tmp_path / "s.json")
    assert code == 0, err
    c = json.loads((tmp_path / "s.json").read_text())["dynamic"]["channel_balance"]
    assert c["changed"] == 0 and c["kept"] >= 3 and c["uf_max"] < c["uf_threshold"] == 0.2, c
    assert f"channels {c['kept']} kept" in " ".join(out.split()) and "(threshold 0.2)" in out, out


@pytest.mark.engine
def test_the_tiering_run_file_runs_one_program_over_two_nodes(memtint, tmp_path):
    run = os.path.join(os.path.dirname(__file__), "..", "..", "configs", "runs", "tiering.toml")
    code, out, err = memtint("sim", run, "--set", "os.policy=local", "--json", tmp_path / "local.json")
    assert code == 0, err
    assert "node 0 dram:" in out and "node 1 nvm:" in out and "run time" in out
    code, _, err = memtint("sim", run, "--json", tmp_path / "bw.json")
    assert code == 0, err
    local, bw = (json.loads((tmp_path / f).read_text()) for f in ("local.json", "bw.json"))
    assert [n["pages"] for n in local["nodes"]] == [32768, 32768]  # first touch: 4 threads per node
    # BW-INTERLEAVE's 2:1 per thread: 8192 pages = 2730 cycles of 2 + 1, and 2 left over for DRAM.
    assert [n["pages"] for n in bw["nodes"]] == [8 * (2 * 2730 + 2), 8 * 2730]
    # The copies wait at the end: the job's run time is the last one's, and shorter under BW-I.
    run_time = lambda s: max(p["run_time_cycles"] for p in s["processes"])  # noqa: E731
    for s in (local, bw):
        assert run_time(s) == max(c["finished_at"] for c in s["cores"])
    assert run_time(bw) < run_time(local)


def test_sim_config_run_level_at_end_and_barriers_reach_the_engine(memtint, tmp_path):
    # A run-level at_end used to be accepted and dropped.
    cfg = write_config(tmp_path, 'machine = "i7-860"\ninstructions = 40000\nat_end = "wait"\nbarrier_every = 10000\n'
                                 '[[processes]]\nthreads = ["stream:reads_pki=300", "light", "light", "light"]\n')
    code, _, err = memtint("sim", cfg, "--json", tmp_path / "out.json")
    assert code == 0, err
    stats = json.loads((tmp_path / "out.json").read_text())
    assert [c["barriers"] for c in stats["cores"]] == [3, 3, 3, 3]
    light_wait = min(c["barrier_wait_cycles"] for c in stats["cores"][1:])
    assert light_wait > stats["cores"][0]["barrier_wait_cycles"]
    p = stats["processes"][0]
    end = p["run_time_cycles"]
    assert p["barrier_idle_cycles"] == p["barrier_wait_cycles"] + sum(end - c["finished_at"] for c in stats["cores"])


@pytest.mark.parametrize("line, needles", [
    ('at_end = "stop"', ['at_end: expected "continue", "wait" or "exit"']),
    ("barrier_every = 0", ["barrier_every: expected a whole number of instructions >= 1"]),
    ('instructions = "lots"', [":3:", "instructions: expected a whole number"]),
    ("instructions = 1.5", [":3:", "instructions: expected a whole number", "1.5"]),
    ("instructions = -5", [":3:", "instructions"]),
    ('seed = "x"', ["seed: expected a whole number"]),
    ("seed = 9223372036854775808", ["seed: expected a whole number from 0 to 2^63-1"]),
    ("check = \"yes\"", ["check: expected true or false"]),
    ('os = "bpm"', ["os: expected an [os] table"]),
])
def test_sim_config_values_of_the_wrong_kind_name_the_file_line_and_key(memtint, clean_error, tmp_path, line, needles):
    # They used to be "internal error: ValueError/TypeError ..." with no key, or silently rounded.
    key = line.split("=")[0].strip()
    rows = ['machine = "i7-860"', 'programs = ["stream"]', line if key == "instructions" else "instructions = 1000"]
    if key != "instructions":
        rows.append(line)
    cfg = write_config(tmp_path, "\n".join(rows) + "\n")
    clean_error(memtint("sim", cfg), "run.toml", *needles)


@pytest.mark.parametrize("text, needles", [
    ('machine = 5\nprograms = ["stream"]\ninstructions = 10\n', ["run.toml:1:", "machine: expected"]),
    ('machine = "i7-860"\nprograms = [1, 2]\ninstructions = 10\n', ["run.toml:2:", "programs: expected a list"]),
    ('machine = "i7-860"\nprograms = "stream"\ninstructions = 10\n', ["run.toml:2:", "programs: expected a list"]),
    ('machine = "i7-860"\nprograms = ["stream"]\ninstructions = 10\n[os]\npolicy = 5\n', ["os.policy: expected"]),
])
def test_sim_config_tables_of_the_wrong_kind_are_named(memtint, clean_error, tmp_path, text, needles):
    clean_error(memtint("sim", write_config(tmp_path, text)), *needles)


def test_sim_config_that_is_not_utf8_names_file_and_line(memtint, clean_error, tmp_path):
    cfg = tmp_path / "run.toml"
    cfg.write_bytes(b'machine = "i7-860"\n# caf\xe9\n')
    clean_error(memtint("sim", cfg), "run.toml:2:", "not UTF-8", "0xe9")


def test_engine_errors_in_a_run_file_name_its_line_too(memtint, clean_error, tmp_path):
    # The engine names the key; the CLI adds the run file's line that sets it.
    cfg = write_config(tmp_path, 'machine = "i7-860"\nprograms = ["stream"]\ninstructions = 1000\n'
                                 '[os]\npolicy = "bpm"\ncolours = [[0, 99]]\n')
    clean_error(memtint("sim", cfg), "run.toml:6:", "os.colours", "colour 99 does not exist")
    cfg = write_config(tmp_path, 'machine = "i7-860"\nprograms = ["stream"]\ninstructions = 1000\n'
                                 '[overrides.controller]\nread_queue = 0\n')
    clean_error(memtint("sim", cfg), "run.toml:5:", "controller.read_queue")
    # A value given by --set is blamed on the --set, not on the file's line it replaced.
    cfg = write_config(tmp_path, 'machine = "i7-860"\nprograms = ["stream"]\ninstructions = 1000\n'
                                 '[os]\npolicy = "bpm"\noverflow = "borrow"\n')
    err = clean_error(memtint("sim", cfg, "--set", "os.overflow=bogus"), "--set os.overflow=bogus:", "unknown overflow")
    assert "run.toml:6" not in err
    # A named vertical policy's bits are its own: the error names the policy, not os.vertical.bits.
    cfg = write_config(tmp_path, 'machine = "ddr4-2400"\nprograms = ["stream"]\ninstructions = 1000\n'
                                 '[os]\npolicy = "hvr"\ndynamic = "hvr-online"\n')
    err = clean_error(memtint("sim", cfg), "run.toml:5:", "os.policy", "'hvr' is HVR's (i, j, k) = (2, 3, 2)")
    assert "os.vertical.bits" not in err


@pytest.mark.engine
def test_alone_runs_default_to_linux_placement_on_the_machine(memtint):
    from memtint import comparison

    assert comparison.default_baseline("i7-860") == "buddy"
    assert comparison.default_baseline("tiering-2to1") == "local"
    assert comparison.default_baseline({"nodes": [{"cores": 2}, {"cores": 2}]}) == "local"
    # compare runs on a two-node machine without --baseline (buddy is refused there).
    code, out, err = memtint("compare", "--machine", "tiering-2to1", "--mix", "stream,light,light,light,light,light,light,light",
                             "--policies", "bw-interleave", "--instructions", "5000", "--warmup", "0")
    assert code == 0, err
    assert "alone runs under local" in out


@pytest.mark.parametrize("tail, needles", [
    # An unknown key inside a table is named at its own line, not at the table's header.
    ('[sampling]\nunit = 20000\nbogus = 3\n', ["run.toml:6:", "unknown field `bogus`"]),
    # A key of one table is not found in another that has a key of the same name.
    ('[os.recolour]\nmode = "lazy"\n[sampling]\nmode = 5\n', ["run.toml:7:", "sampling.mode"]),
    ('[sampling]\nunit = 2.5\n', ["run.toml:5:", "sampling.unit", "expected a whole number, got 2.5"]),
    # TOML reads 1e20 as a float: the message says so, not "floating point, expected a whole number".
    ('sampling.unit = 1e20\n', ["run.toml:4:", "expected a whole number, got 1e+20", "write the digits"]),
])
def test_sim_config_errors_inside_tables_name_the_key_s_own_line(memtint, clean_error, tmp_path, tail, needles):
    cfg = write_config(tmp_path, 'machine = "i7-860"\nprograms = ["light"]\ninstructions = 1000\n' + tail)
    clean_error(memtint("sim", cfg), *needles)


@pytest.mark.parametrize("tail, needles", [
    # A key that goes on past an array table's key used to be placed at [os] or at the
    # process's first key.
    ('[os]\npolicy = "tintmalloc"\n[[os.tintmalloc.threads]]\nnode = 1\nbanks = [8]\n[[os.tintmalloc.threads]]\n',
     ["run.toml:8:", "os.tintmalloc.threads[0].banks[0]: colour 8 does not exist"]),
    ('[[processes]]\nthreads = ["light"]\naffinity = [-1]\n', ["run.toml:5:", "processes[0].affinity[0]"]),
])
def test_a_key_inside_an_array_table_s_key_is_named_at_its_line(memtint, clean_error, tmp_path, tail, needles):
    programs = 'programs = ["stream", "stream"]\n' if "tintmalloc" in tail else ""
    cfg = write_config(tmp_path, f'machine = "opteron-6128"\ninstructions = 1000\n{programs}' + tail)
    clean_error(memtint("sim", cfg), *needles)


@pytest.mark.parametrize("line", ['mapping = "RoRaBaCoBgXx"', '[overrides.dram]\nmapping = "RoRaBaCoBgXx"'])
def test_a_layout_that_does_not_parse_is_named_at_the_mapping_s_line(memtint, clean_error, tmp_path, line):
    # The engine named a key "layout", which no file has: the error had no line.
    cfg = write_config(tmp_path, f'machine = "i7-860"\nprograms = ["light"]\ninstructions = 1000\n{line}\n')
    where = 5 if "overrides" in line else 4
    clean_error(memtint("sim", cfg), f"run.toml:{where}:", "dram.mapping: 'RoRaBaCoBgXx': unknown code")


@pytest.mark.parametrize("line, needles", [
    # A non-string at_end used to give "not valid JSON ... NaN" with no file or line.
    ("at_end = 3", ["run.toml:7:", 'processes[1].at_end: expected "continue", "wait" or "exit", got 3']),
    ("at_end = true", ["run.toml:7:", "processes[1].at_end", "got true"]),
    ('arrive_ns = "soon"', ["run.toml:7:", "processes[1].arrive_ns: expected a number"]),
    ("instructions = 2.5", ["run.toml:7:", "processes[1].instructions: expected a whole number"]),
])
def test_a_process_key_of_the_wrong_kind_is_named_at_its_line(memtint, clean_error, tmp_path, line, needles):
    cfg = write_config(tmp_path, 'machine = "i7-860"\ninstructions = 1000\n[[processes]]\nthreads = ["light"]\n'
                                 f'at_end = "wait"\n[[processes]]\n{line}\nthreads = ["light"]\n')
    clean_error(memtint("sim", cfg), *needles)


def test_a_run_wide_exit_at_end_is_accepted_as_documented(memtint, tmp_path):
    cfg = write_config(tmp_path, 'machine = "i7-860"\nprograms = ["stream", "light"]\ninstructions = 5000\n'
                                 'at_end = "exit"\n')
    code, _, err = memtint("sim", cfg, "--json", tmp_path / "o.json")
    assert code == 0, err


@pytest.mark.engine
def test_compare_says_that_os_settings_do_not_reach_the_alone_runs(memtint):
    # The help used to say every --set is "used by the alone runs too"; os.* settings are not.
    code, out, err = memtint("compare", "--machine", "i7-860", "--mix", "light,light", "--policies", "buddy",
                             "--instructions", "3000", "--warmup", "0", "--set", "os.colour_split=strided")
    assert code == 0, err
    assert "--set os.colour_split: applied to the policies' runs" in " ".join(out.split())
    code, out, _ = memtint("compare", "--help")
    assert "os.* settings by the policies' runs only" in " ".join(out.split())


@pytest.mark.engine
def test_compare_names_an_os_set_a_policy_refuses_and_labels_a_dynamic_policys_row(memtint, clean_error, tmp_path):
    # The engine's error used to come alone, naming neither the --set nor that it reaches every
    # policy's run; the bpm row of a dynamic-bpm comparison was plain "bpm" without its statistics.
    dynamic = ("--set", "os.dynamic=dynamic-bpm", "--set", "os.dynamic-bpm.epoch_ns=50000")
    clean_error(memtint("compare", "--machine", "i7-860", "--mix", "stream,light", "--policies", "buddy,bpm",
                        "--instructions", "3000", "--warmup", "0", *dynamic),
                "--set os.dynamic=dynamic-bpm:", "every policy compared: buddy, bpm")
    code, out, err = memtint("compare", "--machine", "i7-860", "--mix", "stream,light", "--policies", "bpm",
                             "--instructions", "100000", "--warmup", "0", *dynamic, "--json", "-")
    assert code == 0, err
    bpm = json.loads(out)["policies"][0]
    assert bpm["policy"] == "bpm" and bpm["label"] == "bpm + dynamic-bpm"
    assert bpm["dynamic"]["policy"] == "dynamic-bpm" and "repartitions" in bpm["dynamic"]
    code, out, err = memtint("compare", "--machine", "i7-860", "--mix", "stream,light", "--policies", "bpm",
                             "--instructions", "100000", "--warmup", "0", *dynamic)
    assert code == 0, err
    assert "bpm + dynamic-bpm" in out and "bpm + dynamic-bpm: " in out
    # The CSV names it too; a static comparison's CSV has no such column.
    code, out, err = memtint("compare", "--machine", "i7-860", "--mix", "stream,light", "--policies", "bpm",
                             "--instructions", "100000", "--warmup", "0", *dynamic, "--csv", str(tmp_path / "d.csv"))
    assert code == 0, err
    header, first = (tmp_path / "d.csv").read_text().splitlines()[:2]
    assert header.startswith("policy,dynamic_policy,weighted_speedup") and first.startswith("bpm,dynamic-bpm,"), out
    code, out, err = memtint("compare", "--machine", "i7-860", "--mix", "stream,light", "--policies", "bpm",
                             "--instructions", "3000", "--warmup", "0", "--csv", str(tmp_path / "s.csv"))
    assert code == 0, err
    assert "dynamic_policy" not in (tmp_path / "s.csv").read_text().splitlines()[0]


@pytest.mark.engine
def test_instruction_counts_take_the_suffixes_their_help_uses(memtint, tmp_path):
    # "default 10M" in the help, and 10M used to be refused ("expected an integer").
    code, _, err = memtint("compare", "--machine", "i7-860", "--mix", "light", "--policies", "buddy",
                           "--instructions", "2K", "--warmup", "0.001M", "--json", tmp_path / "c.json")
    assert code == 0, err
    result = json.loads((tmp_path / "c.json").read_text())
    assert result["instructions"] == 2000 and result["warmup"] == 1000


@pytest.mark.engine
def test_the_table_title_gives_the_lengths_threads_ran(memtint):
    # The open mix's newcomer runs 2,000,000 instructions; the title used to say 300,000 for all.
    run = os.path.join(os.path.dirname(__file__), "..", "..", "configs", "runs", "open-mix.toml")
    code, out, err = memtint("sim", run)
    assert code == 0, err
    assert "300,000 to 2,000,000 instructions per core" in out
    # Its system time is the newcomer's major faults, not the colours dynamic BPM copied: the
    # warning about copies used to count every kernel cycle as theirs.
    assert "major faults" in out and "re-colouring took" not in out + err, out + err


def test_an_os_seed_given_is_used_even_when_it_is_1():
    # os.seed = 1 counted as unset, so a run of seed 2 placed pages by 2 whatever [os] said.
    # A trace program draws nothing from the run's seed: only the frame order's seed matters.
    def run(seed, os_options):
        stats = api.run_sim("i7-860", ["triad", "bfs"], instructions=50_000, seed=seed, os_options=os_options)
        return [(c["dram_reads"], c["row_hits"], c["cycles"]) for c in stats["cores"]], stats["config"]["os"]["seed"]

    first, used = run(1, {})
    assert used == 1
    given, used = run(2, {"seed": 1})
    assert used == 1 and given == first
    unset, used = run(2, {})
    assert used == 2 and unset != first
