"""BPM/BPM+ (bpm.md): Fig. 1 bank sensitivity and Fig. 8-10 static partitioning on seeded
4-program (i7-860) and 8-program (i7-860-8t) memory-intensive mixes from the captured suite and
the synthetic profiles, the paper's two workload sizes (bpm.md §4)."""

from __future__ import annotations

import statistics
from typing import Any

from memtint import api
from memtint.reproduce import common
from memtint.reproduce.common import MixExperiment, Row, Settings, Variant, diagnostics, explain, pct
from memtint.reproduce.runner import spec_key

NAME = "bpm"
TITLE = "BPM/BPM+ (Liu et al., ACM TACO 2014)"
MACHINE = "i7-860"
MACHINE8 = "i7-860-8t"
BANKS = (64, 32, 16, 8)

#: Run lengths: instructions per core; mixes drawn. --quick shrinks both (tests, development).
#: The paper has 10 workloads of each size (bpm.md §4); 8-program runs cost twice a 4-program
#: one, so fewer are drawn, with half the instructions per core (the same per run), to keep
#: `make reproduce` within its time (the report says so).
SIZES = {"full": {"instructions": 10_000_000, "mixes": 10, "mixes8": 3, "instructions8": 5_000_000,
                  "programs": common.ALL},
         "quick": {"instructions": 200_000, "mixes": 2, "mixes8": 1, "instructions8": 100_000,
                   "programs": ["stream", "copy", "light", "random", "triad"]}}
PAPER_MIXES = {4: 10, 8: 10}


