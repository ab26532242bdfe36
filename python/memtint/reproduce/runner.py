"""Run a reproduction's simulations on the sweep's process pool or on Ray (memtint.sweep.backends,
memtint.sweep.ray_backend), with one progress bar over all runs (rich on a terminal, a plain line
every 30 s otherwise).

A job is plain data: ``{"key", "phase": "alone"|"shared", "spec", "profiles_from", "kind"}`` (``kind`` "rt" for
a real-time task set, run by `memtint.run_rt`; else a CPU-trace run), shipped with the digests of
the files its spec reads (``files``), which the worker checks before it runs. Alone
runs go first; a shared job whose policy places pages from the programs' profiles (MCP/IMPS)
names its alone runs in ``profiles_from`` and gets ``os.profiles`` from them, as
``memtint compare`` does; a sampled job that replays another's units (matched units) names that
job in ``schedule_from``, runs after it and gets its ``sampling.schedule``. Jobs with the same key
(the same engine specification) run once, and with a run cache (``run_cache.py``) a job an earlier
reproduction finished with the same engine and files is not run at all.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from typing import TYPE_CHECKING, Any, Callable, Iterable

from memtint import api, comparison
from memtint import sampling as sampling_module

if TYPE_CHECKING:
    from memtint.reproduce.run_cache import RunCache
    from memtint.sweep.backends import Backend

#: Per-core statistics kept from each run (docs/stats.md, "CPU-trace runs").
CORE_KEYS = ("program", "instructions", "cycles", "ipc", "llc_accesses", "llc_misses", "llc_mpki", "dram_reads",
             "dram_writes", "row_hits", "row_misses", "row_conflicts", "row_buffer_miss_rate",
             "bank_level_parallelism", "banks_used", "channels_used", "channels", "row_outcomes_by_kind",
             "row_conflicts_by_self", "row_conflicts_by_other", "row_misses_after_self", "row_misses_after_other",
             "row_misses_after_refresh_or_policy", "llc_lines", "llc_lines_mean")
RUN_KEYS = ("row_buffer_miss_rate", "dram_cycles", "simulated_ns", "wall_seconds", "dram_requests")


def spec_key(spec: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()


def slim(stats: dict[str, Any]) -> dict[str, Any]:
    """What the reproductions keep of a run's statistics (small, so results travel cheaply)."""
    out = {k: stats.get(k) for k in RUN_KEYS}
    # DRAM energy and activations (the BPM and CCPS papers' power and energy claims).
    dram = stats.get("dram") or {}
    energy = dram.get("energy") or {}
    out["dram_energy_nj"] = energy.get("total_nj")
    out["dram_power_mw"] = energy.get("average_power_mw")
    out["dram_act_pre_nj"] = energy.get("act_pre_nj")
    out["dram_background_nj"] = (energy.get("background_active_nj") or 0.0) + (energy.get("background_precharged_nj") or 0.0)
    out["dram_activations"] = (dram.get("commands") or {}).get("ACT")
    cores = []
    for c in stats["cores"]:
        core = {k: c.get(k) for k in CORE_KEYS}
        core["read_latency_ns_mean"] = (c.get("read_latency_ns") or {}).get("mean")
        cores.append(core)
    out["cores"] = cores
    if stats.get("sampling"):  # a sampled run: its summary, and what each core's interval needs
        out["sampling"] = stats["sampling"]
        # The DRAM totals above are the detailed segments' own: the run's are their estimates
        # (each scaled by the run's estimated length over the cycles simulated), as compare's.
        run = stats["sampling"]
        factor = run.get("estimate_factor") or 1.0
        out["dram_requests"] = run.get("estimated_dram_requests", out["dram_requests"])
        out["dram_energy_nj"] = run.get("estimated_dram_energy_nj", out["dram_energy_nj"])
        for key in ("dram_act_pre_nj", "dram_background_nj", "dram_activations"):
            out[key] = out[key] * factor if out[key] is not None else None
        out["dram_power_mw"] = run.get("estimated_dram_power_mw", out["dram_power_mw"])
        out["dram_energy_nj_ci95"] = run.get("estimated_dram_energy_nj_ci95")
        out["dram_power_mw_ci95"] = run.get("dram_power_mw_ci95")
        out["row_buffer_miss_rate_ci95"] = run.get("row_buffer_miss_rate_ci95")
        for core, c in zip(cores, stats["cores"]):
            s = c.get("sampling") or {}
            core["sampling"] = {k: s.get(k) for k in ("units", "unit_cycles", "unit_instructions", "unit_weights", "ipc_ci95", "ipc_relative_error",
                                                  "unit_strata", "strata_weights", "cpi_stddev", "cpi_mean", "estimator",
                                                  "unit_segments", "unit_row_accesses", "run_instructions")}
    dram = stats.get("dram") or {}
    out["bandwidth_gbps"] = (dram.get("bandwidth_gbps") or {}).get("total")
    out["queue_read_mean"] = (dram.get("queue_occupancy") or {}).get("read_mean")
    for core, c in zip(cores, stats["cores"]):
        core["finished_at"] = c.get("finished_at")
        if "barrier_wait_cycles" in c:  # runs with barriers inside (docs/threads.md)
            core["barrier_wait_cycles"] = c["barrier_wait_cycles"]
        cs = c.get("core_stats") or {}
        # Load-to-use latency as the core sees it (remote latency and links included), core cycles.
        core["load_latency_cycles"] = cs["load_latency_sum"] / cs["loads"] if cs.get("loads") else None
        core["remote_read_fraction"] = c.get("remote_read_fraction")
    if stats.get("nodes"):  # multi-node machines (docs/numa.md)
        out["nodes"] = [{k: n.get(k) for k in ("node", "name", "pages", "bytes", "reads", "bandwidth_gbps", "peak_gbps")}
                        for n in stats["nodes"]]
        out["processes"] = [{"pages_per_node": p.get("pages_per_node"), "run_time_cycles": p.get("run_time_cycles")}
                            for p in stats.get("processes", [])]
        for core, c in zip(cores, stats["cores"]):  # what colours within nodes are checked by
            core["banks"] = c.get("banks")
            core["colour_overflow_pages"] = c.get("colour_overflow_pages")
    if stats.get("page_migration"):  # pages migrated (docs/numa.md, Migration)
        out["page_migration"] = stats["page_migration"]
        for core, c in zip(cores, stats["cores"]):
            core["page_migration"] = c.get("page_migration")
    if stats.get("swap") or stats.get("dynamic"):  # swapping and dynamic partitioning (docs/stats.md)
        out["swap"] = stats.get("swap")
        out["dynamic"] = {k: v for k, v in (stats.get("dynamic") or {}).items() if k != "adjustments"} or None
        if out["dynamic"]:  # where each process's colours ended: which channels (BPM+'s decision)
            out["dynamic"]["channels"] = [p.get("channels") for p in (stats.get("colours") or {}).get("processes", [])]
        for core, c in zip(cores, stats["cores"]):
            core["page_migration"] = c.get("page_migration")
    if any(p.get("hot_pages") for p in stats.get("processes") or []):  # accessed-bit walks (docs/advisor.md)
        sampling = (((stats.get("config") or {}).get("os") or {}).get("hot_pages") or {})
        out["hot_pages"] = [{"program": str(p.get("name") or p.get("process")),
                             "window_ns": sampling.get("window_ns"), "walk_ns_per_page": sampling.get("walk_ns_per_page"),
                             **{k: (p.get("hot_pages") or {}).get(k) for k in ("walked_pages", "walk_share", "walk_share_hvr")}}
                            for p in stats["processes"]]
    llc = ((stats.get("config") or {}).get("cache") or {}).get("llc")
    out["llc_line_bytes"] = llc.get("line_bytes") if isinstance(llc, dict) else None
    return out


