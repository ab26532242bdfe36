"""What the mapping search measures with: timed rounds of loads to physical addresses.

A `Measurement` is a short program of rounds: each round loads its addresses together (issued
back to back, so a memory controller sees them at once), waits for all of them, and flushes them
from the caches, so every load of the next round goes to DRAM again. The sequence of rounds
repeats; every round's time is a sample. The search needs three shapes of it:

- a pair ``((a, b),)``: slow when a and b share a bank but not a row (every round a row
  conflict), fast otherwise;
- a pair of row misses ``((a1, b1), (a2, b2))`` with a1/a2 and b1/b2 each in one bank, other rows:
  every load opens a row, so activation limits (tRRD, tFAW: per rank) show;
- a wide round ``((x1, ..., xn),)``: bandwidth, for channels.

A `Timer` runs measurements in the simulator (`memtint.probe.simulated`) or on this machine
(`memtint.probe.linux`) and returns nanoseconds; the search (`memtint.probe.search`) does not know
which. An `AddressSpace` is the physical memory a timer can load from: in simulation a random
share of the machine's frames (as a real buffer's pages are), on Linux the frames of its buffer.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Protocol, Sequence

LINE_BITS = 6
PAGE_BITS = 12


@dataclass(frozen=True)
class Measurement:
    """Rounds of physical line addresses loaded together, repeated."""

    rounds: tuple[tuple[int, ...], ...]


class AddressSpace:
    """The physical frames a timer can load from: a list, and a bitmap for lookups. Addresses
    are physical; `base` is where the probed memory (one node's) begins."""

    def __init__(self, capacity_bits: int, frames: Sequence[int], base: int = 0):
        self.capacity_bits = capacity_bits
        self.base = base
        self.frame_count = 1 << max(capacity_bits - PAGE_BITS, 0)
        self.bitmap = bytearray((self.frame_count + 7) // 8)
        kept = []
        for f in frames:
            if 0 <= f < self.frame_count and not self.bitmap[f >> 3] & (1 << (f & 7)):
                self.bitmap[f >> 3] |= 1 << (f & 7)
                kept.append(f)
        if not kept:
            raise ValueError("no frames inside the probed memory")
        self._frames = kept

    @classmethod
    def random_share(cls, capacity_bits: int, share: float, rng: random.Random, base: int = 0) -> "AddressSpace":
        """A share of all frames, drawn at random: a buffer's pages as the kernel scatters them."""
        n = 1 << (capacity_bits - PAGE_BITS)
        return cls(capacity_bits, rng.sample(range(n), max(1, int(n * share))), base)

    def contains(self, addr: int) -> bool:
        f = (addr - self.base) >> PAGE_BITS
        return 0 <= f < self.frame_count and bool(self.bitmap[f >> 3] & (1 << (f & 7)))

    def frames(self) -> list[int]:
        return self._frames

    def random_line(self, rng: random.Random) -> int:
        """A random cache line of the space (an offset from `base`)."""
        frame = self._frames[rng.randrange(len(self._frames))]
        return (frame << PAGE_BITS) | (rng.randrange(1 << (PAGE_BITS - LINE_BITS)) << LINE_BITS)

    def has(self, offset: int) -> bool:
        """Whether the line at `offset` from `base` is in the space."""
        return self.contains(self.base + offset)

    def share(self) -> float:
        return len(self._frames) / self.frame_count


class Timer(Protocol):
    """Runs measurements; `measurements` counts every one it has run."""

    name: str
    measurements: int

    def space(self) -> AddressSpace: ...

    def time(self, batch: Sequence[Measurement]) -> list[list[float]]:
        """Each measurement's round times in ns (after its warm-up rounds), in order."""
        ...
