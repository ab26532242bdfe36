"""`memtint reproduce`: the verdict rule, the paper-figure files, the harness on a tiny
configuration, and its command-line errors."""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path

import pytest

from memtint.api import MemtintError
from memtint.reproduce import PAPERS, camc, common, figures, refresh, reproduce, tiering, verdict


# --- the verdict rule --------------------------------------------------------------------------

def claim(kind="change", value=4.0, **kw):
    return {"kind": kind, "value": value, **kw}


def test_change_within_tolerance_is_reproduced():
    assert verdict.verdict(claim(value=4.0), 3.0) == verdict.REPRODUCED  # |3-4| <= max(2, 1)
    assert verdict.verdict(claim(value=4.0), 6.0) == verdict.REPRODUCED
    # a small paper value: the absolute tolerance (1 point) applies, in the paper's direction
    assert verdict.verdict(claim(value=-1.0), -0.6) == verdict.REPRODUCED
    assert verdict.verdict(claim(value=-1.0), -1.9) == verdict.REPRODUCED


def test_a_fraction_of_the_paper_s_effect_is_direction_only_even_within_the_tolerance():
    # -0.05 and -0.2 lie within 1 point of -1 %, but show a twentieth and a fifth of its effect
    assert verdict.verdict(claim(value=-1.0), -0.05) == verdict.DIRECTION_ONLY
    assert verdict.verdict(claim(value=-1.0), -0.2) == verdict.DIRECTION_ONLY
    assert verdict.verdict(claim(value=4.0, tolerance_abs=6.0), 0.3) == verdict.DIRECTION_ONLY
    assert verdict.verdict(claim(value=4.0, tolerance_abs=6.0), 2.0) == verdict.REPRODUCED


def test_no_effect_within_the_tolerance_is_not_reproduced():
    # +0.0 against -1 % used to pass because the tolerance equals the figure: it shows no effect
    assert verdict.verdict(claim(value=-1.0), 0.0) == verdict.NOT_REPRODUCED
    assert verdict.verdict(claim(value=-1.0), 0.4) == verdict.NOT_REPRODUCED


def test_change_same_sign_outside_tolerance_is_direction_only_with_its_ratio():
    assert verdict.verdict(claim(value=4.0), 0.5) == verdict.DIRECTION_ONLY
    assert verdict.verdict(claim(value=4.0), 12.0) == verdict.DIRECTION_ONLY
    assert verdict.verdict(claim(value=-38.6), -9.1) == verdict.DIRECTION_ONLY
    # A direction the seeds do not settle is no direction: +0.07 from -0.07, +0.03 and +0.27.
    assert verdict.verdict(claim(value=4.8), 0.0750, per_seed=[-0.073, 0.029, 0.269]) == verdict.NOT_REPRODUCED
    assert verdict.verdict(claim(value=4.8), 4.0, per_seed=[-0.5, 6.0, 6.5]) == verdict.NOT_REPRODUCED
    assert verdict.verdict(claim(value=4.8), 0.1, per_seed=[0.05, 0.1, 0.15]) == verdict.DIRECTION_ONLY
    # +0.6 against +4.1 and +7.6 against +1.1 read apart
    assert verdict.ratio(claim(value=4.1), 0.6) == pytest.approx(0.146, abs=1e-3)
    assert verdict.ratio(claim(value=1.1), 7.6) == pytest.approx(6.91, abs=1e-2)


def test_a_subject_without_the_effect_is_not_applicable():
    assert verdict.verdict(claim(value=-1.0), 0.0, "xz: 0.02 DRAM requests per kilo-instruction") == \
        verdict.NOT_APPLICABLE
    assert verdict.verdict({"kind": "info"}, 3.0, "no traffic") == verdict.MEASURED_ONLY


def test_change_opposite_sign_is_not_reproduced():
    assert verdict.verdict(claim(value=4.0), -3.0) == verdict.NOT_REPRODUCED
    assert verdict.verdict(claim(value=-8.0), 0.6) == verdict.NOT_REPRODUCED
    assert verdict.verdict(claim(value=4.0), float("nan")) == verdict.NOT_REPRODUCED


def test_a_speedup_s_direction_is_measured_from_one():
    claim = {"kind": "change", "value": 1.1, "metric": "speedup", "tolerance_rel": 0.1, "tolerance_abs": 0.0}
    assert verdict.verdict(claim, 1.05) == verdict.REPRODUCED
    assert verdict.verdict(claim, 0.997) == verdict.NOT_REPRODUCED  # within 10 % of 1.1, but slower
    assert verdict.verdict({**claim, "value": 1.0}, 0.96) == verdict.REPRODUCED  # "no change" either way
    # no change has no direction: far from it is a miss, not "direction only" with no ratio to show
    assert verdict.verdict({**claim, "value": 1.0}, 1.5) == verdict.NOT_REPRODUCED
    assert verdict.verdict(claim_of := {"kind": "change", "value": 0.0, "tolerance_abs": 1.0}, 0.4) == verdict.REPRODUCED
    assert verdict.verdict(claim_of, -3.0) == verdict.NOT_REPRODUCED
    assert verdict.ratio(claim, 1.05) == pytest.approx(0.5)  # half the paper's 10 % gain


def _ratio_metrics() -> list[str]:
    """The metrics of change claims whose text states a ratio ("2.1x", "4.38x"; not a mode such as
    "FGR 4x"), from the figure files, so a new ratio claim is checked without a list kept by hand."""
    found = set()
    for name in PAPERS:
        for c in figures.load(name)["claim"]:
            if c.get("kind", "change") == "change" and re.search(r"(?<!FGR )\b\d+(\.\d+)?x\b", c["text"]):
                found.add(c["metric"])
    return sorted(found)


def test_the_ratio_claims_are_found():
    assert {"auto_hits_ratio", "auto_latency_spread", "slope_ratio", "spread_ratio", "speedup"} <= set(_ratio_metrics())


@pytest.mark.parametrize("metric", _ratio_metrics())
def test_every_ratio_metric_of_the_figure_files_is_measured_from_one(metric):
    # Refresh's hits at 64 Gb over 1 Gb (paper 2.13x): 0.5x is hits falling, 1.2x almost no growth.
    c = {"kind": "change", "value": 2.13, "metric": metric, "tolerance_rel": 0.5}
    assert verdict.verdict(c, 0.5) == verdict.NOT_REPRODUCED
    assert verdict.verdict(c, 1.2) == verdict.DIRECTION_ONLY
    assert verdict.verdict(c, 2.0) == verdict.REPRODUCED


def test_stated_tolerances_are_used():
    tight = claim(value=10.0, tolerance_rel=0.1, tolerance_abs=0.5)
    assert verdict.tolerance(tight) == pytest.approx(1.0)
    assert verdict.verdict(tight, 11.5) == verdict.DIRECTION_ONLY
    assert verdict.verdict(tight, 10.9) == verdict.REPRODUCED


def test_bounds():
    lo = claim("at_least", 0.9, tolerance_abs=0.05)
    assert verdict.verdict(lo, 0.95) == verdict.REPRODUCED
    assert verdict.verdict(lo, 0.87) == verdict.NEAR_MISS
    assert verdict.verdict(lo, 0.80) == verdict.NOT_REPRODUCED
    hi = claim("at_most", 1.0, tolerance_abs=0.1)
    assert verdict.verdict(hi, 0.5) == verdict.REPRODUCED
    assert verdict.verdict(hi, 1.05) == verdict.NEAR_MISS
    assert verdict.verdict(hi, 2.0) == verdict.NOT_REPRODUCED
    assert verdict.verdict({"kind": "info"}, 3.0) == verdict.MEASURED_ONLY


def test_a_sampled_figure_whose_interval_reaches_another_verdict_is_unresolved():
    # fig12-balanced under --sample: -1.2 (seeds -1.4, -0.9, -1.3) ± 1.7 against "at least 0".
    bound = claim("at_least", 0.0)
    seeds = [-1.43, -0.86, -1.31]
    assert verdict.verdict(bound, -1.2, "", seeds) == verdict.NOT_REPRODUCED
    assert verdict.sampled_verdict(bound, -1.2, "", seeds, 1.69) == verdict.UNRESOLVED
    # Narrow enough: both ends give the mean's verdict.
    assert verdict.sampled_verdict(bound, -1.2, "", seeds, 0.05) == verdict.NOT_REPRODUCED
    change = claim("change", 6.5)
    # fig8-bpmplus-ws-8 sampled: 2.7 ± 0.85 against +6.5 (tolerance 3.25): 3.55 would be reproduced.
    assert verdict.sampled_verdict(change, 2.7, "", [2.5, 2.3, 3.3], 0.85) == verdict.UNRESOLVED
    assert verdict.sampled_verdict(change, 1.5, "", [1.4, 1.3, 1.8], 0.5) == verdict.DIRECTION_ONLY
    assert verdict.sampled_verdict(change, 3.3, "", [3.3, 3.2, 3.4], 0.2) == verdict.UNRESOLVED  # 3.1 .. 3.5 of 6.5
    # Not sampled, unknown error, no verdict to move.
    assert verdict.sampled_verdict(change, 2.7, "", [2.5, 2.3, 3.3], None) == verdict.DIRECTION_ONLY
    assert verdict.sampled_verdict(change, 2.7, "", [2.5, 2.3, 3.3], math.inf) == verdict.UNRESOLVED
    assert verdict.sampled_verdict({"kind": "info"}, 3.0, "", [3.0], 5.0) == verdict.MEASURED_ONLY
    assert verdict.sampled_verdict(change, 2.7, "no traffic", [2.7], 5.0) == verdict.NOT_APPLICABLE


def test_a_bound_is_reproduced_only_when_every_seed_meets_it():
    # CAMC's "more than half of the programs": 0.583 from seeds of 0.5, 0.5 and 0.75
    more_than_half = claim("at_least", 0.5001, tolerance_abs=0.1)
    assert verdict.verdict(more_than_half, 0.583, per_seed=[0.5, 0.5, 0.75]) == verdict.NEAR_MISS
    assert verdict.verdict(more_than_half, 0.667, per_seed=[0.75, 0.5, 0.75]) == verdict.NEAR_MISS
    assert verdict.verdict(more_than_half, 0.75, per_seed=[0.75, 0.75, 0.75]) == verdict.REPRODUCED
    hi = claim("at_most", 1.0, tolerance_abs=0.1)
    assert verdict.verdict(hi, 0.9, per_seed=[0.7, 0.9, 1.1]) == verdict.NEAR_MISS
    assert verdict.verdict(hi, 0.9, per_seed=[0.7, 0.9, 1.0]) == verdict.REPRODUCED
    # a seed's missing value does not decide it
    assert verdict.verdict(hi, 0.9, per_seed=[0.9, float("nan")]) == verdict.REPRODUCED


# --- the paper figures ---------------------------------------------------------------------------

@pytest.mark.parametrize("paper", list(PAPERS))
def test_figure_file_loads_and_names_sections(paper):
    table = figures.load(paper)
    assert table["claim"]
    for c in table["claim"]:
        assert c["source"].strip(), c["id"]
        assert c["kind"] in figures.KINDS
        if c["kind"] != "info":
            assert "§" in c["source"], c["id"]
            assert re.search(r"\.md §", c["source"]), f"{c['id']}: source must name the summary file and section"
            assert isinstance(c["value"], (int, float))


