"""`memtint run --tier-policy`: an unmodified program's memory placed over memory nodes by Linux's
own policies or the bandwidth-aware thesis's (../shared/papers/bw-aware-tiering.md §6.2), with
every system setting it changes put back on every way out (normal exit, error, SIGINT, SIGTERM).

How each policy reaches an unmodified program (no preload, no ptrace):
- local, interleave, weighted-interleave, bw-interleave: the memory policy is set in the child
  between fork and exec (set_mempolicy is inherited across execve), so every page the program
  faults in is placed by the kernel, page by page. bw-interleave is weighted interleave with the
  thesis's D:N weights written to the system-wide sysfs weights for the run (the kernel indexes
  by page offset, not allocation order: §6.2's caveat; the ratio is the same).
- bw-random, bw-local, bw-migration: the kernel has no such policy, so a daemon in memtint
  places the program's anonymous memory (heap, mmap'd chunks, thread stacks) in 2 MiB chunks:
  each period it reads /proc/PID/maps, asks move_pages where the pages are, gives every chunk
  it has not seen a node by Algorithm 2 or 3 and moves the chunk's pages there with move_pages.
  Pages are first placed by first touch and reach their chunk's node within one period.
  bw-migration (the thesis's BW-LM) adds locality proposals (a chunk off the node the program
  runs on is proposed to move there, as ANB would) filtered page by page by the BW-MIGRATION
  gate. numa_balancing is off while the daemon runs (it would move pages behind its back).
- damon: one kdamond on the physical address space with two schemes, migrate_hot to the
  fastest node and migrate_cold to the slowest (system-wide, DAMON usage.rst).
"""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from memtint.linux.errors import LinuxError
from memtint.linux.launch import RELAYED, SignalRelay, exit_status, kill_tree, start_failure
from memtint.linux.maps import read_maps
from memtint.linux.numa import (DAMON_DIR, MODE_NAMES, MPOL_LOCAL, MPOL_WEIGHTED_INTERLEAVE,
                                NUMA_BALANCING, PAGE_BYTES, WEIGHTS_DIR, NumaError, NumaSystem, check_policy,
                                policy_in_child)
from memtint.linux.tiering import (BwLocal, BwRandom, Clusters, MigrationGate, parse_bandwidths, parse_weights,
                                   weights_from_bandwidths)
from memtint.linux.tier_policies import BANDWIDTH_WEIGHTS, KERNEL_WEIGHTS, NO_WEIGHTS
from memtint.linux.tier_policies import POLICIES as TIER_POLICIES

#: Name -> summary, for listings and the CLI's choices (the declarations: tier_policies.py).
POLICIES = {name: p.summary for name, p in TIER_POLICIES.items()}
CHUNK_BYTES = 2 << 20
QUERY_BATCH = 65536
# Inaccessible mappings this large are reservations, not memory (libmemtint's arena).
RESERVATION_BYTES = 1 << 30


@dataclass
class TierPlan:
    """What a tier policy will do on this machine, decided before anything changes."""

    policy: str
    nodes: list[int]
    weights: list[int]
    weights_source: str
    mode: int | None = None
    write_weights: bool = False
    balancing_off: bool = False
    daemon: bool = False
    damon: bool = False
    limit: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def nothing_to_place(self) -> bool:
        return len(self.nodes) < 2

    @property
    def clusters(self) -> Clusters:
        return Clusters([[n] for n in self.nodes], self.weights)


def _nodes(system: NumaSystem, text: str | None) -> list[int]:
    available = system.memory_nodes()
    if text is None:
        return available
    if not text.strip():  # "--nodes ''" is a mistake, not "every node"
        raise LinuxError("--nodes '': give node numbers, e.g. --nodes 0,1, or leave --nodes out for every node")
    chosen: list[int] = []
    for part in text.replace("node", "").split(","):
        first, dash, last = part.strip().partition("-")
        if not (first.isdigit() and (last.isdigit() if dash else True)):
            raise LinuxError(f"--nodes {text}: '{part}' is not a node number or an ascending range like 0-1")
        lo, hi = int(first), int(last) if dash else int(first)
        if hi < lo:
            raise LinuxError(f"--nodes {text}: '{part}' is not an ascending range (write {hi}-{lo}, or the nodes "
                             "one by one in the order wanted)")
        if hi not in available:  # checked before expanding, so a huge range is refused at once
            raise LinuxError(f"--nodes {text}: node {hi} does not exist or has no memory (this machine's memory "
                             f"nodes: {', '.join(f'node{m}' for m in available)})")
        chosen.extend(range(lo, hi + 1))
    for n in chosen:
        if n not in available:
            raise LinuxError(f"--nodes {text}: node {n} does not exist or has no memory (this machine's memory "
                             f"nodes: {', '.join(f'node{m}' for m in available)})")
    if len(set(chosen)) != len(chosen):
        raise LinuxError(f"--nodes {text}: a node is listed twice")
    return chosen


