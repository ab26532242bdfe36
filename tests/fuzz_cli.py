"""Fuzz the command line's inputs, in process, in thirteen classes:

- ``sim``: mutated run files (bytes and values) through `memtint sim`'s own loading and the engine;
- ``overrides``: `--set KEY=VALUE` with extreme values (NaN, infinities, 1e400, 2^40, 2^64,
  negatives, wrong kinds) on machine and OS settings, and keys below another's value
  (``os.policy.x``), through the CLI's parsing and a short run: a `--set` named in an error is
  named as the user wrote it;
- ``combos``: run files in valid form whose components come from the registries (any machine with
  any placement, dynamic and migration policy, resctrl scheme, scheduler, row policy, refresh,
  prefetcher, each with its parameters' table; processes with affinities and `at_end`; memory
  limits with swapping; the machine's channels, ranks, cores, LLC and queues reshaped; sampling
  in either mode with its options), a value or two then moved to an edge: every combination runs or is
  refused by a rule naming its key;
- ``sweep``: mutated sweep specifications through `memtint sweep`'s parsing and checks;
- ``outputs``: output paths that collide with inputs (the same name, a hard link, a symlink, each
  other, a file an input names: a machine file's mapping, a run's rules) or cannot be written
  (/proc, a missing directory, a directory, a full device, an empty name), an output directory
  where one of the files a command writes there (a report's ``index.html``, its plots) is a
  directory or a link to an input, and a file output inside a directory output (``--json`` into
  ``--export-drampower``'s), through `memtint` commands end to end: every input must keep its
  bytes, type and inode, and every output its own content;
- ``rt``: mutated real-time task sets (`memtint rt`): a task's key must come with its line in the
  file (``rt.toml:12: ... tasks[1].period``), a missing table with the file;
- ``machine``: mutated machine files (the two-node tiering preset's) that a run file names,
  through `memtint sim`: an error about one of the machine's keys must name the machine file
  (``m.toml:29: ... links.latency_ns[0][1]``), as it names the run file's;
- ``rules``: mutated HVR rules files (`memtint advise --rules`, `mine-rules --rules`) through their
  parsing and a decision on every class vector of 1-8 programs;
- ``traces``: mutated text traces and raw binary bytes through `trace-stats` and `convert`, and
  profile parameters as users write them (``stream:reads_pki=2:writes_pki=1``): the error names
  the file and line or the parameters, and echoes no raw byte (a control character or U+FFFD);
- ``tiering``: `memtint run --tier-policy` and `memtint numa-probe` with random policies, weights,
  bandwidths, nodes and limits, on a fake two- or three-node kernel (`MEMTINT_NUMA_FAKE`), some
  cases with one of its kernel files corrupted: every value refused must be named (a kernel file
  by its path), and every sysfs and procfs file the run may change must be as it was afterwards,
  whatever the outcome;
- ``cache``: a damaged entry of the alone-run cache (mutated bytes, or JSON of another shape)
  under `memtint compare`: the comparison must be the one a clean cache gives;
- ``store``: a sweep result store with its manifest hand-edited (mutated bytes, a batch listed
  twice or pointing elsewhere, other shapes), a batch damaged, or a batch edited by another tool
  (valid Parquet with a column's cells null, empty or at an edge; an entry removed by hand and its
  runs stored again, some failed), under `memtint report`: a report, with no run counted twice,
  or one error naming the manifest or the batch.

Every case must end in a result or in one error line that names the file (and line, as FILE:LINE:),
the key or the option at fault: never an internal error, a traceback or a hang.

    python tests/fuzz_cli.py --cases 2000 --seed 1      (per class; make fuzz runs it, tests a slice)
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import re
import signal
import shutil
import sys
import tempfile
import time
from typing import Callable

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SEED_FILES = [
    'machine = "i7-860"\nprograms = ["stream", "light"]\ninstructions = 2000\nwarmup = 1000\nseed = 3\n'
    '[os]\npolicy = "bpm"\ncolour_split = "strided"\n',
    'machine = "i7-860"\nprograms = ["stream", "random"]\ninstructions = 2000\n'
    '[sampling]\nunit = 100\nwarming = 50\nperiod = 400\nfunctional = 100\nmin_units = 3\ntarget_error = 0.2\n',
    'machine = "i7-860"\nprograms = ["stream"]\ninstructions = 4000\n'
    '[sampling]\nmode = "phases"\nunit = 100\nwarming = 50\nperiod = 400\nclusters = 3\nwarm_prefetchers = true\n',
    # Runs of two periods and no room in them, and phases of one unit each: intervals that must
    # come out bounded or unbounded (`± ?`), never a crash in the tables.
    'machine = "i7-860"\nprograms = ["stream", "light"]\ninstructions = 300\n[sampling]\nunit = 100\nwarming = 50\n',
    'machine = "i7-860"\nprograms = ["random"]\ninstructions = 800\n'
    '[sampling]\nmode = "phases"\nunit = 100\nwarming = 50\nperiod = 400\nmin_units = 1\n',
    # A replayed schedule (another run's `sampling.schedule`, under another policy).
    'machine = "i7-860"\nprograms = ["stream", "random"]\ninstructions = 2000\n[os]\npolicy = "bpm"\n'
    '[sampling]\nunit = 100\nwarming = 50\nperiod = 400\n[sampling.schedule]\n'
    'at = [[101, 1178, 1850, 3101, 3465, 4218], [101, 400, 945, 1049, 1278, 1571]]\n'
    'unit = [[100, 772, 0, 0, 0, 0], [100, 0, 100, 100, 100, 100]]\n'
    'weight = [[400, 1450, 0, 0, 0, 0], [400, 0, 300, 400, 400, 400]]\n',
    'machine = "ddr4-2400"\nprograms = ["copy"]\ninstructions = 1000\ncheck = true\n'
    '[overrides.controller]\nwrite_handling = "ramulator"\nread_queue = 8\n',
    'machine = "i7-860"\ninstructions = 1000\n[[processes]]\nname = "p"\nthreads = ["light", "stream"]\n'
    'affinity = [0, 1]\n[os]\npolicy = "buddy"\n[os.sched]\nload_balance = false\n',
    'machine = "tiering-2to1"\nprograms = ["stream", "light"]\ninstructions = 1000\nat_end = "wait"\n'
    '[os]\npolicy = "bw-interleave"\n',
    'machine = "opteron-6128"\nprograms = ["stream", "light"]\ninstructions = 1000\n'
    '[os]\npolicy = "tintmalloc"\n[[os.tintmalloc.threads]]\nnode = 1\nbanks = [0, 1]\nllc = [0, 1, 2]\n'
    '[[os.tintmalloc.threads]]\nbanks = [2]\n',
    'machine = "opteron-6128"\nprograms = ["random", "light"]\ninstructions = 1000\n'
    '[os]\npolicy = "camc"\ncolours = [[0], [8]]\n[os.camc]\ncolours_per_task = 2\n',
    'machine = "tiering-2to1"\ninstructions = 1000\n[[processes]]\nthreads = ["stream", "stream"]\n'
    '[os]\npolicy = "bw-local"\nmigration = "bw-migration"\n[os.numa_scan]\nperiod_ns = 100000.0\nscan_mb = 8.0\n'
    '[os.bw-migration]\nmax_net_pages = 4\n',
    'machine = "tiering-2to1"\ninstructions = 1000\n[[processes]]\nthreads = ["hotset:hot_bytes=1048576", "hotset"]\n'
    '[os]\npolicy = "local"\nmigration = "damon"\nnode_memory_mb = [8, 0]\n[os.damon]\nsample_ns = 2000.0\n'
    'max_regions = 40\n',
    'machine = "tiering-2to1"\ninstructions = 1000\n[[processes]]\nthreads = ["hotset", "random"]\n'
    '[os]\npolicy = "local"\nmigration = "memory-tiering"\nnode_memory_mb = [4]\n[os.memory-tiering]\n'
    'free_pct = 10.0\n[os.colloid]\nmax_pages = 3\n',
    'machine = "i7-860"\ninstructions = 2000\n[[processes]]\nthreads = ["phases:stream@500+light"]\nat_end = "exit"\n'
    '[[processes]]\nthreads = ["random"]\narrive_ns = 1000.0\n[os]\npolicy = "bpm"\ndynamic = "dynamic-bpm"\n'
    'memory_mb = 16\noverflow = "swap"\n[os.hot_pages]\nenabled = true\nwindow_ns = 2000.0\nnhp_ns = 500.0\n'
    'ticks = 20\ntick_ns = 50.0\nwalk_ns_per_page = 1000.0\ncharge_walks = true\n',
    'machine = "i7-860-bpm-plus"\ninstructions = 2000\nprograms = ["stream", "light", "light"]\n[os]\n'
    'policy = "bpm-plus"\ndynamic = "dynamic-bpm-plus"\n[os.dynamic-bpm-plus]\nepoch_ns = 2000.0\n'
    '[os.recolour]\npages_per_ms = 50.0\nperiod_ns = 1000.0\n',
    'machine = "i7-860-bpm-plus"\ninstructions = 2000\nprograms = ["stream", "light", "stream", "light"]\n[os]\n'
    'policy = "channel-only"\ndynamic = "dynamic-channel-only"\n[os.dynamic-channel-only]\nepoch_ns = 2000.0\n'
    'uf_threshold = 0.5\n[os.recolour]\nmode = "lazy"\n',
    'machine = "opteron-6128"\ninstructions = 2000\nat_end = "wait"\nbarrier_every = 500\n[[processes]]\n'
    'threads = ["stream", "light"]\nbarrier_every = 300\n[[processes]]\nthreads = ["random"]\n',
]

FRAGMENTS = ['"', "'", "[", "]", "{", "}", "=", "\n", "\x00", "\x1b[2J", "\r", "\xff", "-1", "1.5", "99999999999999999999",
             "true", "nan", "inf", '"lots"', "[1, 2]", "{x = 1}", "#", "\\", "\u00e9", "[os]", "policy = 5"]

#: What naming the place looks like: the file, or a key (``os.colours``, ``processes[0].threads[1]``).
NAMED = re.compile(r"run\.toml|invalid configuration: \S+|unknown [a-z ]+ '|^[a-z_]+(\[\d+\])?(\.[a-z_]+(\[\d+\])?)*: ")

#: Longest a case may take, seconds (a hang otherwise).
CASE_LIMIT = 20


def mutate(rng: random.Random, text: str) -> bytes:
    chars = list(text)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(5)
        i = rng.randrange(len(chars) + 1)
        if op == 0:
            chars[i:i] = list(rng.choice(FRAGMENTS))
        elif op == 1 and chars:
            del chars[i:i + rng.randint(1, 12)]
        elif op == 2 and chars:
            chars = chars[:i]
        elif op == 3:
            # Replace a value after an '=' with a hostile one.
            lines = "".join(chars).split("\n")
            k = rng.randrange(len(lines))
            if "=" in lines[k]:
                lines[k] = lines[k].split("=", 1)[0] + "= " + rng.choice(FRAGMENTS[13:])
            chars = list("\n".join(lines))
        else:
            lines = "".join(chars).split("\n")
            k = rng.randrange(len(lines))
            lines.insert(k, lines[rng.randrange(len(lines))])
            chars = list("\n".join(lines))
    data = "".join(chars).encode("utf-8", "surrogatepass")
    if rng.random() < 0.05:
        data += bytes([rng.randrange(128, 256)])
    return data


RUST_TYPE = re.compile(r"expected (?:[ui](?:8|16|32|64|128|size)\b|f32|f64|struct \w|enum \w|Option<|Vec<|a sequence|a map\b)"
                       r"|invalid type: (?:sequence|map|unit value|Option value),")
LONG_NUMBER = re.compile(r"\d(?:,?\d){30}")  # 31 digits, grouped or not


class Hang(Exception):
    pass


def _outcome(error: BaseException, named: re.Pattern[str] = NAMED) -> tuple[str, str]:
    text = str(error)
    # A control character or a replacement character is an input's raw bytes echoed to the terminal.
    if "\n" in text.strip() or any((ord(c) < 32 and c != "\t") or ord(c) == 0x7f or c == "\ufffd" for c in text.strip()):
        return "unnamed", f"not one clean line: {text!r}"
    if "internal error" in text:
        return "internal", text
    # A float written out in full (1e300 as 301 digits); the fragments' longest typed value has 23.
    if LONG_NUMBER.search(text):
        return "unnamed", f"a number written out in full: {text[:200]!r}"
    # A place as the TOML parser words it, not as every other error gives it (FILE:LINE: ...).
    if re.search(r"\(at line \d+, column \d+\)", text):
        return "unnamed", f"a line not given as FILE:LINE: {text[:200]!r}"
    # A Rust type's name (serde's "expected u64", "expected struct Spec") means nothing to a user.
    if RUST_TYPE.search(text):
        return "unnamed", f"a Rust type for a value's kind: {text[:200]!r}"
    return ("clean", text) if named.search(text) else ("unnamed", text)


def _capped(spec: dict) -> dict:
    # Input handling is under test, not run length.
    for key, cap in (("instructions", 2000), ("warmup", 2000)):
        if isinstance(spec.get(key), int):
            spec[key] = min(spec[key], cap)
    return spec


def run_case(path: str) -> tuple[str, str]:
    """("ok" | "clean" | "unnamed" | "internal", message)."""
    from memtint import api
    from memtint.cli import UsageError, load_sim_config

    try:
        api.run_sim_spec(_capped(load_sim_config(path)))
        return "ok", ""
    except (api.MemtintError, UsageError) as error:
        return _outcome(error)
    except Hang:
        raise
    except Exception as error:  # noqa: BLE001 - every other exception is a finding
        return "internal", f"{type(error).__name__}: {error}"


def mutated_file(rng: random.Random, d: str, name: str, seeds: list[str], whole: float = 0.0) -> tuple[str, bytes]:
    """One of ``seeds`` mutated (or, with probability ``whole``, as it is), written to ``d/name``."""
    path = os.path.join(d, name)
    seed = seeds[0] if len(seeds) == 1 else rng.choice(seeds)
    data = mutate(rng, seed) if not whole or rng.random() >= whole else seed.encode()
    with open(path, "wb") as f:
        f.write(data)
    return path, data


def sim_case(rng: random.Random, d: str) -> tuple[bytes, Callable[[], tuple[str, str]]]:
    path, data = mutated_file(rng, d, "run.toml", SEED_FILES)
    return data, lambda: run_case(path)


# --- combinations of registered components ---------------------------------------------------

def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "nan" if value != value else ("inf" if value == float("inf") else "-inf" if value == float("-inf")
                                             else repr(value))
    if isinstance(value, (int, str)):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(type(value))


def to_toml(spec: dict) -> str:
    """A run file from a nested dict: scalars first, then one [table] per dict, arrays of tables
    as [[name]] (enough for run files; the fuzzer's own writer, no dependency)."""
    def table(prefix: str, d: dict) -> list[str]:
        lines = [f"{json.dumps(k)} = {_toml_value(v)}" for k, v in d.items()
                 if not isinstance(v, dict) and not (isinstance(v, list) and v and all(isinstance(x, dict) for x in v))]
        for k, v in d.items():
            name = f"{prefix}.{json.dumps(k)}" if prefix else json.dumps(k)
            if isinstance(v, dict):
                lines += ["", f"[{name}]"] + table(name, v)
            elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
                for x in v:
                    lines += ["", f"[[{name}]]"] + table(name, x)
        return lines
    return "\n".join(table("", spec)) + "\n"


@functools.lru_cache(maxsize=1)
def _registries() -> dict:
    from memtint import api

    p = api.presets()
    return {
        "machine": [m["name"] for m in p["machines"]],
        "cores": {m["name"]: m["cores"] for m in p["machines"]},
        "policy": list(p["placement_policies"]),
        "dynamic": [d["name"] for d in p["dynamic_policy_info"]],
        "migration": [m["name"] for m in p["migration_policy_info"]],
        "resctrl": [r["name"] for r in p["resctrl_info"]],
        "scheduler": list(p["schedulers"]),
        "row_policy": list(p["row_policies"]),
        "refresh": list(p["refresh"]),
        "prefetcher": list(p["prefetchers"]),
        "profile": list(p["profiles"]) + ["stream:reads_pki=40,writes_pki=20", "random:footprint_bytes=65536,reads_pki=30",
                                          "phases:stream@300+light", "hotset:hot_bytes=65536"],
        # Every component's parameters with their defaults, by the table they go in.
        "os_params": {i["name"]: i["params"] for key in ("placement_policy_info", "dynamic_policy_info",
                                                         "migration_policy_info", "resctrl_info") for i in p[key]},
        "controller_params": {i["name"]: i["params"] for key in ("scheduler_info", "row_policy_info", "refresh_info")
                              for i in p[key]},
        "trace": sorted(os.path.join(ROOT, "workloads", "traces", f) for f in os.listdir(os.path.join(ROOT, "workloads", "traces"))
                        if f.endswith(".mtt.gz"))[:3],
    }


def _boundary(rng: random.Random, value: object) -> object:
    """A value of the same kind near an edge: what a user's typo or a script's arithmetic gives."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return rng.choice([0, 1, 2, -1, value + 1, max(value - 1, 0), value * 2, value // 2, 3, 7, 64, 2**31, 2**63 - 1])
    if isinstance(value, float):
        return rng.choice([0.0, -0.0, 1e-9, 0.5, 1.0, value * 10, value / 10, 1e300, -value])
    if isinstance(value, list):
        if not value:
            return value
        op = rng.randrange(3)
        return [] if op == 0 else value[:-1] if op == 1 else value + [value[-1]]
    if isinstance(value, str):
        # An empty or blank name was taken as a name: the statistics then named "" (a process, a task, a node).
        return rng.choice(["", " ", value + value, value + "\t"])
    return value


#: Machine settings whose values change the colours a policy finds (channels, ranks, LLC sets),
#: the cores threads bind to, and the queues and MSHRs requests wait in: (section, key, values).
MACHINE_EDGES = [
    ("dram", "channels", [1, 2, 4, 8]), ("dram", "ranks", [1, 2, 4, 8]), ("dram", "density_gbit", [1, 2, 4, 8, 16]),
    ("cpu", "cores", [1, 2, 3, 4, 8]), ("cpu", "rob_size", [1, 4, 128]), ("cpu", "mshrs", [1, 2, 16]),
    ("cache", "llc.size_bytes", [65536, 1048576, 8388608, 33554432]), ("cache", "llc.ways", [1, 2, 16, 32]),
    ("cache", "llc.mshrs", [1, 16, 64]), ("controller", "read_queue", [1, 2, 64]),
    ("controller", "write_queue", [1, 2, 64]), ("controller", "write_handling", ["batched", "ramulator"]),
]


def combos_spec(rng: random.Random) -> dict:
    """A run file in valid form whose components are drawn from the registries: any machine with
    any placement policy, dynamic policy, migration, resctrl scheme, scheduler, row policy,
    refresh and prefetcher. Most combinations run or are refused by a rule; none may crash."""
    r = _registries()
    spec: dict = {"machine": rng.choice(r["machine"]), "instructions": rng.choice([1, 100, 1500, 3000]),
                  "warmup": rng.choice([0, 0, 500, 2000]), "seed": rng.randrange(1, 100)}
    cores = r["cores"][spec["machine"]]
    n = rng.choice([1, 2, cores, cores, cores + 1])  # one more than the machine's cores is refused
    if rng.random() < 0.8:
        spec["programs"] = [rng.choice(r["profile"] + r["trace"]) for _ in range(n)]
    else:
        spec["processes"] = []
        for _ in range(rng.randint(1, 3)):
            process: dict = {"threads": [rng.choice(r["profile"]) for _ in range(rng.randint(1, 3))]}
            if rng.random() < 0.2:  # a thread that holds its core waiting needs one of its own
                process["at_end"] = rng.choice(["continue", "wait", "exit"])
            if rng.random() < 0.2:
                process["affinity"] = sorted(rng.sample(range(cores), rng.randint(1, min(2, cores))))
            spec["processes"].append(process)
    os_table: dict = {"policy": rng.choice(r["policy"])}
    for key, p in (("dynamic", 0.2), ("migration", 0.2), ("resctrl", 0.2)):
        if rng.random() < p:
            os_table[key] = [rng.choice(r[key])] if key == "resctrl" else rng.choice(r[key])
    if rng.random() < 0.1:
        os_table["colour_split"] = rng.choice(["strided", "contiguous"])
    if rng.random() < 0.1:
        os_table["memory_mb"] = rng.choice([1, 4, 64])
        os_table["overflow"] = rng.choice(["swap", "borrow"])
    spec["os"] = os_table
    controller: dict = {}
    for key, p in (("scheduler", 0.4), ("row_policy", 0.3), ("refresh", 0.3)):
        if rng.random() < p:
            controller[key] = rng.choice(r[key])

    def params(defaults: dict) -> dict:  # a component's table, some values at an edge
        return {k: (_boundary(rng, v) if rng.random() < 0.4 else v) for k, v in defaults.items() if v is not None}

    for name in [os_table["policy"], os_table.get("dynamic"), os_table.get("migration"), *os_table.get("resctrl", [])]:
        if name in r["os_params"] and r["os_params"][name] and rng.random() < 0.4:
            os_table[name] = params(r["os_params"][name])
    for name in [controller.get("scheduler"), controller.get("row_policy"), controller.get("refresh")]:
        if name in r["controller_params"] and r["controller_params"][name] and rng.random() < 0.4:
            controller[name] = params(r["controller_params"][name])
    overrides: dict = {}
    if controller:
        overrides["controller"] = controller
    if rng.random() < 0.3:
        overrides["cache"] = {"prefetcher": {"kind": rng.choice(r["prefetcher"])}}
    for _ in range(rng.choice([0, 0, 1, 2])):  # the machine reshaped under the policy's colours
        section, key, values = rng.choice(MACHINE_EDGES)
        overrides.setdefault(section, {})
        target = overrides[section]
        for part in key.split(".")[:-1]:
            target = target.setdefault(part, {})
        target[key.split(".")[-1]] = rng.choice(values)
    if overrides:
        spec["overrides"] = overrides
    if rng.random() < 0.2:
        sampling: dict = {"unit": rng.choice([100, 300]), "warming": rng.choice([0, 50, 200]),
                          "period": rng.choice([300, 500, 1500])}
        for key, values in (("mode", ["periodic", "phases"]), ("functional", [0, 100, 1000]),
                            ("target_error", [0.05, 0.5]), ("min_units", [1, 2, 30]), ("clusters", [1, 3]),
                            ("warm_prefetchers", [True]), ("matched", [False])):
            if rng.random() < 0.25:
                sampling[key] = rng.choice(values)
        spec["sampling"] = sampling
    if rng.random() < 0.1:
        spec["at_end"] = rng.choice(["continue", "wait", "exit"])
    if rng.random() < 0.1:
        spec["check"] = True
    return spec


def _leaves(d: object, path: tuple = ()) -> list[tuple]:
    if isinstance(d, dict):
        return [leaf for k, v in d.items() for leaf in _leaves(v, path + (k,))]
    if isinstance(d, list) and d and all(isinstance(x, dict) for x in d):
        return [leaf for i, v in enumerate(d) for leaf in _leaves(v, path + (i,))]
    return [path]


def combos_case(rng: random.Random, d: str) -> tuple[bytes, Callable[[], tuple[str, str]]]:
    spec = combos_spec(rng)
    for _ in range(rng.choice([0, 0, 1, 2])):  # then a value or two at an edge, or a key dropped
        path = rng.choice(_leaves(spec))
        parent = spec
        for k in path[:-1]:
            parent = parent[k]
        if rng.random() < 0.2 and path[-1] not in ("machine",):
            del parent[path[-1]]
        else:
            parent[path[-1]] = _boundary(rng, parent[path[-1]])
    path = os.path.join(d, "run.toml")
    data = to_toml(spec).encode()
    with open(path, "wb") as f:
        f.write(data)
    return data, lambda: run_case(path)


# --- overrides -------------------------------------------------------------------------------

#: Settings of the machine table (sections and keys as in machine TOMLs), plus a few that do not exist.
OVERRIDE_KEYS = [
    "controller.read_queue", "controller.write_queue", "controller.frontend_latency", "controller.write_high_watermark",
    "controller.write_low_watermark", "controller.write_idle_drain_min", "controller.tcm.quantum",
    "controller.write_handling", "controller.refresh_holds", "controller.scheduler", "controller.row_policy", "cache.llc.size_bytes",
    "cache.llc.ways", "cache.llc.latency", "cache.llc.mshrs", "cache.prefetcher.kind", "cache.prefetcher.degree",
    "cpu.cores", "cpu.frequency_ghz", "cpu.rob", "dram.channels", "dram.ranks", "dram.density_gbit",
    "dram.device_width", "dram.device", "dram.mapping", "os.colour_split", "nosuch.key", "controller.nosuch",
    # A key below another setting's value (given first, or in the run): named as the user wrote it.
    "os.policy", "os.policy.x", "os.colour_split.x", "controller.read_queue.x", "cache.llc.ways.x.y",
]
EXTREME_VALUES = ["2", "16", "64", "0.8", "0.2", '"fr-fcfs"', '"none"', "nan", "inf", "-inf", "1e400", "-1e400", "0", "-1", "1", "1099511627776", "18446744073709551616",
                  "1e20", "0.5", "-0.5", "true", '"x"', "[1,2]", "{}", "null", "x", "", "99999999999999999999999"]


def overrides_case(rng: random.Random, d: str) -> tuple[bytes, Callable[[], tuple[str, str]]]:
    settings = [f"{rng.choice(OVERRIDE_KEYS)}={rng.choice(EXTREME_VALUES)}" for _ in range(rng.randint(1, 3))]
    if rng.random() < 0.15:  # a key below the value a setting before it gave
        settings.append(f"{settings[-1].split('=', 1)[0]}.{rng.choice(['x', 'x.y'])}={rng.choice(EXTREME_VALUES)}")
    machine = rng.choice(["i7-860", "ddr4-2400", "ccps-4c-64b"])

    def run() -> tuple[str, str]:
        import argparse

        from memtint import api
        from memtint.cli import UsageError, _os_settings, _overrides, _setting

        try:
            parsed = [_setting(text) for text in settings]
            spec = api.build_sim_spec(machine, ["light", "stream"], instructions=2000, overrides=_overrides(parsed),
                                      os_options=_os_settings(parsed))
            api.run_sim_spec(spec)
            return "ok", ""
        except (api.MemtintError, UsageError, argparse.ArgumentTypeError) as error:
            given = str(error).split(":", 1)[0]
            if given.startswith("--set ") and given[len("--set "):].split("=", 1)[0] not in \
                    {text.split("=", 1)[0] for text in settings}:  # a key as the user did not write it
                return "unnamed", f"{error} (given: {settings})"
            keys = {text.split("=", 1)[0].rsplit(".", 1)[-1] for text in settings}
            named = re.compile("|".join(map(re.escape, keys)) + r"|" + NAMED.pattern)
            return _outcome(error, named)
        except Hang:
            raise
        except Exception as error:  # noqa: BLE001
            return "internal", f"{type(error).__name__}: {error}"

    return " ".join([machine, *settings]).encode(), run


# --- sweep specifications --------------------------------------------------------------------

SWEEP_FILES = [
    'name = "s"\nmachines = ["i7-860"]\npolicies = ["buddy", "bpm"]\ninstructions = 1000\nwarmup = 0\nseeds = [1, 2]\n'
    'mixes = [["light", "stream"], {random = ["light", "copy"], size = 2, count = 3, seed = 4}]\n',
    'machines = "i7-860"\npolicies = "cache-only"\ninstructions = [1000, 2000]\n'
    '[[mixes]]\nclasses = [{from = ["stream", "random"], n = 1}, {from = ["light"], n = 1}]\ncount = 2\n',
    'instructions = 1000\nseeds = 3\n[[run]]\nmachine = "i7-860"\npolicy = "bpm"\nprograms = ["light", "light"]\n'
    '[run.os]\nstrict = false\n',
    'machines = ["i7-860"]\npolicies = ["buddy"]\ninstructions = 1000\nmixes = [["light", "stream"]]\n'
    'sampling = { unit = 100, warming = 100, period = 400, target_error = 0.1 }\n',
    'machines = ["i7-860"]\npolicies = ["buddy", "cache-only"]\ninstructions = 1000\nmixes = [["light", "stream"]]\n'
    'sampling = { unit = 100, warming = 100, period = 400, matched = true }\n',
    'machines = ["i7-860"]\npolicies = ["buddy", "bpm"]\ninstructions = 4000\nmixes = [["stream"]]\n'
    'sampling = { mode = "phases", unit = 100, warming = 100, period = 400, clusters = 2 }\n',
]
SWEEP_NAMED = re.compile(r"s\.toml|^[a-z_]+(\[\d+\])?(\.[a-z_]+(\[\d+\])?)*: ")


def sweep_case(rng: random.Random, d: str) -> tuple[bytes, Callable[[], tuple[str, str]]]:
    path, data = mutated_file(rng, d, "s.toml", SWEEP_FILES)

    def run() -> tuple[str, str]:
        from memtint import api
        from memtint.sweep import load_spec

        try:
            load_spec(path)
            return "ok", ""
        except api.MemtintError as error:
            return _outcome(error, SWEEP_NAMED)
        except Hang:
            raise
        except Exception as error:  # noqa: BLE001
            return "internal", f"{type(error).__name__}: {error}"

    return data, run


RULES_NAMED = re.compile(r"r\.toml")


def rules_case(rng: random.Random, d: str) -> tuple[bytes, Callable[[], tuple[str, str]]]:
    from memtint import hvr_rules

    with open(hvr_rules.PAPER_RULES) as f:
        paper = f.read()
    path, data = mutated_file(rng, d, "r.toml", [paper])

    def run() -> tuple[str, str]:
        from memtint import api

        try:
            rules = hvr_rules.load(path)
        except api.MemtintError as error:
            return _outcome(error, RULES_NAMED)
        except Hang:
            raise
        except Exception as error:  # noqa: BLE001
            return "internal", f"{type(error).__name__}: {error}"
        try:  # whatever parsed decides every class vector without failing
            for n in (1, 4, 8):
                for _ in range(8):
                    classes = [rng.choice(hvr_rules.CLASSES) for _ in range(n)]
                    advice = hvr_rules.decide(rules, classes, multithreaded=rng.random() < 0.2)
                    hvr_rules.os_options(advice, rng.choice([2, 4, 8]))
        except Exception as error:  # noqa: BLE001
            return "internal", f"deciding: {type(error).__name__}: {error}"
        return "ok", ""

    return data, run


MIX_NAMED = re.compile(r"m\.toml")


def mixes_case(rng: random.Random, d: str) -> tuple[bytes, Callable[[], tuple[str, str]]]:
    """A mix file (configs/mixes' format) mutated: read as `--mix FILE` and a sweep's preset read it."""
    seeds = [open(os.path.join(ROOT, "configs", "mixes", name)).read()
             for name in sorted(os.listdir(os.path.join(ROOT, "configs", "mixes")))]
    path, data = mutated_file(rng, d, "m.toml", seeds)

    def run() -> tuple[str, str]:
        from memtint import api
        from memtint.sweep import SweepSpecError, parse_spec

        try:
            programs = api.mix_programs(path)
            parse_spec({"machines": ["i7-860"], "policies": ["buddy"], "instructions": 1000,
                        "mixes": [{"preset": "m.toml"}]}, base=d)
        except (api.MemtintError, SweepSpecError) as error:
            return _outcome(error, MIX_NAMED)
        except Hang:
            raise
        except Exception as error:  # noqa: BLE001
            return "internal", f"{type(error).__name__}: {error}"
        if not programs or not all(isinstance(p, str) and p for p in programs):
            return "internal", f"accepted as no programs: {programs!r}"
        return "ok", ""

    return data, run


def _main_quiet(argv: list[str]) -> tuple[int, str]:
    """Run `memtint ARGV` in process: (exit code, its standard error)."""
    import contextlib
    import io

    from memtint.cli import main

    err = io.StringIO()
    try:
        with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink), contextlib.redirect_stderr(err):
            code = main(argv)
    except SystemExit as exit_:  # argparse refusing an option's form
        code = exit_.code
    return code, err.getvalue().strip()


def _error_outcome(code: int, text: str, named: re.Pattern[str]) -> tuple[str, str]:
    """A finished command's outcome: ok, or its one error line judged by `named`."""
    if code == 0:
        return "ok", ""
    lines = [line for line in text.splitlines() if line.startswith("memtint: error: ")]
    if len(lines) != 1:
        return "unnamed", f"exit {code} without one error line: {text!r}"
    error = lines[0][len("memtint: error: "):]
    misplaced = _misplaced_key(error)
    if misplaced:
        return "unnamed", misplaced
    return _outcome(Exception(error), named)


def _misplaced_key(error: str) -> str | None:
    """An unknown key named at a line of its file that does not hold it (a later [[tasks]]
    table's key was named at the first one's line)."""
    m = re.match(r"(\S+\.toml):(\d+): .*unknown (?:field `([^`]+)`|key\(s\) '([^',]+)|key)", error)
    key = m and (m.group(3) or m.group(4) or (re.search(r"([A-Za-z_][\w-]*): unknown key", error) or [None, None])[1])
    if not m or not key:
        return None
    try:
        with open(m.group(1), encoding="utf-8") as f:
            line = f.read().splitlines()[int(m.group(2)) - 1]
    except (OSError, UnicodeDecodeError, IndexError):
        return None
    return None if key in line else f"{m.group(1)}:{m.group(2)} is not the line of '{key}' ({line!r}): {error}"


# --- real-time task sets ----------------------------------------------------------------------

RT_FILES = [
    'machine = "ddr4-2400-8r"\nschedule = "colored"\n[[tasks]]\nname = "a"\nperiod = 16\nwcet = 4\ncompute = 3.0\n'
    'loads = 50\n[[tasks]]\nname = "b"\nperiod = 32\nwcet = 12\ncompute = 10.0\nloads = 100\npattern = "stream"\n',
    'machine = "ddr4-2400-8r"\nschedule = "crs"\nrefresh = "scheme"\n[[tasks]]\nname = "a"\nperiod = 20\nwcet = 4\n'
    'compute = 3.2\nloads = 40\n[[tasks]]\nname = "b"\nperiod = 40\nwcet = 4\ncompute = 3.0\nloads = 40\n'
    '[[servers]]\ntasks = ["a"]\nbudget = 5\nperiod = 10\n[[servers]]\ntasks = ["b"]\nbudget = 5\nperiod = 20\n',
    'machine = "ddr4-2400"\nschedule = "edf"\nrefresh = "fgr2"\nunit_us = 500.0\n[[tasks]]\nname = "a"\nperiod = 10\n'
    'wcet = 2\ncompute = 1.0\nloads = 20\nfootprint_kb = 64\n',
    # Table 4.4's set under colored: lms is a copy task (two instances), so its copy keys count.
    'machine = "ddr4-2400-8r"\nschedule = "colored"\nhorizon = 160\ncopy_gbps = 10.0\n[[tasks]]\nname = "lms"\n'
    'period = 20\nwcet = 4\ncompute = 3.2\nloads = 40\ncopy_kb = 32\n[[tasks]]\nname = "compress"\nperiod = 32\n'
    'wcet = 6\ncompute = 5.0\nloads = 40\npattern = "stream"\n[[tasks]]\nname = "cnt"\nperiod = 32\nwcet = 8\n'
    'compute = 6.5\nloads = 60\n[[tasks]]\nname = "st"\nperiod = 40\nwcet = 8\ncompute = 6.5\nloads = 60\n'
    'pattern = "stream"\n[[tasks]]\nname = "matmult"\nperiod = 80\nwcet = 10\ncompute = 7.5\nloads = 80\n'
    'footprint_kb = 512\n',
]

#: An rt error names the file and line, or the file (a missing table), or an option.
RT_NAMED = re.compile(r"rt\.toml(:\d+)?: |^--[a-z]")


def rt_case(rng: random.Random, d: str) -> tuple[bytes, Callable[[], tuple[str, str]]]:
    path, data = mutated_file(rng, d, "rt.toml", RT_FILES, whole=0.1)  # some whole: they must run

    def run() -> tuple[str, str]:
        code, text = _main_quiet(["rt", path, "--json", os.path.join(d, "rt.json")])
        outcome = _error_outcome(code, text, RT_NAMED)
        if outcome[0] == "unnamed" and "tasks[" in outcome[1]:
            return "unnamed", outcome[1]  # a task's key without its line: the class this fuzzes
        return outcome

    return data, run


# --- machine files ---------------------------------------------------------------------------

#: A machine error names the machine file (with its line where it has the key), or the run file
#: for a key of its own; a key named without a file is not enough.
MACHINE_NAMED = re.compile(r"m\.toml(:\d+)?: |run\.toml(:\d+)?: ")


def machine_case(rng: random.Random, d: str) -> tuple[bytes, Callable[[], tuple[str, str]]]:
    with open(os.path.join(ROOT, "configs", "machines", "tiering-2to1.toml"), encoding="utf-8") as f:
        preset = f.read()
    _, data = mutated_file(rng, d, "m.toml", [preset], whole=0.1)
    run_file = os.path.join(d, "run.toml")
    with open(run_file, "w", encoding="utf-8") as f:
        f.write('machine = "m.toml"\nprograms = ["stream", "light"]\ninstructions = 1000\nat_end = "wait"\n'
                '[os]\npolicy = "local"\n')
    return data, lambda: _error_outcome(*_main_quiet(["sim", run_file, "--json", os.path.join(d, "m.json")]), MACHINE_NAMED)


# --- output collisions -----------------------------------------------------------------------

def _snapshot(paths: list[str]) -> list[tuple[str, int, int, bytes]]:
    import stat

    out = []
    for p in paths:
        st = os.lstat(p)
        data = open(p, "rb").read() if stat.S_ISREG(st.st_mode) else b""
        out.append((p, stat.S_IFMT(st.st_mode), st.st_ino, data))
    return out


def outputs_case(rng: random.Random, d: str) -> tuple[bytes, Callable[[], tuple[str, str]]]:
    import shutil

    work = os.path.join(d, "out")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    trace = os.path.join(work, "in.txt")
    with open(trace, "w") as f:
        f.write("10 0x1000\n20 0x2000 0x3000\n5 0x4000\n")
    dram_trace = os.path.join(work, "d.trace")
    with open(dram_trace, "w") as f:
        f.write("0x1000 R\n0x2000 W\n")
    config = os.path.join(work, "run.toml")
    with open(config, "w") as f:
        f.write(f'machine = "i7-860"\nprograms = ["{trace}"]\ninstructions = 1000\n')
    os.link(trace, os.path.join(work, "hard.txt"))
    os.symlink(dram_trace, os.path.join(work, "soft.trace"))
    os.mkdir(os.path.join(work, "dir"))
    # Files an input names, not given on the command line: a machine file's mapping, a run's rules.
    configs = os.path.join(ROOT, "configs")
    mapping = os.path.join(work, "m.mapping.toml")
    shutil.copyfile(os.path.join(configs, "mappings", "i7-860.toml"), mapping)
    machine = os.path.join(work, "m.toml")
    with open(os.path.join(configs, "machines", "i7-860.toml")) as f:
        text = f.read()
    with open(machine, "w") as f:
        f.write(re.sub(r'(?m)^mapping = .*$', 'mapping = "m.mapping.toml"', text))
    rules = os.path.join(work, "rules.toml")
    with open(rules, "w") as f:
        f.write('default = "a-vp"\n[[partition]]\npolicy = "a-vp"\n')
    online = os.path.join(work, "online.toml")
    with open(online, "w") as f:
        f.write('machine = "i7-860"\nprograms = ["light"]\ninstructions = 1000\n[os]\npolicy = "hvr"\n'
                'dynamic = "hvr-online"\n[os.hvr-online]\nrules = "rules.toml"\n')
    # A task set naming the machine file, relative to itself or not: rt reads it and its mapping.
    tasks = os.path.join(work, "rt.toml")
    with open(tasks, "w") as f:
        f.write(f'machine = "{rng.choice(["m.toml", machine])}"\nhorizon = 20\n[[tasks]]\nname = "a"\nperiod = 10\nwcet = 2\ncompute = 1\n'
                'loads = 10\n')
    # A sweep reading the trace: its store and its report (OUT/report) go where --out says.
    sweep_spec = os.path.join(work, "sweep.toml")
    with open(sweep_spec, "w") as f:
        f.write(f'machines = ["i7-860"]\npolicies = ["buddy"]\ninstructions = 1000\nwarmup = 0\nmixes = [["{trace}", "light"]]\n')
    # A file reached through the kernel's fd links (as /dev/stdout reaches a redirected stdout):
    # an output there must not be renamed over it.
    kept = os.path.join(work, "kept.txt")
    with open(kept, "w") as f:
        f.write("kept\n")
    kept_fd = os.open(kept, os.O_RDONLY)  # closed by run(), which every built case goes through
    places = [trace, dram_trace, config, os.path.join(work, "hard.txt"), os.path.join(work, "soft.trace"),
              os.path.join(work, "dir"), os.path.join(work, "new.json"), os.path.join(work, "nodir", "x.json"),
              "/proc/x", "/dev/null", os.path.join(work, "dir", "..", "in.txt"), mapping, rules, machine, tasks, sweep_spec,
              f"/proc/self/fd/{kept_fd}", f"/dev/fd/{kept_fd}", "-", ""] + (["/dev/full"] if os.path.exists("/dev/full") else [])
    a, b = rng.choice(places), rng.choice(places)
    soft = os.path.join(work, "soft.trace")
    commands = [  # each command with the inputs it reads (writing over another file is what was asked)
        (["convert", trace, a], [trace]),
        (["convert", "--to", "ramulator", trace, a], [trace]),
        (["trace-stats", trace, "--json", a], [trace]),
        (["dram", "--machine", "ddr4-2400", "--trace", rng.choice([dram_trace, soft]), "--json", a], [dram_trace]),
        (["sim", config, "--json", a], [config, trace]),
        (["sim", config, "--export-dram", a, "--export-format", rng.choice(["dramsim3", "ramulator"]), "--json", b],
         [config, trace]),
        (["compare", "--machine", "i7-860", "--mix", f"{trace},light", "--instructions", "1000", "--warmup", "0",
          "--no-cache", "--json", a, "--csv", b], [trace]),
        (["dram", "--machine", machine, "--generate", "random", "--requests", "50", "--json", a], [machine, mapping]),
        (["sim", online, "--json", a, "--export-dram", b], [online, rules]),
        (["sim", config, "--set", f"os.hvr-online.rules={rules}", "--json", a], [config, trace, rules]),
        (["rt", tasks, "--json", a], [tasks, machine, mapping]),
        # A trace inside a phases: program is read like one given alone.
        (["compare", "--machine", "i7-860", "--mix", f"phases:stream@1000+{trace},light", "--instructions", "1000",
          "--warmup", "0", "--no-cache", "--json", a, "--csv", b], [trace]),
        (["trace-stats", f"phases:light@500+{trace}", "--instructions", "1000", "--json", a], [trace]),
        (["dram", "--machine", "ddr4-2400", "--trace", dram_trace, "--export-drampower", a, "--json", b], [dram_trace]),
        (["sweep", sweep_spec, "--out", a, "--jobs", "1"] + (["--no-report"] if rng.random() < 0.2 else []),
         [sweep_spec, trace]),
    ]
    # mine-rules classifies the programs of a store's mixes: the trace the store names is its input.
    # The store outlives the case (work is rebuilt with the same trace at the same path).
    store = os.path.join(d, "mine-store")
    if not os.path.isdir(store):
        spec = os.path.join(d, "mine.toml")
        with open(spec, "w") as f:
            f.write(f'machines = ["i7-860"]\npolicies = ["buddy", "bpm", "a-vp"]\ninstructions = 2000\nwarmup = 0\n'
                    f'mixes = [["{trace}", "light"], ["light", "{trace}"], ["{trace}", "{trace}"], ["light", "light"]]\n')
        code, text = _main_quiet(["sweep", spec, "--out", store, "--jobs", "1", "--no-report"])
        assert code == 0, text
    commands.append((["mine-rules", store, "--out", a, "--json", b, "--classify-instructions", "100000"], [trace]))
    # A report's directory where one of its files is a directory or a link to an input (the store's
    # manifest or batch): refused before anything is written, never renamed over the input. A hard
    # link to a file the report does not read (the trace) is replaced as a name, the file kept.
    from memtint.reports import REPORT_FILES

    manifest = os.path.join(store, "manifest.json")
    batches = [os.path.join(store, "batches", f) for f in sorted(os.listdir(os.path.join(store, "batches")))]
    report_dir = os.path.join(work, "rep")
    os.mkdir(report_dir)
    inside = os.path.join(report_dir, rng.choice(REPORT_FILES))
    kind = rng.choice(["dir", "manifest", "batch", "hard", "none"])
    if kind == "dir":
        os.mkdir(inside)
    elif kind == "hard":
        os.link(trace, inside)
    elif kind != "none":
        os.symlink({"manifest": manifest, "batch": batches[0]}[kind], inside)
    commands.append((["report", store, "--out", report_dir], [manifest, *batches, trace]))
    # An output file inside an output directory the engine fills (--export-drampower's memspec.json):
    # after a run that succeeds, each of the export's files must still be the export's.
    export = os.path.join(work, "exp")
    if rng.random() < 0.5:
        os.mkdir(export)
    commands.append((["dram", "--machine", "ddr4-2400", "--generate", "random", "--requests", "50",
                      "--export-drampower", export, "--json",
                      rng.choice([os.path.join(export, n) for n in ("memspec.json", "config.json", "x.json")] + [b])],
                     []))  # it reads no file: --json over the trace is what was asked
    argv, inputs = rng.choice(commands)

    def exported() -> str:
        """What is wrong with the export's files after a run that wrote them ("" when nothing)."""
        if "--export-drampower" not in argv or argv[argv.index("--export-drampower") + 1] != export:
            return ""
        for name, key in (("memspec.json", "memspec"), ("config.json", "simconfig")):
            try:
                with open(os.path.join(export, name), encoding="utf-8") as f:
                    if key not in json.load(f):
                        return f"{name} holds another output, not the export's {key}"
            except (OSError, ValueError) as error:
                return f"{name}: {error}"
        return ""

    def run() -> tuple[str, str]:
        before = _snapshot([*inputs, kept])
        try:
            code, text = _main_quiet(argv)
        finally:
            os.close(kept_fd)
        after = _snapshot([*inputs, kept])
        if after != before:
            return "internal", f"an input changed: {[x[:3] for x, y in zip(before, after) if x != y]}"
        if code == 0 and exported():
            return "internal", f"an output replaced another: {exported()}"
        return _error_outcome(code, text,
                              re.compile(r"^(OUT|--out|--json|--csv|--export-dram|--export-drampower)[ :]|^" + re.escape(work) + "|in\\.txt|d\\.trace"
                                         "|online\\.toml|rules\\.toml|m\\.mapping|rt\\.toml|kept\\.txt"))

    return " ".join(argv).encode(), run


# --- tier placement on a fake kernel ---------------------------------------------------------

TIER_POLICIES = ["local", "interleave", "weighted-interleave", "bw-interleave", "bw-random", "bw-local",
                 "bw-migration", "damon", "nonsense", ""]
TIER_WEIGHTS = ["auto", "2:1", "1:1:1", "0:1", "256:1", "1", "2:1:1:1", "a:b", "-1:2", "1.5:1", "", ":",
                "99999999999999999999:1", "nan:1"]
TIER_BANDWIDTHS = ["0=20,1=10", "0=20,1=0", "0=20", "0=20,1=10,2=5", "5=1", "0=-3,1=2", "0=inf,1=1", "0=nan,1=1",
                   "x=1", "0=20,0=10", "node0=20,node1=4.5", "", "1e400=1"]
TIER_NODES = ["0,1", "1,0", "0", "0-1", "0-2", "7", "node1", "-1", "1-0", "", "0,0", "99999999999999999999"]
TIER_NUMBERS = ["10", "0", "-1", "1.5", "nan", "inf", "1e400", "x", "", "18446744073709551616"]


def _fake_state(root: str) -> dict[str, bytes]:
    """Every file of the fake's sysfs and procfs (its own call log and configuration left out)."""
    out = {}
    for base in ("sys", "proc"):
        for dirpath, _, files in os.walk(os.path.join(root, base)):
            for f in files:
                p = os.path.join(dirpath, f)
                out[os.path.relpath(p, root)] = open(p, "rb").read()
    return out


def tiering_case(rng: random.Random, d: str) -> tuple[bytes, Callable[[], tuple[str, str]]]:
    import shutil

    from memtint.linux.numa_fake import FakeNuma

    root = os.path.join(d, "fake")
    shutil.rmtree(root, ignore_errors=True)
    nodes = rng.choice([None, {0: {"gbs": 20.0, "cpus": [0, 1]}, 1: {"gbs": 10.0, "cpus": []},
                               2: {"gbs": 4.0, "cpus": []}}])
    FakeNuma.create(root, nodes, weighted_interleave=rng.random() > 0.1, as_root=rng.random() > 0.1,
                    hmat=rng.random() > 0.5, auto_name=rng.choice(["auto", "__auto_type", None]))
    corrupted = ""
    if rng.random() < 0.3:  # a kernel file we do not understand (another ABI, a broken fake)
        corrupted = rng.choice(sorted(_fake_state(root)))
        path = os.path.join(root, corrupted)
        text = open(path, encoding="utf-8").read()
        with open(path, "wb") as f:
            if rng.random() < 0.2:  # a list or number no kernel writes, whose expansion must not run away
                f.write(rng.choice([b"0-4294967295", b"1-0", b"0,99999-19999999999999991", b"18446744073709551616"]))
            else:
                f.write(mutate(rng, text) if text.strip() else rng.choice([b"x", b"\xff\xfe", b"-1", b"0-"]))
    options = {"--weights": TIER_WEIGHTS, "--bandwidths": TIER_BANDWIDTHS, "--nodes": TIER_NODES,
               "--migration-limit": TIER_NUMBERS, "--period": ["0.01", *TIER_NUMBERS]}
    if rng.random() < 0.8:
        argv = ["run", "--tier-policy", rng.choice(TIER_POLICIES)]
        for option in rng.sample(sorted(options), rng.randint(0, 3)):
            argv += [option, rng.choice(options[option])]
        argv += ["--", sys.executable, "-c", "pass"]
    else:
        argv = ["numa-probe", "--size", rng.choice(["1M", "0", "-1", "x", "1e400"]), "--repeats", "1"]
        if rng.random() < 0.7:
            argv += ["--nodes", rng.choice(TIER_NODES)]

    def run() -> tuple[str, str]:
        before = _fake_state(root)
        old = os.environ.get("MEMTINT_NUMA_FAKE")
        os.environ["MEMTINT_NUMA_FAKE"] = root
        try:
            code, text = _main_quiet(argv)
        finally:
            if old is None:
                os.environ.pop("MEMTINT_NUMA_FAKE", None)
            else:
                os.environ["MEMTINT_NUMA_FAKE"] = old
        after = _fake_state(root)
        # A restored setting is its value written back, which the kernel (and the fake) shows with
        # its own newline: a file corrupted to "1" without one reads "1\n" after, the same value.
        changed = sorted(k for k in before.keys() | after.keys()
                         if (k in before, before.get(k, b"").strip()) != (k in after, after.get(k, b"").strip()))
        if changed:
            return "internal", f"exit {code} left the fake kernel changed: {changed}"
        # Named: the option, or the value itself, or the requirement that failed.
        values = [re.escape(a) for a in argv if a and not a.startswith("--")] + [re.escape(corrupted)] * bool(corrupted)
        return _error_outcome(code, text, re.compile(r"--[a-z-]+|node|weight|bandwidth|root|kernel|polic|DAMON|"
                                                      + "|".join(values), re.I))

    return (" ".join(argv) + (f" [{corrupted} corrupted]" if corrupted else "")).encode(), run


# --- traces and profile parameters ------------------------------------------------------------

TRACE_FILES = ["10 0x1000\n20 0x2000 0x3000\n# note\n\n5 4096\n", "0 0x40\n" * 8]
#: Profile parameters as users write them, some wrong (a ':' between pairs, a word for a number).
PROFILE_PROGRAMS = ["stream:reads_pki=30,seed=2", "random:footprint_bytes=1_048_576", "light:reads_pki=abc",
                    "stream:reads_pki=2:writes_pki=1", "copy:streams", "random:reads_pki=", "light:=3", "stream:seed=0x10"]


def traces_case(rng: random.Random, d: str) -> tuple[bytes, Callable[[], tuple[str, str]]]:
    """A mutated text trace (or raw binary bytes) through the commands that read one, or a
    profile's parameters: an error is one printable line naming the file or the parameters."""
    if rng.random() < 0.1:
        # A pipe or device where a trace belongs (a FIFO, a process substitution, /dev/null): read
        # more than once, so refused by name before anything opens it (opening a FIFO would block).
        path = os.path.join(d, "t.txt")
        if os.path.lexists(path):
            os.remove(path)
        if rng.random() < 0.7:
            os.mkfifo(path)
        else:
            os.symlink("/dev/null", path)
        argv = rng.choice([["trace-stats", path], ["compare", "--machine", "i7-860", "--mix", f"{path},light",
                                                    "--instructions", "1000", "--warmup", "0", "--no-cache"],
                           ["trace-stats", f"phases:light@500+{path}", "--instructions", "1000"],
                           ["advise", path, "light"]])
        data = b"special " + " ".join(argv).encode()
    elif rng.random() < 0.3:
        program = rng.choice(PROFILE_PROGRAMS)
        argv = ["trace-stats", program, "--instructions", "2000"]
        data = program.encode()
    else:
        path = os.path.join(d, "t.txt")
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 400))) if rng.random() < 0.3 else \
            mutate(rng, rng.choice(TRACE_FILES))
        if os.path.lexists(path) and not os.path.isfile(path) or os.path.islink(path):
            os.remove(path)
        with open(path, "wb") as f:
            f.write(data)
        argv = rng.choice([["trace-stats", path], ["convert", path, os.path.join(d, "o.mtt")]])

    def run() -> tuple[str, str]:
        code, text = _main_quiet(argv)
        return _error_outcome(code, text, re.compile(r"t\.txt(:\d+)?: |workload parameters|^--|^OUT |^IN "))

    return data, run


