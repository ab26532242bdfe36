"""`memtint refresh-probe`: DRAM refresh interference measured from user space.

The native probe (native/refresh_probe/refresh_probe.c) loads one cache line, flushes it with
``clflush`` and loads it again, timing each load with ``rdtscp``: every load goes to DRAM, and a
load that reaches its rank while the rank refreshes waits for the refresh. Loads slower than a
multiple of the median are recorded with their times; refresh makes them recur every tREFI
(7.8 µs; 3.9 µs above 85 °C or in DDR4's 2x mode, 1.95 µs in 4x), each stalled by up to tRFC.

The period is the one the gaps between slow loads are whole multiples of: the candidate P that
maximises the mean of cos(2π·gap/P) over the gaps (gaps within a round: rounds are separate runs
of the probe). Gaps that are multiples of P are multiples of P/2, P/3... too, so the longest
peak within 90 % of the strongest is the period.

Limits, stated in the output: the probe sees refresh only as stalls of one line's rank (other
ranks' refreshes are invisible to it), interrupts and other programs add slow loads, a virtual
machine's hypervisor and memory controller settings (power-down, refresh mode) are out of its
control, and hiding refresh needs control of the memory controller's refresh timing, which no
Linux interface gives: that stays in simulation (docs/refresh.md).
"""

from __future__ import annotations

import os
import platform
import subprocess
from dataclasses import dataclass, field
from typing import Callable, Sequence

from memtint.linux.errors import LinuxError
from memtint.outputs import save_figure

PACKAGED = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "_native", "memtint-refresh-probe")

# JEDEC refresh intervals a period is compared with, ns.
#: What ``--plot`` can write (matplotlib's formats; the file's suffix picks one).
PLOT_FORMATS = ("png", "pdf", "svg", "svgz", "eps", "ps", "jpg", "jpeg", "tif", "tiff", "webp")
JEDEC_INTERVALS = {"tREFI (1x, below 85 °C)": 7800.0, "tREFI / 2 (2x, or above 85 °C)": 3900.0, "tREFI / 4 (4x)": 1950.0}


def probe_path() -> str:
    """The native probe: MEMTINT_REFRESH_PROBE, else the one `make build` puts in the package."""
    override = os.environ.get("MEMTINT_REFRESH_PROBE")
    path = override or PACKAGED
    if not os.path.isfile(path):
        if override:
            raise LinuxError(f"MEMTINT_REFRESH_PROBE={override}: no such file")
        raise LinuxError(f"the refresh probe is not built ({PACKAGED} is missing): run make build")
    return path


@dataclass
class Round:
    """One run of the native probe."""

    tsc_hz: float
    samples: int
    median_cycles: int
    threshold_cycles: int
    histogram: dict[int, int]
    slow_ns: list[float] = field(default_factory=list)
    slow_latency_cycles: list[int] = field(default_factory=list)


def parse(text: str) -> Round:
    """The probe's output; an error naming the line for anything else."""
    r = Round(tsc_hz=0.0, samples=0, median_cycles=0, threshold_cycles=0, histogram={})
    slow_ticks: list[int] = []
    for number, line in enumerate(text.splitlines(), 1):
        parts = line.split()
        try:
            if not parts:
                continue
            if parts[0] == "tsc_hz":
                r.tsc_hz = float(parts[1])
            elif parts[0] == "samples":
                r.samples, r.median_cycles, r.threshold_cycles = int(parts[1]), int(parts[3]), int(parts[5])
            elif parts[0] == "slow":
                slow_ticks.append(int(parts[1]))
                r.slow_latency_cycles.append(int(parts[2]))
            elif parts[0] == "hist":
                r.histogram = {int(b): int(c) for b, c in (p.split(":") for p in parts[1:])}
            else:
                raise ValueError(parts[0])
        except (ValueError, IndexError):
            raise LinuxError(f"refresh probe output, line {number}: cannot read '{line[:80]}'") from None
    if r.tsc_hz <= 0 or r.samples <= 0:
        raise LinuxError("refresh probe output: no clock rate or sample count")
    r.slow_ns = [t * 1e9 / r.tsc_hz for t in slow_ticks]
    return r


def run_round(samples: int, factor: float) -> Round:
    path = probe_path()
    done = subprocess.run([path, str(samples), str(factor)], capture_output=True, text=True)
    if done.returncode != 0:
        raise LinuxError(f"refresh probe failed ({path}): {done.stderr.strip() or f'exit {done.returncode}'}")
    return parse(done.stdout)


def intervals(rounds: Sequence[Sequence[float]], longest_ns: float = 50000.0, most: int = 20000) -> "list[float]":
    """The times between consecutive slow loads of each round, up to `longest_ns` (refresh
    stalls recur every few µs; longer gaps only dilute), at most `most` of them."""
    out: list[float] = []
    for times in rounds:
        out.extend(b - a for a, b in zip(times, times[1:]) if b - a <= longest_ns)
    return out[:most]


