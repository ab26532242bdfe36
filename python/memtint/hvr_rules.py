"""HVR's rules (multipolicy-hvr.md §3.5): which partitioning policy a workload gets from the
classes of its programs, and which programs share (coalesce) a colour set.

A rules file is TOML. ``[[partition]]`` rules are tried in order and the first whose ``when``
holds picks the policy; ``[[coalesce]]`` rules group the programs of the classes they name.
The paper's R1-R6 are ``configs/rules/hvr-paper.toml``; ``memtint mine-rules`` writes mined
ones in the same format::

    default = "bank-only"            # a class vector no rule covers (with a warning)

    [[partition]]
    name = "R1"
    when = { LLCT = ">=1", not_LLCT = ">=1" }   # counts: n, ">=n", "<=n"; also programs,
    policy = { 4 = "a-vp", 8 = "c-vp" }          # multithreaded = true/false
    support = 0.371                              # optional: share of workloads it covers
    confidence = 0.944                           # optional: how often its policy was best
    reason = "isolate the thrasher"

    [[coalesce]]
    name = "R5"
    classes = ["LLCH", "LLCM"]
    share = 0.125                # optional: this group's share of the colours (default: even)

``policy`` is a policy name or a table from program count to name: the entry for the smallest
count at or above the workload's, else the largest. A rule no mix can reach (counts no mix has,
or every mix it holds for taken by earlier rules) is refused, as a mistake in the file. Coalescing applies to the policies that
partition the LLC (it shares a cache quota; the paper's R2 keeps the LLC shared anyway): each group gets one colour set, the others one each; groups with a ``share`` take that
share of the colours (at least one), the rest split what is left evenly.
"""

from __future__ import annotations

import itertools
import math
import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from memtint.api import MemtintError
from memtint.toml_files import read_toml

CLASSES = ("LLCT", "LLCH", "LLCM", "CCF")
#: The paper's rules, shipped with memtint.
PAPER_RULES = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", "configs", "rules",
                                            "hvr-paper.toml"))
#: Policies whose colours partition the LLC: coalescing (sharing a cache quota) applies to them.
CACHE_COLOURING = ("cache-only", "a-vp", "b-vp", "c-vp")

_COUNT = re.compile(r"^\s*(>=|<=|==)?\s*(\d+)\s*$")


class RulesError(MemtintError):
    """A rules file that does not parse; the message names the file, the rule and the key."""


@dataclass(frozen=True)
class Condition:
    key: str  # a class, not_<class>, programs, multithreaded
    op: str  # ">=", "<=", "=="
    value: int

    def holds(self, counts: dict[str, int]) -> bool:
        n = counts[self.key]
        return {">=": n >= self.value, "<=": n <= self.value, "==": n == self.value}[self.op]

    def text(self) -> str:
        return f"{self.key} {self.op} {self.value}" if self.op != "==" else f"{self.key} = {self.value}"


@dataclass
class PartitionRule:
    name: str
    when: list[Condition]
    policy: dict[int, str]  # program count -> policy; {0: p} for any count
    support: float | None = None
    confidence: float | None = None
    reason: str = ""

    def matches(self, counts: dict[str, int]) -> bool:
        return all(c.holds(counts) for c in self.when)

    def policy_for(self, programs: int) -> str:
        keys = sorted(self.policy)
        return self.policy[next((k for k in keys if k >= programs), keys[-1])]


@dataclass
class CoalesceRule:
    name: str
    classes: list[str]
    share: float | None = None
    support: float | None = None
    confidence: float | None = None
    reason: str = ""


@dataclass
class Rules:
    path: str
    partition: list[PartitionRule]
    coalesce: list[CoalesceRule] = field(default_factory=list)
    default: str | None = None


@dataclass
class Advice:
    """A workload's policy, the rule that chose it, and its coalescing."""

    policy: str
    rule: str | None  # None: no rule covers the class vector (the default applied)
    reason: str
    support: float | None
    confidence: float | None
    groups: list[list[int]]  # programs sharing one colour set (indices), coalescing rules applied
    group_rules: list[str | None]  # per group: the coalescing rule that formed it
    shares: list[float | None]
    warnings: list[str]


def class_counts(classes: Sequence[str], multithreaded: bool = False) -> dict[str, int]:
    """The counts rules test: per class, per ``not_<class>``, ``programs``, ``multithreaded``."""
    counts = {c: sum(1 for x in classes if x == c) for c in CLASSES}
    counts.update({f"not_{c}": len(classes) - counts[c] for c in CLASSES})
    counts["programs"] = len(classes)
    counts["multithreaded"] = int(multithreaded)
    return counts


