"""What the reproductions share: settings, the workload pool, seeded mix draws, the mixes x
policies x seeds experiment (plan and metrics), diagnostics, and claim evaluation."""

from __future__ import annotations

import functools
import math
import os
import random
import statistics
from dataclasses import dataclass, field
from typing import Any, Callable

from memtint import api, comparison, workload_classes, workloads
from memtint import sampling as sampling_module
from memtint.reproduce import verdict as verdict_rule
from memtint.reproduce.runner import spec_key

CHECKOUT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
TRACES = os.path.join(CHECKOUT, "workloads", "traces")

#: The captured suite (workloads/README.md): name -> its committed trace (first thread with records).
SUITE = {name: workloads.trace_path(name) for name in workloads.suite()}
#: Diagnostics that describe what a policy sets rather than what it causes: shown in the tables,
#: never ranked as a cause.
SETTINGS_DIAGNOSTICS = ("banks used (mean per program)", "channels used (mean per program)")
#: Diagnostics ranked only for claims whose mechanism names them: a faster policy's shorter run
#: is an outcome, not a cause, and so is the standby energy a longer run spends.
CONTEXT_DIAGNOSTICS = ("simulated time, ms", "maximum slowdown", "DRAM power, W", "DRAM energy per kilo-instruction, nJ",
                       "DRAM standby energy per kilo-instruction, nJ")
#: A dynamic policy's adjustments (`diagnostics`).
DYNAMIC_DIAGNOSTICS = ("re-colouring stall, % of the threads' cycles", "repartitions per run", "pages re-coloured per run")
STALL = DYNAMIC_DIAGNOSTICS[0]
SWAP_INS = "pages read back from swap per run (major faults)"

#: Built-in synthetic profiles: stream (libquantum-like), random (mcf-like), copy (lbm-like), light.
PROFILES = ("stream", "random", "copy", "light")
ALL = list(SUITE) + list(PROFILES)


def program_path(name: str) -> str:
    """A pool name's program for a run spec: a committed trace path or a profile name."""
    return SUITE.get(name, name)


def short(program: str) -> str:
    """A program's name for tables: the suite name of a trace path, or the profile (with its
    parameters, whose numbers may hold a '.')."""
    if program.split(":", 1)[0] in api.PROFILES:
        return program
    base = os.path.basename(program)
    for name, trace in SUITE.items():
        if base == os.path.basename(trace):
            return name
    return base.split(".")[0]


@functools.lru_cache(maxsize=None)
def measured(machine: str, warmup: int, instructions: int) -> dict[str, dict[str, Any]]:
    """Every pool program alone on ``machine`` with the experiment's warm-up and window: its
    statistics and classes (memtint.workload_classes)."""
    return workload_classes.measure({n: program_path(n) for n in ALL}, machine, warmup=warmup,
                                    instructions=instructions)


def intensive(machine: str, warmup: int, instructions: int) -> list[str]:
    """The memory-intensive pool on ``machine``: alone LLC MPKI > 1 (bpm.md §4), measured."""
    return workload_classes.intensive(measured(machine, warmup, instructions), ALL)


def __getattr__(name: str) -> Any:
    # INTENSIVE for callers without an experiment's settings: the i7-860 with compare's
    # warm-up and the longest i7-860 window (bpm's), measured on first use.
    if name == "INTENSIVE":
        from memtint.reproduce import bpm

        return intensive(bpm.MACHINE, comparison.DEFAULT_WARMUP, bpm.SIZES["full"]["instructions"])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: Warm-up of ``--quick`` runs (their measured windows are a few hundred thousand instructions).
QUICK_WARMUP = 1_000_000


@dataclass
class Settings:
    """What every experiment of one invocation shares. ``warmup`` (instructions per core run
    through page tables and caches before statistics, as ``compare`` does) goes into run specs
    when nonzero."""

    seeds: int = 3
    mix_seed: int = 20240
    warmup: int = 0
    quick: bool = False
    scale: float = 1.0  # multiplies instruction counts (tests use small values)
    #: Sampled simulation of the mix experiments' runs (the run spec's ``sampling``; ``memtint
    #: reproduce --sample``); None: detailed runs. See :meth:`MixExperiment.plan`.
    sampling: dict[str, Any] | None = None

    def seed_list(self) -> list[int]:
        return list(range(1, self.seeds + 1))

    def instructions(self, base: int) -> int:
        return max(10_000, int(base * self.scale))


def with_warmup(spec: dict[str, Any], settings: Settings) -> dict[str, Any]:
    if settings.warmup:
        spec["warmup"] = int(settings.warmup)
    return spec


def add_rt_job(keys: dict[tuple, str], jobs: list[dict[str, Any]], key: tuple, spec: dict[str, Any]) -> None:
    """A real-time run (memtint.run_rt) as a job of the runner, keyed by ``key``."""
    k = spec_key({"rt": spec})
    keys[key] = k
    jobs.append({"key": k, "phase": "shared", "spec": spec, "kind": "rt", "experiment": str(key[0])})


def add_job(keys: dict[tuple, str], jobs: list[dict[str, Any]], key: tuple, spec: dict[str, Any],
            settings: Settings, warmup_cap: int) -> None:
    """Plan one shared run under ``key``, with the settings' warm-up (at most ``warmup_cap`` per
    thread: runs of many threads do that many times a one-program run's warm-up work) when nonzero."""
    if settings.warmup:
        spec["warmup"] = min(int(settings.warmup), warmup_cap)
    k = spec_key(spec)
    keys[key] = k
    jobs.append({"key": k, "phase": "shared", "spec": spec, "experiment": str(key[0])})


def draw_mixes(pool: list[str], size: int, count: int, seed: int, replace: bool = False) -> list[list[str]]:
    """``count`` distinct mixes of ``size`` pool names, drawn with ``random.Random(seed)``."""
    rng = random.Random(seed)
    mixes: list[list[str]] = []
    tries = 0
    while len(mixes) < count and tries < 1000:
        tries += 1
        mix = sorted(rng.choices(pool, k=size) if replace or size > len(pool) else rng.sample(pool, size))
        if mix not in mixes:
            mixes.append(mix)
    return mixes


@dataclass
class Variant:
    """One column of a mix experiment: a label, the placement policy, the controller scheduler
    (None: the machine's), the machine for the shared run (None: the experiment's), and options
    of the policy (the ``[os]`` table; a documented option such as the colour split, never a
    model parameter)."""

    label: str
    policy: str
    scheduler: str | None = None
    machine: str | None = None
    os: dict[str, Any] | None = None


def samplable(os_table: dict[str, Any] | None, at_end: str | None = None) -> bool:
    """Whether a shared run with this ``[os]`` table and ``at_end`` can be sampled: what the
    engine refuses under sampling (multicore/sampling.rs, ``check_run``) is absent: a dynamic
    policy, migration, swapping, hot-page sampling, threads halting at their target."""
    os_table = os_table or {}
    return (not at_end and os_table.get("dynamic", "none") == "none" and os_table.get("migration", "none") == "none"
            and os_table.get("overflow") != "swap" and not (os_table.get("hot_pages") or {}).get("enabled"))


@dataclass
class MixExperiment:
    """mixes x variants x seeds on machines; alone runs under buddy with the machine's scheduler."""

    name: str
    machines: list[str]
    mixes: list[list[str]]
    variants: list[Variant]
    instructions: int
    baseline: str
    mix_seed: int
    #: The shared runs' ``at_end`` (None: the run's default, threads keep running after their
    #: target): "wait" halts each program at its target, so that a program slowed a thousandfold
    #: (swapping) is not accompanied by seven others simulated for as long.
    at_end: str | None = None
    #: The seeds of this experiment's runs (None: the settings'): a study over hundreds of mixes
    #: spreads over mixes rather than seeds.
    seeds: list[int] | None = None
    jobs: list[dict[str, Any]] = field(default_factory=list)
    # (machine, mix index, seed, label) -> shared key; (machine, mix index, seed) -> alone keys
    shared: dict[tuple, str] = field(default_factory=dict)
    alone: dict[tuple, list[str]] = field(default_factory=dict)

    def seed_list(self, settings: Settings) -> list[int]:
        """The seeds this experiment runs: its own, or the settings'."""
        return self.seeds or settings.seed_list()

    def sampled_variants(self, settings: Settings) -> list[str]:
        """The variants whose shared runs are sampled (``settings.sampling``; not those sampling
        does not support, :func:`samplable`, which run detailed; none when the runs are too short
        for two units, :func:`memtint.sampling.units`)."""
        if not settings.sampling or not sampling_module.units(settings.sampling, self.instructions):
            return []  # detailed, or too short for two units: detailed
        return [v.label for v in self.variants if samplable(v.os, self.at_end)]

    def plan(self, settings: Settings) -> list[dict[str, Any]]:
        """The experiment's jobs. With ``settings.sampling``, the alone runs and the shared runs
        of the variants sampling supports are sampled (``sampling`` in their specs); the others
        run detailed, and their metrics are still comparable estimates of the same quantities.
        Sampled variants measure matched units (``matched``, default true in periodic mode, as in
        compare and sweeps; docs/sampling.md): the baseline's run of a mix and seed (the first
        sampled variant's, when the baseline is not sampled) paces the units, and the other
        sampled variants' jobs name it in ``schedule_from`` and replay its schedule."""
        sampled = set(self.sampled_variants(settings))
        table, matched = sampling_module.engine_sampling(settings.sampling if sampled else None)
        alone_sampling = table
        labels = [v.label for v in self.variants]
        pacer = ((self.baseline if self.baseline in sampled else next(x for x in labels if x in sampled))
                 if matched and len(sampled) > 1 else None)
        for machine in self.machines:
            for m, mix in enumerate(self.mixes):
                programs = [program_path(p) for p in mix]
                for seed in self.seed_list(settings):
                    alone_keys = []
                    for spec in comparison.build_alone_specs(machine, programs, instructions=self.instructions,
                                                             seed=seed, baseline="buddy", warmup=settings.warmup,
                                                             sampling=alone_sampling):
                        with_warmup(spec, settings)
                        k = spec_key(spec)
                        alone_keys.append(k)
                        self.jobs.append({"key": k, "phase": "alone", "spec": spec, "experiment": self.name})
                    self.alone[(machine, m, seed)] = alone_keys
                    jobs = {}
                    for v in self.variants:
                        spec = api.build_sim_spec(v.machine or machine, programs, instructions=self.instructions,
                                                  policy=v.policy, seed=seed, scheduler=v.scheduler,
                                                  os_options=v.os, sampling=table if v.label in sampled else None)
                        if self.at_end:
                            spec["at_end"] = self.at_end
                        with_warmup(spec, settings)
                        job = {"key": spec_key(spec), "phase": "shared", "spec": spec, "experiment": self.name}
                        if v.policy in comparison.profiled_policies():
                            job["profiles_from"] = alone_keys
                            job["key"] = spec_key({**spec, "profiles_from": alone_keys})
                        jobs[v.label] = job
                    for label, job in jobs.items():
                        if pacer is not None and label in sampled and label != pacer:
                            job["schedule_from"] = jobs[pacer]["key"]
                            job["key"] = spec_key({**job["spec"], "schedule_from": job["schedule_from"],
                                                   **({"profiles_from": job["profiles_from"]}
                                                      if "profiles_from" in job else {})})
                        self.shared[(machine, m, seed, label)] = job["key"]
                        self.jobs.append(job)
        return self.jobs

    def runs(self, results: dict[str, Any], machine: str, m: int, seed: int) -> dict[str, dict[str, Any]]:
        """Each variant's run on one mix and seed, with WS, MS and per-program slowdowns."""
        alone = [results[k]["cores"][0] for k in self.alone[(machine, m, seed)]]
        out = {}
        for v in self.variants:
            run = results[self.shared[(machine, m, seed, v.label)]]
            metrics = api.mix_metrics([{"ipc_alone": a["ipc"], "ipc_shared": c["ipc"]}
                                       for a, c in zip(alone, run["cores"])])
            out[v.label] = {**run, "ws": metrics["weighted_speedup"], "ms": metrics["maximum_slowdown"],
                            "hs": metrics["harmonic_speedup"], "slowdowns": metrics["slowdowns"], "alone": alone}
            if sampling_module.is_sampled(run) or any(a.get("sampling") for a in alone):
                # Sampled estimates: their 95 % intervals (memtint.sampling; a detailed side adds none).
                intervals = sampling_module.mix_intervals(alone, run)
                out[v.label].update(ws_ci95=intervals["weighted_speedup"], ms_ci95=intervals["maximum_slowdown"],
                                    hs_ci95=intervals["harmonic_speedup"], slowdowns_ci95=intervals["slowdowns"])
        return out


