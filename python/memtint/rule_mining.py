"""Rule mining as HVR did (multipolicy-hvr.md §3.4): from a sweep's result store, each mix's
class vector (each program classified alone, :mod:`memtint.advisor`) and the weighted speedup of
each policy; association rules "classes present -> policy best" with their support (the share of
workloads the condition covers) and confidence (how often the policy was best there).

The mined rules file keeps the paper's decision order, so its rules compare one to one with R1-R3:
a mix with a thrasher and others (R1's condition), thrashers only, cache-hungry and no thrasher
(R2), middle and neither (R3), all core-cache-fitting (no paper rule). Each leaf gets the policy
best most often among its training mixes. The mixes are split into training and held-out halves
by a seeded hash of each mix (:func:`split`), or into k folds for cross-validation
(:func:`cross_validate`: each mix judged by rules mined from the other folds, so every mix measures
and none is judged by rules mined from it).
"""

from __future__ import annotations

import hashlib
import itertools
import statistics
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from memtint import hvr_rules

#: The decision order's leaves: name, condition (hvr_rules counts), the paper's rule there.
LEAVES = [
    ("thrasher with others", {"LLCT": ">=1", "not_LLCT": ">=1"}, "R1"),
    ("thrashers only", {"not_LLCT": 0}, None),
    ("cache-hungry, no thrasher", {"LLCT": 0, "LLCH": ">=1"}, "R2"),
    ("middle only", {"LLCT": 0, "LLCH": 0, "LLCM": ">=1"}, "R3"),
    ("core-cache-fitting only", {"not_CCF": 0}, None),
]


@dataclass
class MixRecord:
    mix: str
    programs: list[str]
    classes: list[str]
    ws: dict[str, float]  # policy -> weighted speedup (mean over seeds)

    def best(self) -> str:
        return max(self.ws, key=lambda p: self.ws[p])

    def is_best(self, policy: str) -> bool:
        """Whether ``policy`` is best here: its WS equals the best (a tie makes each tied policy best)."""
        return policy in self.ws and self.ws[policy] == max(self.ws.values())


def variant_bases(machines: Iterable[str], policies: Iterable[str]) -> dict[tuple[str, str], str]:
    """(machine, policy) -> the machine a sweep paired it with: a product sweep runs a policy that
    needs a machine variant (bpm-plus: page-channel) on the variant (i7-860 -> i7-860-bpm-plus),
    so that run belongs with the base machine's runs of the mix. Only machines in ``machines``
    count as bases; a ``policy+scheduler`` label pairs by its policy."""
    from memtint.sweep.spec import SweepSpecError, variant_machine

    machines = list(dict.fromkeys(machines))
    out: dict[tuple[str, str], str] = {}
    for policy in dict.fromkeys(policies):
        for base in machines:
            try:
                on = variant_machine(base, policy)
            except SweepSpecError:  # a variant that does not resolve: the sweep would have refused it
                continue
            if on != base and on in machines:
                out.setdefault((on, policy), base)
    return out


def setups(frame: Any) -> list[dict[str, str]]:
    """Each run's setup beside its machine, mix, policy and seed (the settings ``memtint report``
    never pools: length, ``[os]``, the alone runs' policy, sampling, the ``setup`` column). A
    ``policy+scheduler`` label's own scheduler is part of the policy, not of the setup."""
    from memtint.sweep.store import setup_beside_policy

    out = []
    for _, r in frame.iterrows():
        setup = r.get("setup") if isinstance(r.get("setup"), str) else ""
        out.append({
            "instructions": str(r.get("instructions")), "os": str(r.get("os") or "{}"),
            "baseline": str(r.get("baseline")), "sampled": str(bool(r.get("sampled"))),
            "setup": setup_beside_policy(str(r["policy"]), setup) or "not recorded"})
    return out


