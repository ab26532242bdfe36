"""`memtint numa-probe`: each memory node's bandwidth as STREAM measures it (McCalpin's Copy
kernel, a[i] = b[i], bytes counted as STREAM counts them: one read and one write of 8 bytes per
element, the write-allocate read not counted; the best of the repeats), with the arrays bound
to the node by mbind(MPOL_BIND) before they are touched. One thread per CPU memtint may use,
each copying its slice (numpy releases the GIL in copyto). The figures feed `memtint run
--tier-policy bw-* --bandwidths` where the firmware gives no HMAT/CDAT data (bw-aware-tiering.md
§6.2, "measure each node with a STREAM-like kernel bound to that node")."""

from __future__ import annotations

import ctypes
import mmap
import os
import threading
import time
from dataclasses import dataclass
from typing import Callable

from memtint.linux.errors import LinuxError
from memtint.linux.numa import MPOL_BIND, MPOL_MF_MOVE, MPOL_MF_STRICT, PAGE_BYTES, NumaSystem

ELEMENT_BYTES = 8


@dataclass
class NodeBandwidth:
    node: int
    gbs: float
    bytes_per_pass: int
    repeats: int
    threads: int
    on_node_fraction: float


#: The most passes per node: a figure is the best pass, and more than this adds time, not precision.
REPEATS_MAX = 1000


def host_llc_bytes(root: str = "/sys/devices/system/cpu/cpu0/cache") -> int | None:
    """The largest cache of CPU 0 (its last level), from sysfs; None when sysfs does not say."""
    found = []
    try:
        entries = os.listdir(root)
    except OSError:
        return None
    for entry in entries:
        try:
            with open(os.path.join(root, entry, "size")) as f:
                text = f.read().strip()
        except OSError:
            continue
        units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
        if text[-1:] in units and text[:-1].isdigit():
            found.append(int(text[:-1]) * units[text[-1]])
        elif text.isdigit():
            found.append(int(text))
    return max(found) if found else None


def size_warnings(size: int, threads: int, cpus: int, llc: int | None) -> list[str]:
    """What makes a figure other than the memory's: arrays a cache holds (STREAM's rule: each
    array at least 4 times the last-level cache), or more copy threads than CPUs to run them."""
    found = []
    if llc and size < 4 * llc:
        found.append(f"--size {size >> 20} MiB: each array is under 4 times this CPU's {llc >> 20} MiB last-level "
                     f"cache (STREAM's rule), so the figure is partly the cache's; give --size {4 * llc >> 20}M or "
                     "more")
    if threads > cpus:
        found.append(f"--threads {threads}: more copy threads than the {cpus} CPU(s) this process may use; they take "
                     "turns, and the figure is lower than the memory gives")
    return found


def _buffer(system: NumaSystem, node: int, size: int):
    """An anonymous mapping bound to `node` before its first touch, as a numpy float64 array."""
    import numpy

    buf = mmap.mmap(-1, size)
    address = ctypes.addressof(ctypes.c_char.from_buffer(buf))
    system.mbind(address, size, MPOL_BIND, [node], MPOL_MF_STRICT | MPOL_MF_MOVE)
    array = numpy.frombuffer(buf, dtype=numpy.float64)
    array.fill(1.0)  # first touch: every page faults in on `node`
    return buf, address, array


def _on_node(system: NumaSystem, address: int, size: int, node: int, samples: int = 256) -> float:
    """The fraction of a sample of the buffer's pages the kernel reports on `node` (move_pages query)."""
    pages = size // PAGE_BYTES
    step = max(1, pages // samples)
    chosen = [address + i * PAGE_BYTES for i in range(0, pages, step)]
    status = system.move_pages(0, chosen, None)
    return sum(1 for s in status if s == node) / len(chosen)


def probe_node(system: NumaSystem, node: int, size: int, repeats: int, threads: int,
               advance: Callable[[], None] = lambda: None) -> NodeBandwidth:
    """STREAM Copy between two arrays of `size` bytes on `node`; the best of `repeats` passes."""
    import numpy

    if size < PAGE_BYTES * threads:
        raise LinuxError(f"--size {size}: at least {PAGE_BYTES * threads} bytes ({threads} threads of a page each)")
    size -= size % (PAGE_BYTES * threads)
    a_buf, a_addr, a = _buffer(system, node, size)
    b_buf, b_addr, b = _buffer(system, node, size)
    try:
        fraction = min(_on_node(system, a_addr, size, node), _on_node(system, b_addr, size, node))
        slices = numpy.array_split(numpy.arange(a.size), threads)
        bounds = [(int(s[0]), int(s[-1]) + 1) for s in slices if s.size]
        best = float("inf")
        for _ in range(repeats):
            barrier = threading.Barrier(len(bounds) + 1)

            def copy(lo: int, hi: int) -> None:
                barrier.wait()
                numpy.copyto(a[lo:hi], b[lo:hi])
                barrier.wait()

            workers = [threading.Thread(target=copy, args=bound) for bound in bounds]
            for w in workers:
                w.start()
            barrier.wait()
            start = time.perf_counter()
            barrier.wait()
            best = min(best, time.perf_counter() - start)
            for w in workers:
                w.join()
            advance()
        moved = 2 * size  # STREAM Copy: 16 bytes per element
        return NodeBandwidth(node, moved / best / 1e9, moved, repeats, len(bounds), fraction)
    finally:
        del a, b
        a_buf.close()
        b_buf.close()


def probe(system: NumaSystem, nodes: list[int], *, size: int = 256 << 20, repeats: int = 10,
          threads: int | None = None, advance: Callable[[], None] = lambda: None) -> list[NodeBandwidth]:
    """Every node of `nodes`, one after the other (they would share the CPUs' bandwidth otherwise)."""
    available = system.memory_nodes()
    for n in nodes:
        if n not in available:
            raise LinuxError(f"node {n} does not exist or has no memory (this machine's memory nodes: "
                             f"{', '.join(f'node{m}' for m in available)})")
    if repeats < 1:
        raise LinuxError(f"--repeats {repeats}: at least 1")
    count = threads or len(os.sched_getaffinity(0))
    return [probe_node(system, n, size, repeats, count, advance) for n in nodes]


__all__ = ["NodeBandwidth", "probe", "probe_node"]
