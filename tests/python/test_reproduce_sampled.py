"""`memtint reproduce --sample`: the sampling half-width of a claim's figure (propagated from the
runs' 95 % intervals), how the claim tables and rows data show it, and that detailed reports
read exactly as before."""

from __future__ import annotations

import json
import math

import pytest

from memtint import sampling
from memtint.reproduce import common, figures, report, reproduce, runner, verdict
from memtint.reproduce.common import Row


def run(ws, ms=2.0, ws_h=None, ms_h=None, cores=None):
    """A hand-made variant run as :meth:`MixExperiment.runs` gives it (intervals when sampled)."""
    r = {"ws": ws, "ms": ms, "cores": cores if cores is not None else [{"ipc": ws}]}
    if ws_h is not None:
        r["ws_ci95"] = [ws - ws_h, ws + ws_h]
    if ms_h is not None:
        r["ms_ci95"] = [ms - ms_h, ms + ms_h]
    return r


# --- propagation -----------------------------------------------------------------------------------

def test_a_ratio_s_half_width_adds_the_relative_half_widths_in_quadrature():
    a, b = run(2.0, ws_h=0.1), run(1.6, ws_h=0.08)  # 5 % each
    h = common._pct_half_width(a, b, "ws")
    assert h == pytest.approx(100 * 1.25 * math.hypot(0.05, 0.05))
    # a detailed side adds nothing; two detailed sides: no sampling half-width at all
    assert common._pct_half_width(a, run(1.6), "ws") == pytest.approx(100 * 1.25 * 0.05)
    assert common._pct_half_width(run(2.0), run(1.6), "ws") is None
    # the same run (or two that simulated alike) on both sides: the ratio is exactly 1
    same = [{"ipc": 1.0, "sampling": {"unit_cycles": [1, 2]}}]
    assert common._pct_half_width(run(2.0, ws_h=0.1, cores=same), run(2.0, ws_h=0.1, cores=list(same)), "ws") == 0.0


def test_a_mean_s_half_width_is_the_root_sum_of_squares_over_k():
    assert common.mean_half_width([3.0, 4.0]) == pytest.approx(5.0 / 2)
    assert common.mean_half_width([3.0, None, 4.0, None]) == pytest.approx(5.0 / 4)  # detailed terms add nothing
    assert common.mean_half_width([None, None]) is None
    assert common.mean_half_width([]) is None
    assert common.mean_half_width([1.0, float("nan")]) is None


def sampled_cores(cpis):
    """Cores of a sampled run: per core, its units' CPIs (units of 1,000 instructions)."""
    return [{"ipc": len(c) / sum(c), "sampling": {"unit_cycles": [1000 * x for x in c],
                                                  "unit_instructions": [1000] * len(c)}} for c in cpis]


def with_units(ws, ms, ws_h, ms_h, shared, alone):
    return {**run(ws, ms, ws_h, ms_h, cores=sampled_cores(shared)), "alone": sampled_cores(alone)}