def vector_text(classes: Sequence[str]) -> str:
    """A class vector as counts: ``2 LLCT, 1 LLCH, 1 CCF``."""
    return ", ".join(f"{n} {c}" for c in CLASSES if (n := sum(1 for x in classes if x == c)))


def load(path: str | os.PathLike[str] | None = None) -> Rules:
    """The rules of ``path`` (default: the paper's), checked, policies against the engine's."""
    from memtint import api

    name = os.fspath(path or PAPER_RULES)
    table, text = read_toml(name, "rules file")
    known = frozenset(p["name"] for p in api.presets()["placement_policy_info"])
    return parse(table, name, text, known)


def parse(table: dict[str, Any], name: str, text: str = "", policies: frozenset[str] | None = None) -> Rules:
    """``table`` (a rules file's) checked; ``policies``, when given, the names a rule may pick."""
    def where(section: str, i: int, key: str | None = None) -> str:
        line = _line_of(text, section, i, key)
        rules_of = table.get(section)
        rule = rules_of[i] if isinstance(rules_of, list) and i < len(rules_of) else None
        label = rule.get("name") if isinstance(rule, dict) else None
        named = f" ({label})" if isinstance(label, str) and label else ""
        return f"{name}{f':{line}' if line else ''}: [[{section}]] #{i + 1}{named}{f' {key}' if key else ''}"

    unknown = sorted(set(table) - {"default", "partition", "coalesce"})
    if unknown:
        line = _top_line(text, unknown[0])
        raise RulesError(f"{name}{f':{line}' if line else ''}: unknown key(s) {', '.join(unknown)}; a rules file has "
                         "default, [[partition]] and [[coalesce]]")
    def policy_name(value: Any, at: str) -> str:
        if not isinstance(value, str) or not value:
            raise RulesError(f"{at}: give a policy name, got {value!r}")
        if policies is not None and value not in policies:
            raise RulesError(f"{at}: unknown placement policy {value!r}; known: {', '.join(sorted(policies))}")
        return value

    default = table.get("default")
    if default is not None:
        line = _top_line(text, "default")
        policy_name(default, f"{name}{f':{line}' if line else ''}: default")
    partition_rules = table.get("partition", [])
    if not isinstance(partition_rules, list) or not partition_rules:
        raise RulesError(f"{name}: give at least one [[partition]] rule")
    rules = Rules(name, [], [], default)
    for i, r in enumerate(partition_rules):
        if not isinstance(r, dict):
            raise RulesError(f"{where('partition', i)}: must be a table")
        _only(r, {"name", "when", "policy", "support", "confidence", "reason"}, where("partition", i),
              lambda k: where("partition", i, k))
        when = r.get("when", {})
        if not isinstance(when, dict):
            raise RulesError(f"{where('partition', i, 'when')}: must be a table of counts, got {when!r}")
        conditions = [_condition(k, v, where("partition", i, f"when.{k}")) for k, v in when.items()]
        policy = r.get("policy")
        if isinstance(policy, str) and policy:
            by_count = {0: policy_name(policy, where("partition", i, "policy"))}
        elif isinstance(policy, dict) and policy:
            by_count = {}
            for k, v in policy.items():
                if not (str(k).isdigit() and int(k) > 0 and isinstance(v, str) and v):
                    raise RulesError(f"{where('partition', i, 'policy')}: keys are program counts and values policy "
                                     f"names, got {k!r} = {v!r}")
                by_count[int(k)] = policy_name(v, where("partition", i, f"policy.{k}"))
        else:
            got = "nothing (the key is missing)" if policy is None else repr(policy)
            raise RulesError(f"{where('partition', i, 'policy')}: give a policy name or a table of program count "
                             f"-> policy, got {got}")
        label = _text(r, "name", where("partition", i, "name"), f"partition {i + 1}")
        at = where("partition", i, "when" if "when" in r else None)
        if not _possible(conditions):
            raise RulesError(f"{at}: no mix has these counts ({', '.join(c.text() for c in conditions)}), so the "
                             "rule never applies")
        for j, earlier in enumerate(rules.partition):
            if _implies(conditions, earlier.when):
                raise RulesError(f"{at}: never applies: every mix it holds for is taken first by [[partition]] #{j + 1} "
                                 f"({earlier.name}), whose conditions "
                                 f"({', '.join(c.text() for c in earlier.when) or 'none'}) it implies; remove it, or "
                                 f"put it before #{j + 1} when it is the narrower")
        taken = _taken_by(conditions, rules.partition)
        if taken:
            raise RulesError(f"{at}: never applies: every mix it holds for is taken first by "
                             + " or ".join(f"[[partition]] #{j + 1} ({rules.partition[j].name})" for j in taken)
                             + f"; remove it, or put it before {'them' if len(taken) > 1 else 'that rule'} when it is the narrower")
        rules.partition.append(PartitionRule(
            label, conditions, by_count,
            _fraction(r, "support", where("partition", i, "support")),
            _fraction(r, "confidence", where("partition", i, "confidence")),
            _text(r, "reason", where("partition", i, "reason"), "")))
    for i, r in enumerate(table.get("coalesce", [])):
        if not isinstance(r, dict):
            raise RulesError(f"{where('coalesce', i)}: must be a table")
        _only(r, {"name", "classes", "share", "support", "confidence", "reason"}, where("coalesce", i),
              lambda k: where("coalesce", i, k))
        classes = r.get("classes")
        if not (isinstance(classes, list) and classes and all(c in CLASSES for c in classes)):
            raise RulesError(f"{where('coalesce', i, 'classes')}: give a list of classes from {', '.join(CLASSES)}, "
                             f"got {classes!r}")
        taken = [c for c in classes for other in rules.coalesce if c in other.classes]
        if taken:
            raise RulesError(f"{where('coalesce', i, 'classes')}: {taken[0]} is already in a coalescing group")
        share = _fraction(r, "share", where("coalesce", i, "share"))
        if share == 0.0:
            raise RulesError(f"{where('coalesce', i, 'share')}: must be above 0")
        rules.coalesce.append(CoalesceRule(_text(r, "name", where("coalesce", i, "name"), f"coalesce {i + 1}"),
                                           list(classes), share,
                                           _fraction(r, "support", where("coalesce", i, "support")),
                                           _fraction(r, "confidence", where("coalesce", i, "confidence")),
                                           _text(r, "reason", where("coalesce", i, "reason"), "")))
    return rules


