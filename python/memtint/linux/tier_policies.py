"""The tier placement policies of `memtint run --tier-policy` (docs/tiering-linux.md), each a
declaration of what it needs and how it places, in one line of `POLICIES`: the kernel mode set
before exec, where its weights come from, and whether a daemon (chunks placed by move_pages) or
DAMON does the placing. `tier_run.plan_tiering` checks a machine against a declaration; nothing
there branches on a policy's name.
"""

from __future__ import annotations

from dataclasses import dataclass

from memtint.linux.numa import MPOL_INTERLEAVE, MPOL_LOCAL, MPOL_WEIGHTED_INTERLEAVE

#: Where a policy's weights come from.
NO_WEIGHTS = "none"  # 1:1 or local: --weights and --bandwidths are refused
KERNEL_WEIGHTS = "kernel"  # the kernel's interleave weights (auto or manual), or --weights
BANDWIDTH_WEIGHTS = "bandwidth"  # the thesis's D:N from the nodes' bandwidths, or --weights


@dataclass(frozen=True)
class TierPolicy:
    name: str
    summary: str
    #: The MPOL_* mode set before exec (None: the program's own).
    mode: int | None
    weights: str = NO_WEIGHTS
    #: A daemon places the program's memory in chunks with move_pages (NUMA balancing off meanwhile).
    daemon: bool = False
    #: The daemon draws each chunk's cluster at random (BW-RANDOM), else BW-LOCAL's order.
    random_chunks: bool = False
    #: The daemon's locality moves pass the BW-MIGRATION gate (the thesis's BW-LM).
    migration_gate: bool = False
    #: DAMON's migrate_hot / migrate_cold schemes place memory system-wide.
    damon: bool = False

    @property
    def writes_kernel_weights(self) -> bool:
        """Its own weights go into the system-wide sysfs weights (root)."""
        return self.mode == MPOL_WEIGHTED_INTERLEAVE and self.weights == BANDWIDTH_WEIGHTS


POLICIES = {p.name: p for p in (
    TierPolicy("local", "first touch on the node of the CPU (MPOL_LOCAL, set before exec)", MPOL_LOCAL),
    TierPolicy("interleave", "MPOL_INTERLEAVE over the nodes, page by page (1:1)", MPOL_INTERLEAVE),
    TierPolicy("weighted-interleave", "MPOL_WEIGHTED_INTERLEAVE with the kernel's weights (auto) or --weights",
               MPOL_WEIGHTED_INTERLEAVE, KERNEL_WEIGHTS),
    TierPolicy("bw-interleave", "the thesis's BW-INTERLEAVE: weighted interleave with D:N from the nodes' bandwidths",
               MPOL_WEIGHTED_INTERLEAVE, BANDWIDTH_WEIGHTS),
    TierPolicy("bw-random", "the thesis's BW-RANDOM over 2 MiB chunks, placed by move_pages", MPOL_LOCAL,
               BANDWIDTH_WEIGHTS, daemon=True, random_chunks=True),
    TierPolicy("bw-local", "the thesis's BW-LOCAL over 2 MiB chunks, placed by move_pages", MPOL_LOCAL,
               BANDWIDTH_WEIGHTS, daemon=True),
    TierPolicy("bw-migration", "BW-LOCAL plus the BW-MIGRATION gate on locality moves (the thesis's BW-LM)",
               MPOL_LOCAL, BANDWIDTH_WEIGHTS, daemon=True, migration_gate=True),
    TierPolicy("damon", "DAMON migrate_hot to the fastest node and migrate_cold to the slowest (system-wide)", None,
               damon=True),
)}