def test_mix_terms_follow_the_metric():
    alone = [[1.0, 1.4, 0.8, 1.2], [2.0, 2.6, 1.6, 2.2]]  # noisy alone runs, shared by every variant
    runs = [{"buddy": with_units(2.0, 4.0, 0.1, 0.2, [[2.0, 2.1, 1.9, 2.0], [3.0, 3.2, 2.9, 3.1]], alone),
             "bpm": with_units(2.2, 3.0, 0.11, 0.3, [[1.8, 1.9, 1.7, 1.8], [2.9, 3.0, 2.8, 3.0]], alone),
             "tcm": with_units(2.4, 3.5, 0.12, 0.35, [[1.7, 1.8, 1.6, 1.7], [2.7, 2.9, 2.6, 2.8]], alone)}]
    claim = {"policy": "bpm", "versus": "tcm"}
    pct = common._pct_half_width

    def change(a, b):  # the WS change's interval over both runs and their common alone runs
        return 100 * sampling.half_width(sampling.difference_intervals(a["alone"], a, b)["weighted_speedup_change"])

    mix = runs[0]
    assert common.mix_term_half_widths("ws_change", runs, claim, "buddy") == [pytest.approx(change(mix["bpm"], mix["buddy"]))]
    # the alone runs' error cancels in a WS change, which two independent WS intervals count twice
    def own(r):  # the run with its own WS interval (mix_intervals), as MixExperiment.runs gives it
        ci = sampling.mix_intervals(r["alone"], r)["weighted_speedup"]
        return {**r, "ws": sum(ci) / 2, "ws_ci95": ci}

    assert change(mix["bpm"], mix["buddy"]) < pct(own(mix["bpm"]), own(mix["buddy"]), "ws")
    assert common.mix_term_half_widths("ms_ratio", runs, claim, "buddy") == [pct(mix["bpm"], mix["tcm"], "ms")]
    # a difference of two changes against the baseline: their half-widths in quadrature
    over = common.mix_term_half_widths("ws_change_over", runs, claim, "buddy")
    assert over == [pytest.approx(math.hypot(change(mix["bpm"], mix["buddy"]), change(mix["tcm"], mix["buddy"])))]
    # shares: no sampling half-width (share_ends counts them)
    for metric in ("share_not_worse",):
        assert common.mix_term_half_widths(metric, runs, claim, "buddy") is None
    # the worst mix: one term, that mix's change's half-width when no other mix comes near it
    assert common.mix_term_half_widths("ws_change_worst", runs, claim, "buddy") == [
        pytest.approx(change(mix["bpm"], mix["buddy"]))]
    # against the best of several: the difference of the two runs the maximum chose
    best = {"policy": "bpm", "versus_best": ["buddy", "tcm"]}
    assert common.mix_term_half_widths("ws_vs_best", runs, best, "buddy") == [pytest.approx(change(mix["bpm"], mix["tcm"]))]
    # ... and nothing for detailed runs, whose figure gets no half-width (a detailed report reads as before)
    detailed = [{k: run(r["ws"]) for k, r in mix.items()}]
    terms = common.mix_term_half_widths("ws_vs_best", detailed, best, "buddy")
    assert terms == [None] and common.mean_half_width(terms) is None


def energy_run(power, energy, power_h=None, energy_h=None, instructions=4_000_000):
    """A run with DRAM power and energy as runner.slim keeps them: a sampled one's energy is the
    run's estimate, over its cores' instructions within the run (their own are the units')."""
    r = {"ws": 1.0, "dram_power_mw": power, "dram_energy_nj": energy,
         "cores": [{"ipc": power / 7000, "instructions": 40_000, "sampling": {"run_instructions": instructions}}]}
    if power_h is not None:
        r["dram_power_mw_ci95"] = [power - power_h, power + power_h]
        r["dram_energy_nj_ci95"] = [energy - energy_h, energy + energy_h]
    return r


def test_the_best_mix_s_power_and_energy_changes_carry_their_intervals():
    runs = [{"buddy": energy_run(7000.0, 1.0e8, 7.0, 1.0e6), "bpm": energy_run(6900.0, 0.97e8, 6.9, 0.97e6)},
            {"buddy": energy_run(7100.0, 1.1e8, 7.1, 1.1e6), "bpm": energy_run(7090.0, 1.1e8, 7.09, 1.1e6)}]
    claim = {"policy": "bpm"}
    # the most saving mix is the first, far from the second: its change's half-width, 0.1 % a side
    power = common.mix_term_half_widths("power_change_best", runs, claim, "buddy")
    assert power == [pytest.approx(100 * 6900 / 7000 * math.hypot(0.001, 0.001))]
    energy = common.mix_term_half_widths("energy_change_best", runs, claim, "buddy")
    assert energy == [pytest.approx(100 * 0.97 * math.hypot(0.01, 0.01))]
    # energy per instruction is over the run's instructions, not the units' own
    assert common.energy_per_instruction(runs[0]["buddy"]) == pytest.approx(1.0e8 / 4_000_000)
    # detailed runs: no half-width
    detailed = [{k: energy_run(r["dram_power_mw"], r["dram_energy_nj"]) for k, r in mix.items()} for mix in runs]
    assert common.mix_term_half_widths("power_change_best", detailed, claim, "buddy") == [None]


