"""`memtint reproduce`: regenerate the papers' reproduction reports (docs/reproductions/).

One module per paper (bpm, hvr, schedulers, ccps, tiering, camc, refresh) plans its runs and analyses them; the runs of
every selected paper go through one process pool (memtint.sweep.backends.LocalBackend), or Ray
with ``--ray`` (memtint.sweep.ray_backend.RayBackend), under one progress bar. The paper figures are data (configs/reproductions/<paper>.toml); the machines are
the presets' defaults: nothing here sets a model parameter for an experiment.
"""

from __future__ import annotations

import argparse
import datetime
import os
import time
from typing import Any

from memtint.api import MemtintError
from memtint.comparison import DEFAULT_WARMUP
from memtint.reproduce import (bpm, camc, ccps, common, figures, hvr, refresh, report, run_cache, runner, schedulers,
                               tiering)

#: The papers, in report order.
PAPERS = {m.NAME: m for m in (bpm, hvr, schedulers, ccps, tiering, camc, refresh)}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"papers to reproduce (default: all of {', '.join(PAPERS)})")
    parser.add_argument("--out", default=os.path.join("docs", "reproductions"), metavar="DIR",
                        help="where the reports go (default docs/reproductions)")
    from memtint.cli import _at_least, _count_at_least  # one rule for counts everywhere (20M, bounds)

    parser.add_argument("--seeds", type=_at_least(1), default=3, metavar="N", help="seeds per point (default 3, at least 1)")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--jobs", type=_at_least(1), metavar="N", help="worker processes (default: the CPU count)")
    where.add_argument("--ray", metavar="auto|ADDRESS",
                       help="run the simulations on Ray: 'auto' (the cluster in $RAY_ADDRESS, else a Ray started here, "
                       "else a local one) or a cluster address; every node needs this memtint and its checkout's "
                       "workloads/traces at the same path; needs pip install 'memtint[ray]'")
    parser.add_argument("--quick", action="store_true",
                        help="tiny run lengths and few mixes (a few minutes on 2 cores; for tests and trying the command)")
    parser.add_argument("--mix-seed", type=_at_least(0), default=common.Settings.mix_seed, metavar="N",
                        help=f"seed of the mix draws (default {common.Settings.mix_seed})")
    parser.add_argument("--warmup", type=_count_at_least(0), default=None, metavar="N",
                        help="instructions per core run through page tables and caches before statistics start, as "
                        "compare does (default 20M; with --quick 1M; 0: none)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar (plain lines instead)")
    parser.add_argument("--no-cache", action="store_true",
                        help="simulate every run: neither reuse nor keep runs (by default a run this engine finished "
                        "before for the same specification and files is reused from $MEMTINT_CACHE_DIR/reproduce, "
                        "default ~/.cache/memtint, so a stopped reproduction resumes; memtint.reproduce.run_cache)")
    parser.add_argument("--sample", action="store_true",
                        help="run the mix experiments sampled (units of 20000 instructions after 30000 of detailed "
                        "warm-up, memtint.sampling.DEFAULT_SAMPLING): estimates with 95 %% intervals, each mix's "
                        "variants replaying its baseline run's units; variants sampling does not support and runs "
                        "too short for two units run detailed")


def resolve(names: list[str]) -> list[str]:
    unknown = [n for n in names if n not in PAPERS]
    if unknown:
        raise MemtintError(f"unknown reproduction(s) {', '.join(map(repr, unknown))} (known: {', '.join(PAPERS)})")
    return list(dict.fromkeys(names)) or list(PAPERS)


