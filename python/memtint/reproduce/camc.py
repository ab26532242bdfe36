"""CAMC and TintMalloc on the Pan thesis's NUMA machine (pan-camc-tintmalloc-refresh.md §2-3,
§9.2): the `camc` and `tintmalloc` policies (docs/numa.md, "Colours within nodes") on the
opteron-6128 preset, with the thesis's same_bank / diff_bank / diff_controller configurations
as fixed CAMC colours.

Experiments: the hop calibration (Table 2.1), a foreground with 0-3 background copies of itself
under the three configurations (Figs. 2.6-2.7: the Palloc latency benchmark and the alternating
stride), four threads on one node (Table 2.2), one task per controller against four (Fig. 2.4,
2.5: single-core equivalence), sixteen-thread SPMD programs under TintMalloc's variants (Figs.
3.10-3.14), and the isolation invariants (§9.2 (b)3) read off every run's placement.
"""

from __future__ import annotations

import statistics
from typing import Any

from memtint.reproduce import common
from memtint.reproduce.common import Row, Settings

NAME = "camc"
TITLE = "CAMC and TintMalloc: controller-aware colouring on a NUMA machine (Pan, NC State PhD thesis 2018, Ch. 2-3)"
MACHINE = "opteron-6128"

#: The Palloc latency benchmark's stand-in: random lines over 2x the LLC (its linked list is), the
#: `random` profile (not the captured `chase` trace).
PALLOC = "random:footprint_bytes=16777216"
#: The alternating-stride write benchmark's: two sweeps (M+k, M-k lines) writing every line once.
STRIDE = "stream:streams=2,reads_pki=100,writes_pki=100,footprint_bytes=67108864"
#: The two benchmarks of Figs. 2.6-2.7 (claims' `bench`), with the programs and the names the report shows.
BENCHES = {"palloc": (PALLOC, "Palloc latency benchmark (random profile)"),
           "stride": (STRIDE, "alternating-stride benchmark (stream profile)")}
#: Stream attackers (the thesis's background tasks).
ATTACKER = "stream"
#: TintMalloc's synthetic benchmark (§3.4): a large allocation per thread, each line touched once.
SYNTHETIC = "stream:streams=2,reads_pki=100,writes_pki=50,footprint_bytes=16777216"

#: The thesis's three configurations of Ch. 2 for the foreground and its background copies, as
#: `camc` colour sets (global colours, node-major: 8 bank colours per node).
CONFIGS = {
    "same_bank": lambda n: {"colours": [[0]], "groups": [0] * n},
    "diff_bank": lambda n: {"colours": [[i] for i in range(n)]},
    "diff_controller": lambda n: {"colours": [[8 * i] for i in range(n)]},
    # Not the thesis's: bank i of node i, so the tasks' bank bits (LLC set bits here) differ too.
    "diff_controller, other banks": lambda n: {"colours": [[9 * i] for i in range(n)]},
}
#: TintMalloc's variants (§3.4) and the Linux baseline.
TINT = {
    "buddy": ("local", {}),
    "MEM+LLC": ("tintmalloc", {}),
    "MEM only": ("tintmalloc", {"tintmalloc": {"llc_sharers": 0}}),
    "LLC only": ("tintmalloc", {"tintmalloc": {"bank_sharers": 0}}),
    "LLC+MEM(part)": ("tintmalloc", {"tintmalloc": {"bank_sharers": 2}}),
    # The thesis's node-unaware baseline: BPM's bank + LLC colours over the whole machine (8 bank
    # colours for 16 threads: 2 per colour), each thread's pages on every node in turn.
    "BPM": ("tintmalloc", {"tintmalloc": {"nodes": "interleave", "bank_sharers": 2}}),
}
THREADS = 16
#: Parallel loops per SPMD run: a barrier every 1/PHASES of a thread's instructions (OpenMP's
#: implicit barrier at each loop's end; the thesis's codes are loops over timesteps).
PHASES = 10
#: Most warm-up per thread (16 threads do 16x a one-program run's warm-up work).
WARMUP_CAP = 500_000
#: The runs without a warm-up (memtint.run_rt's; the report's set-up says so).
NO_WARMUP = "rate-monotonic runs"
#: Per task: the one-node and background experiments' window (profiles only), and the SPMD programs'
#: (`instructions`: the suite traces' window, tests/python/test_workload_suite.py).
SIZES = {"full": {"small": 200_000, "instructions": 300_000, "hyperperiods": 8},
         "quick": {"small": 10_000, "instructions": 10_000, "hyperperiods": 1}}

#: Tables 2.3-2.6: two hard real-time tasks on core 0 under rate monotonic and three Stream
#: attackers on cores 1-3 (memtint.run_rt). Per task: period and WCET (Table 2.3) and the thesis's
#: single-run time (Tables 2.4-2.5), ms.
RM_TASKS = (("synthetic", 150, 90, 60.7), ("IS_SER", 200, 60, 54.3))
#: Task times are the thesis's at 1/100 (a unit of 10 µs), so a run covers several hyperperiods.
RM_UNIT_US = 10.0
#: Each job computes for half its single-run time and waits for its loads the other half, at the
#: machine's unloaded latency of a random load (about 50 ns: the single-run row checks it).
RM_MEMORY_SHARE = 0.5
RM_LOAD_NS = 50.0
#: Reads an attacker keeps in flight: 3 gives one attacker alone about the bandwidth of the
#: `stream` profile alone on a core of this machine in `memtint sim` (the calibration row; the
#: real-time runs have no caches, so a core's miss buffers would overstate it).
RM_OUTSTANDING = 3
#: Bank colours (node-major) of task 1, task 2 and the three attackers per configuration.
RM_CONFIGS = {"single run": ([0], [1], []), "same_bank": ([0], [0], [[0]] * 3),
              "diff_bank": ([0], [1], [[2], [3], [4]]), "diff_controller": ([0], [1], [[8], [16], [24]])}


