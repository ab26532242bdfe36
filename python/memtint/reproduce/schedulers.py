"""Application-aware memory schedulers (PAR-BS, ATLAS, TCM, BLISS) against FR-FCFS, buddy
placement, on the CCPS paper's 4-core 64-bank machine (ccps-4c-64b: its preset scales the
schedulers' quanta to short runs), seeded 4-program memory-intensive mixes."""

from __future__ import annotations

from typing import Any

from memtint.reproduce import common
from memtint.reproduce.common import MixExperiment, Settings, Variant

NAME = "schedulers"
TITLE = "Memory schedulers: PAR-BS, ATLAS, TCM, BLISS against FR-FCFS"
MACHINE = "ccps-4c-64b"

SIZES = {"full": {"instructions": 3_000_000, "mixes": 8},
         "quick": {"instructions": 200_000, "mixes": 2}}


class Experiment:
    name = NAME
    title = TITLE

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        size = SIZES["quick" if settings.quick else "full"]
        self.instructions = settings.instructions(size["instructions"])
        # Three intensive programs and one from the whole pool: the light member is where
        # application-aware scheduling is expected to matter.
        pool = common.intensive(MACHINE, settings.warmup, self.instructions)  # measured on this machine
        heavy = common.draw_mixes(pool, 3, size["mixes"], settings.mix_seed + 1)
        import random

        rng = random.Random(settings.mix_seed + 1)
        mixes = [sorted(m + [rng.choice(common.ALL)]) for m in heavy]
        variants = [Variant("fr-fcfs", "buddy", "fr-fcfs")] + [Variant(s, "buddy", s) for s in ("par-bs", "atlas", "tcm", "bliss")]
        self.mixes = MixExperiment("schedulers", [MACHINE], mixes, variants, self.instructions, "fr-fcfs",
                                   settings.mix_seed + 1)

    def describe(self) -> list[str]:
        return [f"{len(self.mixes.mixes)} 4-program mixes: 3 drawn from the memory-intensive pool and 1 from the whole "
                f"pool, random.Random({self.mixes.mix_seed}); machine {MACHINE} with its preset's scheduler parameters; "
                f"buddy placement; {self.instructions:,} instructions per core. Alone runs under buddy with the "
                "machine's FR-FCFS, the same for every scheduler, so WS ratios compare shared-run IPCs."]

    def plan(self) -> list[dict[str, Any]]:
        return self.mixes.plan(self.settings)

    def analyse(self, claims: list[dict[str, Any]], results: dict[str, Any]) -> dict[str, Any]:
        rows = [common.measure_mix_claim(self.mixes, results, c, self.settings) for c in claims]
        tables = [(f"Mixes on {MACHINE}: mean ± sd over seeds", ["mix", "scheduler", "WS", "WS vs FR-FCFS %", "MS",
                                                                 "row-buffer miss rate"],
                   common.mix_table(self.mixes, results, self.settings, MACHINE))]
        return {"rows": rows, "tables": tables, "plots": [], "notes": [common.run_facts([self.mixes], results)]}