def reproduce(names: list[str], out: str, settings: common.Settings, *, jobs: int | None = None,
              ray: str | None = None, progress: bool | None = None,
              command: str = "memtint reproduce", cache: run_cache.RunCache | None = None) -> list[dict[str, Any]]:
    """Run the named reproductions, write their reports under ``out``; return per paper its
    rows (claims with verdicts), runs and the wall time attributed to it. ``ray`` ("auto" or a
    cluster address) runs the simulations on Ray instead of ``jobs`` local processes. With
    ``cache`` (a :class:`memtint.reproduce.run_cache.RunCache`), runs this engine finished before
    for the same specification and files are reused, and every finished run is kept: a stopped
    reproduction resumes (``cache.reused`` counts the runs it gave back)."""
    from memtint import __version__

    names = resolve(names)
    if settings.seeds < 1:
        raise MemtintError(f"--seeds must be at least 1, got {settings.seeds}")
    if jobs is not None and jobs < 1:
        raise MemtintError(f"--jobs must be at least 1, got {jobs}")
    if jobs is not None and ray is not None:
        raise MemtintError("give either --jobs or --ray, not both")
    claims = {n: figures.load(n) for n in names}  # a broken figure file fails before any run
    experiments = {n: PAPERS[n].Experiment(settings) for n in names}
    planned = {n: e.plan() for n, e in experiments.items()}
    keys_of = {n: {j["key"] for j in js} for n, js in planned.items()}
    seconds_of: dict[str, float] = {}
    key_seconds: dict[str, float] = {}
    reused_keys: set[str] = set()  # runs the cache gave back: their seconds are as measured then

    def done(outcome: dict[str, Any]) -> None:
        key_seconds[outcome["key"]] = outcome.get("seconds", 0.0)
        if outcome.get("cached"):
            reused_keys.add(outcome["key"])

    backend = None
    if ray is not None:  # reached (or started) before any run, so a wrong address fails at once
        from memtint.sweep.ray_backend import RayBackend

        backend = RayBackend(ray)
    workers = f"Ray ({backend.slots} CPUs)" if backend else f"{jobs or os.cpu_count()} worker process(es)"
    start = time.perf_counter()
    try:
        results = runner.run_jobs([j for js in planned.values() for j in js], jobs_count=jobs, progress=progress,
                                  on_done=done, backend=backend, cache=cache)
    finally:
        if backend:
            backend.close()
    wall = time.perf_counter() - start
    cpu = sum(key_seconds.values()) or 1.0
    fresh_cpu = sum(v for k, v in key_seconds.items() if k not in reused_keys)
    reused_of = {n: len(keys_of[n] & reused_keys) for n in names}
    for n in names:  # this run's wall time shared out by each paper's share of the runs simulated now
        fresh = sum(key_seconds.get(k, 0.0) for k in keys_of[n] if k not in reused_keys)
        seconds_of[n] = wall * fresh / fresh_cpu if fresh_cpu > 0 else 0.0
    total_runs = len({k for ks in keys_of.values() for k in ks})
    when = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    reused = (f", {len(reused_keys)} of them reused from this engine's earlier runs of the same specifications and "
              f"files (the run cache; their {sum(key_seconds[k] for k in reused_keys):.0f} CPU s as measured then)"
              if reused_keys else "")
    common_header = [
        f"memtint {__version__}; generated {when}; {total_runs} simulations{reused} in {wall:.0f} s wall on "
        f"{workers} ({cpu:.0f} CPU seconds of simulation in all).",
        f"Seeds {', '.join(map(str, settings.seed_list()))} (the run spec's seed: the OS model's frame order and the "
        f"synthetic profiles' generators); mixes drawn from mix seed {settings.mix_seed}"
        + (" (quick mode: tiny runs, not a result)" if settings.quick else "") + ".",
        "Machines are the presets' defaults (configs/machines); no model parameter is set per experiment. Programs: "
        "the captured suite (workloads/traces: " + ", ".join(common.SUITE) + ") and the built-in profiles "
        "(stream ~ libquantum, random ~ mcf, copy ~ lbm, light); memory-intensive means alone LLC MPKI > 1 on the "
        "experiment's machine, measured with its warm-up and window (memtint.workload_classes; bpm.md §4).",
    ]

    def with_warmup(line: str) -> list[str]:  # the warm-up line after the seeds'
        return common_header[:2] + [line] + common_header[2:]
    # Over every paper, not only those run now: the index keeps the others' reports, and their
    # "same placement" notes with them.
    same = same_placement({n: experiments.get(n) or PAPERS[n].Experiment(settings) for n in PAPERS}, progress,
                          jobs=jobs or os.cpu_count() or 1)
    papers = []
    for n in names:
        e = experiments[n]
        e.figures = claims[n]
        analysis = e.analyse(claims[n]["claim"], results)
        sampled = report.sampling_header(settings, getattr(e, "mix_experiments", lambda: [])())
        header = e.describe() + ([sampled] if sampled else []) + [n for n in analysis.get("notes", []) if n] + [
            s["text"] for s in same if n in s["papers"]] + with_warmup(warmup_line(PAPERS[n], settings)) + [
            f"Wall time of this paper's {len(keys_of[n])} simulations: about {seconds_of[n]:.0f} s (share of the "
            f"{wall:.0f} s total" + (f"; {reused_of[n]} of them reused from the run cache, not simulated now, their CPU "
                                     "time below as measured when they ran" if reused_of[n] else "") + ")"
            + time_by_experiment(planned[n], key_seconds) + ".",
            "Run lengths: " + RUN_LENGTHS]
        report.write_paper(out, n, e.title, claims[n], header, analysis, command,
                           meta={"title": e.title, "seconds": seconds_of[n], "runs": len(keys_of[n]),
                                 "reused": reused_of[n]})
        papers.append({"name": n, "title": e.title, "rows": analysis["rows"], "seconds": seconds_of[n],
                       "runs": len(keys_of[n]), "reused": reused_of[n]})
    # The index keeps the papers not run this time from their reports' data in ``out``.
    kept = [p for p in (report.read_paper(out, n) for n in PAPERS if n not in names) if p]
    order = list(PAPERS)
    indexed = sorted(papers + kept, key=lambda p: order.index(p["name"]))
    report.write_index(out, indexed, with_warmup(warmup_index_line(settings)) + [s["text"] for s in same], command)
    return papers