def execute(job: dict[str, Any]) -> dict[str, Any]:
    """Worker side: run one job's specification; never raises for a failing simulation.
    ``seconds`` is the CPU time the run took in its worker, not its wall time: the reports share
    out a reproduction's time by it, and a busy machine or cluster would inflate wall times."""
    from memtint.sweep.runs import check_files, check_version

    start = time.process_time()
    try:
        check_version(job.get("memtint"), "the reproduction")  # a Ray node's memtint is the planner's
        check_files(job.get("files"), "the reproduction")  # a Ray node's traces are those planned with
        if job.get("kind") == "rt":  # real-time task sets (memtint.reproduce.refresh): small already
            result = api.run_rt(job["spec"])
        else:
            result = slim(api.run_sim_spec(job["spec"]))
        return {"key": job["key"], "status": "ok", "result": result, "seconds": time.process_time() - start}
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as error:  # the engine's panics are BaseException
        return {"key": job["key"], "status": "failed", "error": f"{type(error).__name__}: {error}",
                "seconds": time.process_time() - start}


#: Cost units of a job: one detailed instruction of one core. The functional warm-up runs about
#: 14 times faster (the median of 14 of the reproductions' runs timed with and without their 20 M
#: warm-up: 7.5-29 times, a 4-program run of 10 M instructions spending 0.2-0.4 s of its 2.4-3.3 s
#: on it), and a real-time task set costs about as much as 9 M detailed instructions (0.35-0.8 s,
#: at 55-58 ns per detailed instruction).
WARMUP_COST = 1 / 14
RT_COST = 9e6