def test_a_row_buffer_miss_rate_change_carries_both_runs_intervals():
    def rb(rate, h=None):
        r = {"ws": 1.0, "row_buffer_miss_rate": rate, "cores": [{"ipc": rate}]}
        if h is not None:
            r["row_buffer_miss_rate_ci95"] = [rate - h, rate + h]
        return r

    runs = [{"buddy": rb(0.40, 0.008), "bpm": rb(0.30, 0.006)}, {"buddy": rb(0.50, 0.01), "bpm": rb(0.45)}]
    terms = common.mix_term_half_widths("rbmiss_change", runs, {"policy": "bpm"}, "buddy")
    # 2 % a side in quadrature; a detailed side adds nothing
    assert terms == [pytest.approx(100 * 0.75 * math.hypot(0.02, 0.02)), pytest.approx(100 * 0.9 * 0.02)]


def test_a_sampled_run_keeps_its_dram_totals_as_the_run_s_estimates():
    core = {"program": "stream", "instructions": 40_000, "cycles": 80_000, "llc_mpki": 20.0, "dram_reads": 800,
            "dram_writes": 200, "bank_level_parallelism": 2.0, "banks_used": 16, "channels_used": 2,
            "sampling": {"units": 2, "run_instructions": 4_000_000.0}}
    stats = {"dram_requests": 1000, "cores": [core],
             "dram": {"energy": {"total_nj": 2.0e6, "average_power_mw": 7000.0, "act_pre_nj": 1.0e5,
                                 "background_active_nj": 3.0e5, "background_precharged_nj": 2.0e5},
                      "commands": {"ACT": 500}},
             "sampling": {"estimate_factor": 2.5, "estimated_dram_requests": 2500, "estimated_dram_energy_nj": 5.0e6,
                          "estimated_dram_energy_nj_ci95": [4.9e6, 5.1e6], "dram_power_mw_ci95": [6990.0, 7010.0]}}
    kept = runner.slim(stats)
    assert (kept["dram_requests"], kept["dram_energy_nj"], kept["dram_activations"]) == (2500, 5.0e6, 1250.0)
    assert kept["dram_act_pre_nj"] == pytest.approx(2.5e5) and kept["dram_background_nj"] == pytest.approx(1.25e6)
    assert kept["dram_power_mw"] == 7000.0  # a rate: the segments' is the run's estimate
    assert kept["dram_energy_nj_ci95"] == [4.9e6, 5.1e6] and kept["dram_power_mw_ci95"] == [6990.0, 7010.0]
    # per kilo-instruction over the run: 1250 activations in 4 M instructions, not in the units' 40 k
    assert common.diagnostics(kept)["activations per kilo-instruction"] == pytest.approx(1000 * 1250 / 4_000_000)


def test_the_worst_mix_s_half_width_counts_a_close_second():
    # Changes -3 ± 0.5 and -2.8 ± 1.0: the minimum lies in [min(-3.5, -3.8), min(-2.5, -1.8)] =
    # [-3.8, -2.5], so 0.8 below the figure; the worst mix's own ± 0.5 would not hold -2.8's low end.
    assert common._minimum_half_width([-3.0, -2.8], [0.5, 1.0]) == pytest.approx(0.8)
    assert common._minimum_half_width([-3.0, 5.0], [0.5, 1.0]) == pytest.approx(0.5)  # far apart: its own
    assert common._minimum_half_width([-3.0, -2.8], [None, 0.1]) == pytest.approx(0.0)  # a detailed minimum
    assert common._minimum_half_width([-3.0, -2.8], [None, None]) is None
    assert common._minimum_half_width([-3.0, -2.8], [0.5, math.inf]) == math.inf


# --- rendering ---------------------------------------------------------------------------------------

CLAIM = {"id": "c1", "figure": "Fig. 1", "text": "BPM raises WS", "source": "bpm.md §1", "kind": "change",
         "value": 4.0, "metric": "ws_change", "experiment": "mixes"}