def periodogram(gaps: Sequence[float], candidates) -> "list[float]":
    """For each candidate period P (ns), the mean of cos(2π·gap / P) over the gaps: 1 when every
    gap is a whole number of periods. Gaps, not absolute times, so that a period measured
    against the TSC need not be exact to 1e-5 to stay in phase over a whole run."""
    import numpy

    candidates = numpy.asarray(candidates, dtype=float)
    g = numpy.asarray(gaps, dtype=float)
    if len(g) == 0:
        return [0.0] * len(candidates)
    return list(numpy.cos(2 * numpy.pi * numpy.outer(1.0 / candidates, g)).mean(axis=1))


def estimate_period(rounds: Sequence[Sequence[float]], low_ns: float = 500.0, high_ns: float = 20000.0) -> tuple[float, float]:
    """(period ns, strength ≤ 1) of the slow loads: coarse scan, then refined. Gaps that are
    whole numbers of P are whole numbers of P/2 too, so the period is the longest candidate
    peak within 90 % of the strongest."""
    import numpy

    gaps = intervals(rounds)
    if len(gaps) < 10:
        return 0.0, 0.0
    coarse = numpy.arange(low_ns, high_ns, 5.0)
    power = numpy.asarray(periodogram(gaps, coarse))
    if power.max() <= 0:
        return 0.0, 0.0
    # Local maxima only: a peak's shoulders are nearly as strong as its top.
    inner = power[1:-1]
    peaks = numpy.nonzero((inner >= power[:-2]) & (inner >= power[2:]) & (inner >= 0.9 * power.max()))[0] + 1
    if not len(peaks):  # the scan rises to its edge: the period, if any, lies outside it
        return 0.0, 0.0
    best = coarse[peaks[-1]]
    fine = numpy.arange(best - 10.0, best + 10.0, 0.1)
    fine_power = numpy.asarray(periodogram(gaps, fine))
    k = int(fine_power.argmax())
    return float(fine[k]), float(fine_power[k])


def strongest_peaks(rounds: Sequence[Sequence[float]], count: int = 3) -> list[tuple[float, float]]:
    """The `count` strongest local maxima of the period scan, (period ns, strength), strongest
    first: a second train of stalls (another rank's refresh felt through the channel, a
    per-bank scheme) shows as a peak of its own."""
    import numpy

    gaps = intervals(rounds)
    if len(gaps) < 10:
        return []
    coarse = numpy.arange(500.0, 20000.0, 5.0)
    power = numpy.asarray(periodogram(gaps, coarse))
    inner = power[1:-1]
    peaks = numpy.nonzero((inner >= power[:-2]) & (inner >= power[2:]) & (inner > 0.1))[0] + 1
    ranked = sorted(peaks, key=lambda i: -power[i])[:count]
    return [(float(coarse[i]), float(power[i])) for i in ranked]


@dataclass
class ProbeResult:
    rounds: list[Round]
    period_ns: float
    strength: float
    median_ns: float
    slow_loads: int
    loads: int
    stall_median_ns: float
    stall_p90_ns: float
    nearest: str
    limits: list[str]
    peaks: list[tuple[float, float]] = field(default_factory=list)
    #: Why no period was found (period_ns 0); "" when one was.
    no_period: str = ""

    def summary(self) -> dict:
        return {
            "kind": "refresh-probe",
            "method": "clflush + rdtscp timed loads of one cache line; the period the gaps between slow loads are multiples of",
            "tsc_ghz": self.rounds[0].tsc_hz / 1e9 if self.rounds else 0.0,
            "loads": self.loads,
            "rounds": len(self.rounds),
            "median_load_ns": self.median_ns,
            "slow_loads": self.slow_loads,
            "threshold_factor": (self.rounds[0].threshold_cycles / self.rounds[0].median_cycles) if self.rounds else 0.0,
            "period_ns": self.period_ns if self.period_ns else None,
            "period_strength": self.strength if self.period_ns else None,
            **({"no_period": self.no_period} if not self.period_ns else {}),
            "nearest_jedec_interval": self.nearest,
            "strongest_peaks": [{"period_ns": p, "strength": s} for p, s in self.peaks],
            "stall_median_ns": self.stall_median_ns,
            "stall_p90_ns": self.stall_p90_ns,
            "limits": self.limits,
        }


