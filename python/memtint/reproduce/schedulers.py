"""Application-aware memory schedulers (PAR-BS, ATLAS, TCM, BLISS) against FR-FCFS, buddy
placement: on the CCPS paper's 4-core 64-bank machine (ccps-4c-64b: its preset scales the
schedulers' quanta to short runs) with seeded 4-program mixes, the population of the CCPS
paper's TCM figure; and on the TCM paper's 24-core, 4-controller DDR2-800 machine (tcm-24c)
with seeded 24-program mixes, the population of TCM's own figures against ATLAS and PAR-BS."""

from __future__ import annotations

import random
from typing import Any

from memtint.reproduce import common
from memtint.reproduce.common import MixExperiment, Settings, Variant

NAME = "schedulers"
TITLE = "Memory schedulers: PAR-BS, ATLAS, TCM, BLISS against FR-FCFS"
MACHINE = "ccps-4c-64b"
MACHINE24 = "tcm-24c"

SIZES = {"full": {"instructions": 3_000_000, "mixes": 8, "instructions24": 1_000_000, "mixes24": 2},
         "quick": {"instructions": 200_000, "mixes": 2, "instructions24": 50_000, "mixes24": 1}}
#: The TCM paper's 96 workloads have 25, 50, 75 or 100 % memory-intensive programs; here the
#: middle of that range (ccps.md §5.2 item 8 gives the population only as "96 workloads").
INTENSIVE_SHARE_24 = 0.5
SCHEDULERS = ("par-bs", "atlas", "tcm", "bliss")


class Experiment:
    name = NAME
    title = TITLE

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        size = SIZES["quick" if settings.quick else "full"]
        self.instructions = settings.instructions(size["instructions"])
        # Three intensive programs and one from the whole pool: the light member is where
        # application-aware scheduling is expected to matter.
        pool = self.pool = common.intensive(MACHINE, settings.warmup, self.instructions)  # measured here
        heavy = common.draw_mixes(pool, 3, size["mixes"], settings.mix_seed + 1)
        rng = random.Random(settings.mix_seed + 1)
        mixes = [sorted(m + [rng.choice(common.ALL)]) for m in heavy]
        variants = [Variant("fr-fcfs", "buddy", "fr-fcfs")] + [Variant(s, "buddy", s) for s in SCHEDULERS]
        self.mixes = MixExperiment("schedulers", [MACHINE], mixes, variants, self.instructions, "fr-fcfs",
                                   settings.mix_seed + 1)
        # 24 programs: half from the pool measured intensive on tcm-24c, half from the whole pool.
        self.instructions24 = settings.instructions(size["instructions24"])
        pool24 = self.pool24 = common.intensive(MACHINE24, settings.warmup, self.instructions24)
        heavy = int(24 * INTENSIVE_SHARE_24)
        rng24 = random.Random(settings.mix_seed + 24)
        mixes24 = [sorted(rng24.choices(pool24, k=heavy) + rng24.choices(common.ALL, k=24 - heavy))
                   for _ in range(size["mixes24"])]
        self.mixes24 = MixExperiment("schedulers-24", [MACHINE24], mixes24, variants, self.instructions24, "fr-fcfs",
                                     settings.mix_seed + 24)

    def describe(self) -> list[str]:
        return [f"{len(self.mixes.mixes)} 4-program mixes, each of 3 programs drawn from the memory-intensive pool and 1 from "
                f"the whole pool, random.Random({self.mixes.mix_seed}); machine {MACHINE} with its preset's scheduler parameters; "
                f"buddy placement; {self.instructions:,} instructions per core. Alone runs under buddy with the "
                "machine's FR-FCFS, the same for every scheduler, so WS ratios compare shared-run IPCs.",
                f"TCM's own figures (against ATLAS and PAR-BS): mixes of 24 programs on "
                f"{MACHINE24} (24 cores, 4 DDR2-800 channels, as the TCM paper), {int(24 * INTENSIVE_SHARE_24)} drawn "
                f"with replacement from the pool measured intensive there and the rest from the whole pool "
                f"(random.Random({self.mixes24.mix_seed})); {self.instructions24:,} instructions per core. The TCM "
                f"paper has 96 such workloads; {len(self.mixes24.mixes)} here, for time (each run simulates 24 programs)."]

    def mix_experiments(self) -> list[MixExperiment]:
        return [self.mixes, self.mixes24]

    def plan(self) -> list[dict[str, Any]]:
        return self.mixes.plan(self.settings) + self.mixes24.plan(self.settings)

    def analyse(self, claims: list[dict[str, Any]], results: dict[str, Any]) -> dict[str, Any]:
        rows = [common.measure_mix_claim(self.mixes24 if c["experiment"] == "schedulers-24" else self.mixes, results,
                                         c, self.settings) for c in claims]
        head = ["mix", "scheduler", "WS", "WS vs FR-FCFS %", "MS", "row-buffer miss rate"]
        tables = [common.programs_table(MACHINE, self.settings, self.instructions, self.pool),
                  common.programs_table(MACHINE24, self.settings, self.instructions24, self.pool24),
                  (f"Mixes on {MACHINE}: mean ± sd over seeds", head,
                   common.mix_table(self.mixes, results, self.settings, MACHINE)),
                  (f"24-program mixes on {MACHINE24}: mean ± sd over seeds", head,
                   common.mix_table(self.mixes24, results, self.settings, MACHINE24))]
        return {"rows": rows, "tables": tables, "plots": [],
                "notes": [common.run_facts([self.mixes, self.mixes24], results)]}
