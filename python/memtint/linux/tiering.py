"""The bandwidth-aware placement thesis's policies as pure functions (Yu, UNIST 2018;
../shared/papers/bw-aware-tiering.md §2.2-2.7), shared by `memtint run --tier-policy` on real
Linux and the tests: integer weights D:N reduced by GCD, cluster shares B_i/ΣB, BW-INTERLEAVE
(Algorithm 1), BW-RANDOM (Algorithm 2), BW-LOCAL (Algorithm 3, following the pseudocode, not the
prose's typo) and the BW-MIGRATION gate (Algorithm 4: a counter per pair of clusters, each kept in
[-M, M]; intra-cluster moves always admitted).

A cluster is a list of nodes of one kind; clusters are ordered fastest first (cluster 0 is the
thesis's DRAM), and `weights[i]` is cluster i's weight. For two clusters the n-cluster forms below
are exactly the thesis's algorithms.
"""

from __future__ import annotations

import math
import random
import threading
from dataclasses import dataclass, field
from functools import reduce
from typing import Sequence

from memtint.linux.errors import LinuxError

WEIGHT_MIN, WEIGHT_MAX = 1, 255  # the kernel's range for weighted-interleave weights
# Shares within 1 % of B_i/ΣB are close enough for a small ratio (§6.0 "Integer weights").
SHARE_TOLERANCE = 0.01