def seeded(program: str, i: int) -> str:
    """Copy ``i`` of a profile, with its own generator seed (a trace is the same for every copy)."""
    if program.split(":")[0] not in common.PROFILES:
        return program
    return f"{program},seed={i + 1}" if ":" in program else f"{program}:seed={i + 1}"


def makespan(run: dict[str, Any]) -> float:
    return float(max(c["finished_at"] for c in run["cores"]))


def spread(run: dict[str, Any]) -> float:
    """Max - min of the threads' run times (cycles working on their cores, barrier waits excluded)."""
    t = [c["cycles"] for c in run["cores"]]
    return float(max(t) - min(t))


def idle(run: dict[str, Any]) -> float:
    """Total idle at barriers: the waits at the barriers inside the run plus, at the end, the sum
    over threads of (last end - own end) (Algorithm 5)."""
    t = [c["finished_at"] for c in run["cores"]]
    return float(sum(max(t) - x for x in t) + sum(c.get("barrier_wait_cycles", 0) for c in run["cores"]))


def mean_read_latency(run: dict[str, Any]) -> float:
    """Mean over the run's threads of each thread's mean DRAM read latency, ns: Table 2.2's
    "latency", one average per configuration over its threads. Not cycles per DRAM read, which
    falls whenever a thread makes more reads (CAMC's bank colours also split the LLC)."""
    lat = [c["read_latency_ns_mean"] for c in run["cores"] if c.get("read_latency_ns_mean") is not None]
    return statistics.fmean(lat) if lat else float("nan")


def access_time_change(buddy: dict[str, Any], private: dict[str, Any]) -> float:
    """Table 2.2's figure as the thesis defines it (§2.4: elapsed time / a fixed count of writes):
    each thread's change in the cycles it takes for its fixed instructions, %, mean over threads.
    Not cycles per DRAM read, which moves with the number of reads (CAMC's bank colours also
    split the LLC)."""
    return statistics.fmean(common.pct(p["cycles"], b["cycles"]) for b, p in zip(buddy["cores"], private["cores"]))


def idle_beats_runtime(idle_change: float, runtime_change: float) -> bool:
    """A program whose idle time falls by more than its run time does (changes in %). Idle must
    fall: one whose idle and run time both grow, idle less, has cut nothing."""
    return idle_change < 0 and idle_change < runtime_change


def one_node_cause(buddy: list[dict[str, Any]], private: list[dict[str, Any]]) -> str:
    """Table 2.2's mechanism from the runs (one per seed) under buddy and under CAMC's private
    banks: whose row conflicts, bank parallelism, the node's load and the read latency that
    follows; then the thesis's other reading, the run time of a fixed count of accesses."""
    def m(runs: list[dict[str, Any]], k: str) -> float:  # per thread, mean over threads and seeds
        return statistics.fmean((c.get(k) or 0.0) for r in runs for c in r["cores"])

    def node(runs: list[dict[str, Any]], k: str) -> float:
        return statistics.fmean(((r.get("nodes") or [{}])[0].get(k) or 0.0) for r in runs)

    def q(runs: list[dict[str, Any]]) -> float:
        return statistics.fmean((r.get("queue_read_mean") or 0.0) for r in runs)

    lat = [statistics.fmean(mean_read_latency(r) for r in runs) for runs in (buddy, private)]
    run_time = [access_time_change(b, p) for b, p in zip(buddy, private)]
    return (f"each thread's time for its accesses changes by {statistics.fmean(run_time):+.1f} % (seeds "
            f"{min(run_time):+.1f} … {max(run_time):+.1f} %): private banks take the other threads' row conflicts away ({m(buddy, 'row_conflicts_by_other'):,.0f} → "
            f"{m(private, 'row_conflicts_by_other'):,.0f} per thread) but put each thread's two sweeps and its write-backs "
            f"in its own {m(private, 'banks_used'):.0f} banks (conflicts with itself {m(buddy, 'row_conflicts_by_self'):,.0f} → "
            f"{m(private, 'row_conflicts_by_self'):,.0f}), so the row-buffer miss rate stays {m(buddy, 'row_buffer_miss_rate'):.0%}"
            f" → {m(private, 'row_buffer_miss_rate'):.0%} while bank-level parallelism falls "
            f"{m(buddy, 'bank_level_parallelism'):.2f} → {m(private, 'bank_level_parallelism'):.2f} "
            f"({m(buddy, 'banks_used'):.0f} → {m(private, 'banks_used'):.0f} banks); the node stays near saturation "
            f"({node(buddy, 'bandwidth_gbps'):.1f} → {node(private, 'bandwidth_gbps'):.1f} GB/s of its "
            f"{node(buddy, 'peak_gbps'):.1f} GB/s peak, {q(buddy):.1f} → {q(private):.1f} reads queued on average), and "
            f"the mean read latency goes {lat[0]:.0f} → {lat[1]:.0f} ns (LLC MPKI {m(buddy, 'llc_mpki'):.1f} → "
            f"{m(private, 'llc_mpki'):.1f}: the bank colour also confines each thread to 1/8 of the LLC's sets, "
            f"{m(buddy, 'llc_lines'):,.0f} → {m(private, 'llc_lines'):,.0f} lines held): the threads issue their accesses "
            f"at about the same rate, a node near saturation, with or without the other threads' conflicts")