def test_a_sampled_row_shows_its_half_width_and_a_detailed_row_reads_as_before(tmp_path):
    detailed = Row(CLAIM, "", [3.0, 5.0])
    sampled = Row(CLAIM, "", [3.0, 5.0])
    sampled.sampling_half_width = 0.4321
    # exactly the cells a detailed row had before sampling half-widths existed
    assert report.claim_rows([detailed]) == [["Fig. 1 `c1`", "BPM raises WS", "bpm.md §1", "+4.0 % (± 2.0 %)", "+4.0 %",
                                             "sd 1.4 %; +3.0 % … +5.0 %", "**reproduced**", "—"]]
    assert report.claim_rows([sampled])[0][4] == "+4.0 % (± 0.4 % sampling)"
    assert report.claim_rows([detailed, sampled])[0] == report.claim_rows([detailed])[0]
    # a small one keeps two decimals; point and plain metrics keep their units and precision
    sampled.sampling_half_width = 0.012
    assert report.claim_rows([sampled])[0][4] == "+4.0 % (± 0.01 % sampling)"
    points = Row({**CLAIM, "metric": "ms_change_over", "kind": "at_least", "value": 0.0}, "", [2.0])
    points.sampling_half_width = 1.25
    assert report.claim_rows([points])[0][4] == "+2.0 pt (± 1.2 pt sampling)"
    plain = Row({**CLAIM, "metric": "speedup", "value": 1.1}, "", [1.234])
    plain.sampling_half_width = 0.012
    assert report.claim_rows([plain])[0][4] == "1.234 (± 0.012 sampling)"
    # no figure, no half-width shown
    empty = Row(CLAIM, "", [float("nan")])
    empty.sampling_half_width = 0.5
    assert report.claim_rows([empty])[0][4] == "n/a"
    # the rows data: the key only when sampled
    sampled.sampling_half_width = 0.4321
    report.write_rows(str(tmp_path / "p.json"), [detailed, sampled])
    data = json.loads((tmp_path / "p.json").read_text())["rows"]
    assert "sampling_half_width" not in data[0]
    assert data[1]["sampling_half_width"] == pytest.approx(0.4321)
    assert {k: v for k, v in data[1].items() if k != "sampling_half_width"} == data[0]


# --- a tiny sampled reproduction ------------------------------------------------------------------

#: Units small enough for the quick runs' 50 000 instructions per core (5 units).
TINY = {"mode": "periodic", "unit": 5_000, "warming": 5_000}


@pytest.mark.engine
def test_quick_sampled_reproduction_carries_each_figure_s_sampling_half_width(tmp_path):
    out = tmp_path / "repro"
    settings = common.Settings(seeds=2, quick=True, scale=0.5, sampling=dict(TINY))
    papers = reproduce(["ccps"], str(out), settings, jobs=2, progress=False)
    rows = papers[0]["rows"]
    assert {r.claim["id"] for r in rows} == {c["id"] for c in figures.load("ccps")["claim"]}
    text = (out / "ccps.md").read_text()
    assert "- Sampled: 5 units of 5,000 instructions per core" in text
    data = {(r["id"], r["subject"]): r for r in json.loads((out / "ccps.json").read_text())["rows"]}
    means = {"ws_change", "ms_change_over", "energy_change_best", "rbmiss_change"}
    for r in rows:
        if r.claim["metric"] in means:
            assert r.sampling_half_width is not None and r.sampling_half_width >= 0, r.claim["id"]
            figure = report.fmt_value(r.claim['metric'], r.stats['mean'])
            if math.isinf(r.sampling_half_width):  # a run of these tiny ones had a core of one unit
                assert f"{figure} (± ? sampling: a core measured fewer than two units, or units of one CPI) |" in text
                assert data[(r.claim["id"], r.subject)]["sampling_half_width"] is None
                continue
            shown = report.fmt_half_width(r.claim["metric"], r.sampling_half_width)
            assert f"{figure} (± {shown} sampling) |" in text
            assert data[(r.claim["id"], r.subject)]["sampling_half_width"] == pytest.approx(r.sampling_half_width)
        else:  # figures without an interval
            assert r.sampling_half_width is None, r.claim["id"]
            assert "sampling_half_width" not in data[(r.claim["id"], r.subject)]
    # One figure recomputed from the runs' own intervals: a WS change's terms over mixes and seeds.
    claim = next(c for c in figures.load("ccps")["claim"] if c["metric"] == "ws_change" and c["policy"] == "ccps"
                 and c["machine"] == "ccps-4c-64b")
    from memtint.reproduce import PAPERS, runner

    e = PAPERS["ccps"].Experiment(settings)
    results = runner.run_jobs(e.plan(), jobs_count=2, progress=False)
    grid = e._grid(claim["machine"])
    terms = []
    for seed in settings.seed_list():
        for m in range(len(grid.mixes)):
            r = grid.runs(results, claim["machine"], m, seed)
            p, b = r[claim["policy"]], r["buddy"]
            # Matched units: buddy's run paced them, the other policies replayed its schedule.
            assert sampling.matched(p, b) and not b["sampling"].get("replayed") and p["sampling"]["replayed"]
            change = sampling.difference_intervals(p["alone"], p, b)["weighted_speedup_change"]
            terms.append(100 * sampling.half_width(change))
    expected = math.sqrt(sum(t * t for t in terms)) / len(terms)
    row = next(r for r in rows if r.claim["id"] == claim["id"] and r.subject == claim["machine"])
    assert row.sampling_half_width == pytest.approx(expected)
    assert row.verdict in verdict.VERDICTS


