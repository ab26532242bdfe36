"""Colored Refresh and the Colored Refresh Server (pan-camc-tintmalloc-refresh.md §4-5, §8-9): the
thesis's two task sets run by `memtint.run_rt` (the engine's rt_sim: each job's loads go through
the simulated DRAM, so a load that meets a refreshing rank delays its job) on the ddr4-2400-8r
preset at each density from 1 to 64 Gb (`dram.refresh_density_gbit`: tRFC from the thesis's
Table 4.1 and JEDEC, the rest of the device unchanged).

Table 4.4's set runs under Colored Refresh (`colored`: frames, rank colours, copy tasks) against
auto-refresh (EDF, pages over every rank, all-bank refresh) and DDR4's FGR 2x and 4x, each beside
its own no-refresh run; Table 5.2's set under the server (`crs`, the thesis's servers) against
the same baselines. The thesis's programs (Mälardalen) are not available: each task issues
synthetic loads through its computation, random or streaming over its footprint, as the
programs' names suggest (matmult and cnt random, compress and st streaming), 1000 per ms of WCET,
with computation 90 % of WCET. DDR4-2400 rather than the thesis's DDR3-1600, because FGR is a
DDR4 mode (the thesis grafts it onto DDR3).
"""

from __future__ import annotations

import statistics
from typing import Any

from memtint.reproduce import common
from memtint.reproduce.common import Row, Settings

NAME = "refresh"
TITLE = "Colored Refresh and its server: refresh hidden from real-time tasks (Pan, NC State PhD thesis 2018, Ch. 4-5)"
MACHINE = "ddr4-2400-8r"
DENSITIES = (1, 2, 4, 8, 16, 32, 64)
#: The thesis's timings imply 8192 / 8 ranks REFs per rank per window (§8.1); JEDEC's count is 8192.
THESIS_REFS = 1024
#: Every run is memtint.run_rt's: no warm-up (the report's set-up says so).
NO_WARMUP = "all"
#: Loads per ms of WCET, and computation as a share of WCET (the synthetic stand-ins for the programs).
LOADS_PER_MS = 1000
COMPUTE_SHARE = 0.9

#: Table 4.4 (ms) and Table 5.2 (tenths of a ms), with each program's stand-in pattern.
TABLE_4_4 = [("lms", 20, 4, "random", 64), ("compress", 32, 6, "stream", 64), ("cnt", 32, 8, "random", 64),
             ("st", 40, 8, "stream", 64), ("matmult", 80, 10, "random", 512)]
TABLE_5_2 = [("cnt", 200, 30, "random", 64), ("compress", 100, 12, "stream", 64), ("lms", 100, 16, "random", 64),
             ("matmult", 400, 100, "random", 512), ("st", 80, 20, "stream", 64)]
#: The thesis's server configuration for Table 5.2 (§5.4): S1 above S2, periods and budgets in tenths of a ms.
SERVERS = [{"tasks": ["cnt", "lms", "st"], "period": 40, "budget": 24},
           {"tasks": ["compress", "matmult"], "period": 40, "budget": 16}]
#: The thesis's utilisation without refresh (Σ e/p of Tables 4.4 and 5.2: its measured execution
#: times; Figs. 4.7 and 5.10 start at 0.96 and 0.93). Ours is lower: see the calibration rows.
PAPER_UTILISATION = {"cr": 0.9625, "crs": 0.93}

#: Variants: (schedule, refresh, refs per window or None for JEDEC's).
CR_VARIANTS = {
    "cr": ("colored", "scheme", THESIS_REFS),
    "cr-jedec": ("colored", "scheme", None),
    "cr-none": ("colored", "none", None),
    "auto": ("edf", "all-bank", None),
    "fgr2": ("edf", "fgr2", None),
    "fgr4": ("edf", "fgr4", None),
    "auto-none": ("edf", "none", None),
}
CRS_VARIANTS = {
    "crs": ("crs", "scheme", THESIS_REFS),
    "auto": ("edf", "all-bank", None),
    "fgr2": ("edf", "fgr2", None),
    "fgr4": ("edf", "fgr4", None),
    "auto-none": ("edf", "none", None),
}


