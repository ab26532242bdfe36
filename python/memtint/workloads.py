"""The workload suite: recipes for real, memory-intensive programs (``workloads/*.toml``),
deterministic generated inputs, and their capture with :func:`memtint.capture.capture_trace` into a
cache directory outside version control (``$MEMTINT_CACHE_DIR/workloads``, default
``~/.cache/memtint/workloads``). ``python -m memtint.workloads capture`` is ``make workloads``.

A recipe (one TOML file per program, documented in workloads/README.md)::

    description = "..."
    source = "src/triad.c"            # optional: our own C, built with gcc -O2 -g -pthread
    command = ["{program}", "8000000", "2", "4"]   # {program} {input} {workdir} are replaced
    warmup = 50_000_000               # instructions simulated before tracing
    limit = 30_000_000                # instructions traced
    commit = true                     # small enough to commit under workloads/traces/
    [input]                           # optional generated input file
    generator = "random-keys"         # see GENERATORS
    size = 1_000_000
    seed = 1
"""

from __future__ import annotations

import argparse
import gzip
import os
import random
import shutil
import subprocess
import sys
from typing import Any, Callable, Sequence

from memtint.api import MemtintError, cpu_trace_stats
from memtint.capture import capture_trace, trace_files
from memtint.outputs import produced_file

REPO = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
WORKLOADS_DIR = os.path.join(REPO, "workloads")
COMMITTED_DIR = os.path.join(WORKLOADS_DIR, "traces")
_KEYS = ("description", "source", "command", "warmup", "limit", "commit", "input")
_INPUT_KEYS = ("generator", "size", "seed")


def cache_dir() -> str:
    # Under the root the alone-run and reproduce caches share, so that a recipe's directory
    # cannot be theirs (a recipe named "alone").
    from memtint.comparison import cache_dir as cache_root

    return os.path.join(cache_root(), "workloads")


# --- deterministic input generators: (path, size, seed) -> None ---------------------------

