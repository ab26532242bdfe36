"""The `memtint` command: listings, runs, and every user mistake as one clean error line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import memtint

DOCUMENTED_KEYS = {
    "schema_version", "config", "requests", "reads", "writes", "row_hits", "row_misses",
    "row_conflicts", "read_latency", "read_latency_ns", "dram_cycles", "simulated_ns",
    "bandwidth_gbps", "peak_bandwidth_gbps", "commands", "refreshes", "queue_occupancy",
    "wall_seconds", "requests_per_second", "vector_isa", "channels",
}
LATENCY_KEYS = {"mean", "p50", "p90", "p99", "p999", "max"}
COMMAND_KEYS = {"ACT", "PRE", "PREA", "RD", "WR", "RDA", "WRA", "REF", "REFPB", "REFSB"}
REPO = Path(__file__).resolve().parents[2]
SMALL_RUN = ("dram", "--machine", "ddr4-2400", "--generate", "random", "--requests", "2000", "--seed", "1")


def test_version_flag_prints_the_package_version(memtint):
    code, out, _ = memtint("--version")
    assert code == 0
    assert out.strip() == f"memtint {memtint_version()}"


def memtint_version() -> str:
    return memtint.__version__


def test_components_describe_themselves_in_the_catalogue(memtint):
    catalogue = memtint_api_presets()
    for key, names in (("scheduler_info", "schedulers"), ("row_policy_info", "row_policies"),
                       ("refresh_info", "refresh"), ("placement_policy_info", "placement_policies")):
        assert [c["name"] for c in catalogue[key]] == catalogue[names]
        assert all(c["summary"] for c in catalogue[key]), key
    fast = {s["name"] for s in catalogue["scheduler_info"] if s["fast_path"]}
    assert fast == {"fcfs", "fr-fcfs", "fr-fcfs-cap"}
    from memtint import comparison
    assert comparison.profiled_policies() == {"mcp", "imps", "bpm-plus-balanced"}
    binding = {p["name"]: p["binds_threads"] for p in catalogue["placement_policy_info"] if p["binds_threads"]}
    assert binding == {"ccps": "ccps"}
    code, out, _ = memtint("dram", "--help")
    assert code == 0 and ", ".join(catalogue["schedulers"]) in " ".join(out.split())
    code, out, _ = memtint("presets")
    assert code == 0 and "needs profiles" in out and "lane controller" in out
    # Each component's parameter table with its defaults, as the catalogue declares them.
    flat = " ".join(out.split())  # as printed: without the terminal's markup
    assert "[os.vertical] bits (none)" in flat and "[os.ccps] banks_per_core 16, delta 5" in flat, out
    tcm = next(s for s in catalogue["scheduler_info"] if s["name"] == "tcm")
    assert tcm["params"]["quantum"] == 1_000_000 and "quantum 1_000_000" in flat
    assert '[os.hvr-online] epoch_ns 1_000_000.0, recolour false, rules "paper"' in flat, out


def test_presets_prints_every_parameters_default_as_toml_reads_it_back():
    # Printed as Python's `True`, `paper` unquoted and 6.554e+04 for 65536: not what a table
    # copied from the listing may hold.
    from memtint.tables import _param
    from memtint.toml_files import tomllib

    seen = 0
    for kind in ("scheduler_info", "row_policy_info", "refresh_info", "placement_policy_info",
                 "migration_policy_info", "dynamic_policy_info", "resctrl_info"):
        for component in memtint.presets()[kind]:
            for name, default in component["params"].items():
                if default is None:
                    continue
                seen += 1
                read = tomllib.loads(f"{name} = {_param(default)}")[name]
                assert type(read) is type(default), (component["name"], name, _param(default))
                assert read == pytest.approx(default, rel=1e-3) if isinstance(default, float) else read == default, \
                    (component["name"], name, _param(default))
    assert seen >= 60


def test_presets_lists_every_machine_and_layout(memtint):
    catalogue = memtint_presets_json(memtint)
    assert catalogue == memtint_api_presets()
    names = [m["name"] for m in catalogue["machines"]]
    assert "ddr4-2400" in names and "i7-860" in names
    code, out, err = memtint("presets")
    assert code == 0, err
    listed = names + catalogue["layouts"] + catalogue["schedulers"] + [d["name"] for d in catalogue["devices"]]
    listed += catalogue["placement_policies"] + catalogue["profiles"] + [m["name"] for m in catalogue["mixes"]]
    assert catalogue["prefetchers"] == ["none", "next-line", "stream"]
    listed += catalogue["prefetchers"]
    assert [s["name"] for s in catalogue["rt_schedule_info"]] == ["edf", "rm", "colored", "crs"]
    assert "rt schedule" in out
    for name in listed:
        assert name in out, f"{name} missing from `memtint presets`"
    for heading in ("Machines", "Devices", "Mappings", "schedulers", "row policies", "refresh managers", "generators",
                    "placement policies", "workload profiles", "Mixes"):
        assert heading in out


def memtint_presets_json(memtint) -> dict:
    code, out, err = memtint("presets", "--json")
    assert code == 0, err
    return json.loads(out)


def memtint_api_presets() -> dict:
    return memtint.presets()


@pytest.mark.engine
def test_dram_generated_run_reports_the_documented_keys(memtint):
    code, out, err = memtint(*SMALL_RUN, "--check")
    assert code == 0, err
    assert "Traceback" not in err
    for label in ("Requests", "Row hits", "Row misses", "Row conflicts", "Read latency", "Bandwidth",
                  "Refreshes", "Simulated time", "Wall time", "Timing violations"):
        assert label in out, f"{label} missing from the summary"
    assert "2,000" in out
    for label in ("p50", "p90", "p99", "p99.9", "max", "cycles", "ns", "peak", "tREFI"):
        assert label in out
    # the command counts a DRAM simulator's user reads first (only in --json before)
    code, text, _ = memtint(*SMALL_RUN, "--json", "-")
    commands = json.loads(text)["commands"]
    shown = " · ".join(f"{name} {commands[name]:,}" for name in ("ACT", "PRE", "PREA", "RD", "REF") if commands[name])
    assert commands["ACT"] and commands["RD"] and f"Commands {shown}" in " ".join(out.split()), out


@pytest.mark.engine
def test_dram_json_output_matches_schema_keys(memtint, tmp_path):
    out_file = tmp_path / "stats.json"
    code, _, err = memtint(*SMALL_RUN, "--check", "--json", out_file)
    assert code == 0, err
    stats = json.loads(out_file.read_text())
    assert DOCUMENTED_KEYS <= stats.keys(), DOCUMENTED_KEYS - stats.keys()
    assert LATENCY_KEYS <= stats["read_latency"].keys()
    assert LATENCY_KEYS <= stats["read_latency_ns"].keys()
    assert {"read", "write", "total"} <= stats["bandwidth_gbps"].keys()
    assert COMMAND_KEYS <= stats["commands"].keys()
    assert {"read_mean", "write_mean"} <= stats["queue_occupancy"].keys()
    config = stats["config"]
    for key in ("machine", "device", "mapping", "scheduler", "row_policy", "refresh", "channels", "ranks"):
        assert key in config
    assert config["machine"] == "ddr4-2400"
    assert stats["requests"] == 2000
    assert stats["reads"] + stats["writes"] == stats["requests"]
    assert stats["row_hits"] + stats["row_misses"] + stats["row_conflicts"] == stats["requests"]
    assert stats["commands"]["RD"] + stats["commands"]["RDA"] == stats["reads"]
    assert stats["commands"]["WR"] + stats["commands"]["WRA"] == stats["writes"]
    lat = stats["read_latency"]
    assert 0 < lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["p999"] <= lat["max"]
    assert 0 < stats["bandwidth_gbps"]["total"] <= stats["peak_bandwidth_gbps"]
    assert stats["violations"] == 0, stats.get("violation_examples")


@pytest.mark.engine
def test_peak_bandwidth_is_what_the_memory_can_carry(memtint, tmp_path):
    """A throttled device's peak counts its window; a multi-node machine's is its nodes' sum, so
    measured bandwidth never exceeds it."""
    out = tmp_path / "throttled.json"
    code, _, err = memtint("dram", "--machine", "ddr4-2400", "--set", "dram.device=ddr4-2400-throttled-10x",
                           "--generate", "stream", "--requests", "4000", "--json", out)
    assert code == 0, err
    stats = json.loads(out.read_text())
    assert stats["peak_bandwidth_gbps"] == pytest.approx(19.2 / 10)
    assert stats["bandwidth_gbps"]["total"] <= stats["peak_bandwidth_gbps"]
    run = tmp_path / "two-nodes.toml"
    run.write_text('machine = "tiering-2to1"\ninstructions = 20_000\nat_end = "wait"\n'
                   'programs = [' + ", ".join(['"stream:reads_pki=300,writes_pki=0,footprint_bytes=1048576"'] * 8) + ']\n'
                   '[os]\npolicy = "weighted-interleave"\n')
    code, _, err = memtint("sim", run, "--json", tmp_path / "sim.json")
    assert code == 0, err
    stats = json.loads((tmp_path / "sim.json").read_text())
    peaks = [n["peak_gbps"] for n in stats["nodes"]]
    assert len(peaks) == 2 and peaks[0] > peaks[1] > 0
    assert stats["dram"]["peak_bandwidth_gbps"] == pytest.approx(sum(peaks))
    assert stats["dram"]["bandwidth_gbps"]["total"] <= stats["dram"]["peak_bandwidth_gbps"]


@pytest.mark.engine
def test_a_component_table_the_run_sets_and_nothing_reads_is_warned_of(memtint, tmp_path):
    """A scheduler's or refresh manager's table the run sets while another is in force is said,
    not dropped unseen; tables a machine carries for every scheduler (the CCPS presets) are not."""
    def warnings(*args):
        out = tmp_path / "w.json"
        code, _, err = memtint(*SMALL_RUN, *args, "--json", out)
        assert code == 0, err
        return json.loads(out.read_text())["warnings"]

    w = warnings("--set", "controller.tcm.quantum=5000")
    assert '[controller.tcm] is set but controller.scheduler = "fr-fcfs": nothing reads it' in w, w
    assert not [x for x in warnings("--scheduler", "tcm", "--set", "controller.tcm.quantum=5000") if "nothing reads" in x]
    w = warnings("--refresh", "none", "--set", "controller.all-bank.postpone=4")
    assert '[controller.all-bank] is set but controller.refresh = "none": nothing reads it' in w, w
    code, _, err = memtint("dram", "--machine", "ccps-4c-64b", "--generate", "random", "--requests", "500",
                           "--json", tmp_path / "ccps.json")
    assert code == 0, err
    assert not [x for x in json.loads((tmp_path / "ccps.json").read_text())["warnings"] if "nothing reads" in x]


@pytest.mark.engine
def test_dram_reports_energy_and_exports_drampower_inputs(memtint, clean_error, tmp_path):
    out = tmp_path / "export"
    code, text, err = memtint(*SMALL_RUN, "--export-drampower", out, "--json", tmp_path / "s.json")
    assert code == 0, err
    stats = json.loads((tmp_path / "s.json").read_text())
    energy = stats["energy"]
    parts = ("act_pre_nj", "read_nj", "write_nj", "refresh_nj", "background_active_nj", "background_precharged_nj")
    assert energy["total_nj"] == pytest.approx(sum(energy[k] for k in parts))
    assert energy["total_nj"] > 0 and "power-down" in energy["model"]
    assert sorted(p.name for p in out.iterdir()) == ["config.json", "memspec.json", "trace-ch0.csv"]
    memspec = json.loads((out / "memspec.json").read_text())["memspec"]
    assert memspec["memoryType"] == "DDR4" and memspec["memarchitecturespec"]["nbrOfDevices"] == 8
    lines = (out / "trace-ch0.csv").read_text().splitlines()
    assert lines[-1].split(",")[1] == "END" and int(lines[-1].split(",")[0]) == stats["dram_cycles"]
    acts = sum(1 for line in lines if line.split(",")[1] == "ACT")
    assert acts == stats["commands"]["ACT"]
    # Never over existing files; DDR3 goes to DRAMPower 4.1 (one trace per rank, one device's
    # XML memspec); DDR2 to neither.
    clean_error(memtint(*SMALL_RUN, "--export-drampower", out), "--export-drampower", "not empty", "new or empty")
    # A directory of the user's own files (the trace beside it used to be written among them), or a file.
    own = tmp_path / "own"
    own.mkdir()
    (own / "notes.txt").write_text("mine\n")
    clean_error(memtint(*SMALL_RUN, "--export-drampower", own), "--export-drampower", "not empty")
    assert sorted(p.name for p in own.iterdir()) == ["notes.txt"]
    clean_error(memtint(*SMALL_RUN, "--export-drampower", own / "notes.txt"), "--export-drampower", "not a directory")
    ddr3 = tmp_path / "ddr3"
    code, _, err = memtint("dram", "--machine", "i7-860", "--generate", "random", "--requests", "100",
                           "--export-drampower", ddr3)
    assert code == 0, err
    names = sorted(p.name for p in ddr3.iterdir())
    assert names[0] == "memspec.xml" and "trace-ch1-r3.csv" in names and len(names) == 1 + 2 * 4
    assert "PDN_F_" in (ddr3 / "trace-ch0-r0.csv").read_text().splitlines()[-1]
    clean_error(memtint("dram", "--machine", "tcm-24c", "--generate", "random", "--requests", "100",
                        "--export-drampower", tmp_path / "x"), "DRAMPower 4.1 (DDR3)", "not DDR2")
    code, text, err = memtint(*SMALL_RUN)
    assert code == 0 and "Energy" in text and "nJ per access" in text


@pytest.mark.engine
def test_dram_json_to_stdout_is_the_statistics_alone(memtint):
    code, out, err = memtint(*SMALL_RUN, "--json", "-")
    assert code == 0, err
    assert DOCUMENTED_KEYS <= json.loads(out).keys()


@pytest.mark.engine
def test_unknown_machine_lists_valid_ones(memtint, clean_error):
    line = clean_error(memtint("dram", "--machine", "ddr9-9999", "--generate", "random", "--requests", "10"),
                       "ddr9-9999")
    assert "ddr4-2400" in line and "i7-860" in line


@pytest.mark.engine
def test_unknown_scheduler_lists_valid_ones(memtint, clean_error):
    line = clean_error(memtint(*SMALL_RUN, "--scheduler", "lifo"), "lifo")
    assert "fr-fcfs" in line and "fcfs" in line


@pytest.mark.engine
def test_bad_controller_implementation_is_a_clean_error(memtint, clean_error):
    line = clean_error(memtint(*SMALL_RUN, "--set", "controller.implementation=simd"), "simd")
    assert "controller.implementation" in line and "lanes" in line
    line = clean_error(memtint(*SMALL_RUN, "--scheduler", "atlas", "--set", "controller.implementation=lanes"), "atlas")
    assert "general" in line


@pytest.mark.engine
def test_vector_isa_levels_give_the_same_statistics_and_a_bad_one_is_a_clean_error(memtint, clean_error):
    runs = {}
    for level in ("baseline", "best"):
        code, out, err = memtint(*SMALL_RUN, "--vector-isa", level, "--json", "-")
        assert code == 0, err
        runs[level] = json.loads(out)
    assert runs["baseline"]["vector_isa"] == "baseline"
    assert runs["best"]["vector_isa"] in ("baseline", "x86-64-v2", "x86-64-v3")
    volatile = {"wall_seconds", "requests_per_second", "dram_cycles_per_second", "vector_isa"}
    assert {k: v for k, v in runs["baseline"].items() if k not in volatile} == {
        k: v for k, v in runs["best"].items() if k not in volatile
    }
    line = clean_error(memtint(*SMALL_RUN, "--vector-isa", "avx9"), "avx9")
    assert "x86-64-v3" in line and "vector_isa" in line


@pytest.mark.engine
def test_malformed_trace_line_names_file_and_line(memtint, clean_error, tmp_path):
    trace = tmp_path / "bad.trace"
    trace.write_text("0x1000 R\n0x2040 W\n0x3080 Q\n0x40c0 R\n")
    clean_error(memtint("dram", "--machine", "ddr4-2400", "--trace", trace), f"{trace}:3:")


def test_trace_addresses_a_reference_simulator_reads_as_hex_are_pointed_out(memtint, tmp_path):
    # Ramulator and DRAMSim3 read "1000 R" as 0x1000; memtint reads 1000, and says so.
    trace = tmp_path / "bare.trace"
    trace.write_text("1000 R\n2000 W\n")
    code, out, err = memtint("dram", "--machine", "ddr4-2400", "--trace", trace)
    said = " ".join((out + err).split())  # the table's warnings wrap
    assert code == 0 and f"{trace} line 1: address 1000 has no 0x, so it was read as decimal" in said, out + err
    trace.write_text("0x1000 R\n0x2000 W\n")
    code, out, err = memtint("dram", "--machine", "ddr4-2400", "--trace", trace)
    assert code == 0 and "has no 0x" not in out + err, out + err


def test_trace_addresses_beyond_the_memory_are_said_to_alias(memtint, tmp_path):
    # 0x200001000 on the 8 GiB ddr4-2400 is 0x1000 again: it was one more row hit, in silence.
    trace = tmp_path / "big.trace"
    trace.write_text("0x1000 R\n0x200001000 R\n")
    code, out, err = memtint("dram", "--machine", "ddr4-2400", "--trace", trace, "--json", "-")
    assert code == 0, err
    warnings = json.loads(out)["warnings"]
    assert any(f"{trace} line 2: address 0x200001000 is beyond the memory's" in w and "aliases address 0x1000" in w
               for w in warnings), warnings
    code, out, err = memtint("dram", "--machine", "ddr4-2400", "--set", "dram.channels=2", "--trace", trace,
                             "--json", "-")
    assert code == 0 and not json.loads(out)["warnings"], out + err  # 16 GiB holds it


def test_a_trace_suffix_gives_its_format_and_format_overrides_it(memtint, clean_error, tmp_path):
    import gzip
    import json

    k6 = "0x1000 P_MEM_RD 0\n0x2000 P_MEM_WR 4\n0x3000 P_FETCH 9\n"
    for name, write in (("k6.dramsim2", lambda p: p.write_text(k6)),
                        ("k6.dramsim2.gz", lambda p: p.write_bytes(gzip.compress(k6.encode())))):
        trace = tmp_path / name
        write(trace)
        code, out, err = memtint("dram", "--machine", "ddr4-2400", "--trace", trace, "--json", "-")
        stats = json.loads(out)
        assert code == 0 and (stats["reads"], stats["writes"]) == (2, 1), err
    # DRAMSim2's own names pick its format, each kind read as DRAMSim2 reads it.
    for name, text, counts in (("k6_x.trc", k6, (2, 1)), ("mase_art.trc", "0x40 IFETCH 1\n0x80 WRITE 5\n", (1, 1)),
                               ("misc_a.trc", "0x40 read\n0x80 write 00ff\n0xc0 write\n", (1, 2))):
        trace = tmp_path / (name + ".gz")
        trace.write_bytes(gzip.compress(text.encode()))
        code, out, err = memtint("dram", "--machine", "ddr4-2400", "--trace", trace, "--json", "-")
        assert code == 0, err
        stats = json.loads(out)
        assert (stats["reads"], stats["writes"]) == counts and stats["config"]["timestamped"], (name, err)
    # --format wins over the suffix: Ramulator's format has no third field.
    clean_error(memtint("dram", "--machine", "ddr4-2400", "--trace", tmp_path / "k6.dramsim2", "--format", "ramulator"),
                "k6.dramsim2:1:")


def test_missing_trace_file_is_reported(memtint, clean_error, tmp_path):
    missing = tmp_path / "nowhere.trace"
    line = clean_error(memtint("dram", "--machine", "ddr4-2400", "--trace", missing), str(missing))
    assert "no such" in line.lower()


@pytest.mark.engine
def test_non_bijective_mapping_file_is_rejected(memtint, clean_error, tmp_path):
    # ddr4-2400: 8 GiB = 33 address bits (3 bus-offset, 10 column, 2 bank-group, 2 bank, 16 row).
    # Bit 16 selects both a bank bit and a row bit, and bit 32 selects nothing: not a bijection.
    mapping = tmp_path / "dup.toml"
    mapping.write_text(
        'name = "dup"\n'
        'description = "bank and row share address bit 16"\n'
        "[organisation]\n"
        "channels = 1\nranks = 1\nbank_groups = 4\nbanks_per_group = 4\nrows = 65536\ncolumns = 1024\n"
        "[fields]\n"
        "channel = []\nrank = []\n"
        f"column = {list(range(3, 13))}\n"
        "bank_group = [13, 14]\n"
        "bank = [15, 16]\n"
        f"row = {list(range(16, 32))}\n"
    )
    line = clean_error(memtint(*SMALL_RUN, "--mapping", mapping), "dup.toml")
    assert any(word in line.lower() for word in ("bijective", "duplicate", "twice", "more than once", "16")), line


def test_zero_sized_queue_is_rejected(memtint, clean_error):
    line = clean_error(memtint(*SMALL_RUN, "--read-queue", "0"), "--read-queue")
    assert "at least 1" in line


def test_trace_and_generate_are_exclusive(memtint, clean_error, tmp_path):
    trace = tmp_path / "ok.trace"
    trace.write_text("0x1000 R\n")
    clean_error(memtint(*SMALL_RUN, "--trace", trace), "--trace", "--generate")


def test_generator_flags_are_refused_with_a_trace(memtint, clean_error, tmp_path):
    trace = tmp_path / "ok.trace"
    trace.write_text("0x1000 R\n")
    clean_error(memtint("dram", "--machine", "ddr4-2400", "--trace", trace, "--requests", "10"), "--requests")


def test_dram_takes_every_generator_and_run_option_of_the_api(memtint, clean_error, tmp_path):
    # --banks (the conflict generator's) and --sources (the run spec's) were the API's only: the
    # application-aware schedulers saw one source, the conflicts one bank, whatever the user wanted.
    code, _, err = memtint("dram", "--machine", "ddr4-2400", "--generate", "conflict", "--requests", "4000",
                           "--banks", "4", "--scheduler", "par-bs", "--sources", "3", "--json", tmp_path / "s.json")
    assert code == 0, err
    stats = json.loads((tmp_path / "s.json").read_text())
    assert stats["config"]["workload"]["generate"]["banks"] == 4 and stats["config"]["sources"] == 3
    acts = [b["commands"]["ACT"] for b in stats["channels"][0]["ranks"][0]["banks"]]
    assert sum(a > 0 for a in acts) == 4 and sum(acts) == stats["commands"]["ACT"]
    assert [s["source"] for s in stats["channels"][0]["scheduler_sources"]] == [0, 1, 2]
    trace = tmp_path / "ok.trace"
    trace.write_text("0x1000 R\n")
    line = clean_error(memtint("dram", "--machine", "ddr4-2400", "--trace", trace, "--banks", "2"), "--banks")
    assert "--banks only applies to --generate" in line
    # the engine's refusal of a generator value names the flag given, beside the spec's key
    line = clean_error(memtint("dram", "--machine", "ddr4-2400", "--generate", "random", "--requests", "10", "--banks",
                               "2"), "only applies to kind 'conflict'")
    assert line.startswith("memtint: error: --banks (generate.banks): "), line
    line = clean_error(memtint("dram", "--machine", "ddr4-2400", "--generate", "strided", "--requests", "10", "--stride",
                               "100"), "multiple of the line size")
    assert line.startswith("memtint: error: --stride (generate.stride_bytes): "), line


def test_dram_help_says_a_timed_trace_is_not_run_closed_loop(memtint):
    code, out, _ = memtint("dram", "--help")
    flat = " ".join(out.split())
    assert code == 0 and "(closed loop) on a trace" not in flat and "timed trace" in flat, flat


def test_generate_needs_a_request_count(memtint, clean_error):
    clean_error(memtint("dram", "--machine", "ddr4-2400", "--generate", "random"), "--requests")


def test_format_needs_a_trace(memtint, clean_error):
    clean_error(memtint(*SMALL_RUN, "--format", "dramsim3"), "--format")


@pytest.mark.parametrize("args, needles", [
    # A flag that only acts with another one is refused without it, not ignored.
    (["sim", "configs/runs/example.toml", "--export-format", "ramulator"], ["--export-format", "--export-dram FILE"]),
    (["trace-stats", "stream", "--policy", "bpm"], ["--policy bpm", "--machine"]),
    (["trace-stats", "/etc/hostname", "--seed", "5"], ["--seed 5", "trace files are read as they are"]),
    (["trace", "--at-limit", "continue", "--", "true"], ["--at-limit continue", "--limit N"]),
    (["mine-rules", "nowhere", "--out", "r.toml", "--holdout", "0.3", "--folds", "3"], ["--holdout 0.3", "--folds 3"]),
])
def test_a_flag_without_the_flag_it_acts_with_is_refused(memtint, clean_error, tmp_path, args, needles):
    import os

    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    args = [os.path.join(repo, a) if a.startswith("configs/") else a for a in args]
    clean_error(memtint(*args), *needles)  # run in tmp_path
    assert not os.listdir(tmp_path)


def test_unknown_generator_is_a_usage_error(memtint, clean_error):
    clean_error(memtint("dram", "--machine", "ddr4-2400", "--generate", "zigzag", "--requests", "10"), "zigzag")


def test_unwritable_json_output_is_reported(memtint, clean_error, tmp_path):
    clean_error(memtint(*SMALL_RUN, "--json", tmp_path / "no" / "such" / "dir" / "out.json"), "does not exist")


@pytest.mark.engine
def test_demo_runs(memtint, tmp_path, monkeypatch):
    # The full demo runs 36 runs of 10M instructions per core; the same sweep on 20k keeps the suite cheap.
    monkeypatch.setenv("MEMTINT_CACHE_DIR", str(tmp_path / "cache"))
    code, out, err = memtint("demo", "--instructions", "20000", "--jobs", "2", "--out", tmp_path / "demo")
    assert code == 0, err
    for text in ("36 runs", "buddy", "bpm", "bpm-plus", "bpm-plus-balanced", "cache-only", "a-vp", "WS/base",
                 "normalised to buddy"):
        assert text in out, text
    assert "Report: " in out
    # one sentence per policy saying what its result means, with the numbers it comes from
    import re

    for policy in ("bpm", "bpm-plus @ i7-860-bpm-plus", "cache-only", "a-vp"):  # as the table's rows
        # A change that rounds to 0.0 gets more decimals (+0.01 %), never -0.0 (findings.signed).
        sentence = re.search(rf"^{re.escape(policy)}: weighted speedup (?:[+-]\d+\.\d+|0\.0) % over buddy on average "
                             rf"\(\d of 6 mixes better\), maximum slowdown (?:[+-]\d+\.\d+|0\.0) %.*row-buffer miss rate",
                             out, re.M)
        assert sentence, f"no sentence for {policy} in:\n{out}"
    assert "memory-intensive mixes" in out
    report = tmp_path / "demo" / "report"
    assert (report / "index.html").exists() and (report / "summary.md").exists()
    assert (tmp_path / "demo" / "results" / "manifest.json").exists()
    # The report carries the same sentences: its reader has not seen the terminal.
    import html

    summary, page = (report / "summary.md").read_text(), html.unescape((report / "index.html").read_text())
    flat = " ".join(out.split())  # as printed: without the terminal's markup
    for line in (x for x in summary.split("## Findings", 1)[1].split("## ", 1)[0].split("\n\n") if x.strip()):
        assert " ".join(line.split()) in flat and line.strip() in page, line
    assert summary.count("weighted speedup") >= 4 and "Under buddy, sharing the machine" in summary


@pytest.mark.engine
def test_set_overrides_a_controller_setting(memtint):
    code, out, err = memtint(*SMALL_RUN, "--set", "controller.write_idle_drain_min=9", "--set", "controller.read_queue=8",
                             "--json", "-")
    assert code == 0, err
    config = json.loads(out)["config"]
    assert config["write_idle_drain_min"] == 9 and config["read_queue"] == 8


@pytest.mark.engine
@pytest.mark.parametrize(
    "setting,needles",
    [
        ("write_idle_drain_min=9", ["SECTION.KEY=VALUE", "write_idle_drain_min=9"]),
        ("controller.write_idle_drain_min", ["SECTION.KEY=VALUE"]),
        ("controller.write_idle_drain_mn=9", ["write_idle_drain_mn", "write_idle_drain_min"]),
        ("controller.write_idle_drain_min=0", ["write_idle_drain_min", "between 1 and write_queue"]),
        ("controller.read_queue=many", ["read_queue"]),
    ],
)
def test_bad_set_is_one_clear_line(memtint, clean_error, setting, needles):
    clean_error(memtint(*SMALL_RUN, "--set", setting), *needles)


@pytest.mark.engine
def test_an_empty_dram_trace_is_an_error_not_a_silent_success(memtint, clean_error, tmp_path):
    empty = tmp_path / "empty.trace"
    empty.write_text("")
    clean_error(memtint("dram", "--machine", "ddr4-2400", "--trace", empty), "empty.trace", "no requests")


@pytest.mark.engine
def test_errors_about_keys_of_hyphenated_components_name_their_line(memtint, clean_error, tmp_path):
    # The key pattern stopped at "-": os.weighted-interleave.weights got no file:line, no --set.
    run = tmp_path / "run.toml"
    run.write_text('machine = "tiering-2to1"\nprograms = ["light"]\ninstructions = 1000\n\n[os]\n'
                   'policy = "weighted-interleave"\n\n[os.weighted-interleave]\nweights = [0, 1]\n')
    line = clean_error(memtint("sim", run), "os.weighted-interleave.weights")
    assert line.startswith(f"memtint: error: {run}:9: "), line
    line = clean_error(memtint("sim", run, "--set", "os.weighted-interleave.weights=[0, 0]"), "weights")
    assert line.startswith("memtint: error: --set os.weighted-interleave.weights=[0, 0]: "), line


@pytest.mark.engine
def test_an_error_in_a_machine_file_names_that_files_line(memtint, clean_error, tmp_path):
    """Checked once the nodes are resolved, a machine file's key is named with its own line, for a
    run file that names the machine and for --machine alike."""
    preset = (REPO / "configs" / "machines" / "tiering-2to1.toml").read_text()
    assert preset.count("latency_ns = [[0, 50], [50, 0]]") == 1
    machine = tmp_path / "m.toml"
    machine.write_text(preset.replace("latency_ns = [[0, 50], [50, 0]]", "latency_ns = [[0, -50], [50, 0]]"))
    at = preset.splitlines().index(next(x for x in preset.splitlines() if x.startswith("latency_ns"))) + 1
    run = tmp_path / "run.toml"
    run.write_text('machine = "m.toml"\nprograms = ["light"]\ninstructions = 1000\n[os]\npolicy = "local"\n')
    line = clean_error(memtint("sim", run), "links.latency_ns[0][1]")
    assert line.startswith(f"memtint: error: {machine}:{at}: "), line
    line = clean_error(memtint("dram", "--machine", machine, "--generate", "random", "--requests", "100"), "latency_ns")
    assert line.startswith(f"memtint: error: {machine}:{at}: "), line
    # A table the machine file lacks (no [links] for two nodes): the file, without a line.
    lines = preset.splitlines()
    start = lines.index("[links]")
    machine.write_text("\n".join(lines[:start] + lines[start + 3:]) + "\n")
    line = clean_error(memtint("sim", run), "needs [links]")
    assert line.startswith(f"memtint: error: {machine}: "), line
    machine.write_text(preset.replace("latency_ns = [[0, 50], [50, 0]]", "latency_ns = [[0, -50], [50, 0]]"))
    # A value a --set gave is the --set's, even where the machine file has the key.
    line = clean_error(memtint("dram", "--machine", machine, "--generate", "random", "--requests", "100",
                               "--set", "links.latency_ns=[[0, -1], [1, 0]]"), "latency_ns")
    assert line.startswith("memtint: error: --set links.latency_ns="), line
    # A name no preset has, in a node's inline dram table: that table's line.
    lines = preset.splitlines()
    node_dram = next(i for i, x in enumerate(lines) if x.startswith("dram = {")) + 1
    lines[node_dram - 1] = lines[node_dram - 1].replace('mapping = "RoRaBaCoBgCh"', 'mapping = "RoRaBaCCh"')
    machine.write_text("\n".join(lines) + "\n")
    line = clean_error(memtint("sim", run), "nodes[1].dram.mapping: unknown mapping 'RoRaBaCCh'")
    assert line.startswith(f"memtint: error: {machine}:{node_dram}: "), line
    # A device file that is not there, and a scheduler no registry has: the key and its line,
    # where the file's name or the registry's complaint alone used to be all.
    one = tmp_path / "one.toml"
    one.write_text('name = "one"\ndescription = "d"\n[dram]\ndevice = "gone.toml"\ndensity_gbit = 8\n'
                   'device_width = 8\nchannels = 1\nranks = 1\nmapping = "RoBaRaCoCh"\n')
    line = clean_error(memtint("dram", "--machine", one, "--generate", "random", "--requests", "100"), "gone.toml")
    assert line.startswith(f"memtint: error: {one}:4: ") and "dram.device" in line, line
    one.write_text(one.read_text().replace('"gone.toml"', '"ddr4-2400"') + '[controller]\nscheduler = "fifo"\n')
    line = clean_error(memtint("dram", "--machine", one, "--generate", "random", "--requests", "100"), "fifo")
    assert line.startswith(f"memtint: error: {one}:11: ") and "controller.scheduler" in line, line


@pytest.mark.engine
def test_an_error_in_a_machine_s_device_or_mapping_file_names_its_line_from_a_run_file(memtint, clean_error, tmp_path):
    """A run file's machine reads a device and a mapping file beside it: a value the engine refuses
    there is named at its line in that file, as `dram --machine` names it (sim gave the file alone)."""
    device = (REPO / "configs" / "devices" / "ddr4-2400.toml").read_text()
    tras = next(x for x in device.splitlines() if x.startswith("tRAS"))
    (tmp_path / "dev.toml").write_text(device.replace(tras, "tRAS = 2"))
    tras_line = device.splitlines().index(tras) + 1
    (tmp_path / "map.toml").write_text('name = "m"\ndescription = "d"\nlayout = "RoBaRaCoCh"\n'
                                       '[organisation]\nrows = 32768\n')
    machine = tmp_path / "m.toml"
    machine.write_text('name = "m"\n[dram]\ndevice = "dev.toml"\ndensity_gbit = 8\nmapping = "RoBaRaCoCh"\n')
    run = tmp_path / "run.toml"
    run.write_text('machine = "m.toml"\nprograms = ["light"]\ninstructions = 1000\n')
    for command in (("sim", run), ("dram", "--machine", machine, "--generate", "random", "--requests", "100")):
        line = clean_error(memtint(*command), "timing.tRAS")
        assert f"dev.toml:{tras_line}: timing.tRAS: must be at least tRCD" in line, line
    machine.write_text(machine.read_text().replace('"dev.toml"', '"ddr4-2400"').replace('"RoBaRaCoCh"', '"map.toml"'))
    for command in (("sim", run), ("dram", "--machine", machine, "--generate", "random", "--requests", "100")):
        line = clean_error(memtint(*command), "organisation.rows")
        assert "map.toml:5: organisation.rows: mapping 'm' was written for rows = 32768" in line, line


@pytest.mark.engine
def test_a_mix_file_is_a_mix_wherever_a_named_mix_is(memtint, tmp_path, clean_error):
    # A mix file in configs/mixes' format was read as a CPU trace ("instruction count
    # 'description' is not a decimal number"), and a sweep's preset refused it as an unknown name.
    from memtint import api
    from memtint.sweep import parse_spec

    (tmp_path / "traces").mkdir()
    trace = tmp_path / "traces" / "t.trace"
    trace.write_text("".join(f"3 {4096 * i + 64}\n" for i in range(3000)))
    mix = tmp_path / "mine.toml"
    mix.write_text('description = "mine"\nprograms = ["stream", "light:reads_pki=2", "traces/t.trace"]\n')
    assert api.mix_programs(str(mix)) == ["stream", "light:reads_pki=2", str(trace)]  # beside the file
    code, out, err = memtint("compare", "--machine", "i7-860", "--mix", mix, "--policies", "bpm",
                             "--instructions", "20000", "--warmup", "0")
    assert code == 0, err
    assert "stream, light:reads_pki=2, t.trace" in " ".join(out.split()), out
    spec = parse_spec({"machines": ["i7-860"], "policies": ["buddy"], "instructions": 1000,
                       "mixes": [{"preset": "mine.toml"}]}, base=tmp_path)
    assert spec.entries[0].mix.programs == ("stream", "light:reads_pki=2", str(trace))
    clean_error(memtint("compare", "--machine", "i7-860", "--mix", f"{mix},light"), "a named mix stands alone")
    mix.write_text('programs = ["stream"]\ncores = 4\n')
    clean_error(memtint("compare", "--machine", "i7-860", "--mix", mix), f"{mix}:2: unknown key 'cores'")
    mix.write_text("programs = []\n")
    clean_error(memtint("advise", mix), f"{mix}:1: programs: expected a non-empty list")


def test_a_mix_file_names_suite_programs_and_its_unknown_programs_at_their_line(tmp_path):
    # "bfs" in a mix file became the path DIR/bfs, refused as "not a program of the workload
    # suite (bfs, ...)"; an unknown name was refused as that path, without the file or its line.
    from memtint import api, workloads

    mix = tmp_path / "mine.toml"
    mix.write_text('programs = ["bfs", "light"]\n')
    assert api.mix_programs(str(mix)) == ["bfs", "light"]
    assert api.build_sim_spec("i7-860", api.mix_programs(str(mix)), instructions=1000)["programs"][0] == \
        workloads.trace_path("bfs")
    (tmp_path / "bfs").write_text("1 0x40\n")  # a file of that name beside the mix file is the file
    assert api.mix_programs(str(mix)) == [str(tmp_path / "bfs"), "light"]
    mix.write_text('programs = [\n  "light",\n  "nosuch",\n]\n')
    with pytest.raises(api.MemtintError, match=rf"^{mix}:3: programs\[1\]: nosuch: no trace file {tmp_path / 'nosuch'}"):
        api.mix_programs(str(mix))


def test_a_mix_keeps_a_profiles_parameters_together(tmp_path):
    """A profile's parameters are comma-separated too: a piece `key=value` continues the profile
    before it, unless it is a file."""
    from memtint.cli import split_mix

    assert split_mix("random:footprint_bytes=65536,reads_pki=30,stream") == [
        "random:footprint_bytes=65536,reads_pki=30", "stream"]
    assert split_mix("stream, light") == ["stream", "light"]
    assert split_mix("stream,,light") == ["stream", "", "light"]  # refused by the caller, named
    odd = tmp_path / "a=b"
    odd.write_text("1 0x40\n")
    assert split_mix(f"random:reads_pki=3,{odd}") == ["random:reads_pki=3", str(odd)]


@pytest.mark.parametrize("args, option", [
    (["run", "--colors", "0-3", "--report", "", "--", "true"], "--report"),
    (["run", "--tier-policy", "bw-interleave", "--bandwidths", "", "--", "true"], "--bandwidths"),
    (["inspect", "1", "--json", ""], "--json"),
    (["dram", "--machine", "ddr4-2400", "--generate", "random", "--requests", "10", "--json", ""], "--json"),
    (["compare", "--machine", "", "--mix", "light"], "--machine"),
    (["report", "no-store", "--out", ""], "--out"),
])
def test_an_option_given_an_empty_value_is_refused_by_name(memtint, tmp_path, args, option):
    # An unset shell variable (--report "$OUT") was taken as no option: nothing written, nothing said.
    code, out, err = memtint(*args)
    assert code == 2 and err.strip() == f"memtint: error: {option}: the value is empty; give one (or leave the " \
        "option out)", err
    assert os.listdir(tmp_path) == []


def test_a_prefix_of_two_spellings_of_one_option_is_that_option(capsys):
    from memtint.cli import build_parser

    args = build_parser().parse_args(["run", "--col", "0-3", "--", "/bin/true"])
    assert args.colors == "0-3"
    # A prefix of two different options stays an error naming both.
    with pytest.raises(SystemExit):
        build_parser().parse_args(["dram", "--re", "10"])
    err = capsys.readouterr().err
    assert "ambiguous option: --re could match" in err and "--requests" in err


@pytest.mark.parametrize("text", [
    'machine = "i7\\n860"\nprograms = ["stream"]\n',
    'machine = "i7-860"\nprograms = ["st\\nream"]\n',
    'machine = "i7-860"\nprograms = ["phases:str\\reeam@1000+light"]\n',
    'machine = "i7-860"\nprograms = ["stream"]\nos = {policy = "bp\\u001bm"}\n',
])
def test_a_value_with_control_characters_is_shown_escaped_on_one_line(memtint, tmp_path, text):
    # A TOML string may hold "\n" or ESC; echoed raw, the one error line became two, or moved the
    # terminal's cursor.
    run = tmp_path / "run.toml"
    run.write_text(text + "instructions = 2000\n")
    code, _, err = memtint("sim", str(run))
    assert code != 0
    lines = [line for line in err.splitlines() if line.startswith("memtint: error: ")]
    assert len(lines) == 1 and len(err.strip().splitlines()) == 1, err
    assert "\x1b" not in err and ("\\n" in err or "\\r" in err or "\\x1b" in err), err


def test_a_sweep_value_with_control_characters_is_shown_escaped(memtint, tmp_path):
    spec = tmp_path / "sweep.toml"
    spec.write_text('name = "s"\nmachines = ["i7\\n860"]\npolicies = ["buddy"]\ninstructions = 2000\n'
                    '[[mixes]]\nname = "m"\nprograms = ["stream"]\n')
    code, _, err = memtint("sweep", str(spec), "--out", str(tmp_path / "store"))
    assert code != 0 and len(err.strip().splitlines()) == 1 and "i7\\n860" in err, err


def test_a_bad_charge_walks_names_the_key_and_the_files_line(memtint, tmp_path, clean_error):
    run = tmp_path / "walks.toml"
    run.write_text('machine = "i7-860"\nprograms = ["random"]\ninstructions = 1000\n'
                   "[os.hot_pages]\nenabled = true\ncharge_walks = 3\n")
    clean_error(memtint("sim", str(run), "--set", "os.hot_pages.charge_walks=maybe"),
                "--set os.hot_pages.charge_walks=maybe", "os.hot_pages.charge_walks", "expected a boolean")
    clean_error(memtint("sim", str(run)), f"{run}:6", "os.hot_pages.charge_walks", "expected a boolean")


@pytest.mark.engine
@pytest.mark.parametrize("setting,needle", [
    # a sibling of the key the error names: distance must be at least the degree given
    ("cache.prefetcher.degree=64", "cache.prefetcher.distance"),
    # a relation of several keys, named by the key's own word
    ("dram.channels=2147483648", "channels x ranks x banks per rank"),
    # a key with a space: the message names it whole
    ("os.colour split=1", "unknown key"),
])
def test_an_error_a_set_caused_names_that_set_not_the_run_file(memtint, clean_error, tmp_path, setting, needle):
    run = tmp_path / "run.toml"
    run.write_text('machine = "i7-860"\nprograms = ["light"]\ninstructions = 2000\n')
    line = clean_error(memtint("sim", run, "--set", setting), needle)
    assert line.startswith(f"memtint: error: --set {setting}: "), line


@pytest.mark.engine
def test_a_pipe_or_device_where_a_trace_belongs_is_refused_by_name(memtint, clean_error, tmp_path):
    """A trace is read more than once (its format, its digest for the caches, its records): a FIFO
    made compare wait for ever and sim fail on a seek."""
    fifo = tmp_path / "ff"
    os.mkfifo(fifo)
    for argv in (["compare", "--machine", "i7-860", "--mix", f"{fifo},light", "--instructions", "1000", "--warmup", "0",
                  "--no-cache", "--policies", "buddy"],
                 ["trace-stats", fifo], ["dram", "--machine", "ddr4-2400", "--trace", "/dev/null"],
                 ["trace-stats", f"phases:light@500+{fifo}", "--instructions", "1000"]):
        clean_error(memtint(*argv, timeout=60), "is not a regular file (a pipe, socket or device)")
    run = tmp_path / "run.toml"
    run.write_text(f'machine = "i7-860"\nprograms = ["{fifo}"]\ninstructions = 2000\n')
    clean_error(memtint("sim", run, timeout=60), f"{fifo}: is not a regular file")
    spec = tmp_path / "s.toml"
    spec.write_text(f'machines = ["i7-860"]\npolicies = ["buddy"]\ninstructions = 1000\nmixes = [["{fifo}", "light"]]\n')
    clean_error(memtint("sweep", spec, "--out", tmp_path / "out", timeout=60), "is not a regular file")


@pytest.mark.engine
def test_mine_rules_never_writes_over_a_trace_its_store_classifies(memtint, clean_error, tmp_path):
    trace = tmp_path / "t.txt"
    trace.write_text("10 0x1000\n20 0x2000 0x3000\n")
    before = trace.read_bytes()
    spec = tmp_path / "s.toml"
    spec.write_text(f'machines = ["i7-860"]\npolicies = ["buddy", "bpm", "a-vp"]\ninstructions = 2000\nwarmup = 0\n'
                    f'mixes = [["{trace}", "light"], ["light", "{trace}"], ["{trace}", "{trace}"], ["light", "light"]]\n')
    code, _, err = memtint("sweep", spec, "--out", tmp_path / "store", "--jobs", "1", "--no-report")
    assert code == 0, err
    for option in ("--out", "--json"):
        argv = ["mine-rules", tmp_path / "store", "--classify-instructions", "100000", "--out", tmp_path / "r.toml",
                option, trace]
        clean_error(memtint(*argv), f"{option} {trace}: is an input of this command")
        assert trace.read_bytes() == before


def test_reproduce_never_writes_into_the_figures_or_traces_it_reads(memtint, clean_error):
    for place in ("configs/reproductions", "workloads/traces"):
        clean_error(memtint("reproduce", "--out", REPO / place, "bpm", "--quick"), "is an input of this command")


def test_a_set_value_is_read_as_a_toml_file_writes_it():
    from memtint.cli import _set_value

    assert _set_value("100_000") == 100000 and _set_value("'strided'") == "strided" == _set_value("strided")
    assert _set_value("{enabled = true}") == {"enabled": True} == _set_value('{"enabled": true}')
    assert _set_value("[0, 1]") == [0, 1] and _set_value("2.0") == 2.0 and _set_value("true") is True
    assert _set_value("2026-01-01") == "2026-01-01"  # no setting takes a date: the text


@pytest.mark.engine
def test_a_name_the_run_file_gives_is_blamed_on_its_line(memtint, clean_error, tmp_path):
    run = tmp_path / "run.toml"
    run.write_text('machine = ""\nprograms = ["light"]\ninstructions = 2000\n')
    assert clean_error(memtint("sim", run), "unknown machine ''").startswith(f"memtint: error: {run}:1: ")


def test_an_export_whose_suffix_names_another_format_is_refused(memtint, clean_error, tmp_path):
    # dram --trace reads a file by its suffix: a .ramulator file written as dramsim3 it would refuse
    run = REPO / "configs" / "runs" / "example.toml"
    line = clean_error(memtint("sim", run, "--export-dram", tmp_path / "x.ramulator", "--export-format", "dramsim3"),
                       "suffix of the ramulator format")
    assert not (tmp_path / "x.ramulator").exists(), line


@pytest.mark.engine
def test_sim_says_how_to_replay_its_dram_stream_on_the_runs_memory_system(memtint, tmp_path):
    # The file holds requests only: a replay on the machine's default mapping, scheduler or write
    # handling gave other outcomes, and nothing said which settings the run had.
    import shlex

    run = tmp_path / "run.toml"
    run.write_text('machine = "i7-860"\nprograms = ["stream", "random"]\ninstructions = 40_000\n'
                   'mapping = "i7-860-bpm-plus"\nscheduler = "fcfs"\n[overrides.controller]\nwrite_handling = "ramulator"\n')
    code, out, err = memtint("sim", run, "--export-dram", "s.dramsim3", "--set", "controller.write_high_watermark=0.9",
                             "--json", "sim.json")
    assert code == 0, err
    note = next(line for line in out.splitlines() if line.startswith("DRAM request stream: "))
    sim = json.loads((tmp_path / "sim.json").read_text())
    assert f"{sim['export_dram']['requests']:,} requests in s.dramsim3 (dramsim3, timed)" in note, note
    command = shlex.split(note.split(" by: ", 1)[1])
    assert command[:2] == ["memtint", "dram"] and command[-2:] == ["--trace", "s.dramsim3"], command
    code, _, err = memtint(*command[1:], "--json", "replay.json")
    assert code == 0, err
    replay = json.loads((tmp_path / "replay.json").read_text())
    assert replay["config"]["mapping"] == "i7-860-bpm-plus" and replay["config"]["scheduler"] == "fcfs"
    assert replay["config"]["write_handling"] == "ramulator" and replay["config"]["write_high_watermark"] == 0.9
    assert replay["requests"] == sim["export_dram"]["requests"]
    # each request has its run's outcome; the replay adds those of the requests left in flight
    for key in ("row_hits", "row_misses", "row_conflicts"):
        assert 0 <= replay[key] - sim["dram"][key] <= replay["requests"] - sim["dram"]["requests"], key
    code, out, err = memtint("sim", run, "--export-dram", "/dev/null")
    assert code == 0, err  # written into, and not offered for a replay
    assert "requests in /dev/null (dramsim3, timed)" in out and "memtint dram" not in out, out
    # A scheduler that tells the cores apart schedules a replay, which has one source, otherwise.
    run.write_text(run.read_text().replace('scheduler = "fcfs"', 'scheduler = "bliss"'))
    code, out, err = memtint("sim", run, "--export-dram", "b.dramsim3")
    assert code == 0, err
    flat = " ".join(out.split())
    assert "told 2 sources' requests apart" in flat and "gives other outcomes" in flat, flat
    assert "replayed on the run's memory system" not in flat


@pytest.mark.engine
def test_json_to_the_terminal_without_one_is_refused_before_the_run(tmp_path):
    # In a session of its own a process has no controlling terminal: /dev/tty cannot be opened,
    # which the run used to find only when it wrote its result.
    done = subprocess.run([sys.executable, "-m", "memtint.cli", "trace-stats", "light", "--instructions", "1000",
                           "--json", "/dev/tty"], capture_output=True, text=True, timeout=120,
                          start_new_session=True, stdin=subprocess.DEVNULL, cwd=tmp_path)
    assert done.returncode == 2, done
    # refused by the output check ("cannot be written ... no terminal"), not by the write after the run
    assert done.stderr.startswith("memtint: error: --json /dev/tty: cannot be written"), done.stderr
    assert "(no terminal: give a file, or '-' for stdout)" in done.stderr, done.stderr


@pytest.mark.engine
def test_compare_warns_of_a_table_only_when_none_of_its_policies_reads_it(memtint):
    """`--set controller.tcm.quantum` beside buddy+tcm is meant for TCM: buddy's and BLISS's runs
    not reading it is noise; with no TCM policy compared, each policy's run still says so."""
    args = ["compare", "--machine", "i7-860", "--mix", "stream,light", "--instructions", "20000", "--warmup", "0",
            "--set", "controller.tcm.quantum=500"]
    code, out, err = memtint(*args, "--policies", "buddy,buddy+tcm,buddy+bliss")
    assert code == 0, err
    assert "nothing reads it" not in out + err, out + err
    code, out, err = memtint(*args, "--policies", "buddy,buddy+bliss")
    assert code == 0, err
    text = " ".join((out + err).split())  # the console wraps long lines
    for policy, scheduler in [("buddy", "fr-fcfs"), ("buddy+bliss", "bliss")]:
        assert (f'{policy}: [controller.tcm] is set but controller.scheduler = "{scheduler}": nothing reads it'
                in text), text
    # A flat [os] key too: --strict is meant for bpm, and buddy not reading it is noise.
    code, out, err = memtint(*args[:-2], "--policies", "buddy,bpm", "--strict")
    assert code == 0 and "nothing reads it" not in out + err, out + err
    code, out, err = memtint(*args[:-2], "--policies", "buddy,random-interleave", "--strict")
    assert code == 0 and 'buddy: os.strict is set but os.policy = "buddy": nothing reads it' in " ".join(
        (out + err).split()), out + err