# --- statistics over seeds ---------------------------------------------------------------------

def summarise(values: list[float]) -> dict[str, float]:
    clean = [v for v in values if v is not None and not math.isnan(v)]
    if not clean:
        return {"mean": float("nan"), "sd": float("nan"), "min": float("nan"), "max": float("nan"), "n": 0}
    return {"mean": statistics.fmean(clean), "sd": statistics.stdev(clean) if len(clean) > 1 else 0.0,
            "min": min(clean), "max": max(clean), "n": len(clean)}


def pct(a: float, b: float) -> float:
    return 100.0 * (a / b - 1.0) if b else float("nan")


# --- diagnostics ---------------------------------------------------------------------------------

def _wmean(cores: list[dict[str, Any]], key: str, weight: str = "dram_reads") -> float:
    total = sum((c.get(weight) or 0) for c in cores)
    if not total:
        return statistics.fmean([c.get(key) or 0.0 for c in cores]) if cores else float("nan")
    return sum((c.get(key) or 0.0) * (c.get(weight) or 0) for c in cores) / total



def diagnostics(run: dict[str, Any]) -> dict[str, float]:
    """Measured quantities of one run that can explain a result (names are what the report shows)."""
    cores = run["cores"]
    instr = sum(c["instructions"] for c in cores) or 1
    d = {
        "row-buffer miss rate": run.get("row_buffer_miss_rate"),
        "LLC MPKI (mean per program)": statistics.fmean(c["llc_mpki"] for c in cores),
        "DRAM writes per kilo-instruction": 1000.0 * sum(c["dram_writes"] for c in cores) / instr,
        "DRAM reads per kilo-instruction": 1000.0 * sum(c["dram_reads"] for c in cores) / instr,
        "read latency, ns (mean, weighted by reads)": _wmean(cores, "read_latency_ns_mean"),
        "bank-level parallelism (mean per program)": statistics.fmean(c["bank_level_parallelism"] or 0.0 for c in cores),
        "banks used (mean per program)": statistics.fmean(c["banks_used"] or 0 for c in cores),
        "channels used (mean per program)": statistics.fmean(c["channels_used"] or 0 for c in cores),
    }
    whole = run_instructions(run) or 1  # the run-level DRAM totals' instructions
    if run.get("dram_power_mw") is not None:
        d["DRAM power, W"] = run["dram_power_mw"] / 1000.0
        d["DRAM energy per kilo-instruction, nJ"] = 1000.0 * run["dram_energy_nj"] / whole
        d["DRAM standby energy per kilo-instruction, nJ"] = 1000.0 * (run.get("dram_background_nj") or 0.0) / whole
    if run.get("dram_activations") is not None:
        d["activations per kilo-instruction"] = 1000.0 * run["dram_activations"] / whole
    # A dynamic policy's adjustments and what moving pages cost; a static policy moves none (its
    # zeros let a cause set a dynamic policy against its static baseline).
    dynamic = run.get("dynamic") or {}
    d["re-colouring stall, % of the threads' cycles"] = recolour_overhead(run) if dynamic else 0.0
    d["repartitions per run"] = dynamic.get("repartitions", 0)
    d["pages re-coloured per run"] = dynamic.get("pages_recoloured", 0)
    if run.get("swap") is not None:  # with os.overflow = "swap": what swapping cost (BPM's pressure runs)
        d[SWAP_INS] = run["swap"].get("swap_ins", 0) or 0
        d["pages in swap (at the end of the run)"] = run["swap"].get("swapped", 0) or 0
    if run.get("simulated_ns"):
        d["simulated time, ms"] = run["simulated_ns"] / 1e6
    if run.get("queue_read_mean") is not None:
        d["read queue occupancy (mean, all channels)"] = run["queue_read_mean"]
    d.update(row_buffer_causes(cores))
    mb = _llc_mb(run, cores)
    if mb is not None:
        d["LLC occupancy, MiB (mean per program)"] = statistics.fmean(mb)
    if "slowdowns" in run:
        light = [s for s, a in zip(run["slowdowns"], run["alone"]) if a["llc_mpki"] <= 1.0]
        heavy = [s for s, a in zip(run["slowdowns"], run["alone"]) if a["llc_mpki"] > 1.0]
        if light:
            d["slowdown of light programs (alone MPKI <= 1)"] = statistics.fmean(light)
            d["LLC MPKI of light programs"] = statistics.fmean(
                c["llc_mpki"] for c, a in zip(cores, run["alone"]) if a["llc_mpki"] <= 1.0)
            if mb is not None:
                d["LLC occupancy of light programs, MiB (mean)"] = statistics.fmean(
                    x for x, a in zip(mb, run["alone"]) if a["llc_mpki"] <= 1.0)
        if heavy:
            d["slowdown of intensive programs (alone MPKI > 1)"] = statistics.fmean(heavy)
        if run["slowdowns"]:
            d[MAX_SLOWDOWN] = max(run["slowdowns"])
    return {k: v for k, v in d.items() if v is not None}


#: Row-buffer misses and conflicts caused by another program (docs/stats.md, "Row-buffer causes").
INTERFERENCE = "row conflicts caused by another program (per kilo-request)"
#: Row conflicts a program caused itself: what bank partitioning leaves, and adds when a program's
#: rows share fewer banks.
SELF_CONFLICTS = "row conflicts a program caused itself (per kilo-request)"
#: The largest slowdown against its alone run of any program in a run (what MS is).
MAX_SLOWDOWN = "maximum slowdown"


def row_buffer_causes(cores: list[dict[str, Any]]) -> dict[str, float]:
    """Why requests missed the row buffer, over the programs: conflicts and misses another program
    caused per 1000 DRAM requests, and the share of the row-buffer misses (misses + conflicts)
    that write-backs and prefetches had. Empty for runs without these statistics."""
    if not cores or any(c.get("row_conflicts_by_other") is None for c in cores):
        return {}
    requests = sum(c["row_hits"] + c["row_misses"] + c["row_conflicts"] for c in cores)
    if not requests:
        return {}

    def total(key: str) -> int:
        return sum(c[key] for c in cores)

    d = {
        INTERFERENCE: 1000.0 * total("row_conflicts_by_other") / requests,
        SELF_CONFLICTS: 1000.0 * total("row_conflicts_by_self") / requests,
        "row misses after another program's precharge (per kilo-request)":
            1000.0 * total("row_misses_after_other") / requests,
    }
    missed = total("row_misses") + total("row_conflicts")
    if missed and all(c.get("row_outcomes_by_kind") for c in cores):
        def share(kind: str) -> float:
            return sum(c["row_outcomes_by_kind"][kind]["misses"] + c["row_outcomes_by_kind"][kind]["conflicts"]
                       for c in cores) / missed
        d["row-buffer misses of write-backs (share)"] = share("write_back")
        d["row-buffer misses of prefetches (share)"] = share("prefetch_read")
    return d


def _llc_mb(run: dict[str, Any], cores: list[dict[str, Any]]) -> list[float] | None:
    """Each program's mean LLC occupancy in MiB, or None for runs without it (or without an LLC)."""
    line = run.get("llc_line_bytes")
    if not line or any(c.get("llc_lines_mean") is None for c in cores):
        return None
    return [c["llc_lines_mean"] * line / 2**20 for c in cores]


#: The smallest scale a change of a diagnostic is ranked against, by the diagnostic's unit: 5 % of
#: the requests, or of the row-buffer misses. A smaller count can change by a large factor and
#: still move few requests.
MATERIAL = {"(per kilo-request)": 50.0, "(share)": 0.05}


def explain(pairs: list[tuple[dict[str, float], dict[str, float]]], top: int = 3,
            labels: tuple[str, str] = ("base", "policy"), exclude: tuple[str, ...] = (),
            first: tuple[str, ...] = ()) -> str:
    """The ``top`` diagnostics that changed most between the two sides of ``pairs`` (base,
    policy), as text: measured, not guessed. The change of a diagnostic is that of its mean over
    the pairs, relative to the larger of the two means, and for counts per kilo-request and shares
    of misses to no less than :data:`MATERIAL` (row misses after another program's precharge going
    0.12 -> 5 per kilo-request is 0.5 % of the requests, not a +4000 % cause); diagnostics below
    0.01 on both sides (e.g. write-backs that barely occur) and those in ``exclude`` (what the
    experiment itself sets, e.g. the banks a program may use) are not ranked. Those in ``first`` (what the claim's
    mechanism names) come first whatever their rank, in their order there."""
    if not pairs:
        return ""
    given = tuple(exclude)
    exclude = given + SETTINGS_DIAGNOSTICS
    # A dynamic policy's counts of adjustments start from 0 on a static side: what the policy
    # does, not a cause (a change "from 0" would rank them first); context unless the claim names
    # them. Its stall is a share of the cycles, so it ranks by that share: 20 % of the cycles
    # stalled explains a slowdown, 0.025 % does not.
    counts = DYNAMIC_DIAGNOSTICS[1:]
    keys = [k for k in pairs[0][0] if k not in exclude and (k in first or k not in CONTEXT_DIAGNOSTICS)
            and (k in first or k not in counts)
            and all(k in a and k in b for a, b in pairs)]
    rows = []
    for k in keys:
        a = statistics.fmean(p[0][k] for p in pairs)
        b = statistics.fmean(p[1][k] for p in pairs)
        scale = max(abs(a), abs(b))
        if scale < 0.01:
            continue
        floor = next((f for unit, f in MATERIAL.items() if k.endswith(unit)), 0.0)
        rows.append((abs(b - a) / (100.0 if k == STALL else max(scale, floor)), k, a, b))
    rows.sort(key=lambda r: (first.index(r[1]) if r[1] in first else len(first), -r[0]))
    chosen = []
    for r in rows:  # a diagnostic equal to one already chosen (reads = LLC misses without prefetch) adds nothing
        if not any(abs(r[2] - c[2]) <= 0.01 * max(abs(c[2]), 1e-9) and abs(r[3] - c[3]) <= 0.01 * max(abs(c[3]), 1e-9)
                   for c in chosen):
            chosen.append(r)
    parts = []
    for rel, k, a, b in chosen[:top]:
        change = f"{100 * (b / a - 1):+.0f} %" if a else "from 0"
        parts.append(f"{k} {_fmt(a)} → {_fmt(b)} ({change})")
    text = f"{labels[0]} → {labels[1]}: " + "; ".join(parts)
    # What the policy set, measured in the same runs, as context (not ranked as a cause): the
    # settings per program, and a dynamic policy's adjustments the ranking did not show.
    stall_shown = any(r[1] == STALL for r in chosen[:top])
    shown = [(k, f"{k.split(' (')[0]} per program") for k in SETTINGS_DIAGNOSTICS if k not in given] + [
        (k, k) for k in counts + (() if stall_shown else (STALL,)) if k not in first and k not in given]
    context = []
    for k, name in shown:
        if not all(k in a and k in b for a, b in pairs):
            continue
        a = statistics.fmean(p[0][k] for p in pairs)
        b = statistics.fmean(p[1][k] for p in pairs)
        if abs(b - a) > 0.05 * max(abs(a), abs(b), 1e-9):
            context.append(f"{name} {_fmt(a)} → {_fmt(b)}")
    if context:
        text += " (set by the policy: " + ", ".join(context) + ")"
    return text


