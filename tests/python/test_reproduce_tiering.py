"""The tiering report's pool and pair rows on hand-made runs: the claims' populations, figures
and measured causes (no simulation)."""

from __future__ import annotations

import math

import pytest

from memtint.reproduce import common, figures, tiering, verdict


def fake_run(time, late=0.0, share=0.3, peak=9.6, pki=2.0, remote=0.0, latency=100.0, slow_reads=0.5):
    """A pool run: 8 threads (4 per node) whose slow-node threads finish ``late`` % after the
    fast node's, the last at ``time``; the slow node at ``share`` of its ``peak``."""
    fast = time / (1 + late / 100)
    cores = [{"finished_at": fast if i < 4 else time, "instructions": 1000, "dram_reads": pki, "dram_writes": 0,
              "remote_read_fraction": remote, "load_latency_cycles": latency} for i in range(8)]
    reads = 1000
    nodes = [{"bandwidth_gbps": 1.0, "peak_gbps": 19.2, "reads": round(reads * (1 - slow_reads))},
             {"bandwidth_gbps": share * peak, "peak_gbps": peak, "reads": round(reads * slow_reads)}]
    return {"cores": cores, "nodes": nodes}


def experiment(pool, runs, seeds=1):
    """An Experiment over ``pool`` reading ``runs`` ((ratio, program, policy) -> run, or a list
    of one run per seed) instead of simulated results."""
    e = tiering.Experiment(common.Settings(seeds=seeds))
    e.pool = list(pool)
    results = {}
    for (r, n, p), run in runs.items():
        for s in e.settings.seed_list():
            results[("pool", r, n, p, s)] = run[s - 1] if isinstance(run, list) else run
    e._run = lambda res, key: res[key]
    return e, results


def claims():
    return {c["id"]: c for c in figures.load("tiering")["claim"]}


def intensive(time=1000.0, **kw):
    return fake_run(time, late=80, share=0.9, pki=30.0, **kw)


def test_non_intensive_programs_keep_their_class_at_10to1_and_miss_with_the_slow_nodes_load():
    """sort is non-intensive at 2:1 and saturates the 10:1 slow node: it stays in the claim (the
    thesis classes once) and the miss says how hard that node binds it, not "not applicable"."""
    runs = {(2, "triad", "local"): intensive(), (10, "triad", "local"): intensive(),
            (2, "sort", "local"): fake_run(1000, share=0.43), (10, "sort", "local"): fake_run(2000, late=125, share=0.96,
                                                                                             peak=1.92, latency=188),
            (10, "sort", "bw-local"): fake_run(2000 * 0.88, remote=0.5, latency=179, slow_reads=0.09),
            (10, "sort", "bw-interleave"): fake_run(2000 * 0.879, remote=0.5, latency=177, slow_reads=0.09)}
    e, results = experiment(["triad", "sort"], runs)
    row = e._pool_row(results, claims()["t7-non-intensive-10to1"], 10)
    assert not row.not_applicable
    assert row.per_seed == [pytest.approx(12.1)]
    assert row.verdict == verdict.NOT_REPRODUCED
    assert row.population.startswith("1 non-intensive programs at 10:1 (sort) under bw-local, bw-interleave")
    assert "96% of its 1.92 GB/s peak (at 2:1, where it is classed, 43%)" in row.detail, row.detail
    assert "threads finish +125 % after the fast node's: its bandwidth binds" in row.detail, row.detail
    assert "share of the reads to 9% and 9%" in row.detail, row.detail
    assert "-12.0 % under bw-local, -12.1 % under bw-interleave" in row.detail, row.detail
    assert "12.1 % (sort, bw-interleave), averaging 12.1 %" in row.detail, row.detail


def test_non_intensive_cause_gives_the_figures_statistic_for_every_policy_it_takes_the_max_over():
    """The figure is a run-time change, the largest over the programs and both policies: the
    cause states that change for each, and each seed's largest."""
    base = fake_run(1000, share=0.4, latency=86)
    runs = {(2, "sort", "local"): base,
            (2, "sort", "bw-local"): [fake_run(1600, remote=0.5, latency=168), fake_run(1660, remote=0.5, latency=168)],
            (2, "sort", "bw-interleave"): [fake_run(1650, remote=0.5, latency=169),
                                           fake_run(1620, remote=0.5, latency=169)]}
    e, results = experiment(["sort"], runs, seeds=2)
    row = e._pool_row(results, claims()["t7-non-intensive-2to1"], 2)
    assert row.per_seed == [pytest.approx(65.0), pytest.approx(66.0)]
    assert "+63.0 % under bw-local, +63.5 % under bw-interleave" in row.detail, row.detail
    assert "65.0 % (sort, bw-interleave), 66.0 % (sort, bw-local), averaging 65.5 %" in row.detail, row.detail
    assert "its bandwidth does not bind" in row.detail and "86 → 168 cycles under bw-local" in row.detail
    assert "speed" not in row.detail  # no speed change beside a run-time figure


