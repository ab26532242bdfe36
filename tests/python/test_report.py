"""`memtint report` and `memtint.reports`: the report renders from a small stored result set,
its HTML references PNGs that exist, and the summary table's numbers are those of the store."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from memtint.reports import SUMMARY_COLUMNS, format_cell, program_labels, write_report
from memtint.sweep import load_results, run_sweep

INSTRUCTIONS = 20_000
MIXES = [["stream", "light", "light", "light"], ["random", "copy", "light", "light"]]
# Policy -> machine; bpm-plus needs the BPM+ BIOS setting (mapping i7-860-bpm-plus).
POLICIES = {"buddy": "i7-860", "bpm": "i7-860", "cache-only": "i7-860", "bpm-plus": "i7-860-bpm-plus"}
# A large-footprint program confined to one colour under strict colouring: runs out of frames.
FAILING = {"machine": "i7-860", "programs": ["random:footprint_bytes=1073741824,reads_pki=200", "light"],
           "policy": "bpm", "os": {"strict": True, "colours": [[0], [1]]}}

pytestmark = pytest.mark.engine


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMTINT_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def results(tmp_path):
    runs = [{"machine": machine, "programs": mix, "policy": policy}
            for mix in MIXES for policy, machine in POLICIES.items()]
    spec = {"name": "report-test", "instructions": INSTRUCTIONS, "run": runs + [FAILING]}
    summary = run_sweep(spec, tmp_path / "results", jobs=2, progress=False)
    assert summary.done == len(runs) + 1 and summary.failed == 1
    return tmp_path / "results"


def expected_rows(frame):
    """The summary computed directly from the store: per policy, over its successful runs; WS and
    maximum slowdown divided by those of the buddy run of the same mix on i7-860."""
    runs = frame.drop_duplicates("config_hash")
    ok = runs[runs["status"] == "ok"]
    base = ok[ok["policy"] == "buddy"].set_index("mix")
    out = {}
    for policy in runs["policy"].unique():
        label = policy if POLICIES[policy] == "i7-860" else f"{policy} @ {POLICIES[policy]}"
        group, good = runs[runs["policy"] == policy], ok[ok["policy"] == policy]
        ws = [r.weighted_speedup / base.at[r.mix, "weighted_speedup"] for r in good.itertuples()]
        ms = [r.maximum_slowdown / base.at[r.mix, "maximum_slowdown"] for r in good.itertuples()]
        out[label] = {
            "runs": len(group), "failed": int((group["status"] != "ok").sum()),
            "ws_norm_mean": sum(ws) / len(ws), "ws_norm_max": max(ws),
            "ms_norm_mean": sum(ms) / len(ms), "ms_norm_max": max(ms),
            "weighted_speedup_mean": good["weighted_speedup"].mean(),
            "weighted_speedup_max": good["weighted_speedup"].max(),
            "maximum_slowdown_mean": good["maximum_slowdown"].mean(),
            "maximum_slowdown_max": good["maximum_slowdown"].max(),
            "rb_miss_mean": good["mix_row_buffer_miss_rate"].mean(),
            "rb_miss_max": good["mix_row_buffer_miss_rate"].max(),
        }
    return out


def markdown_table(text: str, heading: str) -> dict[str, list[str]]:
    """The rows (policy -> cells) of the Markdown table following ``heading``."""
    section = text.split(heading, 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("|")]
    rows = {}
    for line in lines[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0]] = cells[1:]
    return rows


def test_report_renders_and_its_numbers_are_the_stores(results, tmp_path):
    out = tmp_path / "report"
    report = write_report(results, out)
    index = out / "index.html"
    assert index.exists() and (out / "summary.md").exists()

    html = index.read_text()
    images = re.findall(r'<img src="([^"]+)"', html)
    assert len(images) == 5
    for name in images:
        png = out / name
        assert png.exists() and png.stat().st_size > 1000, name
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name

    expected = expected_rows(load_results(results))
    table = markdown_table((out / "summary.md").read_text(), "## Averages and maxima per policy")
    assert set(table) == set(expected)
    assert list(table)[0] == "buddy"  # the baseline first
    for policy, cells in table.items():
        for (key, label, digits), cell in zip(SUMMARY_COLUMNS, cells):
            assert cell == format_cell(expected[policy][key], digits), (policy, label)
    assert expected["buddy"]["ws_norm_mean"] == pytest.approx(1.0)
    assert expected["bpm"]["failed"] == 1 and table["bpm"][1] == "1"
    # The rows returned and the HTML table carry the same numbers.
    for row in report["rows"]:
        assert row["ws_norm_mean"] == pytest.approx(expected[row["policy"]]["ws_norm_mean"])
        assert f"<td>{format_cell(row['ws_norm_mean'], 3)}</td>" in html
    # The per-mix table is in both files, row for row (the HTML page had none).
    per_mix = markdown_table((out / "summary.md").read_text(), "## Weighted speedup / buddy per mix")
    assert len(per_mix) == len(MIXES)
    for mix, cells in per_mix.items():
        assert f"<tr><td>{mix}</td>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>" in html, mix


def test_report_command(memtint, results, tmp_path, clean_error):
    code, out, err = memtint("report", results, "--out", tmp_path / "r")
    assert code == 0, err
    assert "normalised to buddy" in out and "WS/base" in out and "index.html" in out
    assert (tmp_path / "r" / "index.html").exists()

    code, out, err = memtint("report", results, "--baseline", "bpm", "--out", tmp_path / "r2")
    assert code == 0, err
    assert "normalised to bpm" in out

    clean_error(memtint("report", results, "--baseline", "a-vp"), "baseline policy 'a-vp'")
    clean_error(memtint("report", tmp_path / "nothing"), "no sweep results", "no such directory")
    (tmp_path / "afile").write_text("x")
    clean_error(memtint("mine-rules", tmp_path / "afile", "--out", tmp_path / "m.toml"), "a file, not a result directory")
    (tmp_path / "empty").mkdir()
    clean_error(memtint("report", tmp_path / "empty"), "no sweep results", "no manifest.json")


def test_a_report_never_writes_into_its_store_or_over_a_file(memtint, results, tmp_path, clean_error):
    from memtint.api import MemtintError

    (tmp_path / "afile").write_text("x")
    # The API named the command's option, or raised a bare FileExistsError.
    with pytest.raises(MemtintError, match=r"^out .*afile: exists and is not a directory"):
        write_report(results, tmp_path / "afile")
    before = sorted(p.name for p in results.iterdir())
    # --out RESULTS wrote index.html and the plots into the store, beside its manifest.
    for out in (results, results / "batches"):
        with pytest.raises(MemtintError, match="an input of this command"):
            write_report(results, out)
        clean_error(memtint("report", results, "--out", out), f"--out {out}: ", "an input of this command")
    assert sorted(p.name for p in results.iterdir()) == before
    # The default, a directory of its own inside the store, is kept.
    assert write_report(results)["out"] == str(results / "report")


def test_a_report_of_one_sweep_leaves_out_the_stores_other_runs(results, tmp_path):
    # A second sweep into the same store (another instruction count: other configuration hashes),
    # as after an engine upgrade: its report must not mix in the first sweep's runs.
    runs = [{"machine": machine, "programs": MIXES[0], "policy": policy} for policy, machine in POLICIES.items()]
    second = run_sweep({"name": "again", "instructions": INSTRUCTIONS + 1, "run": runs}, results, jobs=2, progress=False)
    assert second.done == len(POLICIES)
    everything = write_report(results, tmp_path / "all")
    mine = write_report(results, tmp_path / "mine", config_hashes=second.config_hashes)
    assert (everything["runs"], mine["runs"]) == (2 * len(POLICIES) + 1 + len(POLICIES), len(POLICIES))
    by_policy = {r["policy"]: r for r in mine["rows"]}
    assert by_policy["bpm-plus @ i7-860-bpm-plus"]["ws_norm_mean"] is not None, "normalised to this sweep's buddy run"


def test_sampled_and_detailed_runs_in_one_store_are_kept_apart():
    """A sweep run with and without --sample into one store: each run is normalised by the
    baseline's run of its own kind, and the summaries list the sampled runs as their own series."""
    import pandas as pd

    from memtint.reports import run_table, summary_rows
    from memtint.sweep.summary import policy_summary

    def run(policy, sampled, ws):
        return {"config_hash": f"{policy}-{sampled}", "machine": "i7-860", "policy": policy, "mix": "stream|light",
                "instructions": 1000, "seed": 1, "os": "{}", "status": "ok", "weighted_speedup": ws,
                "maximum_slowdown": 2.0, "mix_row_buffer_miss_rate": 0.5, "baseline": "buddy", "sampled": sampled,
                "weighted_speedup_ci95_low": ws - 0.1 if sampled else None,
                "weighted_speedup_ci95_high": ws + 0.1 if sampled else None}

    frame = pd.DataFrame([run("buddy", False, 3.0), run("buddy", True, 3.3), run("bpm", False, 3.3),
                          run("bpm", True, 3.63)])
    runs = run_table(frame)
    got = dict(zip(runs["series"], runs["ws_norm"]))
    assert got == pytest.approx({"buddy": 1.0, "buddy (sampled)": 1.0, "bpm": 1.1, "bpm (sampled)": 1.1})
    assert [r["policy"] for r in summary_rows(frame)] == ["buddy", "buddy (sampled)", "bpm", "bpm (sampled)"]
    summary = {r["policy"]: r for r in policy_summary(frame)}
    assert summary["bpm (sampled)"]["sampled_runs"] == 1 and summary["bpm"]["sampled_runs"] == 0
    # `memtint sweep`'s table lists them as the report does, whatever order the runs finished in.
    finished = frame.iloc[::-1]
    assert [r["policy"] for r in policy_summary(finished)] == [r["policy"] for r in summary_rows(finished)]
    # A store of one kind keeps plain names.
    assert set(run_table(frame[frame["sampled"]])["series"]) == {"buddy", "bpm"}