def test_a_detailed_reproduction_s_header_has_no_sampling_line():
    # Without --sample nothing is said about sampling (and no row has a half-width to show).
    assert report.sampling_header(common.Settings(), []) == ""


def test_a_row_names_its_population_even_when_it_names_the_machine_the_subject_names():
    # CCPS's subject is its machine and its population "4 mixes of 4 programs on" that machine:
    # a reader must still see that the figure rests on 4 mixes.
    row = Row(CLAIM, "ccps-4c-64b", [3.0, 5.0], population="4 mixes of 4 programs on ccps-4c-64b")
    assert "(measured on: 4 mixes of 4 programs on ccps-4c-64b)" in report.claim_rows([row])[0][1]
    same = Row(CLAIM, "i7-860", [3.0, 5.0], population="i7-860")
    assert "measured on" not in report.claim_rows([same])[0][1]


# --- populations drawn from sampled estimates ---------------------------------------------------------

def test_a_mix_is_in_a_population_by_less_than_its_interval_only_when_the_interval_straddles_the_threshold():
    unsettled = common.membership_unsettled
    both = lambda b, c, k, h: {"buddy": [run(b, ws_h=h)], "cache-only": [run(c, ws_h=h)],  # noqa: E731
                               "bank-only": [run(k, ws_h=h)]}
    # bank-only +1.5 % against a threshold of 1 %, each WS known to +-1 %: either side of it
    assert unsettled("both-horizontal-help", both(2.0, 2.2, 2.03, 0.02), {})
    # the same with intervals of +-0.05 %: in it, settled
    assert not unsettled("both-horizontal-help", both(2.0, 2.2, 2.03, 0.001), {})
    # out of it whatever the error of bank-only's, since cache-only loses 10 % (both must help)
    assert not unsettled("both-horizontal-help", both(2.0, 1.8, 2.03, 0.02), {})
    # detailed runs: no interval, nothing unsettled
    assert not unsettled("both-horizontal-help", both(2.0, 2.2, 2.03, None), {})
    claim = {"policy": "x", "versus_best": ["a", "b"]}
    ahead = lambda x, a, b, h: {"x": [run(x, ws_h=h)], "a": [run(a, ws_h=h)], "b": [run(b, ws_h=h)]}  # noqa: E731
    assert unsettled("best-versus-ahead", ahead(2.0, 2.01, 1.5, 0.02), claim)  # a ahead by 0.5 %, +-1.4 %
    assert not unsettled("best-versus-ahead", ahead(2.0, 2.4, 1.5, 0.02), claim)  # a ahead by 20 %
    assert not unsettled("best-versus-ahead", ahead(2.0, 1.6, 1.5, 0.02), claim)  # both well behind


class _Experiment:
    """The part of a MixExperiment that populations and figures read: per mix, label -> (WS, its
    sampling half-width), one seed."""

    def __init__(self, table):
        self.table, self.baseline = table, "buddy"
        self.mixes = [[f"m{i}"] * 4 for i in range(len(table))]
        self.variants = [type("V", (), {"label": label})() for label in table[0]]

    def seed_list(self, settings):
        return [1]

    def runs(self, results, machine, m, seed):
        return {label: run(ws, ws_h=h) for label, (ws, h) in self.table[m].items()}


