"""CCPS (ccps.md): the grid of 4/8 cores x 64/256 banks, buddy + FR-FCFS against BPM, TCM, IMPS
and CCPS, on seeded mixes (one program per core) from the captured suite and the profiles."""

from __future__ import annotations

from typing import Any

from memtint.reproduce import common
from memtint.reproduce.common import MixExperiment, Settings, Variant

NAME = "ccps"
TITLE = "CCPS: channel-aware page mapping and memory scheduling (Jia et al., IEEE Systems Journal 2017)"
MACHINES = ["ccps-4c-64b", "ccps-4c-256b", "ccps-8c-64b", "ccps-8c-256b"]

SIZES = {"full": {"instructions": 2_000_000, "mixes": 4},
         "quick": {"instructions": 100_000, "mixes": 1}}

VARIANTS = [Variant("buddy", "buddy"), Variant("bpm", "bpm"), Variant("tcm", "buddy", "tcm"),
            Variant("imps", "imps", "imps"), Variant("ccps", "ccps", "ccps")]


class Experiment:
    name = NAME
    title = TITLE

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        size = SIZES["quick" if settings.quick else "full"]
        self.instructions = settings.instructions(size["instructions"])
        self.grids = {}
        for cores in (4, 8):
            mixes = common.draw_mixes(common.ALL, cores, size["mixes"], settings.mix_seed + 100 + cores, replace=True)
            machines = [m for m in MACHINES if m.startswith(f"ccps-{cores}c")]
            self.grids[cores] = MixExperiment(f"grid-{cores}", machines, mixes, VARIANTS, self.instructions, "buddy",
                                              settings.mix_seed + 100 + cores)

    def describe(self) -> list[str]:
        g4, g8 = self.grids[4], self.grids[8]
        return [f"Machines {', '.join(MACHINES)} (the 16-core ones are left out for time); {len(g4.mixes)} mixes per "
                f"core count drawn with replacement from the whole pool (random.Random({g4.mix_seed}) for 4 cores, "
                f"random.Random({g8.mix_seed}) for 8); {self.instructions:,} instructions per core.",
                "Variants: buddy + FR-FCFS (the paper's CFS baseline), bpm + FR-FCFS, buddy + tcm, imps + imps "
                "(placement from the alone runs' profiles), ccps + ccps. Alone runs under buddy + the machine's FR-FCFS. "
                "One single-threaded program per core: CCPS's thread binding and time-sharing play no part.",
                "Population: the paper's is nine 36-thread mixes (18 sysbench threads and 6 SPEC programs x 3 copies, "
                "ccps.md §4.3) time-shared on 4, 8 and 16 cores. It cannot be formed here (no sysbench trace; 36 threads "
                "per run over 16 machines x mixes x seeds is beyond `make reproduce`'s time), so every claim below is "
                "tested on one program per core, another population than the paper's."]

    def mix_experiments(self) -> list[MixExperiment]:
        return [self.grids[4], self.grids[8]]

    def plan(self) -> list[dict[str, Any]]:
        return self.grids[4].plan(self.settings) + self.grids[8].plan(self.settings)

    def _grid(self, machine: str) -> MixExperiment:
        return self.grids[4 if machine.startswith("ccps-4c") else 8]

    def analyse(self, claims: list[dict[str, Any]], results: dict[str, Any]) -> dict[str, Any]:
        rows = [common.measure_mix_claim(self._grid(c["machine"]), results, c, self.settings) for c in claims]
        for r in rows:  # every row says it, not only the set-up: a verdict here is on another population
            r.population += ", one program per core (the paper's 36 time-shared threads cannot be formed here)"
        tables = [common.programs_table(m, self.settings, self.instructions) for m in ("ccps-4c-64b", "ccps-8c-64b")]
        for m in MACHINES:
            tables.append((f"{m}: per mix and policy, mean ± sd over seeds",
                           ["mix", "policy", "WS", "WS vs buddy %", "MS", "row-buffer miss rate"],
                           common.mix_table(self._grid(m), results, self.settings, m)))
        return {"rows": rows, "tables": tables, "plots": [], "notes": [common.run_facts([self.grids[4], self.grids[8]], results)]}