def test_runs_of_other_settings_in_one_store_are_kept_apart(tmp_path):
    # The same spec swept again with a machine override (as `--set` gives): other experiments.
    # Buddy over buddy used to be 0.93 (paired across settings) and each policy was listed twice
    # under one name.
    from memtint.reports import run_table, summary_rows

    spec = {"name": "s", "machines": ["i7-860"], "policies": ["buddy", "bpm"], "instructions": INSTRUCTIONS,
            "warmup": 0, "mixes": [MIXES[0]]}
    run_sweep(spec, tmp_path / "r", jobs=1, progress=False)
    run_sweep({**spec, "overrides": {"cache": {"prefetcher": {"kind": "none"}}}}, tmp_path / "r", jobs=1, progress=False)
    frame = load_results(tmp_path / "r")
    assert set(frame["setup"]) == {"warmup=0", "warmup=0, cache.prefetcher.kind=none"}
    runs = run_table(frame)
    buddy = runs[runs["policy"] == "buddy"]
    assert list(buddy["ws_norm"]) == [1.0, 1.0]
    labels = [r["policy"] for r in summary_rows(frame)]
    assert sorted(labels) == ["bpm [warmup=0, cache.prefetcher.kind=none]", "bpm [warmup=0]",
                              "buddy [warmup=0, cache.prefetcher.kind=none]", "buddy [warmup=0]"]
    # One setup: plain names, as before.
    assert set(run_table(frame[frame["setup"] == "warmup=0"])["series"]) == {"buddy", "bpm"}
    # One mix in two setups is one mix (it was counted as two).
    from memtint.reports import write_report
    report = write_report(tmp_path / "r", tmp_path / "report")
    assert (report["runs"], report["mixes"]) == (4, 1)
    assert "4 runs (0 failed) of 1 mix in 2 setups on i7-860" in (tmp_path / "report" / "summary.md").read_text()
    # Two setups: a sentence per policy would pool them, so the report has none.
    assert report["findings"] == [] and "## Findings" not in (tmp_path / "report" / "summary.md").read_text()
    assert any("holds 2 setups, so no sentences say what its numbers mean" in n for n in report["notes"])
    assert "holds 2 setups, so no sentences" in (tmp_path / "report" / "summary.md").read_text()


