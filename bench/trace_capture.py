"""Capture speed of `memtint trace` (`make bench`): one suite program (bzip2 -9 of generated text,
the workloads/bzip2.toml recipe on a smaller input) run natively, under Valgrind's no-op tool
(`--tool=none`, the instrumentation floor) and under memtint-trace with the default hierarchy and
no instruction limit. Prints the traced instructions per second (target >= 3 M/s, issue 7) and the
slowdowns. CPU time is the children's user + system time (less noisy than wall time on a shared
machine); wall time is printed too.

    .venv/bin/python bench/trace_capture.py [--words N] [--check]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

TARGET = 3e6


def timed(command: list[str], **kwargs) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of a child process run to completion."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, **kwargs)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--words", type=int, default=300_000, help="input size in words (default 300k, ~2 MB)")
    parser.add_argument("--check", action="store_true", help="exit 1 below 3 M traced instructions/s")
    args = parser.parse_args()
    from memtint.api import MemtintError
    from memtint.capture import capture_trace, find_valgrind, tool_lib_dir
    from memtint.workloads import GENERATORS

    try:
        valgrind, lib = find_valgrind(), tool_lib_dir()
    except MemtintError as error:
        print(f"trace capture benchmark skipped: {error}")
        return 0
    bzip2 = shutil.which("bzip2")
    if bzip2 is None:
        print("trace capture benchmark skipped: bzip2 is not installed")
        return 0
    with tempfile.TemporaryDirectory(prefix="memtint-bench-trace-") as tmp:
        text = os.path.join(tmp, "input.txt")
        GENERATORS["text"](text, args.words, 1)
        command = [bzip2, "-9", "-c", text]
        native_cpu, native_wall = timed(command)
        none_cpu, none_wall = timed([valgrind, "-q", "--tool=none", *command])
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        summary = capture_trace(command, os.path.join(tmp, "bzip2"), stdout=subprocess.DEVNULL)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        trace_cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        trace_wall = summary["seconds"]
        instructions = summary["traced_instructions"]
        records = sum(t["records"] for t in summary["threads"])
        size = sum(os.path.getsize(f) for f in summary["files"])
    rate = instructions / trace_cpu
    print(f"trace capture: bzip2 -9 of {args.words:,} words, "
          f"{instructions / 1e6:.0f} M instructions traced, {records:,} records ({size / 1e6:.1f} MB .mtt)")
    print(f"  native:        {native_cpu:6.2f} s CPU  {native_wall:6.2f} s wall")
    print(f"  valgrind none: {none_cpu:6.2f} s CPU  {none_wall:6.2f} s wall  ({none_cpu / native_cpu:.1f}x native)")
    print(f"  memtint-trace: {trace_cpu:6.2f} s CPU  {trace_wall:6.2f} s wall  ({trace_cpu / native_cpu:.1f}x native, "
          f"{trace_cpu / none_cpu:.1f}x valgrind none)")
    print(f"  capture speed: {rate / 1e6:.1f} M traced instructions per CPU second "
          f"({instructions / trace_wall / 1e6:.1f} M per wall second); target >= {TARGET / 1e6:.0f} M")
    if args.check and rate < TARGET:
        print("  BELOW TARGET")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