def test_a_population_whose_doubtful_mixes_move_the_verdict_is_unresolved_by_sampling():
    claim = {"id": "vp", "figure": "Fig. 11", "text": "A-VP does not lose", "source": "hvr.md", "kind": "at_least",
             "value": 0.0, "metric": "ws_change", "policy": "a-vp", "population": "both-horizontal-help",
             "experiment": "mixes-4"}

    def mix(horizontal, vp, h):
        return {"buddy": (2.0, h), "cache-only": (2.2, h), "bank-only": (horizontal, h), "a-vp": (vp, h)}
    # three mixes clearly in (bank-only +10 %), where A-VP gains 2 %; one in by 0.5 % over the
    # threshold where A-VP loses 20 %; two clearly out
    table = [mix(2.2, 2.04, 0.02)] * 3 + [mix(2.03, 1.6, 0.02)] + [mix(1.9, 2.5, 0.02)] * 2
    exps = [(_Experiment(table), "i7-860")]
    settings = common.Settings(seeds=1)
    mixes, _ = common.population(exps, {}, claim, settings)
    assert len(mixes) == 4
    row = Row(claim, "", [common.mix_value("ws_change", [exps[0][0].runs({}, "", m, 1) for _, _, m in mixes], claim,
                                           "buddy")])
    assert verdict.verdict(claim, row.stats["mean"], "", row.per_seed) == verdict.NOT_REPRODUCED  # (3 x 2 - 20) / 4
    row.sampling_unsettled = common.population_ends(exps, {}, claim, settings, mixes, row)
    assert row.verdict == verdict.UNRESOLVED
    text = report.unresolved_text(row)
    assert text.startswith("1 mix is in or out of its population by less than its sampling interval: "
                           "without the 1 of them in it, reproduced on 3 mixes"), text
    assert "(the population as drawn: not reproduced on 4)" in text and "sampling interval ±" not in text
    # tight intervals settle the doubtful mix: the verdict stands
    tight = [{k: (ws, 0.0005) for k, (ws, _) in m.items()} for m in table]
    exps = [(_Experiment(tight), "i7-860")]
    mixes, _ = common.population(exps, {}, claim, settings)
    assert len(mixes) == 4 and common.population_ends(exps, {}, claim, settings, mixes, row) == ""


def test_a_share_counts_its_close_mixes_at_either_end_and_says_so_when_that_moves_the_verdict():
    # share_not_worse: 10 mixes, bank-only against buddy, one seed; 8 clearly not worse, 1 clearly
    # worse (-10 %), 1 at -1.4 % (worse than the 1 % tie) with an interval of about +-1.4 %
    def mix(ws, h):
        return {"buddy": run(2.0, ws_h=h), "bank-only": run(ws, ws_h=h)}

    runs = [mix(2.1, 0.02)] * 8 + [mix(1.8, 0.02), mix(1.972, 0.02)]
    claim = {"policy": "bank-only"}
    low, high, close = common.share_ends("share_not_worse", [runs], claim, "buddy")
    assert (low, high, close) == ([0.8], [0.9], 1)
    assert common.mix_value("share_not_worse", runs, claim, "buddy") == 0.8
    # detailed runs, and metrics that are not shares: nothing to say
    detailed = [{"buddy": run(2.0), "bank-only": run(ws)} for ws in (2.1, 1.972)]
    assert common.share_ends("share_not_worse", [detailed], claim, "buddy") is None
    assert common.share_ends("ws_change", [runs], claim, "buddy") is None
    # share_best: against the best of the others in each mix
    best = {"policy": "x", "versus_best": ["a", "b"]}
    runs = [{"x": run(2.0, ws_h=0.001), "a": run(2.01, ws_h=0.001), "b": run(1.5, ws_h=0.001)}]
    assert common.share_ends("share_best", [runs], best, "buddy") == ([1.0], [1.0], 0)  # 0.5 % behind, +-0.07 %: a tie
    runs = [{"x": run(2.0, ws_h=0.02), "a": run(2.03, ws_h=0.02), "b": run(1.5, ws_h=0.02)}]
    assert common.share_ends("share_best", [runs], best, "buddy") == ([0.0], [1.0], 1)  # 1.5 % behind, +-1.4 %