def test_a_report_says_when_policies_ran_on_different_mixes(tmp_path):
    # Two sweeps into one store, each with its own mix: each policy's mean is over another
    # population, which side by side reads as a comparison of policies.
    base = {"machines": ["i7-860"], "instructions": INSTRUCTIONS, "warmup": 0}
    run_sweep({**base, "policies": ["buddy", "bpm"], "mixes": [MIXES[0]]}, tmp_path / "r", jobs=1, progress=False)
    run_sweep({**base, "policies": ["buddy", "cache-only"], "mixes": [MIXES[1]]}, tmp_path / "r", jobs=1,
              progress=False)
    report = write_report(tmp_path / "r", tmp_path / "out")
    text = (tmp_path / "out" / "summary.md").read_text()
    assert "The policies ran on different mixes (buddy 2, bpm 1, cache-only 1)" in text
    assert any("ran on different mixes" in n for n in report["notes"])
    # The command's terminal table carries it too.
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-m", "memtint.cli", "report", str(tmp_path / "r"), "--out",
                           str(tmp_path / "out2")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "note: The policies ran on different mixes (buddy 2, bpm 1, cache-only 1)" in " ".join(done.stdout.split())


def test_a_mix_without_its_baseline_run_shows_dashes(tmp_path):
    # A lost or failed baseline run left the mix out of the per-mix table's pivot: a KeyError.
    base = {"machines": ["i7-860"], "instructions": INSTRUCTIONS, "warmup": 0}
    run_sweep({**base, "policies": ["buddy", "bpm"], "mixes": [MIXES[0]]}, tmp_path / "r", jobs=1, progress=False)
    run_sweep({**base, "policies": ["bpm"], "mixes": [MIXES[1]]}, tmp_path / "r", jobs=1, progress=False)
    write_report(tmp_path / "r", tmp_path / "out")
    rows = [line for line in (tmp_path / "out" / "summary.md").read_text().splitlines() if line.startswith("| ")]
    assert any(line.endswith("| — | — |") for line in rows), rows


