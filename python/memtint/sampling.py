"""Intervals of a sampled comparison's metrics (docs/sampling.md).

A sampled run (``sampling`` in its spec) reports each core's units' cycles and instructions
(``cores[i].sampling.unit_cycles``, ``unit_instructions``); its IPC estimate is their
instructions over their cycles. A mix's metrics combine the shared run's
and the alone runs' estimates, so their intervals come from the delta method (first-order
propagation of the estimates' variances and covariances): the units of one shared run are
co-scheduled (``unit_segments`` says which units ran in the same detailed segment), so their
covariance over those units enters; a shared run and the alone runs are independent samples. A detailed alone run
contributes no variance.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

#: The normal quantile of a two-sided 95 % interval.
Z95 = 1.959963984540054

#: Sampling settings ``memtint compare --sample`` and sweeps' ``--sample`` use when given no
#: other: the engine's defaults, 100 periods of units of 20 000 instructions, each after 30 000
#: of detailed warm-up (docs/sampling.md).
DEFAULT_SAMPLING: dict[str, Any] = {"mode": "periodic", "unit": 20_000, "warming": 30_000}

#: The engine's defaults (multicore/sampling.rs; tests/python/test_sampling.py checks they agree).
ENGINE_UNIT, ENGINE_WARMING, ENGINE_UNITS = 20_000, 30_000, 100


def engine_sampling(sampling: dict[str, Any] | None) -> tuple[dict[str, Any] | None, bool]:
    """A comparison's sampling table as the engine takes it (without ``matched``, which is the
    comparison's: its policies replay one schedule), and whether the policies are matched
    (default true in periodic mode; docs/sampling.md, "Matched units")."""
    if sampling is None:
        return None, False
    table = dict(sampling)
    matched = table.pop("matched", True)
    if not isinstance(matched, bool):
        from memtint.api import MemtintError

        raise MemtintError(f"sampling.matched: expected true or false, got {matched!r}")
    return table, matched and table.get("mode", "periodic") == "periodic"


def period(sampling: dict[str, Any], instructions: int) -> int:
    """The period a sampled run of ``instructions`` per core uses: ``sampling.period``, else
    instructions / 100 but at least a unit and its warm-up (the engine's rule)."""
    unit, warming = int(sampling.get("unit", ENGINE_UNIT)), int(sampling.get("warming", ENGINE_WARMING))
    return int(sampling.get("period") or max(instructions // ENGINE_UNITS, unit + warming))


def misfit(sampling: dict[str, Any], instructions: int) -> str | None:
    """Why the engine would refuse ``sampling`` for runs of ``instructions`` per core, with the
    key and value named as the engine names them; None when it fits."""
    unit, warming = int(sampling.get("unit", ENGINE_UNIT)), int(sampling.get("warming", ENGINE_WARMING))
    p = period(sampling, instructions)
    if unit > instructions:
        return f"sampling.unit: {unit} instructions is longer than the run (instructions = {instructions})"
    if p < unit + warming:
        return (f"sampling.period: {p} instructions is shorter than a unit and its detailed warm-up "
                f"(unit {unit} + warming {warming} = {unit + warming})")
    if instructions // p < 2:
        return (f"sampling.period: {p} instructions leaves {instructions // p} unit(s) in instructions = "
                f"{instructions}; an interval needs at least 2")
    functional = sampling.get("functional")
    if functional is not None and int(functional) > p - unit - warming:
        return (f"sampling.functional: {functional} instructions is longer than the gap between units "
                f"(period {p} - unit {unit} - warming {warming} = {p - unit - warming})")
    return None


def units(sampling: dict[str, Any], instructions: int) -> int:
    """Periods in a sampled run of ``instructions`` per core; 0 when the engine would refuse the
    settings for that length (a unit longer than the run, a period shorter than a unit and its
    warm-up, fewer than two periods)."""
    unit, warming = int(sampling.get("unit", ENGINE_UNIT)), int(sampling.get("warming", ENGINE_WARMING))
    p = period(sampling, instructions)
    if unit > instructions or p < unit + warming:
        return 0
    n = instructions // p
    return n if n >= 2 else 0


def detailed_instructions(sampling: dict[str, Any] | None, instructions: int) -> int:
    """Instructions per core that a run of ``instructions`` simulates in detail: all of them, or,
    sampled, its periods' units and their detailed warm-ups (the rest is warmed functionally, at
    a tenth of the cost or less). Settings the engine refuses count as detailed. What the time
    estimates price (memtint.limits, the reproduction's progress)."""
    if not sampling or instructions <= 0:
        return instructions
    periods = units(sampling, instructions)
    if not periods:
        return instructions
    inside = periods * (int(sampling.get("unit", ENGINE_UNIT)) + int(sampling.get("warming", ENGINE_WARMING)))
    return min(instructions, inside)


def _mean(x: Sequence[float]) -> float:
    return sum(x) / len(x)


def _cov(x: Sequence[float], y: Sequence[float]) -> float:
    """Sample covariance over the first min(len) entries (0 with fewer than two)."""
    n = min(len(x), len(y))
    if n < 2:
        return 0.0
    mx, my = _mean(x[:n]), _mean(y[:n])
    return sum((a - mx) * (b - my) for a, b in zip(x[:n], y[:n])) / (n - 1)


class _CpiEstimates:
    """Each core's CPI estimate (the engine's ``cpi_mean``: its units' CPIs weighted by the
    instructions each stands for, ``unit_weights``, corrected by a regression on loads per
    instruction when the engine used one) and the covariances of those estimates, from each
    unit's linearised residual (w CPI - R w) / mean w with R the weighted mean CPI (a ratio
    estimator's, Cochran §6.4; with equal weights, the unit CPI less the mean)."""

    def __init__(self, cores: list[dict[str, Any]]) -> None:
        self.mean, self.units, self.segments = [], [], []
        #: Per core: the variance of a stratified (phases) estimate, else None.
        self.stratified: list[float | None] = []
        #: Per core: whether its spread is unknown: a sampled core with fewer than two units, units
        #: of one CPI, or a phases run with no phase of two (the engine's interval is unbounded,
        #: ``[0, null]``).
        self.unknown_cores: list[bool] = []
        for c in cores:
            s = c.get("sampling") or {}
            units = s.get("units")
            if units is None:
                units = len(s.get("unit_cycles") or s.get("unit_cpi") or [])
            self.unknown_cores.append(bool(s) and (units < 2 or s.get("cpi_stddev", 0.0) is None))
            self.segments.append(s.get("unit_segments"))
            self.stratified.append(_stratified_variance(s) if s.get("strata_weights") else None)
            cycles, instructions = s.get("unit_cycles"), s.get("unit_instructions")
            if self.stratified[-1] is not None:  # phases: the engine's stratified estimate
                self.mean.append(1.0 / c["ipc"])
                self.units.append([])
            elif cycles and instructions:
                # Each unit's CPI expanded to the instructions it stands for (its period).
                weights = s.get("unit_weights") or instructions
                y = [w * c / i for w, c, i in zip(weights, cycles, instructions)]
                r = sum(y) / sum(weights)
                xbar = sum(weights) / len(weights)
                # The engine's estimate (its regression on loads per instruction, when it used
                # one: ``estimator``); the spread is the ratio estimator's, as the engine's.
                self.mean.append(s.get("cpi_mean") or r)
                self.units.append([(a - r * w) / xbar for a, w in zip(y, weights)])
            elif s.get("unit_cpi"):
                self.mean.append(_mean(s["unit_cpi"]))
                self.units.append(list(s["unit_cpi"]))
            else:  # a detailed run
                self.mean.append(1.0 / c["ipc"])
                self.units.append([])

    @property
    def unknown(self) -> bool:
        """Whether any core's spread is unknown."""
        return any(self.unknown_cores)

    def cov(self, c: int, d: int) -> float:
        if self.stratified[c] is not None or self.stratified[d] is not None:
            # A phases run has one program: its own variance, independent of any other run.
            return (self.stratified[c] or 0.0) if c == d else 0.0
        uc, ud = self.units[c], self.units[d]
        if not uc or not ud:
            return 0.0  # a detailed run: no sampling variance
        # Units co-vary through the segment they ran in together (``unit_segments``; by index
        # for runs that do not report it).
        sc, sd = self.segments[c], self.segments[d]
        if sc is not None and sd is not None:
            at = {s: i for i, s in enumerate(sd)}
            pairs = [(uc[i], ud[at[s]]) for i, s in enumerate(sc) if s in at]
            xs, ys = [p[0] for p in pairs], [p[1] for p in pairs]
        else:
            common = min(len(uc), len(ud))
            xs, ys = uc[:common], ud[:common]
        return _cov(xs, ys) * len(xs) / (len(uc) * len(ud))


def _stratified_variance(s: dict[str, Any]) -> float:
    """The variance of a phases run's CPI estimate, as the engine reports it
    (multicore/phase_sampling.rs: ``cpi_stddev`` over the square root of ``units`` is the
    stratified estimate's standard error)."""
    if s.get("cpi_stddev") is None:  # no phase with two units: no spread (``unknown``)
        return float("inf")
    return s["cpi_stddev"] ** 2 / s["units"] if s.get("units") else 0.0


def _check_mix(alone: Any, **runs: Any) -> None:
    """Refuse what the intervals cannot be of: a core per program on every side. A shorter
    side was zipped away silently (an interval over some of the programs)."""
    from memtint.api import MemtintError

    if not isinstance(alone, (list, tuple)) or not alone:
        raise MemtintError(f"alone: expected the alone runs' cores (one per program), got {str(alone)[:200]}")
    for i, core in enumerate(alone):
        if not isinstance(core, dict) or not isinstance(core.get("ipc"), (int, float)):
            whole = isinstance(core, dict) and "cores" in core
            raise MemtintError(f"alone[{i}]: expected a core's statistics (with its ipc), got "
                               + ("a whole run: give its cores[0]" if whole else str(core)[:200]))
    for name, run in runs.items():
        cores = run.get("cores") if isinstance(run, dict) else None
        if not isinstance(cores, list):
            raise MemtintError(f"{name}: expected a run (a dict with its cores, as run_sim returns it), got "
                               f"{str(run)[:200]}")
        if len(cores) != len(alone):
            raise MemtintError(f"{name}: {len(cores)} cores and {len(alone)} alone runs: the intervals are of one "
                               "mix, each program with its alone run")
        for i, core in enumerate(cores):
            if not isinstance(core, dict) or not isinstance(core.get("ipc"), (int, float)):
                raise MemtintError(f"{name}.cores[{i}]: expected a core's statistics (with its ipc), got "
                                   f"{str(core)[:200]}")


def is_sampled(run: dict[str, Any]) -> bool:
    return bool(run.get("sampling"))


def mix_intervals(alone: list[dict[str, Any]], shared: dict[str, Any]) -> dict[str, Any]:
    """95 % intervals of weighted speedup, harmonic speedup, maximum slowdown and each program's
    slowdown, from the alone runs' cores and the shared run (either may be detailed)."""
    _check_mix(alone, shared=shared)
    s = _CpiEstimates(shared["cores"])
    a = _CpiEstimates(alone)
    n = len(alone)
    # A core of unknown spread: an unbounded interval, never a zero-width one, for every figure it
    # enters (the mix's, and its own slowdown; another program's slowdown does not use it).
    unknown = [s.unknown_cores[c] or a.unknown_cores[c] for c in range(n)]
    S, A = s.mean, a.mean
    # A core whose shared run is its alone run (one program under the alone runs' policy): one
    # simulation, so its ratio is exactly 1 and adds no error, rather than two independent ones.
    def unit_cpi(core: dict[str, Any]) -> list[float] | None:
        return (core.get("sampling") or {}).get("unit_cpi")

    one = [unit_cpi(shared["cores"][c]) is not None and unit_cpi(shared["cores"][c]) == unit_cpi(alone[c])
           for c in range(n)]

    def variance(grad_s: list[float], grad_a: list[float]) -> float:
        # Only the cores the figure depends on: another core's unknown (infinite) spread is not its.
        v = sum(grad_s[c] * grad_s[d] * s.cov(c, d) for c in range(n) for d in range(n)
                if not one[c] and not one[d] and grad_s[c] and grad_s[d])
        return v + sum(grad_a[c] ** 2 * a.cov(c, c) for c in range(n) if not one[c] and grad_a[c])

    def interval(value: float, var: float, cores: Sequence[int] = range(n)) -> list[float | None]:
        if any(unknown[c] for c in cores):
            return [None, None]
        h = Z95 * math.sqrt(max(var, 0.0))
        return [value - h, value + h]

    ws = sum(A[c] / S[c] for c in range(n))
    ws_var = variance([-A[c] / S[c] ** 2 for c in range(n)], [1.0 / S[c] for c in range(n)])
    d = sum(S[c] / A[c] for c in range(n))
    d_var = variance([1.0 / A[c] for c in range(n)], [-S[c] / A[c] ** 2 for c in range(n)])
    hs = n / d
    hs_var = (n / d ** 2) ** 2 * d_var
    slowdowns = []
    for c in range(n):
        gs = [1.0 / A[c] if i == c else 0.0 for i in range(n)]
        ga = [-S[c] / A[c] ** 2 if i == c else 0.0 for i in range(n)]
        slowdowns.append(interval(S[c] / A[c], variance(gs, ga), [c]))
    worst = max(range(n), key=lambda c: S[c] / A[c])
    return {
        "weighted_speedup": interval(ws, ws_var),
        "harmonic_speedup": interval(hs, hs_var),
        # The interval of the slowest program's slowdown (the maximum's own interval is wider
        # when another program's slowdown is close to it; unbounded when one is unknown).
        "maximum_slowdown": [None, None] if any(unknown) else slowdowns[worst],
        "slowdowns": slowdowns,
    }


def matched(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two sampled runs of one mix followed one schedule (one replayed the other's, or
    both a third's: ``sampling.schedule``): every core's units in the same segments, standing for
    the same instructions. Their units then start at the same instructions, or where a core had
    already run further in detail, a little later (docs/sampling.md, "Matched units")."""
    if len(a["cores"]) != len(b["cores"]):
        return False
    for x, y in zip(a["cores"], b["cores"]):
        sx, sy = x.get("sampling") or {}, y.get("sampling") or {}
        if sx.get("strata_weights") or sy.get("strata_weights"):
            return False
        for key in ("unit_segments", "unit_weights"):
            if not sx.get(key) or sx.get(key) != sy.get(key):
                return False
    return True


#: What :class:`_CpiEstimates` reads of a core's ``sampling`` (:func:`units_of`).
_UNIT_KEYS = ("units", "unit_cycles", "unit_instructions", "unit_weights", "unit_segments", "unit_cpi", "cpi_mean",
              "cpi_stddev", "strata_weights")


def units_of(run: dict[str, Any]) -> list[dict[str, Any]]:
    """What :func:`difference_intervals` reads of a run: each core's IPC and its units (a few
    kilobytes), so that a run replaying another's schedule elsewhere (a sweep's worker) can be
    given the other's units instead of its whole result."""
    return [{"ipc": c["ipc"], "sampling": {k: v for k, v in (c.get("sampling") or {}).items() if k in _UNIT_KEYS}}
            for c in run["cores"]]


def difference_intervals(alone: list[dict[str, Any]], run: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    """95 % intervals of ``run``'s weighted speedup less ``other``'s and of its relative change
    (WS_run / WS_other - 1): two runs of one mix against the same alone runs, by the delta method.
    The alone runs' errors largely cancel, both runs dividing by them; the two shared runs are
    taken as independent samples, even when :func:`matched`: the units' pairing narrows the
    interval further, but what is left between matched runs is mostly bias (the replayed
    policy runs at the schedule's relative progress), which no spread shows, and such intervals
    held the detailed change on only 87.5 % of the validation's pairs (docs/sampling.md,
    "Matched units").

    The change's interval is the difference's in units of ``other``'s weighted speedup, centred
    on the change: it holds 0 exactly when the difference's does, so a pair is resolved or not
    whichever of the two divides. (A delta-method interval of the ratio itself is, relative to
    the change, wider with the slower policy as the denominator, so it could exclude 0 one way
    round and not the other.)"""
    _check_mix(alone, run=run, other=other)
    p, q, a = _CpiEstimates(run["cores"]), _CpiEstimates(other["cores"]), _CpiEstimates(alone)
    n = len(alone)
    if p.unknown or q.unknown or a.unknown:
        return {"weighted_speedup": [None, None], "weighted_speedup_change": [None, None]}
    P, Q, A = p.mean, q.mean, a.mean

    def variance(gp: list[float], gq: list[float], ga: list[float]) -> float:
        v = sum(gp[c] * gp[d] * p.cov(c, d) + gq[c] * gq[d] * q.cov(c, d) for c in range(n) for d in range(n))
        return v + sum(ga[c] ** 2 * a.cov(c, c) for c in range(n))

    def interval(value: float, var: float) -> list[float]:
        h = Z95 * math.sqrt(max(var, 0.0))
        return [value - h, value + h]

    # d(WS_p - WS_q): -A/P^2 on the run's CPIs, +A/Q^2 on the other's, 1/P - 1/Q on the alone ones.
    gp = [-A[c] / P[c] ** 2 for c in range(n)]
    gq = [A[c] / Q[c] ** 2 for c in range(n)]
    ga = [1.0 / P[c] - 1.0 / Q[c] for c in range(n)]
    # Centred on the weighted speedups the runs report (their IPCs; the unit means above differ
    # from them in the sixth digit), so an interval's centre is the change a table shows.
    shown_p = sum(c["ipc"] / x["ipc"] for c, x in zip(run["cores"], alone))
    shown_q = sum(c["ipc"] / x["ipc"] for c, x in zip(other["cores"], alone))
    difference = interval(shown_p - shown_q, variance(gp, gq, ga))
    return {
        "weighted_speedup": difference,
        "weighted_speedup_change": [difference[0] / shown_q, difference[1] / shown_q],
    }


def traffic_half_width(core: dict[str, Any]) -> float | None:
    """The 95 % half-width of a sampled core's DRAM traffic, lines per 1000 CPU cycles
    (:func:`memtint.comparison.dram_traffic`, which a sampled run measures over its units): the
    ratio estimator's over the units' requests (``unit_row_accesses``: reads and write-backs) and
    cycles (Cochran §6.4). None for a detailed core; infinite for fewer than two units, or a
    sampled core whose units' requests were not kept."""
    s = core.get("sampling")
    if not s:
        return None
    requests, cycles = s.get("unit_row_accesses"), s.get("unit_cycles")
    if not requests or not cycles or len(requests) != len(cycles) or len(cycles) < 2 or not sum(cycles):
        return math.inf
    n = len(cycles)
    r = sum(requests) / sum(cycles)
    mean_cycles = sum(cycles) / n
    residuals = [a - r * c for a, c in zip(requests, cycles)]
    variance = sum(e * e for e in residuals) / (n - 1) / n / mean_cycles ** 2
    return 1000.0 * Z95 * math.sqrt(variance)


def mean_half_width(terms: Sequence[float | None]) -> float | None:
    """The half-width of the mean of k independent estimates with half-widths h_i:
    sqrt(sum h_i^2) / k (a term without one, None, is detailed and adds nothing); None when no
    term was sampled or the result is undefined; infinite when a term's is (a core of one unit)."""
    if not len(terms) or all(h is None for h in terms):
        return None
    h = math.sqrt(sum((x or 0.0) ** 2 for x in terms)) / len(terms)
    return None if math.isnan(h) else h


def half_width(interval: Sequence[float] | None) -> float | None:
    """Half the width of ``[low, high]``: None without an interval (a detailed figure), infinite
    for an unbounded one (``[None, None]``, a core of fewer than two units or of units of one CPI)."""
    if not interval:
        return None
    if any(not isinstance(x, (int, float)) or not math.isfinite(x) for x in interval):
        return math.inf
    return (interval[1] - interval[0]) / 2