def test_figure_file_without_section_is_rejected(tmp_path):
    (tmp_path / "x.toml").write_text('[[claim]]\nid="a"\nexperiment="e"\nfigure="Fig. 1"\nsource="somewhere"\n'
                                     'text="t"\nkind="change"\nvalue=1.0\nmetric="ws_change"\n')
    with pytest.raises(figures.MemtintError, match="section"):
        figures.load("x", tmp_path)


# --- settings, mixes, warm-up --------------------------------------------------------------------

def test_mix_draws_are_seeded():
    a = common.draw_mixes(common.INTENSIVE, 4, 5, 7)
    assert a == common.draw_mixes(common.INTENSIVE, 4, 5, 7)
    assert a != common.draw_mixes(common.INTENSIVE, 4, 5, 8)
    assert all(len(set(m)) == 4 and set(m) <= set(common.INTENSIVE) for m in a)
    assert len({tuple(m) for m in a}) == 5


def test_warmup_goes_into_run_specs_only_when_nonzero():
    for name, module in PAPERS.items():
        jobs = module.Experiment(common.Settings(seeds=1, quick=True)).plan()
        assert jobs and not any("warmup" in j["spec"] for j in jobs), name
        jobs = module.Experiment(common.Settings(seeds=1, quick=True, warmup=5000)).plan()
        # Real-time task sets (kind "rt") run no instructions through caches: no warm-up.
        assert all(j["spec"].get("warmup") == (None if j.get("kind") == "rt" else 5000) for j in jobs), name
    jobs = PAPERS["tiering"].Experiment(common.Settings(seeds=1, quick=True, warmup=10**9)).plan()
    assert {j["spec"]["warmup"] for j in jobs} == {PAPERS["tiering"].WARMUP_CAP}


def test_each_report_states_the_warm_up_its_runs_have():
    """The set-up's warm-up line is the paper's own: capped per thread where its runs are many-threaded,
    none for real-time runs; the index names the exceptions."""
    from memtint.reproduce import RUN_LENGTHS, bpm, hvr, warmup_index_line, warmup_line

    full = common.Settings(warmup=20_000_000)
    assert warmup_line(bpm, full) == "warm-up: 20,000,000 instructions per core before statistics (run spec `warmup`)."
    assert warmup_line(camc, full).startswith("warm-up: 500,000 instructions per thread before statistics")
    assert "the rate-monotonic runs have none" in warmup_line(camc, full)
    assert warmup_line(tiering, full).startswith("warm-up: 2,000,000 instructions per thread before statistics")
    assert warmup_line(refresh, full).startswith("warm-up: none (every run is a real-time run")
    assert "20,000,000" not in warmup_line(refresh, full)
    index = warmup_index_line(full)
    assert "but at most 2,000,000 per thread in tiering and 500,000 per thread in camc" in index, index
    assert "none in camc's rate-monotonic runs and every run of refresh" in index, index
    # The run lengths say what the runs are, HVR's rule study included.
    assert f"{hvr.SIZES['full']['rule_instructions'] / 1e6:g} M with 4 in HVR's rule study" in RUN_LENGTHS
    assert f"{bpm.SIZES['full']['instructions'] / 1e6:g} M instructions per core with 4 programs" in RUN_LENGTHS


def test_the_index_says_shared_runs_count_in_each_paper(tmp_path):
    from memtint.reproduce import report

    papers = [{"name": n, "title": n, "seconds": 1.0, "runs": 2, "rows": []} for n in ("bpm", "hvr")]
    text = Path(report.write_index(str(tmp_path), papers, ["3 simulations"], "memtint reproduce")).read_text()
    assert "a run two papers share (the same run spec) counts in each of them; the totals above count it once" in text
    assert "earlier run" not in text
    papers[1] = {**papers[1], "verdicts": []}  # kept from an earlier run: the totals are not its
    text = Path(report.write_index(str(tmp_path), papers, ["3 simulations"], "memtint reproduce")).read_text()
    assert "the totals are this run's only: a paper marked as an earlier run's report keeps that run's" in text


def test_tiering_classes_are_one_population_at_every_ratio_and_reach_dram():
    """Bandwidth-intensive and non-intensive are classed once (Local at 2:1), as the thesis classes
    its programs once; a program below MIN_DRAM_PKI is in neither class, whatever its slow-node share."""
    e = tiering.Experiment(common.Settings(seeds=1))
    e.pool = ["triad", "sort", "light", "xz"]
    share = {2: {"triad": 0.9, "sort": 0.2, "light": 0.6, "xz": 0.1},
             10: {"triad": 1.0, "sort": 0.9, "light": 0.9, "xz": 0.3}}
    pki = {"triad": 30.0, "sort": 2.4, "light": 0.5, "xz": 0.2}
    e.slow_node_share = lambda results, r, n: share[r][n]
    e._local_pki = lambda results, r, n: pki[n]
    assert e.members({}, True) == ["triad"]  # light (0.5 PKI) is not intensive; sort stays non-intensive at 10:1
    assert e.members({}, False) == ["sort"]
    assert e.unclassed({}) == ["light", "xz"]
    assert "in neither, below 1: light (0.5), xz (0.2)" in e.classes_note({})


def _rt_run(trfc, met, latency, utilisation=0.9, refs=8192, loads=1000):
    return {"config": {"tRFC_ns": trfc, "tREFI_ns": 7800.0, "refs_per_window": refs, "colour_frame": 8, "unit_us": 1000.0},
            "tasks": [{"loads": loads, "latency_ns": {"mean": latency}, "exec_mean": 1.0, "finished": 1}],
            "refresh_met": met, "utilisation": utilisation, "latency_ns": {"max": 8e6}, "deadline_misses": 0}


def test_refresh_causes_use_the_figures_of_the_scheme_the_claim_is_about():
    """FGR 4x's claim is explained by FGR 4x's runs, Colored Refresh with JEDEC's count by its
    bursts against its frames, not by auto-refresh's figures."""
    e = refresh.Experiment(common.Settings(seeds=1, quick=True))
    e.plan()
    runs = {"auto": _rt_run(2001, 63_639, 245.1), "fgr4": _rt_run(946, 147_572, 183.3), "fgr2": _rt_run(1500, 90_000, 200.0),
            "crs": _rt_run(2001, 0, 17.6, refs=1024), "cr": _rt_run(2001, 0, 21.5, refs=1024),
            "cr-jedec": _rt_run(2001, 10, 105.8), "cr-none": _rt_run(2001, 0, 21.4), "auto-none": _rt_run(2001, 0, 17.5)}
    results = {k: runs[key[1]] for key, k in e.keys.items()}
    claims = {c["id"]: c for c in figures.load("refresh")["claim"]}
    fgr4 = e._cause(claims["crs-fgr4-64gb"], results)
    assert "147,572" in fgr4 and "tRFC 946 ns" in fgr4 and "183.3 ns" in fgr4 and "FGR 4x" in fgr4, fgr4
    assert "63,639" not in fgr4 and "2001" not in fgr4, fgr4
    auto = e._cause(claims["crs-auto-latency-64gb"], results)
    assert "63,639" in auto and "auto-refresh" in auto, auto
    jedec = e._cause(claims["cr-jedec-count-64gb"], results)
    assert "8,192 REFs x tRFC 2001 ns = 16.4 ms against its 8 ms frame" in jedec and "10 of 1,000 loads" in jedec, jedec
    assert "63,639" not in jedec and "auto-refresh" not in jedec, jedec


def test_no_model_parameter_is_set_per_experiment():
    """Run specs name a machine preset, a policy and a scheduler only: no overrides."""
    for name, module in PAPERS.items():
        for j in module.Experiment(common.Settings(seeds=1, quick=True)).plan():
            assert "overrides" not in j["spec"], (name, j["spec"])
            assert isinstance(j["spec"]["machine"], str)


# --- the harness, tiny -----------------------------------------------------------------------------

@pytest.mark.engine
def test_quick_reproduction_writes_reports(tmp_path):
    out = tmp_path / "repro"
    papers = reproduce(["bpm", "schedulers"], str(out), common.Settings(seeds=3, quick=True, scale=0.5), jobs=2,
                       progress=False)
    assert [p["name"] for p in papers] == ["bpm", "schedulers"]
    for name in ("bpm", "schedulers"):
        text = (out / f"{name}.md").read_text()
        assert "## Paper against memtint" in text
        assert "| figure | claim | source | paper | memtint (mean) | spread over seeds | verdict | measured cause |" in text
        assert re.search(r"\*\*(reproduced|direction only|near miss|not reproduced|not applicable)", text)
        assert "Seeds 1, 2, 3" in text
        assert (out / f"{name}-claims.png").stat().st_size > 1000
        # every miss carries its measured cause (a "→" between two measured values)
        for line in text.splitlines():
            if "**direction only" in line or "**near miss**" in line or "**not reproduced**" in line:
                assert "→" in line.split("|")[-2], line
    assert (out / "bpm-banks.png").exists()
    index = (out / "README.md").read_text()
    assert "[BPM/BPM+" in index and "schedulers.md" in index
    # Every relative link resolves from --out (they were written for docs/reproductions only).
    for md in out.glob("*.md"):
        for target in re.findall(r"\]\(([^)#:]+)\)", md.read_text()):
            assert (out / target).exists(), (md.name, target)
    # one row per claim (per program for the per-program Fig. 1 claims)
    bpm_rows = papers[0]["rows"]
    assert {r.claim["id"] for r in bpm_rows} == {c["id"] for c in figures.load("bpm")["claim"]}
    # every seed measured, except where the claim's population cannot be formed in so short a run
    # (Fig. 11 needs static BPM to swap) and the row says so
    assert all(r.stats["n"] == 3 or r.not_applicable.startswith("the claim's population cannot be formed")
               for r in bpm_rows), [(r.claim["id"], r.stats["n"], r.not_applicable) for r in bpm_rows if r.stats["n"] != 3]
    # No "reproduced" rests on a subject without the effect: each reproduced Fig. 1 row's program
    # reaches DRAM alone (measured again here from the runs' own counts).
    settings = common.Settings(seeds=3, quick=True, scale=0.5)
    experiment = PAPERS["bpm"].Experiment(settings)
    from memtint.reproduce import runner

    jobs = [j for j in experiment.plan() if j["phase"] == "alone" and j["spec"]["os"].get("colours") == [list(range(32))]]
    results = runner.run_jobs(jobs, jobs_count=2, progress=False)
    for r in bpm_rows:
        if r.claim["experiment"] != "bank-sensitivity":
            continue
        # A claim about every program is one row, decided by its worst program with the effect.
        program = r.subject.rsplit(" ", 1)[-1] if r.subject.startswith("every program with") else r.subject
        if program.startswith("every program"):
            assert r.verdict == verdict.NOT_APPLICABLE
            continue
        pki = [common.dram_pki(results[experiment.banks[(program, 64, s)]]) for s in settings.seed_list()]
        has_effect = sum(pki) / len(pki) >= verdict.MIN_DRAM_PKI
        assert (r.verdict == verdict.NOT_APPLICABLE) == (not has_effect), (r.subject, pki, r.verdict)
        if r.verdict == verdict.REPRODUCED:
            assert has_effect


