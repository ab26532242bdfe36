"""BPM/BPM+ (bpm.md): Fig. 1 bank sensitivity and Fig. 8-10 static partitioning on seeded
4-program (i7-860) and 8-program (i7-860-8t) memory-intensive mixes from the captured suite and
the synthetic profiles, the paper's two workload sizes (bpm.md §4)."""

from __future__ import annotations

import random
import statistics
from typing import Any

from memtint import api
from memtint.reproduce import common
from memtint.reproduce import verdict as verdict_rule
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

#: Fig. 11 (bpm.md §6.4): 8 programs on a machine whose memory holds them all but whose even
#: split does not hold the largest. The paper's machine has 4 GB for 8 programs (512 MB each
#: under BPM), each workload with a program above 500 MB; the captured windows touch about a
#: quarter of what SPEC's programs do, so the machine is cut to a quarter (os.memory_mb, Linux's
#: mem=): 1 GiB, 128 MiB each. A mix has at least one program above its share and all of them
#: within nine tenths of the memory (ΣRNP below capacity: the case lending serves, and buddy does
#: not swap). The paper has 5 such workloads.
PRESSURE_MB = 1024
PRESSURE_MIXES = {"full": 5, "quick": 1}
PRESSURE_OS = {"memory_mb": PRESSURE_MB, "overflow": "swap"}

#: The paced variants' copy daemon ([os.recolour]): DAMON_RECLAIM's default time quota, 10 ms of
#: kernel time per second (1 %), at the simulator's cost of a page copy (os.numa_scan.migrate_ns,
#: 3 µs): 3.3 pages per ms per process. The paper's daemon runs every 10 s; a run here lasts
#: milliseconds, so at that quota a moved program's footprint is copied over seconds.
MIGRATE_NS = 3000.0
DAEMON = {"recolour": {"pages_per_ms": round(0.01 * 1e6 / MIGRATE_NS, 3)}}

#: Fig. 12 (bpm.md §6.5): 20 online random workloads of at least 4 programs, against UF. Drawn
#: from the whole suite (the paper's 6''-8'' use little bandwidth); BPM (bank colours, line
#: interleave) on the i7-860, static and dynamic BPM+ on its per-page-channel variant.
ONLINE_MIXES = {"full": 20, "quick": 2}