def test_the_command_line_starts_without_numpy():
    """Every command imports memtint.cli: numpy (about 0.1 s, and OpenBLAS's threads) is loaded by
    the commands that use it, not by the start of all of them."""
    code = "import sys, memtint.cli; sys.exit('numpy' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


@pytest.mark.parametrize("args, command", [
    (["compare", "--machine", "i7-860", "--mix", "light", "extra"], "compare"),
    (["presets", "--bogus"], "presets"),
    (["dram", "--machine", "i7-860", "--generate", "random", "--sample-unit", "5"], "dram"),
    (["sim", "run.toml", "--bogus"], "sim"),
    (["report", "results", "--bogus"], "report"),
    (["demo", "--tiering", "--bogus"], "demo"),
])
def test_an_unknown_argument_points_to_its_commands_help(memtint, args, command):
    """'unrecognized arguments ... (see 'memtint --help')' pointed to the list of commands, not to
    the options of the one given them."""
    from conftest import assert_clean_error

    line = assert_clean_error(memtint(*args), "unrecognized arguments: ", f"(see 'memtint {command} --help')")
    assert "sampling = {...}" not in line


def test_a_sweeps_sampling_options_are_its_specifications(memtint):
    from conftest import assert_clean_error

    assert_clean_error(memtint("sweep", "s.toml", "--out", "x", "--sample-unit", "5000"),
                       "unrecognized arguments: --sample-unit 5000; a sweep takes its sampling settings from the "
                       "specification's sampling = {...} table or --set sampling.KEY=VALUE",
                       "(see 'memtint sweep --help')")


def test_every_command_is_found_for_its_help():
    import argparse

    from memtint.cli import build_parser

    parser = build_parser()
    (commands,) = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"]
    for name, sub in commands.choices.items():
        found = parser._command_parser(argparse.Namespace(handler=sub._defaults.get("handler")))
        assert found is not None and found.prog == f"memtint {name}", name


def test_a_machine_files_misspelt_variant_is_refused_at_its_line(memtint, tmp_path):
    # A [variants] key no policy needs was accepted and never used: a sweep then ran bpm-plus on
    # the machine itself, without the channel bit its misspelt variant was to give it.
    text = (REPO / "configs/machines/i7-860.toml").read_text().replace("page-channel =", "page-chanel =")
    machine = tmp_path / "m.toml"
    machine.write_text(text)
    line = next(i for i, row in enumerate(text.splitlines(), 1) if row.startswith("page-chanel"))
    run = tmp_path / "r.toml"
    run.write_text(f"machine = '{machine}'\nprograms = ['stream']\ninstructions = 10000\n")
    code, out, err = memtint("sim", str(run))
    assert code == 2, err
    assert f"m.toml:{line}:" in err and "variants.page-chanel" in err and "need: page-channel" in err, err