def check_rows_data(path):
    """A report's rows (<paper>.json): no "reproduced" verdict rests on a subject without the
    effect (DRAM traffic; for a placement claim, pages placed; for a refresh claim, loads that
    auto-refresh delays; for a real-time claim, the tasks' loads; for an adjustment overhead, pages
    its partitions displaced), and every not-applicable row says why."""
    import json

    data = json.loads(path.read_text())
    assert data["rows"], path
    for row in data["rows"]:
        if row["verdict"] == verdict.REPRODUCED and "placed_pages" in row:
            assert row["placed_pages"] > 0, (path.name, row)  # a placement claim: its pages were placed
        elif row["verdict"] == verdict.REPRODUCED and "met_loads" in row:
            assert row["met_loads"] > 0, (path.name, row)  # a refresh claim: auto-refresh met the tasks' loads
        elif row["verdict"] == verdict.REPRODUCED and "rt_loads" in row:
            assert row["rt_loads"] > 0, (path.name, row)  # a real-time claim: the tasks' loads reached DRAM
        elif row["verdict"] == verdict.REPRODUCED and "displaced_pages" in row:
            assert row["displaced_pages"] > 0, (path.name, row)  # an overhead claim: pages were moved
        elif row["verdict"] == verdict.REPRODUCED:
            assert row["dram_pki"] is not None and row["dram_pki"] >= data["min_dram_pki"], (path.name, row)
        if row["verdict"] == verdict.NOT_APPLICABLE:
            assert row["not_applicable"], (path.name, row)
        else:
            assert not row["not_applicable"], (path.name, row)


@pytest.mark.engine
def test_quick_reproduction_rows_data_hold_the_verdict_rule(tmp_path):
    out = tmp_path / "repro"
    reproduce(["hvr"], str(out), common.Settings(seeds=2, quick=True, scale=0.5), jobs=2, progress=False)
    check_rows_data(out / "hvr.json")
    text = (out / "hvr.md").read_text()
    # A-VP's figures are claims about the mixes where both horizontal policies help: measured on them
    assert "both horizontal policies" in text and "measured on:" in text


@pytest.mark.engine
def test_quick_tiering_reproduction_measures_its_claims_on_the_tier_machines(tmp_path):
    out = tmp_path / "repro"
    # A paper reported earlier in the same directory stays in the index, from its rows' data.
    out.mkdir()
    (out / "bpm.json").write_text(json.dumps({"rows": [{"verdict": "reproduced"}, {"verdict": "near miss"}],
                                              "meta": {"title": "BPM from before", "seconds": 7.0, "runs": 3}}))
    papers = reproduce(["tiering"], str(out), common.Settings(seeds=1, quick=True), jobs=2, progress=False)
    index = (out / "README.md").read_text()
    assert index.index("[BPM from before](bpm.md) (an earlier run's report) | 1 | 0 | 1 | 0 | 0 | 0 | 7 s | 3 |") \
        < index.index("(tiering.md)")
    check_rows_data(out / "tiering.json")
    rows = {r.claim["id"]: r for r in papers[0]["rows"]}
    assert set(rows) == {c["id"] for c in figures.load("tiering")["claim"]}
    # Algorithm 1's split is exact whatever the run length (§6.3 test 1).
    for r, pages in ((2, 2000), (5, 2500), (10, 2728)):
        row = rows[f"t1-bw-interleave-split-{r}to1"]
        assert row.per_seed == [pages] and row.verdict == verdict.REPRODUCED, row.detail
    # Bandwidth binds even in a tiny run: BW-aware placement beats Local, more at larger ratios.
    gains = [rows[f"t5-bw-interleave-over-local-{r}to1"].stats["mean"] for r in (2, 5, 10)]
    assert 1.0 < gains[0] < gains[1] < gains[2], gains
    text = (out / "tiering.md").read_text()
    assert "## Paper against memtint" in text and "fast node at" in text
    assert (out / "tiering-stream.png").stat().st_size > 1000
    # Migration's rows and table exist whatever moved in so short a run (§6.3 test 10).
    assert "Migration at 2:1" in text and "pages moved per run (mean): Local" in rows["t10-only-local-and-bw-lm-migrate"].detail
    assert rows["t10-only-local-and-bw-lm-migrate"].per_seed[0] in {float(n) for n in range(8)}