NO_WARMUP_WHY = "memtint.run_rt: one core's loads straight to the DRAM, no caches or page tables to warm"


def warmup_line(paper: Any, settings: common.Settings) -> str:
    """The warm-up a paper's runs actually have: the settings' (`--warmup`), capped per thread
    where the paper module says (``WARMUP_CAP``), none in its real-time runs (``NO_WARMUP``: which
    runs, or "all")."""
    w, cap, none = int(settings.warmup or 0), getattr(paper, "WARMUP_CAP", None), getattr(paper, "NO_WARMUP", None)
    if none == "all":
        return f"warm-up: none (every run is a real-time run; {NO_WARMUP_WHY}): statistics from the first load."
    if not w:
        text = ("none (statistics from the first instruction; `--warmup N` passes `warmup` to the run specs)")
    elif cap is not None and cap < w:
        text = (f"{cap:,} instructions per thread before statistics (run spec `warmup`: `--warmup`'s {w:,} capped at "
                f"{cap:,}, since a run of many threads does that many times a one-program run's warm-up work)")
    else:
        text = f"{w:,} instructions per core before statistics (run spec `warmup`)"
    return "warm-up: " + text + (f"; the {none} have none ({NO_WARMUP_WHY})" if none else "") + "."


def warmup_index_line(settings: common.Settings) -> str:
    """The index's warm-up line: the settings' and each paper's exceptions (each report states its own)."""
    w = int(settings.warmup or 0)
    if not w:
        return ("warm-up: none (statistics from the first instruction; `--warmup N` passes `warmup` to the run "
                "specs).")
    caps = [f"{m.WARMUP_CAP:,} per thread in {n}" for n, m in PAPERS.items()
            if getattr(m, "WARMUP_CAP", None) is not None and m.WARMUP_CAP < w]
    none = [f"every run of {n}" if m.NO_WARMUP == "all" else f"{n}'s {m.NO_WARMUP}" for n, m in PAPERS.items()
            if getattr(m, "NO_WARMUP", None)]
    return (f"warm-up: {w:,} instructions per core before statistics (run spec `warmup`)"
            + (f", but at most {' and '.join(caps)}" if caps else "")
            + (f"; none in {' and '.join(none)} (real-time runs, memtint.run_rt)" if none else "")
            + "; each report's set-up states its own.")