def _given_bandwidths(bandwidths: str, nodes: list[int]) -> dict[int, float]:
    """--bandwidths parsed, each node one of those placed on."""
    given = parse_bandwidths(bandwidths)
    for n in given:
        if n not in nodes:
            raise LinuxError(f"--bandwidths {bandwidths}: node {n} is not one of the nodes placed on "
                             f"({', '.join(f'node{m}' for m in nodes)})")
    return given


def _bandwidth_weights(system: NumaSystem, nodes: list[int], bandwidths: str | None) -> tuple[list[int], str]:
    """The thesis's D:N from --bandwidths, else from HMAT/CDAT sysfs."""
    if bandwidths:
        given = _given_bandwidths(bandwidths, nodes)
        missing = [n for n in nodes if n not in given]
        if missing:
            raise LinuxError(f"--bandwidths {bandwidths}: no bandwidth for {', '.join(f'node{m}' for m in missing)}")
        figures = [given[n] for n in nodes]
        source = "--bandwidths"
    else:
        hmat = system.hmat_bandwidths()
        if hmat is None:
            raise LinuxError(
                "no bandwidth figures for the nodes: this machine has no HMAT/CDAT data "
                f"({system.path('sys/devices/system/node')}/nodeN/access0/initiators/read_bandwidth is missing); "
                "measure them with 'memtint numa-probe' and pass --bandwidths 0=GB,1=GB, or give --weights D:N")
        for n in nodes:
            if hmat[n] <= 0:
                raise LinuxError(f"{system.path(f'sys/devices/system/node/node{n}/access0/initiators/read_bandwidth')}"
                                 f": bandwidth {hmat[n]:g} GB/s for node{n} is not positive; pass --bandwidths or "
                                 "--weights instead")
        figures = [hmat[n] for n in nodes]
        source = "HMAT/CDAT (access0 read_bandwidth)"
    described = ", ".join(f"node{n} {b:g} GB/s" for n, b in zip(nodes, figures))
    return weights_from_bandwidths(figures), f"{source}: {described}"