def colours(banks: int) -> list[int]:
    """The i7-860's BPM colours for ``banks`` banks: a colour is one bank on each of the 2
    channels; colour bits b13-15 (low) then b21-22, taken low first (one rank first, as the even
    split of 32 colours over 4 programs gives each its 8 colours)."""
    return list(range(banks // 2))


class Experiment:
    name = NAME
    title = TITLE

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        size = SIZES["quick" if settings.quick else "full"]
        self.instructions = settings.instructions(size["instructions"])
        self.programs = list(size["programs"])
        # The pool: programs measured memory-intensive alone with this run's warm-up and window.
        self.pool = common.intensive(MACHINE, settings.warmup, self.instructions)
        mixes = common.draw_mixes(self.pool, 4, size["mixes"], settings.mix_seed)
        variants = [Variant("buddy", "buddy"), Variant("bpm", "bpm"),
                    # The paper does not say which colours a program gets: both shapes
                    # (os.colour_split; docs/stats.md, "Frame order").
                    Variant("bpm-strided", "bpm", os={"colour_split": "strided"}),
                    Variant("bpm-plus", "bpm-plus", machine="i7-860-bpm-plus"),
                    Variant("cache-only", "cache-only")]
        self.mixes = MixExperiment("mixes", [MACHINE], mixes, variants, self.instructions, "buddy", settings.mix_seed)
        # 8 programs on the 4-core, 8-thread i7-860 (each thread a core here: no SMT model).
        mixes8 = common.draw_mixes(self.pool, 8, size["mixes8"], settings.mix_seed + 8, replace=True)
        variants8 = [v if v.label != "bpm-plus" else Variant("bpm-plus", "bpm-plus", machine="i7-860-8t-bpm-plus")
                     for v in variants]
        self.instructions8 = settings.instructions(size["instructions8"])
        self.mixes8 = MixExperiment("mixes-8", [MACHINE8], mixes8, variants8, self.instructions8, "buddy",
                                    settings.mix_seed + 8)
        self.banks: dict[tuple[str, int, int], str] = {}
        self.figures: dict[str, Any] = {}  # the paper's figure file, set before analyse

    def describe(self) -> list[str]:
        return [f"Fig. 1: {len(self.programs)} programs alone on the {MACHINE}, held to {'/'.join(map(str, BANKS))} banks "
                f"by explicit BPM colour sets, {self.instructions:,} instructions each.",
                f"Fig. 8-10: {len(self.mixes.mixes)} 4-program mixes drawn from the memory-intensive pool "
                f"({', '.join(self.pool)}: alone LLC MPKI > 1 on the {MACHINE}, measured with this warm-up and "
                f"window) with random.Random({self.settings.mix_seed}); buddy, bpm, bpm-plus "
                f"(machine i7-860-bpm-plus), cache-only; {self.instructions:,} instructions per core; alone runs under "
                "buddy on the i7-860. Write-backs are on (dirty LLC victims go to DRAM).",
                f"Fig. 8-9, 8 programs: {len(self.mixes8.mixes)} mixes of 8 drawn with replacement from the same pool "
                f"with random.Random({self.mixes8.mix_seed}) on {MACHINE8} (the 8 hardware threads as 8 cores; memtint "
                f"has no SMT model), bpm-plus on i7-860-8t-bpm-plus, {self.instructions8:,} instructions per core (as many "
                "per run as a 4-program mix); the paper has 10 workloads of each size, fewer 8-program ones here, for "
                "time. Claims about 8-program workloads use these; BPM+'s fairness figure, "
                "an average over all 20 of the paper's workloads, uses the 4- and 8-program mixes together.",
                "The mechanism in a reference simulator: [crosscheck.md](crosscheck.md) (buddy and BPM request streams "
                "replayed in memtint and Ramulator 2.1, row-buffer miss rates side by side).",
                "The pool: the paper draws its mixes at random from SPEC CPU2006 (WL11 has three light programs); "
                "here every member reaches DRAM, so that each claim is tested on programs with the effect."]

    def mix_experiments(self) -> list[MixExperiment]:
        return [self.mixes, self.mixes8]

    def plan(self) -> list[dict[str, Any]]:
        jobs = []
        for p in self.programs:
            for b in BANKS:
                for seed in self.settings.seed_list():
                    spec = api.build_sim_spec(MACHINE, [common.program_path(p)], instructions=self.instructions,
                                              policy="bpm", seed=seed, os_options={"colours": [colours(b)]})
                    common.with_warmup(spec, self.settings)
                    k = spec_key(spec)
                    self.banks[(p, b, seed)] = k
                    jobs.append({"key": k, "phase": "alone", "spec": spec})
        return jobs + self.mixes.plan(self.settings) + self.mixes8.plan(self.settings)

    # --- analysis ---------------------------------------------------------------------------

    def _bank_rows(self, claim: dict[str, Any], results: dict[str, Any]) -> list[Row]:
        subjects = self.programs if claim.get("subjects") == "all" else [p for p in claim["subjects"] if p in self.programs]
        b = int(claim["banks"])
        rows = []
        for p in subjects:
            per_seed, pairs = [], []
            for seed in self.settings.seed_list():
                full = results[self.banks[(p, 64, seed)]]
                part = results[self.banks[(p, b, seed)]]
                ratio = part["cores"][0]["ipc"] / full["cores"][0]["ipc"]
                per_seed.append(ratio if claim["metric"] == "relative_ipc" else 100 * (ratio - 1))
                pairs.append((diagnostics(full), diagnostics(part)))
            row = Row(claim, p, per_seed)
            row.detail = explain(pairs, 3, ("64 banks", f"{b} banks"), exclude=("banks used (mean per program)",))
            row.population = f"{p} alone on the {MACHINE}"
            row.dram_pki, row.not_applicable = common.effect(
                f"{p} alone on 64 banks", [results[self.banks[(p, 64, s)]] for s in self.settings.seed_list()])
            rows.append(row)
        return rows

    def analyse(self, claims: list[dict[str, Any]], results: dict[str, Any]) -> dict[str, Any]:
        rows = []
        for c in claims:
            if c["experiment"] == "bank-sensitivity":
                rows.extend(self._bank_rows(c, results))
            elif c["experiment"] == "mixes":
                rows.append(common.measure_mix_claim(self.mixes, results, c, self.settings))
            elif c["experiment"] == "mixes-8":
                rows.append(common.measure_mix_claim(self.mixes8, results, c, self.settings))
            elif c["experiment"] == "mixes-4-and-8":
                rows.append(common.measure_mix_claim([(self.mixes, MACHINE), (self.mixes8, MACHINE8)], results, c,
                                                     self.settings))
        curve = {}
        for p in self.programs:
            curve[p] = [statistics.fmean(results[self.banks[(p, b, s)]]["cores"][0]["ipc"]
                                         / results[self.banks[(p, 64, s)]]["cores"][0]["ipc"]
                                         for s in self.settings.seed_list()) for b in BANKS]
        sens = []
        for p in self.programs:
            full = [results[self.banks[(p, 64, s)]]["cores"][0] for s in self.settings.seed_list()]
            sens.append([p] + [f"{v:.3f}" for v in curve[p]]
                        + [f"{statistics.fmean(c['llc_mpki'] for c in full):.2f}",
                           f"{statistics.fmean(c['bank_level_parallelism'] for c in full):.2f}"])
        tables = [
            common.programs_table(MACHINE, self.settings, self.instructions, self.pool),
            ("Bank sensitivity (Fig. 1): IPC relative to 64 banks, mean over seeds",
             ["program"] + [f"{b} banks" for b in BANKS] + ["LLC MPKI (64 banks)", "BLP (64 banks)"], sens),
            (f"Mixes (Fig. 8-10): per mix and policy, mean ± sd over seeds (mix seed {self.settings.mix_seed})",
             ["mix", "policy", "WS", "WS vs buddy %", "MS", "row-buffer miss rate"],
             common.mix_table(self.mixes, results, self.settings, MACHINE)),
            (f"8-program mixes (Fig. 8-9) on {MACHINE8}: per mix and policy, mean ± sd over seeds",
             ["mix", "policy", "WS", "WS vs buddy %", "MS", "row-buffer miss rate"],
             common.mix_table(self.mixes8, results, self.settings, MACHINE8)),
        ]
        calibration = common.calibration_rows(self.figures.get("calibration", []), MACHINE, self.settings,
                                              self.instructions, {"mixes": self.mixes, "mixes-8": self.mixes8}, results)
        plots = [{"kind": "lines", "file": "bpm-banks.png", "title": "BPM Fig. 1: IPC relative to 64 banks",
                  "x": list(BANKS), "series": curve, "xlabel": "banks", "ylabel": "IPC / IPC(64 banks)", "hline": 0.9}]
        return {"rows": rows, "tables": tables, "plots": plots, "calibration": calibration, "notes": [common.run_facts([self.mixes, self.mixes8], results)]}
