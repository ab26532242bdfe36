"""Bandwidth-aware placement on DRAM + slow-memory tiers (bw-aware-tiering.md): the thesis's
placement policies against Local, interleave, DRAM-only and Linux's weighted interleave on the
tiering-{2,5,10}to1 machines (docs/numa.md), as the thesis ran one multithreaded program: its
threads split between the two sockets, the program's run time its last thread's (`at_end =
"wait"`).

Experiments: a purely bandwidth-bound stream (§6.3 test 5), the exact BW-INTERLEAVE split
(test 1), every program of the pool as an 8-thread program (headline figures: the intensive
ones; test 7: the others), each program's class measured in its own Local runs.
"""

from __future__ import annotations

import itertools
import math
import statistics
from typing import Any

from memtint.reproduce import common
from memtint.reproduce import verdict as verdict_rule
from memtint.reproduce.common import Row, Settings

NAME = "tiering"
TITLE = "Bandwidth-aware placement and migration on DRAM + NVM tiers (Yu, UNIST M.S. thesis 2018)"
RATIOS = (2, 5, 10)
POLICIES = ("local", "interleave", "dram-only", "weighted-interleave", "bw-interleave", "bw-random", "bw-local")
#: The policies each pool program runs under (the headline's pair and BW-I).
POOL_POLICIES = ("local", "bw-local", "bw-interleave")
POOL_RATIOS = (2, 10)
THREADS = 8
#: Multiprogrammed pairs (§3.5, §6.3 test 8): every pair of this many intensive programs, each
#: with half the cores (2 threads per node), the second half as long as the first, at 2:1.
PAIR_PROGRAMS = 5
PAIR_POLICIES = ("local", "bw-local")
#: A program is bandwidth-intensive on a tiering machine when its Local run drives the slow
#: node at this fraction of its peak or more: the throttle binds (the thesis's intensive
#: programs ran 11-18 GB/s, above its emulated NVM's bandwidth, bw-aware-tiering.md §3.3).
INTENSIVE_SLOW_NODE_SHARE = 0.5
#: The ratio whose Local runs class the pool, for every ratio: the thesis classes its programs once
#: (Table 4.3, measured under Local without throttling) and averages the same 7 intensive programs
#: at 2:1 and 10:1 (§4); 2:1 is the least throttled machine here and the thesis's default.
CLASS_RATIO = 2
#: The bandwidth-bound stream: 300 reads per kilo-instruction over 32 MB per thread.
STREAM = "stream:reads_pki=300,writes_pki=0,footprint_bytes=33554432"

#: Most warm-up per thread: these runs have 8 threads, 8x a one-program run's warm-up work, and
#: the pool's traces are warm after 2 M instructions each (the stream has no reuse at all).
WARMUP_CAP = 2_000_000

#: Per thread: the stream's window, and the pool programs' (`instructions`: the longest window a
#: suite trace must hold after its warm-up, tests/python/test_workload_suite.py).
SIZES = {"full": {"stream": 100_000, "instructions": 300_000, "migration": 2_000_000, "modern": 8_000_000},
         "quick": {"stream": 10_000, "instructions": 20_000, "migration": 20_000, "modern": 20_000}}

#: Migration (§6.3 test 10, BW-LM vs BW-L): the thesis's policy names -> (placement, migration),
#: with automatic NUMA balancing on under every policy, as on the thesis's Linux.
MIGRATION_SETUPS = {"Local": ("local", "numa-balancing"), "IL": ("interleave", "numa-balancing"),
                    "D-only": ("dram-only", "numa-balancing"), "BW-I": ("bw-interleave", "numa-balancing"),
                    "BW-R": ("bw-random", "numa-balancing"), "BW-L": ("bw-local", "numa-balancing"),
                    "BW-LM": ("bw-local", "bw-migration")}
#: The policies that migrate pages in the thesis (Fig. 5.6).
MIGRATING = ("Local", "BW-LM")

#: The baselines a user would pick today, beside the thesis's placements (§5.2): name ->
#: (placement, migration). Measured, not judged: the thesis has no figure for them.
MODERN_SETUPS = {"Local": ("local", "none"), "W-IL (Linux auto weights)": ("weighted-interleave", "none"),
                 "BW-L": ("bw-local", "none"), "Tiering mode (TPP)": ("local", "memory-tiering"),
                 "DAMON": ("local", "damon"), "Colloid": ("local", "colloid")}
#: The two workloads: a hot set larger than the LLC on a fast tier smaller than the footprint
#: (first touch leaves the hot set on the slow node), and bandwidth-bound streams that fit the
#: fast tier (Local congests it).
#: Each with the setups that can act on it: on a full fast tier the placements all fall back alike
#: (BW-L stands for them); on an ample one nothing is cold, so the hotness tiers move nothing.
MODERN_WORKLOADS = {"hot set, fast tier 24 of 64 MiB": ("hotset:hot_bytes=16777216", [24, 0],
                                                        ("Local", "BW-L", "Tiering mode (TPP)", "DAMON", "Colloid")),
                    "streams, fast tier ample": ("stream:footprint_bytes=33554432", [],
                                                 ("Local", "W-IL (Linux auto weights)", "BW-L", "Colloid"))}
