"""Fuzz `memtint sim`'s run files: mutated TOML (bytes and values) through the command's own
loading and the engine, in process. Every case must end in a run or in one error line that names
the file (and line) or the key at fault: never an internal error, a traceback or a hang.

    python tests/fuzz_cli.py --cases 2000 --seed 1      (make fuzz runs it; tests run a slice)
"""

from __future__ import annotations

import argparse
import os
import random
import re
import signal
import sys
import tempfile
import time

SEED_FILES = [
    'machine = "i7-860"\nprograms = ["stream", "light"]\ninstructions = 2000\nwarmup = 1000\nseed = 3\n'
    '[os]\npolicy = "bpm"\ncolour_split = "strided"\n',
    'machine = "ddr4-2400"\nprograms = ["copy"]\ninstructions = 1000\ncheck = true\n'
    '[overrides.controller]\nwrite_handling = "ramulator"\nread_queue = 8\n',
    'machine = "i7-860"\ninstructions = 1000\n[[processes]]\nname = "p"\nthreads = ["light", "stream"]\n'
    'affinity = [0, 1]\n[os]\npolicy = "buddy"\n[os.sched]\nload_balance = false\n',
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


class Hang(Exception):
    pass


def run_case(path: str) -> tuple[str, str]:
    """("ok" | "clean" | "unnamed" | "internal", message)."""
    from memtint import api
    from memtint.cli import UsageError, load_sim_config

    try:
        spec = load_sim_config(path)
        # Input handling is under test, not run length.
        for key, cap in (("instructions", 2000), ("warmup", 2000)):
            if isinstance(spec.get(key), int):
                spec[key] = min(spec[key], cap)
        api.run_sim_spec(spec)
        return "ok", ""
    except (api.MemtintError, UsageError) as error:
        text = str(error)
        if "\n" in text.strip() or any(c in text for c in "\x00\x1b\r"):
            return "unnamed", f"not one clean line: {text!r}"
        return ("clean", text) if NAMED.search(text) else ("unnamed", text)
    except Hang:
        raise
    except Exception as error:  # noqa: BLE001 - every other exception is a finding
        return "internal", f"{type(error).__name__}: {error}"


def fuzz(cases: int, seed: int) -> dict[str, list[str] | int]:
    rng = random.Random(seed)
    tally: dict[str, list[str] | int] = {"ok": 0, "clean": 0, "unnamed": [], "internal": [], "hang": []}

    def alarm(signum, frame):
        raise Hang()

    signal.signal(signal.SIGALRM, alarm)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "run.toml")
        for i in range(cases):
            data = mutate(rng, rng.choice(SEED_FILES))
            with open(path, "wb") as f:
                f.write(data)
            signal.alarm(CASE_LIMIT)
            try:
                kind, message = run_case(path)
            except Hang:
                kind, message = "hang", f"case {i}: {data!r}"
            finally:
                signal.alarm(0)
            if kind in ("ok", "clean"):
                tally[kind] += 1  # type: ignore[operator]
            else:
                tally[kind].append(f"case {i}: {message} <- {data[:120]!r}")  # type: ignore[union-attr]
    return tally


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    start = time.perf_counter()
    t = fuzz(args.cases, args.seed)
    findings = t["unnamed"] + t["internal"] + t["hang"]  # type: ignore[operator]
    print(f"fuzz (sim run files): {args.cases} cases (seed {args.seed}) in {time.perf_counter() - start:.1f} s: "
          f"{t['ok']} ran, {t['clean']} clean errors, {len(t['unnamed'])} errors without a place, "
          f"{len(t['internal'])} internal errors, {len(t['hang'])} hangs")
    for line in findings[:20]:
        print("  " + line)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