def _fmt(x: float) -> str:
    if abs(x) >= 100:
        return f"{x:.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    return f"{x:.3f}" if abs(x) < 1 else f"{x:.2f}"


# --- claims --------------------------------------------------------------------------------------

@dataclass
class Row:
    """One row of a reproduction table: a claim (possibly for one subject), paper vs ours."""

    claim: dict[str, Any]
    subject: str
    per_seed: list[float]
    cause: str = ""
    detail: str = ""
    #: Why the subject has no effect to measure (measured: its DRAM traffic, or a population
    #: that cannot be formed), or "" when it has.
    not_applicable: str = ""
    #: The subject's measured DRAM requests per kilo-instruction (the effect the verdict rests on).
    dram_pki: float | None = None
    #: The population the claim was measured on, as the report states it.
    population: str = ""
    #: For a placement claim (where pages go, not what DRAM does): the pages its subject placed,
    #: the effect its verdict rests on instead of DRAM traffic.
    placed_pages: float | None = None
    #: For a refresh claim (real-time task sets): the loads that met a refreshing rank under
    #: auto-refresh, the effect its verdict rests on instead of DRAM traffic per instruction.
    met_loads: float | None = None
    #: For a real-time claim with attackers: the real-time tasks' loads through the DRAM, the
    #: effect its verdict rests on instead of DRAM traffic per instruction.
    rt_loads: float | None = None
    #: For an adjustment-overhead claim: the pages its policy's partitions displaced per run, the
    #: effect its verdict rests on (no displaced page, no overhead to measure).
    displaced_pages: float | None = None
    #: The half-width of the 95 % sampling interval of the figure (the mean over seeds), when it
    #: is a mean of sampled runs' WS or MS changes (:func:`mix_term_half_widths`); None when
    #: nothing it rests on was sampled or the figure is not such a mean. Separate from the
    #: spread over seeds, which includes the sampling error.
    sampling_half_width: float | None = None
    #: With one seed, the figure's value on each mix of its population when the figure is a mean
    #: over mixes (:data:`MEAN_OVER_MIXES`): the spread a reader can judge it by, since one seed has
    #: none over seeds. None otherwise.
    per_mix: list[float] | None = None
    #: Why the claim's premise does not hold in the runs (a smaller gain needs two gains), or "":
    #: then the row is a miss whatever its figure, with this as its cause.
    precondition_failed: str = ""
    #: With sampled runs, what sampling leaves open beyond the figure's half-width: mixes in or
    #: out of the claim's population by less than their sampling interval (:func:`population_ends`),
    #: or mixes a share counts on either side of its tie line within theirs (:func:`share_ends`),
    #: that move the verdict; "" when nothing does or nothing was sampled.
    sampling_unsettled: str = ""

    @property
    def stats(self) -> dict[str, float]:
        return summarise(self.per_seed)

    @property
    def verdict(self) -> str:
        if self.precondition_failed and not self.not_applicable and self.claim.get("kind") != "info":
            return verdict_rule.NOT_REPRODUCED
        v = verdict_rule.sampled_verdict(self.claim, self.stats["mean"], self.not_applicable, self.per_seed,
                                         self.sampling_half_width)
        if self.sampling_unsettled and v not in (verdict_rule.NOT_APPLICABLE, verdict_rule.MEASURED_ONLY):
            return verdict_rule.UNRESOLVED
        return v

    @property
    def ratio(self) -> float | None:
        return verdict_rule.ratio(self.claim, self.stats["mean"])


def dram_pki(run: dict[str, Any]) -> float:
    """DRAM requests (reads and write-backs) per kilo-instruction of a run, all cores together."""
    cores = run["cores"]
    instructions = sum(c["instructions"] for c in cores)
    return 1000.0 * sum(c["dram_reads"] + c["dram_writes"] for c in cores) / instructions if instructions else 0.0


def no_effect(subject: str, runs: list[dict[str, Any]]) -> str:
    """The reason ``subject`` has no memory-system effect to measure in ``runs`` (its reference
    runs, one per seed), or "" when it has: its DRAM traffic is below :data:`MIN_DRAM_PKI`."""
    return effect(subject, runs)[1]


def effect(subject: str, runs: list[dict[str, Any]]) -> tuple[float, str]:
    """(DRAM requests per kilo-instruction of ``runs``, mean over them; the reason there is no
    effect to measure, or "")."""
    pki = statistics.fmean(dram_pki(r) for r in runs) if runs else 0.0
    if pki >= verdict_rule.MIN_DRAM_PKI:
        return pki, ""
    return pki, (f"{subject}: {pki:.2f} DRAM requests per kilo-instruction (below {verdict_rule.MIN_DRAM_PKI:g}): "
                 "its accesses barely reach DRAM, so there is no effect to measure")


def evaluate(claims: list[dict[str, Any]], experiment: str,
             measure: Callable[[dict[str, Any]], list[Row]]) -> list[Row]:
    rows = []
    for c in claims:
        if c["experiment"] == experiment:
            rows.extend(measure(c))
    return rows


# --- mix claims ------------------------------------------------------------------------------------

def _per_mix(exp: MixExperiment, results: dict[str, Any], machine: str, seed: int) -> list[dict[str, dict]]:
    return [exp.runs(results, machine, m, seed) for m in range(len(exp.mixes))]


#: Mix metrics that are a mean over the mixes of a per-mix figure (not a share, a best or a worst).
MEAN_OVER_MIXES = {"ws_change", "ws_change_over", "ws_ratio", "ms_change", "ms_ratio", "ms_change_over",
                   "rbmiss_change", "recolour_overhead", "ws_vs_best", "bestvp_over_horizontal",
                   "vp_over_horizontal"}


def mix_value(metric: str, runs: list[dict[str, dict]], claim: dict[str, Any], baseline: str) -> float:
    """One seed's value of a mix metric over all mixes (``runs``: per mix, label -> run)."""
    p = claim.get("policy")
    v = claim.get("versus") or baseline
    if metric == "ws_change":
        return statistics.fmean(pct(r[p]["ws"], r[baseline]["ws"]) for r in runs)
    if metric == "ws_change_worst":
        return min(pct(r[p]["ws"], r[baseline]["ws"]) for r in runs)
    if metric == "ws_change_over":
        return statistics.fmean(pct(r[p]["ws"], r[baseline]["ws"]) - pct(r[v]["ws"], r[baseline]["ws"]) for r in runs)
    if metric == "ws_ratio":
        return statistics.fmean(pct(r[p]["ws"], r[v]["ws"]) for r in runs)
    if metric == "ms_change":
        return statistics.fmean(pct(r[p]["ms"], r[baseline]["ms"]) for r in runs)
    if metric == "ms_ratio":
        return statistics.fmean(pct(r[p]["ms"], r[v]["ms"]) for r in runs)
    if metric == "ms_change_over":
        return statistics.fmean(pct(r[p]["ms"], r[baseline]["ms"]) - pct(r[v]["ms"], r[baseline]["ms"]) for r in runs)
    if metric == "power_change_best":  # the paper's "up to": the best mix
        return min(pct(r[p]["dram_power_mw"], r[baseline]["dram_power_mw"]) for r in runs)
    if metric == "energy_change_best":  # energy for the same work: per instruction retired
        return min(pct(energy_per_instruction(r[p]), energy_per_instruction(r[baseline])) for r in runs)
    if metric == "rbmiss_change":
        return statistics.fmean(pct(r[p]["row_buffer_miss_rate"], r[baseline]["row_buffer_miss_rate"]) for r in runs)
    if metric == "recolour_overhead":  # % of the threads' cycles stalled for re-colouring
        return statistics.fmean(recolour_overhead(r[p]) for r in runs)
    if metric == "walk_share_hvr":  # the worst program's accessed-bit walks at HVR's schedule, % of a core
        walks = [w for w in (worst_walk(r[p]) for r in runs) if w]
        return statistics.fmean(100.0 * w[1] for w in walks) if walks else float("nan")
    if metric == "ws_vs_best":  # % against the best, per mix, of the policies in ``versus_best``
        return statistics.fmean(pct(r[p]["ws"], max(r[x]["ws"] for x in claim["versus_best"])) for r in runs)
    if metric == "uf_rule_right":  # % of mixes where the UF rule picks the better of BPM and BPM+
        return 100.0 * statistics.fmean(uf_rule_right(r) for r in runs)
    # Shares of mixes where a policy is at least as fast as others: within HELPS_PCT is a tie, as seeds
    # move a mix's WS by that much (uf_rule_right's 1 % tie likewise).
    if metric == "share_best":  # share of mixes where the policy is at least as fast as each of ``versus_best``
        return sum(not_worse(r[p]["ws"], max(r[x]["ws"] for x in claim["versus_best"])) for r in runs) / len(runs)
    if metric == "share_not_worse":
        return sum(not_worse(r[p]["ws"], r[baseline]["ws"]) for r in runs) / len(runs)
    if metric in ("bestvp_over_horizontal", "vp_over_horizontal"):
        vps = [claim["policy"]] if metric == "vp_over_horizontal" else [k for k in runs[0] if k.endswith("-vp")]
        return statistics.fmean(pct(max(r[x]["ws"] for x in vps), max(r["cache-only"]["ws"], r["bank-only"]["ws"]))
                                for r in runs)
    raise ValueError(f"unknown mix metric {metric!r}")


# --- sampling error of mix figures ------------------------------------------------------------------

def _pct_half_width(a_run: dict[str, Any], b_run: dict[str, Any], key: str) -> float | None:
    """The 95 % sampling half-width of ``pct(a_run[key], b_run[key])`` from the runs'
    ``<key>_ci95`` (:meth:`MixExperiment.runs`), by first-order propagation of the ratio a/b:
    relative half-width sqrt((h_a/a)^2 + (h_b/b)^2), times 100 a/b. This treats the two
    estimates as independent, which overstates the half-width when they share alone runs (as
    every variant of one mix and seed does): their common alone-run error partly cancels in the
    ratio. A side without an interval (a detailed run) adds nothing; None when neither has one."""
    ha = sampling_module.half_width(a_run.get(f"{key}_ci95"))
    hb = sampling_module.half_width(b_run.get(f"{key}_ci95"))
    if ha is None and hb is None:
        return None
    if a_run is b_run or a_run.get("cores") == b_run.get("cores"):
        # The same run on both sides, or two variants that simulated alike (every core's counters
        # and units equal, e.g. one placement under two names): their errors are one, the ratio 1.
        return 0.0
    a, b = a_run[key], b_run[key]
    if not a or not b:
        return float("nan")
    return 100.0 * abs(a / b) * math.hypot((ha or 0.0) / a, (hb or 0.0) / b)