#: The schemes' names in the reports.
SCHEME_NAMES = {"cr": "Colored Refresh", "cr-jedec": "Colored Refresh with JEDEC's REF count",
                "cr-none": "Colored Refresh without refresh", "crs": "the server", "auto": "auto-refresh",
                "fgr2": "FGR 2x", "fgr4": "FGR 4x", "auto-none": "no refresh"}


def tasks(table: list[tuple], unit_ms: float) -> list[dict[str, Any]]:
    return [{"name": n, "period": p, "wcet": e, "compute": COMPUTE_SHARE * e, "loads": int(LOADS_PER_MS * e * unit_ms),
             "pattern": pattern, "footprint_kb": kb} for n, p, e, pattern, kb in table]


def mean_latency(run: dict[str, Any]) -> float:
    """Average over tasks of each task's mean load latency, ns (the thesis's Fig. 4.8 / 5.7)."""
    return statistics.fmean(t["latency_ns"]["mean"] for t in run["tasks"])


def stall_share(run: dict[str, Any]) -> float:
    """Share of the tasks' run time spent waiting for loads."""
    unit_ns = run["config"]["unit_us"] * 1000.0
    waits = sum(t["loads"] * t["latency_ns"]["mean"] for t in run["tasks"])
    total = sum(t["finished"] * t["exec_mean"] * unit_ns for t in run["tasks"])
    return waits / total if total else 0.0


def mean_exec(run: dict[str, Any]) -> float:
    return statistics.fmean(t["exec_mean"] for t in run["tasks"])


def crossing_on_baseline(baseline: float, none: float, by_density: dict[int, float]) -> int | None:
    """The lowest density at which refresh's measured cost (utilisation at that density minus
    ``none``, the no-refresh run's) would take a set at ``baseline`` utilisation past 1; None if
    at no density. What our densities would show with the thesis's set, whose jobs run longer."""
    over = [d for d in sorted(by_density) if baseline + by_density[d] - none > 1.0]
    return over[0] if over else None