def reduce_weights(weights: Sequence[int]) -> list[int]:
    """Weights divided by their GCD: 4:2 is 2:1 (§6.0)."""
    divisor = reduce(math.gcd, weights)
    return [w // divisor for w in weights]


def shares(weights: Sequence[float]) -> list[float]:
    """Each cluster's share of pages, w_i / Σw (p_i,OPT = B_i / ΣB when the w_i are bandwidths)."""
    total = sum(weights)
    return [w / total for w in weights]


def check_bandwidths(bandwidths: Sequence[float], where: str = "bandwidth") -> None:
    for i, b in enumerate(bandwidths):
        if not b > 0 or math.isinf(b):
            raise LinuxError(f"{where} {b} of cluster {i} is not a positive number of GB/s: a node without "
                             "bandwidth cannot take a share of the pages")


def weights_from_bandwidths(bandwidths: Sequence[float], tolerance: float = SHARE_TOLERANCE,
                            limit: int = WEIGHT_MAX) -> list[int]:
    """The smallest integer weights whose shares are within `tolerance` of B_i/ΣB, reduced by GCD:
    4 and 2 GB/s give 2:1 (the thesis's example), 15 and 10 give 3:2. Each weight stays within
    1-`limit`; when no scale meets the tolerance the closest one does."""
    check_bandwidths(bandwidths)
    target = shares(bandwidths)
    slowest = min(bandwidths)
    best: tuple[float, list[int]] | None = None
    scale = 1
    while True:
        weights = [max(1, round(b / slowest * scale)) for b in bandwidths]
        if max(weights) > limit:
            break
        error = max(abs(s - t) for s, t in zip(shares(weights), target))
        if best is None or error < best[0] - 1e-12:
            best = (error, weights)
        if error <= tolerance:
            break
        scale += 1
    if best is None:  # even scale 1 exceeds the limit: the slow node gets the minimum weight
        best = (0.0, [min(limit, max(1, round(b / slowest))) for b in bandwidths])
    return reduce_weights(best[1])


def kernel_auto_weights(bandwidths: Sequence[float], weightiness: int = 32) -> list[int]:
    """Linux's own `auto` weights from node bandwidths (mm/mempolicy.c reduce_interleave_weights,
    6.16+): each node's bandwidth scaled to [1, 32] of the total, truncated, then divided by the
    weights' GCD. Kept beside the thesis's rounding so the two can be compared."""
    total = sum(bandwidths)
    weights = []
    for b in bandwidths:
        scaled = weightiness * b
        weights.append(int(scaled // total) if b and total < scaled else 1)
    return reduce_weights([max(1, w) for w in weights])


def parse_weights(text: str, count: int, names: Sequence[str] | None = None) -> list[int]:
    """`--weights D:N[:...]`: one integer 1-255 per cluster, in cluster order."""
    names = list(names or [f"cluster {i}" for i in range(count)])
    parts = text.split(":")
    if len(parts) != count:
        raise LinuxError(f"--weights {text}: {len(parts)} weight{'s' if len(parts) != 1 else ''} for {count} "
                         f"node{'s' if count != 1 else ''} ({', '.join(names)}); give one per node, e.g. "
                         + ":".join(["1"] * count))
    weights = []
    for name, part in zip(names, parts):
        try:
            weight = int(part)
        except ValueError:
            raise LinuxError(f"--weights {text}: '{part}' for {name} is not an integer") from None
        if not WEIGHT_MIN <= weight <= WEIGHT_MAX:
            raise LinuxError(f"--weights {text}: weight {weight} for {name} is outside {WEIGHT_MIN}-{WEIGHT_MAX} "
                             "(the kernel's range for weighted-interleave weights; every node takes at least 1)")
        weights.append(weight)
    return weights


def parse_bandwidths(text: str) -> dict[int, float]:
    """`--bandwidths 0=20,1=4`: GB/s per node."""
    found: dict[int, float] = {}
    for part in text.split(","):
        node, sep, value = part.partition("=")
        try:
            n, b = int(node.strip().removeprefix("node")), float(value)
        except ValueError:
            raise LinuxError(f"--bandwidths {text}: '{part}' is not NODE=GB/s (e.g. 0=20,1=4)") from None
        if not sep:
            raise LinuxError(f"--bandwidths {text}: '{part}' is not NODE=GB/s (e.g. 0=20,1=4)")
        if not b > 0 or math.isinf(b):
            raise LinuxError(f"--bandwidths {text}: bandwidth {value} for node{n} is not a positive number of GB/s")
        if n in found:
            raise LinuxError(f"--bandwidths {text}: node{n} is given twice")
        found[n] = b
    return found


@dataclass
class Clusters:
    """Groups of nodes of one kind, fastest first, with their weights."""

    nodes: list[list[int]]
    weights: list[int]

    def __post_init__(self) -> None:
        if len(self.nodes) != len(self.weights):
            raise LinuxError(f"{len(self.weights)} weights for {len(self.nodes)} clusters")
        for i, w in enumerate(self.weights):
            if not WEIGHT_MIN <= w <= WEIGHT_MAX:
                raise LinuxError(f"weight {w} of cluster {i} ({self.nodes[i]}) is outside {WEIGHT_MIN}-{WEIGHT_MAX}")

    def cluster_of(self, node: int) -> int:
        for i, members in enumerate(self.nodes):
            if node in members:
                return i
        raise LinuxError(f"node {node} is in no cluster ({self.nodes})")

    @property
    def cycle(self) -> int:
        return sum(self.weights)

    def at(self, position: int, order: list[int] | None = None) -> int:
        """The cluster whose interval of the weight cycle holds `position` (0 <= position <
        cycle), the intervals laid out in `order` (default: fastest first)."""
        for i in order if order is not None else range(len(self.weights)):
            if position < self.weights[i]:
                return i
            position -= self.weights[i]
        raise AssertionError("unreachable: position < cycle")


@dataclass
class BwInterleave:
    """Algorithm 1 over n clusters: a per-thread counter `aCount` cycling over Σw; positions
    [w_0 + ... + w_(i-1), ... + w_i) go to cluster i (D to DRAM, then N to NVM); the node inside
    the cluster round-robin per thread (§6.0)."""

    clusters: Clusters
    count: dict[int, int] = field(default_factory=dict)
    rotor: dict[tuple[int, int], int] = field(default_factory=dict)

    def cluster(self, thread: int = 0) -> int:
        a = self.count.get(thread, 0)
        self.count[thread] = (a + 1) % self.clusters.cycle
        return self.clusters.at(a)

    def node(self, thread: int = 0) -> int:
        c = self.cluster(thread)
        members = self.clusters.nodes[c]
        r = self.rotor.get((thread, c), 0)
        self.rotor[(thread, c)] = (r + 1) % len(members)
        return members[r]


@dataclass
class BwRandom:
    """Algorithm 2: r = random % Σw picks the cluster whose interval holds r, then a random node
    of it; no per-thread state, the ratio met in expectation. Seeded for reproducibility."""

    clusters: Clusters
    seed: int = 1
    rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    def cluster(self, thread: int = 0) -> int:
        return self.clusters.at(self.rng.randrange(self.clusters.cycle))

    def node(self, thread: int = 0) -> int:
        return self.rng.choice(self.clusters.nodes[self.cluster(thread)])


@dataclass
class BwLocal:
    """Algorithm 3: per thread, one counter per current cluster; a thread running in cluster c
    takes its w_c pages there first, then the other clusters' in cluster order (two clusters: a
    DRAM-side thread D to DRAM then N to NVM, an NVM-side thread N to NVM then D to DRAM, as the
    pseudocode says). The node: the thread's own when the cluster holds it, else the cluster's
    first (nearest) node."""

    clusters: Clusters
    count: dict[tuple[int, int], int] = field(default_factory=dict)

    def order(self, current: int) -> list[int]:
        return [current] + [i for i in range(len(self.clusters.nodes)) if i != current]

    def cluster(self, thread: int, current: int) -> int:
        a = self.count.get((thread, current), 0)
        self.count[(thread, current)] = (a + 1) % self.clusters.cycle
        return self.clusters.at(a, self.order(current))

    def node(self, thread: int, local_node: int) -> int:
        c = self.cluster(thread, self.clusters.cluster_of(local_node))
        members = self.clusters.nodes[c]
        return local_node if local_node in members else members[0]


class MigrationGate:
    """Algorithm 4 for n clusters: one counter per unordered pair {i, j} (i < j), starting at 0.
    A move from j to i (towards the faster cluster) is admitted while the pair's counter is below
    M and adds 1; a move from i to j while it is above -M and subtracts 1; so for every pair
    (#j->i) - (#i->j) stays in [-M, M]. Moves within a cluster are always admitted. A refused move
    is not retried. Thread-safe: check and update happen under one lock (the thesis's CAS)."""

    def __init__(self, clusters: int, limit: int) -> None:
        if limit < 0:
            raise LinuxError(f"migration limit M {limit} is negative")
        self.limit = limit
        self.counters = {(i, j): 0 for i in range(clusters) for j in range(i + 1, clusters)}
        self.admitted = 0
        self.refused = 0
        self._lock = threading.Lock()

    def admit(self, source: int, destination: int) -> bool:
        if source == destination:
            self.admitted += 1
            return True
        pair = (min(source, destination), max(source, destination))
        with self._lock:
            c = self.counters[pair]
            towards_faster = destination < source
            allowed = c < self.limit if towards_faster else c > -self.limit
            if allowed:
                self.counters[pair] = c + 1 if towards_faster else c - 1
                self.admitted += 1
            else:
                self.refused += 1
            return allowed


__all__ = ["BwInterleave", "BwLocal", "BwRandom", "Clusters", "MigrationGate", "kernel_auto_weights",
           "parse_bandwidths", "parse_weights", "reduce_weights", "shares", "weights_from_bandwidths"]