def plan_tiering(system: NumaSystem, policy: str, *, weights: str | None = None, bandwidths: str | None = None,
                 nodes: str | None = None, limit: int = 10) -> TierPlan:
    """Check everything a tier policy needs on this machine and say what it will do; raises
    LinuxError naming the bad value (a weight of 0, a node that does not exist, a bandwidth of 0,
    a kernel without weighted interleave, a policy that needs root run without it)."""
    if policy not in TIER_POLICIES:
        raise LinuxError(f"--tier-policy {policy}: unknown; known: {', '.join(TIER_POLICIES)}")
    p = TIER_POLICIES[policy]
    chosen = _nodes(system, nodes)
    names = [f"node{n}" for n in chosen]
    if weights is not None and bandwidths is not None:
        raise LinuxError("give --weights or --bandwidths, not both")
    if p.weights == NO_WEIGHTS and (weights not in (None, "auto") or bandwidths):
        raise LinuxError(f"--tier-policy {policy} takes no --weights or --bandwidths ("
                         + ("DAMON moves hot pages to the first node and cold ones to the last of --nodes)"
                            if p.damon else "it places 1:1 or locally)"))
    if p.mode == MPOL_WEIGHTED_INTERLEAVE and not system.has_weighted_interleave():
        version = ".".join(map(str, system.kernel_version()))
        raise LinuxError(f"--tier-policy {policy} needs MPOL_WEIGHTED_INTERLEAVE (Linux 6.9 or later, with "
                         f"{system.path(WEIGHTS_DIR)}); this kernel is {version}"
                         + ("" if system.kernel_version() < (6, 9) else " and has no such directory"))
    plan = TierPlan(policy, chosen, [1] * len(chosen), "1:1", limit=limit, mode=p.mode)
    explicit = weights is not None and weights != "auto"
    if explicit:
        plan.weights = parse_weights(weights, len(chosen), names)  # type: ignore[arg-type]
        plan.weights_source = f"--weights {weights}"
    elif p.weights == KERNEL_WEIGHTS:
        current = system.interleave_weights()
        plan.weights = [current.get(n, 1) for n in chosen]
        mode = system.auto_weights()
        plan.weights_source = ("the kernel's " + ("auto" if mode else "manual" if mode is False else "current")
                               + " weights in " + system.path(WEIGHTS_DIR))
    elif p.weights == BANDWIDTH_WEIGHTS and len(chosen) > 1:
        plan.weights, plan.weights_source = _bandwidth_weights(system, chosen, bandwidths)
    elif bandwidths:
        _given_bandwidths(bandwidths, chosen)  # a bad figure or node is an error even with one node
    if p.mode == MPOL_WEIGHTED_INTERLEAVE:
        current = system.interleave_weights()
        # One node takes every page whatever its weight: nothing is written, so root is not needed.
        writes = (explicit or p.writes_kernel_weights) and not plan.nothing_to_place
        plan.write_weights = writes and any(current.get(n) != w for n, w in zip(chosen, plan.weights))
        if plan.write_weights:
            system.auto_weights()  # the mode to restore must be understood before the program starts
        if explicit and plan.nothing_to_place:
            plan.weights = [current.get(n, 1) for n in chosen]
            plan.weights_source = (f"the kernel's; --weights {weights} is not written: one node takes every page "
                                   "whatever its weight")
        if writes and not system.is_root():
            raise LinuxError(f"--tier-policy {policy} with weights {':'.join(map(str, plan.weights))} writes "
                             f"the system-wide weights in {system.path(WEIGHTS_DIR)}, which needs root (run "
                             "with sudo), or use --tier-policy weighted-interleave --weights auto to keep the "
                             "kernel's")
    if p.daemon:
        plan.daemon = True
        balancing = system.numa_balancing()
        # One node: balancing has nowhere to move pages, so it is left as it is (and needs no root).
        plan.balancing_off = balancing not in (None, "0") and not plan.nothing_to_place
        if plan.balancing_off and not system.is_root():
            raise LinuxError(f"--tier-policy {policy} turns automatic NUMA balancing off while it runs "
                             f"({system.path(NUMA_BALANCING)} is {balancing}), which needs root (run with sudo, "
                             "or set it to 0 yourself)")
    if p.damon:
        plan.damon = True
    # One node: DAMON is not started (no node to move pages to), so nothing of it is needed.
    if p.damon and not plan.nothing_to_place:
        if not os.path.isdir(system.path(DAMON_DIR)):
            raise LinuxError(f"--tier-policy damon needs DAMON's sysfs interface ({system.path(DAMON_DIR)} is "
                             "missing: a kernel with CONFIG_DAMON_SYSFS and CONFIG_DAMON_PADDR, 6.11 or later "
                             "for migrate_hot/migrate_cold)")
        if not system.is_root():
            raise LinuxError(f"--tier-policy damon writes {system.path(DAMON_DIR)}, which needs root (run with sudo)")
        running = system.read(f"{DAMON_DIR}/nr_kdamonds")
        if running not in (None, "0"):
            raise LinuxError(f"DAMON already has {running} kdamond(s) configured ({system.path(DAMON_DIR)}/"
                             "nr_kdamonds); memtint does not take over someone else's DAMON setup")
    if plan.nothing_to_place:
        plan.notes.append(f"this machine has one memory node ({names[0]}): nothing to place; the program runs "
                          + ("under MPOL_LOCAL (first touch), which puts every page there" if plan.mode == MPOL_LOCAL
                             else f"under {MODE_NAMES[plan.mode]} over {{{names[0]}}}, which puts every page on "
                             f"{names[0]}" if plan.mode is not None else "unchanged")
                          + ("; the daemon only queries where its pages are" if plan.daemon else "")
                          + ("; DAMON is not started (no node to migrate to)" if plan.damon else ""))
    return plan