def test_bw_interleave_against_bw_local_is_the_gap_between_their_mean_gains_and_compares_with_bw_local():
    """The thesis's 0.5 % is the difference of the two policies' averages over Local: per-program
    gaps of opposite sign cancel (their mean |gap| would be 10 %), and the cause compares the
    claim's own two policies."""
    runs = {}
    for n, (bwl, bwi) in {"triad": (800.0, 880.0), "stream": (800.0, 1000 / 1.36364)}.items():
        for r in (2,):
            runs[(r, n, "local")] = intensive(1000.0)
            runs[(r, n, "bw-local")] = intensive(bwl, remote=0.5)
            runs[(r, n, "bw-interleave")] = intensive(bwi, remote=0.5)
    e, results = experiment(["triad", "stream"], runs)
    c = claims()["h-bw-interleave-vs-bw-local-2to1"]
    assert c["over"] == "bw-local"
    row = e._pool_row(results, c, 2)
    g_i = ((1000 / 880 - 1) + (1.36364 - 1)) / 2 * 100
    g_l = (1000 / 800 - 1) * 100
    assert row.per_seed == [pytest.approx(abs(g_i - g_l))]
    assert row.verdict == verdict.REPRODUCED
    assert "per program bw-interleave over bw-local: triad -9 %" in row.detail, row.detail
    assert "over Local per program" not in row.detail
    assert row.population.startswith("2 bandwidth-intensive programs at 2:1 (triad, stream) under bw-interleave, bw-local")


def test_headline_cause_states_the_figures_mean_and_the_claims_baseline():
    runs = {(2, "triad", "local"): intensive(1000.0), (2, "triad", "bw-local"): intensive(800.0, remote=0.5)}
    e, results = experiment(["triad"], runs)
    row = e._pool_row(results, claims()["h-bw-local-over-local-2to1"], 2)
    assert row.per_seed == [pytest.approx(25.0)]
    assert row.detail.startswith("bw-local over local, +25.0 % on average over the 1 programs"), row.detail


def test_a_class_without_programs_with_dram_traffic_is_not_applicable():
    runs = {(2, "triad", "local"): intensive(), (2, "light", "local"): fake_run(1000, pki=0.5)}
    e, results = experiment(["triad", "light"], runs)
    row = e._pool_row(results, claims()["t7-non-intensive-2to1"], 2)
    assert row.verdict == verdict.NOT_APPLICABLE and "no program of the pool" in row.not_applicable
    assert "in neither class, below 1: light (0.5)" in row.population


def test_the_pairs_smaller_gain_needs_two_gains():
    """"The pairs gain less than the single programs" with BW-L losing on both is a miss with
    the measured losses, not "not applicable", whatever pairs minus single programs is."""
    failed = tiering.gain_precondition(-18.1, -7.6, 13)
    assert "-18.1 % on the pairs' makespan and -7.6 % on the 13 bandwidth-intensive single programs" in failed
    assert "pairs minus single programs -10.5 points: a larger loss, not a smaller gain" in failed
    assert "a smaller loss" in tiering.gain_precondition(-3.0, -7.6, 13)
    assert "(" not in tiering.gain_precondition(5.0, -7.6, 13)
    assert tiering.gain_precondition(18.8, 34.8, 7) == ""
    assert "no bandwidth-intensive single program" in tiering.gain_precondition(5.0, math.nan, 0)
    c = claims()["pairs-gain-below-single-program"]
    row = common.Row(c, "tiering-2to1", [-10.2, -11.0, -10.2])
    assert row.verdict == verdict.REPRODUCED  # the bound alone is met
    row.precondition_failed = failed
    assert row.verdict == verdict.NOT_REPRODUCED
    row.not_applicable = "no traffic"
    assert row.verdict == verdict.NOT_APPLICABLE


def test_no_tiering_claim_uses_the_mean_of_absolute_per_program_changes():
    assert all(c["metric"] != "abs_speedup_pct" for c in claims().values())