def _stored_run(policy, ws, *, setup="warmup=0", baseline="buddy", sampled=True, tag=""):
    return {"config_hash": f"{policy}-{baseline}-{setup}-{tag}", "machine": "i7-860", "policy": policy,
            "mix": "stream|light", "instructions": 1000, "seed": 1, "os": "{}", "status": "ok",
            "weighted_speedup": ws, "maximum_slowdown": 2.0, "mix_row_buffer_miss_rate": 0.5, "baseline": baseline,
            "sampled": sampled, "setup": setup, "memtint_version": "1",
            "weighted_speedup_ci95_low": ws - 0.1 if sampled else None,
            "weighted_speedup_ci95_high": ws + 0.1 if sampled else None}


def test_a_bars_sampling_interval_is_in_the_plot_and_in_the_per_mix_table(tmp_path, monkeypatch):
    """A run that replayed the baseline's units has its WS / base interval as an error bar: the
    zoomed y axis cut the bar's top off, and the per-mix tables gave the value without it."""
    import pandas as pd

    import memtint.reports as reports

    def matched(policy, ws, low, high):
        return {**_stored_run(policy, ws), "matched_to": "buddy" if policy != "buddy" else None,
                "weighted_speedup_change_ci95_low": low, "weighted_speedup_change_ci95_high": high}

    frame = pd.DataFrame([matched("buddy", 3.0, None, None), matched("bpm", 3.3, 0.02, 0.18)])
    runs = reports.run_table(frame)
    ok, series = runs[runs["status"] == "ok"], list(runs.attrs["series"])
    assert reports.per_mix_rows(ok, series) == [("stream, light", ["1.000", "1.100 ± 0.080"])]
    drawn = {}
    monkeypatch.setattr(reports, "save_figure", lambda fig, path, **kw: drawn.__setitem__("fig", fig))
    reports._grouped_bars(ok, "ws_norm", "y", "t", tmp_path / "w.png", series, "note")
    low, high = drawn["fig"].axes[0].get_ylim()
    assert low <= 1.0 and high >= 1.1 + 0.08  # the whole error bar is on the axis


def test_a_policy_without_a_bar_is_named_under_the_plot(tmp_path, monkeypatch):
    # Every run of cache-only failed: its legend entry and bars went, and nothing said so.
    import pandas as pd

    import memtint.reports as reports

    failed = {**_stored_run("cache-only", float("nan"), sampled=False), "status": "error", "error": "out of frames"}
    frame = pd.DataFrame([_stored_run("buddy", 3.0, sampled=False), _stored_run("bpm", 3.3, sampled=False), failed])
    runs = reports.run_table(frame)
    ok, series = runs[runs["status"] == "ok"], list(runs.attrs["series"])
    assert series == ["buddy", "bpm", "cache-only"]
    drawn = {}
    monkeypatch.setattr(reports, "save_figure", lambda fig, path, **kw: drawn.__setitem__("fig", fig))
    reports._grouped_bars(ok, "ws_norm", "y", "t", tmp_path / "w.png", series, "note")
    fig = drawn["fig"]
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["baseline (1.0)", "buddy", "bpm"]
    assert "no bars for cache-only" in " ".join(t.get_text() for t in fig.texts)