def _random_keys(path: str, size: int, seed: int) -> None:
    """`size` lines: a 16-letter random key and a 6-digit payload (sort's input)."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    with open(path, "w", encoding="ascii") as f:
        for i in range(size):
            f.write("".join(rng.choices(letters, k=16)) + f" {i % 1000000:06d}\n")


def _text(path: str, size: int, seed: int) -> None:
    """`size` words of Zipf-like text over a 20 000-word vocabulary (compressible, like logs)."""
    rng = random.Random(seed)
    vocab = ["".join(rng.choices("etaoinshrdlucmfwyp", k=rng.randint(2, 10))) for _ in range(20000)]
    weights = [1.0 / (rank + 1) for rank in range(len(vocab))]
    with open(path, "w", encoding="ascii") as f:
        words = rng.choices(vocab, weights=weights, k=size)
        for start in range(0, size, 16):
            f.write(" ".join(words[start:start + 16]) + "\n")


def _sql(path: str, size: int, seed: int) -> None:
    """An in-memory database session of `size` orders over `size // 10` customers: bulk inserts
    in scattered key order, an index build, a hash-less join with aggregation, point lookups.
    Rows come from integer hashing inside SQL (sqlite's random() cannot be seeded), so the
    session is the same on every run; `seed` varies it."""
    rng = random.Random(seed)
    customers = max(size // 10, 1)
    mult = 2654435761 + 2 * seed
    with open(path, "w", encoding="ascii") as f:
        f.write("PRAGMA cache_size = -524288;\n")
        f.write("CREATE TABLE customer(id INTEGER PRIMARY KEY, region INTEGER, name TEXT);\n")
        f.write("CREATE TABLE orders(id INTEGER PRIMARY KEY, customer INTEGER, amount REAL, day INTEGER, note TEXT);\n")
        f.write(f"WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM c WHERE x < {customers - 1}) "
                f"INSERT INTO customer SELECT x, (x * {mult}) % 50, printf('c%08x', (x * {mult}) % 4294967291) FROM c;\n")
        f.write(f"WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM c WHERE x < {size - 1}) "
                f"INSERT INTO orders SELECT (x * {mult}) % 4294967291, (x * 40503 + {seed}) % {customers}, "
                f"((x * 7919) % 100000) / 100.0, (x * 104729) % 3650, printf('o%012d', x) FROM c;\n")
        f.write("CREATE INDEX orders_customer ON orders(customer);\n")
        f.write("CREATE INDEX orders_day ON orders(day, amount);\n")
        f.write("SELECT region, count(*), sum(amount) FROM orders JOIN customer ON customer.id = orders.customer "
                "GROUP BY region ORDER BY region;\n")
        for _ in range(2000):
            f.write(f"SELECT sum(amount) FROM orders WHERE customer = {rng.randrange(customers)};\n")
        f.write("SELECT day, avg(amount) FROM orders GROUP BY day ORDER BY 2 DESC LIMIT 5;\n")


GENERATORS: dict[str, Callable[[str, int, int], None]] = {
    "random-keys": _random_keys,
    "text": _text,
    "sql": _sql,
}


# --- recipes ---------------------------------------------------------------------------------

def load_recipe(path: str) -> dict[str, Any]:
    """A recipe with its name (the file's stem); errors name the file and the field."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    name = os.path.splitext(os.path.basename(path))[0]
    try:
        with open(path, "rb") as f:
            recipe = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise MemtintError(f"{path}: {error}") from None
    unknown = set(recipe) - set(_KEYS)
    if unknown:
        raise MemtintError(f"{path}: unknown field(s) {', '.join(sorted(unknown))} (known: {', '.join(_KEYS)})")
    command = recipe.get("command")
    if not isinstance(command, list) or not command or not all(isinstance(a, str) for a in command):
        raise MemtintError(f"{path}: 'command' must be a non-empty list of strings")
    for key in ("description", "source"):
        if not isinstance(recipe.get(key, ""), str):
            raise MemtintError(f"{path}: '{key}' must be a string, got {recipe[key]!r}")
    if not isinstance(recipe.get("commit", False), bool):
        raise MemtintError(f"{path}: 'commit' must be true or false, got {recipe['commit']!r}")
    for key in ("warmup", "limit"):
        value = recipe.get(key, 0)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise MemtintError(f"{path}: '{key}' must be a non-negative instruction count, got {value!r}")
    spec = recipe.get("input")
    if spec is not None:
        needs = f"[input] needs generator (one of {', '.join(GENERATORS)}), size and seed (integers)"
        if not isinstance(spec, dict) or set(spec) != set(_INPUT_KEYS) or spec["generator"] not in GENERATORS:
            raise MemtintError(f"{path}: {needs}, got {spec!r}")
        for key in ("size", "seed"):
            if not isinstance(spec[key], int) or isinstance(spec[key], bool) or spec[key] < (1 if key == "size" else 0):
                raise MemtintError(f"{path}: [input] {key} must be a {'positive' if key == 'size' else 'non-negative'} "
                                   f"integer, got {spec[key]!r}")
    return dict(recipe, name=name, path=path)


def load_recipes(directory: str = WORKLOADS_DIR) -> list[dict[str, Any]]:
    """Every recipe (``*.toml``) in ``directory``, by name."""
    if not isinstance(directory, (str, os.PathLike)):
        raise MemtintError(f"directory: expected the recipes' directory (a str or path), got {directory!r}")
    if not os.path.isdir(directory):
        raise MemtintError(f"{os.fspath(directory)}: not a directory of workload recipes")
    names = sorted(f for f in os.listdir(directory) if f.endswith(".toml"))
    return [load_recipe(os.path.join(directory, f)) for f in names]


def _prepare(recipe: dict[str, Any], workdir: str) -> list[str]:
    """Builds the recipe's program and input (once, kept in workdir); returns its command."""
    os.makedirs(workdir, exist_ok=True)
    values = {"workdir": workdir}
    source = recipe.get("source")
    if source:
        src = os.path.join(os.path.dirname(recipe["path"]), source)
        program = os.path.join(workdir, recipe["name"])
        if not os.path.exists(program) or os.path.getmtime(program) < os.path.getmtime(src):
            cc = os.environ.get("CC", "gcc")
            result = subprocess.run([cc, "-O2", "-g", "-pthread", "-o", program, src], capture_output=True, text=True)
            if result.returncode != 0:
                raise MemtintError(f"{src}: compilation failed: {result.stderr.strip()}")
        values["program"] = program
    spec = recipe.get("input")
    if spec:
        path = os.path.join(workdir, f"input-{spec['generator']}-{spec['size']}-{spec['seed']}")
        if not os.path.exists(path):
            GENERATORS[spec["generator"]](path + ".part", int(spec["size"]), int(spec["seed"]))
            os.replace(path + ".part", path)
        values["input"] = path
    try:
        return [arg.format(**values) for arg in recipe["command"]]
    except KeyError as error:
        raise MemtintError(f"{recipe['path']}: command uses {{{error.args[0]}}}, which this recipe does not define") from None


def capture_workload(recipe: dict[str, Any], directory: str | None = None,
                     progress: Callable[[int, float], None] | None = None) -> dict[str, Any]:
    """Captures one recipe into ``directory/NAME/trace.t<N>.mtt``; returns the capture summary
    with each thread's statistics (``memtint.api.cpu_trace_stats``) under ``stats``."""
    workdir = os.path.join(directory or cache_dir(), recipe["name"])
    command = _prepare(recipe, workdir)
    summary = capture_trace(command, os.path.join(workdir, "trace"), warmup=recipe.get("warmup", 0),
                            limit=recipe.get("limit", 0), progress=progress, cwd=workdir,
                            stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    if summary["program_failed"]:
        raise MemtintError(f"{recipe['name']}: {command[0]} exited with status {summary['program_exit_status']} "
                           f"(see {summary['log']})")
    summary["stats"] = [cpu_trace_stats(path) for path in summary["files"]]
    return summary


def commit_traces(recipe: dict[str, Any], summary: dict[str, Any], directory: str = COMMITTED_DIR) -> list[str]:
    """Copies a capture's non-empty per-thread traces, gzipped, to workloads/traces/NAME.t<N>.mtt.gz."""
    os.makedirs(directory, exist_ok=True)
    written = []
    for old in os.listdir(directory):
        if old.startswith(recipe["name"] + ".t"):
            os.remove(os.path.join(directory, old))
    for thread, stats in zip(summary["threads"], summary["stats"]):
        if stats["records"] == 0:
            continue
        target = os.path.join(directory, f"{recipe['name']}.t{thread['ordinal']}.mtt.gz")
        # Whole or not at all: an interrupted copy leaves no short trace.
        with produced_file("--commit", target, suffix=".mtt.gz") as aside, open(thread["file"], "rb") as src, \
                gzip.GzipFile(aside, "wb", compresslevel=9, mtime=0) as dst:
            shutil.copyfileobj(src, dst)
        written.append(target)
    return written


def committed_traces(name: str, directory: str = COMMITTED_DIR) -> list[str]:
    """The committed per-thread traces of workload ``name``, in thread order."""
    prefix = name + ".t"
    files = [f for f in os.listdir(directory) if f.startswith(prefix) and f.endswith(".mtt.gz")
             and f[len(prefix):-len(".mtt.gz")].isdigit()] if os.path.isdir(directory) else []
    return [os.path.join(directory, f) for f in sorted(files, key=lambda f: int(f[len(prefix):-len(".mtt.gz")]))]


def suite(directory: str = COMMITTED_DIR) -> list[str]:
    """The names of the recipes with committed traces: the programs every checkout has."""
    return [r["name"] for r in load_recipes() if committed_traces(r["name"], directory)]


def trace_path(name: str) -> str:
    """The trace that stands for workload ``name`` in a mix: its first committed thread trace,
    else its first captured thread trace with records in the cache directory."""
    committed = committed_traces(name)
    if committed:
        return committed[0]
    known = {r["name"] for r in load_recipes()}
    if name not in known:
        raise MemtintError(f"unknown workload '{name}' (known: {', '.join(sorted(known))})")
    captured = trace_files(os.path.join(cache_dir(), name, "trace"))
    for path in captured:
        if cpu_trace_stats(path)["records"]:
            return path
    raise MemtintError(f"workload '{name}' has no committed trace and none captured in {cache_dir()}: "
                       f"capture it with python -m memtint.workloads capture {name}")


def summary_row(name: str, summary: dict[str, Any]) -> dict[str, Any]:
    """One program's statistics over all its threads: MPKI (reads), WPKI, footprint."""
    stats = summary["stats"]
    instr = sum(s["instructions"] for s in stats) or 1
    return {
        "workload": name,
        "threads": sum(1 for s in stats if s["records"]),
        "instructions": sum(t["traced_instructions"] for t in summary["threads"]),
        "mpki": 1000 * sum(s["reads"] for s in stats) / instr,
        "wpki": 1000 * sum(s["writebacks"] for s in stats) / instr,
        "footprint_mib": sum(s["footprint_lines"] for s in stats) * 64 / 2**20,
        "capture_seconds": summary["seconds"],
    }


def class_table(machine: str = "i7-860") -> str:
    """The suite's measured classes on ``machine`` as a Markdown table (workloads/README.md):
    each committed program alone under buddy with compare's warm-up and the longest measured
    window of the i7-860 reproductions."""
    from memtint import comparison, workload_classes
    from memtint.reproduce import bpm, hvr

    window = max(bpm.SIZES["full"]["instructions"], hvr.SIZES["full"]["instructions"])
    names = suite()
    measured = workload_classes.measure({n: trace_path(n) for n in names}, machine,
                                        warmup=comparison.DEFAULT_WARMUP, instructions=window)
    lines = [f"| program | alone IPC | LLC MPKI | DRAM reads PKI | DRAM writes PKI | row hits | BLP | footprint | "
             "trace (M instr.) | classes |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for name in sorted(names, key=lambda n: -measured[n]["llc_mpki"]):
        m, trace = measured[name], cpu_trace_stats(trace_path(name))
        c = m["classes"]
        labels = [c["intensity"]] + ([c["access"]] if c["access"] else []) + (["write-heavy"] if c["write_heavy"] else [])
        hits = "—" if m["row_hit_rate"] is None else f"{100 * m['row_hit_rate']:.0f} %"
        lines.append(f"| {name} | {m['ipc']:.2f} | {m['llc_mpki']:.2f} | {m['dram_reads_pki']:.2f} | "
                     f"{m['dram_writes_pki']:.2f} | {hits} | {m['bank_level_parallelism'] or 0:.2f} | "
                     f"{trace['footprint_lines'] * 64 / 2**20:.1f} MiB | {trace['instructions'] / 1e6:.1f} | "
                     f"{', '.join(labels)} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m memtint.workloads", description="Capture the workload suite.")
    sub = parser.add_subparsers(dest="action", required=True)
    cap = sub.add_parser("capture", help="capture recipes into the cache directory")
    cap.add_argument("names", nargs="*", help="recipes to capture (default: all)")
    cap.add_argument("--cache-dir", default=None, help="default: $MEMTINT_CACHE_DIR/workloads, ~/.cache/memtint/workloads without it")
    cap.add_argument("--commit", action="store_true", help="also copy recipes marked commit=true to workloads/traces/")
    tab = sub.add_parser("table", help="the committed programs' measured classes, as a Markdown table")
    tab.add_argument("--machine", default="i7-860")
    args = parser.parse_args(argv)
    if args.action == "table":
        try:
            print(class_table(args.machine))
        except MemtintError as error:
            sys.stderr.write(f"memtint: error: {error}\n")
            return 2
        return 0
    try:
        recipes = load_recipes()
        known = {r["name"] for r in recipes}
        missing = [n for n in args.names if n not in known]
        if missing:
            raise MemtintError(f"unknown workload(s) {', '.join(missing)} (known: {', '.join(sorted(known))})")
        chosen = [r for r in recipes if not args.names or r["name"] in args.names]
        directory = args.cache_dir or cache_dir()
        rows = []
        for i, recipe in enumerate(chosen, 1):
            sys.stderr.write(f"[{i}/{len(chosen)}] {recipe['name']}: {recipe.get('description', '')}\n")

            def progress(instructions: int, seconds: float, name: str = recipe["name"]) -> None:
                if int(seconds * 2) % 20 == 0:  # every ~10 s
                    sys.stderr.write(f"    {name}: {instructions / 1e6:.0f} M instructions, {seconds:.0f} s\n")

            summary = capture_workload(recipe, directory, progress)
            row = summary_row(recipe["name"], summary)
            rows.append(row)
            sys.stderr.write(f"    done in {row['capture_seconds']:.1f} s: MPKI {row['mpki']:.2f}, "
                             f"WPKI {row['wpki']:.2f}, footprint {row['footprint_mib']:.1f} MiB\n")
            if args.commit and recipe.get("commit"):
                for path in commit_traces(recipe, summary):
                    sys.stderr.write(f"    committed {os.path.relpath(path, REPO)} ({os.path.getsize(path) / 1e6:.2f} MB)\n")
        print(f"{'workload':<12} {'threads':>7} {'M instr':>8} {'MPKI':>8} {'WPKI':>8} {'footprint MiB':>14}")
        for r in rows:
            print(f"{r['workload']:<12} {r['threads']:>7} {r['instructions'] / 1e6:>8.1f} {r['mpki']:>8.2f} "
                  f"{r['wpki']:>8.2f} {r['footprint_mib']:>14.1f}")
        print(f"traces in {directory}")
    except MemtintError as error:
        sys.stderr.write(f"memtint: error: {error}\n")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