def pressure_mixes(pool: list[str], footprint_mb: dict[str, float], count: int, seed: int) -> list[list[str]]:
    """``count`` distinct 8-program mixes from ``pool`` with at least one program above its
    even share of ``PRESSURE_MB`` and all within 90 % of it, drawn with ``random.Random(seed)``:
    one program from those above the share, seven from the pool with replacement."""
    share = PRESSURE_MB / 8
    big = [p for p in pool if share < footprint_mb[p] <= 0.9 * PRESSURE_MB]
    rng = random.Random(seed)
    mixes: list[list[str]] = []
    for _ in range(1000):
        if len(mixes) == count or not big:
            break
        mix = sorted([rng.choice(big)] + rng.choices(pool, k=7))
        if sum(footprint_mb[p] for p in mix) <= 0.9 * PRESSURE_MB and mix not in mixes:
            mixes.append(mix)
    return mixes


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
                    # Static BPM+ as the paper ran it: channels balanced from offline profiles.
                    Variant("bpm-plus", "bpm-plus-balanced", machine="i7-860-bpm-plus"),
                    Variant("cache-only", "cache-only")]
        # The hardware's own partitioning beside page colouring (bpm.md §9.5), no paper figure:
        # CAT's even split of the LLC's ways, alone and with BPM; MBA capping each program at its
        # even share of peak bandwidth rounded up to MBA's 10 % step (30 % for four).
        hardware = [Variant("cat", "buddy", os={"resctrl": ["cat"]}), Variant("cat+bpm", "bpm", os={"resctrl": ["cat"]}),
                    Variant("mba", "buddy", os={"resctrl": ["mba"], "mba": {"percent": [30] * 4}})]
        self.mixes = MixExperiment("mixes", [MACHINE], mixes, variants + hardware, self.instructions, "buddy",
                                   settings.mix_seed)
        # 8 programs on the 4-core, 8-thread i7-860 (each thread a core here: no SMT model).
        mixes8 = common.draw_mixes(self.pool, 8, size["mixes8"], settings.mix_seed + 8, replace=True)
        variants8 = [v if v.label != "bpm-plus" else Variant("bpm-plus", "bpm-plus-balanced", machine="i7-860-8t-bpm-plus")
                     for v in variants]
        self.instructions8 = settings.instructions(size["instructions8"])
        self.mixes8 = MixExperiment("mixes-8", [MACHINE8], mixes8, variants8, self.instructions8, "buddy",
                                    settings.mix_seed + 8)
        # Fig. 11: memory pressure, with footprints measured alone with the 8-program window.
        self.footprint_mb = {p: m["footprint_mb"]
                             for p, m in common.measured(MACHINE8, settings.warmup, self.instructions8).items()}
        pressure = pressure_mixes(self.pool, self.footprint_mb, PRESSURE_MIXES["quick" if settings.quick else "full"],
                                  settings.mix_seed + 11)
        self.pressure = MixExperiment("pressure", [MACHINE8], pressure, [
            Variant("buddy", "buddy", os=PRESSURE_OS), Variant("bpm", "bpm", os=PRESSURE_OS),
            Variant("dynamic-bpm", "bpm", os={**PRESSURE_OS, "dynamic": "dynamic-bpm"}),
            Variant("dynamic-bpm-paced", "bpm", os={**PRESSURE_OS, "dynamic": "dynamic-bpm", **DAEMON})],
            self.instructions8, "buddy", settings.mix_seed + 11, at_end="wait")
        # Fig. 12: BPM, channel-only and BPM+, static and dynamic (copies paced), on random mixes, read by UF.
        online = common.draw_mixes(self.programs, 4, ONLINE_MIXES["quick" if settings.quick else "full"],
                                   settings.mix_seed + 12)
        self.online = MixExperiment("online", [MACHINE], online, [
            Variant("buddy", "buddy"), Variant("bpm", "bpm"),
            Variant("bpm-plus", "bpm-plus", machine="i7-860-bpm-plus"),
            Variant("dynamic-bpm-plus", "bpm-plus", machine="i7-860-bpm-plus",
                    os={"dynamic": "dynamic-bpm-plus", **DAEMON}),
            Variant("channel-only", "channel-only", machine="i7-860-bpm-plus"),
            Variant("dynamic-channel-only", "channel-only", machine="i7-860-bpm-plus",
                    os={"dynamic": "dynamic-channel-only", **DAEMON})],
            self.instructions, "buddy", settings.mix_seed + 12)
        self.banks: dict[tuple[str, int, int], str] = {}
        self.figures: dict[str, Any] = {}  # the paper's figure file, set before analyse

    def describe(self) -> list[str]:
        return [f"Fig. 1: {len(self.programs)} programs alone on the {MACHINE}, held to {'/'.join(map(str, BANKS))} banks "
                f"by explicit BPM colour sets, {self.instructions:,} instructions each.",
                f"Fig. 8-10: {len(self.mixes.mixes)} 4-program mixes drawn from the memory-intensive pool "
                f"({', '.join(self.pool)}: alone LLC MPKI > 1 on the {MACHINE}, measured with this warm-up and "
                f"window) with random.Random({self.settings.mix_seed}); buddy, bpm, bpm-plus "
                f"(machine i7-860-bpm-plus, policy bpm-plus-balanced: two programs in each channel, the pairs whose alone "
                f"DRAM traffic balances the channels best, as the paper balanced its workloads' channels by hand from "
                f"offline profiles; a BPM+ claim's cause gives the UF this leaves and the UF the best split of any "
                f"sizes would), cache-only; {self.instructions:,} instructions per core; alone runs under "
                "buddy on the i7-860. Write-backs are on (dirty LLC victims go to DRAM). Beside them, the hardware's "
                "own partitioning (no paper figure): Intel CAT splitting the LLC's 16 ways evenly (os.resctrl = "
                "[\"cat\"]) under buddy and under bpm, and Intel MBA capping each program at 30 % of peak bandwidth.",
                f"Fig. 8-9, 8 programs: {len(self.mixes8.mixes)} mixes of 8 drawn with replacement from the same pool "
                f"with random.Random({self.mixes8.mix_seed}) on {MACHINE8} (the 8 hardware threads as 8 cores; memtint "
                f"has no SMT model), bpm-plus on i7-860-8t-bpm-plus (balanced the same way, four programs in each channel), {self.instructions8:,} instructions per core (as many "
                "per run as a 4-program mix); the paper has 10 workloads of each size, fewer 8-program ones here, for "
                "time. Claims about 8-program workloads use these; BPM+'s fairness figure, "
                "an average over all 20 of the paper's workloads, uses the 4- and 8-program mixes together.",
                "The mechanism in a reference simulator: [crosscheck.md](crosscheck.md) (buddy and BPM request streams "
                "replayed in memtint and Ramulator 2.1, row-buffer miss rates side by side).",
                f"Fig. 11, memory pressure: {len(self.pressure.mixes)} mixes of 8 on {MACHINE8} cut to {PRESSURE_MB} MiB "
                f"(os.memory_mb; the paper's 4 GB scaled by the captured windows' footprints), each with a program "
                f"above its {PRESSURE_MB // 8} MiB share and all within 90 % of the memory, drawn with "
                f"random.Random({self.pressure.mix_seed}) from the pool (footprints measured alone); buddy, static bpm "
                "and dynamic-bpm (epoch 1 ms, the paper's 10 s scaled), all swapping when a process's colours (or the "
                "memory) are full (os.overflow = \"swap\", a major fault 50 µs), "
                f"{self.instructions8:,} instructions per core; each program halts at its target (at_end = \"wait\": "
                "a swapping program runs thousands of times slower, and the others kept running beside it would cost "
                "as much to simulate; bpm.md §8.1 item 9 allows either), so its last stretch may run with less "
                "contention. dynamic-bpm copies a partition's displaced pages at the epoch, stalling their process for "
                "all of them (Lin et al.'s synchronous re-colouring); dynamic-bpm-paced copies them through a daemon "
                f"at DAMON_RECLAIM's default quota, 1 % of a process's time ({DAEMON['recolour']['pages_per_ms']} pages "
                "per ms at 3 µs a page; os.recolour.pages_per_ms), the pages waiting in their old colours.",
                f"Fig. 12, channel balance: {len(self.online.mixes)} random mixes of 4 drawn from the whole suite (the "
                f"paper's 6''-8'' use little bandwidth) with random.Random({self.online.mix_seed}); buddy and bpm on "
                f"{MACHINE}; on i7-860-bpm-plus static bpm-plus and channel-only (each program in one channel, "
                "the channel's banks shared) and their dynamic forms dynamic-bpm-plus and dynamic-channel-only "
                "(epoch 1 ms, UF threshold 0.2, copies paced as above); "
                f"{self.instructions:,} instructions per core. Here static bpm-plus is the even split, not the balanced "
                "one of Fig. 8-10 (the paper's online workloads were not balanced by hand: that is the dynamic "
                "policies' job): the first two programs in channel 0, as channel-only's. UF is measured in the static "
                "BPM+ runs: each channel's DRAM traffic per cycle of its programs.",
                "The pool: the paper draws its mixes at random from SPEC CPU2006 (WL11 has three light programs); "
                "here every member reaches DRAM, so that each claim is tested on programs with the effect."]

    def mix_experiments(self) -> list[MixExperiment]:
        return [self.mixes, self.mixes8, self.pressure, self.online]

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
                    jobs.append({"key": k, "phase": "alone", "spec": spec, "experiment": "bank-sensitivity"})
        return (jobs + self.mixes.plan(self.settings) + self.mixes8.plan(self.settings)
                + self.pressure.plan(self.settings) + self.online.plan(self.settings))

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
        return self._every(claim, rows) if claim.get("subjects") == "all" else rows

    @staticmethod
    def _every(claim: dict[str, Any], rows: list[Row]) -> list[Row]:
        """A claim about every program is one claim: the worst program with the effect decides it
        (its seeds are the row's figure), and the others are listed in its detail, not counted as
        verdicts of their own."""
        measured = [r for r in rows if not r.not_applicable]
        if not measured:
            row = Row(claim, f"every program ({len(rows)})", rows[0].per_seed if rows else [])
            row.not_applicable = "; ".join(r.not_applicable for r in rows)
            return [row]
        low = claim["kind"] == "at_least"
        worst = (min if low else max)(measured, key=lambda r: r.stats["mean"])
        row = Row(claim, f"every program with DRAM traffic ({len(measured)} of {len(rows)}): worst {worst.subject}",
                  worst.per_seed)
        row.population = f"each of the {len(measured)} programs alone on the {MACHINE}"
        row.dram_pki = worst.dram_pki
        holds = [r for r in measured if verdict_rule.verdict(claim, r.stats["mean"], "", r.per_seed)
                 == verdict_rule.REPRODUCED]
        others = sorted(measured, key=lambda r: r.stats["mean"])
        row.detail = (f"{len(holds)} of {len(measured)} hold it alone; per program (mean over seeds): "
                      + ", ".join(f"{r.subject} {r.stats['mean']:.3f}" for r in others)
                      + ("; no effect to measure: " + ", ".join(r.subject for r in rows if r.not_applicable)
                         if len(measured) < len(rows) else "")
                      + f". Worst, {worst.subject}: {worst.detail}")
        return [row]

    def analyse(self, claims: list[dict[str, Any]], results: dict[str, Any]) -> dict[str, Any]:
        rows = []
        for c in claims:
            if c["experiment"] == "bank-sensitivity":
                rows.extend(self._bank_rows(c, results))
            elif c["experiment"] == "mixes":
                rows.append(common.measure_mix_claim(self.mixes, results, c, self.settings))
            elif c["experiment"] == "mixes-8":
                rows.append(common.measure_mix_claim(self.mixes8, results, c, self.settings))
            elif c["experiment"] == "pressure":
                rows.append(common.measure_mix_claim(self.pressure, results, c, self.settings))
            elif c["experiment"] == "online":
                rows.append(common.measure_mix_claim(self.online, results, c, self.settings))
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
        tables.append((f"Memory pressure (Fig. 11) on {MACHINE8} cut to {PRESSURE_MB} MiB: per mix and policy, mean "
                       "over seeds", ["mix (footprints MiB)", "policy", "WS", "WS vs buddy %", "pages swapped",
                                      "major faults", "colours lent", "pages re-coloured (before the run)",
                                      "re-colouring overhead %"],
                       self._pressure_table(results)))
        tables.append((f"Channel balance (Fig. 12) on {MACHINE}: per mix, mean over seeds; UF of static BPM+'s "
                       "channels (its first two programs in channel 0), the best split's UF (the assignment of programs to channels "
                       "that balances them most, from their DRAM traffic under buddy), the bandwidth under buddy, WS "
                       "change against buddy, and dynamic BPM+'s channels at the end (spread: every program in both) and copies",
                       ["mix", "UF", "best split's UF", "GB/s", "bpm %", "channel-only %", "dynamic-channel-only %", "bpm-plus %",
                        "dynamic-bpm-plus %", "dynamic's channels", "pages copied (waiting at the end)",
                        "re-colouring overhead %"],
                       self._online_table(results)))
        calibration = common.calibration_rows(self.figures.get("calibration", []), MACHINE, self.settings,
                                              self.instructions, {"mixes": self.mixes, "mixes-8": self.mixes8}, results)
        plots = [{"kind": "lines", "file": "bpm-banks.png", "title": "BPM Fig. 1: IPC relative to 64 banks",
                  "x": list(BANKS), "series": curve, "xlabel": "banks", "ylabel": "IPC / IPC(64 banks)", "hline": 0.9}]
        return {"rows": rows, "tables": tables, "plots": plots, "calibration": calibration,
                "notes": [common.run_facts([self.mixes, self.mixes8, self.pressure, self.online], results)]}

    def _pressure_table(self, results: dict[str, Any]) -> list[list[str]]:
        rows = []
        exp = self.pressure
        for m, mix in enumerate(exp.mixes):
            per_seed = [exp.runs(results, MACHINE8, m, s) for s in self.settings.seed_list()]
            name = " + ".join(f"{p} ({self.footprint_mb[p]:.0f})" for p in mix)
            for v in exp.variants:
                runs = [r[v.label] for r in per_seed]
                mean = lambda f: statistics.fmean(f(r) for r in runs)  # noqa: E731
                dyn = lambda key: mean(lambda r: (r.get("dynamic") or {}).get(key, 0))  # noqa: E731
                rows.append([name, v.label, f"{mean(lambda r: r['ws']):.3f}",
                             f"{statistics.fmean(common.pct(r[v.label]['ws'], r['buddy']['ws']) for r in per_seed):+.1f}",
                             f"{mean(common.swapped):.0f}", f"{mean(lambda r: (r.get('swap') or {}).get('swap_ins', 0)):.0f}",
                             f"{dyn('colours_lent'):.1f}",
                             f"{dyn('pages_recoloured'):.0f} ({dyn('pages_recoloured_before_run'):.0f})",
                             f"{mean(common.recolour_overhead):.2f}"])
        return rows

    def _online_table(self, results: dict[str, Any]) -> list[list[str]]:
        rows = []
        exp = self.online
        for m, mix in enumerate(exp.mixes):
            per_seed = [exp.runs(results, MACHINE, m, s) for s in self.settings.seed_list()]
            change = lambda label: statistics.fmean(  # noqa: E731
                common.pct(r[label]["ws"], r["buddy"]["ws"]) for r in per_seed)
            dyn = [r["dynamic-bpm-plus"].get("dynamic") or {} for r in per_seed]
            spread = sum(all(len(c or []) > 1 for c in d.get("channels", [])) for d in dyn)
            rows.append([" + ".join(mix),
                         f"{statistics.fmean(common.channel_uf(r['bpm-plus']) for r in per_seed):.2f}",
                         f"{statistics.fmean(common.best_split_uf(r['buddy']) for r in per_seed):.2f}",
                         f"{statistics.fmean(r['buddy']['bandwidth_gbps'] for r in per_seed):.1f}",
                         f"{change('bpm'):+.1f}", f"{change('channel-only'):+.1f}",
                         f"{change('dynamic-channel-only'):+.1f}", f"{change('bpm-plus'):+.1f}",
                         f"{change('dynamic-bpm-plus'):+.1f}",
                         f"spread in {spread} of {len(dyn)} seeds" if spread else "channels",
                         f"{statistics.fmean(d.get('pages_recoloured', 0) for d in dyn):.0f} "
                         f"({statistics.fmean(d.get('recolour_pending', 0) for d in dyn):.0f})",
                         f"{statistics.fmean(common.recolour_overhead(r['dynamic-bpm-plus']) for r in per_seed):.2f}"])
        return rows
