"""HVR (multipolicy-hvr.md): A-VP and the best vertical policy against Cache-Only and Bank-Only,
on seeded random 4-program (i7-860) and 8-program (i7-860-8t) mixes from the whole pool."""

from __future__ import annotations

from typing import Any

import functools
import math
import statistics

from memtint import advisor, hvr_rules, rule_mining
from memtint.reproduce import common
from memtint.reproduce.common import MixExperiment, Row, Settings, Variant

NAME = "hvr"
TITLE = "HVR: going vertical in memory management (Liu et al., ISCA 2014)"

#: 8-program mixes run half the instructions per core of 4-program ones (the same per run), for time.
SIZES = {"full": {"instructions": 10_000_000, "mixes4": 8, "mixes8": 3, "instructions8": 5_000_000,
                  "rule_mixes": 220, "rule_instructions": 3_000_000},
         "quick": {"instructions": 200_000, "mixes4": 2, "mixes8": 1, "instructions8": 100_000,
                   "rule_mixes": 16, "rule_instructions": 200_000}}
#: Intel RDT beside HVR's colouring (no paper figure): CAT's LLC ways split evenly, alone and with
#: Bank-Only's bank colours (A-VP's partition with the LLC's half done by hardware), and MBA.
HARDWARE = [Variant("cat", "buddy", os={"resctrl": ["cat"]}),
            Variant("cat+bank-only", "bank-only", os={"resctrl": ["cat"]}),
            Variant("mba", "buddy", os={"resctrl": ["mba"], "mba": {"percent": [30] * 4}})]
#: HVR online (os/dynamic/hvr.rs): classes and R1-R6 each epoch, quotas for the pages placed from
#: then on (its default; docs/advisor.md has what moving resident pages costs at this time scale).
#: Beside it, the paper's lazy migration (§4.3): resident pages moved when next touched, a fault
#: and a copy on the touching thread; its overhead is the paper's §7.4 figure.
HVR_ONLINE = [Variant("hvr-online", "hvr", os={"dynamic": "hvr-online"}),
              Variant("hvr-online-lazy", "hvr", os={"dynamic": "hvr-online", "hvr-online": {"recolour": True},
                                                      "recolour": {"mode": "lazy"}})]
#: Seeds of the lazy variant. Its runs last many times as long in simulated time as the others (a
#: thread stalled for the pages it moves, the other programs simulated on beside it until it
#: reaches its target; the report measures the ratio), and its overhead is a cost per page moved.
LAZY_SEEDS = 1
#: CAT with UCP choosing the ways (Qureshi and Patt; os.cat.allocation = "ucp").
CAT_UCP = Variant("cat-ucp", "buddy", os={"resctrl": ["cat"], "cat": {"allocation": "ucp"}})
#: The rule study's candidates: the policies HVR's 4-program rules choose among, and the baseline.
RULE_POLICIES = ["buddy", "cache-only", "bank-only", "a-vp"]
#: The mined rules are measured by cross-validation over this many folds: each mix judged by rules
#: mined from the others, so all the study's mixes (at least 200 when full) measure both the paper's
#: rules and the mined ones.
FOLDS = 2
#: The rule study's own measures (`_rule_row`); any other claim on the study's mixes is a mix claim
#: on them (the VP figures' Quadrant I: the paper's random workloads where both horizontal help).
RULE_STUDY_METRICS = {"rules_accuracy", "rules_ws_loss", "rule_confidence", "cache_hurts_share"}
#: A paper rule covering fewer of the study's mixes than this has no confidence to compare.
MIN_RULE_MIXES = 10