class SystemChanges:
    """Settings changed for a run, each with its value before, put back in reverse order."""

    def __init__(self, system: NumaSystem) -> None:
        self.system = system
        self.undo: list[tuple[str, Callable[[], None]]] = []

    def set(self, relative: str, value: str) -> None:
        before = self.system.read(relative)
        if before is None:
            raise LinuxError(f"{self.system.path(relative)} does not exist")
        if before == value:
            return
        self.system.write(relative, value)
        self.undo.append((f"{relative}={before}", lambda: self.system.write(relative, before)))

    def weights(self, nodes: Sequence[int], weights: Sequence[int]) -> None:
        """The weighted-interleave weights; auto mode, which a weight write turns off, comes back
        last (writing true recomputes the kernel's weights from the same bandwidth data)."""
        auto = self.system.auto_file()
        if auto is not None:
            before_auto = "true" if self.system.auto_weights() else "false"  # refused here, before any write
            self.undo.append((f"{auto}={before_auto}", lambda: self.system.write(auto, before_auto)))
        for n, w in zip(nodes, weights):
            self.set(f"{WEIGHTS_DIR}/node{n}", str(w))

    def add(self, what: str, undo: Callable[[], None]) -> None:
        self.undo.append((what, undo))

    def restore(self) -> list[str]:
        """Undo everything (signals held meanwhile so a Ctrl-C cannot stop it half-way); returns
        what could not be restored."""
        failed = []
        held = signal.pthread_sigmask(signal.SIG_BLOCK, set(RELAYED))
        try:
            while self.undo:
                what, undo = self.undo.pop()
                try:
                    undo()
                except (OSError, LinuxError) as error:
                    failed.append(f"{what}: {error}")
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
        return failed


def damon_start(system: NumaSystem, changes: SystemChanges, fast: int, slow: int) -> None:
    """One kdamond on the physical address space: migrate_hot to `fast`, migrate_cold to `slow`
    (DAMON usage.rst; paddr is the only operations set with these actions). Hot: at least 5 of 20
    samples per 100 ms aggregation accessed; cold: no access for 5 s (50 aggregations). Quota 256
    MiB/s each, so migration traffic stays bounded."""
    base = DAMON_DIR
    system.write(f"{base}/nr_kdamonds", "1")
    changes.add(f"{base}/nr_kdamonds=0", lambda: system.write(f"{base}/nr_kdamonds", "0"))
    ctx = f"{base}/0/contexts/0"
    system.write(f"{base}/0/contexts/nr_contexts", "1")
    system.write(f"{ctx}/operations", "paddr")
    system.write(f"{ctx}/targets/nr_targets", "1")
    ram = _largest_system_ram(system)
    if ram:
        system.write(f"{ctx}/targets/0/regions/nr_regions", "1")
        system.write(f"{ctx}/targets/0/regions/0/start", str(ram[0]))
        system.write(f"{ctx}/targets/0/regions/0/end", str(ram[1]))
    system.write(f"{ctx}/schemes/nr_schemes", "2")
    for i, (action, node, accesses, age) in enumerate([("migrate_hot", fast, (5, 20), (0, 2**32 - 1)),
                                                       ("migrate_cold", slow, (0, 0), (50, 2**32 - 1))]):
        scheme = f"{ctx}/schemes/{i}"
        system.write(f"{scheme}/action", action)
        system.write(f"{scheme}/target_nid", str(node))
        system.write(f"{scheme}/access_pattern/sz/min", str(PAGE_BYTES))
        system.write(f"{scheme}/access_pattern/sz/max", str(2**64 - 1))
        system.write(f"{scheme}/access_pattern/nr_accesses/min", str(accesses[0]))
        system.write(f"{scheme}/access_pattern/nr_accesses/max", str(accesses[1]))
        system.write(f"{scheme}/access_pattern/age/min", str(age[0]))
        system.write(f"{scheme}/access_pattern/age/max", str(age[1]))
        system.write(f"{scheme}/quotas/bytes", str(256 << 20))
        system.write(f"{scheme}/quotas/reset_interval_ms", "1000")
    system.write(f"{base}/0/state", "on")
    changes.add(f"{base}/0/state=off", lambda: system.write(f"{base}/0/state", "off"))


def _largest_system_ram(system: NumaSystem) -> tuple[int, int] | None:
    """The largest 'System RAM' range of /proc/iomem (addresses read as zero without root)."""
    def ranges(text: str) -> list[tuple[int, int]]:
        found = []
        for line in text.splitlines():
            if line.startswith(" ") or not line.rstrip().endswith(": System RAM"):
                continue
            first, _, last = line.split(" : ")[0].partition("-")
            found.append((int(first, 16), int(last, 16) + 1))
        return found

    best = None
    for start, end in system.read_value("proc/iomem", ranges, "lines like '00100000-bfffffff : System RAM'") or []:
        if end > start and (best is None or end - start > best[1] - best[0]):
            best = (start, end)
    return best