def analyse(rounds: list[Round], limits: list[str]) -> ProbeResult:
    import numpy

    period, strength = estimate_period([r.slow_ns for r in rounds])
    gaps = len(intervals([r.slow_ns for r in rounds]))
    no_period = "" if period else (
        f"too few slow loads to time ({gaps} gaps between them; at least 10 needed)" if gaps < 10 else
        f"no period inside the 0.5-20 µs scan: the {gaps:,} gaps between slow loads are not whole multiples of one "
        "(refresh hidden by the hypervisor or the memory controller, or stalls of other causes)")
    excess = [
        (lat - r.median_cycles) * 1e9 / r.tsc_hz for r in rounds for lat in r.slow_latency_cycles
    ]
    nearest = min(JEDEC_INTERVALS, key=lambda k: abs(JEDEC_INTERVALS[k] - period)) if period else "none"
    if period and abs(JEDEC_INTERVALS[nearest] - period) > 0.05 * JEDEC_INTERVALS[nearest]:
        nearest = f"none within 5 % ({nearest} is {JEDEC_INTERVALS[nearest] / 1000:.2f} µs)"
    medians = [r.median_cycles * 1e9 / r.tsc_hz for r in rounds]
    return ProbeResult(
        rounds=rounds,
        period_ns=period,
        strength=strength,
        median_ns=float(numpy.median(medians)) if medians else 0.0,
        slow_loads=sum(len(r.slow_ns) for r in rounds),
        loads=sum(r.samples for r in rounds),
        stall_median_ns=float(numpy.median(excess)) if excess else 0.0,
        stall_p90_ns=float(numpy.percentile(excess, 90)) if excess else 0.0,
        nearest=nearest,
        limits=limits,
        peaks=strongest_peaks([r.slow_ns for r in rounds]),
        no_period=no_period,
    )


def limits() -> list[str]:
    from memtint.linux.hypervisor import detect_hypervisor

    out = [
        "one cache line's rank only: other ranks' refreshes stall it only through the channel they share",
        "interrupts, other programs and the core's own prefetch and power states add slow loads",
        "a stall is tRFC at most (a load may arrive mid-refresh), plus the row it must reopen",
        "hiding refresh needs control of the memory controller's refresh timing, which Linux does not give: "
        "Colored Refresh and its server stay in simulation (docs/refresh.md)",
    ]
    evidence = detect_hypervisor()
    if evidence:
        out.insert(0, f"virtual machine ({evidence}): the host's memory controller and other guests are invisible "
                      "and may add stalls of their own")
    return out


def check_arguments(rounds: int, samples: int, factor: float) -> None:
    """The probe's settings, checked before anything is shown or measured."""
    if platform.machine() not in ("x86_64", "AMD64"):
        raise LinuxError(f"the refresh probe needs x86-64 (clflush and rdtscp); this machine is {platform.machine()}")
    if rounds < 1:
        raise LinuxError(f"--rounds must be at least 1, got {rounds}")
    if not 10_000 <= samples <= 1_000_000_000:
        raise LinuxError(f"--samples must be between 10000 and 1000000000, got {samples}")
    if not 1.0 < factor < 100.0:
        raise LinuxError(f"--threshold must be above 1 and below 100 (a multiple of the median load), got {factor}")


def probe(rounds: int, samples: int, factor: float, advance: Callable[[], None] = lambda: None) -> ProbeResult:
    check_arguments(rounds, samples, factor)
    out = []
    for _ in range(rounds):
        out.append(run_round(samples, factor))
        advance()
    return analyse(out, limits())


def plot(result: ProbeResult, path: str) -> None:
    """Latency histogram and periodogram, as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    hz = result.rounds[0].tsc_hz
    merged: dict[int, int] = {}
    for r in result.rounds:
        for b, c in r.histogram.items():
            merged[b] = merged.get(b, 0) + c
    bins = sorted(merged)
    left.bar([b * 1e9 / hz for b in bins], [merged[b] for b in bins], width=10 * 1e9 / hz, label="loads")
    # The threshold the slow loads (the table's count, the periodogram's events) are over.
    for i, ns in enumerate(sorted({round(r.threshold_cycles * 1e9 / r.tsc_hz) for r in result.rounds})):
        left.axvline(ns, color="tab:orange", linestyle="--", linewidth=1,
                     label=None if i else f"slow-load threshold ({result.slow_loads:,} loads over it)")
    left.set_yscale("log")
    left.set_xlabel("load latency (ns)")
    left.set_ylabel("loads")
    left.set_title(f"{result.loads:,} DRAM loads")
    left.legend(fontsize=8)
    candidates = numpy.arange(500.0, 20000.0, 5.0)
    power = periodogram(intervals([r.slow_ns for r in result.rounds]), candidates)
    right.plot(candidates / 1000, power, label="gaps between slow loads")
    for i, ns in enumerate(JEDEC_INTERVALS.values()):
        right.axvline(ns / 1000, color="grey", linestyle=":", linewidth=1.2, zorder=3,
                      label=None if i else "JEDEC tREFI, /2, /4")
    found = f"period {result.period_ns / 1000:.3f} µs" if result.period_ns else "no period found"
    if result.period_ns:  # under the JEDEC lines, which stay visible where it falls on one
        right.axvline(result.period_ns / 1000, color="red", linewidth=1.5, label=f"found: {found}")
    right.set_xlabel("candidate period (µs)")
    right.set_ylabel("gaps that are whole periods (mean cos)")
    right.set_title(found)
    right.legend(fontsize=8)
    fig.tight_layout()
    save_figure(fig, path, "--plot", dpi=110, format=os.path.splitext(path)[1].lstrip(".").lower())
    plt.close(fig)