class _RichExperiment(_Experiment):
    """:class:`_Experiment` with the core counters a claim's measured cause reads."""

    def runs(self, results, machine, m, seed):
        out = super().runs(results, machine, m, seed)
        for r in out.values():
            r["cores"] = [{"ipc": r["ws"], "instructions": 1000, "llc_mpki": 5.0, "dram_reads": 10, "dram_writes": 2,
                           "bank_level_parallelism": 1.0, "banks_used": 4, "channels_used": 1}]
        return out


def test_a_claim_on_a_share_whose_close_mixes_move_its_verdict_is_unresolved_and_says_why():
    claim = {"id": "safe", "figure": "Fig. 3", "text": "bank-only is safe", "source": "hvr.md", "kind": "at_least",
             "value": 0.9, "metric": "share_not_worse", "policy": "bank-only", "experiment": "mixes-8"}

    def table(h):
        return ([{"buddy": (2.0, h), "bank-only": (2.1, h)}] * 8 + [{"buddy": (2.0, h), "bank-only": (1.8, h)},
                                                                    {"buddy": (2.0, h), "bank-only": (1.972, h)}])

    row = common.measure_mix_claim([(_RichExperiment(table(0.02)), "i7-860")], {}, claim, common.Settings(seeds=1))
    assert row.stats["mean"] == 0.8 and row.verdict == verdict.UNRESOLVED
    assert report.unresolved_text(row) == (
        "1 of the 10 mix runs it counts is within its sampling interval of its tie line (1 % slower): counting none "
        "of them, 0.800 (near miss); all of them, 0.900 (reproduced); longer runs or more units settle it")
    assert json.loads(json.dumps(report.claim_rows([row])))[0][6] == "**unresolved by sampling**"
    # tight intervals: the mix is settled as worse, and the verdict stands
    row = common.measure_mix_claim([(_RichExperiment(table(0.0005)), "i7-860")], {}, claim, common.Settings(seeds=1))
    assert row.sampling_unsettled == "" and row.verdict == verdict.NEAR_MISS


# --- the UF populations and rule under sampling -----------------------------------------------------

def traffic_core(units, cycles_per_unit=1000):
    """A core whose units made ``units`` DRAM requests each, in ``cycles_per_unit`` cycles each
    (None: a detailed core with their totals)."""
    core = {"ipc": 1.0, "dram_reads": sum(units), "dram_writes": 0, "cycles": cycles_per_unit * len(units)}
    return core | {"sampling": {"unit_row_accesses": list(units), "unit_cycles": [cycles_per_unit] * len(units)}}


def detailed(core):
    return {k: v for k, v in core.items() if k != "sampling"}


def test_a_sampled_core_s_traffic_has_the_ratio_estimator_s_interval():
    core = traffic_core([10, 12, 8, 10])  # 10 requests per 1000 cycles; residuals 0, 2, -2, 0
    assert common.comparison.dram_traffic(core) == pytest.approx(10.0)
    assert sampling.traffic_half_width(core) == pytest.approx(sampling.Z95 * math.sqrt(8 / 3 / 4))
    assert sampling.traffic_half_width(detailed(core)) is None
    assert sampling.traffic_half_width(traffic_core([10])) == math.inf  # one unit: no spread known
    unkept = {**core, "sampling": {"unit_cycles": [1000] * 4}}  # a run kept before the units' requests were
    assert sampling.traffic_half_width(unkept) == math.inf


