"""Sampled simulation from Python: compare's intervals, mix_intervals, unchanged cache keys and
configuration hashes of detailed runs, the CLI's flags and errors, sweep specifications and
stores (docs/stats.md "Sampled comparisons", docs/sweeps.md "Sampled sweeps")."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

import memtint
from memtint import _engine, api, comparison, sampling
from memtint.sweep import load_results, parse_spec
from memtint.sweep.runs import expand, memtint_version

SMALL = {"unit": 50_000, "warming": 50_000}
MIX = ["stream", "random"]


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMTINT_CACHE_DIR", str(tmp_path / "cache"))


def inside(value: float, interval: list[float]) -> bool:
    return interval[0] <= value <= interval[1]


# --- (a) a sampled comparison ------------------------------------------------------------------

@pytest.mark.engine
def test_a_sampled_compare_gives_intervals_around_its_estimates():
    result = memtint.compare("i7-860", MIX, ["buddy", "bpm"], instructions=3_000_000, warmup=0, sampling=SMALL)
    assert result["sampling"] == {**SMALL, "matched": True}
    for p in result["policies"]:
        assert p["sampled"] is True
        assert p["sampling"]["unit"] == 50_000 and p["sampling"]["segments"] >= 2
        for key in ("weighted_speedup", "harmonic_speedup", "maximum_slowdown"):
            low, high = p[f"{key}_ci95"]
            assert low < high and inside(p[key], [low, high]), key
        for c in p["cores"]:
            assert inside(c["ipc_shared"], c["ipc_shared_ci95"])
            assert inside(c["ipc_alone"], c["ipc_alone_ci95"])  # the alone runs are sampled too
            assert inside(c["slowdown"], c["slowdown_ci95"])
            assert c["sampling_units"] >= 2
    rows = comparison.to_csv_rows(result)
    assert rows[0]["weighted_speedup_ci95_low"] == result["policies"][0]["weighted_speedup_ci95"][0]
    assert rows[0]["slowdown_ci95_high"] == result["policies"][0]["cores"][0]["slowdown_ci95"][1]
    assert not any(isinstance(v, list) for r in rows for v in r.values())  # CSV cells hold numbers
    # The DRAM requests and energy the table shows: the run's estimates, not its detailed segments' counts.
    for row in rows:
        p = next(p for p in result["policies"] if p["policy"] == row["policy"])
        assert row["dram_requests"] == p["dram_requests"] == p["sampling"]["estimated_dram_requests"]
        assert row["dram_energy_nj"] == p["dram_energy_nj"] == p["sampling"]["estimated_dram_energy_nj"]
        assert row["dram_energy_per_access_nj"] == p["dram_energy_per_access_nj"]
        # ... and the energy's interval (the segments' energy rate over the estimated length) around it
        assert [row["dram_energy_nj_ci95_low"], row["dram_energy_nj_ci95_high"]] == p["dram_energy_nj_ci95"]
        assert inside(p["dram_energy_nj"], p["dram_energy_nj_ci95"])
        # ... and the mix's row-buffer miss rate's
        assert inside(p["row_buffer_miss_rate"], p["row_buffer_miss_rate_ci95"])
        assert row["mix_row_buffer_miss_rate_ci95_low"] == p["row_buffer_miss_rate_ci95"][0]
    assert list(rows[0])[-7:] == ["dram_requests", "dram_energy_nj", "dram_energy_per_access_nj",
                                  "dram_energy_nj_ci95_low", "dram_energy_nj_ci95_high",
                                  "mix_row_buffer_miss_rate_ci95_low", "mix_row_buffer_miss_rate_ci95_high"]

    # The tables show the estimates with their half-widths and say the run was sampled.
    from rich.console import Console

    from memtint.tables import compare_tables

    console = Console(width=200, record=True)
    for table in compare_tables(result):
        console.print(table)
    text = console.export_text()
    assert " ± " in text and "sampled:" in text and "50,000 instructions" in text
    for p in result["policies"]:  # the RB miss rate with its half-width, in points
        h = 100 * sampling.half_width(p["row_buffer_miss_rate_ci95"])
        assert f"{100 * p['row_buffer_miss_rate']:.1f} ± {h:.1f} %" in text
    assert "best WS: " in text


def test_a_sampled_comparison_says_whether_its_best_policy_is_resolved():
    from memtint.tables import resolved_line

    def policy(name, ws, half):
        return {"policy": name, "weighted_speedup": ws, "weighted_speedup_ci95": [ws - half, ws + half]}

    assert resolved_line([policy("buddy", 3.0, 0.05), policy("bpm", 3.2, 0.05)]) == (
        "best WS: bpm, its 95 % interval clear of every other policy's")
    line = resolved_line([policy("buddy", 3.0, 0.05), policy("bpm", 3.2, 0.05), policy("a-vp", 3.12, 0.04)])
    assert line.startswith("best WS: bpm, not resolved from a-vp (their 95 % intervals overlap")
    # With matched units, each pair's own interval on its difference decides.
    differences = [{"policy": "buddy", "against": "bpm", "weighted_speedup_change_ci95": [-0.09, -0.03]},
                   {"policy": "bpm", "against": "a-vp", "weighted_speedup_change_ci95": [0.01, 0.04]}]
    three = [policy("buddy", 3.0, 0.05), policy("bpm", 3.2, 0.05), policy("a-vp", 3.12, 0.04)]
    assert resolved_line(three, differences).startswith("best WS: bpm, ahead of every other policy")
    differences[1]["weighted_speedup_change_ci95"] = [-0.01, 0.04]
    assert resolved_line(three, differences).startswith("best WS: bpm, not resolved from a-vp (the 95 % interval of the "
                                                        "matched difference holds 0")
    # A detailed comparison (no intervals) says nothing.
    assert resolved_line([{"policy": "buddy", "weighted_speedup": 3.0}, {"policy": "bpm", "weighted_speedup": 3.1}]) == ""


@pytest.mark.engine
def test_a_detailed_compare_has_no_sampling_keys():
    result = memtint.compare("i7-860", MIX, ["buddy"], instructions=200_000, warmup=0)
    assert "sampling" not in result
    p = result["policies"][0]
    assert "sampled" not in p and "weighted_speedup_ci95" not in p
    assert "ipc_shared_ci95" not in p["cores"][0]
    assert "weighted_speedup_ci95_low" not in comparison.to_csv_rows(result)[0]


# --- (b) mix_intervals on hand-made inputs -----------------------------------------------------

def core(ipc: float, unit_cpi: list[float] | None = None) -> dict:
    c = {"ipc": ipc}
    if unit_cpi is not None:
        c["sampling"] = {"unit_cpi": unit_cpi}
    return c


def test_equal_unit_cpis_give_intervals_of_zero_width():
    alone = [core(1.0, [1.0] * 10), core(0.5, [2.0] * 10)]
    shared = {"cores": [core(0.5, [2.0] * 10), core(0.25, [4.0] * 10)]}
    got = sampling.mix_intervals(alone, shared)
    assert got["weighted_speedup"] == pytest.approx([1.0, 1.0])
    assert got["harmonic_speedup"] == pytest.approx([0.5, 0.5])
    assert got["maximum_slowdown"] == pytest.approx([2.0, 2.0])
    assert got["slowdowns"] == [pytest.approx([2.0, 2.0])] * 2
    assert sampling.half_width(got["weighted_speedup"]) == pytest.approx(0.0)


def test_a_core_of_one_unit_leaves_every_interval_unbounded_never_zero_wide():
    """One unit has no spread: the engine reports ``[0, null]``; the mix's intervals are
    unbounded (``[None, None]``) and the tables show ``± ?``."""
    from memtint.tables import resolved_line, with_interval

    alone = [core(1.0, [1.0] * 10), core(0.5, [2.0] * 10)]
    shared = {"cores": [core(0.5, [2.0]), core(0.25, [4.0] * 10)]}
    got = sampling.mix_intervals(alone, shared)
    assert got["weighted_speedup"] == [None, None] and got["slowdowns"][0] == [None, None]
    assert got["slowdowns"][1] == pytest.approx([2.0, 2.0])  # not the one-unit core's figure
    assert sampling.half_width(got["weighted_speedup"]) == float("inf")
    assert with_interval(1.0, got["weighted_speedup"]) == "1.000 ± ?"
    assert with_interval(1.7, [0.0, None]) == "1.700 ± ?"  # the engine's unbounded IPC interval
    # A phases run whose every phase had one unit reports no spread (null): unbounded too.
    phases = {"cores": [{"ipc": 0.5, "sampling": {"units": 2, "cpi_stddev": None, "strata_weights": [0.5, 0.5]}},
                        core(0.25, [4.0] * 10)]}
    assert sampling.mix_intervals(alone, phases)["weighted_speedup"] == [None, None]
    line = resolved_line([{"policy": "buddy", "weighted_speedup": 3.0, "weighted_speedup_ci95": [None, None]},
                          {"policy": "bpm", "weighted_speedup": 3.2, "weighted_speedup_ci95": [3.1, 3.3]}])
    assert line.startswith("best WS not resolved: buddy measured a program in fewer than two units, or in units that "
                           "all gave one CPI"), line


def test_an_unbounded_core_leaves_another_programs_slowdown_its_own_interval():
    """A core of unknown spread voids every figure it enters (the mix's, its own slowdown), not
    the slowdown of a program whose shared and alone runs both have intervals."""
    alone = [core(1.0, [1.0, 1.1, 0.9, 1.0]), core(0.5, [2.0, 2.1, 1.9, 2.0])]
    shared = {"cores": [core(0.5, [2.0, 2.2, 1.8, 2.0]), core(0.25, [4.0])]}
    got = sampling.mix_intervals(alone, shared)
    assert got["weighted_speedup"] == [None, None] and got["harmonic_speedup"] == [None, None]
    assert got["maximum_slowdown"] == [None, None] and got["slowdowns"][1] == [None, None]
    low, high = got["slowdowns"][0]
    assert low is not None and low < 2.0 < high
    # A phases alone run of no spread (infinite variance) leaves the other program's finite too.
    phases = {"ipc": 0.5, "sampling": {"units": 2, "cpi_stddev": None, "strata_weights": [0.5, 0.5]}}
    got = sampling.mix_intervals([alone[0], phases], {"cores": [shared["cores"][0], core(0.25, [4.0, 4.1])]})
    assert got["slowdowns"][1] == [None, None]
    assert all(isinstance(x, float) and x == x for x in got["slowdowns"][0]), got["slowdowns"][0]


def test_tables_keep_every_digit_on_a_pipe_and_fold_on_a_narrow_terminal(monkeypatch):
    import io

    from rich.console import Console

    from memtint import tables

    monkeypatch.delenv("COLUMNS", raising=False)  # pytest-xdist's workers set it
    piped = tables.output_console(file=io.StringIO())
    assert piped.width == tables.PIPE_WIDTH
    table = tables._Table(title="t")
    for name in ("policy", "WS", "HS", "max slowdown", "energy nJ"):
        table.add_column(name)
    table.add_row("random-interleave", "1.359 ± 0.012", "0.339 ± 0.003", "4.123 ± 0.045", "2,612,345")
    narrow = Console(file=io.StringIO(), width=40, force_terminal=False)
    narrow.print(table)
    text = narrow.file.getvalue()
    cells = ("random-interleave", "1.359 ± 0.012", "0.339 ± 0.003", "4.123 ± 0.045", "2,612,345")
    # Folded onto more lines, never cut: every digit of every cell is there.
    assert "…" not in text
    assert sum(ch.isdigit() for ch in text) == sum(ch.isdigit() for cell in cells for ch in cell), text


def test_every_commands_tables_print_titles_and_cells_as_text():
    import io

    from rich.console import Console

    from memtint import tables
    from memtint import tiering_demo
    from memtint.linux import commands
    from memtint.probe import command
    from memtint.reproduce import report

    table = tables._Table(title="run-mix of [/red] [bold]x", caption="[x]")
    table.add_column("a")
    table.add_row("[/y]")
    out = Console(file=io.StringIO(), width=120)
    out.print(table)
    printed = out.file.getvalue()
    assert all(text in printed for text in ("[/red]", "[bold]x", "[x]", "[/y]")), printed
    # The Linux commands', the probe's, the tiering demo's and reproduce's tables are these tables.
    import inspect
    for module in (commands, command, report, tiering_demo):
        assert "from rich.table import Table" not in inspect.getsource(module), module.__name__


def test_a_detailed_alone_run_contributes_no_variance():
    shared = {"cores": [core(0.5, [1.8, 2.2, 1.9, 2.1]), core(0.25, [4.0, 4.0, 4.0, 4.0])]}
    detailed_alone = [core(1.0), core(0.5)]  # no sampling section: exact
    got = sampling.mix_intervals(detailed_alone, shared)
    # Only the shared run varies: WS = A0/S0 + A1/S1, S1 constant, so the variance is S0's alone.
    s0 = [1.8, 2.2, 1.9, 2.1]
    mean = sum(s0) / 4
    var_mean = sum((x - mean) ** 2 for x in s0) / 3 / 4
    half = sampling.Z95 * (1.0 / mean ** 2) * var_mean ** 0.5
    assert sampling.half_width(got["weighted_speedup"]) == pytest.approx(half)
    # A detailed alone run and a detailed shared run: nothing varies.
    exact = sampling.mix_intervals(detailed_alone, {"cores": [core(0.5), core(0.25)]})
    assert sampling.half_width(exact["weighted_speedup"]) == pytest.approx(0.0)
    # Sampled alone runs with the same shared run only widen the interval.
    wider = sampling.mix_intervals([core(1.0, [0.9, 1.1, 1.0, 1.0]), core(0.5)], shared)
    assert sampling.half_width(wider["weighted_speedup"]) > half


# --- (c) specs and alone cache keys of detailed runs are unchanged -----------------------------

def key_before_sampling(spec: dict) -> str:
    """The alone cache key as computed before sampling existed (comparison._alone_key then)."""
    key = {
        "program": comparison._identity(spec["programs"][0]),
        "machine": comparison._machine_identity(spec["machine"]),
        "mapping": spec.get("mapping"),
        "scheduler": spec.get("scheduler"),
        "overrides": spec.get("overrides"),
        "instructions": spec["instructions"],
        "warmup": spec.get("warmup", 0),
        "seed": spec["seed"],
        "os": spec["os"],
        "engine": _engine.version(),
    }
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()


def test_unsampled_specs_and_alone_keys_are_unchanged():
    spec = api.build_sim_spec("i7-860", MIX, instructions=1_000_000, warmup=5)
    assert "sampling" not in spec
    assert api.build_sim_spec("i7-860", MIX, instructions=1_000_000, warmup=5, sampling=None) == spec
    sampled = api.build_sim_spec("i7-860", MIX, instructions=1_000_000, warmup=5, sampling=SMALL)
    assert sampled["sampling"] == SMALL and {k: v for k, v in sampled.items() if k != "sampling"} == spec

    alone = comparison.build_alone_specs("i7-860", MIX, instructions=1_000_000, warmup=0)
    alone_sampled = comparison.build_alone_specs("i7-860", MIX, instructions=1_000_000, warmup=0, sampling=SMALL)
    for plain, with_sampling in zip(alone, alone_sampled):
        assert "sampling" not in plain and with_sampling["sampling"] == SMALL
        assert comparison.alone_key(plain) == key_before_sampling(plain)
        assert comparison.alone_key(with_sampling) != comparison.alone_key(plain)


# --- (d) the command line ----------------------------------------------------------------------

COMPARE = ("compare", "--machine", "i7-860", "--mix", "stream,random", "--instructions", "1000000",
           "--warmup", "0", "--no-cache")


@pytest.mark.engine
def test_cli_sampling_errors_name_the_key(memtint, clean_error):
    clean_error(memtint(*COMPARE, "--sample-period", "10"), "sampling.period")
    clean_error(memtint(*COMPARE, "--sample-unit", "2000000"), "sampling.unit")
    clean_error(memtint(*COMPARE, "--target-error", "2"), "sampling.target_error")
    clean_error(memtint(*COMPARE, "--sample-unit", "0"), "--sample-unit")  # argparse: a count >= 1
    clean_error(memtint(*COMPARE, "--sample-min-units", "0"), "--sample-min-units")
    # The value as the user wrote it, not as JSON prints the float it read (it said "Infinity").
    clean_error(memtint(*COMPARE, "--set", "sampling.target_error=1e400"), "sampling.target_error=1e400: not a finite")


def test_every_instruction_count_flag_reads_counts_as_the_others_do():
    # --sample-functional is instructions like --sample-period: 500k was "expected an integer".
    from memtint import cli

    for command in (["compare", "--machine", "i7-860", "--mix", "stream"], ["sim", "run.toml"]):
        args = cli.build_parser().parse_args([*command, "--sample-period", "1M", "--sample-unit", "10k",
                                              "--sample-warming", "20k", "--sample-functional", "500k"])
        table = cli.sampling_from_args(args)
        assert (table["period"], table["unit"], table["warming"], table["functional"]) == (
            1_000_000, 10_000, 20_000, 500_000), table


def test_run_file_errors_spell_values_as_toml_and_set_reaches_sampling(memtint, clean_error, tmp_path):
    run = tmp_path / "run.toml"
    run.write_text('machine = "i7-860"\nprograms = ["stream"]\ninstructions = 100000\nsampling = true\n')
    clean_error(memtint("sim", run), "run.toml:4: sampling: expected a [sampling] table", "got true")
    run.write_text('machine = "i7-860"\nprograms = ["stream"]\ninstructions = 100000\n')
    clean_error(memtint("sim", run, "--set", "sampling.unitt=100"), "sampling", "unitt")
    clean_error(memtint("sim", run, "--set", "sampling.a.b=1"), "--set sampling.a.b")
    # The value as typed, not as parsed (1e4 is the float 10000.0).
    clean_error(memtint("sim", run, "--set", "sampling.unit=1e4"), "--set sampling.unit=1e4: ", "whole number")
    # A comparison's setting in a run of one configuration: said so, naming the --set or the line.
    clean_error(memtint("sim", run, "--set", "sampling.matched=false"),
                "--set sampling.matched=false: invalid configuration: sampling.matched: matches the units of the "
                "policies a comparison runs")
    run.write_text('machine = "i7-860"\nprograms = ["stream"]\ninstructions = 100000\n[sampling]\nmatched = true\n')
    clean_error(memtint("sim", run), "run.toml:5: invalid configuration: sampling.matched: ", "leave it out")


@pytest.mark.engine
def test_cli_compare_and_sim_show_sampled_estimates(memtint, tmp_path):
    code, out, err = memtint(*COMPARE, "--sample-unit", "20000", "--sample-warming", "20000", "--json", "-")
    assert code == 0, err
    result = json.loads(out)
    assert result["sampling"] == {**sampling.DEFAULT_SAMPLING, "unit": 20_000, "warming": 20_000, "matched": True}
    assert result["policies"][0]["sampled"] is True

    (tmp_path / "run.toml").write_text('machine = "i7-860"\nprograms = ["stream", "random"]\ninstructions = 1000000\n'
                                       "[sampling]\nunit = 20000\nwarming = 20000\n")
    code, out, err = memtint("sim", "run.toml")
    assert code == 0, err
    assert " ± " in out and "sampled:" in out
    assert re.search(r"row-buffer miss rate \d+\.\d ± \d+\.\d %", out), out  # the mix's, with its interval
    assert re.search(r"\d+\.\d ± \d+\.\d%", out), out  # each core's RB miss
    code, out, err = memtint("sim", "run.toml", "--sample-period", "100000", "--json", "-")
    assert code == 0, err
    assert json.loads(out)["sampling"]["period"] == 100_000


@pytest.mark.engine
def test_a_sampled_runs_mix_figures_weigh_each_core_by_the_run_its_units_stand_for():
    # bfs beside triad, which runs about 3x as fast: triad's units are 3x longer, and their raw
    # sums made the mix's row-buffer miss rate 23 % against the detailed run's 33 %, and its
    # requests and energy (detailed segments only) 2.6x too low.
    from memtint.workloads import trace_path

    spec = api.build_sim_spec("i7-860", [trace_path("bfs"), trace_path("triad")], instructions=3_000_000,
                              policy="buddy", warmup=1_000_000)
    detailed = api.run_sim_spec(spec)
    sampled = api.run_sim_spec({**spec, "sampling": {"unit": 10_000, "warming": 20_000, "period": 100_000}})
    units = [sum(c["sampling"]["unit_instructions"]) for c in sampled["cores"]]
    assert units[1] > 2 * units[0]  # the premise: the faster core measured far more
    assert sampled["row_buffer_miss_rate"] == pytest.approx(detailed["row_buffer_miss_rate"], abs=0.02)
    s = sampled["sampling"]
    assert sampled["dram_requests"] < 0.5 * detailed["dram_requests"]  # the segments' own
    assert s["estimated_dram_requests"] == pytest.approx(detailed["dram_requests"], rel=0.05)
    assert s["estimated_dram_energy_nj"] == pytest.approx(detailed["dram"]["energy"]["total_nj"], rel=0.05)
    assert inside(detailed["dram"]["energy"]["total_nj"], s["estimated_dram_energy_nj_ci95"])


@pytest.mark.engine
def test_units_too_short_to_vary_give_no_interval_and_a_warning():
    from memtint.workloads import trace_path

    spec = api.build_sim_spec("i7-860", [trace_path("bzip2")], instructions=3_000_000, policy="buddy", warmup=1_000_000)
    run = api.run_sim_spec({**spec, "sampling": {"unit": 100}})
    core = run["cores"][0]["sampling"]
    assert len(set(core["unit_cpi"])) == 1 and core["cpi_stddev"] is None  # unbounded, not 0
    assert core["ipc_ci95"][1] is None
    assert any("all measured a CPI of" in w for w in run["warnings"]), run["warnings"]
    assert any("sampling.unit = 100 instructions is shorter than 1000" in w for w in run["warnings"])


# --- (e) and (f) sweeps ------------------------------------------------------------------------

SWEEP = {"name": "s", "machines": ["i7-860"], "mixes": [MIX], "policies": ["buddy", "bpm"],
         "instructions": 1_000_000, "warmup": 0}


def test_a_sweep_sampling_table_is_checked_key_by_key():
    with pytest.raises(memtint.MemtintError, match=r"spec\.toml: sampling: unknown key\(s\) 'bogus'"):
        parse_spec({**SWEEP, "sampling": {"bogus": 1}}, source="spec.toml")
    with pytest.raises(memtint.MemtintError, match=r"sampling\.unit: must be at least 1"):
        parse_spec({**SWEEP, "sampling": {"unit": 0}})
    with pytest.raises(memtint.MemtintError, match=r"sampling\.target_error"):
        parse_spec({**SWEEP, "sampling": {"target_error": 1.5}})
    with pytest.raises(memtint.MemtintError, match=r"sampling\.min_units: must be at least 1"):
        parse_spec({**SWEEP, "sampling": {"min_units": 0}})
    with pytest.raises(memtint.MemtintError, match=r"sampling: expected a table"):
        parse_spec({**SWEEP, "sampling": 5})
    # What sampling does not support stops the sweep before it starts (the engine's probe).
    with pytest.raises(memtint.MemtintError, match=r"os\.dynamic.*sampled runs do not support it"):
        parse_spec({**SWEEP, "policies": ["bpm"], "os": {"dynamic": "dynamic-bpm"}, "sampling": SMALL})
    # So do settings the engine refuses whatever the run's length (every run failed at its start).
    with pytest.raises(memtint.MemtintError, match=r"sampling\.clusters: 3: clusters apply to mode = \"phases\" only"):
        parse_spec({**SWEEP, "sampling": {"clusters": 3}})
    # Settings that do not fit the sweep's runs are refused up front, as the engine words them.
    with pytest.raises(memtint.MemtintError, match=r"sampling\.unit: 2000000 instructions is longer than the run "
                                                   r"\(instructions = 1000000\) \(runs of 1,000,000"):
        parse_spec({**SWEEP, "sampling": {"unit": 2_000_000}})
    with pytest.raises(memtint.MemtintError, match=r"sampling\.period: 600000 instructions leaves 1 unit"):
        parse_spec({**SWEEP, "sampling": {"unit": 10_000, "warming": 0, "period": 600_000}})


def test_python_words_misfits_as_the_engine_does():
    for bad in ({"unit": 2_000_000}, {"unit": 50_000, "warming": 10_000, "period": 40_000},
                {"unit": 50_000, "warming": 10_000, "period": 600_000},
                {"unit": 10_000, "warming": 10_000, "period": 100_000, "functional": 90_000}):
        spec = api.build_sim_spec("i7-860", ["light"], instructions=1_000_000, policy="buddy", warmup=0, sampling=bad)
        with pytest.raises(memtint.MemtintError) as engine:
            api.run_sim_spec(spec)
        assert sampling.misfit(bad, 1_000_000) in str(engine.value)
    assert sampling.misfit({}, 100_000_000) is None


def hash_before_sampling(run) -> str:
    """A run's configuration hash as computed before sampling existed (runs.config_hash then)."""
    canonical = {
        "format": 1, "memtint": memtint_version(),
        "machine": comparison._machine_identity(run.machine),
        "programs": [comparison._identity(p) for p in run.programs],
        "policy": run.policy, "instructions": run.instructions, "seed": run.seed, "baseline": run.baseline,
        "os": run.os, "mapping": run.mapping, "scheduler": run.scheduler, "warmup": run.warmup,
    }
    return hashlib.sha256(json.dumps(canonical, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


@pytest.mark.engine
def test_a_sampled_compare_matches_every_policys_units_to_the_baselines():
    mix = ["stream", "random", "light", "random:reads_pki=12"]
    matched = memtint.compare("i7-860", mix, ["bpm", "buddy", "cache-only"], instructions=3_000_000, warmup=0,
                              sampling=SMALL)
    alone = {p["policy"]: p for p in matched["policies"]}
    assert matched["sampling"]["matched"] is True
    # buddy (the baseline) paced the units; the others replayed its schedule and carry their
    # WS change against it, with an interval.
    assert "matched_to" not in alone["buddy"] and alone["bpm"]["matched_to"] == "buddy"
    for p in ("bpm", "cache-only"):
        low, high = alone[p]["weighted_speedup_change_ci95"]
        change = alone[p]["weighted_speedup"] / alone["buddy"]["weighted_speedup"] - 1
        assert (low + high) / 2 == pytest.approx(change, abs=1e-12)  # centred on the change the table shows
    # The CSV rows: the change's columns on every row, empty for the pacing policy.
    from memtint.comparison import to_csv_rows

    csv_rows = to_csv_rows(matched)
    assert all({"matched_to", "weighted_speedup_change_ci95_low"} <= set(r) for r in csv_rows)
    assert {r["policy"]: r["matched_to"] for r in csv_rows} == {"bpm": "buddy", "buddy": "", "cache-only": "buddy"}
    assert {(d["policy"], d["against"]) for d in matched["differences"]} == {
        ("bpm", "buddy"), ("bpm", "cache-only"), ("buddy", "cache-only")}
    # Not matched: each policy paces itself, no differences.
    unmatched = memtint.compare("i7-860", mix, ["bpm", "buddy"], instructions=3_000_000, warmup=0,
                                sampling={**SMALL, "matched": False})
    assert unmatched["sampling"]["matched"] is False and "differences" not in unmatched
    assert "matched_to" not in unmatched["policies"][0]
    # The baseline's own run is the same either way; bpm's differs (its units moved to buddy's).
    ws = lambda r, p: next(x["weighted_speedup"] for x in r["policies"] if x["policy"] == p)  # noqa: E731
    assert ws(unmatched, "buddy") == ws(matched, "buddy") and ws(unmatched, "bpm") != ws(matched, "bpm")
    with pytest.raises(memtint.MemtintError, match=r"sampling\.matched: expected true or false, got 'yes'"):
        memtint.compare("i7-860", mix, ["bpm", "buddy"], instructions=3_000_000, sampling={**SMALL, "matched": "yes"})
    # A run's units that paced a given schedule: only with the schedule, and in its shape.
    with pytest.raises(memtint.MemtintError, match=r"paced_by: the run that paced a schedule; give the schedule too"):
        memtint.compare("i7-860", mix, ["bpm"], instructions=3_000_000, sampling=SMALL,
                        paced_by={"policy": "buddy", "cores": []})
    with pytest.raises(memtint.MemtintError, match=r"paced_by: expected \{\"policy\": name, \"cores\": one entry per "
                                                   r"program \(4\)\}"):
        memtint.compare("i7-860", mix, ["bpm"], instructions=3_000_000, sampling=SMALL, schedule={"at": []},
                        paced_by={"policy": "buddy", "cores": []})


def test_a_differences_interval_cancels_the_alone_runs_error_and_knows_matched_runs():
    def core(cpis, k, segments):
        return {"ipc": 1 / (sum(cpis) / len(cpis) * k), "sampling": {
            "units": len(cpis), "unit_cycles": [c * k * 1000 for c in cpis], "unit_instructions": [1000] * len(cpis),
            "unit_weights": [10_000] * len(cpis), "unit_segments": list(segments)}}

    def run(cpis, segments=(0, 1, 2, 3, 4, 5)):
        return {"cores": [core(cpis, 1.0, segments), core(cpis, 2.0, segments)], "sampling": {}}
    # Sampled alone runs, as variable as the shared ones: both WS divide by them.
    alone = [core([0.5, 0.7, 0.4, 0.6, 0.45, 0.65], 1.0, range(6)), core([0.5, 0.7, 0.4, 0.6, 0.45, 0.65], 2.0, range(6))]
    a, b = run([1.0, 1.4, 0.8, 1.2, 0.9, 1.3]), run([1.1, 1.5, 0.9, 1.3, 1.0, 1.4])
    assert sampling.matched(a, b) and not sampling.matched(a, run([1.1, 1.5, 0.9, 1.3, 1.0, 1.4], (0, 1, 2, 3, 4, 6)))
    diff = sampling.difference_intervals(alone, a, b)
    # The change's estimate, 1.2/1.1 - 1, at the interval's centre.
    low, high = diff["weighted_speedup_change"]
    assert (low + high) / 2 == pytest.approx(1.2 / 1.1 - 1)
    # Narrower than the two WS intervals combined as if independent (each carries the alone error).
    half = lambda i: (i[1] - i[0]) / 2  # noqa: E731
    ws_a = sampling.mix_intervals(alone, a)["weighted_speedup"]
    ws_b = sampling.mix_intervals(alone, b)["weighted_speedup"]
    assert half(diff["weighted_speedup"]) < 0.9 * (half(ws_a) ** 2 + half(ws_b) ** 2) ** 0.5


def test_a_pairs_verdict_does_not_depend_on_which_policy_divides():
    """A relative change's interval holds 0 exactly when the difference's does, either way round:
    one verdict per pair (a delta-method interval of the ratio itself, near the edge, excluded 0
    with one policy as the denominator and held it with the other)."""
    def core(cpis, k):
        return {"ipc": 1 / (sum(cpis) / len(cpis) * k), "sampling": {
            "units": len(cpis), "unit_cycles": [c * k * 1000 for c in cpis], "unit_instructions": [1000] * len(cpis),
            "unit_weights": [10_000] * len(cpis), "unit_segments": list(range(len(cpis)))}}

    cpis = [1.0, 1.4, 0.8, 1.2, 0.9, 1.3]
    alone = [core([c / 2 for c in cpis], 1.0), core([c / 2 for c in cpis], 2.0)]

    def run(f):
        return {"cores": [core([c * f for c in cpis], 1.0), core([c * f for c in cpis], 2.0)]}

    def resolved(interval):
        return interval[0] > 0 or interval[1] < 0

    for i in range(1, 400):  # runs 0.1 % to 40 % slower: through the edge of resolution
        a, b = run(1.0), run(1 + i / 1000)
        ab, ba = sampling.difference_intervals(alone, a, b), sampling.difference_intervals(alone, b, a)
        verdict = resolved(ab["weighted_speedup"])
        assert resolved(ba["weighted_speedup"]) == verdict
        assert resolved(ab["weighted_speedup_change"]) == verdict == resolved(ba["weighted_speedup_change"]), i
        ws_a = sum(x["ipc"] / y["ipc"] for x, y in zip(a["cores"], alone))
        ws_b = sum(x["ipc"] / y["ipc"] for x, y in zip(b["cores"], alone))
        low, high = ab["weighted_speedup_change"]
        assert (low + high) / 2 == pytest.approx(ws_a / ws_b - 1)


@pytest.mark.engine
def test_compare_says_under_its_table_what_its_ws_column_shows():
    """The user's case: cache-only's WS change against buddy excluded 0 in the table while the
    line under it read the pair, buddy against cache-only, as not resolved."""
    from rich.console import Console

    from memtint.tables import compare_tables

    result = memtint.compare("i7-860", ["stream", "light", "random", "light"], ["buddy", "bpm", "cache-only"],
                             instructions=2_000_000, warmup=0, sampling=dict(sampling.DEFAULT_SAMPLING))
    pairs = {(d["policy"], d["against"]): d for d in result["differences"]}
    for p in result["policies"]:
        if p["policy"] == "buddy":
            continue
        low, high = p["weighted_speedup_change_ci95"]
        d = pairs[("buddy", p["policy"])]
        for interval in (d["weighted_speedup_change_ci95"], d["weighted_speedup_difference_ci95"]):
            assert (interval[0] > 0 or interval[1] < 0) == (low > 0 or high < 0), p["policy"]
    # The line under the table: each policy against the best one, by that pair's own interval.
    console = Console(width=300, record=True)
    for table in compare_tables(result):
        console.print(table)
    line = next(x for x in console.export_text().splitlines() if "best WS:" in x)
    best = max(result["policies"], key=lambda q: q["weighted_speedup"])["policy"]
    assert line.split("best WS: ", 1)[1].startswith(f"{best},"), line
    close = line.split("not resolved from", 1)[1].split("(", 1)[0] if "not resolved from" in line else ""
    for p in result["policies"]:
        if p["policy"] == best:
            continue
        d = pairs.get((best, p["policy"])) or pairs[(p["policy"], best)]
        low, high = d["weighted_speedup_difference_ci95"]
        assert (p["policy"] in [x.strip() for x in close.split(",")]) == (low <= 0 <= high), (p["policy"], d, line)


def test_detailed_sweep_hashes_are_unchanged_and_sampled_ones_differ():
    detailed = expand(parse_spec(SWEEP))
    assert [r.config_hash for r in detailed] == [hash_before_sampling(r) for r in detailed]
    assert all(r.sampling is None and "sampling" not in r.describe() for r in detailed)
    sampled = expand(parse_spec({**SWEEP, "sampling": SMALL}))
    written = {"mode": "periodic", **SMALL}  # the engine's defaults written out
    assert all(r.sampling == written and r.describe()["sampling"] == written for r in sampled)
    assert all(r.schedule_from == "buddy" for r in sampled)  # matched units by default
    assert not {r.config_hash for r in sampled} & {r.config_hash for r in detailed}
    # The defaults spelt out or left to `--sample`'s table are one configuration, one hash.
    from memtint.sampling import DEFAULT_SAMPLING
    spelt = expand(parse_spec({**SWEEP, "sampling": {"unit": 20_000, "warming": 30_000}}))
    assert [r.config_hash for r in spelt] == [r.config_hash for r in expand(parse_spec({**SWEEP, "sampling": DEFAULT_SAMPLING}))]


@pytest.mark.engine
def test_a_sampled_sweep_stores_intervals_and_older_batches_load_as_detailed(tmp_path):
    import pyarrow.parquet as pq

    summary = memtint.sweep({**SWEEP, "sampling": {"unit": 20_000, "warming": 20_000}}, out=tmp_path / "out",
                            jobs=1, progress=False)
    assert summary.failed == 0
    frame = load_results(tmp_path / "out")
    assert frame["sampled"].all()
    assert ((frame["weighted_speedup_ci95_low"] <= frame["weighted_speedup"])
            & (frame["weighted_speedup"] <= frame["weighted_speedup_ci95_high"])).all()
    for key in ("dram_energy_nj", "mix_row_buffer_miss_rate"):  # the run's energy and the mix's RB miss rate
        assert ((frame[f"{key}_ci95_low"] <= frame[key]) & (frame[key] <= frame[f"{key}_ci95_high"])).all(), key

    from memtint.reports import summary_markdown, summary_rows
    from memtint.sweep import policy_summary
    from memtint.sweep.summary import sampled_note

    rows = policy_summary(frame)
    assert all(r["sampled_runs"] == 1 and r["weighted_speedup_ci95_halfwidth_mean"] > 0 for r in rows)
    assert "sampled simulation: all" in sampled_note(rows)
    assert "± ?:" not in sampled_note(rows)
    # A run without bounds (a core of one unit) shows "± ?": the note says what it means.
    unbounded = [{**rows[0], "weighted_speedup_ci95_halfwidth_mean": float("inf")}]
    assert "± ?: a run measured a program in fewer than two units" in sampled_note(unbounded)
    assert " ± " in summary_markdown(summary_rows(frame))

    # A batch written before the columns existed loads with them empty and its runs detailed.
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    first = tmp_path / "out" / manifest["batches"][0]["file"]
    pq.write_table(pq.read_table(first).drop_columns(
        ["weighted_speedup_ci95_low", "weighted_speedup_ci95_high", "sampled"]), first)
    old = load_results(tmp_path / "out")
    assert not old["sampled"].any() and old["weighted_speedup_ci95_low"].isna().all()
    assert all(r["weighted_speedup_ci95_halfwidth_mean"] is None for r in policy_summary(old))
    assert sampled_note(policy_summary(old)) == ""


@pytest.mark.engine
def test_a_sampled_sweeps_findings_call_a_change_only_where_its_interval_resolves_it():
    """The findings' verdict ("a loss on these mixes") rests on the mean WS change; for sampled
    runs it is an estimate, said with its ± and called only where the interval excludes 0."""
    import pandas as pd

    from memtint.findings import policy_sentences
    from memtint.reports import run_table

    def run(policy, mix, ws, change=None, sampled=True, matched=True):
        row = {"config_hash": f"{mix}-{policy}", "machine": "i7-860", "policy": policy, "mix": mix,
               "instructions": 1000, "seed": 1, "os": "{}", "status": "ok", "weighted_speedup": ws,
               "maximum_slowdown": 2.0 / ws, "mix_row_buffer_miss_rate": 0.4, "baseline": "buddy",
               "sampled": sampled}
        if change is not None and matched:
            row.update(matched_to="buddy", weighted_speedup_change_ci95_low=change[0],
                       weighted_speedup_change_ci95_high=change[1])
        return row

    rows = [run("buddy", "a|b", 2.0), run("buddy", "c|d", 2.0),
            run("bpm", "a|b", 1.96, (-0.05, 0.01)), run("bpm", "c|d", 1.96, (-0.05, 0.01)),
            run("cache-only", "a|b", 1.8, (-0.12, -0.08)), run("cache-only", "c|d", 1.8, (-0.12, -0.08))]
    bpm, cache = policy_sentences(run_table(pd.DataFrame(rows)), set())
    # bpm: -2.0 % within ± 2.1 % (each run's ± 3.0 %, over two mixes): not a loss.
    assert "weighted speedup -2.0 ± 2.1 % over buddy" in bpm and "a loss" not in bpm, bpm
    assert "not resolved from buddy (the change is within its 95 % sampling interval" in bpm, bpm
    assert "weighted speedup -10.0 ± 1.4 % over buddy" in cache and "a loss on these mixes" in cache, cache
    # Self-paced runs carry no interval of the change: no verdict either.
    rows = [run("buddy", "a|b", 2.0), run("bpm", "a|b", 1.8, (-0.12, -0.08), matched=False)]
    (bpm,) = policy_sentences(run_table(pd.DataFrame(rows)), set())
    assert "-10.0 % (sampled)" in bpm and "a loss" not in bpm and "paced themselves" in bpm, bpm
    # Detailed runs keep their sentences.
    rows = [run("buddy", "a|b", 2.0, sampled=False), run("bpm", "a|b", 1.96, sampled=False)]
    (bpm,) = policy_sentences(run_table(pd.DataFrame(rows)), set())
    assert "weighted speedup -2.0 % over buddy" in bpm and "a loss on these mixes" in bpm, bpm


def test_a_sweep_prints_a_warning_once_whatever_its_figures_with_how_many_runs_gave_it(memtint, tmp_path):
    # Each light core runs several times as fast as random and gets fewer than min_units units; the
    # warning names its core, units and instructions, so each run's text differs: they were printed
    # one by one (four here, 2,000 in a sweep of a thousand runs) and none said how many others did.
    (tmp_path / "spec.toml").write_text(
        'machines = ["i7-860"]\npolicies = ["buddy", "bpm"]\ninstructions = 3_000_000\nwarmup = 0\n'
        'mixes = [["stream", "light", "random", "light"]]\n'
        'sampling = { unit = 10_000, warming = 10_000, period = 60_000 }\n')
    code, out, err = memtint("sweep", "spec.toml", "--out", "out", "--jobs", "1", "--no-report")
    assert code == 0, err
    few = [line for line in out.splitlines() if "fewer than sampling.min_units" in line]
    assert len(few) == 1 and "(and 1 more run(s)" in few[0], out


@pytest.mark.engine
def test_a_sampled_sweep_replays_each_mixs_baseline_schedule_as_compare_does(tmp_path, monkeypatch):
    table = {"unit": 20_000, "warming": 20_000}
    mix = ["stream", "random", "light"]
    spec = {**SWEEP, "mixes": [mix], "instructions": 2_000_000, "sampling": table}
    both = memtint.sweep(spec, out=tmp_path / "both", jobs=1, progress=False)
    only_bpm = memtint.sweep({**spec, "policies": ["bpm"]}, out=tmp_path / "bpm", jobs=1, progress=False)
    assert both.failed == 0 and only_bpm.failed == 0
    compared = memtint.compare("i7-860", mix, ["buddy", "bpm"], instructions=2_000_000, warmup=0, sampling=table)
    expected = {p["policy"]: p["weighted_speedup"] for p in compared["policies"]}
    frames = {name: load_results(tmp_path / name) for name in ("both", "bpm")}
    for name, frame in frames.items():
        for policy, ws in frame.groupby("policy")["weighted_speedup"].first().items():
            # buddy's run paced the units (in "bpm", a run made for its schedule alone); bpm replayed them.
            assert ws == pytest.approx(expected[policy], rel=1e-12), (name, policy)
        assert frame["setup"].str.contains("sampling.matched_to=buddy").all()
        # bpm's change against buddy's run, with compare's interval, whoever ran the schedule.
        bpm = frame[frame["policy"] == "bpm"].iloc[0]
        change = next(p for p in compared["policies"] if p["policy"] == "bpm")["weighted_speedup_change_ci95"]
        assert bpm["matched_to"] == "buddy"
        assert [bpm["weighted_speedup_change_ci95_low"], bpm["weighted_speedup_change_ci95_high"]] == \
            pytest.approx(change, rel=1e-12)
        if name == "both":
            assert frame.loc[frame["policy"] == "buddy", "matched_to"].isna().all()
    # The summaries: the mean change and its interval (one mix: the run's own).
    from memtint.reports import summary_markdown, summary_rows
    from memtint.sweep import policy_summary
    from memtint.tables import normalised_table, sweep_table

    half = (change[1] - change[0]) / 2
    rows = {r["policy"]: r for r in policy_summary(frames["both"])}
    assert rows["bpm"]["matched_to"] == "buddy" and rows["buddy"]["matched_to"] is None
    assert rows["bpm"]["weighted_speedup_change_mean"] == pytest.approx(expected["bpm"] / expected["buddy"] - 1, abs=1e-9)
    assert rows["bpm"]["weighted_speedup_change_ci95_halfwidth"] == pytest.approx(half, rel=1e-9)
    shown = sweep_table(list(rows.values()), "t")
    assert [c.header for c in shown.columns][3] == "WS vs buddy"
    assert f"± {100 * half:.1f} %" in list(shown.columns[3].cells)[1]
    normalised = {r["policy"]: r for r in summary_rows(frames["both"])}
    assert normalised["bpm"]["ws_norm_ci95_halfwidth"] == pytest.approx(half, rel=1e-9)
    assert normalised["buddy"]["ws_norm_ci95_halfwidth"] is None
    assert f"{normalised['bpm']['ws_norm_mean']:.3f} ± {half:.3f}" in summary_markdown(list(normalised.values()))
    assert "matched units" in normalised_table(list(normalised.values()), "t").caption
    assert all(r["ws_change_vs"] is None for r in normalised.values())  # buddy is the report's baseline
    # Only bpm stored: the report normalises to it, and still shows the change against buddy's
    # runs, which paced the sweep, as the sweep's table does.
    alone_bpm = summary_rows(frames["bpm"])
    assert [(r["policy"], r["ws_change_vs"]) for r in alone_bpm] == [("bpm", "buddy")]
    assert alone_bpm[0]["ws_change_mean"] == pytest.approx(expected["bpm"] / expected["buddy"] - 1, abs=1e-9)
    assert alone_bpm[0]["ws_change_ci95_halfwidth"] == pytest.approx(half, rel=1e-9)
    cell = f"{100 * alone_bpm[0]['ws_change_mean']:+.1f} ± {100 * half:.1f} %"
    assert "| WS vs buddy, mean |" in summary_markdown(alone_bpm) and cell in summary_markdown(alone_bpm)
    shown = normalised_table(alone_bpm, "t")
    assert [c.header for c in shown.columns][-1] == "WS vs\nbuddy" and list(shown.columns[-1].cells) == [cell]
    assert "WS vs buddy: the mean change" in shown.caption
    # buddy stored but another baseline asked for: the same column, "—" on buddy's own row.
    other = {r["policy"]: r for r in summary_rows(frames["both"], baseline="bpm")}
    assert other["bpm"]["ws_change_vs"] == "buddy" and other["buddy"]["ws_change_mean"] is None
    assert other["bpm"]["ws_change_mean"] == pytest.approx(alone_bpm[0]["ws_change_mean"], rel=1e-12)
    # The per-mix WS plot: bpm's bar carries its interval; buddy's, exactly 1, none.
    import memtint.reports as reports_module

    drawn = {}

    def keep(fig, path, **kw):
        drawn[Path(path).name] = {c.get_label(): c.errorbar for c in fig.axes[0].containers
                                         if hasattr(c, "errorbar")}
    monkeypatch.setattr(reports_module, "save_figure", keep)
    reports_module.write_report(tmp_path / "both", tmp_path / "report")
    bars = drawn["weighted_speedup.png"]
    assert bars["bpm"] is not None and bars["buddy"] is None
    segments = bars["bpm"].lines[2][0].get_segments()
    assert segments[0][1][1] - segments[0][0][1] == pytest.approx(2 * half, rel=1e-6)
    # Unmatched, bpm paces itself: another configuration, another hash and figure.
    unmatched = expand(parse_spec({**spec, "sampling": {**table, "matched": False}}))
    assert not {r.config_hash for r in unmatched} & {r.config_hash for r in expand(parse_spec(spec))}
    assert all(r.schedule_from is None for r in unmatched)
    with pytest.raises(memtint.MemtintError, match=r"sampling\.matched: expected true or false, got 1"):
        parse_spec({**spec, "sampling": {**table, "matched": 1}})


def test_python_knows_the_engines_default_period():
    # reproduce plans by memtint.sampling.units; the engine resolves the period itself.
    for n in (2_000_000, 12_345_678):
        spec = api.build_sim_spec("i7-860", ["light"], instructions=n, policy="buddy", warmup=0,
                                  sampling={"mode": "periodic"})
        r = api.run_sim_spec(spec)
        assert r["sampling"]["period"] == sampling.period({}, n)
        assert r["sampling"]["unit"] == sampling.ENGINE_UNIT and r["sampling"]["warming"] == sampling.ENGINE_WARMING


# --- (g) phase sampling ------------------------------------------------------------------------

def test_a_phases_alone_run_adds_its_stratified_variance():
    # Two strata of 3 units each, weights 0.8 and 0.2, units of 1000 instructions.
    cycles = [1000, 1100, 900, 3000, 3300, 2700]
    alone = [{"ipc": 1.0 / (0.8 * 1.0 + 0.2 * 3.0),
              "sampling": {"unit_cycles": cycles, "unit_instructions": [1000] * 6, "unit_strata": [0, 0, 0, 1, 1, 1],
                           "strata_weights": [0.8, 0.2], "unit_weights": [1] * 6, "unit_segments": list(range(6)),
                           # the engine's stratified standard deviation: sqrt(variance x units)
                           "units": 6, "cpi_stddev": (6 * (0.64 * 0.01 / 3 + 0.04 * 0.09 / 3)) ** 0.5}}]
    shared = {"cores": [core(0.5)]}
    got = sampling.mix_intervals(alone, shared)
    # s_h of the CPIs: 0.1 and 0.3; var = 0.64 * 0.01 / 3 + 0.04 * 0.09 / 3.
    var_cpi = 0.64 * 0.01 / 3 + 0.04 * 0.09 / 3
    cpi_alone, cpi_shared = 1.4, 2.0
    # WS = cpi_shared^-1 / cpi_alone^-1 = cpi_alone / cpi_shared: d WS / d cpi_alone = 1 / cpi_shared.
    assert sampling.half_width(got["weighted_speedup"]) == pytest.approx(sampling.Z95 * var_cpi ** 0.5 / cpi_shared)
    assert got["weighted_speedup"][0] < cpi_alone / cpi_shared < got["weighted_speedup"][1]


def test_cli_phase_sampling_runs_one_program_and_refuses_several(memtint, tmp_path, clean_error):
    (tmp_path / "one.toml").write_text('machine = "i7-860"\nprograms = ["stream"]\ninstructions = 2000000\n')
    code, out, err = memtint("sim", "one.toml", "--sample-mode", "phases", "--sample-unit", "10000",
                             "--sample-warming", "10000", "--sample-clusters", "4", "--json", "-")
    assert code == 0, err
    result = json.loads(out)
    assert result["sampling"]["mode"] == "phases" and result["sampling"]["clusters"] == 4
    assert 1 <= result["sampling"]["phases"]["phases"] <= 4
    assert len(result["sampling"]["phases"]["labels"]) == 100
    code, out, err = memtint("sim", "one.toml", "--sample-mode", "phases")
    assert code == 0 and "stratified by the program" in out, err
    assert result["sampling"]["warm_prefetchers"] is False
    code, out, err = memtint("sim", "one.toml", "--sample-warm-prefetchers", "--json", "-")
    assert code == 0, err
    assert json.loads(out)["sampling"]["warm_prefetchers"] is True
    (tmp_path / "two.toml").write_text('machine = "i7-860"\nprograms = ["stream", "random"]\ninstructions = 2000000\n')
    clean_error(memtint("sim", "two.toml", "--sample-mode", "phases"), "sampling.mode: \"phases\" samples one program")


def test_an_unbounded_interval_is_explained_by_the_sampling_mode():
    # Sampled by phases, an unbounded interval comes from phases of one unit, not from a period.
    from memtint.tables import resolved_line

    def policies(mode):
        return [{"policy": p, "weighted_speedup": 1.0, "weighted_speedup_ci95": [0.9, None],
                 "sampling": {"mode": mode}} for p in ("buddy", "bpm")]
    assert "--sample-period" in resolved_line(policies("periodic"))
    line = resolved_line(policies("phases"))
    assert "--sample-clusters" in line and "--sample-period" not in line, line
