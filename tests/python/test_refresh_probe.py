"""`memtint refresh-probe` (memtint.linux.refresh_probe, native/refresh_probe): the period
estimate on synthetic refresh stalls, the reading of the probe's output, and a short real run
where the machine can do one (x86-64 with the probe built)."""

from __future__ import annotations

import json
import os
import platform
import random

import pytest

from memtint.linux import refresh_probe
from memtint.linux.errors import LinuxError


def _stalls(period: float, seconds: float, seed: int, noise: float = 0.1) -> list[float]:
    """Slow-load times: a random fifth of the refreshes (the probe does not catch each), with
    20 ns of jitter, and `noise` of the events at random times (interrupts)."""
    rng = random.Random(seed)
    n = int(seconds * 1e9 / period)
    times = [k * period + rng.uniform(-20, 20) for k in range(n) if rng.random() < 0.2]
    times += [rng.uniform(0, seconds * 1e9) for _ in range(int(noise * len(times)))]
    return sorted(times)


@pytest.mark.parametrize("period", [7800.0, 3900.0, 1950.0])
def test_the_period_of_synthetic_refresh_stalls_is_found(period):
    found, strength = refresh_probe.estimate_period([_stalls(period, 0.05, 1), _stalls(period, 0.05, 2)])
    assert abs(found - period) < 5, (found, period)
    assert strength > 0.5


def test_random_slow_loads_have_no_strong_period():
    rng = random.Random(3)
    times = sorted(rng.uniform(0, 5e7) for _ in range(3000))
    _, strength = refresh_probe.estimate_period([times])
    assert strength < 0.3


def test_a_scan_that_rises_to_its_edge_finds_no_period():
    # Slow loads 100-300 ns apart: every candidate up to 20 µs fits them better than the last, so
    # the strongest is the scan's own edge (20.005 µs was reported as "the period").
    rng = random.Random(5)
    times, t = [], 0.0
    for _ in range(2000):
        t += rng.uniform(100, 300)
        times.append(t)
    assert refresh_probe.estimate_period([times]) == (0.0, 0.0)
    # Reported as no period, with its reason: not a period of 0 µs (JSON null, no line on the plot).
    r = refresh_probe.Round(tsc_hz=1e9, samples=4000, median_cycles=80, threshold_cycles=200, histogram={80: 4000},
                            slow_ns=times, slow_latency_cycles=[300] * len(times))
    summary = refresh_probe.analyse([r], []).summary()
    assert summary["period_ns"] is None and summary["period_strength"] is None
    assert "no period inside the 0.5-20 µs scan: the 1,999 gaps" in summary["no_period"]
    few = refresh_probe.analyse([refresh_probe.Round(tsc_hz=1e9, samples=10, median_cycles=80, threshold_cycles=200,
                                                     histogram={80: 10}, slow_ns=times[:3],
                                                     slow_latency_cycles=[300] * 3)], []).summary()
    assert few["no_period"].startswith("too few slow loads to time (2 gaps")


def test_the_plot_names_each_line_and_marks_the_slow_load_threshold(monkeypatch, tmp_path):
    """The found period's red line was explained nowhere and hid the JEDEC line it fell on, and the
    histogram did not show where the slow loads the table counts begin."""
    drawn = {}
    monkeypatch.setattr(refresh_probe, "save_figure", lambda fig, path, *a, **kw: drawn.__setitem__("fig", fig))
    times = _stalls(1950.0, 0.02, 1)
    r = refresh_probe.Round(tsc_hz=1e9, samples=20000, median_cycles=120, threshold_cycles=240,
                            histogram={120: 19000, 300: 1000}, slow_ns=times, slow_latency_cycles=[300] * len(times))
    result = refresh_probe.analyse([r], [])
    refresh_probe.plot(result, str(tmp_path / "p.png"))
    left, right = drawn["fig"].axes
    assert [t.get_text() for t in left.get_legend().get_texts()] == [
        f"slow-load threshold ({result.slow_loads:,} loads over it)", "loads"]
    assert left.lines[0].get_xdata()[0] == 240  # ns at 1 GHz
    names = [t.get_text() for t in right.get_legend().get_texts()]
    assert names == ["gaps between slow loads", "JEDEC tREFI, /2, /4", f"found: period {result.period_ns / 1000:.3f} µs"]
    jedec = [line for line in right.lines if line.get_linestyle() == ":"]
    found = [line for line in right.lines if line.get_color() == "red"]
    assert len(jedec) == 3 and found and min(j.get_zorder() for j in jedec) > found[0].get_zorder()


def test_the_probes_output_is_read_and_bad_lines_are_named():
    text = "tsc_hz 2000000000\nsamples 10000 median 300 threshold 600\nslow 2000 900\nslow 17600 700\nhist 300:9998 700:1 900:1\n"
    r = refresh_probe.parse(text)
    assert r.slow_ns == [1000.0, 8800.0]
    assert r.histogram == {300: 9998, 700: 1, 900: 1}
    with pytest.raises(LinuxError, match="line 3"):
        refresh_probe.parse("tsc_hz 2e9\nsamples 10000 median 300 threshold 600\nslow x\n")


def test_bad_settings_are_refused_naming_the_option(memtint):
    code, _, err = memtint("refresh-probe", "--samples", "5")
    assert code != 0 and "--samples" in err
    code, _, err = memtint("refresh-probe", "--threshold", "0.5")
    assert code != 0 and "--threshold" in err


@pytest.mark.skipif(platform.machine() != "x86_64" or not os.path.isfile(refresh_probe.PACKAGED),
                    reason="needs x86-64 and the probe built (make build)")
def test_a_short_probe_reports_its_figures_and_limits(memtint, tmp_path):
    out = tmp_path / "probe.json"
    code, stdout, err = memtint("refresh-probe", "--rounds", "1", "--samples", "20000", "--json", out,
                                "--plot", tmp_path / "probe.png")
    assert code == 0, err
    summary = json.loads(out.read_text())
    assert summary["loads"] == 20000 and summary["median_load_ns"] > 0
    assert any("memory controller" in limit for limit in summary["limits"])
    assert (tmp_path / "probe.png").stat().st_size > 0


def test_the_limits_say_other_ranks_refreshes_reach_the_line_through_the_shared_channel():
    # A refresh of another rank on the same channel delays the probe's load too (docs/refresh.md
    # reads a 1.95 µs period as possibly 4 ranks refreshed in turn), so "they do not stall it" is wrong.
    rank = next(limit for limit in refresh_probe.limits() if limit.startswith("one cache line's rank"))
    assert "channel they share" in rank and "do not stall" not in rank


@pytest.mark.parametrize("args", [["--rounds", "0"], ["--samples", "0"], ["--threshold", "nan"]])
def test_bad_settings_are_refused_before_the_progress_bar(memtint, args):
    code, out, err = memtint("refresh-probe", *args)
    assert code == 2 and err.strip().count("\n") == 0 and err.startswith("memtint: error: " + args[0]), err
    assert "━" not in err + out