# --- the alone-run cache ----------------------------------------------------------------------

CACHE_MIXES = ["stream,light", "random,light", "copy,stream"]
_CLEAN_CACHES: dict[tuple[str, str], tuple[str, list]] = {}


def _compare_figures(path: str) -> list:
    out = json.load(open(path, encoding="utf-8"))
    return [[p["policy"], p["weighted_speedup"], p["maximum_slowdown"], [c.get("ipc_alone") for c in p["cores"]]]
            for p in out["policies"]]


def cache_case(rng: random.Random, d: str) -> tuple[bytes, Callable[[], tuple[str, str]]]:
    import shutil

    mix = rng.choice(CACHE_MIXES)
    out = os.path.join(d, "compare.json")
    argv = ["compare", "--machine", "i7-860", "--mix", mix, "--policies", "buddy", "--instructions", "5000",
            "--warmup", "0", "--json", out]
    cache = os.path.join(d, "cache")

    def with_cache(directory: str) -> tuple[int, str]:
        old = os.environ.get("MEMTINT_CACHE_DIR")
        os.environ["MEMTINT_CACHE_DIR"] = directory
        try:
            return _main_quiet(argv)
        finally:
            if old is None:
                os.environ.pop("MEMTINT_CACHE_DIR", None)
            else:
                os.environ["MEMTINT_CACHE_DIR"] = old

    if (d, mix) not in _CLEAN_CACHES:  # a clean cache and its figures, once per mix
        clean = os.path.join(d, f"clean-{len(_CLEAN_CACHES)}")
        code, text = with_cache(clean)
        assert code == 0, text
        _CLEAN_CACHES[(d, mix)] = (clean, _compare_figures(out))
    clean, figures = _CLEAN_CACHES[(d, mix)]
    shutil.rmtree(cache, ignore_errors=True)
    shutil.copytree(clean, cache)
    entries = sorted(os.listdir(os.path.join(cache, "alone")))
    victim = os.path.join(cache, "alone", rng.choice(entries))
    text = open(victim, encoding="utf-8").read()
    entry = json.loads(text)
    shapes = [{}, [], None, {"ipc": 0}, entry["core"], {**entry, "format": 0},
              {**entry, "core": {**entry["core"], "ipc": 0.0}}, {**entry, "core": []}]
    damaged = mutate(rng, text) if rng.random() < 0.6 else json.dumps(rng.choice(shapes)).encode()
    with open(victim, "wb") as f:
        f.write(damaged)

    def run() -> tuple[str, str]:
        code, err = with_cache(cache)
        if code != 0:
            return "internal", f"exit {code} with a damaged cache entry: {err}"
        got = _compare_figures(out)
        if got != figures:
            return "internal", f"a damaged cache entry changed the comparison: {got} against {figures}"
        return "ok", ""

    return f"compare --mix {mix} with {os.path.basename(victim)} = {damaged[:80]!r}".encode(), run


