"""The verdict rule of `memtint reproduce` (stated in configs/reproductions/README.md and in every
generated report).

A claim whose subject has no effect to measure is **not applicable**, whatever the numbers say:
a program with no DRAM traffic cannot be sensitive to banks, and a mix without memory traffic
cannot show interference. The experiment names the reason (:data:`MIN_DRAM_PKI`).

``change`` claims (a signed relative change in %, or a difference in points): the paper's value
``p``, ours ``m`` (mean over seeds), tolerance ``t = max(tolerance_rel * |p|, tolerance_abs)``:

- ``|m - p| <= t``, ``m`` in the paper's direction (same sign; any sign when ``p`` is 0;
  for a ratio such as a speedup, on the same side of 1) and at least half the paper's effect
  (:data:`MIN_EFFECT_SHARE`, so that a tolerance as wide as a small figure cannot pass a null
  result): **reproduced**;
- ``m`` in the paper's direction but not reproduced (outside the tolerance, or less than half the
  paper's effect): **direction only**, with the ratio of the effects shown, ``(m - n) / (p - n)``
  for no change ``n`` (0, or 1 for a ratio), so that +0.6 against +4.1 (0.15x) and +7.6 against
  +1.1 (6.9x) read apart;
- otherwise (the other direction, or zero against a nonzero figure): **not reproduced**.

``at_least`` / ``at_most`` claims (a bound): met by the mean and by every seed -> reproduced; met
by the mean but not by every seed, or missed by at most ``tolerance_abs`` -> near miss; otherwise
not reproduced. A ``change`` claim whose paper figure is no change (0, or 1 for a ratio) is
reproduced within the tolerance and not reproduced outside it: it has no direction. ``info`` claims are **measured only**:
no paper figure, a figure this experiment cannot test (its source says why), or one judged in
another report; they get no verdict.

A figure of sampled runs (``memtint reproduce --sample``) has a sampling half-width ``h``: when
the verdict at ``m - h`` or ``m + h`` (every seed moved with it) differs from the one at ``m``, the
claim is **unresolved by sampling**: the sampling error alone could move it to another verdict.
So is a claim whose population, or share of mixes, changes verdict with the mixes its sampling
leaves in doubt (``Row.sampling_unsettled``, memtint.reproduce.common).
"""

from __future__ import annotations

import math
from typing import Any

REPRODUCED = "reproduced"
DIRECTION_ONLY = "direction only"
NEAR_MISS = "near miss"
NOT_REPRODUCED = "not reproduced"
NOT_APPLICABLE = "not applicable"
MEASURED_ONLY = "measured only"
UNRESOLVED = "unresolved by sampling"

#: Every verdict, in report order.
VERDICTS = (REPRODUCED, DIRECTION_ONLY, NEAR_MISS, NOT_REPRODUCED, UNRESOLVED, NOT_APPLICABLE, MEASURED_ONLY)

DEFAULT_TOLERANCE_REL = 0.5
DEFAULT_TOLERANCE_ABS = 1.0

#: A subject with fewer DRAM requests (reads and write-backs) per kilo-instruction than this has
#: no memory-system effect to measure: the papers' own line between memory-intensive and not
#: (LLC MPKI > 1, bpm.md §4), applied to what reaches DRAM.
MIN_DRAM_PKI = 1.0

#: A change claim is reproduced only with at least this share of the paper's effect (measured
#: from no change): a tolerance of 1 point around a -1 % figure would otherwise pass -0.05 %.
MIN_EFFECT_SHARE = 0.5

RULE = (
    "A claim whose subject has no effect to measure (fewer than 1 DRAM request per kilo-instruction: no DRAM "
    "traffic for banks, channels or interference to act on) is not applicable, shown apart. "
    "Change claims: |ours - paper| <= max(tolerance_rel x |paper|, tolerance_abs) and in the paper's direction (for "
    "a speedup: on the same side of 1), at least half the paper's effect, with every seed on that side -> "
    "reproduced; in the paper's direction but outside that -> direction only (ours/paper shown); the other "
    "direction, zero, or seeds on both sides (a direction the seeds do not settle) -> not reproduced; a paper figure "
    "of no change: within the tolerance -> reproduced, else not reproduced. Bounds (at least / at most): met by the "
    "mean and every seed -> reproduced; met by the mean but not every seed, or missed by at most tolerance_abs -> "
    "near miss; otherwise not reproduced. Ours is the mean over seeds; defaults tolerance_rel "
    "0.5, tolerance_abs 1.0. Measured only: shown with no verdict, because the papers give no figure, give one "
    "the experiment cannot test, or another report judges it (the row's source says which). Sampled runs "
    "(--sample): a verdict the figure's sampling interval could change at either end -> unresolved by sampling."
)


