"""Sweep specifications: what to run, parsed and validated before anything runs.

A sweep is either the cross product machines × mixes × policies × instructions × seeds, or an
explicit ``[[run]]`` list (docs/sweeps.md). Mixes are explicit program lists, named preset mixes,
random draws from a pool, or class-based draws. Every problem (unknown key, unknown machine,
policy or profile, missing trace file, empty product) is a :class:`SweepSpecError` naming the key,
raised by :func:`parse_spec` before a single simulation starts.
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memtint import api, limits
from memtint.comparison import DEFAULT_WARMUP
from memtint.api import MemtintError
from memtint.messages import escaped

__all__ = ["Mix", "SweepSpec", "SweepSpecError", "load_spec", "parse_spec"]


class SweepSpecError(MemtintError):
    """A sweep specification that cannot run; the message names the offending key."""


@dataclass(frozen=True)
class Mix:
    """One workload mix: the programs (one per core) and a label for tables."""

    programs: tuple[str, ...]
    name: str

    @property
    def label(self) -> str:
        return "|".join(self.programs)


@dataclass(frozen=True)
class RunEntry:
    """One unit of work before hashing: a mix under a policy on a machine (runs.py expands it)."""

    machine: str
    mix: Mix
    policy: str
    instructions: int
    seed: int
    os: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    #: The run's own controller scheduler ([[run]] scheduler = ...), over the top-level one.
    scheduler: str | None = None
    #: The machine of the alone runs when ``machine`` is a variant the policy needs (bpm-plus on
    #: i7-860-bpm-plus): the base machine's, so that every policy of a mix has one denominator.
    alone_machine: str | None = None


@dataclass
class SweepSpec:
    """A validated sweep: the concrete list of runs plus the options shared by all of them."""

    name: str
    #: The alone runs' policy; None: each machine's Linux default (comparison.default_baseline).
    baseline: str | None
    entries: list[RunEntry]
    mapping: str | None = None
    scheduler: str | None = None
    use_cache: bool = True
    source: str | None = None  # the file it came from, for messages
    #: Instructions per core run functionally before statistics start (``warmup``).
    warmup: int = DEFAULT_WARMUP
    #: Machine settings over every run's machine (``[overrides]``, as in run files and ``--set``).
    overrides: dict[str, Any] | None = None
    #: Sampled simulation for every run, alone and shared (``sampling = { unit = .., ... }``, or
    #: ``memtint sweep --sample``); None: detailed runs.
    sampling: dict[str, Any] | None = None

    def __len__(self) -> int:
        return len(self.entries)


_TOP_KEYS = {"name", "machines", "mixes", "policies", "instructions", "seeds", "baseline", "os",
             "mapping", "scheduler", "cache", "run", "warmup", "machine_variants", "overrides", "sampling"}
_PRODUCT_KEYS = ("machines", "mixes", "policies", "instructions", "seeds")
_MIX_KINDS = ("programs", "preset", "random", "classes")
_MIX_KEYS = {
    "programs": {"programs", "name"},
    "preset": {"preset"},
    "random": {"random", "size", "count", "seed", "name"},
    "classes": {"classes", "count", "seed", "name"},
}
_CLASS_KEYS = {"from", "n"}
_RUN_KEYS = {"machine", "programs", "preset", "policy", "instructions", "seed", "os", "name", "scheduler"}
_OS_FORBIDDEN = {"policy"}
#: The keys of ``sampling`` (the engine's run spec, docs/stats.md "Sampled simulation").
_SAMPLING_KEYS = {"mode", "unit", "period", "warming", "functional", "min_units", "target_error", "clusters",
                  "warm_prefetchers", "matched"}
#: Most programs in one mix: more than any machine preset has cores, and a bound on what a
#: random draw allocates before the engine sees the mix.
_MAX_MIX_SIZE = 256
# Random mixes draw from the four classic profiles unless a sweep lists its own.
DEFAULT_PROFILES = ("stream", "random", "copy", "light")
#: Most program slots (mixes x programs) a specification's mix draws make.
_MAX_SLOTS = 16 * limits.MAX_RUNS
_MIX_SIZE_WHY = f" (a mix has one program per core; {_MAX_MIX_SIZE} is far above any machine's core count)"


#: Classes a pool can name as "class:NAME", by the measured classes of memtint.workload_classes.
CLASSES = {
    "intensive": lambda c: c["intensity"] == "intensive",
    "light": lambda c: c["intensity"] == "light",
    "intensive-streaming": lambda c: c["intensity"] == "intensive" and c["access"] == "streaming",
    "intensive-random": lambda c: c["intensity"] == "intensive" and c["access"] == "random",
    "write-heavy": lambda c: c["intensity"] == "intensive" and c["write_heavy"],
}


def _fail(where: str, message: str) -> SweepSpecError:
    return SweepSpecError(escaped(f"{where}: {message}"))  # a value may hold a TOML string's "\n"


class _Catalogue:
    """The names the engine knows, fetched once per parse."""

    def __init__(self) -> None:
        p = api.presets()
        self.machines = [m["name"] for m in p.get("machines", [])]
        self.policies = list(p.get("placement_policies", []))
        self.profiles = list(p.get("profiles", DEFAULT_PROFILES))
        self.mixes = {m["name"]: list(m["programs"]) for m in p.get("mixes", [])}
        self.mappings = [m["name"] for m in p.get("mappings", [])] + list(p.get("layouts", []))
        self.schedulers = list(p.get("schedulers", []))
        #: Machine -> its variants (what the variant offers -> machine), from its [variants].
        self.variants = {m["name"]: dict(m.get("variants") or {}) for m in p.get("machines", [])}
        #: Policy -> the machine variant it needs, if any (PolicyInfo::machine_variant).
        self.policy_variant = {q["name"]: q.get("machine_variant") for q in p.get("placement_policy_info", [])}


def _check_keys(table: Any, allowed: set[str], where: str) -> dict[str, Any]:
    if not isinstance(table, dict):
        raise _fail(where, f"expected a table, got {type(table).__name__}")
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise _fail(where, f"unknown key(s) {', '.join(repr(k) for k in unknown)} in {where} "
                           f"(expected: {', '.join(sorted(allowed))})")
    return table


def _as_list(value: Any, key: str, kind: type | tuple[type, ...]) -> list[Any]:
    values = value if isinstance(value, list) else [value]
    for v in values:
        if not isinstance(v, kind) or isinstance(v, bool):
            names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
            raise _fail(key, f"expected {names} (or a list of them), got {v!r}")
    return values


def _int(value: Any, key: str, minimum: int, maximum: int | None = None, why: str = "") -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise _fail(key, f"expected an integer, got {value!r}")
    if value < minimum:
        raise _fail(key, f"must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise _fail(key, f"must be at most {maximum:,}, got {value:,}{why}")
    return value


_INSTRUCTIONS_WHY = f" ({limits.MAX_INSTRUCTIONS:,} per core is about a week of simulation per run)"
_SEED_WHY = " (the result store keeps seeds as 64-bit signed integers)"
_RUNS_WHY = f" ({limits.MAX_RUNS:,} runs is the most one sweep takes; split it into several sweeps)"


class _Parser:
    def __init__(self, base: Path, catalogue: _Catalogue) -> None:
        self.base = base
        self.cat = catalogue

    def machine(self, value: Any, key: str) -> str:
        if not isinstance(value, str):
            raise _fail(key, f"expected a machine name, got {value!r}")
        if value in self.cat.machines:
            return value
        path = self.base / value
        if value.endswith(".toml"):
            if path.is_file():
                return str(path)
            raise _fail(key, f"{value}: no such machine file")
        raise _fail(key, f"unknown machine '{value}' (known: {', '.join(self.cat.machines)}; or a machine TOML path)")

    def machine_for(self, machine: str, policy: str) -> str:
        """The machine a product sweep runs ``policy`` on: the variant of ``machine`` that the
        policy needs (e.g. ``bpm-plus`` needs ``page-channel``: i7-860 -> i7-860-bpm-plus), when
        the machine declares one; else the machine itself, whose probe then names the problem."""
        variant = self.cat.policy_variant.get(policy)
        if not variant:
            return machine
        if machine in self.cat.variants:
            variants, base = self.cat.variants[machine], self.base
        else:  # a machine TOML path
            variants, base = _file_variants(Path(machine)), Path(machine).parent
        target = variants.get(variant)
        if target is None:
            return machine
        return self.machine(target, f"machine {machine!r} [variants].{variant}") if target in self.cat.machines \
            else self.machine(str(base / target), f"machine {machine!r} [variants].{variant}")

    def policy_scheduler(self, value: Any, key: str) -> tuple[str, str | None]:
        """``"policy"`` or ``"policy+scheduler"`` (a placement policy run with its own scheduler)."""
        if isinstance(value, str) and "+" in value:
            policy, scheduler = value.split("+", 1)
            if scheduler not in self.cat.schedulers:
                raise _fail(key, f"unknown scheduler {scheduler!r} in {value!r} (known: {', '.join(self.cat.schedulers)})")
            return self.policy(policy, key), scheduler
        return self.policy(value, key), None

    def policy(self, value: Any, key: str) -> str:
        if value not in self.cat.policies:
            raise _fail(key, f"unknown placement policy {value!r} (known: {', '.join(self.cat.policies)})")
        return value

    def program(self, value: Any, key: str) -> str:
        if not isinstance(value, str) or not value:
            raise _fail(key, f"expected a program (profile or trace path), got {value!r}")
        profile = value.split(":", 1)[0]
        if profile in self.cat.profiles:
            return value
        path = self.base / value
        if path.is_file():
            return str(path)
        if path.is_dir():
            raise _fail(key, f"{value}: is a directory, not a trace file")
        if path.exists():  # read more than once, as every trace is: a pipe would give it once
            raise _fail(key, f"{value}: is not a regular file (a pipe, socket or device); give a trace file")
        from memtint import workloads

        if value in workloads.suite():  # a suite program by name: its committed trace
            return workloads.trace_path(value)
        raise _fail(key, f"{value}: not a built-in workload profile ({', '.join(self.cat.profiles)}), not a "
                         f"program of the workload suite ({', '.join(workloads.suite())}) and no such trace file")

    #: (machine, instructions, warm-up) classes are measured with (the sweep's first of each).
    measure_on: tuple[str, int, int] | None = None

    def programs(self, value: Any, key: str) -> tuple[str, ...]:
        if isinstance(value, str) and value.startswith("class:"):
            return self.measured_class(value[len("class:"):], key)
        if not isinstance(value, list) or not value:
            raise _fail(key, "expected a non-empty list of programs, or \"class:NAME\" (a measured class: "
                        f"{', '.join(CLASSES)})")
        return tuple(self.program(p, f"{key}[{i}]") for i, p in enumerate(value))

    def measured_class(self, name: str, key: str) -> tuple[str, ...]:
        """The suite's programs and the built-in profiles measured in class ``name`` on the
        sweep's first machine, with its first instruction count and its warm-up (alone runs,
        cached: memtint.workload_classes)."""
        from memtint import workload_classes, workloads

        if name not in CLASSES:
            raise _fail(key, f"unknown class {name!r} (known: {', '.join(CLASSES)})")
        if self.measure_on is None:
            raise _fail(key, "a measured class needs the sweep's machines and instructions")
        machine, instructions, warmup = self.measure_on
        names = list(workloads.suite()) + list(self.cat.profiles)
        stats = workload_classes.measure({n: workloads.trace_path(n) if n in workloads.suite() else n for n in names},
                                         machine, warmup=warmup, instructions=instructions)
        chosen = tuple(n for n in names if CLASSES[name](stats[n]["classes"]))
        if not chosen:
            raise _fail(key, f"no program is measured {name} on {machine}")
        return chosen

    def preset_mix(self, value: Any, key: str) -> Mix:
        from memtint import api

        path = str(self.base / value) if isinstance(value, str) else value  # relative to the spec, as traces
        if api.is_mix_file(path):  # a mix file of the user's, in configs/mixes' format
            try:
                return Mix(tuple(api.mix_programs(path)), value)  # named as written: errors name the file
            except api.MemtintError as error:
                raise _fail(key, str(error)) from None
        if value not in self.cat.mixes:
            raise _fail(key, f"unknown mix {value!r} (known: {', '.join(self.cat.mixes)}, or a mix file: "
                             "a .toml with programs = [...])")
        return Mix(tuple(self.cat.mixes[value]), value)

    def os_table(self, value: Any, key: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise _fail(key, "expected a table (the [os] table of a sim configuration)")
        bad = sorted(set(value) & _OS_FORBIDDEN)
        if bad:
            raise _fail(f"{key}.{bad[0]}", "the policy comes from 'policies' (or run.policy), not from the os table")
        return dict(value)

    def mixes(self, value: Any) -> list[Mix]:
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list):
            raise _fail("mixes", "expected a list of mixes ([[mixes]] tables, program lists or preset names)")
        out: list[Mix] = []
        for i, item in enumerate(value):
            where = f"mixes[{i}]"
            if isinstance(item, str):
                out.append(self.preset_mix(item, where))
            elif isinstance(item, list):
                progs = self.programs(item, where)
                out.append(Mix(progs, "|".join(progs)))
            elif isinstance(item, dict):
                out.extend(self.mix_table(item, where))
            else:
                raise _fail(where, f"expected a table, a program list or a preset mix name, got {item!r}")
        return out

    def mix_table(self, table: dict[str, Any], where: str) -> list[Mix]:
        kinds = [k for k in _MIX_KINDS if k in table]
        if len(kinds) != 1:
            raise _fail(where, f"needs exactly one of {', '.join(_MIX_KINDS)} (got {', '.join(kinds) or 'none'})")
        kind = kinds[0]
        _check_keys(table, _MIX_KEYS[kind], where)
        name = table.get("name")
        if kind == "programs":
            progs = self.programs(table["programs"], f"{where}.programs")
            return [Mix(progs, name or "|".join(progs))]
        if kind == "preset":
            return [self.preset_mix(table["preset"], f"{where}.preset")]
        count = _int(table.get("count", 1), f"{where}.count", 1, limits.MAX_RUNS, _RUNS_WHY)
        seed = _int(table.get("seed", 1), f"{where}.seed", 0, limits.MAX_SEED, _SEED_WHY)
        rng = random.Random(seed)
        mixes = []
        if kind == "random":
            pool = self.programs(table["random"], f"{where}.random")
            if "size" not in table:
                raise _fail(where, "missing key 'size' (programs per random mix)")
            size = _int(table["size"], f"{where}.size", 1, _MAX_MIX_SIZE, _MIX_SIZE_WHY)
            _check_slots(where, count, size)
            for c in range(count):
                progs = tuple(rng.choice(pool) for _ in range(size))
                mixes.append(Mix(progs, f"{name}-{c}" if name else "|".join(progs)))
            return mixes
        classes = table["classes"]
        if not isinstance(classes, list) or not classes:
            raise _fail(f"{where}.classes", "expected a non-empty list of {from = [...], n = N} tables")
        draws = []
        for j, cls in enumerate(classes):
            cw = f"{where}.classes[{j}]"
            _check_keys(cls, _CLASS_KEYS, cw)
            if "from" not in cls:
                raise _fail(cw, "missing key 'from' (the class's programs)")
            draws.append((self.programs(cls["from"], f"{cw}.from"),
                          _int(cls.get("n", 1), f"{cw}.n", 1, _MAX_MIX_SIZE, _MIX_SIZE_WHY)))
        _check_slots(where, count, sum(n for _, n in draws))
        for c in range(count):
            progs = tuple(rng.choice(pool) for pool, n in draws for _ in range(n))
            mixes.append(Mix(progs, f"{name}-{c}" if name else "|".join(progs)))
        return mixes


def _warmup(table: dict[str, Any]) -> int:
    return _int(table.get("warmup", DEFAULT_WARMUP), "warmup", 0, limits.MAX_INSTRUCTIONS, _INSTRUCTIONS_WHY)


def _toml(value: Any) -> str:
    """A value as TOML writes it (``true``, not Python's ``True``), for messages."""
    return json.dumps(value) if isinstance(value, (bool, int, float, str)) else repr(value)


def _sampling(table: dict[str, Any]) -> dict[str, Any] | None:
    """The ``sampling`` table: its keys and their kinds (the engine checks the values against
    each other and each run's instructions when the run starts, naming the key)."""
    if "sampling" not in table:
        return None
    value = table["sampling"]
    if not isinstance(value, dict):
        raise _fail("sampling", f"expected a table (sampling = {{ unit = 100000, warming = 100000 }}), got {_toml(value)}")
    _check_keys(value, _SAMPLING_KEYS, "sampling")
    # The engine's defaults written out, so that `--sample` and a table that spells them are one
    # configuration (one hash, one series in a report), not two.
    from memtint.sampling import DEFAULT_SAMPLING

    out = {**DEFAULT_SAMPLING, **value}
    if not isinstance(out["mode"], str):
        raise _fail("sampling.mode", f"expected a mode name (\"periodic\" or \"phases\"), got {_toml(out['mode'])}")
    for key in ("warm_prefetchers", "matched"):
        if key in out and not isinstance(out[key], bool):
            raise _fail(f"sampling.{key}", f"expected true or false, got {out[key]!r}")
    for key, minimum in (("unit", 1), ("period", 1), ("warming", 0), ("functional", 0), ("min_units", 1), ("clusters", 1)):
        if key in out:
            _int(out[key], f"sampling.{key}", minimum, limits.MAX_INSTRUCTIONS, _INSTRUCTIONS_WHY)
    if "target_error" in out:
        e = out["target_error"]
        if not isinstance(e, (int, float)) or isinstance(e, bool) or not 0 < e < 1:
            raise _fail("sampling.target_error", f"expected a number above 0 and below 1 (0.01 is 1 %), got {e!r}")
        out["target_error"] = float(e)
    return out


def _check_slots(where: str, count: int, size: int) -> None:
    if count * size > _MAX_SLOTS:
        raise _fail(where, f"{count:,} mixes of {size} programs is more than a sweep takes ({_MAX_SLOTS:,} programs "
                           f"in all; at most {limits.MAX_RUNS:,} runs); split it into several sweeps")


def _file_variants(path: Path) -> dict[str, str]:
    """The ``[variants]`` table of a machine TOML file (empty when it has none)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        with open(path, "rb") as f:
            return dict(tomllib.load(f).get("variants") or {})
    except (OSError, tomllib.TOMLDecodeError):
        return {}  # the engine's probe reports an unreadable machine file


def variant_machine(machine: str, policy: str, base: str | os.PathLike[str] = ".") -> str:
    """The machine a product sweep runs ``policy`` on when its mixes run on ``machine`` (a preset,
    or a machine TOML path relative to ``base``): the variant the policy needs, else ``machine``.
    A ``policy+scheduler`` label counts by its policy. Raises :class:`SweepSpecError` for a
    variant that does not resolve (the sweep would have refused it)."""
    parser = _Parser(Path(base), _Catalogue())
    return parser.machine_for(parser.machine(machine, "machine"), policy.split("+", 1)[0])


def parse_spec(table: dict[str, Any], base: str | os.PathLike[str] | None = None,
               source: str | None = None) -> SweepSpec:
    """Validate a sweep specification (the TOML's table) and expand its mixes and products.

    Relative trace and machine paths are resolved against ``base`` (the spec file's directory).
    Raises :class:`SweepSpecError` naming the key at the first problem.
    """
    try:
        return _parse(table, Path(base or os.getcwd()), source)
    except SweepSpecError as error:
        if source:
            raise SweepSpecError(f"{source}{_line_of(source, str(error))}: {error}") from None
        raise


def _line_of(source: str, message: str) -> str:
    """":N" for the line of the spec file that sets the key an error begins with, or ""."""
    from memtint.toml_files import error_line

    try:
        with open(source, encoding="utf-8") as f:
            return error_line(f.read(), message)
    except (OSError, UnicodeDecodeError):
        return ""


def _parse(table: dict[str, Any], base: Path, source: str | None) -> SweepSpec:
    _check_keys(table, _TOP_KEYS, "the sweep specification")
    parser = _Parser(base, _Catalogue())
    name = table.get("name", Path(source).stem if source else "sweep")
    if not isinstance(name, str) or not name:
        raise _fail("name", f"expected a non-empty string, got {name!r}")
    baseline = parser.policy(table["baseline"], "baseline") if "baseline" in table else None
    os_table = parser.os_table(table.get("os", {}), "os")
    mapping = table.get("mapping")
    if mapping is not None and not (isinstance(mapping, str) and (mapping in parser.cat.mappings
                                                                 or (base / mapping).is_file())):
        raise _fail("mapping", f"unknown mapping {mapping!r} (known: {', '.join(parser.cat.mappings)}; or a TOML path)")
    if mapping is not None and (base / mapping).is_file() and mapping not in parser.cat.mappings:
        mapping = str(base / mapping)
    scheduler = table.get("scheduler")
    if scheduler is not None and scheduler not in parser.cat.schedulers:
        raise _fail("scheduler", f"unknown scheduler {scheduler!r} (known: {', '.join(parser.cat.schedulers)})")
    use_cache = table.get("cache", True)
    if not isinstance(use_cache, bool):
        raise _fail("cache", f"expected true or false, got {use_cache!r}")
    variants = table.get("machine_variants", True)
    if not isinstance(variants, bool):
        raise _fail("machine_variants", f"expected true or false, got {variants!r}")

    instructions = [_int(v, "instructions", 1, limits.MAX_INSTRUCTIONS, _INSTRUCTIONS_WHY)
                    for v in _as_list(table.get("instructions", []), "instructions", int)]
    seeds = [_int(v, "seeds", 0, limits.MAX_SEED, _SEED_WHY) for v in _as_list(table.get("seeds", [1]), "seeds", int)]

    entries: list[RunEntry] = []
    if "run" in table:
        product_keys = [k for k in ("machines", "mixes", "policies") if k in table]
        if product_keys:
            raise _fail(product_keys[0], "give either the product keys (machines, mixes, policies) or [[run]], not both")
        runs = table["run"]
        if not isinstance(runs, list) or not runs:
            raise _fail("run", "expected a non-empty list of [[run]] tables")
        for i, run in enumerate(runs):
            where = f"run[{i}]"
            _check_keys(run, _RUN_KEYS, where)
            entries.append(_run_entry(parser, run, where, instructions, seeds, os_table))
    else:
        for key in ("machines", "mixes", "policies", "instructions"):
            if key not in table:
                raise _fail(key, f"missing key '{key}' (or give an explicit [[run]] list)")
        machines = [parser.machine(m, f"machines[{i}]")
                    for i, m in enumerate(_as_list(table["machines"], "machines", str))]
        policies = [parser.policy_scheduler(p, f"policies[{i}]")
                    for i, p in enumerate(_as_list(table["policies"], "policies", str))]
        if machines and instructions:
            parser.measure_on = (machines[0], instructions[0], _warmup(table))
        mixes = parser.mixes(table["mixes"])
        for key, values in (("machines", machines), ("mixes", mixes), ("policies", policies),
                            ("instructions", instructions), ("seeds", seeds)):
            if not values:
                raise _fail(key, "is empty: the sweep would have no runs")
        # An entry given twice runs once (same configuration hash): refused, as compare refuses it.
        for key in ("machines", "policies", "instructions", "seeds", "mixes"):
            values = table.get(key)
            seen: dict[str, int] = {}
            for i, v in enumerate(values if isinstance(values, list) else []):
                if key == "mixes" and not isinstance(v, (str, list)):
                    continue  # a [[mixes]] table draws its mixes: repeats among draws are the pool's
                text = json.dumps(v, sort_keys=True)
                if text in seen:
                    raise _fail(f"{key}[{i}]", f"{json.dumps(v)} is given twice (also {key}[{seen[text]}]); each "
                                "runs once: give it once")
                seen[text] = i
        total = len(machines) * len(mixes) * len(policies) * len(instructions) * len(seeds)
        if total > limits.MAX_RUNS:
            raise _fail("the sweep specification", f"{len(machines)} machines x {len(mixes)} mixes x {len(policies)} "
                        f"policies x {len(instructions)} instruction counts x {len(seeds)} seeds = {total:,} runs, "
                        f"more than the {limits.MAX_RUNS:,} one sweep takes; split it into several sweeps")
        for machine in machines:
            for mix in mixes:
                for policy, sched in policies:
                    on = parser.machine_for(machine, policy) if variants else machine
                    for n in instructions:
                        for seed in seeds:
                            entries.append(RunEntry(on, mix, policy, n, seed, os_table, sched,
                                                    alone_machine=machine if on != machine else None))
    warmup = _warmup(table)
    overrides = table.get("overrides")
    if overrides is not None and not isinstance(overrides, dict):
        raise _fail("overrides", f"expected a table of machine settings ([overrides.controller] ...), got {overrides!r}")
    spec = SweepSpec(name=name, baseline=baseline, entries=entries, mapping=mapping, scheduler=scheduler,
                     use_cache=use_cache, source=source, warmup=warmup, overrides=overrides or None,
                     sampling=_sampling(table))
    if spec.sampling is not None:
        from memtint.sampling import misfit

        for n in sorted({e.instructions for e in entries}):
            problem = misfit(spec.sampling, n)
            if problem:
                key, _, why = problem.partition(": ")
                raise _fail(key, f"{why} (runs of {n:,} instructions in this sweep)")
    _engine_check(spec, explicit="run" in table)
    return spec


def _engine_check(spec: SweepSpec, explicit: bool) -> None:
    """Let the engine validate each distinct (machine, mix size, policy, os table) with
    :func:`memtint.comparison.probe_run`, so that errors only the engine can see stop the sweep
    before it starts. About 20 ms per distinct combination."""
    import json

    from memtint import comparison

    seen: set[str] = set()
    for i, e in enumerate(spec.entries):
        combo = json.dumps([e.machine, len(e.mix.programs), e.policy, e.os, e.scheduler], sort_keys=True)
        if combo in seen:
            continue
        seen.add(combo)
        for policy in dict.fromkeys((e.policy, spec.baseline or comparison.default_baseline(e.machine))):
            os_table = e.os if policy == e.policy else None
            size = len(e.mix.programs) if os_table is not None else 1
            try:
                comparison.probe_run(e.machine, size, policy, os_options=os_table, mapping=spec.mapping,
                                     scheduler=e.scheduler or spec.scheduler, overrides=spec.overrides,
                                     sampling=spec.sampling)
            except MemtintError as error:
                if os_table is None and str(error).startswith("invalid configuration: os.policy: "):
                    # the alone runs' policy refused: what `baseline` (or its default) names
                    why = str(error).removeprefix("invalid configuration: os.policy: ")
                    given = "" if spec.baseline else ", the machine's default"
                    raise _fail("baseline", f"machine '{e.machine}': {why} (the alone runs' policy{given})") from None
                placed = _in_machine_files(e.machine, str(error), spec.overrides)
                if placed:  # the machine's own files are at fault, not the specification's [overrides]
                    raise _fail(f"run[{i}]" if explicit else "machines",
                                f"machine '{e.machine}', policy '{policy}', mix {e.mix.name}: {placed}") from None
                raise _fail(f"run[{i}]" if explicit else _probe_error_key(str(error)),
                            f"machine '{e.machine}', policy '{policy}', mix {e.mix.name}: {error}") from None


def _in_machine_files(machine: str, message: str, overrides: dict[str, Any] | None) -> str:
    """An engine error about a key of the machine file ``machine`` or of a device or mapping file
    it names, as that file's ``FILE:LINE: key: reason``; "" when the key is not one of theirs (the
    specification's [overrides] set it, or the machine is a preset)."""
    import re

    from memtint.toml_files import in_its_file, key_line

    if not (machine.endswith(".toml") and os.path.isfile(machine)):
        return ""
    named = re.match(r"invalid configuration: (.+?\.toml): ", message)
    if named and not os.path.isabs(named.group(1)):  # a path the machine file gives, relative to it
        beside = os.path.join(os.path.dirname(os.path.abspath(machine)), named.group(1))
        message = message[:named.start(1)] + beside + message[named.end(1):]
    placed = in_its_file(message)
    if placed != message:
        return placed
    key = re.match(r"invalid configuration: ([A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)*): ", message)
    if not key:
        return ""
    given: Any = overrides or {}
    for part in key.group(1).split("."):
        given = given.get(part) if isinstance(given, dict) else None
    if given is not None:
        return ""
    try:
        line = key_line(Path(machine).read_text(encoding="utf-8"), key.group(1))
    except (OSError, UnicodeDecodeError):
        return ""
    return f"{machine}{line}: {message.removeprefix('invalid configuration: ')}" if line else ""


def _probe_error_key(message: str) -> str:
    """The specification key behind an engine error of the probe run: the engine names its own
    key (``os.colours``, ``controller.read_queue``), which the specification sets in ``os``,
    ``policies``, ``mixes``, ``sampling``, ``mapping``, ``scheduler`` or ``[overrides]``."""
    import re

    m = re.search(r"invalid configuration: ([A-Za-z_][\w.\-]*)", message)
    key = m.group(1) if m else ""
    first = key.split(".")[0]
    if key == "os.policy":
        return "policies"
    if not key or first in ("programs", "processes", "workload"):
        return "mixes" if not key or "programs" in message else "os"
    if first in ("os", "sampling", "mapping", "scheduler"):
        return first
    return "overrides"  # the machine's own sections: dram, controller, cpu, cache, ...


def _run_entry(parser: _Parser, run: dict[str, Any], where: str, instructions: list[int], seeds: list[int],
               os_table: dict[str, Any]) -> RunEntry:
    for key in ("machine", "policy"):
        if key not in run:
            raise _fail(where, f"missing key '{key}'")
    machine = parser.machine(run["machine"], f"{where}.machine")
    policy, policy_sched = parser.policy_scheduler(run["policy"], f"{where}.policy")
    if ("programs" in run) == ("preset" in run):
        raise _fail(where, "needs exactly one of 'programs' and 'preset'")
    if "programs" in run:
        progs = parser.programs(run["programs"], f"{where}.programs")
        mix = Mix(progs, run.get("name") or "|".join(progs))
    else:
        mix = parser.preset_mix(run["preset"], f"{where}.preset")

    def single(key: str, values: list[int], top: str, minimum: int) -> int:
        if key in run:
            maximum, why = (limits.MAX_SEED, _SEED_WHY) if key == "seed" else (limits.MAX_INSTRUCTIONS, _INSTRUCTIONS_WHY)
            return _int(run[key], f"{where}.{key}", minimum, maximum, why)
        if len(values) == 1:
            return values[0]
        raise _fail(where, f"missing key '{key}' (the top-level '{top}' gives {len(values)} values, not one)")

    n = single("instructions", instructions, "instructions", 1)
    seed = single("seed", seeds, "seeds", 0)
    merged = dict(os_table)
    merged.update(parser.os_table(run.get("os", {}), f"{where}.os"))
    scheduler = run.get("scheduler", policy_sched)
    if scheduler is not None and scheduler not in parser.cat.schedulers:
        raise _fail(f"{where}.scheduler",
                    f"unknown scheduler {scheduler!r} (known: {', '.join(parser.cat.schedulers)})")
    return RunEntry(machine, mix, policy, n, seed, merged, scheduler)


def load_spec(path: str | os.PathLike[str]) -> SweepSpec:
    """Read and validate a sweep specification TOML (see docs/sweeps.md)."""
    from memtint.toml_files import TomlFileError, read_toml

    text = os.fspath(path)
    try:
        table, _ = read_toml(text, "sweep specification")
    except TomlFileError as error:
        raise SweepSpecError(str(error)) from None
    return parse_spec(table, base=os.path.dirname(os.path.abspath(text)), source=text)