def _ws_change_half_width(a_run: dict[str, Any], b_run: dict[str, Any]) -> float | None:
    """The 95 % sampling half-width of ``pct(a_run["ws"], b_run["ws"])``, two variants of one mix
    and seed (the same alone runs), by :func:`memtint.sampling.difference_intervals`: the alone
    runs' errors largely cancel in the ratio, which :func:`_pct_half_width` counts twice. None
    when nothing it rests on was sampled."""
    if not any(sampling_module.is_sampled(r) or any(a.get("sampling") for a in r.get("alone") or [])
               for r in (a_run, b_run)):
        return None
    if a_run is b_run or a_run.get("cores") == b_run.get("cores"):
        return 0.0  # one run, or two variants that simulated alike: their errors are one
    change = sampling_module.difference_intervals(a_run["alone"], a_run, b_run)["weighted_speedup_change"]
    h = sampling_module.half_width(change)
    return None if h is None else 100.0 * h


def _difference_half_width(h1: float | None, h2: float | None) -> float | None:
    """The half-width of a difference of two estimates, treated as independent (overstated when
    they share runs, as two changes against one baseline do); None when neither has one."""
    if h1 is None and h2 is None:
        return None
    return math.hypot(h1 or 0.0, h2 or 0.0)


def mix_term_half_widths(metric: str, runs: list[dict[str, dict]], claim: dict[str, Any],
                         baseline: str) -> list[float | None] | None:
    """The sampling half-widths of the per-mix terms :func:`mix_value` averages for one seed
    (``runs``: per mix, label -> run), for the metrics that are means of WS or MS changes, and
    the worst mix's WS change and the best mix's DRAM power or energy change (one term), and the
    row-buffer miss rate's change: a term is None when nothing it rests on was sampled. None for
    the other metrics (shares, quantities without intervals): their figure gets no sampling
    half-width."""
    p = claim.get("policy")
    v = claim.get("versus") or baseline
    if metric == "ws_change_worst":
        return [_minimum_half_width([pct(r[p]["ws"], r[baseline]["ws"]) for r in runs],
                                    [_ws_change_half_width(r[p], r[baseline]) for r in runs])]
    if metric == "power_change_best":
        return [_minimum_half_width([pct(r[p]["dram_power_mw"], r[baseline]["dram_power_mw"]) for r in runs],
                                    [_pct_half_width(r[p], r[baseline], "dram_power_mw") for r in runs])]
    if metric == "energy_change_best":
        # Per instruction, over the same instructions on both sides: the energies' relative errors.
        return [_minimum_half_width([pct(energy_per_instruction(r[p]), energy_per_instruction(r[baseline])) for r in runs],
                                    [_pct_half_width(r[p], r[baseline], "dram_energy_nj") for r in runs])]
    if metric in ("ws_vs_best", "bestvp_over_horizontal", "vp_over_horizontal"):
        # A difference of maxima: the half-width of the difference of the two runs the maxima
        # chose (first order: a close second in either max is not counted).
        return [_change_half_width(r[a], r[b]) for r in runs for a, b in [_best_of_pair(metric, r, claim)]]
    if metric == "rbmiss_change":  # two runs' row-buffer miss rates, each within its interval
        return [_pct_half_width(r[p], r[baseline], "row_buffer_miss_rate") for r in runs]
    key = {"ws_change": "ws", "ws_ratio": "ws", "ws_change_over": "ws",
           "ms_change": "ms", "ms_ratio": "ms", "ms_change_over": "ms"}.get(metric)
    if key is None:
        return None
    change = _ws_change_half_width if key == "ws" else (lambda a, b: _pct_half_width(a, b, key))
    if metric.endswith("_change"):
        return [change(r[p], r[baseline]) for r in runs]
    if metric.endswith("_ratio"):
        return [change(r[p], r[v]) for r in runs]
    return [_difference_half_width(change(r[p], r[baseline]), change(r[v], r[baseline])) for r in runs]


def _minimum_half_width(values: list[float], halves: list[float | None]) -> float | None:
    """The half-width of ``min(values)`` when each value is an estimate within its half-width:
    the interval's ends are the values' lowest low end and lowest high end, so a close second
    widens it (the larger distance of the two ends from the minimum). None when no value was
    sampled; infinite when one's half-width is."""
    if all(h is None for h in halves):
        return None
    hs = [h or 0.0 for h in halves]
    if not all(math.isfinite(h) for h in hs):
        return math.inf
    low = min(x - h for x, h in zip(values, hs))
    high = min(x + h for x, h in zip(values, hs))
    return max(min(values) - low, high - min(values))


def _best_of_pair(metric: str, r: dict[str, dict], claim: dict[str, Any]) -> tuple[str, str]:
    """The two variants whose WS one mix's term of a best-of metric compares (:func:`mix_value`):
    (the policy or the best VP, the best of those it is judged against)."""
    best = lambda labels: max(labels, key=lambda k: r[k]["ws"])  # noqa: E731
    if metric == "ws_vs_best":
        return claim["policy"], best(claim["versus_best"])
    vps = [claim["policy"]] if metric == "vp_over_horizontal" else [k for k in r if k.endswith("-vp")]
    return best(vps), best(["cache-only", "bank-only"])


def _share_pair(metric: str, r: dict[str, dict], claim: dict[str, Any], baseline: str) -> tuple[str, str] | None:
    """The two variants a share metric's per-mix test compares, as :func:`mix_value` counts it
    (the mix counts when the first's WS is not worse than the second's, within :data:`HELPS_PCT`);
    None for other metrics."""
    if metric == "share_best":
        return claim["policy"], max(claim["versus_best"], key=lambda k: r[k]["ws"])
    if metric == "share_not_worse":
        return claim["policy"], baseline
    return None


def _share_outcomes(metric: str, r: dict[str, dict], claim: dict[str, Any],
                    baseline: str) -> tuple[set[bool], bool] | None:
    """Whether one mix counts in a share of mixes, as the outcomes its sampling intervals leave
    open ({True}, {False} or both), and whether anything it rests on was sampled; None for other
    metrics. ``uf_rule_right`` is open when the best split's UF under buddy is within its interval
    of the threshold and the two picks fare differently, or when the pick's WS is within its
    interval of the tie line."""
    sampled = False
    if metric == "uf_rule_right":
        low, high = best_split_uf_range(r["buddy"])
        picks = (["bpm"] if high > UF_THRESHOLD else []) + (["bpm-plus"] if low <= UF_THRESHOLD else [])
        pairs = [(pick, "bpm-plus" if pick == "bpm" else "bpm") for pick in picks]
        sampled = _traffic_sampled(r["buddy"])
    else:
        pair = _share_pair(metric, r, claim, baseline)
        if pair is None:
            return None
        pairs = [pair]
    outcomes: set[bool] = set()
    for a, b in pairs:
        h = _change_half_width(r[a], r[b])
        sampled = sampled or h is not None
        margin = pct(r[a]["ws"], r[b]["ws"]) + HELPS_PCT  # >= 0: not worse, counted
        if h is not None and (not math.isfinite(h) or abs(margin) <= h):
            outcomes |= {True, False}
        else:
            outcomes.add(margin >= 0)
    return outcomes, sampled


def share_ends(metric: str, runs_per_seed: list[list[dict[str, dict]]], claim: dict[str, Any],
               baseline: str) -> tuple[list[float], list[float], int] | None:
    """For a share of mixes (``share_best``, ``share_not_worse``, ``uf_rule_right``) of sampled
    runs: per seed the share with every mix whose count its sampling intervals leave open
    (:func:`_share_outcomes`) left out, and with every such mix counted in, and how many (mix,
    seed) pairs are open; None for other metrics or detailed runs."""
    low, high, close, sampled = [], [], 0, False
    scale = 100.0 if metric == "uf_rule_right" else 1.0  # a percentage, the others fractions (mix_value)
    for runs in runs_per_seed:
        lo = hi = 0
        for r in runs:
            found = _share_outcomes(metric, r, claim, baseline)
            if found is None:
                return None
            outcomes, was_sampled = found
            sampled = sampled or was_sampled
            if len(outcomes) > 1:
                close += 1
                hi += 1
            else:
                lo += True in outcomes
                hi += True in outcomes
        low.append(scale * lo / len(runs))
        high.append(scale * hi / len(runs))
    return (low, high, close) if sampled else None


#: The half-width of a mean of independent estimates (memtint.sampling, shared with sweeps' reports).
mean_half_width = sampling_module.mean_half_width


def recolour_overhead(run: dict[str, Any]) -> float:
    """A dynamic policy's adjustment overhead in a run: the cycles its threads stalled for their
    pages' re-colouring (copies and shootdowns), % of their cycles."""
    cycles = sum(c["cycles"] for c in run["cores"])
    stalled = sum((c.get("page_migration") or {}).get("recolour_cycles", 0) for c in run["cores"])
    return 100.0 * stalled / cycles if cycles else float("nan")


#: BPM+'s unbalance threshold (bpm.md §2.9, Fig. 6) and the total bandwidth below which channel
#: partitioning makes no difference (Fig. 5: about 2 GB/s on the i7-860's two channels).
UF_THRESHOLD = 0.2
BUSY_GBPS = 2.0


def _channels(run: dict[str, Any]) -> list[list[int]]:
    """Each core's channels in a run (a run stored without them: the even split's, the first
    half of the processes in channel 0)."""
    cores = run["cores"]
    half = len(cores) // 2
    return [c.get("channels") or [0 if i < half else 1] for i, c in enumerate(cores)]


def channel_uf(run: dict[str, Any], loads: dict[str, Any] | None = None) -> float:
    """The unbalance factor of a BPM+ run's channels: (max - min) / min of the channels' loads
    (|BUC0 - BUC1| / min(BUC0, BUC1) for two), each the DRAM traffic of the programs
    whose pages are in it (a core's ``channels``, its load split evenly over several). With
    ``loads``, a run of the same mix whose cores' traffic is used instead (buddy's: the same
    basis as :func:`best_split_uf`)."""
    where = _channels(run)
    load = [0.0] * max(2, 1 + max(ch for w in where for ch in w))
    for c, w in zip((loads or run)["cores"], where):
        for ch in w:
            load[ch] += comparison.dram_traffic(c) / len(w)
    return (max(load) - min(load)) / min(load) if min(load) > 0 else float("inf")


def channel_partitioned(run: dict[str, Any]) -> bool:
    """Whether a run gave every program only part of the channels it recorded."""
    where = [c.get("channels") for c in run["cores"]]
    if not all(where):
        return False
    every = {ch for w in where for ch in w}
    return len(every) > 1 and all(len(w) < len(every) for w in where)


def channel_split(programs: list[str], run: dict[str, Any]) -> str:
    """A channel-partitioned run's programs per channel ("fdtd + stream in 0, random + stencil in 1")."""
    where = _channels(run)
    return ", ".join(" + ".join(p for p, w in zip(programs, where) if ch in w) + f" in {ch}"
                     for ch in sorted({ch for w in where for ch in w}))


def channel_mates(programs: list[str], run: dict[str, Any], i: int) -> str:
    """The programs that share core ``i``'s channels in ``run`` ("nobody" when none does)."""
    where = _channels(run)
    mates = [p for j, (p, w) in enumerate(zip(programs, where)) if j != i and set(w) & set(where[i])]
    return " + ".join(mates) or "nobody"