def job_label(job: dict[str, Any]) -> str:
    """What a failed job ran, for its error: machine and programs (or threads, or task set)."""
    spec = job["spec"]
    what = (spec.get("programs") or [t.get("program") for p in spec.get("processes") or [] for t in p.get("threads") or []]
            or [t.get("name") for t in spec.get("tasks") or []])
    return f"{spec.get('machine', '?')} {', '.join(os.path.basename(str(w)) for w in what) or job['key'][:12]}"


def job_cost(job: dict[str, Any]) -> float:
    """A job's expected simulation time in cost units: what the progress bar's time left is
    estimated from. Jobs differ in cores, length and warm-up by two orders of magnitude and run
    longest first, so counting runs would promise a tenth of the real time."""
    if job.get("kind") == "rt":
        return RT_COST
    spec = job["spec"]
    cores = len(spec.get("programs") or []) + sum(len(p.get("threads") or []) for p in spec.get("processes") or [])
    detailed = float(spec.get("instructions") or 0)
    functional = float(spec.get("warmup") or 0)
    # Sampled: each period's unit and its detailed warm-up in detail, the rest warmed functionally
    # (half of a 10 M run with the defaults, 100 periods of 20 000 + 30 000; 5 % of a 100 M one).
    inside = sampling_module.detailed_instructions(spec.get("sampling"), int(detailed))
    functional += detailed - inside
    detailed = inside
    return max(1, cores) * (detailed + WARMUP_COST * functional) or 1.0


class Progress:
    """A rich bar over all runs on a terminal; otherwise a plain line at most every ``every`` s.
    The bar and the time left follow ``work`` (the jobs' :func:`job_cost`, default one a run).
    A run not simulated (:meth:`skip`: the run cache gave it back, or the run it needed failed)
    counts as done but takes its work out of the total rather than into what was done, so the
    rate and the time left are the simulations' (a thousand runs read back in seconds would
    otherwise make the time left a tenth of the real one)."""

    def __init__(self, total: int, enabled: bool | None = None, every: float = 30.0,
                 stream=None, label: str = "reproduce", work: float | None = None) -> None:
        self.label = label
        self.total, self.done, self.every = total, 0, every
        self.work_total, self.work_done = (work if work else float(total)), 0.0
        self.reused = 0
        self.start = self.last = time.perf_counter()
        self.stream = stream or sys.stderr
        self.bar = None
        if enabled is not False:
            from rich.console import Console
            from rich.progress import (BarColumn, Progress as RichProgress, TaskProgressColumn,
                                       TextColumn, TimeElapsedColumn, TimeRemainingColumn)

            console = Console(stderr=True)
            if enabled or console.is_terminal:
                self.bar = RichProgress(TextColumn("{task.description}"), BarColumn(),
                                        TextColumn("{task.fields[runs]}"), TaskProgressColumn(),
                                        TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn(),
                                        console=console, transient=False)
                self.task = self.bar.add_task(label, total=self.work_total, runs=self._runs())

    def __enter__(self) -> "Progress":
        if self.bar:
            self.bar.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.bar:
            self.bar.__exit__(*exc)
        elif self.total:
            self._line()

    def _runs(self) -> str:
        return f"{self.done}/{self.total} runs" + (f" ({self.reused} from the run cache)" if self.reused else "")

    def _line(self) -> None:
        elapsed = time.perf_counter() - self.start
        rate = self.work_done / elapsed if elapsed > 0 else 0.0
        left = max(0.0, self.work_total - self.work_done)
        eta = "eta 0 s" if not left else f"eta {left / rate:.0f} s" if rate > 0 else "eta unknown yet"
        self.stream.write(f"{self.label}: {self._runs()}, {elapsed:.0f} s elapsed, {eta}\n")
        self.stream.flush()

    def _show(self, what: str) -> None:
        if self.bar:
            if self.work_total > 0:
                total, completed = self.work_total, min(self.work_done, self.work_total)
            else:  # all of it read back: a full bar, not rich's 0 % of a total of 0
                total = completed = 1.0
            self.bar.update(self.task, total=total, completed=completed, runs=self._runs(),
                            description=f"{self.label} {what}".strip())
        elif time.perf_counter() - self.last >= self.every:
            self.last = time.perf_counter()
            self._line()

    def advance(self, what: str = "", work: float = 1.0) -> None:
        """A run simulated now, of ``work`` cost units."""
        self.done += 1
        self.work_done += work
        self._show(what)

    def skip(self, what: str = "", work: float = 1.0, cached: bool = False) -> None:
        """A run not simulated (``cached``: the run cache gave it back): done, and ``work`` fewer
        cost units to simulate."""
        self.done += 1
        self.reused += cached
        self.work_total -= work
        self._show(what)