def test_sampled_runs_of_other_sampling_settings_are_kept_apart():
    # Two sweeps into one store, one with its own sampling table and one with --sample: the
    # baseline rows read 0.999/1.007 when one was normalised by the other's buddy run.
    import pandas as pd

    from memtint.reports import run_table
    from memtint.sweep.store import setup_text

    small = setup_text({"warmup": 0, "sampling": {"unit": 5000, "warming": 5000, "period": 20000}})
    default = setup_text({"warmup": 0, "sampling": {"unit": 100000}})
    assert small == "warmup=0, sampling.period=20000, sampling.unit=5000, sampling.warming=5000"
    frame = pd.DataFrame([_stored_run("buddy", 3.0, setup=small), _stored_run("bpm", 3.3, setup=small),
                          _stored_run("buddy", 3.1, setup=default), _stored_run("bpm", 3.41, setup=default)])
    runs = run_table(frame)
    assert dict(zip(runs["config_hash"], runs["ws_norm"])) == pytest.approx(dict(zip(frame["config_hash"],
                                                                                       [1.0, 1.1, 1.0, 1.1])))
    assert runs["series"].nunique() == 4 and all("sampling.unit=" in s for s in runs["series"])

    # A store written before setup named the sampling settings: no run of ambiguous baseline is
    # normalised (which of the two buddy runs is its own cannot be told).
    old = frame.assign(setup="warmup=0", config_hash=[f"h{i}" for i in range(4)])
    assert run_table(old)["ws_norm"].isna().all()


def test_runs_of_other_alone_run_baselines_are_kept_apart():
    # Two sweeps differing only in `baseline` (the alone runs' policy): buddy over buddy read
    # 0.991/0.998 when paired across them.
    import pandas as pd

    from memtint.reports import run_table

    frame = pd.DataFrame([_stored_run("buddy", 3.0, sampled=False), _stored_run("bpm", 3.3, sampled=False),
                          _stored_run("buddy", 3.2, baseline="random-interleave", sampled=False),
                          _stored_run("bpm", 3.84, baseline="random-interleave", sampled=False)])
    runs = run_table(frame, "buddy")
    assert dict(zip(runs["config_hash"], runs["ws_norm"])) == pytest.approx(dict(zip(frame["config_hash"],
                                                                                       [1.0, 1.1, 1.0, 1.2])))
    assert set(runs["series"]) == {"buddy [baseline=buddy, warmup=0]", "bpm [baseline=buddy, warmup=0]",
                                   "buddy [baseline=random-interleave, warmup=0]",
                                   "bpm [baseline=random-interleave, warmup=0]"}


def test_the_terminal_report_table_shows_sampled_intervals():
    # Its caption explained "± ?" under a table with no ± anywhere.
    import io

    import pandas as pd
    from rich.console import Console

    from memtint.reports import summary_rows
    from memtint.tables import normalised_table

    def render(frame):
        console = Console(file=io.StringIO(), width=200)
        console.print(normalised_table(summary_rows(frame), "t"))
        return console.file.getvalue()

    sampled = render(pd.DataFrame([_stored_run("buddy", 3.0), _stored_run("bpm", 3.3)]))
    assert "± 95 %" in sampled and "3.300 ± 0.100" in sampled and "3.000 ± 0.100" in sampled
    detailed = render(pd.DataFrame([_stored_run("buddy", 3.0, sampled=False), _stored_run("bpm", 3.3, sampled=False)]))
    assert "±" not in detailed


def test_a_failure_a_later_run_of_the_same_settings_replaced_is_not_counted(tmp_path):
    # A trace that failed, mended at the same path and run again, is another configuration hash:
    # the store keeps both, and the report counted the mended mix as failed too.
    trace = tmp_path / "t.trace"
    trace.write_text("0 not-an-address\n")
    spec = {"name": "mended", "instructions": INSTRUCTIONS,
            "run": [{"machine": "i7-860", "programs": [str(trace), "light"], "policy": p} for p in ("buddy", "bpm")]}
    first = run_sweep(spec, tmp_path / "results", jobs=1, progress=False)
    assert first.failed == 2
    trace.write_text("".join(f"3 {4096 * i + 64}\n" for i in range(2000)))
    second = run_sweep(spec, tmp_path / "results", jobs=1, progress=False)
    assert second.failed == 0
    report = write_report(tmp_path / "results", tmp_path / "report")
    assert (report["runs"], report["failed"], report["superseded"]) == (2, 0, 2)
    assert "2 earlier failure(s) replaced" in (tmp_path / "report" / "summary.md").read_text()