@pytest.mark.engine
def test_quick_camc_reproduction_measures_isolation_and_interference(tmp_path):
    out = tmp_path / "repro"
    papers = reproduce(["camc"], str(out), common.Settings(seeds=1, quick=True), jobs=2, progress=False)
    check_rows_data(out / "camc.json")
    rows = {r.claim["id"]: r for r in papers[0]["rows"]}
    assert set(rows) == {c["id"] for c in figures.load("camc")["claim"]}
    # §9.2 (b)3 holds exactly whatever the run length, on pages actually placed.
    for rid in ("isolation-diff-bank", "isolation-diff-controller", "isolation-tintmalloc-banks",
                "isolation-pages-in-colours"):
        assert rows[rid].per_seed == [0.0] and rows[rid].placed_pages > 0, rid
    # One bank shared by four random-access tasks costs more than private banks, even in a tiny run.
    assert rows["palloc-same-bank-doubles"].stats["mean"] > 1 + rows["palloc-diff-bank-plus-4"].stats["mean"] / 100
    text = (out / "camc.md").read_text()
    assert "## Calibration" in text and "1 hop" in text and "the foreground alone" in text
    assert (out / "camc-background.png").stat().st_size > 1000
    # Each detail table has its own rows: the TintMalloc table's are its programs under its policies
    # (they were the rate-monotonic table's once), a cell per column.
    section = text.split("### TintMalloc")[1].split("###")[0]
    rows_md = [line for line in section.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert {r.split(" | ")[0][2:] for r in rows_md} == {"synthetic"}, rows_md
    assert [r.split(" | ")[1] for r in rows_md] == list(camc.TINT), rows_md
    assert all(r.count(" | ") == 6 for r in rows_md), rows_md
    # The Palloc benchmark is the `random` profile, not the captured `chase` trace.
    background = text.split("### The foreground's run time")[1].split("###")[0]
    assert "| Palloc latency benchmark (random profile) | same_bank |" in background and "| chase |" not in background


@pytest.mark.parametrize("paper", list(PAPERS))
def test_committed_reports_rows_hold_the_verdict_rule(paper):
    path = Path(figures.FIGURES_DIR).parents[1] / "docs" / "reproductions" / f"{paper}.json"
    check_rows_data(path)


def test_the_readme_states_the_committed_reports_verdict_counts():
    from memtint.reproduce import report

    root = Path(figures.FIGURES_DIR).parents[1]
    readme = (root / "README.md").read_text()
    table = readme.split("<!-- reproduction-verdicts: begin -->")[1].split("<!-- reproduction-verdicts: end -->")[0]
    rows = table.strip().splitlines()[2:]  # after the header and its rule
    columns = [verdict.REPRODUCED, verdict.DIRECTION_ONLY, verdict.NEAR_MISS, verdict.NOT_REPRODUCED,
               verdict.NOT_APPLICABLE]
    seen = []
    for row in rows:
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        name = re.search(r"docs/reproductions/(\w+)\.md", cells[0]).group(1)
        paper = report.read_paper(str(root / "docs" / "reproductions"), name)
        stated = dict(zip(columns, cells[1:1 + len(columns)]))
        counted = {v: report._count(paper["verdicts"], paper["derived"], v) for v in columns}
        assert stated == counted, name
        seen.append(name)
    assert sorted(seen) == sorted(PAPERS)


def test_population_admits_only_the_mixes_where_both_horizontal_policies_help():
    test, _ = common.POPULATIONS["both-horizontal-help"]
    run = lambda ws: [{"ws": ws}]  # noqa: E731
    assert test({"buddy": run(2.0), "cache-only": run(2.1), "bank-only": run(2.05)}, {})
    assert not test({"buddy": run(2.0), "cache-only": run(2.1), "bank-only": run(1.99)}, {})
    assert not test({"buddy": run(2.0), "cache-only": run(2.0), "bank-only": run(2.2)}, {})


def test_population_best_versus_ahead_reads_its_policies_from_the_claim():
    test, describe = common.POPULATIONS["best-versus-ahead"]
    runs = {"x": [{"ws": 2.0}, {"ws": 2.2}], "a": [{"ws": 2.0}], "b": [{"ws": 2.05}], "c": [{"ws": 9.0}]}
    claim = {"policy": "x", "versus_best": ["a", "b"]}
    assert not test(runs, claim)  # x's mean over seeds, 2.1, is above a's and b's
    assert test(runs, {**claim, "versus_best": ["a", "c"]})  # c is ahead
    assert "(a, b)" in describe(claim) and "than x" in describe(claim)


def test_unknown_name_is_a_clean_error(memtint, clean_error):
    clean_error(memtint("reproduce", "nosuchpaper"), "nosuchpaper", "bpm")


def test_bad_seed_count_is_a_clean_error(memtint, clean_error):
    clean_error(memtint("reproduce", "bpm", "--seeds", "0", "--out", "x"), "--seeds")
    # Counts read as everywhere else (its help says "default 20M"); 0.5 is not a count.
    clean_error(memtint("reproduce", "bpm", "--warmup", "10M", "--seeds", "0", "--out", "x"), "--seeds")
    clean_error(memtint("reproduce", "bpm", "--warmup", "0.5", "--out", "x"), "--warmup", "whole number")
    clean_error(memtint("demo", "--instructions", "10Q"), "--instructions", "2M")


def test_demo_sentences_follow_the_numbers():
    import pandas as pd

    from memtint.findings import policy_sentences

    rows = []
    for mix, light in (("stream|light|light|light", True), ("stream|copy|random|random", False)):
        rows.append({"policy": "buddy", "mix": mix, "status": "ok", "ws_norm": 1.0, "ms_norm": 1.0,
                     "mix_row_buffer_miss_rate": 0.5})
        rows.append({"policy": "bpm", "mix": mix, "status": "ok", "ws_norm": 1.01 if light else 1.05,
                     "ms_norm": 0.9, "mix_row_buffer_miss_rate": 0.3})
        rows.append({"policy": "cache-only", "mix": mix, "status": "ok", "ws_norm": 0.95, "ms_norm": 1.1,
                     "mix_row_buffer_miss_rate": 0.5})
    runs = pd.DataFrame(rows)
    runs.attrs["baseline"] = "buddy"
    bpm, cache = policy_sentences(runs)
    assert bpm.startswith("[bold]bpm[/bold]: weighted speedup +3.0 % over buddy on average (2 of 2 mixes better), "
                          "maximum slowdown -10.0 %; on the 1 memory-intensive mix +5.0 %")
    assert "more throughput and fairer" in bpm and "cut the row-buffer miss rate from 50 % to 30 %" in bpm
    assert "-5.0 %" in cache and "a loss on these mixes" in cache and "stayed at 50 %" in cache


def test_demo_sentences_say_when_a_policy_removed_the_misses_other_programs_caused():
    # The same miss rate can hide interference replaced by a program's own conflicts on fewer
    # banks: "changed little in DRAM" said the opposite of what the causes measured.
    import pandas as pd

    from memtint.findings import interference_sentence, policy_sentences

    runs = pd.DataFrame([
        {"policy": "buddy", "mix": "a|b", "status": "ok", "ws_norm": 1.0, "ms_norm": 1.0,
         "mix_row_buffer_miss_rate": 0.72, "config_hash": "h1"},
        {"policy": "bank-only", "mix": "a|b", "status": "ok", "ws_norm": 0.99, "ms_norm": 1.0,
         "mix_row_buffer_miss_rate": 0.72, "config_hash": "h2"}])
    runs.attrs["baseline"] = "buddy"
    (plain,) = policy_sentences(runs)
    assert "changed little in DRAM" in plain  # without the causes, the miss rate is all there is
    (said,) = policy_sentences(runs, interference={"h1": 0.52, "h2": 0.0})
    assert "changed little" not in said and "took the misses another program caused from 52 % to 0 % of requests" in said
    (back,) = policy_sentences(runs, interference={"h1": 0.0, "h2": 0.3})
    assert "raised the misses another program caused from 0 % to 30 % of requests, in place of" in back
    (same,) = policy_sentences(runs, interference={"h1": 0.30, "h2": 0.305})
    assert "changed little in DRAM" in same and "another program" not in same  # half a point: no change
    # A baseline that partitions banks: a miss-rate rise nobody else caused is not bank interference.
    frame = pd.DataFrame([{"policy": "bpm", "status": "ok", "mix": "a|b", "core": c, "llc_mpki_alone": 10.0,
                           "llc_mpki": 10.5, "row_buffer_miss_rate_alone": 0.4, "row_buffer_miss_rate": 0.6,
                           "read_latency_ns_alone": 50.0, "read_latency_ns_mean": 55.0,
                           "row_interference_rate": 0.0} for c in range(2)])
    text = interference_sentence(frame, "bpm")
    assert "their own rows, not bank interference" in text and "[bold]bandwidth[/bold] dominates" in text, text


def test_findings_label_only_what_grew_and_never_read_alike_figures_as_a_change():
    """"from 27.6 to 26.5 per kilo-instruction (-4 %, LLC pollution)" called a fall pollution,
    "(-0 %, ...)" printed a sign of nothing, and "raised the row-buffer miss rate from 4 % to 4 %"
    hid 3.8 -> 4.0 in the rounding."""
    import re

    import pandas as pd

    from memtint.findings import interference_sentence, policy_sentences, signed, two_figures

    def frame(mpki, rb, lat):
        return pd.DataFrame([{"policy": "buddy", "status": "ok", "mix": "a|b", "core": c, "llc_mpki_alone": mpki[0],
                              "llc_mpki": mpki[1], "row_buffer_miss_rate_alone": rb[0], "row_buffer_miss_rate": rb[1],
                              "read_latency_ns_alone": lat[0], "read_latency_ns_mean": lat[1],
                              "row_interference_rate": 0.09} for c in range(2)])

    text = interference_sentence(frame((27.6, 26.5), (0.30, 0.306), (44.0, 78.0)), "buddy")
    assert "lowered the programs' LLC misses from 27.6 to 26.5 per kilo-instruction (-4 %)," in text, text
    assert "raised their row-buffer miss rate from 30 % to 31 % (+2 %; 9 % of their DRAM requests" in text, text
    assert "(+77 %, queueing for bandwidth and banks)" in text
    text = interference_sentence(frame((27.04, 26.96), (0.296, 0.302), (44.0, 78.0)), "buddy")
    assert "from 29.6 % to 30.2 %" in text, text
    assert not re.search(r"[-+]0 %|[-+]0\.0 %", text) and "pollution" not in text
    # A change under 0.5 % (what seeds move a mean by) is said to stay, not shown as noise in
    # more decimals ("from 18.471 to 18.473 per kilo-instruction (+0.01 %)").
    assert "left the programs' LLC misses at 27.0 per kilo-instruction," in text, text
    text = interference_sentence(frame((18.471, 18.473), (0.3, 0.33), (44.0, 78.0)), "buddy")
    assert "left the programs' LLC misses at 18.5 per kilo-instruction," in text and "18.47" not in text, text

    runs = pd.DataFrame([
        {"policy": "buddy", "mix": "a|b", "status": "ok", "ws_norm": 1.0, "ms_norm": 1.0,
         "mix_row_buffer_miss_rate": 0.038},
        {"policy": "cache-only", "mix": "a|b", "status": "ok", "ws_norm": 0.9998, "ms_norm": 1.0003,
         "mix_row_buffer_miss_rate": 0.040}])
    runs.attrs["baseline"] = "buddy"
    (said,) = policy_sentences(runs)
    assert "LLC colouring raised the row-buffer miss rate from 3.8 % to 4.0 %" in said, said
    assert "weighted speedup -0.02 % over buddy" in said and "maximum slowdown +0.03 %" in said, said
    assert not re.search(r"[-+]0(\.0)? %", said)

    assert [signed(x) for x in (-0.4, 0.0, -0.004, 3.2)] == ["-0.4", "0", "-0.004", "+3"]
    assert two_figures(3.8, 4.0) == ("3.8", "4.0") and two_figures(27.0, 27.0, 1) == ("27.0", "27.0")


def test_demo_names_the_interference_that_grew_most_with_its_figures():
    import pandas as pd

    from memtint.findings import intensive_mixes, interference_sentence

    rows = []
    for core, (mpki_alone, mpki, rb_alone, rb, lat_alone, lat) in enumerate(
            [(20.0, 22.0, 0.5, 0.8, 50.0, 60.0), (10.0, 11.0, 0.4, 0.7, 60.0, 70.0), (0.05, 0.05, 0.1, 0.1, 40.0, 40.0)]):
        rows.append({"policy": "buddy", "status": "ok", "mix": "a|b|c", "core": core, "llc_mpki_alone": mpki_alone,
                     "llc_mpki": mpki, "row_buffer_miss_rate_alone": rb_alone, "row_buffer_miss_rate": rb,
                     "read_latency_ns_alone": lat_alone, "read_latency_ns_mean": lat})
    frame = pd.DataFrame(rows)
    assert "because of another program" not in interference_sentence(frame, "buddy")  # results without causes
    frame["row_interference_rate"] = [0.3, 0.1, 0.0]
    text = interference_sentence(frame, "buddy")
    assert "bank interference; 20 % of their DRAM requests missed the row buffer because of another program (its open row or its precharge))" in text
    # row-buffer misses 0.45 -> 0.75 (+67 %) beat latency (+18 %) and LLC misses (+10 %)
    assert "[bold]bank interference[/bold] dominates" in text, text
    assert "from 45 % to 75 % (+67 %" in text and "+10 %, LLC pollution" in text and "over the 2 programs" in text
    # one light program of three: an intensive mix, measured by alone MPKI
    assert intensive_mixes(frame) == {"a|b|c"}
    # Nothing grew by 5 %: no interference is named as dominant.
    for alone, shared in (("llc_mpki_alone", "llc_mpki"), ("row_buffer_miss_rate_alone", "row_buffer_miss_rate"),
                          ("read_latency_ns_alone", "read_latency_ns_mean")):
        frame[shared] = frame[alone] * 1.01
    quiet = interference_sentence(frame, "buddy")
    assert "dominates" not in quiet and "none grew by 5 % or more, so these mixes show little interference" in quiet
    assert quiet.startswith("Under buddy, sharing the machine raised the programs' LLC misses from 15.0 to 15.1")
    # The verb holds for all three figures: LLC misses falling beside a longer latency is not "raised".
    frame["llc_mpki"] = frame["llc_mpki_alone"] * 0.99
    frame["read_latency_ns_mean"] = frame["read_latency_ns_alone"] * 1.5
    mixed = interference_sentence(frame, "buddy")
    assert mixed.startswith("Under buddy, sharing the machine lowered the programs' LLC misses from 15.0 to 14.9 "
                            "per kilo-instruction (-1 %"), mixed
    assert "[bold]bandwidth[/bold] dominates" in mixed
    for alone, shared in (("row_buffer_miss_rate_alone", "row_buffer_miss_rate"),
                          ("read_latency_ns_alone", "read_latency_ns_mean")):
        frame[shared] = frame[alone] * 0.9
    assert interference_sentence(frame, "buddy").startswith("Under buddy, sharing the machine lowered the programs'")


@pytest.mark.engine
def test_dram_stream_export_round_trips_within_one_percent(tmp_path, monkeypatch):
    from memtint.reproduce import crosscheck

    monkeypatch.setattr(crosscheck, "INSTRUCTIONS", 30_000)
    monkeypatch.setattr(crosscheck, "MIXES", (["triad", "chase", "random", "stream"],))
    rows = crosscheck.run(str(tmp_path), None)
    assert [r["policy"] for r in rows] == ["buddy", "bpm"]
    for r in rows:
        # the replay gives every exported request the outcome it had; it also completes the
        # requests still in flight when the shared run ended, and those are the only difference
        # (a request has its outcome from its first command, before it completes)
        assert sum(abs(a - b) for a, b in r["round_trip"].values()) <= r["in_flight"], r
        assert all(a >= b for a, b in r["round_trip"].values()), r
        assert r["in_flight"] <= 0.02 * r["requests"]
        assert abs(r["replay_timed"] - r["shared"]) <= 0.01
        assert r["ramulator_untimed"] is None
    text = crosscheck.markdown(rows, None)
    assert "Ramulator 2.1 was not available" in text and "| triad + chase + random + stream | bpm |" in text

    # Without Ramulator, a stream identical to a measured one (same hash) takes the stored figure,
    # marked; one that differs has none.
    bpm = rows[1]
    stored = {bpm["stream_sha256"]: {"hits": 60, "misses": 10, "conflicts": 30, "measured": "2026-01-02",
                                     "ramulator": "c5b1c3a"}}
    again = crosscheck.run(str(tmp_path), None, stored)
    assert [r["stream_sha256"] for r in again] == [r["stream_sha256"] for r in rows]  # deterministic streams
    assert again[0]["ramulator_untimed"] is None and again[1]["ramulator_untimed"] == 0.4 and again[1]["stored"]
    text = crosscheck.markdown(again, None, stored)
    assert "| 40.0 % * |" in text and "measured on 2026-01-02 with Ramulator 2.1 c5b1c3a" in text
    assert "1 of the 2 streams differ from every stored measurement" in text
    bad = tmp_path / "reference.json"
    bad.write_text('{"measurements": [{"hits": 1}]}')
    with pytest.raises(MemtintError, match="reference.json: not a cross-check reference file"):
        crosscheck.load_reference(str(bad))


@pytest.mark.engine
def test_sim_export_is_written_whole_and_never_over_an_input(memtint, tmp_path, clean_error):
    run = tmp_path / "run.toml"
    run.write_text('machine = "i7-860"\nprograms = ["random", "stream"]\ninstructions = 20000\n')
    out = tmp_path / "stream.dramsim3"
    code, _, err = memtint("sim", run, "--export-dram", out, "--json", tmp_path / "s.json")
    assert code == 0, err
    lines = out.read_text().splitlines()
    assert lines and all(len(line.split()) == 3 and line.split()[1] in ("READ", "WRITE") for line in lines)
    import json

    assert json.loads((tmp_path / "s.json").read_text())["export_dram"] == {
        "path": str(out), "format": "dramsim3", "requests": len(lines)}
    before = run.read_bytes()
    clean_error(memtint("sim", run, "--export-dram", run), "--export-dram")
    assert run.read_bytes() == before
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.engine
def test_each_format_of_one_export_replays_alike(memtint, tmp_path):
    # The same stream in each format: Ramulator 2's LoadStoreTrace replays as Ramulator's (both
    # untimed), DRAMSim2's k6 trace as DRAMSim3's (both timed).
    import json

    run = tmp_path / "run.toml"
    run.write_text('machine = "i7-860"\nprograms = ["random", "stream"]\ninstructions = 20000\n')
    stats = {}
    for fmt in ("ramulator", "ramulator2", "dramsim3", "dramsim2"):
        out = tmp_path / f"stream.{fmt}"
        code, _, err = memtint("sim", run, "--export-dram", out)  # the suffix picks the format
        assert code == 0, err
        code, _, err = memtint("dram", "--machine", "i7-860", "--trace", out, "--format", fmt, "--json", f"{fmt}.json")
        assert code == 0, err
        stats[fmt] = json.loads((tmp_path / f"{fmt}.json").read_text())
    assert (tmp_path / "stream.ramulator2").read_text().split("\n", 1)[0].split()[0] in ("LD", "ST")
    assert (tmp_path / "stream.dramsim2").read_text().split("\n", 1)[0].split()[1] in ("P_MEM_RD", "P_MEM_WR")
    keys = ("requests", "reads", "writes", "row_hits", "row_misses", "row_conflicts", "dram_cycles")
    assert {k: stats["ramulator"][k] for k in keys} == {k: stats["ramulator2"][k] for k in keys}
    assert {k: stats["dramsim3"][k] for k in keys} == {k: stats["dramsim2"][k] for k in keys}
    # A .gz name is a gzip file in the format its suffix before .gz names, which dram reads back
    # without --format: it used to be plain dramsim3 text that the replay refused.
    import gzip

    for fmt in ("ramulator", "dramsim2"):
        out = tmp_path / f"stream.{fmt}.gz"
        code, _, err = memtint("sim", run, "--export-dram", out)
        assert code == 0, err
        assert gzip.decompress(out.read_bytes()).decode() == (tmp_path / f"stream.{fmt}").read_text()
        code, _, err = memtint("dram", "--machine", "i7-860", "--trace", out, "--json", f"{fmt}-gz.json")
        assert code == 0, err
        replay = json.loads((tmp_path / f"{fmt}-gz.json").read_text())
        assert {k: replay[k] for k in keys} == {k: stats[fmt][k] for k in keys}


@pytest.mark.engine
def test_a_run_files_export_dram_is_relative_to_it_and_checked_as_an_output(memtint, tmp_path, clean_error):
    # docs/stats.md's run file has export_dram = { path, format }; the command line's wins.
    (tmp_path / "runs").mkdir()
    run = tmp_path / "runs" / "run.toml"
    text = 'machine = "i7-860"\nprograms = ["random", "stream"]\ninstructions = 20000\n'
    run.write_text(text + 'export_dram = { path = "stream.txt", format = "ramulator" }\n')
    code, _, err = memtint("sim", run)  # from tmp_path, not the file's folder
    assert code == 0, err
    lines = (tmp_path / "runs" / "stream.txt").read_text().splitlines()
    assert lines and all(line.split()[1] in ("R", "W") for line in lines)
    # The export the file names is its output, not an input, on the second run too.
    code, _, err = memtint("sim", run)
    assert code == 0, err
    code, _, err = memtint("sim", run, "--export-dram", tmp_path / "cli.dramsim3")
    assert code == 0 and (tmp_path / "cli.dramsim3").read_text().split()[1] in ("READ", "WRITE"), err
    run.write_text(text + 'export_dram = { path = "run.toml" }\n')
    clean_error(memtint("sim", run), "export_dram.path", "is an input")
    run.write_text(text + 'export_dram = { path = "s.txt", format = "csv" }\n')
    clean_error(memtint("sim", run), "run.toml:4: export_dram.format", "csv")


# --- diagnostics -------------------------------------------------------------------------------

def test_row_buffer_causes_and_llc_occupancy_are_named_diagnostics():
    """The engine's row-buffer causes and LLC lines survive `slim` and become diagnostics; the
    row-buffer claim's cause names the interference right after the miss rate."""
    from memtint import api
    from memtint.reproduce import runner

    programs = ["stream", "random", "stream:seed=5", "light"]
    runs = {p: runner.slim(api.run_sim("i7-860", programs, instructions=200_000, policy=p)) for p in ("buddy", "bpm")}
    d = {p: common.diagnostics(r) for p, r in runs.items()}
    for name in (common.INTERFERENCE, "row misses after another program's precharge (per kilo-request)",
                 "row-buffer misses of write-backs (share)", "row-buffer misses of prefetches (share)",
                 "LLC occupancy, MiB (mean per program)"):
        assert name in d["buddy"] and name in d["bpm"], name
    assert d["buddy"][common.INTERFERENCE] > 0
    assert d["bpm"][common.INTERFERENCE] == 0  # each program has its own banks
    # what bank partitioning leaves: each program's conflicts with itself, on fewer banks
    assert d["bpm"][common.SELF_CONFLICTS] > 0
    assert 0 < d["buddy"]["LLC occupancy, MiB (mean per program)"] <= 8 / len(programs)
    assert common.MECHANISM_DIAGNOSTICS["rbmiss_change"] == ("row-buffer miss rate", common.INTERFERENCE,
                                                             common.SELF_CONFLICTS)
    text = common.explain([(d["buddy"], d["bpm"])], top=3, labels=("buddy", "bpm"),
                          first=common.MECHANISM_DIAGNOSTICS["rbmiss_change"])
    assert text.startswith("buddy → bpm: row-buffer miss rate") and common.INTERFERENCE in text, text
    assert common.SELF_CONFLICTS in text, text
    # Results stored before these statistics existed still give the other diagnostics.
    old = {**runs["buddy"], "cores": [{k: v for k, v in c.items() if "row_conflicts_by" not in k}
                                      for c in runs["buddy"]["cores"]]}
    assert common.INTERFERENCE not in common.diagnostics(old)


def _run(cycles, finished_at, simulated_ns, recolour_cycles=None, pages=None):
    """A slim result of two cores, enough for `diagnostics` and `recolour_cause`."""
    core = {"instructions": 1000, "cycles": cycles, "llc_mpki": 10.0, "dram_reads": 10, "dram_writes": 5,
            "read_latency_ns_mean": 50.0, "bank_level_parallelism": 2.0, "banks_used": 8, "channels_used": 1,
            "finished_at": finished_at}
    run = {"row_buffer_miss_rate": 0.5, "simulated_ns": simulated_ns, "cores": [dict(core), dict(core)]}
    if pages is not None:
        run["dynamic"] = {"repartitions": 1, "pages_recoloured": pages}
        for c in run["cores"]:
            c["page_migration"] = {"recolour_cycles": recolour_cycles}
    return run


def test_a_dynamic_policys_stall_is_a_cause_against_its_static_baseline():
    """A static run re-colours nothing, so the stall of a dynamic policy shows against it (before,
    the diagnostic was missing on the static side and left out); the run's length is ranked only
    for claims that name it."""
    static = common.diagnostics(_run(10_000_000, 9_999_999, 5e6))
    dynamic = common.diagnostics(_run(10_000_000, 9_999_999, 5e6, recolour_cycles=2_000_000, pages=500))
    assert static["re-colouring stall, % of the threads' cycles"] == 0.0
    assert dynamic["re-colouring stall, % of the threads' cycles"] == 20.0
    text = common.explain([(static, dynamic)], top=1, labels=("buddy", "dynamic-bpm"))
    assert text.startswith("buddy → dynamic-bpm: re-colouring stall, % of the threads' cycles 0.000 → 20.0"), text
    longer = common.diagnostics(_run(10_000_000, 9_999_999, 9e6))
    assert "simulated time" not in common.explain([(static, longer)], top=5)
    assert "simulated time, ms 5.00 → 9.00" in common.explain([(static, longer)], top=1, first=("simulated time, ms",))


def test_an_adjustment_overheads_cause_is_its_pages_stall_and_run_length():
    """Hand-computed: 10 M cycles in 5 ms (0.5 ns per cycle); each of the 2 threads stalled 2 M
    cycles = 1 ms of its 10 M cycles = 5 ms; 500 pages moved, so 2 ms / 500 = 4 µs per page."""
    runs = [_run(10_000_000, 9_999_999, 5e6, recolour_cycles=2_000_000, pages=500)] * 2
    text = common.recolour_cause("dynamic-bpm", runs)
    assert text.startswith("dynamic-bpm re-coloured 500 pages per run during the measured window; each thread "
                           "stalled 1.00 ms for them on average (4.0 µs per page moved"), text
    assert "of the 5.0 ms it took to reach its target, in runs of 5.0 ms simulated" in text


def test_the_walks_cost_is_the_costliest_programs_at_hvrs_schedule():
    """Hand-computed: the second program walks 12,000 resident pages, 402 walks of 10 ns a page per
    3 s window: 402 x 12,000 x 10 / 3e9 = 1.608 % of a core; the run's own schedule, 96.5 cores."""
    run = _run(10_000_000, 9_999_999, 5e6)
    run["hot_pages"] = [{"program": "light", "window_ns": 500_000.0, "walk_ns_per_page": 10.0, "walked_pages": 100.0,
                         "walk_share": 0.804, "walk_share_hvr": 402 * 100 * 10 / 3e9},
                        {"program": "hashprobe", "window_ns": 500_000.0, "walk_ns_per_page": 10.0,
                         "walked_pages": 12_000.0, "walk_share": 96.48, "walk_share_hvr": 402 * 12_000 * 10 / 3e9}]
    assert common.worst_walk(run)[:1] == (1,)
    runs = {"hvr-online": run}
    value = common.mix_value("walk_share_hvr", [runs, runs], {"policy": "hvr-online"}, "buddy")
    assert abs(value - 1.608) < 1e-9, value
    text = common.walk_cause("hvr-online", [run, run])
    assert ("The costliest program of each run (hashprobe in 2 of 2 runs) has 12,000 pages resident on average over the "
            "runs: 1.6 % of a core") in text, text
    assert "would take 60 %" in text and "(500 µs windows) the same walks would take 96 cores" in text, text
    assert "at 10 ns a resident page" in text, text
    # Runs too short for a sampling window have no walk: the claim is not applicable.
    short = _run(10_000_000, 9_999_999, 5e6)
    short["hot_pages"] = [{"walked_pages": None, "walk_share": None, "walk_share_hvr": None}] * 2
    assert common.worst_walk(short) is None
    assert "completed an accessed-bit sampling window" in common.walk_unmeasured("hvr-online", [short])
    assert common.walk_unmeasured("hvr-online", [short, run]) == ""


def test_a_maximum_slowdown_claims_cause_names_who_holds_it():
    """Hand-made: under bpm-plus the second program is the most slowed in both runs (2.5 and
    3.5, mean 3.00); under buddy the first in one run and the second in the other, a tie broken
    by name. An MS claim's cause leads with that and the maximum slowdown; a WS claim's does not
    rank the maximum slowdown (an outcome, not a cause)."""
    def run(slowdowns):
        r = _run(10_000_000, 9_999_999, 5e6)
        r["slowdowns"], r["alone"] = slowdowns, [{"llc_mpki": 5.0}] * 2
        return r
    named = [(["triad", "bfs"], run([1.5, 1.2]), run([1.1, 2.5])), (["triad", "bfs"], run([1.2, 1.4]), run([1.0, 3.5]))]
    text = common.most_slowed(named, ("buddy", "bpm-plus"))
    assert text == ("under bpm-plus the most slowed is bfs in 2 of 2 runs (slowdown 3.00; in those runs the maximum "
                    "slowdown went 1.45 → 3.00: 100 % of the rise); "
                    "under buddy the most slowed is triad in 1 of 2 runs (slowdown 1.50)"), text
    # The policy's holder is the one that carries the change, not the most frequent: triad holds two
    # runs that rose by 0.1 each, bfs one that rose by 1.8 (90 % of the 2.0).
    three = [(["triad", "bfs"], run([1.5, 1.2]), run([1.6, 1.1])), (["triad", "bfs"], run([1.4, 1.2]), run([1.5, 1.0])),
             (["triad", "bfs"], run([1.2, 1.1]), run([1.0, 3.0]))]
    assert common.most_slowed(three, ("buddy", "bpm-plus")).startswith(
        "under bpm-plus the most slowed is bfs in 1 of 3 runs (slowdown 3.00; in those runs the maximum slowdown went "
        "1.20 → 3.00: 90 % of the rise)")
    pairs = [(common.diagnostics(a), common.diagnostics(b)) for _, a, b in named]
    assert common.MAX_SLOWDOWN in pairs[0][0]
    ms = common.explain(pairs, top=1, labels=("buddy", "bpm-plus"), first=common.mechanism({"metric": "ms_change"}))
    assert ms.startswith("buddy → bpm-plus: maximum slowdown 1.45 → 3.00 (+107 %)"), ms
    assert common.MAX_SLOWDOWN not in common.explain(pairs, top=5, first=common.mechanism({"metric": "ws_change"}))


def test_a_channel_partitioned_runs_cause_names_who_shares_the_hurt_programs_channel():
    """Hand-made: four programs, channels {0: a + c, 1: b + d} under bpm-plus, both under buddy.
    d's slowdown rises most (1.2 -> 2.4, x2), beside b; under bpm-plus the most slowed is d in
    both runs, its channel shared with b. Buddy spreads every program: no channel to name."""
    def run(slowdowns, channels):
        return {"cores": [{"channels": ch, "dram_reads": 1, "dram_writes": 0, "cycles": 1} for ch in channels],
                "slowdowns": slowdowns}
    programs = ["a", "b", "c", "d"]
    buddy = run([1.5, 1.1, 1.3, 1.2], [[0, 1]] * 4)
    plus = run([1.6, 1.9, 1.4, 2.4], [[0], [1], [0], [1]])
    assert not common.channel_partitioned(buddy) and common.channel_partitioned(plus)
    assert common.channel_split(programs, plus) == "a + c in 0, b + d in 1"
    assert common.channel_mates(programs, plus, 3) == "b"
    assert common.most_hurt([(programs, buddy, plus)], ("buddy", "bpm-plus")) == (
        "d is hurt most: slowdown 1.20 → 2.40 (buddy → bpm-plus); bpm-plus's channels: a + c in 0, b + d in 1 (d beside b)")
    assert common.most_slowed([(programs, buddy, plus)] * 2, ("buddy", "bpm-plus")).startswith(
        "under bpm-plus the most slowed is d in 2 of 2 runs (slowdown 2.40; in those runs the maximum slowdown went "
        "1.50 → 2.40: 100 % of the rise; its channel shared with b in 2 of them)")


def test_a_bpm_plus_assignments_uf_on_buddys_traffic_is_never_below_the_best_split():
    """Channel loads from another run of the same mix: bpm-plus's assignment {a, c} | {b, d} on
    buddy's traffic 4, 3, 2, 1 is 6 against 4, UF 0.5; the best split, {a, d} | {b, c}, is 0."""
    def run(loads, channels):
        return {"cores": [{"channels": ch, "dram_reads": x, "dram_writes": 0, "cycles": 1}
                          for x, ch in zip(loads, channels)]}
    buddy = run([4, 3, 2, 1], [[0, 1]] * 4)
    plus = run([1, 1, 1, 1], [[0], [1], [0], [1]])
    assert common.channel_uf(plus) == 0.0
    assert common.channel_uf(plus, loads=buddy) == pytest.approx(0.5)
    assert common.best_split_uf(buddy) == 0.0


def test_the_uf_rules_cause_counts_its_wrong_picks_by_side():
    """Hand-made loads under buddy: 2:1 (no split balances it: the best split's UF 1.0, the rule
    picks bpm) in two runs, one where bpm-plus wins by 10 %; 2:1:1 (the best split, 2 | 1+1, has UF
    0: the rule picks bpm-plus) in one, where bpm-plus wins although its own static split there was
    unbalanced (3:1): the rule reads the best split's UF, as the paper's Step 1 assigns programs."""
    def uf_run(*loads):
        core = {"dram_reads": 0, "dram_writes": 0, "cycles": 1000}
        return {"cores": [{**core, "dram_reads": a} for a in loads]}
    runs = [{"buddy": uf_run(200, 100), "bpm-plus": {"ws": 2.2}, "bpm": {"ws": 2.0}},
            {"buddy": uf_run(200, 100), "bpm-plus": {"ws": 2.0}, "bpm": {"ws": 2.0}},
            {"buddy": uf_run(200, 100, 100), "bpm-plus": {**uf_run(300, 100), "ws": 2.1}, "bpm": {"ws": 2.0}}]
    assert [common.uf_rule_right(r) for r in runs] == [0.0, 1.0, 1.0]
    assert common.uf_rule_cause(runs) == (
        "the best split's UF above 0.2 in 2 of 3 runs (the rule picks bpm): bpm-plus is better by more than 1 % in 1 "
        "(by 10.0 % WS on average); the best split's UF at or below 0.2 in 1 of 3 runs (the rule picks bpm-plus): the "
        "pick is right in all")


def test_a_report_refers_to_a_repeated_cause_and_one_measurement_instead_of_repeating_them():
    """Two claims with the word-for-word cause of an earlier one, and a third with its figure on
    every seed: the later rows name the earlier row instead of showing the same evidence again."""
    from memtint.reproduce import report

    def row(text, value, per_seed, metric="ws_ratio"):
        r = common.Row({"text": text, "figure": "F", "source": "s", "kind": "change", "value": value,
                        "metric": metric}, "", per_seed, detail="a → b: x 1 → 2 (+100 %)")
        r.population = "10 mixes"
        return r
    rows = [row("first", 9.0, [1.0, 2.0]), row("second", 9.0, [1.0, 2.0]), row("third", 9.0, [3.0, 3.0])]
    cells = [r[-1] for r in report.claim_rows(rows)]
    assert cells[0] == "a → b: x 1 → 2 (+100 %)"
    assert cells[1].startswith("the same runs and comparison, so the same measured cause, as «first» "
                               "(one measurement with «first»: the same figure on every seed)"), cells[1]
    assert cells[2].startswith("the same runs and comparison") and "one measurement" not in cells[2]


def test_page_migration_survives_slim():
    """The tiering report's migration rows read `page_migration` from slimmed results."""
    from memtint import api
    from memtint.reproduce import runner

    threads = [{"program": "stream:footprint_bytes=16777216", "affinity": [c]} for c in (0, 1, 4, 5)]
    os_options = {"policy": "local", "migration": "numa-balancing", "numa_scan": {"period_ns": 100000.0, "scan_mb": 16.0}}
    run = runner.slim(api.run_sim("tiering-2to1", [], instructions=200_000, processes=[{"threads": threads}],
                                  os_options=os_options))
    assert run["page_migration"]["pages_moved"] > 0
    assert sum(c["page_migration"]["hint_faults"] for c in run["cores"]) > 0
    plain = runner.slim(api.run_sim("tiering-2to1", [], instructions=20_000, processes=[{"threads": threads}],
                                    os_options={"policy": "local"}))
    assert "page_migration" not in plain


def test_progress_estimates_the_time_left_from_the_jobs_cost():
    # Jobs run longest first: counting runs would promise a fraction of the time left.
    import io

    from memtint.reproduce.runner import RT_COST, WARMUP_COST, Progress, job_cost

    big = {"spec": {"programs": ["bfs"] * 4, "instructions": 10_000_000, "warmup": 20_000_000}}
    small = {"spec": {"programs": ["bfs"], "instructions": 1_000_000}}
    threads = {"spec": {"programs": [], "processes": [{"threads": [{}] * 8}], "instructions": 1_000_000}}
    assert job_cost(big) == 4 * (10_000_000 + 20_000_000 * WARMUP_COST)
    assert job_cost(threads) == 8 * job_cost(small)
    # sampled with the defaults: each period's 20 000 + 30 000 in detail, the rest warmed
    sampled = {"mode": "periodic", "unit": 20_000, "warming": 30_000}
    assert job_cost({"spec": {**big["spec"], "sampling": sampled}}) == 4 * (5_000_000 + 25_000_000 * WARMUP_COST)
    long = {"programs": ["bfs"] * 4, "instructions": 100_000_000, "warmup": 20_000_000}
    # a 100 M run: 5 % of it in detail, the rest warmed, which then costs more than the detail
    assert job_cost({"spec": {**long, "sampling": sampled}}) < job_cost({"spec": long}) / 5
    assert job_cost({"kind": "rt", "spec": {"tasks": []}}) == RT_COST
    stream = io.StringIO()
    bar = Progress(2, enabled=False, every=0.0, stream=stream, work=job_cost(big) + job_cost(small))
    bar.start -= 10.0  # the big job took 10 s: the small one is left, about 0.25 s of work
    bar.advance("shared", job_cost(big))
    done, eta = re.search(r"(\d+/\d+) runs, \d+ s elapsed, eta (\d+) s", stream.getvalue()).groups()
    assert done == "1/2" and int(eta) < 1
    # Nothing done yet (a pool whose workers died): no "eta nan s".
    stream = io.StringIO()
    Progress(1, enabled=False, every=0.0, stream=stream).advance("shared", 0.0)
    assert "eta unknown yet" in stream.getvalue() and "nan" not in stream.getvalue()


def test_runs_the_cache_gives_back_do_not_shorten_the_time_left():
    # 90 of 100 equal runs read back from the run cache in no time, then one simulated in 10 s:
    # 9 are left, about 90 s, not the 0.1 s a rate over all 91 done would promise.
    import io

    from memtint.reproduce.runner import Progress

    stream = io.StringIO()
    bar = Progress(100, enabled=False, every=1e9, stream=stream, work=100.0)
    for _ in range(90):
        bar.skip("shared", 1.0, cached=True)
    bar.start -= 10.0
    bar.every = 0.0
    bar.advance("shared", 1.0)
    runs, eta = re.search(r"(\d+/\d+ runs \(90 from the run cache\)), \d+ s elapsed, eta (\d+) s",
                          stream.getvalue()).groups()
    assert runs.startswith("91/100") and 85 <= int(eta) <= 95
    # Everything read back: nothing left, the time left is 0, not unknown.
    stream = io.StringIO()
    bar = Progress(1, enabled=False, every=0.0, stream=stream, work=5.0)
    bar.skip("alone", 5.0, cached=True)
    assert "eta 0 s" in stream.getvalue()


def test_a_failed_runs_error_names_what_it_ran():
    from memtint.reproduce.runner import job_label

    threads = {"key": "ab" * 32, "spec": {"machine": "opteron-6128", "programs": [],
                                          "processes": [{"threads": [{"program": "/w/spmv.t1.mtt.gz"}] * 2}]}}
    assert job_label(threads) == "opteron-6128 spmv.t1.mtt.gz, spmv.t1.mtt.gz"
    assert job_label({"key": "ab" * 32, "spec": {"machine": "ddr4-2400-8r", "tasks": [{"name": "cnt"}]}}) == \
        "ddr4-2400-8r cnt"


def test_hvr_lazy_variant_runs_its_own_seeds_and_shares_the_others_runs():
    from memtint.reproduce import hvr

    settings = common.Settings(quick=True, seeds=3)
    e = hvr.Experiment(settings)
    jobs = e.plan()
    lazy = [j for j in jobs if (j["spec"].get("os") or {}).get("recolour")]
    assert lazy and {j["spec"]["seed"] for j in lazy} == set(settings.seed_list()[:hvr.LAZY_SEEDS])
    assert all(v.label != "hvr-online-lazy" for v in e.four.variants)
    # The lazy experiment's buddy and hvr-online runs are the 4-program experiment's own keys.
    for m in range(len(e.lazy.mixes)):
        for label in ("buddy", "hvr-online"):
            assert e.lazy.shared[("i7-860", m, 1, label)] == e.four.shared[("i7-860", m, 1, label)]


def test_most_common_breaks_ties_by_first_seen_not_by_hash_order():
    assert common.most_common(["b", "a", "a", "b", "c"]) == "b"
    assert common.most_common(["a", "b", "b"]) == "b"
    # The same answer in a process with another string hash seed.
    import subprocess
    import sys
    code = "from memtint.reproduce import common; print(common.most_common(['kv', 'hp', 'hp', 'kv']))"
    outs = {subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONHASHSEED": str(seed)},
                           capture_output=True, text=True, check=True).stdout.strip() for seed in (1, 2, 3)}
    assert outs == {"kv"}