def _only(r: dict[str, Any], keys: set[str], at: str, line_of: Callable[[str], str] | None = None) -> None:
    """Refuse keys outside ``keys``; ``line_of(key)``, when given, places the first at its own line."""
    unknown = sorted(set(r) - keys)
    if unknown:
        if line_of:
            at = line_of(unknown[0])
        raise RulesError(f"{at}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(keys))}")


def _condition(key: str, value: Any, at: str) -> Condition:
    known = {*CLASSES, *(f"not_{c}" for c in CLASSES), "programs", "multithreaded"}
    if key not in known:
        raise RulesError(f"{at}: unknown count; use one of {', '.join(sorted(known))}")
    if key == "multithreaded":
        if not isinstance(value, bool):
            raise RulesError(f"{at}: must be true or false, got {value!r}")
        return Condition(key, "==", int(value))
    if isinstance(value, bool):
        raise RulesError(f"{at}: must be a count (n, \">=n\" or \"<=n\"), got {value!r}")
    if isinstance(value, int) and value >= 0:
        return Condition(key, "==", value)
    m = _COUNT.match(value) if isinstance(value, str) else None
    if not m:
        raise RulesError(f"{at}: must be a count (n, \">=n\" or \"<=n\"), got {value!r}")
    return Condition(key, m.group(1) or "==", int(m.group(2)))


def _text(r: dict[str, Any], key: str, at: str, default: str) -> str:
    """``r[key]`` as text: a name shows where the advice names its rule, so it is not empty."""
    v = r.get(key, default)
    if not isinstance(v, str) or (key == "name" and not v.strip()):
        raise RulesError(f"{at}: must be {'a non-empty' if key == 'name' else 'a'} string, got {v!r}")
    return v


def _bounds(conditions: Sequence[Condition], key: str) -> tuple[int, float]:
    """The values of ``key`` that ``conditions`` allow, as an interval (no condition: 0 and up)."""
    lo, hi = 0, math.inf
    for c in conditions:
        if c.key == key:
            lo = max(lo, c.value if c.op in (">=", "==") else 0)
            hi = min(hi, c.value if c.op in ("<=", "==") else math.inf)
    return lo, hi