def test_a_mix_named_in_the_spec_is_shown_by_its_name(tmp_path):
    spec = {"machines": ["i7-860"], "instructions": INSTRUCTIONS, "warmup": 0, "policies": ["buddy", "bpm"],
            "mixes": [{"programs": MIXES[0], "name": "pressure"}, {"programs": MIXES[1]}]}
    run_sweep(spec, tmp_path / "r", jobs=1, progress=False)
    write_report(tmp_path / "r", tmp_path / "out")
    text = (tmp_path / "out" / "summary.md").read_text()
    assert "| pressure (stream, light×3) |" in text
    assert "| random, copy, light×2 |" in text


def test_long_bar_plots_wrap_into_rows_and_draw_every_bar_once(results, tmp_path, monkeypatch):
    # A sweep of 40 mixes drew one strip 77 inches wide; a row holds what fits MAX_PLOT_WIDTH.
    from pathlib import Path

    import memtint.reports as reports

    drawn = {}
    monkeypatch.setattr(reports, "save_figure", lambda fig, path, **kw: drawn.__setitem__(Path(path).name, fig))
    write_report(results, tmp_path / "wide")
    assert all(drawn[n].get_size_inches()[0] <= reports.MAX_PLOT_WIDTH
               for n in ("weighted_speedup.png", "maximum_slowdown.png", "per_core_slowdown.png"))
    assert len(drawn["weighted_speedup.png"].axes) == 1
    monkeypatch.setattr(reports, "MAX_PLOT_WIDTH", 3.0)  # one group per row
    write_report(results, tmp_path / "narrow")
    frame = load_results(results)
    programs = list(dict.fromkeys(p.split(":")[0] for p in frame.loc[frame["status"] == "ok", "program"]))
    for name, groups in (("weighted_speedup.png", len(MIXES)), ("per_core_slowdown.png", len(programs))):
        axes = drawn[name].axes
        assert len(axes) == groups, name
        labels = [t.get_text() for ax in axes for t in ax.get_xticklabels()]
        assert len(labels) == groups and len(set(labels)) == groups, (name, labels)
        bars = sum(len(ax.patches) for ax in axes)
        assert bars == groups * len(POLICIES), (name, bars)
        assert len({ax.get_ylim() for ax in axes}) == 1  # one scale to compare rows by


def test_a_policy_run_with_its_own_scheduler_is_normalised_to_the_baseline(tmp_path):
    # "buddy+bliss" names its scheduler: the policy compared, not another setup. Treated as a
    # setup, it had no baseline run and its normalised columns were all dashes.
    from memtint.reports import summary_rows

    spec = {"machines": ["i7-860"], "policies": ["buddy", "buddy+bliss"], "instructions": INSTRUCTIONS,
            "warmup": 0, "mixes": MIXES}
    run_sweep(spec, tmp_path / "r", jobs=2, progress=False)
    frame = load_results(tmp_path / "r")
    rows = {r["policy"]: r for r in summary_rows(frame)}
    assert set(rows) == {"buddy", "buddy+bliss"}, rows
    runs = frame.drop_duplicates("config_hash").set_index(["policy", "mix"])["weighted_speedup"]
    expected = [runs["buddy+bliss", m] / runs["buddy", m] for m in ("|".join(m) for m in MIXES)]
    assert rows["buddy+bliss"]["ws_norm_mean"] == pytest.approx(sum(expected) / len(expected), rel=1e-12)
    assert write_report(tmp_path / "r", tmp_path / "out")["mixes"] == len(MIXES)


def test_a_report_says_what_its_numbers_mean(results, tmp_path):
    # The demo's sentences, for any sweep of one setup: in the files and returned for the terminal.
    report = write_report(results, tmp_path / "out")
    text = (tmp_path / "out" / "summary.md").read_text()
    findings = text.split("## Findings\n\n", 1)[1].split("\n## ", 1)[0]
    # LLC misses fall a little while the others rise: each figure with its own verb
    assert findings.startswith("Under buddy, sharing the machine lowered the programs' LLC misses from 10.8 to 10.7 "
                               "per kilo-instruction (-1 %"), findings
    rows = {r["policy"]: r for r in report["rows"]}
    # each sentence names its series as the table's row does (bpm-plus ran on its machine variant)
    for policy in ("bpm", "cache-only", "bpm-plus @ i7-860-bpm-plus"):
        change = 100 * (rows[policy]["ws_norm_mean"] - 1)
        assert f"\n\n{policy}: weighted speedup {change:+.1f} % over buddy on average" in findings, findings
    assert "[bold]" not in text and "[bold]bpm[/bold]: weighted speedup" in report["findings_markup"][1]
    assert report["findings"][1].startswith("bpm: weighted speedup")  # the API's sentences are plain text
    assert not any("[bold]" in f for f in report["findings"])
    assert "<h2>Findings</h2>" in (tmp_path / "out" / "index.html").read_text()