def test_a_claim_about_every_program_is_one_row_decided_by_its_worst_program():
    from memtint.reproduce import bpm
    from memtint.reproduce.common import Row

    claim = {"id": "every", "kind": "at_least", "value": 0.9, "tolerance_abs": 0.05, "metric": "relative_ipc",
             "subjects": "all"}
    rows = [Row(claim, "a", [0.97, 0.99]), Row(claim, "b", [0.70, 0.72]), Row(claim, "c", [1.0, 1.0])]
    rows[2].not_applicable = "c: no DRAM traffic"
    (row,) = bpm.Experiment._every(claim, rows)
    assert row.subject == "every program with DRAM traffic (2 of 3): worst b"
    assert row.per_seed == [0.70, 0.72] and row.verdict == verdict.NOT_REPRODUCED
    assert "1 of 2 hold it alone" in row.detail and "no effect to measure: c" in row.detail
    (none,) = bpm.Experiment._every(claim, rows[2:])
    assert none.verdict == verdict.NOT_APPLICABLE


def test_best_split_uf_is_the_most_balanced_assignment_of_programs_to_two_channels():
    def run(loads):
        return {"cores": [{"dram_reads": x, "dram_writes": 0, "cycles": 1} for x in loads]}

    # {4, 1} against {3, 2}: 5 against 5.
    assert common.best_split_uf(run([4, 3, 2, 1])) == 0.0
    # One program above the others together: the best split is it alone, (10 - 3) / 3.
    assert common.best_split_uf(run([10, 1, 1, 1])) == pytest.approx(7 / 3)