def _possible(conditions: Sequence[Condition]) -> bool:
    """Whether some mix of one program or more has counts meeting every condition. Per program
    count P each class count lies in an interval (its own conditions and its not_ one's, P - n);
    a mix exists when the intervals meet and their sums bracket P. Past the sum of the
    conditions' values nothing changes with P, so the counts up to it (and one more) decide."""
    mt_lo, mt_hi = _bounds(conditions, "multithreaded")
    if mt_lo > min(mt_hi, 1):
        return False
    p_lo, p_hi = _bounds(conditions, "programs")
    last = sum(c.value for c in conditions) + 1
    for p in [*range(1, min(last, 1024) + 1), last]:
        if not p_lo <= p <= p_hi:
            continue
        lows, highs = [], []
        for c in CLASSES:
            lo, hi = _bounds(conditions, c)
            not_lo, not_hi = _bounds(conditions, f"not_{c}")
            lows.append(max(lo, p - not_hi, 0))
            highs.append(min(hi, p - not_lo, p))
        if all(a <= b for a, b in zip(lows, highs)) and sum(lows) <= p <= sum(highs):
            return True
    return False


def _implies(conditions: Sequence[Condition], earlier: Sequence[Condition]) -> bool:
    """Whether ``conditions`` imply ``earlier``'s key by key (each of its keys' intervals inside
    the earlier one's): the earlier rule then takes every mix. A duplicate rule is the plainest case."""
    keys = {c.key for c in earlier}
    return all(_bounds(earlier, k)[0] <= _bounds(conditions, k)[0] and
               _bounds(conditions, k)[1] <= _bounds(earlier, k)[1] for k in keys)


#: Class vectors enumerated to find a rule that earlier ones leave no mix: counts up to the
#: largest value a condition names, plus one, decide every condition (a count above them all
#: meets the same conditions as one just above), so the enumeration is exact below this size.
_EXACT_VECTORS = 60_000


def _taken_by(conditions: Sequence[Condition], earlier: Sequence[PartitionRule]) -> list[int]:
    """The earlier rules (indices) that together take every mix ``conditions`` hold for; [] when
    some mix is left to them, or when the counts are too large to enumerate."""
    if not earlier:
        return []
    top = max((c.value for r in [*earlier, PartitionRule("", list(conditions), {})] for c in r.when), default=0) + 1
    if 2 * (top + 1) ** len(CLASSES) > _EXACT_VECTORS:
        return []
    taken: set[int] = set()
    for vector in itertools.product(range(top + 1), repeat=len(CLASSES)):
        if not any(vector):
            continue
        total = sum(vector)
        counts = {**dict(zip(CLASSES, vector)), **{f"not_{c}": total - n for c, n in zip(CLASSES, vector)},
                  "programs": total}
        for multithreaded in (0, 1):
            counts["multithreaded"] = multithreaded
            if not all(c.holds(counts) for c in conditions):
                continue
            first = next((j for j, r in enumerate(earlier) if r.matches(counts)), None)
            if first is None:
                return []
            taken.add(first)
    return sorted(taken)


def _fraction(r: dict[str, Any], key: str, at: str) -> float | None:
    v = r.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not (0.0 <= v <= 1.0) or math.isnan(v):
        raise RulesError(f"{at}: must be a fraction between 0 and 1, got {v!r}")
    return float(v)


def _top_line(text: str, key: str) -> int | None:
    """The line of top-level ``key`` in ``text`` (before any table)."""
    for n, line in enumerate(text.splitlines()):
        if line.lstrip().startswith("["):
            return None
        if re.match(rf"\s*{re.escape(key)}\s*=", line):
            return n + 1
    return None


def _line_of(text: str, section: str, index: int, key: str | None) -> int | None:
    """The line of ``[[section]]`` number ``index`` (or of ``key`` in it) in ``text``."""
    lines = text.splitlines()
    starts = [n for n, line in enumerate(lines) if line.strip() == f"[[{section}]]"]
    if index >= len(starts):
        return None
    start = starts[index]
    if key:
        top = key.split(".")[0]
        for n in range(start + 1, len(lines)):
            if lines[n].lstrip().startswith("[["):
                break
            if re.match(rf"\s*{re.escape(top)}\s*=", lines[n]):
                return n + 1
    return start + 1