@dataclass
class DaemonStats:
    periods: int = 0
    chunks: int = 0
    pages_moved: int = 0
    pages_failed: dict[str, int] = field(default_factory=dict)
    gate_admitted: int = 0
    gate_refused: int = 0
    pages_per_node: dict[int, int] = field(default_factory=dict)


class ChunkPlacer:
    """The daemon of bw-random, bw-local and bw-migration for process `pid` (see the module's
    description). One step per period; `step` is also what tests drive directly."""

    def __init__(self, system: NumaSystem, pid: int, plan: TierPlan, *, seed: int = 1,
                 chunk_bytes: int = CHUNK_BYTES, regions: Callable[[int], list[tuple[int, int]]] | None = None,
                 cpu_node: Callable[[int], int] | None = None) -> None:
        self.system, self.pid, self.plan, self.chunk_bytes = system, pid, plan, chunk_bytes
        clusters = plan.clusters
        self.clusters = clusters
        self.random = BwRandom(clusters, seed) if TIER_POLICIES[plan.policy].random_chunks else None
        self.local = BwLocal(clusters) if plan.policy != "bw-random" else None
        self.gate = MigrationGate(len(clusters.nodes), plan.limit) if TIER_POLICIES[plan.policy].migration_gate else None
        self.assigned: dict[int, int] = {}
        self.regions = regions or anonymous_regions
        self.cpu_node = cpu_node or (lambda pid: system.cpu_node(process_cpu(pid)))
        self.stats = DaemonStats()

    def _choose(self, task_node: int) -> int:
        if self.random is not None:
            return self.random.node()
        return self.local.node(self.pid, task_node)  # type: ignore[union-attr]

    def step(self) -> DaemonStats:
        pages = [p for start, end in self.regions(self.pid) for p in range(start, end, PAGE_BYTES)]
        where: dict[int, int] = {}
        for i in range(0, len(pages), QUERY_BATCH):
            batch = pages[i:i + QUERY_BATCH]
            for page, status in zip(batch, self.system.move_pages(self.pid, batch, None)):
                if status >= 0:
                    where[page] = status
        self.stats.periods += 1
        task_node = self.cpu_node(self.pid)
        by_chunk: dict[int, list[int]] = {}
        for page in where:
            by_chunk.setdefault(page - page % self.chunk_bytes, []).append(page)
        moves: list[tuple[int, int]] = []
        for chunk in sorted(by_chunk):
            if chunk not in self.assigned:
                self.assigned[chunk] = self._choose(task_node)
                self.stats.chunks += 1
            elif self.gate is not None and self.assigned[chunk] != task_node and task_node in self.plan.nodes:
                # a locality proposal, as ANB would make: towards the node the program runs on, gated per page
                source = self.clusters.cluster_of(self.assigned[chunk])
                destination = self.clusters.cluster_of(task_node)
                admitted = [p for p in by_chunk[chunk] if self.gate.admit(source, destination)]
                moves.extend((p, task_node) for p in admitted)
                if len(admitted) == len(by_chunk[chunk]):
                    self.assigned[chunk] = task_node
                continue
            target = self.assigned[chunk]
            moves.extend((p, target) for p in by_chunk[chunk] if where[p] != target)
        for i in range(0, len(moves), QUERY_BATCH):
            batch = moves[i:i + QUERY_BATCH]
            result = self.system.move_pages(self.pid, [p for p, _ in batch], [n for _, n in batch])
            for (page, node), status in zip(batch, result):
                if status == node:
                    where[page] = node
                    self.stats.pages_moved += 1
                elif status < 0:
                    name = errno.errorcode.get(-status, str(status))
                    self.stats.pages_failed[name] = self.stats.pages_failed.get(name, 0) + 1
        if self.gate is not None:
            self.stats.gate_admitted, self.stats.gate_refused = self.gate.admitted, self.gate.refused
        counts: dict[int, int] = {}
        for node in where.values():
            counts[node] = counts.get(node, 0) + 1
        self.stats.pages_per_node = dict(sorted(counts.items()))
        return self.stats


def anonymous_regions(pid: int) -> list[tuple[int, int]]:
    """The private writable anonymous mappings of `pid` (heap, mmap'd memory, stacks)."""
    return [(m.start, m.end) for m in read_maps(pid) if m.anonymous and m.private_writable
            and not (m.perms.startswith("---") and m.end - m.start > RESERVATION_BYTES)]