def test_a_dynamic_policys_own_adjustments_are_context_not_the_cause():
    stall = common.DYNAMIC_DIAGNOSTICS[0]
    # 0.025 % of the cycles stalled explains nothing beside a row-buffer miss rate 10 % higher;
    # the pages it copied are what the policy did, not a cause.
    pages = common.DYNAMIC_DIAGNOSTICS[2]
    pairs = [({stall: 0.0, pages: 0.0, "row-buffer miss rate": 0.50},
              {stall: 0.025, pages: 400.0, "row-buffer miss rate": 0.55})]
    text = common.explain(pairs, top=1, labels=("bpm", "dynamic-bpm"))
    assert text.startswith("bpm → dynamic-bpm: row-buffer miss rate 0.500 → 0.550 (+10 %)"), text
    assert text.endswith(f"(set by the policy: {pages} 0.000 → 400, {stall} 0.000 → 0.025)"), text
    # A claim about the adjustments themselves ranks them.
    assert common.explain(pairs, top=1, first=(pages,)).startswith(f"base → policy: {pages} 0.000 → 400"), text


def test_identical_runs_of_a_dynamic_variant_are_named():
    from types import SimpleNamespace

    from memtint.reproduce.common import Variant

    def run(cycles):
        return {"cores": [{"instructions": 100, "cycles": cycles}]}

    exp = SimpleNamespace(name="pressure", variants=[
        Variant("bpm", "bpm"), Variant("dynamic", "bpm", os={"dynamic": "dynamic-bpm"}),
        Variant("paced", "bpm", os={"dynamic": "dynamic-bpm", "recolour": {}})], shared={})
    results = {}
    for m, (bpm, dyn, paced) in enumerate([(10, 20, 20), (10, 30, 31)]):
        for seed in (1, 2):
            for label, cycles in (("bpm", bpm), ("dynamic", dyn), ("paced", paced)):
                exp.shared[("i7-860", m, seed, label)] = key = f"{m}-{seed}-{label}"
                results[key] = run(cycles)
    assert common.identical_results([exp], results) == (
        "Identical results: dynamic and paced ran identically on 1 of 2 pressure mixes (every seed): there they are "
        "one result under two names.")