class Experiment:
    name = NAME
    title = TITLE

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.densities = (1, 16, 64) if settings.quick else DENSITIES
        self.keys: dict[tuple, str] = {}
        self.jobs: list[dict[str, Any]] = []

    def describe(self) -> list[str]:
        return [
            f"Machine {MACHINE}: one DDR4-2400 controller, 8 ranks of 8 Gb x8 devices, rank bits 16-18 (above the page "
            "offset, as the thesis's 15-17), so a page's rank is a colour; tRFC per density from "
            "dram/refresh_timing.rs (docs/refresh.md), tREFI 7.8 µs, retention 64 ms.",
            "Runs: memtint.run_rt (docs/refresh.md, 'Real-time tasks through the DRAM'): one core, each job computing "
            f"{COMPUTE_SHARE:.0%} of its WCET and issuing {LOADS_PER_MS} blocking loads per ms of WCET through it (random "
            "or streaming over its footprint: the Mälardalen programs are not available), over L = lcm(hyperperiod, "
            "64 ms): 320 ms for Table 4.4, 64 ms for Table 5.2.",
            "Colored Refresh: frames of 8 ms, 8 colours of one rank, each burst-refreshed at the start of its frame, "
            f"with the thesis's {THESIS_REFS} REFs per rank per window (its timings imply 8192 / ranks, §8.1; not "
            "JEDEC's 8192, run too as 'cr-jedec'); lms gets a copy task. The server: the thesis's S1 = {cnt, lms, st} "
            "(4 ms, 2.4 ms) and S2 = {compress, matmult} (4 ms, 1.6 ms), four ranks each, S2's burst at 0 and S1's at "
            "32 ms. Auto-refresh: EDF with each task's pages over all 8 ranks, all-bank refresh staggered by rank; "
            "FGR 2x and 4x the same with DDR4's modes. Each scheme has its own no-refresh run (same placement).",
            "Latency comparisons follow the thesis (auto-refresh over Colored Refresh or the server, each with its own "
            "placement); the invariants compare each scheme with its own no-refresh run.",
        ]

    def _add(self, key: tuple, spec: dict[str, Any]) -> None:
        common.add_rt_job(self.keys, self.jobs, key, spec)

    def plan(self) -> list[dict[str, Any]]:
        for seed in self.settings.seed_list():
            for d in self.densities:
                for v, (schedule, refresh, refs) in CR_VARIANTS.items():
                    spec = {"machine": MACHINE, "schedule": schedule, "refresh": refresh, "tasks": tasks(TABLE_4_4, 1.0),
                            "seed": seed, "refresh_density_gbit": d}
                    if refs:
                        spec |= {"refs_per_window": refs, "jedec": False}
                    self._add(("cr", v, d, seed), spec)
                for v, (schedule, refresh, refs) in CRS_VARIANTS.items():
                    spec = {"machine": MACHINE, "schedule": schedule, "refresh": refresh, "unit_us": 100.0,
                            "tasks": tasks(TABLE_5_2, 0.1), "servers": SERVERS, "seed": seed,
                            "refresh_density_gbit": d}
                    if refs:
                        spec |= {"refs_per_window": refs, "jedec": False}
                    self._add(("crs", v, d, seed), spec)
        return self.jobs

    def _run(self, results: dict[str, Any], key: tuple) -> dict[str, Any]:
        return results[self.keys[key]]

    # --- metrics: one value per seed ------------------------------------------------------------

    def _metric(self, c: dict[str, Any], results: dict[str, Any], seed: int) -> float:
        r = lambda exp, v, d: self._run(results, (exp, v, d, seed))  # noqa: E731
        m, ds = c["metric"], self.densities
        d = c.get("density")
        if m == "cr_hits_max":
            return float(max(r("cr", "cr", x)["refresh_met"] for x in ds))
        if m == "crs_hits_max":
            return float(max(r("crs", "crs", x)["refresh_met"] for x in ds))
        if m == "cr_jedec_hits":
            return float(r("cr", "cr-jedec", d)["refresh_met"])
        if m == "cr_latency_vs_none_max_pct":
            return max(abs(common.pct(a["latency_ns"]["mean"], b["latency_ns"]["mean"]))
                       for x in ds for a, b in zip(r("cr", "cr", x)["tasks"], r("cr", "cr-none", x)["tasks"]))
        if m == "cr_placement_latency_pct":
            # Colored Refresh confines each task to its rank: without refresh, against pages over every rank.
            return common.pct(mean_latency(r("cr", "cr-none", ds[-1])), mean_latency(r("cr", "auto-none", ds[-1])))
        if m == "cr_util_overhead_max_pct":
            return max(common.pct(r("cr", "cr", x)["utilisation"], r("cr", "cr-none", x)["utilisation"]) for x in ds)
        if m == "auto_hits_ratio":
            return r("cr", "auto", ds[-1])["refresh_met"] / max(1, r("cr", "auto", ds[0])["refresh_met"])
        if m == "auto_latency_pct":
            return common.pct(mean_latency(r("cr", "auto", d)), mean_latency(r("cr", "cr", d)))
        if m == "auto_latency_spread":
            pen = [common.pct(a["latency_ns"]["mean"], b["latency_ns"]["mean"])
                   for a, b in zip(r("cr", "auto", d)["tasks"], r("cr", "cr", d)["tasks"])]
            return max(pen) / min(pen) if min(pen) > 0 else float("inf")
        if m == "util_gap_points":
            return 100.0 * (r("cr", "auto", d)["utilisation"] - r("cr", "cr", d)["utilisation"])
        if m == "auto_infeasible_density":
            over = [x for x in ds if r("cr", "auto", x)["utilisation"] > 1.0 or r("cr", "auto", x)["deadline_misses"]]
            return float(over[0]) if over else 128.0
        if m == "fgr_not_better_share":
            pairs = [(x, v) for x in ds for v in ("auto", "fgr2", "fgr4")]
            ok = sum(mean_latency(r("cr", v, x)) >= mean_latency(r("cr", "cr", x)) for x, v in pairs)
            return ok / len(pairs)
        if m == "crs_auto_latency_pct":
            return common.pct(mean_latency(r("crs", "auto", d)), mean_latency(r("crs", "crs", d)))
        if m == "crs_auto_exec_pct":
            return common.pct(mean_exec(r("crs", "auto", d)), mean_exec(r("crs", "crs", d)))
        if m == "crs_fgr4_latency_pct":
            return common.pct(mean_latency(r("crs", "fgr4", d)), mean_latency(r("crs", "crs", d)))
        raise ValueError(f"unknown metric {m}")

    #: The refresh scheme a claim's number is about, when it is not the claim's Colored Refresh
    #: scheme itself (the metrics not named here compare auto-refresh with it).
    BASELINE = {"crs_fgr4_latency_pct": "fgr4"}
    #: The invariants: a Colored Refresh scheme against its own no-refresh run.
    INVARIANTS = ("cr_hits_max", "crs_hits_max", "cr_latency_vs_none_max_pct", "cr_util_overhead_max_pct")

    def _cause(self, c: dict[str, Any], results: dict[str, Any]) -> str:
        """What the runs measured behind the claim's number (first seed), from the runs of the
        scheme the claim is about."""
        seed = self.settings.seed_list()[0]
        r = lambda exp, v, d: self._run(results, (exp, v, d, seed))  # noqa: E731
        exp, ds, m = c["experiment"], self.densities, c["metric"]
        d = c.get("density") or ds[-1]
        scheme = "cr" if exp == "cr" else "crs"
        none = r(exp, "auto-none", d)
        if m == "cr_placement_latency_pct":
            alone = r(exp, "cr-none", d)
            return (f"without refresh, Colored Refresh's placement (each task in its rank) gives a mean latency of "
                    f"{mean_latency(alone):.1f} ns against {mean_latency(none):.1f} ns with pages over every rank: the "
                    "rows comparing auto-refresh or FGR with Colored Refresh include this difference, and the thesis's "
                    "'equal to no-refresh' compares with a no-refresh run of Colored Refresh's own placement")
        if m == "auto_infeasible_density":
            u0, paper = none["utilisation"], PAPER_UTILISATION[exp]
            auto = {x: r(exp, "auto", x)["utilisation"] for x in ds}
            utils = ", ".join(f"{x} Gb {u:.3f} ({u - u0:+.3f})" for x, u in auto.items())
            cross = crossing_on_baseline(paper, u0, auto)
            # The miss is the baseline: our stand-in jobs run under their WCET, the thesis's at it.
            return (f"the thesis's set runs at U = {paper:g} without refresh (Σ e/p), ours at {u0:.3f} (each job computes "
                    f"{COMPUTE_SHARE:.0%} of its WCET and waits for its loads {100 * stall_share(none):.1f} % of its run "
                    f"time), so refresh must add {1 - u0:.3f} here to pass 1 against {1 - paper:.4f} there; auto-refresh "
                    f"utilisation by density (its cost over no refresh): {utils}; added to the thesis's {paper:g} these "
                    + (f"costs pass 1 from {cross} Gb" if cross else "costs pass 1 at no density")
                    + (", as the thesis found" if cross == 16 else ""))
        if m == "auto_hits_ratio":
            counts = ", ".join(f"{x} Gb {r(exp, 'auto', x)['refresh_met']:,}" for x in ds)
            return (f"loads that met a refreshing rank: {counts}; tRFC grows 18x from 1 to 64 Gb and these tasks' loads are "
                    "dense (about one per µs), so the count follows tRFC; the thesis's LLC-miss traces are sparser")
        if m == "cr_jedec_hits":
            return self._burst_cause(r(exp, "cr-jedec", d), r(exp, "cr", d), d)
        if m == "fgr_not_better_share":
            return "mean load latency, ns, by density: " + "; ".join(
                f"{x} Gb " + ", ".join(f"{SCHEME_NAMES[v]} {mean_latency(r(exp, v, x)):.1f}"
                                       for v in ("cr", "auto", "fgr2", "fgr4")) for x in (ds[0], ds[-1]))
        if m in self.INVARIANTS:
            own, off = r(exp, scheme, d), r(exp, "cr-none" if exp == "cr" else "auto-none", d)
            where = "" if exp == "cr" else " (auto-refresh's placement: the server has no no-refresh run of its own)"
            return (f"at {d} Gb under {SCHEME_NAMES[scheme]} {own['refresh_met']:,} loads met a refreshing rank; mean "
                    f"latency {mean_latency(own):.1f} ns against {mean_latency(off):.1f} ns without refresh{where}, "
                    f"utilisation {own['utilisation']:.3f} against {off['utilisation']:.3f}")
        return self._met_cause(r(exp, self.BASELINE.get(m, "auto"), d), r(exp, scheme, d), none, d,
                               self.BASELINE.get(m, "auto"), scheme)

    @staticmethod
    def _met_cause(base: dict[str, Any], ours: dict[str, Any], none: dict[str, Any], d: int, name: str,
                   scheme: str) -> str:
        """How the refresh scheme ``name`` delayed loads (its run ``base``) against the Colored
        Refresh scheme's run ``ours``."""
        loads = sum(t["loads"] for t in base["tasks"])
        trfc, trefi = base["config"]["tRFC_ns"], base["config"]["tREFI_ns"]
        return (f"at {d} Gb {base['refresh_met']:,} of {loads:,} {SCHEME_NAMES[name]} loads "
                f"({100 * base['refresh_met'] / loads:.1f} %) met a refreshing rank and waited for it (tRFC {trfc:.0f} ns "
                f"every {trefi / 1000:.2f} µs, {trfc / mean_latency(none):.0f}x the {mean_latency(none):.1f} ns no-refresh "
                f"latency; refresh also closes the rank's rows): mean latency {mean_latency(base):.1f} ns against "
                f"{SCHEME_NAMES[scheme]}'s {mean_latency(ours):.1f} ns ({ours['refresh_met']} met), utilisation "
                f"{base['utilisation']:.3f} against {ours['utilisation']:.3f}")

    @staticmethod
    def _burst_cause(jedec: dict[str, Any], thesis: dict[str, Any], d: int) -> str:
        """Colored Refresh with JEDEC's REF count: how long a rank's burst is against its frame."""
        cfg = jedec["config"]
        frame_ms = cfg["colour_frame"] * cfg["unit_us"] / 1000.0
        burst = lambda run: run["config"]["refs_per_window"] * run["config"]["tRFC_ns"] / 1e6  # noqa: E731
        loads = sum(t["loads"] for t in jedec["tasks"])
        return (f"at {d} Gb a rank's burst is {cfg['refs_per_window']:,} REFs x tRFC {cfg['tRFC_ns']:.0f} ns = "
                f"{burst(jedec):.1f} ms against its {frame_ms:g} ms frame"
                + (", so it runs on into the next colour's frame" if burst(jedec) > frame_ms else "")
                + f": {jedec['refresh_met']:,} of {loads:,} loads met a refreshing rank (longest load "
                f"{jedec['latency_ns']['max'] / 1e6:.2f} ms, mean {mean_latency(jedec):.1f} ns, utilisation "
                f"{jedec['utilisation']:.3f}); with the thesis's {thesis['config']['refs_per_window']:,} REFs the burst is "
                f"{burst(thesis):.1f} ms and {thesis['refresh_met']:,} met")

    def analyse(self, claims: list[dict[str, Any]], results: dict[str, Any]) -> dict[str, Any]:
        rows = []
        for c in claims:
            per_seed = [self._metric(c, results, s) for s in self.settings.seed_list()]
            row = Row(c, MACHINE, per_seed)
            row.cause = row.detail = self._cause(c, results)
            row.population = ("Table 4.4's task set" if c["experiment"] == "cr" else "Table 5.2's task set") + (
                ": its periods and WCETs, each task a synthetic load generator (compute, then loads at its pattern)")
            # The effect the claim is about: loads that auto-refresh delays, at its density or any.
            at = [c["density"]] if c.get("density") else list(self.densities)
            row.met_loads = statistics.fmean(
                sum(self._run(results, (c["experiment"], "auto", d, s))["refresh_met"] for d in at)
                for s in self.settings.seed_list())
            if row.met_loads == 0:
                row.not_applicable = "no load meets a refreshing rank under auto-refresh: there is no refresh effect to hide"
            rows.append(row)
        return {"rows": rows, "tables": self._tables(results), "plots": self._plots(results),
                "calibration": self._calibration(results)}

    def _calibration(self, results: dict[str, Any]) -> list[list[str]]:
        """Each set's utilisation without refresh against the thesis's: the headroom refresh
        must use up before a set becomes unschedulable."""
        seeds, rows = self.settings.seed_list(), []
        for exp, table, section in (("cr", "Table 4.4", "§4.5 Table 4.4 (Fig. 4.7's axis starts at 0.96)"),
                                    ("crs", "Table 5.2", "§5.4 Table 5.2 (Fig. 5.10's axis starts at 0.93)")):
            runs = [self._run(results, (exp, "auto-none", self.densities[0], s)) for s in seeds]
            u = [run["utilisation"] for run in runs]
            rows.append([f"{table}'s set: utilisation without refresh (sum of mean run time / period)",
                         f"{PAPER_UTILISATION[exp]:g}", f"{statistics.fmean(u):.3f} (range {min(u):.3f}-{max(u):.3f})",
                         f"the set under EDF, pages over every rank, no refresh: each job computes {COMPUTE_SHARE:.0%} of "
                         f"its WCET and issues {LOADS_PER_MS} loads per ms of it at {statistics.fmean(mean_latency(x) for x in runs):.1f} "
                         "ns each, so it runs under its WCET; the thesis's execution times are its WCETs (Σ e/p), so refresh "
                         "has less headroom to use up there",
                         f"pan-camc-tintmalloc-refresh.md {section} [inferred]"])
        return rows

    def _tables(self, results: dict[str, Any]) -> list[tuple[str, list[str], list[list[str]]]]:
        seed = self.settings.seed_list()[0]
        out = []
        for exp, variants, label in (("cr", CR_VARIANTS, "Table 4.4's set"), ("crs", CRS_VARIANTS, "Table 5.2's set")):
            body = []
            for d in self.densities:
                for v in variants:
                    run = self._run(results, (exp, v, d, seed))
                    body.append([f"{d} Gb", v, f"{run['config']['tRFC_ns']:.0f}", f"{run['utilisation']:.4f}",
                                 str(run["deadline_misses"]), f"{run['refresh_met']:,}", f"{mean_latency(run):.1f}",
                                 f"{run['latency_ns']['max']:.0f}"])
            out.append((f"{label}, seed {seed}: every scheme at every density",
                        ["density", "scheme", "tRFC ns", "utilisation", "deadline misses", "loads met refresh",
                         "mean latency ns", "max latency ns"], body))
        return out

    def _plots(self, results: dict[str, Any]) -> list[dict[str, Any]]:
        seeds = self.settings.seed_list()
        x = list(self.densities)

        def series(exp: str, variants: dict, f) -> dict[str, list[float]]:
            return {v: [statistics.fmean(f(self._run(results, (exp, v, d, s))) for s in seeds) for d in x] for v in variants}

        return [
            {"file": "refresh-latency.png", "title": "Table 4.4's set: mean load latency by density", "x": x,
             "series": series("cr", CR_VARIANTS, mean_latency), "xlabel": "device density, Gb",
             "ylabel": "mean load latency, ns", "xscale": "log2-up"},
            {"file": "refresh-utilisation.png", "title": "Table 4.4's set: measured utilisation by density", "x": x,
             "series": series("cr", CR_VARIANTS, lambda r: r["utilisation"]), "xlabel": "device density, Gb",
             "ylabel": "utilisation (mean run time / period)", "xscale": "log2-up"},
            {"file": "refresh-server.png", "title": "Table 5.2's set: mean load latency by density", "x": x,
             "series": series("crs", CRS_VARIANTS, mean_latency), "xlabel": "device density, Gb",
             "ylabel": "mean load latency, ns", "xscale": "log2-up"},
        ]