def most_hurt(named: list[tuple[list[str], dict[str, Any], dict[str, Any]]], labels: tuple[str, str]) -> str:
    """Over one mix's runs (programs, reference run, policy run), the program whose slowdown
    the policy raised most, and when the policy partitions channels, what shares its channel."""
    programs = named[0][0]
    ref = [statistics.fmean(r["slowdowns"][i] for _, r, _ in named) for i in range(len(programs))]
    pol = [statistics.fmean(r["slowdowns"][i] for _, _, r in named) for i in range(len(programs))]
    i = max(range(len(programs)), key=lambda j: pol[j] / ref[j])
    text = f"{programs[i]} is hurt most: slowdown {_fmt(ref[i])} → {_fmt(pol[i])} ({labels[0]} → {labels[1]})"
    if channel_partitioned(named[0][2]):
        text += (f"; {labels[1]}'s channels: {channel_split(programs, named[0][2])} ({programs[i]} beside "
                 f"{channel_mates(programs, named[0][2], i)})")
    return text


def best_split_uf(run: dict[str, Any]) -> float:
    """The smallest UF any assignment of a run's programs to two channels gives, each program's
    load its DRAM traffic in ``run`` (a run without channel partitioning: buddy). Above
    :data:`UF_THRESHOLD`, no assignment balances the mix (the paper's workloads 1''-6'', where one
    program's bandwidth exceeds the others' together)."""
    load = [comparison.dram_traffic(c) for c in run["cores"]]
    best = float("inf")
    for mask in range(1, 2 ** len(load) - 1):
        a = sum(x for i, x in enumerate(load) if mask >> i & 1)
        b = sum(load) - a
        if min(a, b) > 0:
            best = min(best, abs(a - b) / min(a, b))
    return best


def _traffic_sampled(run: dict[str, Any]) -> bool:
    """Whether a run's cores' DRAM traffic carries a sampling interval."""
    return any(c.get("sampling") for c in run["cores"])


def _traffic_bounds(run: dict[str, Any]) -> list[tuple[float, float]]:
    """Each core's DRAM traffic (:func:`memtint.comparison.dram_traffic`) as a range: its
    sampling interval (:func:`memtint.sampling.traffic_half_width`), or the value itself in a
    detailed run."""
    out = []
    for c in run["cores"]:
        x, h = comparison.dram_traffic(c), sampling_module.traffic_half_width(c)
        out.append((x, x) if h is None else (max(0.0, x - h), x + h))
    return out


def _imbalance_range(loads: list[tuple[float, float]]) -> tuple[float, float]:
    """The range of (max - min) / min of loads each within ``[low, high]``: the highest is the
    largest high over another's low (exact); the lowest, the largest low over another's high, at
    least 0 (exact for two loads, a bound below for more)."""
    inf = float("inf")

    def ratio(x: float, y: float) -> float:
        return x / y - 1.0 if y > 0 else inf  # a channel that may carry nothing: as channel_uf

    pairs = [(a, b) for i, a in enumerate(loads) for j, b in enumerate(loads) if i != j]
    return (max(0.0, max(ratio(a[0], b[1]) for a, b in pairs)), max(ratio(a[1], b[0]) for a, b in pairs))


def best_split_uf_range(run: dict[str, Any]) -> tuple[float, float]:
    """The range of :func:`best_split_uf` with each program's traffic anywhere in its sampling
    interval (a detailed run: the value, twice). The low end is exact (the least of every
    split's lowest); the high end is the least of every split's highest, which a maximum of
    minima cannot exceed."""
    bounds = _traffic_bounds(run)
    total = (sum(b[0] for b in bounds), sum(b[1] for b in bounds))
    low = high = float("inf")
    for mask in range(1, 2 ** len(bounds) - 1):
        a = (sum(b[0] for i, b in enumerate(bounds) if mask >> i & 1),
             sum(b[1] for i, b in enumerate(bounds) if mask >> i & 1))
        other = (total[0] - a[0], total[1] - a[1])
        if a[1] <= 0 or other[1] <= 0:  # a side with no traffic in any case, as best_split_uf skips
            continue
        lo, hi = _imbalance_range([a, other])
        low, high = min(low, lo), min(high, hi)
    return low, high


def channel_uf_range(run: dict[str, Any]) -> tuple[float, float]:
    """The range of :func:`channel_uf` with each program's traffic anywhere in its sampling
    interval (a core over several channels counted in each independently: a wider range)."""
    where = _channels(run)
    loads = [[0.0, 0.0] for _ in range(max(2, 1 + max(ch for w in where for ch in w)))]
    for (lo, hi), w in zip(_traffic_bounds(run), where):
        for ch in w:
            loads[ch][0] += lo / len(w)
            loads[ch][1] += hi / len(w)
    return _imbalance_range([(lo, hi) for lo, hi in loads])


def uf_rule_right(runs: dict[str, dict[str, Any]]) -> float:
    """1 when BPM+'s rule (UF above the threshold: BPM, no channel partitioning; else BPM+)
    picks the better of ``bpm`` and ``bpm-plus`` on this mix or they are within 1 % of each other.
    The UF is the paper's: that of the assignment of programs to channels that minimises it
    (bpm.md §2.9, Step 1), from the programs' traffic under buddy, not the static even split's."""
    pick, other = ("bpm", "bpm-plus") if best_split_uf(runs["buddy"]) > UF_THRESHOLD else ("bpm-plus", "bpm")
    return float(not_worse(runs[pick]["ws"], runs[other]["ws"]))


def swapped(run: dict[str, Any]) -> int:
    """Pages a run sent to swap: during the measured run, or before it and still there."""
    s = run.get("swap") or {}
    return s.get("swap_outs", 0) + s.get("swapped", 0)


def run_instructions(run: dict[str, Any]) -> float:
    """The instructions a run's DRAM totals are over: each core's ``instructions``, or in a sampled
    run its instructions within the run (its ``instructions`` are its units' own, and the run's
    DRAM totals estimates for the whole run: runner.slim)."""
    return sum((c.get("sampling") or {}).get("run_instructions") or c["instructions"] for c in run["cores"])


def energy_per_instruction(run: dict[str, Any]) -> float:
    return run["dram_energy_nj"] / max(1, run_instructions(run))


def _compared(claim: dict[str, Any], runs: list[dict[str, dict]], baseline: str) -> tuple[str, str]:
    """The two sides a claim's diagnostics compare: (reference label, policy label)."""
    metric = claim["metric"]
    if metric in ("bestvp_over_horizontal",):
        best = max((k for k in runs[0] if k.endswith("-vp")), key=lambda k: sum(r[k]["ws"] for r in runs))
        horiz = max(("cache-only", "bank-only"), key=lambda k: sum(r[k]["ws"] for r in runs))
        return horiz, best
    if metric == "vp_over_horizontal":
        horiz = max(("cache-only", "bank-only"), key=lambda k: sum(r[k]["ws"] for r in runs))
        return horiz, claim["policy"]
    if metric in ("ws_vs_best", "share_best"):
        return max(claim["versus_best"], key=lambda k: sum(r[k]["ws"] for r in runs)), claim["policy"]
    if metric in ("ws_ratio", "ms_ratio", "ws_change_over", "ms_change_over", "uf_rule_right", "recolour_overhead"):
        return claim.get("versus") or baseline, claim["policy"]
    return baseline, claim["policy"]


#: Populations a claim can be restricted to (``population`` in configs/reproductions/*.toml):
#: name -> (test on one mix's runs over seeds, label -> list of runs, and the claim; description
#: of the claim's population).
Population = tuple[Callable[[dict[str, list[dict]], dict[str, Any]], bool], Callable[[dict[str, Any]], str]]


def _mean_ws(runs: list[dict]) -> float:
    return statistics.fmean(r["ws"] for r in runs)


#: A policy helps a mix when it raises WS by more than this, %: a smaller gain is within what
#: seeds move a mix's WS by (0.1-0.5 % in the reproductions' mix tables), so a tie is not help.
HELPS_PCT = 1.0

def not_worse(ws: float, other: float) -> bool:
    """Whether weighted speedup ``ws`` is at least ``other``'s, a loss within :data:`HELPS_PCT`
    being a tie."""
    return ws >= other * (1 - HELPS_PCT / 100)


#: A claim restricted to a population is measured on at least this many mixes; on fewer, its
#: figure is an anecdote about those mixes, and the row says that the population cannot be formed.
MIN_POPULATION_MIXES = 3

POPULATIONS: dict[str, Population] = {
    "both-horizontal-help": (
        lambda runs, claim: all(pct(_mean_ws(runs[h]), _mean_ws(runs["buddy"])) > HELPS_PCT
                                for h in ("cache-only", "bank-only")),
        lambda claim: f"the mixes where both horizontal policies (cache-only and bank-only) raise WS over buddy by "
                      f"more than {HELPS_PCT:g} %, mean over seeds"),
    "uf-unbalanced": (
        lambda runs, claim: statistics.fmean(best_split_uf(r) for r in runs["buddy"]) > UF_THRESHOLD,
        lambda claim: f"the mixes no assignment of programs to channels balances (the best split's UF > "
                      f"{UF_THRESHOLD}, from each program's DRAM traffic under buddy; the paper's 1''-6''), mean over "
                      "seeds"),
    "uf-balanced-busy": (
        lambda runs, claim: statistics.fmean(channel_uf(r) for r in runs["bpm-plus"]) <= UF_THRESHOLD
        and statistics.fmean(r["bandwidth_gbps"] for r in runs["buddy"]) >= BUSY_GBPS,
        lambda claim: f"the mixes static BPM+ balances (UF <= {UF_THRESHOLD}) that use at least {BUSY_GBPS:g} GB/s "
                      "under buddy, mean over seeds"),
    "bpm-swaps": (
        lambda runs, claim: statistics.fmean(swapped(r) for r in runs["bpm"]) > 0,
        lambda claim: "the mixes where static BPM's even split makes a program swap (its colours hold less than its "
                      "footprint), mean over seeds"),
    # The paper's region 3 for HVR online (multipolicy-hvr.md §6), with the claim's own candidates.
    "best-versus-ahead": (
        lambda runs, claim: max(_mean_ws(runs[p]) for p in claim["versus_best"]) > _mean_ws(runs[claim["policy"]]),
        lambda claim: f"the mixes where a policy {claim['policy']} is judged against ({', '.join(claim['versus_best'])}) "
                      f"has a higher WS than {claim['policy']}, mean over seeds"),
}


def _change_half_width(a_run: dict[str, Any], b_run: dict[str, Any]) -> float | None:
    """The sampling half-width of ``pct(a_run["ws"], b_run["ws"])``: over the mix's common alone
    runs when the runs carry them (:func:`_ws_change_half_width`), else from their own intervals."""
    if "alone" in a_run and "alone" in b_run:
        return _ws_change_half_width(a_run, b_run)
    return _pct_half_width(a_run, b_run, "ws")