# --- kept runs (memtint.reproduce.run_cache) ---------------------------------------------------

class InProcess:
    """A backend that runs jobs here, one by one, and can be stopped after ``stop_after`` runs
    (as Ctrl-C stops a reproduction part-way)."""

    def __init__(self, stop_after=None):
        self.ran, self.stop_after = [], stop_after

    def map_unordered(self, fn, items):
        for item in items:
            if self.stop_after is not None and len(self.ran) == self.stop_after:
                raise KeyboardInterrupt
            self.ran.append(item["key"])
            yield item, fn(item)

    def close(self):
        pass


def untimed(results):
    """Results without the host's timing (``wall_seconds``), which no two runs share."""
    return json.dumps({k: {**r, "wall_seconds": None} for k, r in results.items()}, sort_keys=True)


def small_plan():
    """CAMC's quick plan for one seed: alone, shared and profiled runs, 46 of them, seconds in all."""
    return PAPERS["camc"].Experiment(common.Settings(seeds=1, quick=True)).plan()


@pytest.mark.engine
def test_a_stopped_reproduction_resumes_from_its_kept_runs(tmp_path, monkeypatch):
    from memtint.reproduce import run_cache, runner

    monkeypatch.setenv("MEMTINT_CACHE_DIR", str(tmp_path / "cache"))
    jobs = small_plan()
    unique = {j["key"] for j in jobs}
    fresh = runner.run_jobs(jobs, progress=False, backend=InProcess())
    stopped = InProcess(stop_after=5)
    with pytest.raises(KeyboardInterrupt):
        runner.run_jobs(jobs, progress=False, backend=stopped, cache=run_cache.RunCache())
    assert len(list(run_cache.directory().glob("*.json"))) == 5
    resumed, cache = InProcess(), run_cache.RunCache()
    seconds = {}
    results = runner.run_jobs(jobs, progress=False, backend=resumed, cache=cache,
                              on_done=lambda o: seconds.__setitem__(o["key"], (o["seconds"], o.get("cached"))))
    # The five kept runs are not run again, every other one is, and the results are a fresh run's.
    assert set(resumed.ran) == unique - set(stopped.ran) and len(resumed.ran) == len(unique) - 5
    assert cache.reused == 5 and all(seconds[k][1] for k in stopped.ran)
    assert all(seconds[k][0] > 0 for k in stopped.ran)  # the CPU time measured when they ran
    assert untimed(results) == untimed(fresh)
    # Now every run is kept: nothing runs; a damaged entry (a result edited, still JSON) runs again.
    entry = next(run_cache.directory().glob("*.json"))
    data = json.loads(entry.read_text())
    data["result"]["dram_cycles"] = 1
    entry.write_text(json.dumps(data))
    again = InProcess()
    assert untimed(runner.run_jobs(jobs, progress=False, backend=again, cache=run_cache.RunCache())) == untimed(results)
    assert len(again.ran) == 1
    # --no-cache (no RunCache) runs everything and keeps nothing new.
    before = sorted(p.stat().st_mtime_ns for p in run_cache.directory().glob("*.json"))
    every = InProcess()
    runner.run_jobs(jobs, progress=False, backend=every)
    assert len(every.ran) == len(unique)
    assert sorted(p.stat().st_mtime_ns for p in run_cache.directory().glob("*.json")) == before