# --- sweep result stores ----------------------------------------------------------------------

#: A store's error names its manifest or the batch file at fault.
STORE_NAMED = re.compile(r"manifest\.json|batch-\d+|/store(/[^ :]*)?: ")
_CLEAN_STORES: dict[str, tuple[str, int]] = {}


def store_case(rng: random.Random, d: str) -> tuple[bytes, Callable[[], tuple[str, str]]]:
    if d not in _CLEAN_STORES:  # a clean store of two batches (two sweeps), once
        clean = os.path.join(d, "clean-store")
        spec = os.path.join(d, "store-spec.toml")
        for mixes in ('[["light", "stream"]]', '[["stream", "stream"]]'):
            with open(spec, "w", encoding="utf-8") as f:
                f.write(f'machines = ["i7-860"]\npolicies = ["buddy", "bpm"]\ninstructions = 3000\nwarmup = 0\n'
                        f'mixes = {mixes}\n')
            code, text = _main_quiet(["sweep", spec, "--out", clean])
            assert code == 0, text
        from memtint.sweep import load_results

        _CLEAN_STORES[d] = (clean, len(load_results(clean)))
    clean, rows = _CLEAN_STORES[d]
    store = os.path.join(d, "store")
    shutil.rmtree(store, ignore_errors=True)
    shutil.copytree(clean, store)
    path = os.path.join(store, "manifest.json")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    manifest = json.loads(text)
    batches = manifest["batches"]
    first = batches[0]["file"]
    shapes = [
        {**manifest, "batches": batches + [batches[0]]},  # a batch listed twice
        {**manifest, "batches": batches + [{**batches[0], "file": first.replace("batches/", "batches/./")}]},
        {**manifest, "batches": [{**batches[0], "file": "batches/none.parquet"}]},
        {**manifest, "batches": [{**batches[0], "file": "manifest.json"}]},
        {**manifest, "batches": [{**batches[0], "file": "../../../../etc/hostname"}]},
        {**manifest, "batches": [{**batches[0], "file": "batches"}]},
        {**manifest, "batches": [{**batches[0], "file": ""}]},
        {**manifest, "batches": batches[::-1]}, {**manifest, "batches": []}, {**manifest, "sweeps": {}},
        {**manifest, "batches": [dict(b, rows=-1) for b in batches]}, {**manifest, "format": "1"},
    ]
    roll = rng.random()
    if roll < 0.45:
        damaged = mutate(rng, text)
    elif roll < 0.82:
        damaged = json.dumps(rng.choice(shapes)).encode()
    elif roll < 0.85:
        damaged = b"[" * 100_000  # nested past Python's recursion limit
    elif roll < 0.92:  # a batch's bytes instead
        path = os.path.join(store, rng.choice(batches)["file"])
        with open(path, "rb") as f:
            damaged = mutate(rng, f.read().decode("latin-1")) if rng.random() < 0.3 else f.read()[:rng.randrange(64)]
    else:
        path, damaged = _edited_batch(rng, store, manifest)
    if damaged is not None:
        with open(path, "wb") as f:
            f.write(damaged)

    def run() -> tuple[str, str]:
        import warnings

        with warnings.catch_warnings(record=True) as caught:  # a library's warning is noise on a user's terminal
            warnings.simplefilter("always")
            code, text = _main_quiet(["report", store, "--out", os.path.join(d, "store-report")])
        if caught:
            return "internal", f"a Python warning: {caught[0].category.__name__}: {caught[0].message}"
        outcome = _error_outcome(code, text, STORE_NAMED)
        if outcome[0] == "ok":
            from memtint.sweep import load_results

            frame = load_results(store)
            # Whatever a damaged manifest lists, no run may count twice, nor more runs than stored.
            if len(frame) > rows or frame.duplicated(["config_hash", "core"]).any():
                return "internal", f"{len(frame)} rows from a store of {rows}, some counted twice"
        return outcome

    what = damaged[:100] if damaged is not None else "edited"
    return f"report of a store with {os.path.relpath(path, store)} = {what!r}".encode(), run