def test_a_scheduler_in_a_policy_name_is_the_mechanism_a_sentence_names():
    from memtint.findings import mechanism

    assert mechanism("buddy+tcm") == "TCM scheduling"
    assert mechanism("ccps+ccps") == "core regions of channels and banks with CCPS scheduling"
    assert mechanism("bpm") == "bank partitioning" and mechanism("new-policy") == "new-policy"
    assert mechanism("buddy") == "buddy placement"  # a baseline other than buddy puts buddy in a sentence


def test_every_placement_policy_declares_what_a_sentence_names_and_whether_it_places_by_node():
    from memtint import api
    from memtint.findings import mechanism, places_by_node

    for p in api.presets()["placement_policy_info"]:
        assert p["mechanism"] and mechanism(p["name"]) == p["mechanism"], p["name"]
        # A node-colouring policy (camc, tintmalloc) chooses banks too: its sentences are a colour policy's.
        assert places_by_node(p["name"]) == (p["places_nodes"] and not p["colours_nodes"]), p["name"]
    assert places_by_node("weighted-interleave") and places_by_node("local")
    assert not places_by_node("bpm") and not places_by_node("tintmalloc") and not places_by_node("new-policy")


def test_a_report_follows_no_order_of_the_store(results):
    # A parallel sweep stores runs in the order they finished: the report must not follow it.
    from memtint.findings import policy_sentences
    from memtint.reports import run_table, summary_rows

    frame = load_results(results)
    reversed_rows = frame.iloc[::-1].reset_index(drop=True)
    # The run table (per-mix table, plots, findings) is the same whatever the stored order.
    columns = ["config_hash", "series", "mix_label", "ws_norm"]
    assert run_table(frame)[columns].equals(run_table(reversed_rows)[columns])
    for rows in (frame, reversed_rows):
        runs = run_table(rows)
        order = [r["policy"] for r in summary_rows(runs)][1:]
        said = [s.split("[/bold]")[0].removeprefix("[bold]") for s in policy_sentences(runs)]
        assert said == order, (said, order)


def test_which_machine_a_report_labels_plain_follows_no_order_of_the_store():
    # Two machines with as many runs each: the one whose runs finished first was labelled plain
    # (the CCPS grid's reports swapped "bpm" and "bpm @ ccps-4c-256b" from one sweep to the next).
    import pandas as pd

    from memtint.reports import machine_order, run_table

    def run(machine, policy):
        return {"config_hash": f"{machine}-{policy}", "machine": machine, "policy": policy, "mix": "stream|light",
                "instructions": 1000, "seed": 1, "os": "{}", "status": "ok", "weighted_speedup": 3.0,
                "maximum_slowdown": 2.0, "mix_row_buffer_miss_rate": 0.5, "baseline": "buddy"}

    frame = pd.DataFrame([run(m, p) for m in ("m-64b", "m-256b") for p in ("buddy", "bpm")])
    for rows in (frame, frame.iloc[::-1].reset_index(drop=True)):
        assert machine_order(rows) == ["m-256b", "m-64b"]
        assert sorted(set(run_table(rows)["series"])) == ["bpm", "bpm @ m-64b", "buddy", "buddy @ m-64b"]
    # More runs on one machine: that one is plain.
    more = pd.concat([frame, pd.DataFrame([run("m-64b", "imps")])])
    assert machine_order(more) == ["m-64b", "m-256b"]


@pytest.mark.parametrize("column, value", [("weighted_speedup", 0.0), ("maximum_slowdown", 0.0),
                                           ("slowdown", float("inf")), ("weighted_speedup", 1e308)])
def test_a_stored_figure_at_an_edge_is_no_figure_not_an_error_or_a_warning(memtint, results, tmp_path, column, value):
    # A baseline's WS of 0 stopped the report (ZeroDivisionError); an infinite slowdown or figures
    # whose sum overflows printed numpy's RuntimeWarnings on the terminal.
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    manifest = json.loads((results / "manifest.json").read_text())
    for batch in manifest["batches"]:
        path = results / batch["file"]
        table = pq.read_table(path)
        i = table.schema.get_field_index(column)
        pq.write_table(table.set_column(i, column, pa.array([value] * table.num_rows, pa.float64())), path)
    code, _, err = memtint("report", results, "--out", tmp_path / "rep")
    assert code == 0 and "Warning" not in err and "error" not in err, err