def decide(rules: Rules, classes: Sequence[str], multithreaded: bool = False) -> Advice:
    """The policy and coalescing ``rules`` give a workload of programs of ``classes``."""
    counts = class_counts(classes, multithreaded)
    warnings = []
    rule = next((r for r in rules.partition if r.matches(counts)), None)
    if rule is not None:
        policy = rule.policy_for(len(classes))
        reason = rule.reason or " and ".join(c.text() for c in rule.when) or "it has no condition: every mix matches"
    else:
        policy = rules.default or "buddy"
        reason = f"no rule covers it; {'the rules file' if rules.default else 'memtint'}'s default"
        warnings.append(f"the class vector ({vector_text(classes)}{', multi-threaded' if multithreaded else ''}) is "
                        f"not covered by the rules in {rules.path}; using {policy}")
    groups, group_rules, shares = coalesce(rules, classes, policy)
    return Advice(policy, rule.name if rule else None, reason, rule.support if rule else None,
                  rule.confidence if rule else None, groups, group_rules, shares, warnings)


def coalesce(rules: Rules, classes: Sequence[str], policy: str) -> tuple[list[list[int]], list[str | None], list[float | None]]:
    """Programs grouped to share colour sets: one group per coalescing rule with members, each
    other program alone; none for a policy that does not colour."""
    if policy not in CACHE_COLOURING:
        return [[i] for i in range(len(classes))], [None] * len(classes), [None] * len(classes)
    groups, names, shares = [], [], []
    placed: set[int] = set()
    for r in rules.coalesce:
        members = [i for i, c in enumerate(classes) if c in r.classes]
        if members:
            groups.append(members)
            names.append(r.name)
            shares.append(r.share)
            placed.update(members)
    for i in range(len(classes)):
        if i not in placed:
            groups.append([i])
            names.append(None)
            shares.append(None)
    # The engine's order (os/dynamic/hvr_rules.rs): groups with a share first, as colours are
    # handed out in order, then the other rules' groups, then programs alone.
    order = sorted(range(len(groups)), key=lambda g: shares[g] is None)
    return [groups[g] for g in order], [names[g] for g in order], [shares[g] for g in order]


def _round(x: float) -> int:
    """``x`` (>= 0) to the nearest integer, halves away from zero, as Rust's ``f64::round`` (Python's
    ``round`` gives 2.5 -> 2)."""
    n = math.floor(x)
    return n + 1 if x - n >= 0.5 else n


def colour_sets(groups: list[list[int]], shares: list[float | None], colours: int) -> list[list[int]] | None:
    """Colour sets for ``groups`` out of ``colours`` colours (None when there are more groups
    than colours), the engine's ``sub_sets`` (os/dynamic/hvr.rs) to the colour: a group with a
    share takes that share, rounded half up (at least one colour, and never so many that a later
    group is left none), the others split the rest evenly, remainders to the first of them.
    Groups with a share come first (:func:`coalesce`'s order, the engine's)."""
    if any(a is None and b is not None for a, b in zip(shares, shares[1:])):
        raise ValueError(f"groups with a share come first (coalesce's order), got shares {shares}")
    if len(groups) > colours:
        return None
    g = len(groups)
    sizes: list[int | None] = []
    reserved = 0
    for i, s in enumerate(shares):
        if s is None:
            sizes.append(None)
            continue
        room = colours - reserved - (g - 1 - i)  # one colour for each later group
        sizes.append(min(max(1, _round(s * colours)), room))
        reserved += sizes[-1]
    free = sum(1 for x in sizes if x is None)
    taken = sum(x for x in sizes if x is not None)
    left = max(colours - taken, free)
    k = 0
    for i, x in enumerate(sizes):
        if x is None:
            sizes[i] = left // free + (1 if k < left % free else 0)
            k += 1
    if not free:
        sizes[0] = (sizes[0] or 0) + max(colours - taken, 0)  # every group has a share: the first takes what is left
    out, nxt = [], 0
    for size in sizes:
        out.append(list(range(nxt, min(nxt + (size or 0), colours))) or [colours - 1])
        nxt += size or 0
    return out


def os_options(advice: Advice, colours: int) -> dict[str, Any] | None:
    """The ``[os]`` settings that coalesce as ``advice`` says on a policy of ``colours`` colours
    (None: each program its own set, the policy's even split)."""
    if all(len(g) == 1 for g in advice.groups) and all(s is None for s in advice.shares):
        return None
    sets = colour_sets(advice.groups, advice.shares, colours)
    if sets is None:
        return None
    programs = sum(len(g) for g in advice.groups)
    group_of = [0] * programs
    for g, members in enumerate(advice.groups):
        for i in members:
            group_of[i] = g
    return {"colours": sets, "groups": group_of}