def membership_unsettled(name: str, runs: dict[str, list[dict]], claim: dict[str, Any]) -> bool:
    """Whether one mix's membership of population ``name`` rests on a WS comparison closer than
    its sampling interval (``runs``: label -> runs over seeds, as :data:`POPULATIONS`' tests take
    them): a comparison's margin is the change of the mean WS over seeds less the population's
    threshold, its half-width the mean over seeds of the changes' (first order). False for
    detailed runs and for swapping (a run that swaps runs in detail: :func:`samplable`). The UF
    populations' ends take each program's traffic anywhere in its interval
    (:func:`best_split_uf_range`, :func:`channel_uf_range`, and buddy's bandwidth scaled with its
    programs' traffic), averaged over seeds end by end."""
    if name in ("uf-unbalanced", "uf-balanced-busy"):
        return _uf_membership_unsettled(name, runs)
    if name == "both-horizontal-help":
        pairs, threshold, combine = [(h, "buddy") for h in ("cache-only", "bank-only")], HELPS_PCT, all
    elif name == "best-versus-ahead":
        pairs, threshold, combine = [(p, claim["policy"]) for p in claim["versus_best"]], 0.0, any
    else:
        return False
    if not any(r.get("ws_ci95") or sampling_module.is_sampled(r) for a, b in pairs for r in runs[a] + runs[b]):
        return False
    low, high = [], []
    for a, b in pairs:
        margin = pct(_mean_ws(runs[a]), _mean_ws(runs[b])) - threshold
        h = mean_half_width([_change_half_width(x, y) for x, y in zip(runs[a], runs[b])])
        if h is None or not math.isfinite(h):
            return True  # sampled, but its error unknown
        low.append(margin - h > 0)
        high.append(margin + h > 0)
    return combine(low) != combine(high)


def _uf_membership_unsettled(name: str, runs: dict[str, list[dict]]) -> bool:
    """:func:`membership_unsettled` for the UF populations: each condition of the population's
    test (:data:`POPULATIONS`) at both ends of its range; unsettled when the mix can be both in
    and out."""
    if not any(_traffic_sampled(r) for label in ("buddy", "bpm-plus") for r in runs.get(label, [])):
        return False  # detailed: the population's test is exact

    def mean_range(ranges: list[tuple[float, float]]) -> tuple[float, float]:
        return statistics.fmean(r[0] for r in ranges), statistics.fmean(r[1] for r in ranges)

    if name == "uf-unbalanced":  # in when the best split's UF > the threshold
        low, high = mean_range([best_split_uf_range(r) for r in runs["buddy"]])
        return high > UF_THRESHOLD and not low > UF_THRESHOLD
    # uf-balanced-busy: in when static BPM+'s channel UF <= the threshold and buddy is busy
    low, high = mean_range([channel_uf_range(r) for r in runs["bpm-plus"]])
    balanced = {low <= UF_THRESHOLD, high <= UF_THRESHOLD}

    def bandwidth_range(r: dict[str, Any]) -> tuple[float, float]:
        bounds, traffic = _traffic_bounds(r), sum(comparison.dram_traffic(c) for c in r["cores"])
        if not traffic:
            return r["bandwidth_gbps"], r["bandwidth_gbps"]
        return (r["bandwidth_gbps"] * sum(b[0] for b in bounds) / traffic,
                r["bandwidth_gbps"] * sum(b[1] for b in bounds) / traffic)

    low, high = mean_range([bandwidth_range(r) for r in runs["buddy"]])
    busy = {low >= BUSY_GBPS, high >= BUSY_GBPS}
    can_be_in = True in balanced and True in busy
    can_be_out = False in balanced or False in busy
    return can_be_in and can_be_out


def population_ends(exps: list[tuple[MixExperiment, str]], results: dict[str, Any], claim: dict[str, Any],
                    settings: Settings, mixes: list[tuple[MixExperiment, str, int]], row: "Row") -> str:
    """With sampled runs, why ``row``'s population is not settled (for :attr:`Row.sampling_unsettled`),
    or "": the claim's verdict on its population without the mixes in it by less than their
    sampling interval, and with those out of it by less, against the verdict on ``mixes``."""
    name = claim.get("population")
    if not name or claim.get("kind") == "info" or row.not_applicable:
        return ""
    chosen = {(id(e), mach, m) for e, mach, m in mixes}
    unsettled = []
    for e, mach, m in [(e, mach, m) for e, mach in exps for m in range(len(e.mixes))]:
        per_seed = [e.runs(results, mach, m, s) for s in e.seed_list(settings)]
        if membership_unsettled(name, {v.label: [r[v.label] for r in per_seed] for v in e.variants}, claim):
            unsettled.append((e, mach, m))
    if not unsettled:
        return ""
    marginal = {(id(e), mach, m) for e, mach, m in unsettled}
    without = [x for x in mixes if (id(x[0]), x[1], x[2]) not in marginal]
    with_all = mixes + [x for x in unsettled if (id(x[0]), x[1], x[2]) not in chosen]
    baseline, seeds = exps[0][0].baseline, exps[0][0].seed_list(settings)
    here = verdict_rule.verdict(claim, row.stats["mean"], "", row.per_seed)

    def verdict_on(alt: list[tuple[MixExperiment, str, int]]) -> str:
        if len(alt) < MIN_POPULATION_MIXES:
            return f"no verdict (fewer than {MIN_POPULATION_MIXES} mixes)"
        per_seed = [mix_value(claim["metric"], [e.runs(results, mach, m, s) for e, mach, m in alt], claim, baseline)
                    for s in seeds]
        return verdict_rule.verdict(claim, statistics.fmean(per_seed), "", per_seed)

    ends = [verdict_on(without), verdict_on(with_all)]
    if all(v == here for v in ends):
        return ""
    n_in = len(mixes) - len(without)
    return (f"{len(unsettled)} {'mix is' if len(unsettled) == 1 else 'mixes are'} in or out of its population by "
            f"less than {'its' if len(unsettled) == 1 else 'their'} sampling interval: "
            f"without the {n_in} of them in it, {ends[0]} on {len(without)} mixes; with the "
            f"{len(with_all) - len(mixes)} out of it too, {ends[1]} on {len(with_all)} (the population as drawn: "
            f"{here} on {len(mixes)}); longer runs or more units settle it")


def population(exps: list[tuple[MixExperiment, str]], results: dict[str, Any], claim: dict[str, Any],
               settings: Settings) -> tuple[list[tuple[MixExperiment, str, int]], str]:
    """The mixes a claim is measured on: (experiment, machine, mix index) for every mix of
    ``exps``, or those its ``population`` admits; and the population's description."""
    everything = [(e, mach, m) for e, mach in exps for m in range(len(e.mixes))]
    name = claim.get("population")
    sizes = sorted({len(e.mixes[0]) for e, _ in exps if e.mixes})
    what = (f"{len(everything)} mixes of {' and '.join(map(str, sizes))} programs"
            + (f" on {', '.join(dict.fromkeys(mach for _, mach in exps))}" if exps else ""))
    if not name:
        return everything, what
    if name not in POPULATIONS:
        raise ValueError(f"claim {claim['id']}: unknown population {name!r} (known: {', '.join(POPULATIONS)})")
    test, description = POPULATIONS[name]
    chosen = []
    for e, mach, m in everything:
        per_seed = [e.runs(results, mach, m, s) for s in e.seed_list(settings)]
        if test({v.label: [r[v.label] for r in per_seed] for v in e.variants}, claim):
            chosen.append((e, mach, m))
    return chosen, f"{description(claim)}: {len(chosen)} of the {what}"


def measure_mix_claim(exp: MixExperiment | list[tuple[MixExperiment, str]], results: dict[str, Any],
                      claim: dict[str, Any], settings: Settings, machine: str | None = None) -> Row:
    """A mix claim over one experiment, or over several (experiment, machine) pairs together
    (the BPM paper's averages over its 4- and 8-program workloads), on the claim's population."""
    if isinstance(exp, MixExperiment):
        machine = machine or claim.get("machine") or exp.machines[0]
        exps = [(exp, machine)]
    else:
        exps = exp
    baseline = exps[0][0].baseline
    mixes, described = population(exps, results, claim, settings)
    subject = machine if claim.get("machine") else ""
    if not mixes or (claim.get("population") and len(mixes) < MIN_POPULATION_MIXES):
        row = Row(claim, subject, [float("nan")])
        row.population = described
        row.not_applicable = (f"the claim's population cannot be formed here: {described}"
                              + (f" (fewer than {MIN_POPULATION_MIXES})" if mixes else ""))
        return row
    per_seed, pairs = [], []
    worst = claim["metric"] in ("ws_change_worst", "power_change_best", "energy_change_best")
    worst_key = {"power_change_best": "dram_power_mw", "energy_change_best": "energy_per_instruction"}.get(claim["metric"], "ws")
    worst_mixes: list[str] = []
    worst_named: list[tuple[str, tuple[list[str], dict[str, Any], dict[str, Any]]]] = []
    named: list[tuple[list[str], dict[str, Any], dict[str, Any]]] = []  # (programs, reference run, policy run)
    # The sampling half-widths of every (seed, mix) term of the figure: the figure is the mean
    # over seeds of means over the same number of mixes, so the mean over all terms.
    terms: list[float | None] | None = []
    seeds = exps[0][0].seed_list(settings)
    for seed in seeds:
        runs = [e.runs(results, mach, m, seed) for e, mach, m in mixes]
        per_seed.append(mix_value(claim["metric"], runs, claim, baseline))
        seed_terms = mix_term_half_widths(claim["metric"], runs, claim, baseline)
        terms = None if terms is None or seed_terms is None else terms + seed_terms
        ref, pol = _compared(claim, runs, baseline)
        if worst:  # the extreme mix's own figures, not the average over all mixes
            def value(run: dict[str, Any]) -> float:
                return energy_per_instruction(run) if worst_key == "energy_per_instruction" else run[worst_key]
            i = min(range(len(runs)), key=lambda j: pct(value(runs[j][pol]), value(runs[j][ref])))
            mix = mixes[i][0].mixes[mixes[i][2]]
            worst_mixes.append(mix_name(mix))
            worst_named.append((mix_name(mix), (mix_programs(mix), runs[i][ref], runs[i][pol])))
            runs = [runs[i]]
        if not worst:
            named.extend((mix_programs(e.mixes[m]), r[ref], r[pol]) for (e, _, m), r in zip(mixes, runs))
        pairs.extend((diagnostics(r[ref]), diagnostics(r[pol])) for r in runs)
        labels = (ref, pol)
    row = Row(claim, subject, per_seed)
    row.population = described
    row.sampling_half_width = mean_half_width(terms) if terms is not None else None
    row.sampling_unsettled = population_ends(exps, results, claim, settings, mixes, row)
    shares = share_ends(claim["metric"], [[e.runs(results, mach, m, s) for e, mach, m in mixes] for s in seeds], claim,
                        baseline) if claim.get("kind") != "info" and not row.sampling_unsettled else None
    if shares is not None and shares[2]:
        here = verdict_rule.verdict(claim, row.stats["mean"], "", row.per_seed)
        ends = [verdict_rule.verdict(claim, statistics.fmean(x), "", x) for x in shares[:2]]
        if any(v != here for v in ends):
            row.sampling_unsettled = (
                f"{shares[2]} of the {len(mixes) * len(seeds)} mix runs it counts {'is' if shares[2] == 1 else 'are'} "
                f"within {'its' if shares[2] == 1 else 'their'} sampling interval of "
                + (f"the UF threshold ({UF_THRESHOLD:g}, so that the other pick fares otherwise) or of a tie "
                   f"({HELPS_PCT:g} % slower)" if claim["metric"] == "uf_rule_right" else
                   f"its tie line ({HELPS_PCT:g} % slower)")
                + f": counting none of them, {_fmt(statistics.fmean(shares[0]))} "
                f"({ends[0]}); all of them, {_fmt(statistics.fmean(shares[1]))} ({ends[1]}); longer runs or more "
                "units settle it")
    row.detail = explain(pairs, top=3, labels=labels, first=mechanism(claim))
    all_runs = [e.runs(results, mach, m, s) for s in seeds for e, mach, m in mixes]
    if len(seeds) == 1 and len(all_runs) > 1 and claim["metric"] in MEAN_OVER_MIXES:
        row.per_mix = [mix_value(claim["metric"], [r], claim, baseline) for r in all_runs]
    if claim["metric"] == "uf_rule_right":
        row.detail = uf_rule_cause(all_runs) + "; " + row.detail
    elif ((claim.get("population") or "").startswith("uf-") or "bpm-plus" in (claim.get("policy"), claim.get("versus"))) \
            and "bpm-plus" in all_runs[0]:
        ufs = [channel_uf(r["bpm-plus"]) for r in all_runs]
        row.detail += (f" (UF of static BPM+'s channels on these mixes, measured in its runs: mean "
                       f"{_fmt(statistics.fmean(ufs))}, {_fmt(min(ufs))}-{_fmt(max(ufs))}")
        if "buddy" in all_runs[0]:
            # The same basis for both: each program's traffic under buddy (partitioning changes it).
            mine = [channel_uf(r["bpm-plus"], loads=r["buddy"]) for r in all_runs]
            best = [best_split_uf(r["buddy"]) for r in all_runs]
            row.detail += (f"; from the programs' DRAM traffic under buddy, median over runs: its assignment's "
                           f"{_fmt(statistics.median(mine))}, the best assignment to two channels of any sizes "
                           f"{_fmt(statistics.median(best))}")
        row.detail += ")"
    if claim["metric"] in ("ms_change", "ms_change_over", "ms_ratio") and named:
        row.detail = most_slowed(named, labels) + "; " + row.detail
    if worst:
        most = most_common(worst_mixes)
        which = "worst" if worst_key == "ws" else "most saving"
        row.detail = (f"the {which} mix ({most}, {which} in {worst_mixes.count(most)} of {len(worst_mixes)} seeds), "
                      f"its own figures: " + row.detail)
        mine = [n for name, n in worst_named if name == most]
        if worst_key == "ws" and all(r.get("slowdowns") for _, a, b in mine for r in (a, b)):
            row.detail += "; " + most_hurt(mine, labels)
    row.dram_pki, row.not_applicable = effect(f"the {baseline} runs of these mixes", [r[baseline] for r in all_runs])
    if claim["metric"] == "walk_share_hvr":
        runs = [r[claim["policy"]] for r in all_runs]
        row.not_applicable = row.not_applicable or walk_unmeasured(claim["policy"], runs)
        if not row.not_applicable:
            row.detail = walk_cause(claim["policy"], runs)
    if claim["metric"] == "recolour_overhead" and not row.not_applicable:
        # An adjustment overhead needs adjustments that displaced pages.
        runs = [r[claim["policy"]] for r in all_runs]
        row.displaced_pages = statistics.fmean(displaced(r) for r in runs)
        if not row.displaced_pages:
            row.not_applicable = f"no {claim['policy']} run displaced a page: no adjustment overhead to measure"
        else:
            others = explain(pairs, top=2, labels=labels, exclude=DYNAMIC_DIAGNOSTICS + CONTEXT_DIAGNOSTICS)
            row.detail = recolour_cause(claim["policy"], runs) + " Beside it, " + others
    if claim.get("kind") == "info" and row.not_applicable:  # no verdict to withhold: say what is missing
        row.detail, row.not_applicable = row.not_applicable, ""
    return row