def test_program_labels_keep_programs_apart():
    # A profile's parameters make another program; two traces of one file name stay apart too.
    labels = program_labels(["light", "light:reads_pki=2", "/a/bfs.mtt", "/b/bfs.mtt", "/c/spmv.mtt",
                             "phases:stream@1000+light"])
    assert labels == {"light": "light", "light:reads_pki=2": "light:reads_pki=2", "/a/bfs.mtt": "/a/bfs.mtt",
                      "/b/bfs.mtt": "/b/bfs.mtt", "/c/spmv.mtt": "spmv.mtt",
                      "phases:stream@1000+light": "phases:stream@1000+light"}


def test_runs_of_a_machine_file_since_edited_are_left_out_and_counted(tmp_path):
    # An edited machine file reruns its mixes; the old runs stay in the store under the same path.
    # Paired with the new ones they gave ratios of two machines, or no baseline at all.
    from memtint import rule_mining

    machine = tmp_path / "m.toml"
    text = (Path(__file__).parents[2] / "configs" / "machines" / "i7-860.toml").read_text()
    machine.write_text(text)
    spec = {"name": "edited", "instructions": INSTRUCTIONS,
            "run": [{"machine": str(machine), "programs": ["stream", "random", "light", "light"], "policy": p}
                    for p in ("buddy", "bpm")]}
    run_sweep(spec, tmp_path / "results", jobs=1, progress=False)
    assert "latency = 31" in text
    machine.write_text(text.replace("latency = 31", "latency = 45"))
    run_sweep(spec, tmp_path / "results", jobs=1, progress=False, limit=1)
    report = write_report(tmp_path / "results", tmp_path / "report")
    assert (report["runs"], report["stale"]) == (1, 2)
    assert "2 run(s) of files since changed" in (tmp_path / "report" / "summary.md").read_text()
    assert rule_mining.runs(load_results(tmp_path / "results")).attrs["stale"] == 2
    # The sweep completed on the edited file: its pair is the report's, normalised to each other.
    run_sweep(spec, tmp_path / "results", jobs=1, progress=False)
    report = write_report(tmp_path / "results", tmp_path / "report2")
    assert (report["runs"], report["stale"]) == (2, 2)
    bpm = next(r for r in report["rows"] if r["policy"] == "bpm")
    assert math.isfinite(bpm["ws_norm_mean"])


def test_a_mixs_runs_are_in_seed_order():
    # They followed the configuration hash: "seed 2" came before "seed 1" for some mixes.
    import pandas as pd

    from memtint.reports import run_table

    frame = pd.DataFrame([{**_stored_run("buddy", 3.0, sampled=False, tag=str(seed)), "seed": seed,
                           "config_hash": h} for seed, h in ((1, "f"), (2, "a"), (3, "c"))])
    assert list(run_table(frame)["seed"]) == [1, 2, 3]


def test_a_node_policy_s_sentence_blames_no_bank_partition():
    # "interleave ... each program's own rows conflicted more on its fewer banks": a node policy
    # gives every bank to every program; what it changes is where reads are served.
    import pandas as pd

    from memtint.findings import policy_sentences
    from memtint.reports import run_table

    def run(policy, machine, ws, rb):
        return {"config_hash": f"{machine}-{policy}", "machine": machine, "policy": policy, "mix": "stream|light",
                "instructions": 1000, "seed": 1, "os": "{}", "status": "ok", "weighted_speedup": ws,
                "maximum_slowdown": 2.0 / ws, "mix_row_buffer_miss_rate": rb, "baseline": "local"}

    rows = [run("local", "tiering-2to1", 2.0, 0.06), run("interleave", "tiering-2to1", 1.6, 0.10)]
    interference = {"tiering-2to1-local": 0.44, "tiering-2to1-interleave": 0.26}
    said = policy_sentences(run_table(pd.DataFrame(rows)), set(), interference)
    assert len(said) == 1 and "node interleaving raised the row-buffer miss rate from 6 % to 10 %" in said[0], said
    assert "fewer banks" not in said[0] and "link latency" in said[0], said
    # A colour policy keeps its cause.
    rows = [run("buddy", "i7-860", 2.0, 0.06), run("bpm", "i7-860", 1.6, 0.10)]
    interference = {"i7-860-buddy": 0.44, "i7-860-bpm": 0.26}
    said = policy_sentences(run_table(pd.DataFrame([{**r, "baseline": "buddy"} for r in rows])), set(), interference)
    assert "conflicted more on its fewer banks" in said[0] and "link latency" not in said[0], said