def time_by_experiment(jobs: list[dict[str, Any]], key_seconds: dict[str, float]) -> str:
    """Where a paper's simulation time went, by experiment (its jobs' ``experiment`` label), largest
    first: what to shorten when `make reproduce` outgrows its limit."""
    seconds: dict[str, float] = {}
    runs: dict[str, int] = {}
    seen: set[str] = set()
    for j in jobs:
        if j["key"] in seen:
            continue
        seen.add(j["key"])
        name = j.get("experiment", "other")
        seconds[name] = seconds.get(name, 0.0) + key_seconds.get(j["key"], 0.0)
        runs[name] = runs.get(name, 0) + 1
    if len(seconds) < 2:
        return ""
    parts = [f"{name} {s:,.0f} s in {runs[name]:,} runs" for name, s in sorted(seconds.items(), key=lambda x: -x[1])]
    return "; CPU time by experiment: " + ", ".join(parts)


def _setting(value: Any) -> str:
    """An OS setting as a report writes it: a list as its items (``resctrl=cat``), not its repr."""
    return "+".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)


def same_placement(experiments: dict[str, Any], progress: bool | None = False, jobs: int = 1) -> list[dict[str, Any]]:
    """Placement variants that are one policy on their machine (memtint.placement_equivalence),
    over every paper's mix experiments: per group, the sentence the reports carry and the papers
    that use one of its members. A short probe run per variant, ``jobs`` at a time in this
    process, under a bar of its own (``progress`` as for the runs)."""
    from memtint import placement_equivalence

    used: dict[tuple[str, int], dict[str, dict[str, Any]]] = {}
    users: dict[tuple[str, int, str], set[str]] = {}
    for paper, e in experiments.items():
        for exp in getattr(e, "mix_experiments", lambda: [])():
            if not exp.mixes:
                continue
            size = len(exp.mixes[0])
            for machine in exp.machines:
                for v in exp.variants:
                    # A dynamic policy's placement changes over the run: a short probe cannot tell.
                    if v.policy == "buddy" or (v.os or {}).get("dynamic"):
                        continue
                    key = (v.machine or machine, size)
                    label = v.policy if not v.os else f"{v.policy} ({', '.join(f'{k}={_setting(x)}' for k, x in v.os.items())})"
                    used.setdefault(key, {})[label] = {"policy": v.policy, **(v.os or {})}
                    users.setdefault((*key, label), set()).add(paper)
    out = []
    probes = sum(len(labels) for labels in used.values())
    with runner.Progress(probes, progress, label="same placement") as bar:
        # Every machine's probes in one pool (they are cached), then grouped per machine.
        placement_equivalence.probe_many(
            [placement_equivalence.probe_request(machine, label, size, labels)
             for (machine, size), labels in used.items() for label in labels], jobs, on_probe=lambda i: bar.advance())
        found = [(machine, size, placement_equivalence.groups(machine, list(labels), processes=size, options=labels))
                 for (machine, size), labels in used.items()]
    for machine, size, found_groups in found:
        for group in found_groups:
            papers = set().union(*(users[(machine, size, g)] for g in group))
            out.append({"papers": papers, "text": (
                f"Same placement: on {machine} with {size} programs, {', '.join(group[:-1])} and {group[-1]} place every "
                f"page alike "
                f"(measured: identical statistics of a {size}-program probe, memtint.placement_equivalence), so their "
                "results are one result, reported under each name but not evidence twice"
                + (f" (used by {', '.join(sorted(papers))})" if len(papers) > 1 else "") + ".")})
    return out