def test_a_kept_run_is_found_only_for_the_same_files_engine_and_runs_it_depends_on(tmp_path, monkeypatch):
    from memtint.reproduce import run_cache

    monkeypatch.setenv("MEMTINT_CACHE_DIR", str(tmp_path / "cache"))
    trace = tmp_path / "t.trace"
    trace.write_text("3 4096\n")
    pacer = {"key": "a" * 64, "phase": "shared", "spec": {"programs": [str(trace)]}}
    replay = {"key": "b" * 64, "phase": "shared", "spec": {"programs": ["stream"]}, "schedule_from": "a" * 64}

    def names():
        cache = run_cache.RunCache()
        cache.keys({j["key"]: j for j in (pacer, replay)})
        return cache._path(pacer["key"]).name, cache._path(replay["key"]).name

    first = names()
    assert first == names()  # the same files and engine: the same entries
    trace.write_text("3 8192\n")  # the same path, another content: neither the run nor its replay is kept
    changed = names()
    assert changed[0] != first[0] and changed[1] != first[1]
    # Runs that keep another statistic (runner.slim's keys) are other runs.
    from memtint.reproduce import runner

    monkeypatch.setattr(runner, "CORE_KEYS", runner.CORE_KEYS + ("a_new_statistic",))
    run_cache._python_identity.cache_clear()
    try:
        assert names()[0] != changed[0]
    finally:
        monkeypatch.undo()
        run_cache._python_identity.cache_clear()
    assert names() == changed
    monkeypatch.setenv("MEMTINT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(run_cache._engine, "version", lambda: "0.1.0+another-model")
    assert run_cache.directory().name == "0.1.0+another-model" and names()[0] != changed[0]


@pytest.mark.engine
def test_a_reproduction_from_kept_runs_simulates_nothing_and_says_so(tmp_path, monkeypatch):
    from memtint.reproduce import run_cache, runner

    monkeypatch.setenv("MEMTINT_CACHE_DIR", str(tmp_path / "cache"))
    jobs = small_plan()
    runner.run_jobs(jobs, progress=False, backend=InProcess(), cache=run_cache.RunCache())
    monkeypatch.setattr(runner, "execute", lambda job: pytest.fail(f"ran {job['key']}"))
    import memtint.reproduce as package

    monkeypatch.setattr(package, "same_placement", lambda *a, **k: [])  # its probes are not this test's
    cache = run_cache.RunCache()
    reproduce(["camc"], str(tmp_path / "out"), common.Settings(seeds=1, quick=True), jobs=1, progress=False,
              cache=cache)
    runs = len({j["key"] for j in jobs})
    assert cache.reused == runs
    text = (tmp_path / "out" / "camc.md").read_text()
    assert f"{runs} simulations, {runs} of them reused from this engine's earlier runs" in text
    assert f"{runs} of them reused from the run cache, not simulated now" in text
    assert f"({runs} runs reused)" in (tmp_path / "out" / "README.md").read_text()


def test_a_cache_that_cannot_hold_runs_warns_once_and_keeps_nothing(tmp_path, monkeypatch, capsys):
    from memtint.reproduce import run_cache

    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("MEMTINT_CACHE_DIR", str(blocker))  # a file where the directory would be
    cache = run_cache.RunCache()
    jobs = {k: {"key": k, "phase": "alone", "spec": {"programs": ["stream"]}} for k in ("a" * 64, "b" * 64)}
    cache.keys(jobs)
    for k in jobs:
        cache.store(k, {"cores": []}, 1.0)
        assert cache.lookup(k) is None
    err = capsys.readouterr().err
    assert err.count("reproduction runs are not kept") == 1 and "MEMTINT_CACHE_DIR" in err
    assert blocker.read_text() == "" and cache.reused == 0


def test_a_one_seed_mean_over_mixes_shows_its_spread_over_the_mixes():
    from memtint.reproduce import report

    claim = {"id": "x", "metric": "ws_ratio", "kind": "change", "value": 6.0}
    row = common.Row(claim, "", [1.0])
    assert report.ours_text(row) == ("+1.0 %", "one seed")
    row.per_mix = [-2.0, 1.0, 4.0]
    assert report.ours_text(row) == ("+1.0 %", "one seed; over its 3 mixes sd 3.0 %; -2.0 % … +4.0 %")


def test_the_committed_per_mix_values_average_to_their_figure():
    # A one-seed claim's figure is the mean over its mixes of the values the report shows spread.
    root = Path(__file__).resolve().parents[2] / "docs" / "reproductions"
    rows = [r for p in PAPERS for r in json.loads((root / f"{p}.json").read_text())["rows"] if r.get("per_mix")]
    assert rows, "no committed one-seed mean over mixes"
    for r in rows:
        assert len(r["per_seed"]) == 1 and len(r["per_mix"]) > 1, r["id"]
        assert abs(sum(r["per_mix"]) / len(r["per_mix"]) - r["mean"]) < 1e-9, r["id"]


def test_a_loss_within_seed_noise_is_a_tie_in_the_shares_of_mixes():
    """Bank-Only 'does not lower WS' and HVR 'at least as fast': a mix 0.5 % below its reference is
    a tie (seeds move a mix's WS by 0.1-0.5 %), 2 % below is a loss."""
    assert common.not_worse(2.99, 3.0) and common.not_worse(3.0 * 0.995, 3.0)
    assert not common.not_worse(3.0 * 0.98, 3.0)
    runs = [{"bank-only": {"ws": 2.99}, "buddy": {"ws": 3.0}}, {"bank-only": {"ws": 2.9}, "buddy": {"ws": 3.0}}]
    claim = {"metric": "share_not_worse", "policy": "bank-only"}
    assert common.mix_value("share_not_worse", runs, claim, "buddy") == 0.5


def test_claims_plot_colours_each_bar_by_its_verdict_and_names_it():
    """The claims picture says what the table does: memtint's bar takes its verdict's colour, the
    verdict follows each label, and a not-applicable claim is left out."""
    import matplotlib.colors as mcolors
    import matplotlib.pyplot as plt

    from memtint.reproduce import report
    from memtint.reproduce import verdict as verdict_rule

    def row(name, value, per_seed, not_applicable=""):
        return common.Row({"id": name, "text": name, "figure": "F", "source": "s", "kind": "change",
                           "value": value, "metric": "ws_change"}, "", per_seed, not_applicable=not_applicable)

    rows = [row("hit", 4.0, [4.1, 4.2]), row("weak", 4.0, [0.5, 0.6]), row("wrong", 4.0, [-3.0, -2.0]),
            row("none", 4.0, [0.0, 0.0], not_applicable="no DRAM traffic")]
    assert [r.verdict for r in rows] == [verdict_rule.REPRODUCED, verdict_rule.DIRECTION_ONLY,
                                         verdict_rule.NOT_REPRODUCED, verdict_rule.NOT_APPLICABLE]
    fig = report.claims_figure("t", rows)
    try:
        ax = fig.axes[0]
        labels = [t.get_text() for t in ax.get_yticklabels()]
        assert labels == ["hit (reproduced)", f"weak (direction only, {rows[1].ratio:.2f}x)", "wrong (not reproduced)"]
        from matplotlib.container import BarContainer

        ours = [c for c in ax.containers if isinstance(c, BarContainer)][1]
        assert [mcolors.to_hex(b.get_facecolor()) for b in ours] == [
            report.VERDICT_COLOURS[v] for v in (verdict_rule.REPRODUCED, verdict_rule.DIRECTION_ONLY,
                                                verdict_rule.NOT_REPRODUCED)]
        legend = [t.get_text() for t in fig.legends[0].get_texts()]
        assert legend[0] == "paper" and len(legend) == 4 and "direction only" in legend[2]
    finally:
        plt.close(fig)
    assert report.claims_figure("t", rows[3:]) is None
    # every verdict a bar can carry has a colour
    assert set(report.VERDICT_COLOURS) == set(verdict_rule.VERDICTS) - {verdict_rule.NOT_APPLICABLE}


def test_claims_plot_draws_what_the_table_gives_in_its_units():
    """A bound is a triangle, not a bar (a bar to >= 0 drew nothing, one to <= 1.4 read as measured);
    a one-seed mean over mixes has the table's spread over mixes as its error bar; a count or a
    density is left off the % axis and named; each row's figures are written in the table's units."""
    import matplotlib.pyplot as plt
    from matplotlib.collections import PathCollection
    from matplotlib.container import BarContainer

    from memtint.reproduce import report

    def row(name, kind, value, per_seed, metric="ws_change", per_mix=None):
        return common.Row({"id": name, "text": name, "figure": "F", "source": "s", "kind": kind,
                           "value": value, "metric": metric}, "", per_seed, per_mix=per_mix)

    rows = [row("gain", "change", 4.0, [4.1, 4.3]), row("no-loss", "at_least", 0.0, [1.0, 2.0]),
            row("cheap", "at_most", 1.4, [7.8, 8.0]), row("one-seed", "change", 4.0, [3.0], per_mix=[1.0, 3.0, 5.0]),
            row("hits", "at_most", 0, [0.0, 0.0], metric="cr_hits_max")]
    fig = report.claims_figure("t", rows)
    try:
        ax = fig.axes[0]
        assert [t.get_text() for t in ax.get_yticklabels()] == [
            "gain (reproduced)", "no-loss (reproduced)", "cheap (not reproduced)", "one-seed (reproduced) †"]
        paper, ours = [c for c in ax.containers if isinstance(c, BarContainer)]
        assert [b.get_width() for b in paper] == [4.0, 0.0, 0.0, 4.0]  # bounds have no bar
        marks = sorted(tuple(o) for c in ax.collections if isinstance(c, PathCollection) for o in c.get_offsets())
        assert marks == [(0.0, 1.2), (1.4, 2.2)]  # at the bound, on the paper's side of the row
        segments = ours.errorbar.lines[2][0].get_segments()
        widths = [s[1][0] - s[0][0] for s in segments]
        assert widths[3] == pytest.approx(2 * 2.0)  # sd of 1, 3, 5 over the mixes, each side
        assert widths[0] == pytest.approx(2 * common.summarise([4.1, 4.3])["sd"])
        texts = [t.get_text() for t in ax.texts]
        assert "+4.2 %  (paper +4.0 %)" in texts and "+1.5 %  (paper ≥ +0.0 %)" in texts
        assert "+7.9 %  (paper ≤ +1.4 %)" in texts
        notes = " ".join(t.get_text() for t in fig.texts)
        assert "sd over its mixes" in notes and "In the table only" in notes and "hits" in notes
        legend = [t.get_text() for t in fig.legends[0].get_texts()]
        assert legend[:2] == ["paper", "paper's bound (▶ at least, ◀ at most)"]
    finally:
        plt.close(fig)
    # only a count: nothing on a % axis to draw
    assert report.claims_figure("t", rows[4:]) is None


def test_each_claims_plot_row_is_named_in_the_table():
    """The plot labels its rows by claim id (and subject), which the table never showed: a row of
    the picture could not be found in the table beside it."""
    import matplotlib.pyplot as plt

    from memtint.reproduce import report

    def row(name, subject):
        return common.Row({"id": name, "text": "a claim", "figure": "Fig. 8", "source": "s", "kind": "change",
                           "value": 4.0, "metric": "ws_change"}, subject, [4.1, 4.2])

    rows = [row("fig8-ws", ""), row("fig1-16", "stream"), row("c1-ws-4c", "4c")]
    fig = report.claims_figure("t", rows)
    try:
        plotted = [t.get_text().rsplit(" (", 1)[0] for t in fig.axes[0].get_yticklabels()]
    finally:
        plt.close(fig)
    assert plotted == ["fig8-ws", "fig1-16 stream", "c1-ws-4c"]
    assert [cells[0] for cells in report.claim_rows(rows)] == [f"Fig. 8 `{p}`" for p in plotted]


def test_claims_plot_colours_are_far_apart():
    """Near miss was drawn in a second orange beside direction only's."""
    import matplotlib.colors as mcolors

    from memtint.reproduce import report

    colours = [mcolors.to_rgb(c) for c in report.VERDICT_COLOURS.values()]
    assert min(sum((a - b) ** 2 for a, b in zip(x, y)) ** 0.5
               for i, x in enumerate(colours) for y in colours[i + 1:]) > 0.25


def test_line_plots_draw_every_series_distinguishably():
    """BPM's Fig. 1 has 17 programs: with the colour cycle alone, the 11th was drawn as the 1st."""
    from memtint.reproduce import report

    styles = [report.line_style(i) for i in range(30)]
    assert len(set(styles)) == 30
    assert styles[0][0] == styles[10][0] and styles[0][1:] != styles[10][1:]


def test_line_plots_draw_coinciding_series_as_one_line_naming_each():
    """Refresh's cr and cr-none (the same latency at every density) were two lines, the second
    hiding the first, whose legend entry pointed at nothing; and the legend inside the axes
    covered the top of the steepest line."""
    import matplotlib.pyplot as plt

    from memtint.reproduce import report

    series = {"cr": [21.5, 21.5, 21.5], "cr-jedec": [21.5, 21.5, 108.0], "auto": [24.8, 60.0, 245.0],
              "cr-none": [21.5, 21.5, 21.5], "auto-none": [17.5, 17.5, 17.6], "crs": [17.6, 17.6, 17.6]}
    assert list(report.coincident(series)) == ["cr = cr-none", "cr-jedec", "auto", "auto-none ≈ crs"]
    fig = report.lines_figure({"x": [1, 2, 4], "series": series, "xscale": "log2-up", "xlabel": "density, Gb",
                               "ylabel": "ns", "title": "t", "reference": {"model": [20.0, 20.0, 20.0]}})
    try:
        ax = fig.axes[0]
        legend = ax.get_legend()
        assert [t.get_text() for t in legend.get_texts()] == ["cr = cr-none", "cr-jedec", "auto", "auto-none ≈ crs",
                                                              "model"]
        assert [line.get_ydata()[-1] for line in ax.lines] == [21.5, 108.0, 245.0, 17.6, 20.0]
        assert ax.lines[-1].get_linestyle() == "--"  # the model's line, apart from the measurements
        sizes = [line.get_markersize() for line in ax.lines[:-1]]
        assert sizes == sorted(sizes, reverse=True) and sizes[0] > sizes[-1]  # an earlier series rings a later
        fig.canvas.draw()
        assert legend.get_window_extent().x0 >= ax.get_window_extent().x1  # beside the axes, over no line
    finally:
        plt.close(fig)