def test_the_best_split_s_uf_range_holds_every_traffic_within_the_intervals():
    import itertools
    import random

    run = {"cores": [traffic_core(u) for u in ([40, 46, 34, 40], [10, 11, 9, 10], [12, 14, 10, 12], [6, 7, 5, 6])]}
    low, high = common.best_split_uf_range(run)
    nominal = common.best_split_uf(run)
    assert low < nominal < high
    exact = {"cores": [detailed(c) for c in run["cores"]]}
    assert common.best_split_uf_range(exact) == (pytest.approx(nominal), pytest.approx(nominal))
    bounds = common._traffic_bounds(run)
    rng = random.Random(7)
    points = [[rng.uniform(lo, hi) for lo, hi in bounds] for _ in range(2000)] + list(itertools.product(*bounds))
    seen = []
    for point in points:
        cores = [{"dram_reads": 1000 * x, "dram_writes": 0, "cycles": 1_000_000} for x in point]
        seen.append(common.best_split_uf({"cores": cores}))
        assert low - 1e-9 <= seen[-1] <= high + 1e-9
    assert min(seen) == pytest.approx(low)  # the low end is reached (at a corner)


def test_a_mix_near_the_uf_threshold_is_unsettled_only_when_sampled():
    # Two programs: traffic 12 and 10 per 1000 cycles, the best split's UF 0.2 (the threshold).
    near = {"buddy": [{"cores": [traffic_core([12, 14, 10, 12]), traffic_core([10, 11, 9, 10])]}] * 3}
    assert common.membership_unsettled("uf-unbalanced", near, {}) is True
    assert common.membership_unsettled("uf-unbalanced",
                                       {"buddy": [{"cores": [detailed(c) for c in r["cores"]]} for r in near["buddy"]]},
                                       {}) is False
    far = {"buddy": [{"cores": [traffic_core([30, 33, 27, 30]), traffic_core([10, 11, 9, 10])]}] * 3}  # UF 2
    assert common.membership_unsettled("uf-unbalanced", far, {}) is False
    # static BPM+ balanced within its interval, buddy busy whatever: unsettled by the balance alone
    busy = {"bpm-plus": [{"cores": [traffic_core([12, 14, 10, 12]) | {"channels": [0]},
                                    traffic_core([10, 11, 9, 10]) | {"channels": [1]}]}] * 3,
            "buddy": [{"bandwidth_gbps": 9.0,
                       "cores": [traffic_core([12, 14, 10, 12]), traffic_core([10, 11, 9, 10])]}] * 3}
    assert common.membership_unsettled("uf-balanced-busy", busy, {}) is True
    idle = {**busy, "buddy": [{**r, "bandwidth_gbps": 0.5} for r in busy["buddy"]]}  # out, whatever the balance
    assert common.membership_unsettled("uf-balanced-busy", idle, {}) is False


def test_the_uf_rule_s_share_counts_a_mix_on_either_side_when_its_uf_is_within_its_interval():
    cores = [traffic_core([12, 14, 10, 12]), traffic_core([10, 11, 9, 10])]  # best split's UF: 0.2 ± more
    mix = {"buddy": {"ws": 2.0, "cores": cores},
           "bpm": {"ws": 2.0, "cores": [{"ipc": 1.0}] * 2},
           "bpm-plus": {"ws": 2.2, "cores": [{"ipc": 1.1}] * 2}}  # detailed: BPM+ is 10 % better
    # the rule picks BPM+ at UF 0.2 (right) and BPM above it (wrong): the mix is open
    low, high, close = common.share_ends("uf_rule_right", [[mix]], {}, "buddy")
    assert (low, high, close) == ([0.0], [100.0], 1)
    settled = {**mix, "buddy": {"ws": 2.0, "cores": [detailed(c) for c in cores]}}
    assert common.share_ends("uf_rule_right", [[settled]], {}, "buddy") is None  # nothing sampled
    assert common.mix_value("uf_rule_right", [settled], {}, "buddy") == 100.0


def test_a_detailed_run_s_uf_ranges_are_its_uf():
    split = [detailed(traffic_core([12, 14, 10, 12])) | {"channels": [0]},
             detailed(traffic_core([10, 11, 9, 10])) | {"channels": [1]}]
    run = {"cores": split}
    assert common.channel_uf_range(run) == (pytest.approx(common.channel_uf(run)),) * 2
    idle = {"cores": [split[0], split[1] | {"dram_reads": 0}]}  # a channel with nothing: UF infinite, as channel_uf
    assert common.channel_uf(idle) == math.inf and common.channel_uf_range(idle) == (math.inf, math.inf)