def _millions(n: int) -> str:
    return f"{n / 1e6:g} M"


_I7 = {k: _millions(v) for k, v in bpm.SIZES["full"].items() if k.startswith("instructions")}
RUN_LENGTHS = (f"i7-860 experiments (BPM, HVR): {_I7['instructions']} instructions per core with 4 programs and "
               f"{_I7['instructions8']} with 8 (the same per run), and {_millions(hvr.SIZES['full']['rule_instructions'])} "
               "with 4 in HVR's rule study, within one pass of the committed traces (every committed trace holds at least 34 M instructions "
               "per thread, more than the 20 M warm-up plus the window; tests/python/test_workload_suite.py checks it), so "
               "no trace wraps; the CCPS machines (64 KB LLC; the schedulers' quanta and epochs are their presets', scaled "
               "to short runs there): 3 M instructions (schedulers, 4 cores) and 2 M (grid, 4 and 8 cores); the 24-core "
               "TCM machine: 1 M per core, with the same scaled quanta; each covers many quanta (the measured DRAM cycles "
               "per run are above); the tiering machines: 100 k (stream) and 300 k (pool programs) per thread, 8 "
               "threads, 2 M (migration) and 8 M (today's baselines, 4 threads), after at most 2 M of warm-up. Sized for `make reproduce`'s "
               "30-minute limit on 2 cores (this run's wall time, and each paper's time by experiment, are above). Longer "
               "runs or more mixes would narrow the spread; 3 seeds are the fewest that give one.")


def run(args: argparse.Namespace) -> int:
    """The `memtint reproduce` command; returns the exit status."""

    names = resolve(args.names)
    if args.warmup is not None and args.warmup < 0:
        raise MemtintError(f"--warmup must be at least 0, got {args.warmup}")
    warmup = args.warmup if args.warmup is not None else (common.QUICK_WARMUP if args.quick else DEFAULT_WARMUP)
    from memtint.sampling import DEFAULT_SAMPLING

    settings = common.Settings(seeds=args.seeds, mix_seed=args.mix_seed, warmup=warmup, quick=args.quick,
                               sampling=dict(DEFAULT_SAMPLING) if getattr(args, "sample", False) else None)
    command = "memtint reproduce" + (" " + " ".join(args.names) if args.names else "") + (
        " --quick" if args.quick else "") + (f" --seeds {args.seeds}" if args.seeds != 3 else "") + (
        f" --warmup {args.warmup}" if args.warmup is not None else "") + (" --sample" if settings.sampling else "")
    from memtint.outputs import check_output_dir

    if args.ray is not None:
        from memtint.sweep.ray_backend import import_ray

        import_ray()  # "Ray is not installed: ..." before anything else
    from memtint import workloads

    # before an hour of runs, not after; never into the papers' figures or the suite's traces it reads
    check_output_dir("--out", args.out, [figures.FIGURES_DIR, os.path.dirname(workloads.trace_path(workloads.suite()[0]))])
    from memtint.tables import output_console
    console = output_console()
    start = time.perf_counter()
    kept = None if args.no_cache else run_cache.RunCache()
    from memtint.sweep.ray_backend import ray_prints_on_stderr

    with ray_prints_on_stderr(args.ray):  # stdout is for the table below
        papers = reproduce(names, args.out, settings, jobs=args.jobs, ray=args.ray,
                           progress=False if args.no_progress else None, command=command, cache=kept)
    console.print(report.terminal_table(papers))
    reused = (f"; {kept.reused} run(s) reused from {kept.root} (--no-cache simulates every run)"
              if kept is not None and kept.reused else "")
    console.print(f"Reports in {os.path.abspath(args.out)} ({time.perf_counter() - start:.0f} s{reused})", soft_wrap=True)
    return 0