def runs(frame: Any, base_of: dict[tuple[str, str], str] | None = None) -> Any:
    """A result store's successful runs, one row each, ``_machine`` the machine its mix is
    compared on: a run on a machine variant counts as its base machine's (``base_of``, default
    :func:`variant_bases`). A store of several setups (length, warm-up, ``[os]``, overrides,
    alone runs' policy, sampling) is refused: their speedups are different experiments. Runs of
    files since changed are left out (:func:`memtint.sweep.store.stale_versions`), counted in
    ``attrs["stale"]``."""
    from memtint.api import MemtintError
    from memtint.sweep.store import stale_versions

    every = frame.drop_duplicates("config_hash" if "config_hash" in frame.columns else ["machine", "mix", "policy", "seed"])
    # Runs that read files since changed (memtint report leaves them out too): attrs["stale"].
    stale = stale_versions(every, [c for c in ("machine", "mix", "policy", "seed", "instructions", "os", "baseline",
                                               "sampled", "setup", "memtint_version") if c in every.columns])
    every = every[[not x for x in stale]]
    ok = every[every["status"] == "ok"] if "status" in every else every
    ok = ok.copy()  # one row per run, not per core
    ok.attrs["stale"] = sum(stale)
    if base_of is None:
        base_of = variant_bases(ok["machine"].astype(str), ok["policy"].astype(str))
    ok["_machine"] = [base_of.get((str(m), str(p)), str(m)) for m, p in zip(ok["machine"], ok["policy"])]
    each = setups(ok)
    distinct = list({repr(sorted(d.items())): d for d in each}.values())
    if len(distinct) > 1:
        differ = [k for k in distinct[0] if len({d[k] for d in distinct}) > 1]
        named = "; ".join(", ".join(f"{k}={d[k]}" for k in differ) for d in distinct)
        raise MemtintError(f"the results hold runs of {len(distinct)} setups ({named}): their weighted "
                           "speedups are different experiments; mine rules from a store of one setup (sweep each "
                           "setup into its own --out; memtint report shows them apart)")
    for (machine, mix), rows in ok.groupby(["_machine", "mix"], sort=True):
        twice = rows.groupby("policy")["machine"].nunique()
        if (twice > 1).any():
            raise MemtintError(f"mix {mix} on {machine}: policy {twice[twice > 1].index[0]} ran on several machines "
                               f"({', '.join(sorted(map(str, rows['machine'].unique())))}) that pair with "
                               f"{machine}; mine rules from a store with one machine per policy")
    return ok


def records(frame: Any, classify: Callable[[str, str], str],
            base_of: dict[tuple[str, str], str] | None = None) -> list[MixRecord]:
    """One record per (machine, mix) of a result store's successful runs (:func:`runs`; a frame
    it returned is taken as it is), with every policy's weighted speedup, the mean over seeds;
    ``classify(program, machine)`` gives a program's class."""
    ok = frame if "_machine" in frame.columns else runs(frame, base_of)
    out = []
    for (machine, mix), rows in ok.groupby(["_machine", "mix"], sort=True):
        programs = [p for p in str(mix).split("|")]
        per_policy = rows.groupby("policy")["weighted_speedup"].mean()
        out.append(MixRecord(str(mix), programs, [classify(p, str(machine)) for p in programs],
                             {str(p): float(v) for p, v in per_policy.items()}))
    return out


def split(recs: Sequence[MixRecord], holdout: float, seed: int) -> tuple[list[MixRecord], list[MixRecord]]:
    """(training, held out): the mixes in the order of a seeded hash of each; the first
    ``round(holdout x n)`` are held out. Depends on the mixes, not on their order."""
    def key(r: MixRecord) -> bytes:
        return hashlib.sha256(f"{seed}:{r.mix}".encode()).digest()

    ordered = sorted(recs, key=key)
    cut = round(holdout * len(ordered))
    held = {id(r) for r in ordered[:cut]}
    return [r for r in recs if id(r) not in held], [r for r in recs if id(r) in held]


def _matches(when: dict[str, Any], r: MixRecord) -> bool:
    conditions = [hvr_rules._condition(k, v, "leaf") for k, v in when.items()]
    counts = hvr_rules.class_counts(r.classes)
    return all(c.holds(counts) for c in conditions)


def rule_policies(policies: Sequence[str]) -> tuple[list[str], list[str]]:
    """(``policies`` a rules file can name, the others): a rules file names placement policies;
    a sweep's ``policy+scheduler`` entries (bank-only+tcm) also set the controller's scheduler,
    which no rule can."""
    from memtint import api

    known = {p["name"] for p in api.presets()["placement_policy_info"]}
    return [p for p in policies if p in known], [p for p in policies if p not in known]


