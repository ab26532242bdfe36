"""HVR (multipolicy-hvr.md): A-VP and the best vertical policy against Cache-Only and Bank-Only,
on seeded random 4-program (i7-860) and 8-program (i7-860-8t) mixes from the whole pool."""

from __future__ import annotations

from typing import Any

from memtint.reproduce import common
from memtint.reproduce.common import MixExperiment, Settings, Variant

NAME = "hvr"
TITLE = "HVR: going vertical in memory management (Liu et al., ISCA 2014)"

#: 8-program mixes run half the instructions per core of 4-program ones (the same per run), for time.
SIZES = {"full": {"instructions": 10_000_000, "mixes4": 8, "mixes8": 3, "instructions8": 5_000_000},
         "quick": {"instructions": 200_000, "mixes4": 2, "mixes8": 1, "instructions8": 100_000}}


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
                                  horizontal + [Variant("a-vp", "a-vp")], self.instructions, "buddy",
                                  settings.mix_seed + 4)
        self.eight = MixExperiment("mixes-8", ["i7-860-8t"],
                                   common.draw_mixes(common.ALL, 8, size["mixes8"], settings.mix_seed + 8, replace=True),
                                   # HVR's 8-core Bank-Only is (2,0,1): B-bits 21-22 + O-bit 15 (§2.3)
                                   horizontal[:2] + [Variant("bank-only", "bank-only-8"), Variant("b-vp", "b-vp"),
                                                     Variant("c-vp", "c-vp")],
                                   settings.instructions(size["instructions8"]), "buddy", settings.mix_seed + 8)

    def describe(self) -> list[str]:
        return [f"4 programs: {len(self.four.mixes)} mixes drawn from the whole pool ({', '.join(common.ALL)}) with "
                f"random.Random({self.four.mix_seed}) on the i7-860; buddy, cache-only, bank-only, a-vp.",
                f"8 programs: {len(self.eight.mixes)} mixes drawn with replacement, random.Random({self.eight.mix_seed}), on "
                "i7-860-8t (8 cores standing for the 8 hardware threads); buddy, cache-only, bank-only-8 (HVR's 8-core "
                "Bank-Only, (2,0,1)), b-vp, c-vp.",
                f"{self.instructions:,} instructions per core with 4 programs, {self.eight.instructions:,} with 8 (as "
                "many per run); alone runs under buddy.",
                "Population: the paper's Fig. 3 has 214 random 4- and 8-program workloads, and its VP figures (Fig. 11-12) "
                "the 50 of them where both horizontal policies help (Quadrant I). Here the VP claims use the drawn mixes "
                "where both help (their count is in each row), far fewer than the paper's, for time."]

    def mix_experiments(self) -> list[MixExperiment]:
        return [self.four, self.eight]

    def plan(self) -> list[dict[str, Any]]:
        return self.four.plan(self.settings) + self.eight.plan(self.settings)

    def analyse(self, claims: list[dict[str, Any]], results: dict[str, Any]) -> dict[str, Any]:
        rows = []
        for c in claims:
            exp = self.four if c["experiment"] == "mixes-4" else self.eight
            rows.append(common.measure_mix_claim(exp, results, c, self.settings))
        tables = [
            common.programs_table("i7-860", self.settings, self.instructions),
            ("4-program mixes (i7-860): mean ± sd over seeds", ["mix", "policy", "WS", "WS vs buddy %", "MS",
                                                                "row-buffer miss rate"],
             common.mix_table(self.four, results, self.settings, "i7-860")),
            ("8-program mixes (i7-860-8t): mean ± sd over seeds", ["mix", "policy", "WS", "WS vs buddy %", "MS",
                                                                   "row-buffer miss rate"],
             common.mix_table(self.eight, results, self.settings, "i7-860-8t")),
        ]
        return {"rows": rows, "tables": tables, "plots": [], "notes": [common.run_facts([self.four, self.eight], results)]}