def uf_rule_cause(runs: list[dict[str, dict[str, Any]]]) -> str:
    """Where BPM+'s rule goes wrong, over ``runs`` (per mix and seed, label -> run): how often
    each side of the UF threshold occurs, and how often and by how much its pick loses."""
    parts = []
    for pick, other, side in (("bpm", "bpm-plus", "above"), ("bpm-plus", "bpm", "at or below")):
        here = [r for r in runs if (best_split_uf(r["buddy"]) > UF_THRESHOLD) == (pick == "bpm")]
        if not here:
            continue
        wrong = [pct(r[other]["ws"], r[pick]["ws"]) for r in here if not uf_rule_right(r)]
        text = f"the best split's UF {side} {UF_THRESHOLD:g} in {len(here)} of {len(runs)} runs (the rule picks {pick}): "
        text += (f"{other} is better by more than 1 % in {len(wrong)} (by {statistics.fmean(wrong):.1f} % WS on average)"
                 if wrong else "the pick is right in all")
        parts.append(text)
    return "; ".join(parts)


def mix_programs(mix: list[str]) -> list[str]:
    """A mix's programs by their short names, in core order."""
    return [short(p) for p in mix]


def most_slowed(named: list[tuple[list[str], dict[str, Any], dict[str, Any]]], labels: tuple[str, str]) -> str:
    """Who holds a maximum slowdown: under the policy (the third of each of ``named``: programs,
    reference run, policy run), the program whose runs as the most slowed carry most of the change
    of the mean maximum slowdown, with its share of that change; under the reference, the program
    most often the most slowed. Each with in how many runs and its mean slowdown there."""
    parts = []
    changes = [max(p[2]["slowdowns"]) - max(p[1]["slowdowns"]) for p in named
               if p[1].get("slowdowns") and p[2].get("slowdowns")]
    total = sum(changes)
    for side, label in ((2, labels[1]), (1, labels[0])):
        holders: dict[str, list[float]] = {}
        moved: dict[str, list[tuple[float, float]]] = {}
        mates: dict[str, list[str]] = {}
        for programs, *runs in named:
            slowdowns = runs[side - 1].get("slowdowns")
            if not slowdowns:
                continue
            i = max(range(len(slowdowns)), key=slowdowns.__getitem__)
            holders.setdefault(programs[i], []).append(slowdowns[i])
            if runs[0].get("slowdowns"):
                moved.setdefault(programs[i], []).append((max(runs[0]["slowdowns"]), slowdowns[i]))
            if side == 2 and channel_partitioned(runs[1]):
                mates.setdefault(programs[i], []).append(channel_mates(programs, runs[1], i))
        if not holders:
            continue
        n = sum(map(len, holders.values()))
        if side == 2 and total and moved:
            # the holder whose runs moved the mean most, in its direction: the program to act on
            def carried(k: str) -> float:
                return sum(b - a for a, b in moved.get(k, [])) * (1 if total > 0 else -1)
            top = max(holders, key=lambda k: (carried(k), len(holders[k]), k))
        else:
            top = max(holders, key=lambda k: (len(holders[k]), k))
        text = (f"under {label} the most slowed is {top} in {len(holders[top])} of {n} runs "
                f"(slowdown {_fmt(statistics.fmean(holders[top]))}")
        if side == 2 and total and moved.get(top):
            before = statistics.fmean(a for a, _ in moved[top])
            share = 100 * sum(b - a for a, b in moved[top]) / total
            text += (f"; in those runs the maximum slowdown went {_fmt(before)} → "
                     f"{_fmt(statistics.fmean(holders[top]))}: {share:.0f} % of the {'rise' if total > 0 else 'fall'}")
        if mates.get(top):
            mate = most_common(mates[top])
            text += f"; its channel shared with {mate} in {mates[top].count(mate)} of them"
        parts.append(text + ")")
    return "; ".join(parts)


def recolour_cause(policy: str, runs: list[dict[str, Any]]) -> str:
    """What an adjustment overhead is made of, measured in ``runs`` of ``policy``: pages moved,
    each thread's stall for them, the cost per page and the run's length."""
    pages = statistics.fmean((r.get("dynamic") or {}).get("pages_recoloured", 0) for r in runs)
    stalls_ms, busy_ms, lengths_ms = [], [], []
    for r in runs:
        cores = r["cores"]
        last = max((c.get("finished_at") or 0) for c in cores) + 1
        ns_per_cycle = r["simulated_ns"] / last if r.get("simulated_ns") else float("nan")
        stalled = sum((c.get("page_migration") or {}).get("recolour_cycles", 0) for c in cores)
        stalls_ms.append(stalled * ns_per_cycle / len(cores) / 1e6)
        busy_ms.append(sum(c["cycles"] for c in cores) * ns_per_cycle / len(cores) / 1e6)
        lengths_ms.append(r["simulated_ns"] / 1e6 if r.get("simulated_ns") else float("nan"))
    stall, busy, length = statistics.fmean(stalls_ms), statistics.fmean(busy_ms), statistics.fmean(lengths_ms)
    per_page = 1000.0 * stall * len(runs[0]["cores"]) / pages if pages else float("nan")
    return (f"{policy} re-coloured {pages:,.0f} pages per run during the measured window; each thread stalled "
            f"{stall:.2f} ms for them on average ({per_page:.1f} µs per page moved: faults, copies, shootdowns; the stall "
            f"counted up to each thread's target, the pages over the whole run, so it can be below a move's own cost) of the "
            f"{busy:.1f} ms it took to reach its target, in runs of {length:.1f} ms simulated. The stall is a cost per "
            f"page moved, not per unit of time: the paper's runs last minutes, and how often pages move over such a "
            f"run is not measured here.")


def worst_walk(run: dict[str, Any]) -> tuple[int, float, float] | None:
    """The program whose accessed-bit walks cost most in ``run``: (its index, the share of a core
    they take at HVR's own schedule, its resident pages walked, mean over windows); None when
    no sampling window completed (or accessed bits were not sampled)."""
    walks = [(i, w.get("walk_share_hvr"), w.get("walked_pages")) for i, w in enumerate(run.get("hot_pages") or [])
             if w and w.get("walk_share_hvr") is not None]
    return max(walks, key=lambda w: w[1]) if walks else None


def walk_unmeasured(policy: str, runs: list[dict[str, Any]]) -> str:
    """Why a walk claim has nothing to measure: no run of ``policy`` completed a sampling window."""
    if any(worst_walk(r) for r in runs):
        return ""
    return (f"no {policy} run completed an accessed-bit sampling window (os.hot_pages): no walk to measure "
            f"(runs too short)")


def most_common(names: list[str]) -> str:
    """The most frequent name, ties to the first seen: a set's order of strings changes from one
    process to the next (hash randomisation), and a report must not."""
    return max(dict.fromkeys(names), key=names.count)


def walk_cause(policy: str, runs: list[dict[str, Any]]) -> str:
    """What the accessed-bit walks' cost is made of in ``runs`` of ``policy``: the pages walked,
    the walks per window and the cost per page, at HVR's schedule and at the run's own."""
    measured = [(r, w) for r in runs if (w := worst_walk(r))]
    runs, worst = [r for r, _ in measured], [w for _, w in measured]
    names = [short(r["hot_pages"][i].get("program") or r["cores"][i]["program"]) for r, (i, _, _) in measured]
    most = most_common(names)
    pages = statistics.fmean(p for _, _, p in worst)
    here = statistics.fmean(max(w.get("walk_share") or 0.0 for w in r["hot_pages"] if w) for r in runs)
    first = runs[0]["hot_pages"][worst[0][0]]
    per_page, window_us = first.get("walk_ns_per_page"), (first.get("window_ns") or float("nan")) / 1e3
    return (f"{policy}'s sampler walks each program's page table twice per sample (clear, then read: 402 walks per "
            f"3 s window at HVR's schedule, JOB1's sample and JOB2's 200) at {per_page:g} ns a resident page "
            f"(os.hot_pages.walk_ns_per_page; 10 from the paper's mcf walk, 4.46 ms, over mcf's 1.7 GiB). The costliest "
            f"program of each run ({most} in {names.count(most)} of {len(runs)} runs) has {pages:,.0f} pages resident "
            f"on average over the runs: "
            f"{statistics.fmean(100 * s for _, s, _ in worst):.1f} % of a core at that schedule. The paper's own mcf "
            f"walk at that schedule would take {100 * 402 * 4.46e-3 / 3:.0f} %, so its 0.6 % cannot hold for mcf unless "
            f"the walks are fewer or sampled. At the run's own schedule ({window_us:,.0f} µs windows) the same walks "
            f"would take {here:,.0f} cores: reported, not charged (docs/advisor.md).")