def run_jobs(jobs: Iterable[dict[str, Any]], *, jobs_count: int | None = None, progress: bool | None = None,
             on_done: Callable[[dict[str, Any]], None] | None = None, label: str = "reproduce",
             backend: Backend | None = None, cache: RunCache | None = None) -> dict[str, dict[str, Any]]:
    """Run every job (deduplicated by key), alone runs first; return ``{key: slim result}``.
    A failed run raises MemtintError with its error after all runs finished. ``backend`` (e.g. a
    RayBackend) is used as given and left open; without it a process pool of ``jobs_count``
    workers runs the jobs. With ``cache`` (memtint.reproduce.run_cache), a job kept there is not
    run again (``on_done`` sees its outcome with ``cached``), and every finished run is kept."""
    from memtint.sweep.backends import LocalBackend
    from memtint.sweep.runs import file_digests, memtint_version

    unique: dict[str, dict[str, Any]] = {}
    for j in jobs:
        unique.setdefault(j["key"], j)
    if cache is not None:
        cache.keys(unique)
    alone = [j for j in unique.values() if j["phase"] == "alone"]
    shared = [j for j in unique.values() if j["phase"] != "alone" and not j.get("schedule_from")]
    replaying = [j for j in unique.values() if j["phase"] != "alone" and j.get("schedule_from")]
    results: dict[str, dict[str, Any]] = {}
    errors: list[str] = []
    own = backend is None
    if backend is None:
        backend = LocalBackend(jobs_count)
    try:
        with Progress(len(unique), progress, label=label, work=sum(job_cost(j) for j in unique.values())) as bar:
            for phase in (alone, shared, replaying):
                items = []
                for j in phase:
                    kept = cache.lookup(j["key"]) if cache is not None else None
                    if kept is not None:
                        results[j["key"]] = kept[0]
                        bar.skip(j["phase"], job_cost(j), cached=True)
                        if on_done:
                            on_done({"key": j["key"], "status": "ok", "result": kept[0], "seconds": kept[1],
                                     "cached": True})
                        continue
                    paced = results.get(j["schedule_from"]) if j.get("schedule_from") else None
                    if j.get("schedule_from") and paced is None:
                        errors.append(f"{job_label(j)}: the run whose units it replays failed")
                        bar.skip(j["phase"], job_cost(j))
                        continue
                    if paced is not None or j.get("profiles_from"):  # what earlier runs give it, on a copy
                        spec = json.loads(json.dumps(j["spec"]))
                        if paced is not None:  # the schedule of the run that paced its units
                            spec["sampling"]["schedule"] = paced["sampling"]["schedule"]
                        if j.get("profiles_from"):
                            cores = [results[k]["cores"][0] for k in j["profiles_from"] if k in results]
                            spec["os"]["profiles"] = comparison.alone_profiles(cores)
                        j = {**j, "spec": spec}
                    items.append({**j, "files": file_digests(j["spec"]), "memtint": memtint_version()})
                # Longest first (by expected cost: cores, threads, length, warm-up, sampling), so the
                # pool ends together.
                items.sort(key=lambda j: -job_cost(j))
                for item, outcome in backend.map_unordered(execute, items):
                    if isinstance(outcome, BaseException):
                        outcome = {"key": item["key"], "status": "failed", "error": str(outcome)}
                    if outcome["status"] == "ok":
                        results[item["key"]] = outcome["result"]
                        if cache is not None:
                            cache.store(item["key"], outcome["result"], outcome.get("seconds", 0.0))
                    else:
                        errors.append(f"{job_label(item)}: {outcome['error']}")
                    bar.advance(item["phase"], job_cost(item))
                    if on_done:
                        on_done(outcome)
    finally:
        if own:
            backend.close()
    if errors:
        raise api.MemtintError(f"{len(errors)} run(s) failed; first: {errors[0]}")
    return results