class Experiment:
    name = NAME
    title = TITLE

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        size = SIZES["quick" if settings.quick else "full"]
        self.instructions = settings.instructions(size["instructions"])
        horizontal = [Variant("buddy", "buddy"), Variant("cache-only", "cache-only"), Variant("bank-only", "bank-only")]
        # HVR's random workloads mix every class (LLCT/LLCH/LLCM/CCF): the whole pool, seeded.
        self.four = MixExperiment("mixes-4", ["i7-860"],
                                  common.draw_mixes(common.ALL, 4, size["mixes4"], settings.mix_seed + 4),
                                  horizontal + [Variant("a-vp", "a-vp"), HVR_ONLINE[0]] + HARDWARE + [CAT_UCP],
                                  self.instructions, "buddy",
                                  settings.mix_seed + 4)
        self.eight = MixExperiment("mixes-8", ["i7-860-8t"],
                                   common.draw_mixes(common.ALL, 8, size["mixes8"], settings.mix_seed + 8, replace=True),
                                   # HVR's 8-core Bank-Only is (2,0,1): B-bits 21-22 + O-bit 15 (§2.3)
                                   horizontal[:2] + [Variant("bank-only", "bank-only-8"), Variant("b-vp", "b-vp"),
                                                     Variant("c-vp", "c-vp")],
                                   settings.instructions(size["instructions8"]), "buddy", settings.mix_seed + 8)
        # Lazy migration on the same mixes, one seed (LAZY_SEEDS says why); its buddy and hvr-online
        # runs are the 4-program experiment's own (the same specifications run once).
        self.lazy = MixExperiment("lazy", ["i7-860"], self.four.mixes, [horizontal[0]] + HVR_ONLINE,
                                  self.instructions, "buddy", settings.mix_seed + 4,
                                  seeds=settings.seed_list()[:LAZY_SEEDS])
        # HVR's rule study: random 4-program mixes, one seed each (the spread is over mixes).
        self.rules = MixExperiment("rules", ["i7-860"],
                                   common.draw_mixes(common.ALL, 4, size["rule_mixes"], settings.mix_seed + 14,
                                                     replace=True),
                                   [Variant(p, p) for p in RULE_POLICIES],
                                   settings.instructions(size["rule_instructions"]), "buddy", settings.mix_seed + 14,
                                   seeds=[settings.seed_list()[0]])

    def describe(self) -> list[str]:
        return [f"4 programs: {len(self.four.mixes)} mixes drawn from the whole pool ({', '.join(common.ALL)}) with "
                f"random.Random({self.four.mix_seed}) on the i7-860; buddy, cache-only, bank-only, a-vp; hvr-online (HVR's "
                "classes and rules R1-R6 every 1 ms epoch over the (2, 3, 2) colour space, a class in force once measured "
                "3 epochs in a row; its quotas for pages placed from then on, resident pages staying where they are, so "
                "nothing is copied; accessed-bit sampling is not charged); hvr-online-lazy, the same with resident pages "
                "moved lazily as the paper does (os.hvr-online.recolour = true, os.recolour.mode = \"lazy\": a page in a "
                "colour its process no longer owns is copied when a load next touches it, a 1 µs fault and a 3 µs copy on "
                f"that thread), on the same mixes with {'one seed' if LAZY_SEEDS == 1 else f'{LAZY_SEEDS} seeds'} (the "
                "notes say why); and Intel RDT beside them: CAT (os.resctrl = [\"cat\"], the LLC's ways split evenly) under buddy and with "
                "bank-only's colours, CAT with UCP choosing the ways (os.cat.allocation = \"ucp\"), and MBA capping each "
                "program at 30 % of peak bandwidth.",
                f"8 programs: {len(self.eight.mixes)} mixes drawn with replacement, random.Random({self.eight.mix_seed}), on "
                "i7-860-8t (8 cores standing for the 8 hardware threads); buddy, cache-only, bank-only-8 (HVR's 8-core "
                "Bank-Only, (2,0,1)), b-vp, c-vp.",
                f"{self.instructions:,} instructions per core with 4 programs, {self.eight.instructions:,} with 8 (as "
                "many per run); alone runs under buddy.",
                f"Rules (§3.3-3.5): {len(self.rules.mixes)} random 4-program mixes drawn with replacement, "
                f"random.Random({self.rules.mix_seed}), {self.rules.instructions:,} instructions per core, one seed, under "
                f"{', '.join(RULE_POLICIES)}. Each program's HVR class comes from its alone run with accessed-bit "
                "sampling (os/llc_class.rs, docs/advisor.md). Identical draws count once. The paper's R1-R3 are "
                "measured on every mix (none was used to make them); rules are mined from all of them "
                f"(memtint.rule_mining) and measured by {FOLDS}-fold cross-validation: a seeded hash splits the mixes "
                "into folds, and each mix is judged by the rules mined from the other folds.",
                "Population: the paper's Fig. 3 has 214 random 4- and 8-program workloads, and its VP figures (Fig. 11-12) "
                "the 50 of them where both horizontal policies help (Quadrant I). Here the 4-program VP claims use the "
                f"rule study's {len(self.rules.mixes)} random mixes where both help, as the paper does (shorter runs "
                f"and one seed: {self.rules.instructions:,} instructions per core), and the 8-program ones the drawn "
                "8-program mixes where both help, far fewer than the paper's, for time (each row has its count)."]

    def mix_experiments(self) -> list[MixExperiment]:
        return [self.four, self.eight, self.lazy, self.rules]

    def plan(self) -> list[dict[str, Any]]:
        return [j for e in self.mix_experiments() for j in e.plan(self.settings)]

    def analyse(self, claims: list[dict[str, Any]], results: dict[str, Any]) -> dict[str, Any]:
        rows = []
        for c in claims:
            if c["metric"] in RULE_STUDY_METRICS:
                rows.append(self._rule_row(c, results))
                continue
            exp = {e.name: e for e in self.mix_experiments()}[c["experiment"]]
            rows.append(common.measure_mix_claim(exp, results, c, self.settings))
        tables = [
            common.programs_table("i7-860", self.settings, self.instructions),
            ("4-program mixes (i7-860): mean ± sd over seeds", ["mix", "policy", "WS", "WS vs buddy %", "MS",
                                                                "row-buffer miss rate"],
             common.mix_table(self.four, results, self.settings, "i7-860")),
            ("8-program mixes (i7-860-8t): mean ± sd over seeds", ["mix", "policy", "WS", "WS vs buddy %", "MS",
                                                                   "row-buffer miss rate"],
             common.mix_table(self.eight, results, self.settings, "i7-860-8t")),
            (f"4-program mixes with lazy migration (i7-860): {self._seeds_text()}",
             ["mix", "policy", "WS", "WS vs buddy %", "MS", "row-buffer miss rate"],
             common.mix_table(self.lazy, results, self.settings, "i7-860")),
        ]
        tables += self._rule_tables(results)
        return {"rows": rows, "tables": tables, "plots": [],
                "notes": [common.run_facts([self.four, self.eight, self.rules], results), self._lazy_length(results)]}

    def _seeds_text(self) -> str:
        n = len(self.lazy.seed_list(self.settings))
        return "one seed" if n == 1 else f"mean ± sd over {n} seeds"

    def _lazy_length(self, results: dict[str, Any]) -> str:
        """How much longer the lazy runs last than HVR online's, measured: why they run fewer seeds."""
        seed = self.lazy.seed_list(self.settings)[0]
        runs = [self.lazy.runs(results, "i7-860", m, seed) for m in range(len(self.lazy.mixes))]
        ratios = [r["hvr-online-lazy"]["simulated_ns"] / r["hvr-online"]["simulated_ns"] for r in runs
                  if r["hvr-online"].get("simulated_ns")]
        if not ratios:
            return ""
        seeds = len(self.lazy.seed_list(self.settings))
        return (f"hvr-online-lazy runs {'one seed' if seeds == 1 else f'{seeds} seeds'} (the other 4-program variants "
                f"{len(self.four.seed_list(self.settings))}): a thread stalls for the pages it moves while the other "
                f"programs run on, so its runs last {statistics.median(ratios):.1f}x HVR online's in simulated time "
                f"(median over the mixes; {min(ratios):.1f}x-{max(ratios):.1f}x), each simulated in detail.")

    # --- the rule study ------------------------------------------------------------------------

    @functools.lru_cache(maxsize=None)
    def _classes(self) -> dict[str, advisor.ProgramClass]:
        return {n: advisor.classify(common.program_path(n), "i7-860", warmup=self.settings.warmup)
                for n in sorted(set(p for mix in self.rules.mixes for p in mix))}

    def _records(self, results: dict[str, Any]) -> list[rule_mining.MixRecord]:
        classes = self._classes()
        seed = self.rules.seeds[0]
        out: dict[str, rule_mining.MixRecord] = {}
        for m, mix in enumerate(self.rules.mixes):
            key = "|".join(mix)
            if key in out or any(classes[p].hvr_class is None for p in mix):
                continue
            runs = self.rules.runs(results, "i7-860", m, seed)
            out[key] = rule_mining.MixRecord(key, list(mix), [classes[p].hvr_class for p in mix],
                                             {p: runs[p]["ws"] for p in RULE_POLICIES})
        return list(out.values())

    def _study(self, results: dict[str, Any]) -> dict[str, Any]:
        recs = self._records(results)
        mined, leaves = rule_mining.mine(recs, RULE_POLICIES)
        paper = hvr_rules.load()
        return {"records": recs, "mined": mined, "leaves": leaves, "paper": paper,
                "measured": {"paper": rule_mining.evaluate(paper, recs),
                             "mined": rule_mining.cross_validate(recs, RULE_POLICIES, FOLDS, self.rules.mix_seed)}}

    def _rule_row(self, c: dict[str, Any], results: dict[str, Any]) -> Row:
        st = self._study(results)
        metric = c["metric"]
        detail, na = "", ""
        if metric in ("rules_accuracy", "rules_ws_loss"):
            which = c.get("rules", "paper")
            m = st["measured"][which]
            value = m["accuracy"] if metric == "rules_accuracy" else m["mean_loss_pct"]
            n = m["judged"]
            low, high = _wilson(m["accuracy"], n)
            fixed = {p: rule_mining.fixed_policy(p, st["records"])["accuracy"] for p in RULE_POLICIES}
            always = max(fixed, key=fixed.get)
            detail = (f"{n} mixes; pick is best {m['accuracy']:.1%} (95 % interval {low:.1%}-{high:.1%}), "
                      f"within 1 % of best {m['within_1pct']:.1%}; WS lost against the best {m['mean_loss_pct']:.2f} % "
                      f"on average, {m['worst_loss_pct']:.2f} % at worst; always {always}: {fixed[always]:.1%}")
            others = "half" if FOLDS == 2 else f"{FOLDS - 1} folds"
            population = (f"{n} random 4-program mixes, none used to make the paper's rules" if which == "paper" else
                          f"{n} random 4-program mixes, each judged by rules mined from the other {others} "
                          f"({FOLDS}-fold cross-validation)")
        elif metric == "rule_confidence":
            rule = next(r for r in st["paper"].partition if r.name == c["rule"])
            before = st["paper"].partition[:st["paper"].partition.index(rule)]
            covered = [r for r in st["records"] if rule.matches(hvr_rules.class_counts(r.classes))
                       and not any(b.matches(hvr_rules.class_counts(r.classes)) for b in before)]
            policy = rule.policy_for(4)
            hits = sum(1 for r in covered if r.best() == policy)
            value = hits / len(covered) if covered else float("nan")
            wins = {p: sum(1 for r in covered if r.best() == p) for p in RULE_POLICIES}
            detail = (f"{len(covered)} mixes ({len(covered) / max(1, len(st['records'])):.1%} support; paper "
                      f"{rule.support:.1%}); best there: " + ", ".join(f"{p} {w}" for p, w in
                                                                  sorted(wins.items(), key=lambda x: -x[1])))
            population = (f"the study's mixes that {rule.name} decides: {len(covered)} of its {len(st['records'])} "
                          "distinct mixes")
            if len(covered) < MIN_RULE_MIXES:
                na = f"{rule.name} covers {len(covered)} of the study's mixes (fewer than {MIN_RULE_MIXES})"
        elif metric == "cache_hurts_share":
            obs = rule_mining.coalescing_observations(st["records"])[0]
            value, n = obs["hurts_share"], obs["mixes"]
            detail = f"{n} mixes; cache-only against buddy {obs['mean_gain_pct']:+.2f} % on average"
            population = "the study's mixes with no LLCT and some LLCH or LLCM"
            if n < MIN_RULE_MIXES:
                na = f"{n} such mixes (fewer than {MIN_RULE_MIXES})"
        else:
            raise ValueError(f"unknown rule-study metric {metric!r}")
        row = Row(c, "", [value])
        row.detail = detail
        row.population = population
        row.not_applicable = na
        base = [self.rules.runs(results, "i7-860", m, self.rules.seeds[0])["buddy"] for m in range(len(self.rules.mixes))]
        row.dram_pki, effect_na = common.effect("the buddy runs of the study's mixes", base)
        row.not_applicable = row.not_applicable or effect_na
        return row

    def _rule_tables(self, results: dict[str, Any]) -> list[tuple[str, list[str], list[list[str]]]]:
        st = self._study(results)
        classes = self._classes()
        programs = [[n, c.hvr_class or "-", f"{c.llc_mpki:.2f}", c.reason] for n, c in classes.items()]
        leaves = [[r["leaf"], r["paper_rule"] or "-", str(r["mixes"]), f"{r['support']:.1%}", r.get("policy", "-"),
                   f"{r['confidence']:.0%}" if "confidence" in r else "-",
                   f"{r['runner_up']} ({r['runner_up_confidence']:.0%})" if r.get("runner_up") else "-"]
                  for r in st["leaves"]]
        measured = []
        for name, m in (("paper R1-R3", st["measured"]["paper"]),
                        (f"mined ({FOLDS}-fold cross-validated)", st["measured"]["mined"])):
            measured.append([name, f"{m['accuracy']:.1%}", f"{m['within_1pct']:.1%}", f"{m['mean_loss_pct']:.2f}",
                             f"{m['worst_loss_pct']:.2f}", str(m["uncovered"])])
        for p in RULE_POLICIES:
            m = rule_mining.fixed_policy(p, st["records"])
            measured.append([f"always {p}", f"{m['accuracy']:.1%}", f"{m['within_1pct']:.1%}",
                             f"{m['mean_loss_pct']:.2f}", f"{m['worst_loss_pct']:.2f}", "-"])
        coalescing = [[o["group"], str(o["mixes"]), f"{o['mean_gain_pct']:+.2f}", f"{o['hurts_share']:.0%}"]
                      for o in rule_mining.coalescing_observations(st["records"])]
        return [
            ("Rule study: each program's HVR class (alone, accessed-bit sampling)",
             ["program", "class", "LLC MPKI alone", "why"], programs),
            (f"Rule study: rules mined from all {len(st['records'])} mixes in the paper's decision order",
             ["leaf", "paper's rule", "mixes", "support", "best policy", "confidence", "runner-up"], leaves),
            (f"Rule study: measured on {len(st['records'])} mixes (the mined rules by {FOLDS}-fold cross-validation)",
             ["rules", "pick is best", "within 1 % of best", "WS lost, mean %", "worst %", "uncovered mixes"], measured),
            ("Rule study: cache-only partitioning against buddy by class mix (the coalescing evidence, §3.5)",
             ["mixes", "count", "cache-only vs buddy, mean %", "share hurt"], coalescing),
        ]


def _wilson(p: float, n: int) -> tuple[float, float]:
    """The 95 % Wilson interval of a proportion ``p`` over ``n`` trials."""
    if not n or math.isnan(p):
        return float("nan"), float("nan")
    z = 1.96
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half
