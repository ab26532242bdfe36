"""`memtint demo --tiering`: one bandwidth-bound job on the two-node tiering machines, its table,
sentences computed from the numbers, and its plot."""

from __future__ import annotations

import pytest

from memtint import tiering_demo


def test_the_ideal_is_the_bandwidth_model():
    # thesis §6.3 test 5: (r+1)/2 over Local for BW-aware, r/2 for DRAM-only, 1 for interleave
    for r in (2, 5, 10):
        assert tiering_demo.ideal("bw-interleave", r) == pytest.approx((r + 1) / 2)
        assert tiering_demo.ideal("dram-only", r) == pytest.approx(r / 2)
        assert tiering_demo.ideal("interleave", r) == pytest.approx(1.0)


def test_sentences_follow_the_numbers():
    m = {(r, p): {"time": 100.0, "speedup": 1.0, "fast_gbps": 10.0, "slow_gbps": 1.0, "dram_share": 0.5}
         for r in tiering_demo.RATIOS for p in tiering_demo.POLICIES}
    for r, s in ((2, 1.4), (5, 2.7), (10, 5.0)):
        m[(r, "bw-interleave")].update(speedup=s, time=100.0 / s, dram_share=r / (r + 1))
        m[(r, "dram-only")].update(speedup=r / 2 * 0.95, time=100.0 / (r / 2 * 0.95))
    said = " ".join(tiering_demo.sentences(m))
    assert "2:1 bw-interleave (1.40x Local, ideal 1.50x)" in said
    assert "runs 1.40x / 2.70x / 5.00x faster than Local" in said
    assert "short of the ideal" in said and "7% / 10% / 9%" in said


def test_migration_sentences_follow_the_numbers():
    m = {k: {"speedup": 1.0, "dram_reads": 0.3, "moved": 0.0, "system": 0.0, "simulated_ms": 2.1}
         for k in tiering_demo.MIGRATION_SETUPS}
    m["DAMON"].update(speedup=1.12, dram_reads=0.6, moved=4000.0, system=0.015)
    m["Colloid"].update(speedup=0.97, dram_reads=0.4, moved=900.0, system=0.002)
    m["Tiering mode (TPP)"].update(moved=200.0, system=0.001)
    said = " ".join(tiering_demo.migration_sentences(m))
    assert "DRAM serves 30% of reads under Local" in said
    assert "DAMON gains 12.0% against Local: it moved 4,000 pages, DRAM now serves 60% of reads" in said
    assert "Colloid loses 3.0%" in said and "Tiering mode (TPP) changes nothing" in said
    assert "Most useful here: DAMON" in said
    m["DAMON"].update(speedup=0.99)
    assert "None pays back within this run (the least costly: Tiering mode (TPP))" in " ".join(tiering_demo.migration_sentences(m))
    # A policy that moved nothing is not judged on its moves, nor counted as the least costly.
    m["Tiering mode (TPP)"].update(moved=0.0, system=0.0)
    said = " ".join(tiering_demo.migration_sentences(m))
    assert "Tiering mode (TPP) moved no page in 2.10 ms of simulated time: its scan or sampling did not act" in said
    assert "Tiering mode (TPP) changes nothing" not in said and "(the least costly: DAMON)" in said
    # With the engine's cause, that cause: the run's length was blamed whatever it was.
    m["Tiering mode (TPP)"]["why_none"] = "its gate refused every move it chose (3 refused)"
    said = " ".join(tiering_demo.migration_sentences(m))
    assert "Tiering mode (TPP) moved no page in 2.10 ms of simulated time: its gate refused every move" in said


def test_migration_sentences_say_when_no_page_moved():
    """Runs too short for any migration to act (--instructions 20000: 400,000 per migration thread)
    conclude nothing about migration's cost; they say how long the runs must be."""
    m = {k: {"speedup": 1.0, "dram_reads": 0.04, "moved": 0.0, "system": 0.0, "simulated_ms": 0.37}
         for k in tiering_demo.MIGRATION_SETUPS}
    said = " ".join(tiering_demo.migration_sentences(m, 20_000))
    assert "pays back" not in said and "copy traffic" not in said and "least costly" not in said
    assert "changes nothing" not in said and "the moves cost" not in said
    assert "No migration policy moved a page, so these rows are first-touch placement alone: each run lasted " \
           "0.37 ms of simulated time" in said
    assert "The default --instructions, 100,000 (2,000,000 per migration thread, about 2 ms)" in said
    # At the default length itself, no advice to run the default.
    assert "The default --instructions" not in " ".join(tiering_demo.migration_sentences(m, tiering_demo.INSTRUCTIONS))


def test_the_plot_names_every_policy_and_draws_coinciding_ones_as_one_line(monkeypatch, tmp_path):
    """Interleave's speedup is Local's at every ratio: its line hid Local's, whose legend entry
    pointed at nothing."""
    drawn = {}
    monkeypatch.setattr(tiering_demo, "save_figure", lambda fig, path, **kw: drawn.__setitem__("fig", fig))
    m = {(r, p): {"speedup": 1.0 + i * 0.1 * r} for i, p in enumerate(tiering_demo.POLICIES) for r in tiering_demo.RATIOS}
    for r in tiering_demo.RATIOS:
        m[(r, "interleave")] = dict(m[(r, "local")])
    tiering_demo.plot(str(tmp_path / "t.png"), m)
    ax = drawn["fig"].axes[0]
    names = [t.get_text() for t in ax.get_legend().get_texts()]
    assert names[0] == "local = interleave" and names[-1] == "ideal BW-aware (r+1)/2"
    assert sorted(n for name in names[:-1] for n in name.split(" = ")) == sorted(tiering_demo.POLICIES)
    assert ax.get_xlabel() and ax.get_ylabel() == "speedup over local (run time)"


def test_the_markdown_table_says_what_its_cells_are():
    text = tiering_demo.table_caption(100_000, 1)
    assert text.startswith("Speedup of the job's run time over Local (8 streams, 100,000 instructions each)")
    assert "in brackets the ideal" in text and "mean over 3 seeds" in tiering_demo.table_caption(100, 3)


@pytest.mark.engine
def test_the_tiering_demo_prints_its_table_and_writes_its_report(memtint, tmp_path):
    code, out, err = memtint("demo", "--tiering", "--instructions", "5000", "--out", tmp_path / "d", "--jobs", "2")
    assert code == 0, err
    assert "speedup over local" in out and "bw-interleave" in out and "Fastest per ratio" in out
    assert (tmp_path / "d" / "tiering.png").stat().st_size > 1000
    text = (tmp_path / "d" / "tiering.md").read_text()
    assert "| weighted-interleave |" in text and "![speedup over local per ratio](tiering.png)" in text
    assert text.split("\n\n")[1] == tiering_demo.table_caption(5000, 1)  # above the table, saying what its cells are
    # The migration baselines beside the placements, with what their moves cost.
    assert "Migration baselines at 2:1" in out and "local + colloid" in out
    assert "| Tiering mode (TPP) | local + memory-tiering |" in text
    # 100,000 instructions per migration thread: too short for any page to move, and it says so.
    assert "No migration policy moved a page" in text and "pays back" not in text
