"""Which policy for my mix: each program runs alone with HVR's accessed-bit sampling on
(``[os.hot_pages]``), the engine's online classifier gives its class (CCF, LLCT, LLCM, LLCH,
os/llc_class.rs), and a rules file (:mod:`memtint.hvr_rules`, the paper's by default) picks the
policy and the coalescing. ``verify`` runs the candidates and measures them.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from memtint import api, comparison, hvr_rules

#: The machine of HVR's experiments.
DEFAULT_MACHINE = "i7-860"
#: Instructions of a classification run: several 500 µs sampling windows for a memory-bound
#: program (the classifier averages the last three).
CLASSIFY_INSTRUCTIONS = 10_000_000


@dataclass
class ProgramClass:
    program: str
    hvr_class: str | None  # None: the run was too short for a sampling window
    reason: str
    features: dict[str, Any]
    ipc: float
    llc_mpki: float
    warnings: list[str] = field(default_factory=list)


def classify(program: str, machine: str = DEFAULT_MACHINE, *, instructions: int = CLASSIFY_INSTRUCTIONS,
             warmup: int = comparison.DEFAULT_WARMUP, seed: int = 1) -> ProgramClass:
    """``program`` (trace or profile) alone on ``machine`` under buddy with sampling on."""
    spec = comparison.build_alone_specs(machine, [program], instructions=instructions, seed=seed,
                                        baseline="buddy", warmup=warmup)[0]
    spec["os"] = {**spec.get("os", {}), "hot_pages": {"enabled": True}}
    run = api.run_sim_spec(spec)
    hvr = (run["processes"][0].get("hot_pages") or {}).get("hvr")
    core = run["cores"][0]
    if hvr is None:
        reason = ("no class: the machine has no LLC" if not run.get("llc") else
                  f"no class: {instructions:,} instructions did not fill one sampling window"
                  + _windows_hint(run, instructions, "they"))
        return ProgramClass(program, None, reason, {}, core["ipc"], core["llc_mpki"])
    features = {k: v for k, v in hvr.items() if k not in ("class", "reason")}
    reason, warnings = hvr["reason"], []
    windows = features.get("windows")
    if isinstance(windows, int) and windows < 2:
        # DIFF (the change in pages used) compares two windows: with one it was never measured.
        warnings.append(f"{program}: classified from {windows} sampling window; the change between windows (DIFF) "
                        f"was not measured" + _windows_hint(run, instructions))
    return ProgramClass(program, hvr["class"], reason, features, core["ipc"], core["llc_mpki"], warnings)


#: Sampling windows a classification should fill: DIFF compares two, and the last may be cut short.
WINDOWS_WANTED = 3


def _windows_hint(run: dict[str, Any], instructions: int, subject: str = "") -> str:
    """What to give instead: the instructions that fill :data:`WINDOWS_WANTED` windows at the
    pace this run kept (windows are simulated time, so a high-IPC program needs more)."""
    window = ((run.get("config") or {}).get("os") or {}).get("hot_pages", {}).get("window_ns")
    ran = run.get("simulated_ns")
    if not window or not ran:
        return "; give more instructions (instructions=, or --classify-instructions)"
    # Half a window more: the pace moves with the phase, and only whole windows count.
    need = math.ceil(instructions * (WINDOWS_WANTED + 0.5) * window / ran / 1_000_000) * 1_000_000
    return (f"; {subject or f'the {instructions:,} instructions'} ran {ran / 1000:,.0f} µs of simulated time, the windows are "
            f"{window / 1000:,.0f} µs each; about {need:,} fill {WINDOWS_WANTED} (instructions={need}, or "
            f"--classify-instructions {need})")


@functools.lru_cache(maxsize=None)
def policy_colours(machine: str, policy: str) -> int | None:
    """The colours ``policy`` has on ``machine`` (None when it does not colour or cannot run there)."""
    try:
        run = api.run_sim_spec(api.build_sim_spec(machine, ["light"], instructions=1000, policy=policy))
    except api.MemtintError:
        return None
    colours = run.get("colours") or {}
    return colours.get("colours")


@dataclass
class Recommendation:
    machine: str
    programs: list[ProgramClass]
    advice: hvr_rules.Advice
    os_options: dict[str, Any] | None  # the coalescing, as [os] settings of the policy
    rules_path: str

    def to_json(self) -> dict[str, Any]:
        a = self.advice
        return {
            "machine": self.machine,
            "rules": self.rules_path,
            "programs": [{"program": p.program, "class": p.hvr_class, "reason": p.reason, "ipc_alone": p.ipc,
                          "llc_mpki_alone": p.llc_mpki, "features": p.features} for p in self.programs],
            "policy": a.policy,
            "rule": a.rule,
            "reason": a.reason,
            "support": a.support,
            "confidence": a.confidence,
            "groups": [{"programs": [self.programs[i].program for i in g], "rule": r, "share": s}
                       for g, r, s in zip(a.groups, a.group_rules, a.shares)],
            "os": self.os_options,
            "warnings": a.warnings,
        }


def advise(programs: Sequence[str], machine: str = DEFAULT_MACHINE, *, rules: hvr_rules.Rules | None = None,
           multithreaded: bool = False, instructions: int = CLASSIFY_INSTRUCTIONS,
           warmup: int = comparison.DEFAULT_WARMUP,
           progress: Callable[[str], None] | None = None) -> Recommendation:
    """The classes of ``programs`` and the policy ``rules`` (default: the paper's) give the mix."""
    # A string was split into its characters ("6 programs" for "stream"): each is named instead.
    programs = api.plain(api.names_argument("programs", programs, "programs (traces or profiles)"))
    if not programs or not all(isinstance(p, str) for p in programs):
        raise api.MemtintError(f"programs: expected a list of traces or profiles, got {programs!r}")
    if not isinstance(machine, str):
        raise api.MemtintError(f"machine: expected a machine preset's name, got {machine!r}")
    if rules is not None and not isinstance(rules, hvr_rules.Rules):
        raise api.MemtintError(f"rules: expected memtint.hvr_rules.load(PATH)'s rules, got {rules!r}")
    api.flag_argument("multithreaded", multithreaded)
    instructions = api.instruction_count("instructions", instructions)
    warmup = api.instruction_count("warmup", warmup, 0)
    api.function_argument("progress", progress, "one description")
    rules = rules or hvr_rules.load()
    # A mix the machine cannot run fails here, not after every program's classification run.
    cores = next((m["cores"] for m in api.presets()["machines"] if m["name"] == machine), None)
    if cores is not None and len(programs) > cores:
        raise api.MemtintError(f"{len(programs)} programs but machine '{machine}' has {cores} cores: advise takes at "
                               f"most one program per core (another machine, --machine, has more)")
    try_run(machine, len(programs), "buddy")
    classes = []
    for i, p in enumerate(programs):
        classes.append(classify(p, machine, instructions=instructions, warmup=warmup, seed=1 + i))
        if progress:
            progress(f"classified {p}")
    for c in classes:
        if c.hvr_class is None:
            raise api.MemtintError(f"cannot classify {c.program}: {c.reason}")
    advice = hvr_rules.decide(rules, [c.hvr_class for c in classes], multithreaded)
    advice.warnings[:0] = _per_program(classes)
    colours = policy_colours(machine, advice.policy)
    options = hvr_rules.os_options(advice, colours) if colours else None
    coalesces = any(len(g) > 1 for g in advice.groups) or any(s is not None for s in advice.shares)
    try:
        try_run(machine, len(programs), advice.policy, options)
    except api.MemtintError as error:
        advice.warnings.append(f"the rules pick {advice.policy} ({advice.rule or 'default'}), which cannot run this mix "
                               f"on {machine}: {error}; give rules for this machine (rules=, or --rules) or another machine")
    else:
        if coalesces and options is None:
            advice.warnings.append(f"the coalescing ({len(advice.groups)} groups) cannot be formed from {advice.policy}'s "
                                   f"{colours or 'no'} colours on {machine}: the policy runs without it")
    return Recommendation(machine, classes, advice, options, rules.path)


def _per_program(classes: Sequence[ProgramClass]) -> list[str]:
    """The classification warnings, one per program: copies of a program in the mix warn alike
    (their runs differ by a seed), so the first speaks for the others and says how many there are."""
    by_program: dict[str, list[str]] = {}
    for c in classes:
        if c.warnings:
            by_program.setdefault(c.program, []).append(c.warnings)
    out = []
    for program, warned in by_program.items():
        others = len(warned) - 1
        out.extend(warned[0][:-1] + [warned[0][-1] + (f" (as were the {others} other cop{'ies' if others > 1 else 'y'} "
                                                       f"of {program} in the mix)" if others else "")])
    return out


def try_run(machine: str, programs: int, policy: str, os_options: dict[str, Any] | None = None) -> None:
    """A run of ``programs`` light programs under ``policy`` on ``machine`` for a thousand
    instructions: raises the engine's error when the mix or the policy cannot run there."""
    api.run_sim_spec(api.build_sim_spec(machine, ["light"] * programs, instructions=1000, policy=policy,
                                        os_options=os_options))


def candidates(rules: hvr_rules.Rules, programs: int) -> list[str]:
    """The policies ``rules`` can pick for a mix of ``programs`` programs, in rule order."""
    out = []
    for r in rules.partition:
        p = r.policy_for(programs)
        if p not in out:
            out.append(p)
    if rules.default and rules.default not in out:
        out.append(rules.default)
    return out


def verify(rec: Recommendation, *, instructions: int, warmup: int = comparison.DEFAULT_WARMUP, seed: int = 1,
           policies: Sequence[str] | None = None,
           progress: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """Runs the mix under buddy, the candidates and the pick with its coalescing; one row per
    run: policy, WS, WS against buddy in %, MS, whether it is the pick."""
    mix = [p.program for p in rec.programs]
    chosen = list(policies or candidates(hvr_rules.load(rec.rules_path), len(mix)))
    if rec.advice.policy not in chosen:
        chosen.insert(0, rec.advice.policy)
    runs = ["buddy"]
    for p in chosen:
        if p == "buddy":
            continue
        try:  # a candidate the machine cannot run is left out, not the whole verification
            try_run(rec.machine, len(mix), p)
        except api.MemtintError as error:
            rec.advice.warnings.append(f"--verify: {p} cannot run this mix on {rec.machine}, so it was not measured: "
                                       f"{error}")
            if progress:
                progress(f"skipped {p}")
            continue
        runs.append(p)
    try:
        result = comparison.compare(rec.machine, mix, runs, instructions=instructions, seed=seed, baseline="buddy",
                                    warmup=warmup, progress=progress)
    except api.MemtintError as error:
        rec.advice.warnings.append(f"--verify: the verification runs ({', '.join(runs)}) failed, so nothing was "
                                   f"measured: {error}")
        return []
    rows = [{"policy": p["policy"], "ws": p["weighted_speedup"], "ms": p["maximum_slowdown"],
             "pick": p["policy"] == rec.advice.policy and rec.os_options is None} for p in result["policies"]]
    if rec.os_options is not None and rec.advice.policy in runs:
        spec = api.build_sim_spec(rec.machine, mix, instructions=instructions, policy=rec.advice.policy, seed=seed,
                                  os_options=rec.os_options, warmup=warmup)
        run = api.run_sim_spec(spec)
        alone = result["policies"][0]["cores"]
        m = api.mix_metrics([{"ipc_alone": a["ipc_alone"], "ipc_shared": c["ipc"]} for a, c in zip(alone, run["cores"])])
        rows.append({"policy": f"{rec.advice.policy} + coalescing", "ws": m["weighted_speedup"],
                     "ms": m["maximum_slowdown"], "pick": True})
        if progress:
            progress("shared: the pick with its coalescing")
    base = rows[0]["ws"]
    for r in rows:
        r["ws_vs_buddy_pct"] = 100.0 * (r["ws"] / base - 1.0) if base else float("nan")
    best = max(rows, key=lambda r: r["ws"])
    for r in rows:
        r["best"] = r is best
    return rows