def mine(train: Sequence[MixRecord], policies: Sequence[str], source: str = "mined") -> tuple[hvr_rules.Rules, list[dict[str, Any]]]:
    """Rules in the paper's decision order from ``train``, and one row per leaf (its support,
    best policy, confidence, the runner-up). Only the ``policies`` a rules file can name are
    picked (:func:`rule_policies`), so the rules always load; a policy is best in a mix when its
    weighted speedup equals the best (each of tied policies is)."""
    policies, _ = rule_policies(policies)
    if not policies:
        raise ValueError("no policy a rules file can name to mine rules for")
    n = len(train) or 1
    rules = hvr_rules.Rules(source, [], [], None)
    rows = []
    left = list(train)
    for name, when, paper in LEAVES:
        covered = [r for r in left if _matches(when, r)]
        left = [r for r in left if not _matches(when, r)]
        wins = {p: sum(1 for r in covered if r.is_best(p)) for p in policies}
        ranked = sorted(policies, key=lambda p: (-wins[p], list(policies).index(p)))
        row = {"leaf": name, "paper_rule": paper, "mixes": len(covered), "support": len(covered) / n}
        if covered:
            best = ranked[0]
            row.update(policy=best, confidence=wins[best] / len(covered),
                       runner_up=ranked[1] if len(ranked) > 1 else None,
                       runner_up_confidence=wins[ranked[1]] / len(covered) if len(ranked) > 1 else None)
            rules.partition.append(hvr_rules.PartitionRule(
                f"M{len(rules.partition) + 1}", [hvr_rules._condition(k, v, "leaf") for k, v in when.items()],
                {0: best}, round(len(covered) / n, 4), round(wins[best] / len(covered), 4),
                f"{name}: {best} was best in {wins[best]} of {len(covered)} training mixes"))
        rows.append(row)
    overall = {p: sum(1 for r in train if r.is_best(p)) for p in policies}
    rules.default = max(policies, key=lambda p: overall[p]) if train else None
    return rules, rows


def association_rules(train: Sequence[MixRecord], policies: Sequence[str], min_support: float = 0.05) -> list[dict[str, Any]]:
    """Every condition "these classes present, those absent" (Apriori's itemsets over the four
    classes) with support at least ``min_support``, and its most confident policy."""
    n = len(train) or 1
    out = []
    for states in itertools.product(("any", "present", "absent"), repeat=len(hvr_rules.CLASSES)):
        when = {c: (">=1" if s == "present" else 0) for c, s in zip(hvr_rules.CLASSES, states) if s != "any"}
        if not when:
            continue
        covered = [r for r in train if _matches(when, r)]
        if len(covered) / n < min_support:
            continue
        wins = {p: sum(1 for r in covered if r.is_best(p)) for p in policies}
        best = max(policies, key=lambda p: wins[p])
        out.append({"when": when, "support": len(covered) / n, "policy": best, "confidence": wins[best] / len(covered)})
    out.sort(key=lambda r: (-r["confidence"], -r["support"]))
    return out


def folds(recs: Sequence[MixRecord], k: int, seed: int) -> list[list[MixRecord]]:
    """``k`` folds of about equal size, by the seeded hash of each mix (as :func:`split`)."""
    if k < 2:
        raise ValueError(f"cross-validation needs at least 2 folds, got {k}")
    ordered = sorted(recs, key=lambda r: hashlib.sha256(f"{seed}:{r.mix}".encode()).digest())
    return [ordered[i::k] for i in range(k)]


def cross_validate(recs: Sequence[MixRecord], policies: Sequence[str], k: int, seed: int) -> dict[str, Any]:
    """``evaluate`` of mined rules by k-fold cross-validation: each mix is judged by the rules
    mined from the other folds, so every mix is held out once and all of them measure."""
    parts = folds(recs, k, seed)
    pairs = []
    for i, held in enumerate(parts):
        rules, _ = mine([r for j, f in enumerate(parts) if j != i for r in f], policies)
        pairs += [(hvr_rules.decide(rules, r.classes), r) for r in held]
    return _summary(pairs)


def evaluate(rules: hvr_rules.Rules, test: Iterable[MixRecord]) -> dict[str, Any]:
    """How ``rules`` do on ``test``: how often the pick is the best measured policy, and the
    weighted speedup it loses against the best (mean and worst, %); mixes whose pick was not
    measured are counted apart."""
    return _summary([(hvr_rules.decide(rules, r.classes), r) for r in test])