MODERN_THREADS = 4


def gain_precondition(pair_gain: float, single_gain: float, singles: int) -> str:
    """Why "the pairs gain less than the single programs" cannot hold (the thesis's +18.8 % below
    +34.8 %): it compares two gains, so BW-L must gain on both; "" when it does."""
    if not singles or math.isnan(single_gain):
        return "no bandwidth-intensive single program to compare the pairs' gain with"
    if pair_gain > 0 and single_gain > 0:
        return ""
    return (f"the claim compares two gains and BW-L's over Local is {pair_gain:+.1f} % on the pairs' makespan and "
            f"{single_gain:+.1f} % on the {singles} bandwidth-intensive single programs at 2:1"
            + (f" (pairs minus single programs {pair_gain - single_gain:+.1f} points: "
               + ("a larger loss, not a smaller gain)" if pair_gain < single_gain else "a smaller loss, not a gain)")
               if pair_gain <= 0 and single_gain <= 0 else ""))


def machine(r: int) -> str:
    return f"tiering-{r}to1"


def makespan(run: dict[str, Any]) -> float:
    return float(max(c["finished_at"] for c in run["cores"]))


class Experiment:
    name = NAME
    title = TITLE

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        size = SIZES["quick" if settings.quick else "full"]
        self.stream_instructions = settings.instructions(size["stream"])
        self.pool_instructions = settings.instructions(size["instructions"])
        self.migration_instructions = settings.instructions(size["migration"])
        self.modern_instructions = settings.instructions(size["modern"])
        self.pool = list(common.ALL) if not settings.quick else ["triad", "light"]
        # The intensive programs (alone LLC MPKI > 1 on the i7-860, as BPM's pool), the first five.
        self.pair_pool = ["triad", "stream"] if settings.quick else list(common.INTENSIVE)[:PAIR_PROGRAMS]
        self.pairs = list(itertools.combinations(self.pair_pool, 2))
        self.keys: dict[tuple, str] = {}
        self.jobs: list[dict[str, Any]] = []

    def describe(self) -> list[str]:
        return [
            f"Machines tiering-2to1, tiering-5to1, tiering-10to1 (docs/numa.md): 2 nodes x 4 cores, node 0 DDR4-2400 "
            "(19.2 GB/s), node 1 the same throttled to 1/2, 1/5, 1/10 of its bandwidth, as the thesis emulated NVM; "
            "+50 ns and a 19.2 GB/s link across nodes (assumed). The thesis's machine had 16 threads over 2 sockets; "
            f"here {THREADS} threads, 4 per node, of one program: a thread that finished waits at the end (at_end = "
            "\"wait\"), and the run time is the last thread's.",
            f"Bandwidth-bound stream (§6.3 test 5): {THREADS} threads each streaming its own 32 MB at 300 reads per "
            f"kilo-instruction, {self.stream_instructions:,} instructions per thread.",
            f"Pool programs: each of {', '.join(self.pool)} as an {THREADS}-thread program ({THREADS} copies, each its "
            f"own address space), {self.pool_instructions:,} instructions per thread, at 2:1 and 10:1 under {', '.join(POOL_POLICIES)}. A program is bandwidth-intensive when its Local "
            f"run at {CLASS_RATIO}:1 drives the slow node at {INTENSIVE_SLOW_NODE_SHARE:.0%} of its peak or more, "
            f"non-intensive otherwise, at every ratio (the thesis classes its programs once, Table 4.3, and averages "
            f"the same ones at 2:1 and 10:1); a program below {verdict_rule.MIN_DRAM_PKI:g} DRAM request per "
            "kilo-instruction in those runs is in neither class (placement has no traffic to act on). The thesis's population is 7 intensive and 5 non-intensive PARSEC/SPLASH-2/Spark programs with 16 "
            "threads (§3.3), which this pool stands in for. The presets have no hardware prefetcher (the thesis's "
            "Haswell-EP ran with its prefetchers on), so these programs wait on more of their misses than the "
            "thesis's did, and remote latency weighs more against bandwidth here.",
            f"Multiprogrammed pairs (§3.5, test 8): every pair of {', '.join(self.pair_pool)} (the first "
            f"{PAIR_PROGRAMS} intensive programs, alone LLC MPKI > 1 on the i7-860), {len(self.pairs)} pairs at 2:1, "
            f"each program {THREADS // 2} threads (2 per node; each its own data), the first "
            f"{self.pool_instructions:,} instructions per thread and the second half that, so that one ends first "
            "(the thesis's pairs ended apart by their own lengths); makespan under Local and BW-L.",
            f"Migration (§6.3 test 10, BW-LM vs BW-L): one {THREADS}-thread process (4 threads per node) whose threads "
            f"stream one shared 32 MB footprint, {self.migration_instructions:,} instructions per thread, at 2:1, "
            "with automatic NUMA balancing on under every policy as on the thesis's Linux (os.migration = "
            "numa-balancing; BW-LM: bw-local with bw-migration, M = 256 pages) at its default scan rate, Linux's "
            "256 MiB/s (docs/numa.md, Migration). The thesis's runs lasted minutes; these last milliseconds, so "
            "migration moves a small part of the footprint here. The gate's exact counts (test 9) are unit- and "
            "run-tested (tests/engine/migration.rs), the Linux side (tests 9 and 11) in tests/python/test_tiering_linux.py.",
            f"Today's baselines (§5.2), measured beside the thesis's placements, not judged (the thesis has no figure "
            f"for them): {MODERN_THREADS} threads of one process on the DRAM node at 2:1, "
            f"{self.modern_instructions:,} instructions each, on two workloads: "
            + "; ".join(f"{w} ({program}{', os.node_memory_mb = ' + str(limit) if limit else ''}: {', '.join(setups)})"
                        for w, (program, limit, setups) in MODERN_WORKLOADS.items())
            + ". Policies: " + ", ".join(f"{k} ({p} + {m})" for k, (p, m) in MODERN_SETUPS.items())
            + ". Migration at its defaults: Linux's scan rate for the tiering mode; DAMON's intervals scaled as the "
            "scan is; one sample in 64 LLC-miss reads and at most 256 pages a millisecond for Colloid "
            "(docs/numa.md, Migration). The runs last about 10 ms: a policy's moves are an investment (copy traffic "
            "on the busy slow node, shootdowns) that the table shows before it has paid back.",
        ]

    def _add(self, key: tuple, spec: dict[str, Any]) -> None:
        common.add_job(self.keys, self.jobs, key, spec, self.settings, WARMUP_CAP)

    def plan(self) -> list[dict[str, Any]]:
        for seed in self.settings.seed_list():
            for r in RATIOS:
                for p in POLICIES:
                    self._add(("stream", r, p, seed), {
                        "machine": machine(r), "programs": [STREAM] * THREADS, "instructions": self.stream_instructions,
                        "os": {"policy": p}, "at_end": "wait", "seed": seed})
            for r in POOL_RATIOS:
                for name in self.pool:
                    for p in POOL_POLICIES:
                        spec = {"machine": machine(r), "programs": [common.program_path(name)] * THREADS,
                                "instructions": self.pool_instructions, "os": {"policy": p}, "at_end": "wait",
                                "seed": seed}
                        self._add(("pool", r, name, p, seed), spec)
            for a, b in self.pairs:
                half = THREADS // 2
                procs = [{"threads": [{"program": common.program_path(p), "affinity": [core]}], "instructions": n}
                         for p, n, cores in ((a, self.pool_instructions, (0, 1, 4, 5)),
                                             (b, self.pool_instructions // 2, (2, 3, 6, 7)))
                         for core in cores[:half]]
                for p in PAIR_POLICIES:
                    self._add(("pair", a, b, p, seed), {
                        "machine": machine(2), "programs": [], "processes": procs, "instructions": self.pool_instructions,
                        "os": {"policy": p}, "at_end": "wait", "seed": seed})
            for w, (program, limit, setups) in MODERN_WORKLOADS.items():
                threads = [{"program": f"{program},seed={seed * 10 + t}", "affinity": [t]} for t in range(MODERN_THREADS)]
                for label in setups:
                    p, m = MODERN_SETUPS[label]
                    os_opts = {"policy": p, "migration": m, **({"node_memory_mb": limit} if limit else {})}
                    self._add(("modern", w, label, seed), {
                        "machine": machine(2), "programs": [], "processes": [{"threads": threads}],
                        "instructions": self.modern_instructions, "os": os_opts, "at_end": "wait", "seed": seed})
            threads = [{"program": STREAM, "affinity": [core]} for core in range(THREADS)]
            for label, (p, m) in MIGRATION_SETUPS.items():
                self._add(("migration", label, seed), {
                    "machine": machine(2), "programs": [], "processes": [{"threads": threads}],
                    "instructions": self.migration_instructions, "os": {"policy": p, "migration": m},
                    "at_end": "wait", "seed": seed})
        for r in RATIOS:  # placement only: one thread maps 3000 pages (deterministic, one seed)
            self._add(("split", r), {"machine": machine(r), "programs": ["light:footprint_bytes=12288000"],
                                     "instructions": 1000, "os": {"policy": "bw-interleave"}})
        return self.jobs

    # --- measures ---------------------------------------------------------------------------

    def _run(self, results: dict[str, Any], key: tuple) -> dict[str, Any]:
        return results[self.keys[key]]

    def _speedup(self, results: dict[str, Any], kind: str, r: int, over: str, policy: str, seed: int,
                 name: str | None = None) -> float:
        key = (lambda p: ("stream", r, p, seed)) if kind == "stream" else (lambda p: ("pool", r, name, p, seed))
        return makespan(self._run(results, key(over))) / makespan(self._run(results, key(policy)))

    def slow_node_share(self, results: dict[str, Any], r: int, name: str) -> float:
        """Slow-node bandwidth over its peak in the program's Local runs (mean over seeds)."""
        shares = []
        for seed in self.settings.seed_list():
            nodes = self._run(results, ("pool", r, name, "local", seed))["nodes"]
            shares.append(nodes[1]["bandwidth_gbps"] / nodes[1]["peak_gbps"])
        return statistics.fmean(shares)

    def analyse(self, claims: list[dict[str, Any]], results: dict[str, Any]) -> dict[str, Any]:
        seeds = self.settings.seed_list()
        rows = []
        for c in claims:
            r = int(c["ratio"])
            if c["experiment"] == "stream":
                per_seed = [self._speedup(results, "stream", r, c["over"], c["policy"], s) for s in seeds]
                row = Row(c, machine(r), per_seed)
                row.population = f"{THREADS} bandwidth-bound stream threads"
                runs = [self._run(results, ("stream", r, c["over"], s)) for s in seeds]
                row.dram_pki, row.not_applicable = common.effect("the stream", runs)
                row.detail = self._stream_cause(results, r, c)
            elif c["experiment"] == "split":
                run = self._run(results, ("split", r))
                row = Row(c, machine(r), [float(run["processes"][0]["pages_per_node"][0])])
                row.population = "one thread mapping 3000 pages"
                row.placed_pages = float(sum(run["processes"][0]["pages_per_node"]))
                row.detail = f"pages per node {run['processes'][0]['pages_per_node']}"
            elif c["experiment"] == "pairs":
                row = self._pairs_row(results, c)
            elif c["experiment"] == "migration":
                row = self._migration_row(results, c)
            else:
                row = self._pool_row(results, c, r)
            rows.append(row)
        return {"rows": rows, "tables": self._tables(results), "plots": [self._plot(results)],
                "notes": [self.classes_note(results)]}

    def classes_note(self, results: dict[str, Any]) -> str:
        """The pool's classes as measured, for the set-up."""
        pki = lambda n: f"{n} ({self._local_pki(results, CLASS_RATIO, n):.1f})"  # noqa: E731
        low = self.unclassed(results)
        return (f"Classes of the pool (Local at {CLASS_RATIO}:1, the same at every ratio; DRAM requests per "
                f"kilo-instruction in brackets): bandwidth-intensive {', '.join(map(pki, self.members(results, True))) or 'none'}; "
                f"non-intensive {', '.join(map(pki, self.members(results, False))) or 'none'}"
                + (f"; in neither, below {verdict_rule.MIN_DRAM_PKI:g}: {', '.join(map(pki, low))}" if low else "") + ".")

    def _stream_cause(self, results: dict[str, Any], r: int, c: dict[str, Any]) -> str:
        seeds = self.settings.seed_list()
        parts = []
        for p in (c["over"], c["policy"]):
            share = [[n["bandwidth_gbps"] / n["peak_gbps"] for n in self._run(results, ("stream", r, p, s))["nodes"]]
                     for s in seeds]
            fast, slow = (statistics.fmean(x[i] for x in share) for i in (0, 1))
            parts.append(f"{p}: fast node at {fast:.0%} of its peak, slow node at {slow:.0%}")
        return ("; ".join(parts) + ". The ideal assumes both nodes full; each thread's MSHRs and in-order window are held "
                "by its slow-node reads, so neither node stays full (docs/numa.md, Bandwidth binds)")

    def throttle_slowdown(self, results: dict[str, Any], r: int, name: str) -> float:
        """How much later the slow node's threads finish than the fast node's under Local (mean
        over seeds, %): whether the slow node's bandwidth binds for this program."""
        out = []
        for seed in self.settings.seed_list():
            t = [c["finished_at"] for c in self._run(results, ("pool", r, name, "local", seed))["cores"]]
            half = len(t) // 2
            out.append(100 * (statistics.fmean(t[half:]) / statistics.fmean(t[:half]) - 1))
        return statistics.fmean(out)

    def _local_pki(self, results: dict[str, Any], r: int, name: str) -> float:
        return statistics.fmean(common.dram_pki(self._run(results, ("pool", r, name, "local", s)))
                                for s in self.settings.seed_list())

    def _core_mean(self, results: dict[str, Any], r: int, name: str, policy: str, key: str) -> float:
        """A per-thread statistic's mean over the program's threads and the seeds."""
        return statistics.fmean(statistics.fmean(c[key] or 0.0 for c in
                                                 self._run(results, ("pool", r, name, policy, s))["cores"])
                                for s in self.settings.seed_list())

    def _gain(self, results: dict[str, Any], r: int, name: str, over: str, policy: str) -> float:
        return statistics.fmean(100 * (self._speedup(results, "pool", r, over, policy, s, name) - 1)
                                for s in self.settings.seed_list())

    def members(self, results: dict[str, Any], intensive: bool) -> list[str]:
        """The pool's bandwidth-intensive programs (slow node at half its peak or more under Local
        at CLASS_RATIO) or its non-intensive ones, the same at every ratio; either class only of
        programs that reach DRAM (a claim about placement says nothing about a program that never
        goes to memory)."""
        r = CLASS_RATIO
        return [n for n in self.pool if self._local_pki(results, r, n) >= verdict_rule.MIN_DRAM_PKI
                and (self.slow_node_share(results, r, n) >= INTENSIVE_SLOW_NODE_SHARE) == intensive]

    def unclassed(self, results: dict[str, Any]) -> list[str]:
        """The pool's programs below MIN_DRAM_PKI at CLASS_RATIO: in neither class."""
        return [n for n in self.pool if self._local_pki(results, CLASS_RATIO, n) < verdict_rule.MIN_DRAM_PKI]

    def _time_change(self, results: dict[str, Any], r: int, name: str, policy: str, seed: int) -> float:
        """The program's run time under ``policy`` against Local's, % (+: slower)."""
        return 100 * (1 / self._speedup(results, "pool", r, "local", policy, seed, name) - 1)

    def _slow_peak(self, results: dict[str, Any], r: int, name: str) -> float:
        return float(self._run(results, ("pool", r, name, "local", self.settings.seed_list()[0]))["nodes"][1]["peak_gbps"])

    def _population(self, results: dict[str, Any], r: int, members: list[str], intensive: bool,
                    policies: tuple[str, ...]) -> str:
        kind = "bandwidth-intensive" if intensive else "non-intensive"
        low = self.unclassed(results)
        return (f"{len(members)} {kind} programs at {r}:1" + (f" ({', '.join(members)})" if members else "")
                + f" under {', '.join(policies)} against local; classed by their Local runs at {CLASS_RATIO}:1 (slow "
                f"node at {'≥' if intensive else '<'} {INTENSIVE_SLOW_NODE_SHARE:.0%} of its peak, ≥ "
                f"{verdict_rule.MIN_DRAM_PKI:g} DRAM request per kilo-instruction), the class at every ratio"
                + (f"; in neither class, below {verdict_rule.MIN_DRAM_PKI:g}: "
                   + ", ".join(f"{n} ({self._local_pki(results, CLASS_RATIO, n):.1f})" for n in low) if low else ""))

    def _pool_row(self, results: dict[str, Any], c: dict[str, Any], r: int) -> Row:
        seeds = self.settings.seed_list()
        want_intensive = c["experiment"] == "intensive"
        # The thesis classes its programs once: a non-intensive program whose slow node saturates
        # at 10:1 stays in the claim, and the saturation is the measured cause of its miss.
        members = self.members(results, want_intensive)
        metric = c["metric"]
        over = c.get("over", "local")
        if metric == "max_abs_time_change":
            policies = POOL_POLICIES[1:]
            per_seed = [max((abs(self._time_change(results, r, n, p, s)) for n in members for p in policies),
                            default=float("nan")) for s in seeds]
        elif metric == "abs_mean_gain_gap_pct":
            # The thesis's 0.5 % is the gap between the two policies' average gains over Local.
            policies = (c["policy"], over)
            per_seed = [abs(self._mean_gain(results, r, members, c["policy"], s)
                            - self._mean_gain(results, r, members, over, s)) if members else float("nan")
                        for s in seeds]
        else:
            policies = (c["policy"],)
            per_seed = [self._mean_gain(results, r, members, c["policy"], s, over) if members else float("nan")
                        for s in seeds]
        row = Row(c, machine(r), per_seed)
        row.population = self._population(results, r, members, want_intensive, policies)
        if not members:
            kind = "bandwidth-intensive" if want_intensive else "non-intensive"
            row.not_applicable = (f"no program of the pool with ≥ {verdict_rule.MIN_DRAM_PKI:g} DRAM request per "
                                  f"kilo-instruction is {kind} (Local at {CLASS_RATIO}:1): there is no subject")
            return row
        row.dram_pki = statistics.fmean(self._local_pki(results, r, n) for n in members)
        if metric == "max_abs_time_change":
            row.detail = self._unaffected_cause(results, r, members, policies)
        elif metric == "abs_mean_gain_gap_pct":
            row.detail = self._gap_cause(results, r, members, c["policy"], over)
        else:
            row.detail = self._gain_cause(results, r, members, c["policy"], over, statistics.fmean(per_seed))
        return row

    def _mean_gain(self, results: dict[str, Any], r: int, members: list[str], policy: str, seed: int,
                   over: str = "local") -> float:
        """``policy``'s gain over ``over`` averaged over ``members`` on one seed, %."""
        return statistics.fmean(100 * (self._speedup(results, "pool", r, over, policy, seed, n) - 1) for n in members)

    def _program_text(self, results: dict[str, Any], r: int, n: str, over: str, policy: str,
                      throttle: bool = True) -> str:
        """One program's gain of ``policy`` over ``over`` with the statistics it rests on."""
        return (f"{n} {self._gain(results, r, n, over, policy):+.0f} % ("
                + (f"slow-node threads {self.throttle_slowdown(results, r, n):+.0f} % under Local; " if throttle else "")
                + f"remote reads "
                f"{self._core_mean(results, r, n, over, 'remote_read_fraction'):.0%} → "
                f"{self._core_mean(results, r, n, policy, 'remote_read_fraction'):.0%}; load latency "
                f"{self._core_mean(results, r, n, over, 'load_latency_cycles'):.0f} → "
                f"{self._core_mean(results, r, n, policy, 'load_latency_cycles'):.0f} cycles)")

    def _gain_cause(self, results: dict[str, Any], r: int, members: list[str], policy: str, over: str,
                    mean: float) -> str:
        binds = [n for n in members if self.throttle_slowdown(results, r, n) >= 10]
        free = [n for n in members if n not in binds]
        say = lambda ns: ", ".join(self._program_text(results, r, n, over, policy) for n in ns) or "none"  # noqa: E731
        return (f"{policy} over {over}, {mean:+.1f} % on average over the {len(members)} programs; where the slow "
                f"node's bandwidth binds under Local (its threads finish ≥ 10 % after the fast node's): {say(binds)}; "
                f"where it does not: {say(free)}; BW-aware placement sends 1/3 to 2/3 of each thread's reads across "
                "sockets (+50 ns each, and the link)" + (
                    ", and where the slow node's bandwidth does not bind hard that latency costs more than the "
                    "bandwidth gained" if free and all(self._gain(results, r, n, over, policy) < 0 for n in free)
                    else ""))

    def _gap_cause(self, results: dict[str, Any], r: int, members: list[str], policy: str, over: str) -> str:
        seeds = self.settings.seed_list()
        gap = [self._mean_gain(results, r, members, policy, s) - self._mean_gain(results, r, members, over, s)
               for s in seeds]
        mean = {p: statistics.fmean(self._mean_gain(results, r, members, p, s) for s in seeds) for p in (policy, over)}
        return (f"{policy}'s gain over Local averages {mean[policy]:+.1f} % over the {len(members)} programs and "
                f"{over}'s {mean[over]:+.1f} %, {policy} minus {over} " + ", ".join(f"{g:+.2f}" for g in gap)
                + f" % by seed; per program {policy} over {over}: "
                + ", ".join(self._program_text(results, r, n, over, policy, throttle=False) for n in members)
                + "; both split each thread's pages D:N and differ only in which part of the cycle comes first (§2.6)")

    def _slow_read_share(self, results: dict[str, Any], r: int, name: str, policy: str) -> float:
        """The slow node's share of the program's DRAM reads (mean over seeds)."""
        return statistics.fmean(n[1]["reads"] / max(1, n[0]["reads"] + n[1]["reads"]) for n in
                                (self._run(results, ("pool", r, name, policy, s))["nodes"] for s in self.settings.seed_list()))

    def _unaffected_cause(self, results: dict[str, Any], r: int, members: list[str], policies: tuple[str, ...]) -> str:
        """Each program's run-time change under each policy (the figure's statistic), and why: how
        hard the slow node's bandwidth binds it under Local, and what the remote reads cost."""
        seeds = self.settings.seed_list()
        largest = [max((abs(self._time_change(results, r, n, p, s)), n, p) for n in members for p in policies)
                   for s in seeds]
        parts = []
        for n in members:
            change = ", ".join(f"{statistics.fmean(self._time_change(results, r, n, p, s) for s in seeds):+.1f} % "
                               f"under {p}" for p in policies)
            share, late, peak = self.slow_node_share(results, r, n), self.throttle_slowdown(results, r, n), \
                self._slow_peak(results, r, n)
            under = (f"under Local its slow node serves {self._slow_read_share(results, r, n, 'local'):.0%} of its reads "
                     f"at {share:.0%} of its {peak:.2f} GB/s peak"
                     + (f" (at {CLASS_RATIO}:1, where it is classed, {self.slow_node_share(results, CLASS_RATIO, n):.0%})"
                        if r != CLASS_RATIO else "")
                     + f" and its threads finish {late:+.0f} % after the fast node's")
            latency = ", ".join(f"{self._core_mean(results, r, n, 'local', 'load_latency_cycles'):.0f} → "
                                f"{self._core_mean(results, r, n, p, 'load_latency_cycles'):.0f} cycles under {p}"
                                for p in policies)
            if late >= 10:
                why = (f"{under}: its bandwidth binds, and BW-aware placement cuts the slow node's share of the reads to "
                       + " and ".join(f"{self._slow_read_share(results, r, n, p):.0%}" for p in policies)
                       + f" (load latency {latency})")
            else:
                why = (f"{under}: its bandwidth does not bind, so BW-aware placement gains no bandwidth and sends "
                       + " and ".join(f"{self._core_mean(results, r, n, p, 'remote_read_fraction'):.0%}" for p in policies)
                       + f" of the reads across sockets, none under Local (load latency {latency})")
            parts.append(f"{n} {change}, as {why}")
        return (f"the figure is each seed's largest |run-time change| against Local, "
                + ", ".join(f"{x:.1f} % ({n}, {p})" for x, n, p in largest)
                + f", averaging {statistics.fmean(x for x, _, _ in largest):.1f} %; per program "
                f"(mean over seeds): " + "; ".join(parts))

    def _pair_gain(self, results: dict[str, Any], a: str, b: str, seed: int) -> float:
        """BW-L's makespan gain over Local on one pair, %."""
        t = {p: makespan(self._run(results, ("pair", a, b, p, seed))) for p in PAIR_POLICIES}
        return 100 * (t["local"] / t["bw-local"] - 1)

    def _pairs_row(self, results: dict[str, Any], c: dict[str, Any]) -> Row:
        seeds = self.settings.seed_list()
        gains = [statistics.fmean(self._pair_gain(results, a, b, s) for a, b in self.pairs) for s in seeds]
        singles = self.members(results, True)
        if c["metric"] == "pairs_minus_single_pct":
            single = [self._mean_gain(results, 2, singles, "bw-local", s) if singles else float("nan") for s in seeds]
            per_seed = [g - x for g, x in zip(gains, single)]
        else:
            per_seed = gains
        row = Row(c, machine(2), per_seed)
        row.population = f"{len(self.pairs)} pairs of {', '.join(self.pair_pool)} at 2:1, under local and bw-local" + (
            f", against the {len(singles)} bandwidth-intensive programs alone at 2:1 (the headline row's)"
            if c["metric"] == "pairs_minus_single_pct" else "")
        runs = [self._run(results, ("pair", a, b, "local", s)) for a, b in self.pairs for s in seeds]
        row.dram_pki, row.not_applicable = common.effect("the pairs under Local", runs)
        per_pair = ", ".join(f"{a}+{b} {statistics.fmean(self._pair_gain(results, a, b, s) for s in seeds):+.0f} %"
                             for a, b in self.pairs)
        remote = statistics.fmean(statistics.fmean(x["remote_read_fraction"] or 0.0 for x in r["cores"])
                                  for r in (self._run(results, ("pair", a, b, "bw-local", s))
                                            for a, b in self.pairs for s in seeds))
        pair_gain = statistics.fmean(gains)
        detail = (f"BW-L's makespan gain over Local, {pair_gain:+.1f} % on average over the {len(self.pairs)} pairs: "
                  f"{per_pair}; under BW-L {remote:.0%} of the reads cross sockets (none under Local): the "
                  "latency-bound pairs lose as the single programs do (the headline rows). The thesis explains its "
                  "smaller gain on pairs by demand dropping below the slow node's bandwidth once the shorter program ends")
        if c["metric"] == "pairs_minus_single_pct":
            row.precondition_failed = gain_precondition(pair_gain, statistics.fmean(single), len(singles))
            if row.precondition_failed:
                detail = f"{row.precondition_failed}; per pair {per_pair}, with {remote:.0%} of the reads across sockets under BW-L"
        row.detail = detail
        return row

    def _migration(self, results: dict[str, Any], label: str, seed: int) -> dict[str, Any]:
        return self._run(results, ("migration", label, seed)).get("page_migration") or {}

    def _migration_row(self, results: dict[str, Any], c: dict[str, Any]) -> Row:
        seeds = self.settings.seed_list()
        moved = {label: statistics.fmean(self._migration(results, label, s).get("pages_moved", 0) for s in seeds)
                 for label in MIGRATION_SETUPS}
        if c["metric"] == "migration_mismatches":
            per_seed = [float(sum((self._migration(results, label, s).get("pages_moved", 0) > 0) != (label in MIGRATING)
                                  for label in MIGRATION_SETUPS)) for s in seeds]
        else:
            per_seed = [100 * (makespan(self._run(results, ("migration", "BW-L", s)))
                               / makespan(self._run(results, ("migration", "BW-LM", s))) - 1) for s in seeds]
        row = Row(c, machine(2), per_seed)
        row.population = f"one {THREADS}-thread process streaming a shared 32 MB footprint"
        runs = [self._run(results, ("migration", "Local", s)) for s in seeds]
        row.dram_pki, row.not_applicable = common.effect("the shared stream under Local", runs)
        system = {}
        for label in ("Local", "BW-L", "BW-LM"):
            share = []
            for s in seeds:
                run = self._run(results, ("migration", label, s))
                cyc = sum(x["cycles"] for x in run["cores"])
                share.append(sum((x.get("page_migration") or {}).get("system_cycles", 0) for x in run["cores"]) / max(1, cyc))
            system[label] = statistics.fmean(share)
        lm = [self._migration(results, "BW-LM", s) for s in seeds]
        row.detail = ("pages moved per run (mean): " + ", ".join(f"{k} {v:,.0f}" for k, v in moved.items())
                      + f"; the gate refused {statistics.fmean(m.get('refused', 0) for m in lm):,.0f} of BW-LM's moves; "
                      "system time (hinting faults, moves, shootdowns) over core cycles: "
                      + ", ".join(f"{k} {v:.1%}" for k, v in system.items())
                      + ". Under BW-L NUMA balancing scans nothing (bw-local is not MPOL_F_MOF), so BW-LM's cost is its "
                      "faults and moves, its gain the remote reads its moves make local")
        return row

    def _tables(self, results: dict[str, Any]) -> list[tuple[str, list[str], list[list[str]]]]:
        seeds = self.settings.seed_list()
        tables = []
        body = []
        for r in RATIOS:
            base = [makespan(self._run(results, ("stream", r, "local", s))) for s in seeds]
            for p in POLICIES:
                t = [makespan(self._run(results, ("stream", r, p, s))) for s in seeds]
                nodes = [self._run(results, ("stream", r, p, s))["nodes"] for s in seeds]
                body.append([f"{r}:1", p, f"{statistics.fmean(t):,.0f}",
                             f"{statistics.fmean(b / x for b, x in zip(base, t)):.3f}",
                             f"{statistics.fmean(n[0]['bandwidth_gbps'] for n in nodes):.1f}",
                             f"{statistics.fmean(n[1]['bandwidth_gbps'] for n in nodes):.2f}",
                             f"{statistics.fmean(n[0]['pages'] / max(1, n[0]['pages'] + n[1]['pages']) for n in nodes):.3f}"])
        tables.append(("Bandwidth-bound stream: run time per policy and ratio (mean over seeds)",
                       ["DRAM:NVM", "policy", "run time, core cycles", "speedup over local", "node 0 GB/s",
                        "node 1 GB/s", "DRAM share of pages"], body))
        body = []
        for r in POOL_RATIOS:
            for n in self.pool:
                base = [makespan(self._run(results, ("pool", r, n, "local", s))) for s in seeds]
                cells = [f"{r}:1", n, f"{self.slow_node_share(results, r, n):.0%}",
                         f"{self.throttle_slowdown(results, r, n):+.0f} %",
                         f"{statistics.fmean(common.dram_pki(self._run(results, ('pool', r, n, 'local', s))) for s in seeds):.1f}"]
                for p in POOL_POLICIES[1:]:
                    t = [makespan(self._run(results, ("pool", r, n, p, s))) for s in seeds]
                    cells.append(f"{statistics.fmean(100 * (b / x - 1) for b, x in zip(base, t)):+.1f} %")
                body.append(cells)
        tables.append((f"Pool programs as {THREADS}-thread programs: class and gain over Local (mean over seeds)",
                       ["DRAM:NVM", "program", "slow node's share of its peak under Local",
                        "slow-node threads finish later than fast-node threads under Local by", "DRAM requests PKI (Local)",
                        *(f"{p} over local" for p in POOL_POLICIES[1:])], body))
        body = []
        base = [makespan(self._run(results, ("migration", "Local", s))) for s in seeds]
        for label, (p, m) in MIGRATION_SETUPS.items():
            runs = [self._run(results, ("migration", label, s)) for s in seeds]
            pm = [r.get("page_migration") or {} for r in runs]
            body.append([label, p, m, f"{statistics.fmean(b / makespan(r) for b, r in zip(base, runs)):.3f}",
                         f"{statistics.fmean(x.get('hint_faults', 0) for x in pm):,.0f}",
                         f"{statistics.fmean(x.get('pages_moved', 0) for x in pm):,.0f}",
                         f"{statistics.fmean(x.get('refused', 0) for x in pm):,.0f}",
                         f"{statistics.fmean(r['nodes'][0]['pages'] / max(1, r['nodes'][0]['pages'] + r['nodes'][1]['pages']) for r in runs):.3f}"])
        tables.append(("Migration at 2:1 (shared 32 MB stream, NUMA balancing on; mean over seeds)",
                       ["policy", "placement", "migration", "speedup over Local", "hinting faults", "pages moved",
                        "refused by the gate", "DRAM share of pages at the end"], body))
        body = []
        for w, (_, _, setups) in MODERN_WORKLOADS.items():
            base = [makespan(self._run(results, ("modern", w, "Local", s))) for s in seeds]
            for label in setups:
                p, m = MODERN_SETUPS[label]
                runs = [self._run(results, ("modern", w, label, s)) for s in seeds]
                pm = [r.get("page_migration") or {} for r in runs]
                gain = [100 * (b / makespan(r) - 1) for b, r in zip(base, runs)]
                system = [sum((x.get("page_migration") or {}).get("system_cycles", 0) for x in r["cores"])
                          / max(1, sum(x["cycles"] for x in r["cores"])) for r in runs]
                body.append([w, label, f"{p} + {m}", f"{statistics.fmean(gain):+.1f} % (sd {statistics.stdev(gain) if len(gain) > 1 else 0.0:.1f})",
                             f"{statistics.fmean(r['nodes'][0]['reads'] / max(1, r['nodes'][0]['reads'] + r['nodes'][1]['reads']) for r in runs):.0%}",
                             f"{statistics.fmean(x.get('pages_moved', 0) for x in pm):,.0f}",
                             f"{statistics.fmean(x.get('hint_faults', 0) for x in pm):,.0f}",
                             f"{statistics.fmean(system):.1%}"])
        tables.append((f"Today's baselines beside the thesis's (2:1, {MODERN_THREADS} threads of one process on the DRAM "
                       f"node, {self.modern_instructions:,} instructions each; mean over seeds)",
                       ["workload", "policy", "placement + migration", "speedup over Local", "reads served by DRAM",
                        "pages moved", "hinting faults", "system time"], body))
        return tables

    def _plot(self, results: dict[str, Any]) -> dict[str, Any]:
        seeds = self.settings.seed_list()
        series = {}
        for p in POLICIES:
            series[p] = [statistics.fmean(makespan(self._run(results, ("stream", r, "local", s)))
                                          / makespan(self._run(results, ("stream", r, p, s))) for s in seeds)
                         for r in RATIOS]
        return {"file": "tiering-stream.png", "title": "Bandwidth-bound stream: speedup over Local per DRAM:NVM ratio",
                "x": list(RATIOS), "series": series, "reference": {"ideal BW-aware (r+1)/2": [(r + 1) / 2 for r in RATIOS]},
                "xlabel": "DRAM:NVM bandwidth ratio r",
                "ylabel": "speedup over local", "xscale": "linear"}