def tolerance(claim: dict[str, Any]) -> float:
    """The magnitude tolerance of a ``change`` claim, or the slack of a bound."""
    if claim.get("kind") in ("at_least", "at_most"):
        return float(claim.get("tolerance_abs", DEFAULT_TOLERANCE_ABS))
    rel = float(claim.get("tolerance_rel", DEFAULT_TOLERANCE_REL))
    return max(rel * abs(float(claim["value"])), float(claim.get("tolerance_abs", DEFAULT_TOLERANCE_ABS)))


def verdict(claim: dict[str, Any], ours: float, not_applicable: str = "", per_seed: list[float] | None = None) -> str:
    """The verdict for ``claim`` (a table from configs/reproductions/*.toml) given our mean and
    the ``per_seed`` values it is the mean of; ``not_applicable`` is the reason the subject has
    no effect to measure, if it has none."""
    kind = claim.get("kind", "change")
    if kind == "info":
        return MEASURED_ONLY
    if not_applicable:
        return NOT_APPLICABLE
    if ours is None or (isinstance(ours, float) and math.isnan(ours)):
        return NOT_REPRODUCED
    value = float(claim["value"])
    t = tolerance(claim)
    if kind == "change":
        # A ratio's "no change" is 1 (speedup), not 0: direction is measured from there.
        n = neutral(claim)
        if value == n:  # the paper saw no change: there is no direction to be right about
            return REPRODUCED if abs(ours - value) <= t else NOT_REPRODUCED
        same_direction = (ours - n) * (value - n) > 0
        if not settled(claim, per_seed):  # +0.07 from seeds of -0.07, +0.03, +0.27
            return NOT_REPRODUCED
        if same_direction and abs(ours - value) <= t and abs(ours - n) >= MIN_EFFECT_SHARE * abs(value - n):
            return REPRODUCED
        return DIRECTION_ONLY if same_direction else NOT_REPRODUCED
    if kind in ("at_least", "at_most"):
        def meets(x: float) -> bool:
            return x >= value if kind == "at_least" else x <= value

        if meets(ours):
            # 0.583 from seeds of 0.5, 0.5, 0.75 against "more than 0.5": the seeds do not settle it
            return REPRODUCED if all(meets(x) for x in _finite(per_seed)) else NEAR_MISS
        return NEAR_MISS if meets(ours + t if kind == "at_least" else ours - t) else NOT_REPRODUCED
    raise ValueError(f"unknown claim kind {kind!r}")


def sampled_verdict(claim: dict[str, Any], ours: float, not_applicable: str = "", per_seed: list[float] | None = None,
                    half_width: float | None = None) -> str:
    """:func:`verdict`, or :data:`UNRESOLVED` when the figure's sampling half-width ``half_width``
    (None: not sampled) reaches another verdict at either end of its interval."""
    v = verdict(claim, ours, not_applicable, per_seed)
    if half_width is None or v in (NOT_APPLICABLE, MEASURED_ONLY) or ours is None or math.isnan(ours):
        return v
    if not math.isfinite(half_width):
        return UNRESOLVED
    ends = [verdict(claim, ours + d, not_applicable, [x + d for x in per_seed] if per_seed is not None else None)
            for d in (-half_width, half_width)]
    return v if all(e == v for e in ends) else UNRESOLVED


#: Metrics whose "no change" is not 0: a ratio is 1 when nothing changed.
NEUTRAL = {"speedup": 1.0, "slope_ratio": 1.0, "spread_ratio": 1.0, "time_ratio": 1.0, "auto_hits_ratio": 1.0,
           "auto_latency_spread": 1.0}


def settled(claim: dict[str, Any], per_seed: list[float] | None) -> bool:
    """Every seed's value lies on the paper's side of no change (True without per-seed values)."""
    n, value = neutral(claim), float(claim["value"])
    return all((x - n) * (value - n) > 0 for x in _finite(per_seed))


def _finite(per_seed: list[float] | None) -> list[float]:
    return [x for x in per_seed or [] if x is not None and not (isinstance(x, float) and math.isnan(x))]


def neutral(claim: dict[str, Any]) -> float:
    """The value of ``claim``'s metric that means no change (0 for changes in % or points)."""
    return float(NEUTRAL.get(claim.get("metric", ""), 0.0))


def ratio(claim: dict[str, Any], ours: float) -> float | None:
    """Our effect over the paper's for a change claim, both measured from no change (ours / paper
    for a change in %; (ours - 1) / (paper - 1) for a ratio); None without a paper effect."""
    if claim.get("kind", "change") != "change" or ours is None or math.isnan(ours):
        return None
    n, value = neutral(claim), float(claim["value"])
    return (ours - n) / (value - n) if value != n else None


def is_miss(v: str) -> bool:
    return v in (DIRECTION_ONLY, NEAR_MISS, NOT_REPRODUCED)