def _edited_batch(rng: random.Random, store: str, manifest: dict) -> tuple[str, None]:
    """A batch edited by another tool, valid Parquet: one column's cells set to a null, an empty
    string or a number at an edge; or its entry removed from the manifest (as a damaged batch's
    error says) and its runs stored again by a resume, some of them failed."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from memtint.sweep.store import ResultStore

    batches = manifest["batches"]
    if rng.random() < 0.3:  # an entry removed by hand, then a resume's batch
        kept = batches[1:]
        with open(os.path.join(store, "manifest.json"), "w", encoding="utf-8") as f:
            json.dump({**manifest, "batches": kept}, f)
        rows = pq.read_table(os.path.join(store, kept[-1]["file"])).to_pylist()
        again = [dict(r, status=rng.choice(["ok", "failed"])) for r in rows]
        ResultStore(store).write_batch(again + pq.read_table(os.path.join(store, batches[0]["file"])).to_pylist())
        return os.path.join(store, "manifest.json"), None
    path = os.path.join(store, rng.choice(batches)["file"])
    table = pq.read_table(path)
    name = rng.choice(table.column_names)
    kind = table.schema.field(name).type
    values = [None, "", "|", "x" * 300, float("nan"), float("inf"), -1, 0, 2**31 - 1] if pa.types.is_string(kind) \
        else [None, float("nan"), float("inf"), -1.0, 0.0, 1e308] if pa.types.is_floating(kind) \
        else [None, -1, 0, 2**31 - 1] if pa.types.is_integer(kind) else [None, True, False]
    value = rng.choice(values)
    try:
        column = pa.array([value] * table.num_rows, type=kind)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        column = pa.array([str(value)] * table.num_rows)  # another type: the reader casts or refuses it
    pq.write_table(table.set_column(table.schema.get_field_index(name), name, column), path)
    return path, None


CLASSES: dict[str, Callable[[random.Random, str], tuple[bytes, Callable[[], tuple[str, str]]]]] = {
    "sim": sim_case, "combos": combos_case, "overrides": overrides_case, "sweep": sweep_case, "outputs": outputs_case,
    "tiering": tiering_case, "rules": rules_case, "rt": rt_case, "machine": machine_case, "traces": traces_case,
    "cache": cache_case, "store": store_case, "mixes": mixes_case,
}


def fuzz(cases: int, seed: int, kind: str = "sim") -> dict[str, list[str] | int]:
    rng = random.Random(seed)
    tally: dict[str, list[str] | int] = {"ok": 0, "clean": 0, "unnamed": [], "internal": [], "hang": []}

    def alarm(signum, frame):
        raise Hang()

    signal.signal(signal.SIGALRM, alarm)
    home = os.getcwd()
    with tempfile.TemporaryDirectory() as d:
        # Each case runs in an empty working directory: a command given only absolute paths (or
        # '-' for stdout) must leave nothing there, as `--export-drampower -` left a directory '-'.
        cwd = os.path.join(d, "cwd")
        for i in range(cases):
            data, case = CLASSES[kind](rng, d)
            shutil.rmtree(cwd, ignore_errors=True)
            os.makedirs(cwd)
            os.chdir(cwd)
            signal.alarm(CASE_LIMIT)
            try:
                kind_of, message = case()
            except Hang:
                kind_of, message = "hang", f"case {i}: {data!r}"
            finally:
                signal.alarm(0)
                os.chdir(home)
            left = sorted(os.listdir(cwd))
            if left and kind_of != "hang":
                kind_of, message = "internal", f"wrote into the working directory: {left}"
            if kind_of in ("ok", "clean"):
                tally[kind_of] += 1  # type: ignore[operator]
            else:
                tally[kind_of].append(f"case {i}: {message} <- {data[:160]!r}")  # type: ignore[union-attr]
    return tally


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=2000, help="cases per class")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--classes", default=",".join(CLASSES), help=f"comma-separated: {', '.join(CLASSES)}")
    args = parser.parse_args()
    failed = False
    for kind in args.classes.split(","):
        start = time.perf_counter()
        t = fuzz(args.cases, args.seed, kind)
        findings = t["unnamed"] + t["internal"] + t["hang"]  # type: ignore[operator]
        print(f"fuzz ({kind}): {args.cases} cases (seed {args.seed}) in {time.perf_counter() - start:.1f} s: "
              f"{t['ok']} ran, {t['clean']} clean errors, {len(t['unnamed'])} errors without a place, "
              f"{len(t['internal'])} internal errors, {len(t['hang'])} hangs", flush=True)
        for line in findings[:20]:
            print("  " + line)
        failed = failed or bool(findings)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