def process_cpu(pid: int) -> int:
    """The CPU the process last ran on (field 39 of /proc/PID/stat)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as f:
            return int(f.read().rsplit(")", 1)[1].split()[36])
    except (OSError, ValueError, IndexError):
        return 0


@dataclass
class TierRun:
    plan: TierPlan
    argv: list[str]
    exit_code: int | None = None
    wall_seconds: float | None = None
    policy_check: int | None = None
    started: float = 0.0
    daemon: DaemonStats | None = None
    changed: list[str] = field(default_factory=list)
    restore_failures: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"policy": self.plan.policy, "nodes": self.plan.nodes, "weights": self.plan.weights,
                "weights_source": self.plan.weights_source, "nothing_to_place": self.plan.nothing_to_place,
                "exit_code": self.exit_code, "wall_seconds": self.wall_seconds, "changed": self.changed,
                "restore_failures": self.restore_failures,
                "daemon": None if self.daemon is None else self.daemon.__dict__}


def run_tiered(argv: Sequence[str], plan: TierPlan, system: NumaSystem, *, cpus: Sequence[int] | None = None,
               period: float = 0.1, on_message: Callable[[str], None] | None = None,
               on_start: Callable[[subprocess.Popen], None] | None = None) -> TierRun:
    """Run `argv` under `plan` and wait for it; every setting changed is restored on the way out,
    whatever the way (the program's exit, an error, SIGINT or SIGTERM to memtint)."""
    say = on_message or (lambda text: None)
    run = TierRun(plan, list(argv))
    if not argv:
        raise LinuxError("no program given: write the command after '--'")
    for note in plan.notes:
        say(note)
    changes = SystemChanges(system)
    process: subprocess.Popen | None = None
    # Before the program starts a signal unwinds through the restore below (Stopped); from its
    # start it is passed on to it (the program decides when to stop; memtint restores after it).
    with SignalRelay() as relay:
        try:
            if plan.mode is not None:
                run.policy_check = check_policy(system, plan.mode, plan.nodes)
            if plan.write_weights:
                changes.weights(plan.nodes, plan.weights)
                say("weighted-interleave weights for the run: " + ", ".join(
                    f"node{n} {w}" for n, w in zip(plan.nodes, plan.weights)) + f" ({plan.weights_source})")
            if plan.balancing_off:
                changes.set(NUMA_BALANCING, "0")
            if plan.damon and not plan.nothing_to_place:
                damon_start(system, changes, plan.nodes[0], plan.nodes[-1])
            run.changed = [what.split("=")[0] for what, _ in changes.undo]
            with relay.starting():
                process = _start(argv, system, plan, cpus)
                relay.add(process)
            run.started = time.monotonic()
            if on_start:
                on_start(process)
            placer = ChunkPlacer(system, process.pid, plan) if plan.daemon else None
            with relay.waiting() as pause:
                next_look = time.monotonic() + period
                while process.poll() is None:
                    now = time.monotonic()
                    if placer is None or now < next_look:
                        pause(0.5 if placer is None else next_look - now)  # a program's exit ends it at once
                        continue
                    next_look = now + period
                    try:
                        placer.step()
                    except LinuxError as error:
                        if process.poll() is None and not _gone(error):
                            raise
            run.exit_code = exit_status(process.returncode)
            run.wall_seconds = time.monotonic() - run.started
            run.daemon = placer.stats if placer else None
        finally:
            if process is not None and process.poll() is None:
                kill_tree(process)  # memtint is failing: the program must not outlive the settings it ran under
            run.restore_failures = changes.restore()
    return run


def _gone(error: LinuxError) -> bool:
    """The program exited between two looks at it (its maps or pages vanished)."""
    return (isinstance(error, NumaError) and error.errno == errno.ESRCH) or "no process" in str(error)


def _start(argv: Sequence[str], system: NumaSystem, plan: TierPlan, cpus: Sequence[int] | None) -> subprocess.Popen:
    try:
        return subprocess.Popen(list(argv), preexec_fn=policy_in_child(system, plan.mode, plan.nodes, cpus))
    except OSError as error:
        raise start_failure(argv[0], error) from None


__all__ = ["ChunkPlacer", "POLICIES", "SystemChanges", "TierPlan", "TierRun", "plan_tiering",
           "run_tiered"]