def _summary(pairs: Iterable[tuple[Any, MixRecord]]) -> dict[str, Any]:
    """``evaluate``'s figures over (advice, mix) pairs."""
    hits, losses, unmeasured, uncovered, n = 0, [], 0, 0, 0
    per_rule: dict[str, list[int]] = {}
    for advice, r in pairs:
        n += 1
        uncovered += advice.rule is None
        if advice.policy not in r.ws:
            unmeasured += 1
            continue
        best = r.best()
        hit = r.is_best(advice.policy)  # a pick tied with the best is best
        hits += hit
        losses.append(100.0 * (1.0 - r.ws[advice.policy] / r.ws[best]))
        per_rule.setdefault(advice.rule or "default", []).append(int(hit))
    judged = n - unmeasured
    return {
        "mixes": n,
        "judged": judged,
        "accuracy": hits / judged if judged else float("nan"),
        "mean_loss_pct": statistics.fmean(losses) if losses else float("nan"),
        "worst_loss_pct": max(losses) if losses else float("nan"),
        "within_1pct": sum(1 for x in losses if x <= 1.0) / judged if judged else float("nan"),
        "unmeasured": unmeasured,
        "uncovered": uncovered,
        "per_rule": {k: {"mixes": len(v), "confidence": sum(v) / len(v)} for k, v in per_rule.items()},
    }


def fixed_policy(policy: str, test: Iterable[MixRecord]) -> dict[str, Any]:
    """``evaluate`` for always picking ``policy``: what a rule set must beat."""
    rules = hvr_rules.Rules(f"always {policy}", [hvr_rules.PartitionRule("always", [], {0: policy})])
    return evaluate(rules, test)


def to_toml(rules: hvr_rules.Rules, header: str = "") -> str:
    """``rules`` as a rules file (hvr_rules's format)."""
    lines = [f"# {line}" if line else "#" for line in header.splitlines()]
    if rules.default:
        lines += [f'default = "{rules.default}"', ""]
    for r in rules.partition:
        when = ", ".join(f'{c.key} = {c.value}' if c.op == "==" else f'{c.key} = "{c.op}{c.value}"' for c in r.when)
        lines += ["[[partition]]", f'name = "{r.name}"', f"when = {{ {when} }}"]
        if len(r.policy) == 1 and 0 in r.policy:
            lines.append(f'policy = "{r.policy[0]}"')
        else:
            lines.append("policy = { " + ", ".join(f'{k} = "{v}"' for k, v in sorted(r.policy.items())) + " }")
        for key in ("support", "confidence"):
            if getattr(r, key) is not None:
                lines.append(f"{key} = {getattr(r, key)}")
        if r.reason:
            lines.append(f'reason = "{r.reason}"')
        lines.append("")
    for c in rules.coalesce:
        lines += ["[[coalesce]]", f'name = "{c.name}"', "classes = [" + ", ".join(f'"{x}"' for x in c.classes) + "]"]
        if c.share is not None:
            lines.append(f"share = {c.share}")
        lines.append("")
    return "\n".join(lines)


def coalescing_observations(recs: Iterable[MixRecord], baseline: str = "buddy",
                            cache_policy: str = "cache-only") -> list[dict[str, Any]]:
    """The paper's coalescing evidence (§3.5): the gain of cache-only partitioning over the
    baseline by class-count tuple (n LLCT, m LLCH, p LLCM, q CCF) group."""
    groups = {
        "no LLCT, some LLCH or LLCM (paper: cache partitioning hurts)": lambda c: c["LLCT"] == 0 and c["LLCH"] + c["LLCM"] > 0,
        "LLCT only (paper: gain under 1 %)": lambda c: c["not_LLCT"] == 0,
        "CCF only (paper: no visible effect)": lambda c: c["not_CCF"] == 0,
        "LLCT with others": lambda c: c["LLCT"] > 0 and c["not_LLCT"] > 0,
    }
    out = []
    recs = [r for r in recs if baseline in r.ws and cache_policy in r.ws]
    for name, test in groups.items():
        gains = [100.0 * (r.ws[cache_policy] / r.ws[baseline] - 1.0) for r in recs if test(hvr_rules.class_counts(r.classes))]
        out.append({"group": name, "mixes": len(gains),
                    "mean_gain_pct": statistics.fmean(gains) if gains else float("nan"),
                    "hurts_share": sum(1 for g in gains if g < 0) / len(gains) if gains else float("nan")})
    return out