def displaced(run: dict[str, Any]) -> int:
    """Pages a dynamic policy's partitions left outside their process's colours in a run: copied,
    still waiting, or with no free frame to go to."""
    d = run.get("dynamic") or {}
    return sum(d.get(k, 0) or 0 for k in ("pages_recoloured", "recolour_pending", "recolour_blocked"))


#: What a claim's mechanism names, shown first in its cause whatever else changed more: by the
#: claim's metric, and by the mechanism of the policy it is about.
MECHANISM_DIAGNOSTICS = {
    "rbmiss_change": ("row-buffer miss rate", INTERFERENCE, SELF_CONFLICTS),
    "power_change_best": ("DRAM power, W", "activations per kilo-instruction",
                          "DRAM standby energy per kilo-instruction, nJ"),
    "energy_change_best": ("DRAM energy per kilo-instruction, nJ", "DRAM standby energy per kilo-instruction, nJ",
                           "activations per kilo-instruction"),
    "recolour_overhead": ("re-colouring stall, % of the threads' cycles", "pages re-coloured per run",
                          "repartitions per run", "simulated time, ms"),
    "ms_change": (MAX_SLOWDOWN,),
    "ms_change_over": (MAX_SLOWDOWN,),
    "ms_ratio": (MAX_SLOWDOWN,),
}
BANK = (INTERFERENCE, SELF_CONFLICTS, "row-buffer miss rate")
LLC = ("LLC MPKI (mean per program)",)
SCHEDULING = ("read latency, ns (mean, weighted by reads)", "slowdown of light programs (alone MPKI <= 1)")
POLICY_DIAGNOSTICS = {
    "bpm": BANK, "bpm-strided": BANK, "bank-only": BANK, "bank-only-8": BANK, "bpm-plus": BANK,
    "cache-only": LLC, "a-vp": LLC + BANK, "b-vp": LLC + BANK, "c-vp": LLC + BANK,
    "tcm": SCHEDULING, "atlas": SCHEDULING, "par-bs": SCHEDULING, "bliss": SCHEDULING, "imps": SCHEDULING,
    "ccps": SCHEDULING,
    # Dynamic BPM lends colours to stop swapping, and pays for it in re-colouring copies.
    "dynamic-bpm": (SWAP_INS, STALL, "pages re-coloured per run") + BANK,
}


def mechanism(claim: dict[str, Any]) -> tuple[str, ...]:
    """The diagnostics a claim's cause shows first: its metric's, then its policy's."""
    names = MECHANISM_DIAGNOSTICS.get(claim["metric"], ()) + POLICY_DIAGNOSTICS.get(claim.get("policy") or "", ())
    return tuple(dict.fromkeys(names))


def run_facts(exps: list[MixExperiment], results: dict[str, Any]) -> str:
    """Measured facts about the shared runs: DRAM cycles covered and simulated time, per machine."""
    parts = []
    for exp in exps:
        for machine in exp.machines:
            runs = [results[k] for (mach, *_), k in exp.shared.items() if mach == machine and k in results]
            if runs:
                cycles = statistics.fmean(r["dram_cycles"] for r in runs)
                ms = statistics.fmean(r["simulated_ns"] for r in runs) / 1e6
                secs = statistics.fmean(r["wall_seconds"] for r in runs)
                parts.append(f"{exp.name} on {machine}: {cycles / 1e6:.2f} M DRAM cycles ({ms:.2f} ms simulated) per shared run, "
                             f"{secs:.1f} s to simulate")
    text = "Measured run length (means): " + "; ".join(parts) + "." if parts else ""
    same = identical_results(exps, results)
    return (text + " " + same).strip()


def identical_results(exps: list[MixExperiment], results: dict[str, Any]) -> str:
    """Variants, one of them dynamic, whose runs came out identical (every core's instructions
    and cycles, on every seed) on some mixes: one result reported under two names, which the
    placement probe (static policies only) cannot find before the runs."""
    found = []
    for exp in exps:
        dynamic = {v.label for v in exp.variants if (v.os or {}).get("dynamic")}
        if not dynamic:
            continue
        runs: dict[tuple, dict[str, Any]] = {}
        for (mach, m, seed, label), k in exp.shared.items():
            if k in results:
                runs.setdefault((mach, m), {}).setdefault(label, []).append(
                    (seed, [(c["instructions"], c["cycles"]) for c in results[k]["cores"]]))
        labels = [v.label for v in exp.variants]
        for i, a in enumerate(labels):
            for b in labels[i + 1:]:
                if a not in dynamic and b not in dynamic:
                    continue
                both = [r for r in runs.values() if a in r and b in r]
                alike = sum(sorted(r[a]) == sorted(r[b]) for r in both)
                if alike:
                    found.append(f"{a} and {b} ran identically on {alike} of {len(both)} {exp.name} mixes (every "
                                 "seed): there they are one result under two names")
    return ("Identical results: " + "; ".join(found) + ".") if found else ""


def mix_name(mix: list[str]) -> str:
    """A mix for tables: its members joined, repeats counted ("bfs x3 + triad") in big mixes."""
    if len(mix) <= 8:
        return " + ".join(mix)
    counts = {p: mix.count(p) for p in dict.fromkeys(mix)}
    return " + ".join(f"{p} x{n}" if n > 1 else p for p, n in counts.items())


def mix_table(exp: MixExperiment, results: dict[str, Any], settings: Settings, machine: str) -> list[list[str]]:
    """Per mix and variant: WS, MS and row-buffer miss rate, mean (± sd) over seeds."""
    rows = []
    for m, mix in enumerate(exp.mixes):
        per_seed = [exp.runs(results, machine, m, s) for s in exp.seed_list(settings)]
        for v in exp.variants:
            ws = summarise([r[v.label]["ws"] for r in per_seed])
            ms = summarise([r[v.label]["ms"] for r in per_seed])
            rb = summarise([r[v.label]["row_buffer_miss_rate"] for r in per_seed])
            d = summarise([pct(r[v.label]["ws"], r[exp.baseline]["ws"]) for r in per_seed])
            rows.append([mix_name(mix), v.label, f"{ws['mean']:.3f} ± {ws['sd']:.3f}", f"{d['mean']:+.1f}",
                         f"{ms['mean']:.2f} ± {ms['sd']:.2f}", f"{rb['mean']:.3f}"])
    return rows


# --- calibration ---------------------------------------------------------------------------------

#: Alone statistics a calibration row can show (memtint.workload_classes.alone_stats keys).
ALONE_MEASURES = {"alone_mpki": "llc_mpki", "alone_row_hit": "row_hit_rate", "alone_ipc": "ipc"}


def per_core_bandwidth(run: dict[str, Any]) -> float:
    """DRAM traffic (reads and write-backs, 64 B each) per core of a run, GB/s of simulated time."""
    ns = run.get("simulated_ns") or 0.0
    total = sum(c["dram_reads"] + c["dram_writes"] for c in run["cores"]) * 64
    return total / ns / len(run["cores"]) if ns else float("nan")


def calibration_rows(entries: list[dict[str, Any]], machine: str, settings: Settings, instructions: int,
                     experiments: dict[str, MixExperiment], results: dict[str, Any]) -> list[list[str]]:
    """The paper's baseline figures beside memtint's: for a program class, the alone statistics
    of the pool programs measured in that class on ``machine``; for a mix experiment, its
    baseline runs. Rows: quantity, paper, memtint, what memtint's figure is over, source."""
    rows = []
    for c in entries:
        measure, value = c["measure"], float(c["value"])
        if measure in ALONE_MEASURES:
            stats = measured(machine, settings.warmup, instructions)
            names = [n for n, m in stats.items() if m["classes"]["intensity"] == "intensive"
                     and (c.get("class") in (None, m["classes"]["access"]))]
            values = [stats[n][ALONE_MEASURES[measure]] for n in names if stats[n][ALONE_MEASURES[measure]] is not None]
            if values:
                ours = f"{statistics.fmean(values):.3g} (range {min(values):.3g}-{max(values):.3g})"
            else:
                ours = "n/a"
            over = (f"{len(values)} intensive {c.get('class', '')} programs alone on {machine}: "
                    f"{', '.join(names) or 'none'}")
        else:
            exp = experiments[c["experiment"]]
            base = [results[exp.shared[(mach, m, s, exp.baseline)]] for (mach, m, s, label) in exp.shared
                    if label == exp.baseline]
            if measure == "baseline_row_miss":
                values = [r["row_buffer_miss_rate"] for r in base]
            elif measure == "per_core_bandwidth":
                values = [per_core_bandwidth(r) for r in base]
            else:
                raise ValueError(f"unknown calibration measure {measure!r}")
            ours = f"{statistics.fmean(values):.3g} (range {min(values):.3g}-{max(values):.3g})"
            over = f"the {exp.baseline} runs of the {len(exp.mixes)} mixes of {len(exp.mixes[0])} programs, all seeds"
        rows.append([c["text"], f"{value:g}", ours, over, c["source"]])
    return rows


def programs_table(machine: str, settings: Settings, instructions: int, pool: list[str] | None = None
                   ) -> tuple[str, list[str], list[list[str]]]:
    """Every program's measured alone statistics and classes on ``machine`` with the experiment's
    warm-up and window (the numbers its pool is built from), as a report table."""
    stats = measured(machine, settings.warmup, instructions)
    rows = []
    for name, m in stats.items():
        c = m["classes"]
        kinds = [c["intensity"]] + ([c["access"]] if c["access"] else []) + (["write-heavy"] if c["write_heavy"] else []) \
            + (["cache-sensitive"] if c.get("cache_sensitive") else [])
        q = m.get("quarter_llc_ipc")
        rows.append([name + (" (in the pool)" if pool is not None and name in pool else ""), f"{m['ipc']:.2f}",
                     f"{m['llc_mpki']:.2f}", f"{m['dram_reads_pki']:.2f}", f"{m['dram_writes_pki']:.2f}",
                     "n/a" if m["row_hit_rate"] is None else f"{m['row_hit_rate']:.2f}",
                     f"{m['bank_level_parallelism']:.2f}", f"{m.get('footprint_mb', 0):.0f}",
                     "n/a" if q is None else f"{q:.2f}", ", ".join(kinds)])
    return (f"Programs alone on {machine} under buddy ({settings.warmup:,}-instruction warm-up, {instructions:,} "
            "measured): the statistics the classes and pools come from (memtint.workload_classes)",
            ["program", "IPC", "LLC MPKI", "DRAM reads PKI", "DRAM writes PKI", "row-buffer hit rate", "BLP",
             "pages touched, MB", "IPC with 1/4 LLC (share)", "classes"], rows)