def strict_majority(value: float, n: int) -> bool:
    """Whether "share of n programs >= value" means "more than half of them": value is above 0.5
    and at most the smallest share that is a strict majority of n."""
    return n > 0 and 0.5 < value <= (n // 2 + 1) / n


class Experiment:
    name = NAME
    title = TITLE

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        size = SIZES["quick" if settings.quick else "full"]
        self.small = settings.instructions(size["small"])
        self.spmd = settings.instructions(size["instructions"])
        self.hyperperiods = size["hyperperiods"]
        suite = [n for n in ("triad", "fdtd", "spmv") if n in common.SUITE]
        self.spmd_programs = {"synthetic": SYNTHETIC} | ({} if settings.quick else
                                                         {n: common.program_path(n) for n in suite})
        self.keys: dict[tuple, str] = {}
        self.jobs: list[dict[str, Any]] = []

    def describe(self) -> list[str]:
        return [
            f"Machine {MACHINE} (docs/numa.md): 4 nodes x 4 cores, each node DDR3-1333 with 2 channels x 2 ranks x 8 "
            "banks; the mapping puts channel (b6) and rank (b7) inside the page, so a colour is one bank index of one "
            "node over both channels and ranks (8 colours per node, 32 in all, node-major: the thesis's banks 0, 32, "
            "64, 96 are colours 0, 8, 16, 24). Bank bits b15, b16, b18 are also LLC set bits: bank colours partition "
            "the one shared 8 MiB LLC too (the thesis's per-die L3s are one LLC here).",
            "Configurations (Ch. 2) as fixed `camc` colours: same_bank (every task in colour 0), diff_bank (colours "
            "0-3 on node 0), diff_controller (colours 0, 8, 16, 24: bank 0 of each node, as the thesis chose; the "
            "tables add colours 0, 9, 18, 27, bank i of node i, which share no LLC set); CAMC's own assignment (1 "
            "colour per task on its core's node, `choose = \"spread\"`: bank indices no other task holds) where the "
            "run says `camc`.",
            f"Programs: the Palloc latency benchmark as random lines over 16 MiB (2x the LLC) ({PALLOC}); the "
            f"alternating-stride write benchmark as two write sweeps ({STRIDE}); Stream attackers ({ATTACKER}); "
            f"{self.small:,} instructions per task, the foreground on core 0 and its copies on cores 1-3 as in "
            "Figs. 2.6-2.7.",
            f"TintMalloc: {THREADS}-thread programs (one thread per core, each its own data) in {PHASES} parallel loops: "
            f"a barrier every {self.spmd // PHASES:,} instructions (barrier_every) and at the end (at_end = \"wait\"), "
            f"{self.spmd:,} instructions per thread, under Linux's local first touch "
            "(buddy) and the variants MEM+LLC, MEM only, LLC only and LLC+MEM(part) (2 threads per bank set), and BPM "
            "as the thesis's node-unaware baseline (`tintmalloc` with nodes = \"interleave\": bank colours split over "
            "the machine's 16 threads, 2 per colour, private LLC colours, and each thread's pages on every node in "
            "turn, since BPM's colours do not say which node). "
            "MEM+LLC(part) (4 threads per LLC group) is MEM+LLC on this machine: its bank bits are LLC set bits, so a "
            "thread's private banks already fix its share of an LLC group's colours. Programs: "
            f"{', '.join(self.spmd_programs)}; the thesis's OpenMP codes (lbm, art, equake, bodytrack, freqmine, "
            "blackscholes) are not in the suite. Each thread first touches its own data here, so buddy places it "
            "locally: the baseline has no remote accesses, and the comparison isolates bank and LLC sharing.",
            f"Rate-monotonic test (Tables 2.3-2.6): memtint.run_rt on {MACHINE}'s memory (docs/refresh.md, 'Real-time "
            "tasks through the DRAM'): synthetic (p 150, WCET 90) and IS_SER (p 200, WCET 60) on core 0 under rate "
            f"monotonic, times at 1/100 (a unit of {RM_UNIT_US:g} µs); each job computes {1 - RM_MEMORY_SHARE:.0%} of the "
            f"thesis's single-run time and issues random blocking loads over 4 MiB for the rest at {RM_LOAD_NS:g} ns "
            f"each (the programs themselves are not available); three Stream attackers (sequential reads, "
            f"{RM_OUTSTANDING} in flight, 8 MiB each) for the whole run; {self.hyperperiods} hyperperiods (600 units) "
            "per seed. Colours: same_bank puts all five tasks in bank colour 0; diff_bank the tasks in 0 and 1, the "
            "attackers in 2-4 (node 0's controller); diff_controller the attackers in bank 0 of nodes 1-3 (the "
            "other controllers). Miss rate: the share of IS_SER's jobs (the lower priority) that miss their deadline "
            "(the thesis's rate names no task; synthetic, the higher priority, never misses there either).",
            "Not measured: allocation cost (Obs. 4: the model allocates in no time).",
        ]

    def _add(self, key: tuple, spec: dict[str, Any]) -> None:
        common.add_job(self.keys, self.jobs, key, spec, self.settings, WARMUP_CAP)

    def _add_rt(self, key: tuple, spec: dict[str, Any]) -> None:
        common.add_rt_job(self.keys, self.jobs, key, spec)

    def rm_spec(self, config: str, seed: int) -> dict[str, Any]:
        """The rate-monotonic test's run under one of RM_CONFIGS."""
        c1, c2, attackers = RM_CONFIGS[config]
        tasks = [{"name": name, "period": p, "wcet": wcet, "compute": (1 - RM_MEMORY_SHARE) * single,
                  "loads": round(RM_MEMORY_SHARE * single * RM_UNIT_US * 1000 / RM_LOAD_NS), "pattern": "random",
                  "footprint_kb": 4096, "colours": colours}
                 for (name, p, wcet, single), colours in zip(RM_TASKS, (c1, c2))]
        return {"machine": MACHINE, "unit_us": RM_UNIT_US, "schedule": "rm", "tasks": tasks,
                "attackers": [{"colours": a, "outstanding": RM_OUTSTANDING, "write_share": 0.0} for a in attackers],
                "horizon": 600 * self.hyperperiods, "seed": seed}

    def _tasks(self, programs: list[tuple[str, int]], instructions: int, os: dict[str, Any], seed: int,
               at_end: str = "continue", phases: int = 0) -> dict[str, Any]:
        """One single-threaded process per (program, core); with ``phases``, one SPMD job whose
        processes (threads with private data) meet at a barrier ``phases - 1`` times before the end."""
        processes = [{"threads": [{"program": seeded(p, i), "affinity": [core]}]} for i, (p, core) in enumerate(programs)]
        spec = {"machine": MACHINE, "programs": [], "processes": processes, "instructions": instructions,
                "os": os, "seed": seed, "at_end": at_end}
        if phases > 1:
            spec["barrier_every"] = max(1, instructions // phases)
        return spec

    def plan(self) -> list[dict[str, Any]]:
        for seed in self.settings.seed_list():
            for node in (0, 1, 2):
                self._add(("hops", node, seed), self._tasks([(STRIDE, 0)], self.small,
                                                            {"policy": "camc", "colours": [[8 * node]]}, seed))
            for bench, (prog, _) in BENCHES.items():
                self._add(("bg", bench, "alone", 0, seed),
                          self._tasks([(prog, 0)], self.small, {"policy": "camc", "colours": [[0]]}, seed))
                for cfg, colours in CONFIGS.items():
                    for k in (1, 2, 3):
                        self._add(("bg", bench, cfg, k, seed),
                                  self._tasks([(prog, i) for i in range(k + 1)], self.small,
                                              {"policy": "camc", **colours(k + 1)}, seed))
            for policy in ("local", "camc"):
                self._add(("t22", policy, seed), self._tasks([(STRIDE, i) for i in range(4)], self.small,
                                                             {"policy": policy}, seed))
            fg = [(PALLOC, 0)]
            self._add(("sce", "alone", seed), self._tasks(fg, self.small, {"policy": "camc"}, seed))
            for n, cores in ((4, [4, 8, 12]), (16, list(range(1, 16)))):
                tasks = fg + [(ATTACKER, c) for c in cores]
                self._add(("sce", n, "camc", seed), self._tasks(tasks, self.small, {"policy": "camc"}, seed))
                self._add(("sce", n, "same_bank", seed),
                          self._tasks(tasks, self.small, {"policy": "camc", **CONFIGS["same_bank"](n)}, seed))
            for config in RM_CONFIGS:
                self._add_rt(("rm", config, seed), self.rm_spec(config, seed))
            self._add(("stream alone", seed), self._tasks([(ATTACKER, 1)], self.small,
                                                          {"policy": "camc", "colours": [[2]]}, seed))
            for name, prog in self.spmd_programs.items():
                for label, (policy, params) in TINT.items():
                    self._add(("tint", name, label, seed),
                              self._tasks([(prog, c) for c in range(THREADS)], self.spmd, {"policy": policy, **params},
                                          seed, at_end="wait", phases=PHASES))
        return self.jobs

    # --- measures ---------------------------------------------------------------------------

    def _run(self, results: dict[str, Any], key: tuple) -> dict[str, Any]:
        return results[self.keys[key]]

    def _fg(self, results: dict[str, Any], key: tuple) -> float:
        """The foreground's time to its target (core 0, core cycles)."""
        return float(self._run(results, key)["cores"][0]["cycles"])

    def _slowdown(self, results: dict[str, Any], bench: str, cfg: str, k: int, seed: int) -> float:
        return self._fg(results, ("bg", bench, cfg, k, seed)) / self._fg(results, ("bg", bench, "alone", 0, seed))

    def _slope(self, results: dict[str, Any], bench: str, cfg: str, seed: int) -> float:
        """Least-squares slope of the foreground's slowdown over 0-3 background tasks."""
        ys = [1.0] + [self._slowdown(results, bench, cfg, k, seed) for k in (1, 2, 3)]
        xs = [0, 1, 2, 3]
        mx, my = statistics.fmean(xs), statistics.fmean(ys)
        return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)

    def _tint(self, results: dict[str, Any], name: str, label: str, seed: int) -> dict[str, Any]:
        return self._run(results, ("tint", name, label, seed))

    def _tint_change(self, results: dict[str, Any], name: str, label: str, seed: int, f) -> float:
        return common.pct(f(self._tint(results, name, label, seed)), f(self._tint(results, name, "buddy", seed)))

    def analyse(self, claims: list[dict[str, Any]], results: dict[str, Any]) -> dict[str, Any]:
        rows = [self._row(c, results) for c in claims]
        return {"rows": rows, "tables": self._tables(results), "plots": [self._plot(results)],
                "calibration": self._calibration(results), "notes": []}

    def _row(self, c: dict[str, Any], results: dict[str, Any]) -> Row:
        seeds = self.settings.seed_list()
        e = c["experiment"]
        if e == "background":
            bench, cfg = c["bench"], c["config"]
            per_seed = [100 * (self._slowdown(results, bench, cfg, 3, s) - 1) if c["metric"] == "time_change_pct"
                        else self._slowdown(results, bench, cfg, 3, s) for s in seeds]
            row = Row(c, MACHINE, per_seed)
            row.population = f"the foreground with 3 background copies on cores 1-3, {cfg}"
            runs = [self._run(results, ("bg", bench, "alone", 0, s)) for s in seeds]
            row.dram_pki, row.not_applicable = common.effect(f"the {BENCHES[bench][1]} alone", runs)
            row.detail = self._bg_cause(results, bench, cfg)
        elif e == "slope":
            bench = c["bench"]
            per_seed = [self._slope(results, bench, "same_bank", s) / self._slope(results, bench, "diff_bank", s)
                        for s in seeds]
            row = Row(c, MACHINE, per_seed)
            row.population = "the foreground with 0-3 background copies, same_bank against diff_bank"
            runs = [self._run(results, ("bg", bench, "alone", 0, s)) for s in seeds]
            row.dram_pki, row.not_applicable = common.effect(f"the {BENCHES[bench][1]} alone", runs)
            slopes = {cfg: statistics.fmean(self._slope(results, bench, cfg, s) for s in seeds) for cfg in CONFIGS}
            row.detail = ("slowdown per added task: " + ", ".join(f"{k} {v:+.3f}" for k, v in slopes.items())
                          + ". " + self._bg_cause(results, bench, "diff_bank"))
        elif e == "one-node":
            buddy = [self._run(results, ("t22", "local", s)) for s in seeds]
            private = [self._run(results, ("t22", "camc", s)) for s in seeds]
            per_seed = [access_time_change(b, a) for b, a in zip(buddy, private)]
            row = Row(c, MACHINE, per_seed)
            row.population = ("4 alternating-stride threads on node 0's cores, each thread's elapsed time for its fixed "
                              "count of accesses")
            row.dram_pki, row.not_applicable = common.effect("the four threads", buddy)
            row.detail = one_node_cause(buddy, private)
        elif e == "sce":
            n, cfg = int(c["tasks"]), c["config"]
            alone = [self._fg(results, ("sce", "alone", s)) for s in seeds]
            if c["metric"] == "time_change_pct":
                per_seed = [common.pct(self._fg(results, ("sce", n, cfg, s)), a) for s, a in zip(seeds, alone)]
            else:  # camc against same_bank
                per_seed = [common.pct(self._fg(results, ("sce", n, "camc", s)), self._fg(results, ("sce", n, "same_bank", s)))
                            for s in seeds]
            row = Row(c, MACHINE, per_seed)
            runs = [self._run(results, ("sce", "alone", s)) for s in seeds]
            # What the attackers could take from it besides its controller: its LLC lines.
            shared = [self._run(results, ("sce", n, cfg, s)) for s in seeds]
            alone_misses = statistics.fmean(r["cores"][0]["llc_misses"] for r in runs)
            shared_misses = statistics.fmean(r["cores"][0]["llc_misses"] for r in shared)
            row.population = (f"a random-access foreground with {n - 1} Stream attackers, one task per core; the "
                              f"foreground's LLC misses: {alone_misses:,.0f} alone, {shared_misses:,.0f} beside them")
            if c["kind"] == "at_most" and c["metric"] == "time_change_pct":  # equivalence, which the residual bounds
                row.population += (" (the paper's 0.1-2.73 % residual is LLC sharing"
                                   + (": here the attackers take none of its LLC lines)"
                                      if shared_misses <= alone_misses * 1.001 else ")"))
            row.dram_pki, row.not_applicable = common.effect("the foreground alone", runs)
            row.detail = self._pair_cause(runs, [self._run(results, ("sce", n, cfg, s)) for s in seeds], "alone",
                                          f"{n} tasks, {cfg}", core=0)
        elif e == "rm":
            row = self._rm_row(c, results)
        elif e == "tintmalloc":
            row = self._tint_row(c, results)
        elif e == "isolation":
            row = self._isolation_row(c, results)
        else:
            raise ValueError(f"unknown experiment {e!r}")
        return row

    def _rm_task(self, results: dict[str, Any], config: str, seed: int, name: str) -> dict[str, Any]:
        return next(t for t in self._run(results, ("rm", config, seed))["tasks"] if t["name"] == name)

    def _rm_row(self, c: dict[str, Any], results: dict[str, Any]) -> Row:
        seeds = self.settings.seed_list()
        cfg, name = c["config"], c["task"]
        if c["metric"] == "miss_pct":
            per_seed = [100.0 * t["deadline_misses"] / max(1, t["jobs"])
                        for t in (self._rm_task(results, cfg, s, name) for s in seeds)]
        else:  # run time over the single run, %
            per_seed = [common.pct(self._rm_task(results, cfg, s, name)["exec_mean"],
                                   self._rm_task(results, "single run", s, name)["exec_mean"]) for s in seeds]
        row = Row(c, MACHINE, per_seed)
        row.population = f"{name} beside the other real-time task and 3 Stream attackers, {cfg}"
        row.rt_loads = statistics.fmean(sum(t["loads"] for t in self._run(results, ("rm", cfg, s))["tasks"]) for s in seeds)
        m = lambda config, k: statistics.fmean(self._rm_task(results, config, s, name)[k] if k != "lat" else  # noqa: E731
                                               self._rm_task(results, config, s, name)["latency_ns"]["mean"] for s in seeds)
        att = [a for s in seeds for a in self._run(results, ("rm", cfg, s))["attackers"]]
        gbps = statistics.fmean(a["bandwidth_gbps"] for a in att) if att else 0.0
        u = sum(statistics.fmean(self._rm_task(results, cfg, s, n)["exec_mean"] for s in seeds) / p
                for n, p, _, _ in RM_TASKS)
        peak = self._run(results, ("stream alone", seeds[0]))["nodes"][0]["peak_gbps"]
        row.detail = (f"{name}'s load latency {m('single run', 'lat'):.0f} ns alone, {m(cfg, 'lat'):.0f} ns here "
                      f"(attackers {gbps:.1f} GB/s each, the three together {3 * gbps / peak:.0%} of a node's peak {peak:.1f} GB/s); run time {m('single run', 'exec_mean'):.1f} → "
                      f"{m(cfg, 'exec_mean'):.1f} units (max {m(cfg, 'exec_max'):.1f}); measured utilisation {u:.2f}, "
                      f"so under rate monotonic IS_SER {'misses' if u > 0.83 else 'fits'} "
                      f"(Liu-Layland bound 0.83 for two tasks)")
        if cfg == "diff_bank":
            row.detail += (f". The three attackers keep {3 * RM_OUTSTANDING} reads in flight in all, well under node 0's "
                           "read queues (32 per channel), so a real-time load waits only behind the requests in service "
                           "on the channel, not for queue space; the thesis puts its residual interference in the "
                           "controller queue all banks share (Fig. 2.5, Obs. 6), which these attackers do not fill")
        return row

    def _bg_cause(self, results: dict[str, Any], bench: str, cfg: str) -> str:
        seeds = self.settings.seed_list()
        alone = [self._run(results, ("bg", bench, "alone", 0, s))["cores"][0] for s in seeds]
        busy = [self._run(results, ("bg", bench, cfg, 3, s))["cores"][0] for s in seeds]
        text = self._core_text(alone, busy, "alone", f"{cfg} with 3 copies")
        if cfg == "diff_controller":
            other = statistics.fmean(100 * (self._slowdown(results, bench, "diff_controller, other banks", 3, s) - 1)
                                     for s in seeds)
            text += (f". The thesis's banks 0, 32, 64, 96 are bank index 0 on every node, and the bank bits b15, b16, "
                     f"b18 index LLC sets: the four tasks share one eighth of the LLC. With bank i of node i (colours "
                     f"0, 9, 18, 27) the foreground is {other:+.1f} % over alone")
        return text

    @staticmethod
    def _core_text(a: list[dict[str, Any]], b: list[dict[str, Any]], la: str, lb: str) -> str:
        m = lambda cs, k: statistics.fmean((c.get(k) or 0.0) for c in cs)  # noqa: E731
        return (f"the foreground {la} → {lb}: read latency {m(a, 'read_latency_ns_mean'):.0f} → "
                f"{m(b, 'read_latency_ns_mean'):.0f} ns, row-buffer miss rate {m(a, 'row_buffer_miss_rate'):.0%} → "
                f"{m(b, 'row_buffer_miss_rate'):.0%}, banks used {m(a, 'banks_used'):.0f} → {m(b, 'banks_used'):.0f}, "
                f"bank-level parallelism {m(a, 'bank_level_parallelism'):.2f} → {m(b, 'bank_level_parallelism'):.2f}, "
                f"LLC MPKI {m(a, 'llc_mpki'):.1f} → {m(b, 'llc_mpki'):.1f}, DRAM writes "
                f"{m(a, 'dram_writes'):,.0f} → {m(b, 'dram_writes'):,.0f}")

    def _pair_cause(self, a: list[dict[str, Any]], b: list[dict[str, Any]], la: str, lb: str,
                    core: int | None = None) -> str:
        pick = (lambda runs: [r["cores"][core] for r in runs]) if core is not None else \
            (lambda runs: [c for r in runs for c in r["cores"]])
        return self._core_text(pick(a), pick(b), la, lb)

    def _tint_row(self, c: dict[str, Any], results: dict[str, Any]) -> Row:
        seeds = self.settings.seed_list()
        metric, label = c["metric"], c.get("policy", "MEM+LLC")
        names = list(self.spmd_programs) if c.get("program", "all") == "all" else [c["program"]]
        f = {"runtime_change_pct": makespan, "idle_change_pct": idle}.get(metric)
        if metric == "spread_ratio":
            per_seed = [statistics.fmean(spread(self._tint(results, n, "buddy", s)) / max(1.0, spread(self._tint(results, n, label, s)))
                                         for n in names) for s in seeds]
        elif metric == "idle_beats_runtime_share":
            if not strict_majority(float(c["value"]), len(names)):  # "more than half" must stay strict
                raise ValueError(f"{c['id']}: a share of at least {c['value']} of {len(names)} programs is not "
                                 "'more than half'")
            beats = {s: [n for n in names if idle_beats_runtime(self._tint_change(results, n, label, s, idle),
                                                                self._tint_change(results, n, label, s, makespan))]
                     for s in seeds}
            per_seed = [len(beats[s]) / len(names) for s in seeds]
        elif c.get("aggregate") == "max":
            per_seed = [max(self._tint_change(results, n, label, s, f) for n in names) for s in seeds]
        elif c.get("aggregate") == "min":
            per_seed = [min(self._tint_change(results, n, label, s, f) for n in names) for s in seeds]
        else:
            per_seed = [statistics.fmean(self._tint_change(results, n, label, s, f) for n in names) for s in seeds]
        row = Row(c, MACHINE, per_seed)
        row.population = f"{len(names)} {THREADS}-thread program(s): {', '.join(names)}"
        runs = [self._tint(results, n, "buddy", s) for n in names for s in seeds]
        row.dram_pki, row.not_applicable = common.effect("the programs under buddy", runs)
        parts = []
        for n in names:
            ch = lambda fn: statistics.fmean(self._tint_change(results, n, label, s, fn) for s in seeds)  # noqa: E731
            b = [self._tint(results, n, "buddy", s) for s in seeds]
            t = [self._tint(results, n, label, s) for s in seeds]
            m = lambda runs, k: statistics.fmean(statistics.fmean((x.get(k) or 0.0) for x in r["cores"]) for r in runs)  # noqa: E731
            parts.append(f"{n}: run time {ch(makespan):+.1f} %, idle {ch(idle):+.1f} %, spread "
                         f"{statistics.fmean(spread(r) for r in b):,.0f} → {statistics.fmean(spread(r) for r in t):,.0f} "
                         f"cycles, row-buffer miss rate {m(b, 'row_buffer_miss_rate'):.0%} → {m(t, 'row_buffer_miss_rate'):.0%}, "
                         f"LLC MPKI {m(b, 'llc_mpki'):.1f} → {m(t, 'llc_mpki'):.1f}, BLP "
                         f"{m(b, 'bank_level_parallelism'):.2f} → {m(t, 'bank_level_parallelism'):.2f}")
        row.detail = f"{label} against buddy (mean over seeds). " + "; ".join(parts)
        if metric == "idle_beats_runtime_share":
            row.detail = ("programs whose idle time fell by more than their run time, per seed: " + "; ".join(
                f"seed {s}: {', '.join(beats[s]) or 'none'} ({len(beats[s])} of {len(names)})" for s in seeds)
                + f"; more than half on {sum(2 * len(beats[s]) > len(names) for s in seeds)} of {len(seeds)} seeds. "
                + row.detail)
        return row

    def _isolation_row(self, c: dict[str, Any], results: dict[str, Any]) -> Row:
        """Pairs of tasks sharing what the configuration makes private, and pages outside a task's
        colours: 0 is the invariant."""
        seeds = self.settings.seed_list()
        what = c["invariant"]
        per_seed, pages = [], 0.0
        for s in seeds:
            if what == "tintmalloc_banks":
                run = self._tint(results, "synthetic", "MEM+LLC", s)
            else:
                run = self._run(results, ("bg", "stride", what, 3, s))
            cores = run["cores"]
            pages += sum(sum(p["pages_per_node"]) for p in run["processes"])
            if c["metric"] == "overflow_pages":
                per_seed.append(float(sum(x.get("colour_overflow_pages") or 0 for x in cores)))
                continue
            unit = (lambda b: b // 32) if what == "diff_controller" else (lambda b: b)
            owned = [set(map(unit, x.get("banks") or [])) for x in cores]
            per_seed.append(float(sum(1 for i in range(len(owned)) for j in range(i + 1, len(owned)) if owned[i] & owned[j])))
        row = Row(c, MACHINE, per_seed)
        row.population = ("the 16 threads of the synthetic program under MEM+LLC" if what == "tintmalloc_banks"
                          else f"the 4 tasks of the alternating-stride runs, {what}")
        row.placed_pages = pages / len(seeds)
        row.detail = f"{row.placed_pages:,.0f} pages placed per run; checked page by page in tests/engine/node_colours.rs"
        return row

    def _calibration(self, results: dict[str, Any]) -> list[list[str]]:
        seeds = self.settings.seed_list()
        per_access = {n: [self._fg(results, ("hops", n, s)) / self._run(results, ("hops", n, s))["cores"][0]["dram_reads"]
                          for s in seeds] for n in (0, 1, 2)}
        rows = []
        for n, paper, what in ((1, 1.56, "1 hop (the other die of the socket)"), (2, 2.52, "2 hops (the other socket)")):
            r = [a / b for a, b in zip(per_access[n], per_access[0])]
            rows.append([f"per-access time of one write stream, {what} over local", f"{paper:g}",
                         f"{statistics.fmean(r):.3g} (range {min(r):.3g}-{max(r):.3g})",
                         "the alternating-stride benchmark alone on core 0, its pages on node 0, 1, 2, after the warm-up "
                         "(the preset's link latencies were set to this table on a cold-start window, reads only; "
                         "in steady state write-backs flow, and posted write-backs cross no link in the model)",
                         "pan-camc-tintmalloc-refresh.md §2.5 Table 2.1 [paper]"])
        busy = [self._run(results, ("t22", "local", s)) for s in seeds]
        lat = [mean_read_latency(r) for r in busy]
        # Elapsed time over each thread's lines written (one DRAM read each): the thesis's measure.
        per = [r["simulated_ns"] / statistics.fmean(c["dram_reads"] for c in r["cores"]) for r in busy]
        rows.append(["time per access of 4 alternating-stride threads on one node under buddy, ns (Table 2.2)",
                     "53.21", f"{statistics.fmean(per):.1f} (range {min(per):.1f}-{max(per):.1f})",
                     "the run's elapsed time over each thread's lines written (a DRAM read each), as the thesis divides "
                     "elapsed time by its writes (§2.4); with many accesses in flight it is not a memory latency: each "
                     f"read takes {statistics.fmean(lat):.0f} ns on average here, the node at "
                     f"{statistics.fmean(r['nodes'][0]['bandwidth_gbps'] for r in busy):.1f} of its "
                     f"{busy[0]['nodes'][0]['peak_gbps']:.1f} GB/s with "
                     f"{statistics.fmean(r.get('queue_read_mean') or 0.0 for r in busy):.0f} reads queued on average",
                     "pan-camc-tintmalloc-refresh.md §2.4, §2.5 Table 2.2 [paper]"])
        sa = [self._run(results, ("stream alone", s))["nodes"][0]["bandwidth_gbps"] for s in seeds]
        rt = []
        for s in seeds:
            rt.extend(a["bandwidth_gbps"] for a in self._run(results, ("rm", "diff_controller", s))["attackers"])
        rows.append(["a Stream attacker's DRAM bandwidth alone, GB/s (the real-time runs' attacker against the "
                     "`stream` profile on one core in memtint sim; the paper gives no figure, so memtint sim's stands in)",
                     f"{statistics.fmean(sa):.1f} (memtint sim, not the paper)",
                     f"{statistics.fmean(rt):.1f}", f"{RM_OUTSTANDING} reads in flight, each attacker alone on its "
                     "node under diff_controller", "RM_OUTSTANDING in python/memtint/reproduce/camc.py"])
        for name, _, _, single in RM_TASKS:
            v = [self._rm_task(results, "single run", s, name)["exec_mean"] for s in seeds]
            rows.append([f"{name}'s single-run time, ms (units of 1/100)", f"{single:g}", f"{statistics.fmean(v):.1f}",
                         f"half computation, half random loads at {RM_LOAD_NS:g} ns each, alone on the machine",
                         "pan-camc-tintmalloc-refresh.md §2.5 Tables 2.4-2.5 [paper]"])
        return rows

    def _tables(self, results: dict[str, Any]) -> list[tuple[str, list[str], list[list[str]]]]:
        seeds = self.settings.seed_list()
        body = []
        for bench, (_, shown) in BENCHES.items():
            for cfg in CONFIGS:
                cells = [shown, cfg]
                for k in (1, 2, 3):
                    v = [self._slowdown(results, bench, cfg, k, s) for s in seeds]
                    cells.append(f"{statistics.fmean(v):.3f}")
                body.append(cells)
        tables = [("The foreground's run time over alone with 1-3 background copies (mean over seeds; Figs. 2.6-2.7)",
                   ["benchmark", "configuration", "1 copy", "2 copies", "3 copies"], body)]
        tint = []
        for name in self.spmd_programs:
            for label in TINT:
                runs = [self._tint(results, name, label, s) for s in seeds]
                tint.append([name, label, f"{statistics.fmean(makespan(r) for r in runs):,.0f}",
                             f"{statistics.fmean(self._tint_change(results, name, label, s, makespan) for s in seeds):+.1f} %",
                             f"{statistics.fmean(spread(r) for r in runs):,.0f}", f"{statistics.fmean(idle(r) for r in runs):,.0f}",
                             f"{statistics.fmean(common.dram_pki(r) for r in runs):.1f}"])
        thesis = {"synthetic": {"same_bank": (90.6, 107.1, 80.4, 4.88), "diff_bank": (78.5, 89.3, 68.3, 4.33),
                                "diff_controller": (62.5, 75.8, 61.5, 2.46), "single run": (60.7, 61.2, 60.0, 0.44)},
                  "IS_SER": {"same_bank": (74.6, 87.8, 64.3, 5.28), "diff_bank": (67.0, 74.4, 58.8, 4.2),
                             "diff_controller": (56.7, 59.8, 55.4, 0.83), "single run": (54.3, 56.0, 53.7, 0.41)}}
        body = []
        for name, *_ in RM_TASKS:
            for cfg in RM_CONFIGS:
                ts = [self._rm_task(results, cfg, s, name) for s in seeds]
                done = [t for t in ts if t["finished"]]
                def f(k: str, agg=statistics.fmean) -> str:
                    return f"{agg(t[k] for t in done):.1f}" if done else "none finished"
                misses = sum(t["deadline_misses"] for t in ts) / max(1, sum(t["jobs"] for t in ts))
                body.append([name, cfg, "{} / {} / {} / {}".format(*thesis[name][cfg]), f("exec_mean"),
                             f("exec_max", max), f("exec_min", min), f("exec_sd"), f"{misses:.0%}"])
        tables.append(("Rate-monotonic test: each task's run time per job, ms at the thesis's scale (thesis avg / max / "
                       "min / sd, Tables 2.4-2.5; ours over all jobs of all seeds), and its deadline misses",
                       ["task", "configuration", "thesis", "avg", "max", "min", "sd", "jobs missed"], body))
        tables.append((f"TintMalloc: {THREADS}-thread programs per policy (mean over seeds; Figs. 3.10-3.14)",
                       ["program", "policy", "run time, core cycles", "vs buddy", "max-min spread, cycles",
                        "total idle, cycles", "DRAM requests PKI"], tint))
        return tables

    def _plot(self, results: dict[str, Any]) -> dict[str, Any]:
        seeds = self.settings.seed_list()
        series = {}
        for bench in BENCHES:
            for cfg in CONFIGS:
                series[f"{bench}, {cfg}"] = [1.0] + [statistics.fmean(self._slowdown(results, bench, cfg, k, s)
                                                                      for s in seeds) for k in (1, 2, 3)]
        return {"file": "camc-background.png", "title": "Foreground run time over alone, by background copies",
                "x": [0, 1, 2, 3], "series": series, "xlabel": "background copies on the same node's cores",
                "ylabel": "run time over alone", "xscale": "linear"}
