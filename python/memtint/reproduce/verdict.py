"""The verdict rule of `memtint reproduce` (stated in configs/reproductions/README.md and in every
generated report).

``change`` claims (a signed relative change in %, or a difference in points): the paper's value
``p``, ours ``m`` (mean over seeds), tolerance ``t = max(tolerance_rel * |p|, tolerance_abs)``:

- ``|m - p| <= t``: **reproduced**;
- otherwise, ``m`` and ``p`` have the same sign: **partial** (direction agrees, magnitude off);
- otherwise (opposite sign, or zero): **not reproduced**.

``at_least`` / ``at_most`` claims (a bound): met -> reproduced; missed by at most
``tolerance_abs`` -> partial; otherwise not reproduced. ``info`` claims have no paper figure and
get no verdict.
"""

from __future__ import annotations

import math
from typing import Any

REPRODUCED = "reproduced"
PARTIAL = "partial"
NOT_REPRODUCED = "not reproduced"
NO_FIGURE = "no paper figure"

DEFAULT_TOLERANCE_REL = 0.5
DEFAULT_TOLERANCE_ABS = 1.0

RULE = (
    "change claims: |ours - paper| <= max(tolerance_rel x |paper|, tolerance_abs) -> reproduced; "
    "outside that but the same sign -> partial; opposite sign or zero -> not reproduced. "
    "Bounds (at least / at most): met -> reproduced; missed by at most tolerance_abs -> partial; "
    "otherwise not reproduced. Ours is the mean over seeds; defaults tolerance_rel 0.5, tolerance_abs 1.0."
)


def tolerance(claim: dict[str, Any]) -> float:
    """The magnitude tolerance of a ``change`` claim, or the slack of a bound."""
    if claim.get("kind") in ("at_least", "at_most"):
        return float(claim.get("tolerance_abs", DEFAULT_TOLERANCE_ABS))
    rel = float(claim.get("tolerance_rel", DEFAULT_TOLERANCE_REL))
    return max(rel * abs(float(claim["value"])), float(claim.get("tolerance_abs", DEFAULT_TOLERANCE_ABS)))


def verdict(claim: dict[str, Any], ours: float) -> str:
    """The verdict for ``claim`` (a table from configs/reproductions/*.toml) given our mean."""
    kind = claim.get("kind", "change")
    if kind == "info":
        return NO_FIGURE
    if ours is None or (isinstance(ours, float) and math.isnan(ours)):
        return NOT_REPRODUCED
    value = float(claim["value"])
    t = tolerance(claim)
    if kind == "change":
        if abs(ours - value) <= t:
            return REPRODUCED
        if ours * value > 0:
            return PARTIAL
        return NOT_REPRODUCED
    if kind == "at_least":
        if ours >= value:
            return REPRODUCED
        return PARTIAL if ours >= value - t else NOT_REPRODUCED
    if kind == "at_most":
        if ours <= value:
            return REPRODUCED
        return PARTIAL if ours <= value + t else NOT_REPRODUCED
    raise ValueError(f"unknown claim kind {kind!r}")


def is_miss(v: str) -> bool:
    return v in (PARTIAL, NOT_REPRODUCED)
